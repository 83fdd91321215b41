//! Lowering of `-j LOG`: the `log` expression of the kernel-log kind (no
//! group), with the syslog level, the prefix and the detail flags, whose
//! XT_LOG_* bits are the kernel's NF_LOG_* bits (tcp-sequence 0x01,
//! tcp-options 0x02, ip-options 0x04, uid 0x08, macdecode 0x20). The
//! default level (warning, 4) is the kernel's default for a `log` without a
//! level, so it is left out, as are an empty prefix and no flags.

use crate::lower::{Cx, Result};
use iptables::ext::targets::log::Log;
use nft::Expr;

/// LOG_WARNING: iptables' default and nft_log's.
const DEFAULT_LEVEL: u8 = 4;
/// NF_LOG_MASK: the flags the kernel accepts.
const NF_LOG_MASK: u8 = 0x2f;

pub fn lower(t: &Log, cx: &mut Cx) -> Result<()> {
    cx.push(Expr::Log {
        group: None,
        prefix: (!t.prefix.is_empty()).then(|| t.prefix.clone()),
        snaplen: None,
        qthreshold: None,
        level: (t.level != DEFAULT_LEVEL).then_some(t.level as u32),
        flags: (t.flags != 0).then_some((t.flags & NF_LOG_MASK) as u32),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    fn log(prefix: Option<&str>, level: Option<u32>, flags: Option<u32>) -> Expr {
        Expr::Log {
            group: None,
            prefix: prefix.map(str::to_string),
            snaplen: None,
            qthreshold: None,
            level,
            flags,
        }
    }

    #[test]
    fn forms() {
        let cases: &[(u8, u8, &str, Expr)] = &[
            (4, 0, "", log(None, None, None)),
            (3, 0, "", log(None, Some(3), None)),
            (0, 0, "", log(None, Some(0), None)),
            (7, 0, "x y", log(Some("x y"), Some(7), None)),
            (4, 0x01 | 0x02, "", log(None, None, Some(3))),
            (4, 0x04 | 0x08 | 0x20, "p", log(Some("p"), None, Some(0x2c))),
        ];
        for (level, flags, prefix, want) in cases {
            let t = Log {
                level: *level,
                flags: *flags,
                prefix: prefix.to_string(),
            };
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(
                    run(fam, |cx| lower(&t, cx)).unwrap(),
                    vec![want.clone()],
                    "{t:?}"
                );
            }
        }
    }
}
