//! `-j TTL` (IPv4, iptables' libipt_TTL) and `-j HL` (IPv6, libip6t_HL):
//! set, increment or decrement the time to live / hop limit. Both are
//! mangle-table targets with the same value and printers.

use super::snat::check_table;
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

/// ipt_TTL_info.mode / ip6t_HL_info.mode
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HopMode {
    Set = 0,
    Inc = 1,
    Dec = 2,
}

/// The value both targets share: mode and amount (1..=255 for inc/dec).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HopLimit {
    pub mode: HopMode,
    pub value: u8,
}

const SET: u8 = 0;
const INC: u8 = 1;
const DEC: u8 = 2;
const ANY: u32 = 1 << SET | 1 << INC | 1 << DEC;

/// Option table for prefix "ttl" or "hl".
macro_rules! hop_opts {
    ($set:literal, $dec:literal, $inc:literal) => {
        &[
            OptDef::new($set, SET, Arg::Required).excl(ANY),
            OptDef::new($dec, DEC, Arg::Required).excl(ANY),
            OptDef::new($inc, INC, Arg::Required).excl(ANY),
        ]
    };
}

impl HopLimit {
    fn new() -> Self {
        HopLimit {
            mode: HopMode::Set,
            value: 0,
        }
    }

    fn parse(&mut self, c: &Call) -> Result<()> {
        (self.mode, self.value) = match c.opt.id {
            SET => (HopMode::Set, c.uint(0, 255)? as u8),
            INC => (HopMode::Inc, c.uint(1, 255)? as u8),
            _ => (HopMode::Dec, c.uint(1, 255)? as u8),
        };
        Ok(())
    }

    fn finish(&self, name: &str, opts: &[OptDef], seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen & ANY == 0 {
            return Err(Error::param(format!("{name}: You must specify an action")));
        }
        crate::ext::postcheck(name, opts, seen)?;
        check_table(name, ctx, TableKind::Mangle)
    }

    fn save(&self, prefix: &str, out: &mut String) {
        let op = match self.mode {
            HopMode::Set => "set",
            HopMode::Inc => "inc",
            HopMode::Dec => "dec",
        };
        let _ = write!(out, " --{prefix}-{op} {}", self.value);
    }

    fn list(&self, name: &str, out: &mut String) {
        let op = match self.mode {
            HopMode::Set => "set to",
            HopMode::Inc => "increment by",
            HopMode::Dec => "decrement by",
        };
        let _ = write!(out, " {name} {op} {}", self.value);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ttl(pub HopLimit);

impl Ext for Ttl {
    const NAME: &'static str = "TTL";
    const FAMILY: Fam = Fam::V4;
    const OPTS: &'static [OptDef] = hop_opts!("ttl-set", "ttl-dec", "ttl-inc");

    fn new(_: &ParseCtx) -> Self {
        Ttl(HopLimit::new())
    }
    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.0.parse(c)
    }
    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        self.0.finish(Self::NAME, Self::OPTS, seen, ctx)
    }
    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.0.save("ttl", out);
    }
    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.0.list(Self::NAME, out);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hl(pub HopLimit);

impl Ext for Hl {
    const NAME: &'static str = "HL";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = hop_opts!("hl-set", "hl-dec", "hl-inc");

    fn new(_: &ParseCtx) -> Self {
        Hl(HopLimit::new())
    }
    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.0.parse(c)
    }
    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        self.0.finish(Self::NAME, Self::OPTS, seen, ctx)
    }
    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.0.save("hl", out);
    }
    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.0.list(Self::NAME, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in, run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // family, rule, save, -L
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "-j TTL --ttl-set 42",
                " --ttl-set 42",
                " TTL set to 42",
            ),
            (
                Family::Ipv4,
                "-j TTL --ttl-set 0",
                " --ttl-set 0",
                " TTL set to 0",
            ),
            (
                Family::Ipv4,
                "-j TTL --ttl-inc 0x10",
                " --ttl-inc 16",
                " TTL increment by 16",
            ),
            (
                Family::Ipv4,
                "-j TTL --ttl-dec 255",
                " --ttl-dec 255",
                " TTL decrement by 255",
            ),
            (
                Family::Ipv6,
                "-j HL --hl-set 42",
                " --hl-set 42",
                " HL set to 42",
            ),
            (
                Family::Ipv6,
                "-j HL --hl-inc 1",
                " --hl-inc 1",
                " HL increment by 1",
            ),
            (
                Family::Ipv6,
                "-j HL --hl-dec 1",
                " --hl-dec 1",
                " HL decrement by 1",
            ),
        ];
        for (fam, rule, save, list) in cases {
            for chain in ["PREROUTING", "INPUT", "mychain"] {
                let want = Printed {
                    save: save.to_string(),
                    list: list.to_string(),
                    list_numeric: list.to_string(),
                };
                assert_eq!(ok_in(*fam, TableKind::Mangle, chain, rule), want, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(Family, TableKind, &str, &str)] = &[
            (
                Family::Ipv4,
                TableKind::Mangle,
                "-j TTL",
                "TTL: You must specify an action",
            ),
            (
                Family::Ipv6,
                TableKind::Mangle,
                "-j HL",
                "HL: You must specify an action",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "-j TTL --ttl-set 256",
                "TTL: bad value for option \"--ttl-set\", or out of range (0-255).\n",
            ),
            (
                Family::Ipv4,
                TableKind::Mangle,
                "-j TTL --ttl-inc 0",
                "TTL: bad value for option \"--ttl-inc\", or out of range (1-255).\n",
            ),
            (
                Family::Ipv6,
                TableKind::Mangle,
                "-j HL --hl-dec 0",
                "HL: bad value for option \"--hl-dec\", or out of range (1-255).\n",
            ),
            (
                Family::Ipv6,
                TableKind::Mangle,
                "-j HL --hl-dec 1 --hl-inc 1",
                "HL: option \"--hl-dec\" cannot be used together with \"--hl-inc\".\n",
            ),
            (
                Family::Ipv6,
                TableKind::Mangle,
                "-j HL --hl-set --hl-inc 1",
                "HL: bad value for option \"--hl-set\", or out of range (0-255).\n",
            ),
            (
                Family::Ipv4,
                TableKind::Filter,
                "-j TTL --ttl-set 1",
                "Invalid argument: TTL target: only valid in mangle table, not filter.",
            ),
            (
                Family::Ipv6,
                TableKind::Raw,
                "-j HL --hl-set 1",
                "Invalid argument: HL target: only valid in mangle table, not raw.",
            ),
        ];
        for (fam, table, rule, want) in cases {
            assert_eq!(err_in(*fam, *table, "OUTPUT", rule), *want, "{rule}");
        }
        // Each exists in one family only.
        assert!(run(
            Family::Ipv6,
            TableKind::Mangle,
            "OUTPUT",
            "-j TTL --ttl-set 1"
        )
        .is_err());
        assert!(run(
            Family::Ipv4,
            TableKind::Mangle,
            "OUTPUT",
            "-j HL --hl-set 1"
        )
        .is_err());
    }
}
