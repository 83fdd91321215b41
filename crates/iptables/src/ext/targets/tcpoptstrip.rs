//! `-j TCPOPTSTRIP`: remove TCP options from the header (iptables'
//! libxt_TCPOPTSTRIP). Mangle table, TCP rules only.

use super::snat::check_table;
use crate::error::{Error, Result};
use crate::ext::{require_proto, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tcpoptstrip {
    /// One bit per TCP option kind (kind k: word k / 32, bit k % 32).
    pub strip_bmap: [u32; 8],
}

const STRIP_OPTIONS: u8 = 0;

/// The option names iptables knows, in its order.
const NAMES: &[(&str, u8)] = &[
    ("wscale", 3),
    ("mss", 2),
    ("sack-permitted", 4),
    ("sack", 5),
    ("timestamp", 8),
    ("md5", 19),
];

impl Tcpoptstrip {
    pub fn has(&self, kind: u8) -> bool {
        self.strip_bmap[usize::from(kind >> 5)] & (1 << (kind & 31)) != 0
    }

    fn set(&mut self, kind: u8) {
        self.strip_bmap[usize::from(kind >> 5)] |= 1 << (kind & 31);
    }

    /// The kinds as a comma separated list, names unless `numeric`.
    fn print_list(&self, out: &mut String, numeric: bool) {
        let mut first = true;
        for kind in (0..=255u8).filter(|&k| self.has(k)) {
            if !first {
                out.push(',');
            }
            first = false;
            match NAMES.iter().find(|e| e.1 == kind).filter(|_| !numeric) {
                Some((name, _)) => out.push_str(name),
                None => {
                    let _ = write!(out, "{kind}");
                }
            }
        }
    }
}

impl Ext for Tcpoptstrip {
    const NAME: &'static str = "TCPOPTSTRIP";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("strip-options", STRIP_OPTIONS, Arg::Required)];

    fn new(_: &ParseCtx) -> Self {
        Tcpoptstrip { strip_bmap: [0; 8] }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        for word in c.arg.split(',') {
            let kind = match NAMES.iter().find(|e| e.0 == word) {
                Some(&(_, k)) => k,
                None => crate::opt::parse_uint(word, 0, 255)
                    .ok_or_else(|| Error::param(format!("Bad TCP option value \"{word}\"")))?
                    as u8,
            };
            if kind < 2 {
                return Err(Error::param("Option value may not be 0 or 1"));
            }
            if self.has(kind) {
                return Err(Error::param(format!("Option \"{word}\" already specified")));
            }
            self.set(kind);
        }
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_table("TCPOPTSTRIP", ctx, TableKind::Mangle)?;
        require_proto("TCPOPTSTRIP target", ctx, &[6])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.strip_bmap != [0; 8] {
            out.push_str(" --strip-options ");
            self.print_list(out, true);
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        if self.strip_bmap != [0; 8] {
            out.push_str(" TCPOPTSTRIP options ");
            self.print_list(out, ctx.numeric);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L, -L -n
        let cases: &[(&str, &str, &str, &str)] = &[
            ("-p tcp -j TCPOPTSTRIP", "", "", ""),
            (
                "-p tcp -j TCPOPTSTRIP --strip-options 2,3,4,5,6,7",
                " --strip-options 2,3,4,5,6,7",
                " TCPOPTSTRIP options mss,wscale,sack-permitted,sack,6,7",
                " TCPOPTSTRIP options 2,3,4,5,6,7",
            ),
            (
                "-p tcp -j TCPOPTSTRIP --strip-options md5,timestamp,0xff,sack",
                " --strip-options 5,8,19,255",
                " TCPOPTSTRIP options sack,timestamp,md5,255",
                " TCPOPTSTRIP options 5,8,19,255",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for chain in ["PREROUTING", "POSTROUTING", "mychain"] {
                for (rule, save, list, listn) in cases {
                    let got = ok_in(fam, TableKind::Mangle, chain, rule);
                    assert_eq!(got.save, *save, "{rule}");
                    assert_eq!(got.list, *list, "{rule}");
                    assert_eq!(got.list_numeric, *listn, "{rule}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Mangle,
                "-j TCPOPTSTRIP",
                "Invalid argument: TCPOPTSTRIP target: only valid for protocol 6.",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j TCPOPTSTRIP --strip-options 0",
                "Option value may not be 0 or 1",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j TCPOPTSTRIP --strip-options 1,2",
                "Option value may not be 0 or 1",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j TCPOPTSTRIP --strip-options 2,MSS",
                "Bad TCP option value \"MSS\"",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j TCPOPTSTRIP --strip-options 256",
                "Bad TCP option value \"256\"",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j TCPOPTSTRIP --strip-options mss,2",
                "Option \"2\" already specified",
            ),
            (
                TableKind::Mangle,
                "-p tcp -j TCPOPTSTRIP --strip-options 3 --strip-options 4",
                "TCPOPTSTRIP: option \"--strip-options\" can only be used once.\n",
            ),
            (
                TableKind::Filter,
                "-p tcp -j TCPOPTSTRIP --strip-options 3",
                "Invalid argument: TCPOPTSTRIP target: only valid in mangle table, not filter.",
            ),
        ];
        for (table, rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, *table, "OUTPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}
