//! `-j NFLOG` (iptables' libxt_NFLOG): log through nfnetlink_log. Follows
//! iptables-nft, which turns NFLOG into a native `log` expression, so
//! `--nflog-range` (a length without the copy-length flag) is not kept. The
//! prefix is cut to 127 bytes as iptables-nft does (the legacy kernel struct
//! holds 63; the vectors' LEGACY-only line expects that cut, the NFT variant
//! expects the longer prefix).

use super::log::parse_prefix;
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

const O_GROUP: u8 = 0;
const O_PREFIX: u8 = 1;
const O_RANGE: u8 = 2;
const O_SIZE: u8 = 3;
const O_THRESHOLD: u8 = 4;

/// iptables-nft's NFLOG prefix limit (128 bytes with the terminating NUL).
const PREFIX_MAX: usize = 127;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Nflog {
    pub group: u16,
    pub prefix: String,
    /// `--nflog-size`: bytes to copy (None: whole packet).
    pub size: Option<u32>,
    pub threshold: u16,
}

impl Ext for Nflog {
    const NAME: &'static str = "NFLOG";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("nflog-group", O_GROUP, Arg::Required),
        OptDef::new("nflog-prefix", O_PREFIX, Arg::Required),
        OptDef::new("nflog-range", O_RANGE, Arg::Required).excl(1 << O_SIZE),
        OptDef::new("nflog-size", O_SIZE, Arg::Required).excl(1 << O_RANGE),
        OptDef::new("nflog-threshold", O_THRESHOLD, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Nflog {
            group: 0,
            prefix: String::new(),
            size: None,
            threshold: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            O_GROUP => self.group = c.uint(0, 65535)? as u16,
            O_PREFIX => self.prefix = parse_prefix(c.arg, PREFIX_MAX)?,
            // Checked, then dropped: the nft log expression has no place
            // for a length without the copy-length flag.
            O_RANGE => {
                c.uint(0, u32::MAX as u64)?;
            }
            O_SIZE => self.size = Some(c.uint(0, u32::MAX as u64)? as u32),
            O_THRESHOLD => self.threshold = c.uint(0, 65535)? as u16,
            _ => {}
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.print(out, "--");
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.print(out, "");
    }
}

impl Nflog {
    /// libxt_NFLOG's nflog_print: the same pieces for save and `-L`, with
    /// "--" or nothing before each option name.
    fn print(&self, out: &mut String, pfx: &str) {
        if !self.prefix.is_empty() {
            let _ = write!(out, " {pfx}nflog-prefix");
            opt::save_string(out, &self.prefix);
        }
        if self.group != 0 {
            let _ = write!(out, " {pfx}nflog-group {}", self.group);
        }
        if let Some(n) = self.size {
            let _ = write!(out, " {pfx}nflog-size {n}");
        }
        if self.threshold != 0 {
            let _ = write!(out, " {pfx}nflog-threshold {}", self.threshold);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_forms() {
        // (rule, save, -L); NFLOG ignores -n.
        let cases: &[(&str, &str, &str)] = &[
            ("-j NFLOG", "", ""),
            (
                "-j NFLOG --nflog-group 5 --nflog-prefix \"a b\"",
                " --nflog-prefix \"a b\" --nflog-group 5",
                " nflog-prefix \"a b\" nflog-group 5",
            ),
            (
                "-j NFLOG --nflog-threshold 3 --nflog-size 0x100 --nflog-prefix x",
                " --nflog-prefix x --nflog-size 256 --nflog-threshold 3",
                " nflog-prefix x nflog-size 256 nflog-threshold 3",
            ),
            (
                "-j NFLOG --nflog-size 0",
                " --nflog-size 0",
                " nflog-size 0",
            ),
            ("-j NFLOG --nflog-range 1", "", ""),
            ("-j NFLOG --nflog-group 0", "", ""),
            (
                "-j NFLOG --nflog-prefix 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789",
                " --nflog-prefix 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456",
                " nflog-prefix 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (rule, save, list) in cases {
                let Printed {
                    save: s,
                    list: l,
                    list_numeric: n,
                } = run(fam, TableKind::Filter, "INPUT", rule).unwrap();
                assert_eq!(s, *save, "{rule}");
                assert_eq!(l, *list, "{rule}");
                assert_eq!(n, *list, "{rule} -n");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-j NFLOG --nflog-group 65536",
                "NFLOG: bad value for option \"--nflog-group\", or out of range (0-65535).\n",
            ),
            (
                "-j NFLOG --nflog-size -1",
                "NFLOG: bad value for option \"--nflog-size\", or out of range (0-4294967295).\n",
            ),
            (
                "-j NFLOG --nflog-size 1 --nflog-range 1",
                "NFLOG: option \"--nflog-range\" cannot be used together with \"--nflog-size\".\n",
            ),
            (
                "-j NFLOG --nflog-prefix a --nflog-prefix b",
                "NFLOG: option \"--nflog-prefix\" can only be used once.\n",
            ),
        ];
        for (rule, want) in cases {
            let e = run(Family::Ipv4, TableKind::Filter, "INPUT", rule)
                .unwrap_err()
                .msg;
            assert_eq!(e, *want, "{rule}");
        }
    }
}
