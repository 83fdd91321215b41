//! Lowering of `-j NFLOG`: the `log` expression of the nfnetlink_log kind
//! (with a group): group, prefix, snaplen (`--nflog-size`, which the kernel
//! turns into NF_LOG_F_COPY_LEN as xt_NFLOG does) and queue threshold. A
//! zero threshold means "the instance's default" in both, so it is left out.

use crate::lower::{Cx, Result};
use iptables::ext::targets::nflog::Nflog;
use nft::Expr;

pub fn lower(t: &Nflog, cx: &mut Cx) -> Result<()> {
    cx.push(Expr::Log {
        group: Some(t.group),
        prefix: (!t.prefix.is_empty()).then(|| t.prefix.clone()),
        snaplen: t.size,
        qthreshold: (t.threshold != 0).then_some(t.threshold),
        level: None,
        flags: None,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn forms() {
        let cases: &[(Nflog, Expr)] = &[
            (
                Nflog {
                    group: 0,
                    prefix: String::new(),
                    size: None,
                    threshold: 0,
                },
                Expr::Log {
                    group: Some(0),
                    prefix: None,
                    snaplen: None,
                    qthreshold: None,
                    level: None,
                    flags: None,
                },
            ),
            (
                Nflog {
                    group: 65535,
                    prefix: "pre fix".into(),
                    size: Some(0),
                    threshold: 65535,
                },
                Expr::Log {
                    group: Some(65535),
                    prefix: Some("pre fix".into()),
                    snaplen: Some(0),
                    qthreshold: Some(65535),
                    level: None,
                    flags: None,
                },
            ),
        ];
        for (t, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(
                    run(fam, |cx| lower(t, cx)).unwrap(),
                    vec![want.clone()],
                    "{t:?}"
                );
            }
        }
    }
}
