//! `-m recent`: lists of recently seen addresses (iptables' libxt_recent,
//! revision 1 with `--mask`).

use crate::error::{Error, Result};
use crate::ext::{postcheck, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

// check_set bits (XT_RECENT_*).
const CHECK: u8 = 1 << 0;
const SET: u8 = 1 << 1;
const UPDATE: u8 = 1 << 2;
const REMOVE: u8 = 1 << 3;
const TTL: u8 = 1 << 4;
const REAP: u8 = 1 << 5;

/// XT_RECENT_NAME_LEN, including the terminating NUL.
const NAME_LEN: usize = 200;
/// The kernel keeps at most this many timestamps per entry (hitcount limit).
const MAX_NSTAMPS: u32 = 256;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Recent {
    pub v6: bool,
    pub seconds: u32,
    pub hit_count: u32,
    pub check_set: u8,
    pub invert: bool,
    pub name: String,
    /// false = source (`--rsource`), true = destination (`--rdest`).
    pub dest: bool,
    /// Netmask (v4 in the first 4 bytes).
    pub mask: [u8; 16],
}

const O_SET: u8 = 0;
const O_RCHECK: u8 = 1;
const O_UPDATE: u8 = 2;
const O_REMOVE: u8 = 3;
const O_SECONDS: u8 = 4;
const O_REAP: u8 = 5;
const O_HITCOUNT: u8 = 6;
const O_RTTL: u8 = 7;
const O_NAME: u8 = 8;
const O_RSOURCE: u8 = 9;
const O_RDEST: u8 = 10;
const O_MASK: u8 = 11;

const F_ANY_OP: u32 = 1 << O_SET | 1 << O_RCHECK | 1 << O_UPDATE | 1 << O_REMOVE;

/// The option table with its constraints. iptables runs the match's own
/// final check before these generic ones, so `OPTS` (checked by the
/// framework before `finish`) leaves them out and `finish` applies this.
const CHECKED_OPTS: &[OptDef] = &[
    OptDef::new("set", O_SET, Arg::None).inv().excl(F_ANY_OP),
    OptDef::new("rcheck", O_RCHECK, Arg::None)
        .inv()
        .excl(F_ANY_OP),
    OptDef::new("update", O_UPDATE, Arg::None)
        .inv()
        .excl(F_ANY_OP),
    OptDef::new("remove", O_REMOVE, Arg::None)
        .inv()
        .excl(F_ANY_OP),
    OptDef::new("seconds", O_SECONDS, Arg::Required),
    OptDef::new("reap", O_REAP, Arg::None).also(1 << O_SECONDS),
    OptDef::new("hitcount", O_HITCOUNT, Arg::Required),
    OptDef::new("rttl", O_RTTL, Arg::None).excl(1 << O_SET | 1 << O_REMOVE),
    OptDef::new("name", O_NAME, Arg::Required),
    OptDef::new("rsource", O_RSOURCE, Arg::None),
    OptDef::new("rdest", O_RDEST, Arg::None),
    OptDef::new("mask", O_MASK, Arg::Required),
];

fn einval(detail: String) -> Error {
    Error::op(format!("Invalid argument: recent: {detail}."))
}

impl Ext for Recent {
    const NAME: &'static str = "recent";
    const FAMILY: Fam = Fam::Both;
    // The set/rcheck/update/remove exclusion also forbids a second use of
    // the same one, which precheck reports as "can only be used once".
    const OPTS: &'static [OptDef] = &[
        OptDef::new("set", O_SET, Arg::None).inv(),
        OptDef::new("rcheck", O_RCHECK, Arg::None).inv(),
        OptDef::new("update", O_UPDATE, Arg::None).inv(),
        OptDef::new("remove", O_REMOVE, Arg::None).inv(),
        OptDef::new("seconds", O_SECONDS, Arg::Required),
        OptDef::new("reap", O_REAP, Arg::None),
        OptDef::new("hitcount", O_HITCOUNT, Arg::Required),
        OptDef::new("rttl", O_RTTL, Arg::None),
        OptDef::new("name", O_NAME, Arg::Required),
        OptDef::new("rsource", O_RSOURCE, Arg::None),
        OptDef::new("rdest", O_RDEST, Arg::None),
        OptDef::new("mask", O_MASK, Arg::Required),
    ];

    fn new(ctx: &ParseCtx) -> Self {
        let v6 = ctx.is_v6();
        let mut mask = [0u8; 16];
        mask[..if v6 { 16 } else { 4 }].fill(0xff);
        Recent {
            v6,
            seconds: 0,
            hit_count: 0,
            check_set: 0,
            invert: false,
            name: "DEFAULT".into(),
            dest: false,
            mask,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            O_SET | O_RCHECK | O_UPDATE | O_REMOVE => {
                self.check_set |= match c.opt.id {
                    O_SET => SET,
                    O_RCHECK => CHECK,
                    O_UPDATE => UPDATE,
                    _ => REMOVE,
                };
                if c.inv {
                    self.invert = true;
                }
            }
            O_SECONDS => self.seconds = c.uint(1, u32::MAX as u64)? as u32,
            O_REAP => self.check_set |= REAP,
            O_HITCOUNT => self.hit_count = c.uint(0, u32::MAX as u64)? as u32,
            O_RTTL => self.check_set |= TTL,
            O_NAME => {
                let mut end = c.arg.len().min(NAME_LEN - 1);
                while !c.arg.is_char_boundary(end) {
                    end -= 1;
                }
                self.name = c.arg[..end].to_string();
            }
            O_RSOURCE => self.dest = false,
            O_RDEST => self.dest = true,
            O_MASK => self.mask = opt::parse_gai_host(c.arg, self.v6)?,
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen & F_ANY_OP == 0 {
            return Err(Error::param(
                "recent: you must specify one of `--set', `--rcheck' `--update' or `--remove'",
            ));
        }
        postcheck(Self::NAME, CHECKED_OPTS, seen)?;
        // The kernel's checkentry.
        if self.check_set & (SET | REMOVE) != 0
            && (self.seconds != 0 || self.hit_count != 0 || self.check_set & (TTL | REAP) != 0)
        {
            return Err(einval(
                "--seconds, --hitcount, --rttl and --reap only go with --rcheck and --update"
                    .into(),
            ));
        }
        if self.hit_count >= MAX_NSTAMPS {
            return Err(einval(format!(
                "hitcount ({}) is larger than allowed maximum ({})",
                self.hit_count,
                MAX_NSTAMPS - 1
            )));
        }
        if self.name.is_empty() || self.name == "." || self.name == ".." || self.name.contains('/')
        {
            return Err(einval(format!("invalid list name \"{}\"", self.name)));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.invert {
            out.push_str(" !");
        }
        for (bit, s) in [
            (SET, " --set"),
            (CHECK, " --rcheck"),
            (UPDATE, " --update"),
            (REMOVE, " --remove"),
        ] {
            if self.check_set & bit != 0 {
                out.push_str(s);
            }
        }
        if self.seconds != 0 {
            let _ = write!(out, " --seconds {}", self.seconds);
        }
        if self.check_set & REAP != 0 {
            out.push_str(" --reap");
        }
        if self.hit_count != 0 {
            let _ = write!(out, " --hitcount {}", self.hit_count);
        }
        if self.check_set & TTL != 0 {
            out.push_str(" --rttl");
        }
        let _ = write!(out, " --name {}", self.name);
        out.push_str(" --mask ");
        self.fmt_mask(out);
        out.push_str(if self.dest { " --rdest" } else { " --rsource" });
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        if self.invert {
            out.push_str(" !");
        }
        out.push_str(" recent:");
        for (bit, s) in [
            (SET, " SET"),
            (CHECK, " CHECK"),
            (UPDATE, " UPDATE"),
            (REMOVE, " REMOVE"),
        ] {
            if self.check_set & bit != 0 {
                out.push_str(s);
            }
        }
        if self.seconds != 0 {
            let _ = write!(out, " seconds: {}", self.seconds);
        }
        if self.check_set & REAP != 0 {
            out.push_str(" reap");
        }
        if self.hit_count != 0 {
            let _ = write!(out, " hit_count: {}", self.hit_count);
        }
        if self.check_set & TTL != 0 {
            out.push_str(" TTL-Match");
        }
        let _ = write!(out, " name: {}", self.name);
        out.push_str(if self.dest {
            " side: dest"
        } else {
            " side: source"
        });
        out.push_str(" mask: ");
        self.fmt_mask(out);
    }
}

impl Recent {
    fn fmt_mask(&self, out: &mut String) {
        if self.v6 {
            opt::fmt_v6(out, &self.mask);
        } else {
            opt::fmt_v4(out, &self.mask);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::{match_words, run_words, Printed};
    use ruleset::{Family, TableKind};

    type Args = &'static [(&'static str, bool, &'static str)];

    fn build(family: Family, args: &[(&str, bool, &str)]) -> Result<Printed> {
        let words = match_words::<Recent>(args);
        run_words(family, TableKind::Filter, "INPUT", &words)
    }

    #[test]
    fn list_output() {
        let v4 = Family::Ipv4;
        let v6 = Family::Ipv6;
        let cases: &[(Family, Args, &str)] = &[
            (
                v4,
                &[("set", false, "")],
                " recent: SET name: DEFAULT side: source mask: 255.255.255.255",
            ),
            (
                v4,
                &[
                    ("update", true, ""),
                    ("seconds", false, "60"),
                    ("reap", false, ""),
                    ("hitcount", false, "4"),
                    ("rttl", false, ""),
                    ("name", false, "ssh"),
                    ("rdest", false, ""),
                    ("mask", false, "255.255.255.0"),
                ],
                " ! recent: UPDATE seconds: 60 reap hit_count: 4 TTL-Match name: ssh side: dest mask: 255.255.255.0",
            ),
            (
                v6,
                &[("rcheck", false, ""), ("mask", false, "ffff:ffff::")],
                " recent: CHECK name: DEFAULT side: source mask: ffff:ffff::",
            ),
            (
                v6,
                &[("remove", false, "")],
                " recent: REMOVE name: DEFAULT side: source mask: ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            ),
        ];
        for (fam, args, want) in cases {
            let p = build(*fam, args).unwrap();
            assert_eq!(p.list, *want, "{args:?}");
        }
    }

    #[test]
    fn save_output() {
        let s = build(
            Family::Ipv4,
            &[
                ("name", false, "x"),
                ("rcheck", true, ""),
                ("hitcount", false, "3"),
                ("seconds", false, "9"),
                ("mask", false, "255.255.0.0"),
            ],
        )
        .unwrap()
        .save;
        assert_eq!(
            s,
            " ! --rcheck --seconds 9 --hitcount 3 --name x --mask 255.255.0.0 --rsource"
        );
    }

    #[test]
    fn errors() {
        let v4 = Family::Ipv4;
        let cases: &[(Args, &str)] = &[
            (
                &[("name", false, "x")],
                "recent: you must specify one of `--set', `--rcheck' `--update' or `--remove'",
            ),
            (
                &[("set", false, ""), ("rttl", false, "")],
                "recent: option \"--rttl\" cannot be used together with \"--set\".\n",
            ),
            (
                &[("set", false, ""), ("update", false, "")],
                "recent: option \"--set\" cannot be used together with \"--update\".\n",
            ),
            (
                &[("rcheck", false, ""), ("reap", false, "")],
                "recent: option \"--reap\" also requires \"--seconds\".\n",
            ),
            (
                &[("rcheck", false, ""), ("seconds", false, "0")],
                "recent: bad value for option \"--seconds\", or out of range (1-4294967295).\n",
            ),
            (
                &[("rcheck", false, ""), ("hitcount", false, "256")],
                "Invalid argument: recent: hitcount (256) is larger than allowed maximum (255).",
            ),
            (
                &[("set", false, ""), ("seconds", false, "5")],
                "Invalid argument: recent: --seconds, --hitcount, --rttl and --reap only go with --rcheck and --update.",
            ),
            (
                &[("set", false, ""), ("name", false, "a/b")],
                "Invalid argument: recent: invalid list name \"a/b\".",
            ),
            (
                &[("set", false, ""), ("mask", false, "foo")],
                "getaddrinfo: Name or service not known\n",
            ),
            (
                &[("set", false, ""), ("set", false, "")],
                "recent: option \"--set\" can only be used once.\n",
            ),
            (
                &[("seconds", true, "5")],
                "recent: option \"--seconds\" cannot be inverted.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(build(v4, args).unwrap_err().msg, *want, "{args:?}");
        }
    }
}
