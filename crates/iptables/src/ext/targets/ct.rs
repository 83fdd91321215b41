//! `-j CT`: conntrack template for the connection (iptables' libxt_CT,
//! revision 1/2): notrack, helper, timeout policy, events, zone. Raw table only.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

/// Which direction a zone applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ZoneDir {
    #[default]
    Both,
    Orig,
    Reply,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ct {
    pub notrack: bool,
    /// Helper name, at most 15 bytes ("" = none).
    pub helper: String,
    /// Timeout policy name, at most 31 bytes ("" = none).
    pub timeout: String,
    /// Bit i = `CT_EVENTS[i]`.
    pub ct_events: u32,
    /// Bit i = `EXP_EVENTS[i]`.
    pub exp_events: u32,
    /// Zone id (0 when `zone_mark`).
    pub zone: u16,
    /// Zone taken from the packet mark.
    pub zone_mark: bool,
    /// `Both` whenever no zone is set.
    pub zone_dir: ZoneDir,
}

const NOTRACK: u8 = 0;
const HELPER: u8 = 1;
const TIMEOUT: u8 = 2;
const CTEVENTS: u8 = 3;
const EXPEVENTS: u8 = 4;
const ZONE: u8 = 5;
const ZONE_ORIG: u8 = 6;
const ZONE_REPLY: u8 = 7;

/// Conntrack event names in print order.
const CT_EVENTS: &[&str] = &[
    "new",
    "related",
    "destroy",
    "reply",
    "assured",
    "protoinfo",
    "helper",
    "mark",
    "natseqinfo",
    "secmark",
];
const EXP_EVENTS: &[&str] = &["new"];

fn parse_events(tbl: &[&str], arg: &str) -> Result<u32> {
    let mut mask = 0u32;
    for name in arg.split(',') {
        match tbl.iter().position(|n| *n == name) {
            Some(i) => mask |= 1 << i,
            None => {
                return Err(Error::param(format!("Unknown event type \"{name}\"")));
            }
        }
    }
    Ok(mask)
}

fn put_events(out: &mut String, label: &str, tbl: &[&str], mask: u32) {
    out.push(' ');
    out.push_str(label);
    out.push(' ');
    let mut sep = "";
    for (i, name) in tbl.iter().enumerate() {
        if mask & 1 << i != 0 {
            out.push_str(sep);
            out.push_str(name);
            sep = ",";
        }
    }
}

/// xtables copies a string option into a fixed C buffer, silently cutting it
/// to `size - 1` bytes.
fn c_string(s: &str, size: usize) -> String {
    let mut end = s.len().min(size - 1);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Raw-table-only check shared with NOTRACK (the kernel target is `CT`).
pub(crate) fn check_raw(ctx: &ParseCtx) -> Result<()> {
    if ctx.table != TableKind::Raw {
        return Err(Error::op(format!(
            "Invalid argument: CT target: only valid in raw table, not {}.",
            ctx.table.name()
        )));
    }
    Ok(())
}

impl Ct {
    fn put(&self, out: &mut String, save: bool) {
        let p = if save { "--" } else { "" };
        if self.notrack {
            let _ = write!(out, " {p}notrack");
        }
        if !self.helper.is_empty() {
            let _ = write!(out, " {p}helper {}", self.helper);
        }
        if !self.timeout.is_empty() {
            let _ = write!(out, " {p}timeout {}", self.timeout);
        }
        if self.ct_events != 0 {
            put_events(out, &format!("{p}ctevents"), CT_EVENTS, self.ct_events);
        }
        if self.exp_events != 0 {
            put_events(out, &format!("{p}expevents"), EXP_EVENTS, self.exp_events);
        }
        if self.zone_mark || self.zone != 0 {
            let _ = write!(out, " {p}zone");
            match self.zone_dir {
                ZoneDir::Both => {}
                ZoneDir::Orig => out.push_str("-orig"),
                ZoneDir::Reply => out.push_str("-reply"),
            }
            if self.zone_mark {
                out.push_str(" mark");
            } else {
                let _ = write!(out, " {}", self.zone);
            }
        }
    }
}

impl Ext for Ct {
    const NAME: &'static str = "CT";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("notrack", NOTRACK, Arg::None),
        OptDef::new("helper", HELPER, Arg::Required),
        OptDef::new("timeout", TIMEOUT, Arg::Required),
        OptDef::new("ctevents", CTEVENTS, Arg::Required),
        OptDef::new("expevents", EXPEVENTS, Arg::Required),
        OptDef::new("zone-orig", ZONE_ORIG, Arg::Required),
        OptDef::new("zone-reply", ZONE_REPLY, Arg::Required),
        OptDef::new("zone", ZONE, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ct::default()
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            NOTRACK => self.notrack = true,
            HELPER => self.helper = c_string(c.arg, 16),
            TIMEOUT => self.timeout = c_string(c.arg, 32),
            CTEVENTS => self.ct_events = parse_events(CT_EVENTS, c.arg)?,
            EXPEVENTS => self.exp_events = parse_events(EXP_EVENTS, c.arg)?,
            ZONE | ZONE_ORIG | ZONE_REPLY => {
                // Direction flags add up over the zone options (orig and
                // reply together are both directions); "mark" sticks.
                self.zone_dir = match (self.zone_dir, c.opt.id) {
                    (_, ZONE) => self.zone_dir,
                    (ZoneDir::Reply, ZONE_ORIG) | (ZoneDir::Orig, ZONE_REPLY) => ZoneDir::Both,
                    (_, ZONE_ORIG) => ZoneDir::Orig,
                    _ => ZoneDir::Reply,
                };
                self.zone = 0;
                if c.arg.eq_ignore_ascii_case("mark") {
                    self.zone_mark = true;
                } else {
                    self.zone =
                        crate::opt::parse_uint(c.arg, 0, u16::MAX as u64).ok_or_else(|| {
                            Error::param(format!("Cannot parse {} as a zone ID", c.arg))
                        })? as u16;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, _: u32, ctx: &ParseCtx) -> Result<()> {
        check_raw(ctx)?;
        if !self.zone_mark && self.zone == 0 {
            self.zone_dir = ZoneDir::Both;
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.put(out, true);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" CT");
        self.put(out, false);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, run, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            ("-j CT", "", " CT"),
            ("-j CT --notrack", " --notrack", " CT notrack"),
            (
                "-j CT --ctevents new,related,destroy,reply,assured,protoinfo,helper,mark",
                " --ctevents new,related,destroy,reply,assured,protoinfo,helper,mark",
                " CT ctevents new,related,destroy,reply,assured,protoinfo,helper,mark",
            ),
            (
                "-j CT --ctevents secmark,new,natseqinfo,new",
                " --ctevents new,natseqinfo,secmark",
                " CT ctevents new,natseqinfo,secmark",
            ),
            (
                "-j CT --expevents new",
                " --expevents new",
                " CT expevents new",
            ),
            ("-j CT --zone 65535", " --zone 65535", " CT zone 65535"),
            ("-j CT --zone 0", "", " CT"),
            ("-j CT --zone-orig 0", "", " CT"),
            ("-j CT --zone 0x10", " --zone 16", " CT zone 16"),
            ("-j CT --zone MARK", " --zone mark", " CT zone mark"),
            ("-j CT --zone-orig 3", " --zone-orig 3", " CT zone-orig 3"),
            (
                "-j CT --zone-reply mark",
                " --zone-reply mark",
                " CT zone-reply mark",
            ),
            (
                "-j CT --zone-orig 1 --zone-reply 2",
                " --zone 2",
                " CT zone 2",
            ),
            (
                "-j CT --zone mark --zone-orig 5",
                " --zone-orig mark",
                " CT zone-orig mark",
            ),
            (
                "-j CT --helper ftp --timeout pol1 --notrack --zone 4 --expevents new",
                " --notrack --helper ftp --timeout pol1 --expevents new --zone 4",
                " CT notrack helper ftp timeout pol1 expevents new zone 4",
            ),
            (
                "-j CT --helper abcdefghijklmnopqrstuvwxyz",
                " --helper abcdefghijklmno",
                " CT helper abcdefghijklmno",
            ),
        ];
        for (rule, save, list) in cases {
            let Printed {
                save: s,
                list: l,
                list_numeric: n,
            } = run(Family::Ipv4, TableKind::Raw, "PREROUTING", rule).unwrap();
            assert_eq!(s, *save, "{rule}");
            assert_eq!(l, *list, "{rule}");
            assert_eq!(n, *list, "{rule} -n");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Raw,
                "-j CT --zone 65536",
                "Cannot parse 65536 as a zone ID",
            ),
            (
                TableKind::Raw,
                "-j CT --zone -1",
                "Cannot parse -1 as a zone ID",
            ),
            (
                TableKind::Raw,
                "-j CT --ctevents new,bogus",
                "Unknown event type \"bogus\"",
            ),
            (
                TableKind::Raw,
                "-j CT --ctevents new,",
                "Unknown event type \"\"",
            ),
            (
                TableKind::Raw,
                "-j CT --expevents destroy",
                "Unknown event type \"destroy\"",
            ),
            (
                TableKind::Raw,
                "-j CT --notrack --notrack",
                "CT: option \"--notrack\" can only be used once.\n",
            ),
            (
                TableKind::Filter,
                "-j CT --notrack",
                "Invalid argument: CT target: only valid in raw table, not filter.",
            ),
            (
                TableKind::Mangle,
                "-j CT --notrack",
                "Invalid argument: CT target: only valid in raw table, not mangle.",
            ),
        ];
        for (table, rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv6, *table, "OUTPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}
