//! `-j SET`: add the packet's addresses/ports to an ipset, delete them, or
//! set the packet's mark/priority/queue from a set entry (iptables'
//! libxt_SET, revision 3).
//!
//! iptables resolves each set name to the kernel's set index while parsing
//! and fails for a set that does not exist; as for `-m set`, nfkeeper keeps
//! the names, and the layers that apply the ruleset check the sets.

use super::xtypes::check_plain_word;
use crate::error::{Error, Result};
use crate::ext::matches::set::{parse_dirs, MAX_NAME};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;
use std::fmt::Write;

/// One set and the direction of each of its dimensions (`true` = src).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SetRef {
    pub name: String,
    /// 1..=6 entries.
    pub dirs: Vec<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SetTarget {
    pub add: Option<SetRef>,
    pub del: Option<SetRef>,
    pub map: Option<SetRef>,
    /// `--exist`: re-adding an entry refreshes its timeout.
    pub exist: bool,
    /// `--timeout` for added entries (None: the set's default).
    pub timeout: Option<u32>,
    pub map_mark: bool,
    pub map_prio: bool,
    pub map_queue: bool,
}

const ADD_SET: u8 = 0;
const DEL_SET: u8 = 1;
const EXIST: u8 = 2;
const TIMEOUT: u8 = 3;
const MAP_SET: u8 = 4;
const MAP_MARK: u8 = 5;
const MAP_PRIO: u8 = 6;
const MAP_QUEUE: u8 = 7;

/// `--add-set NAME DIRS` and its siblings: the set name is the option's
/// argument, the directions the next word.
fn parse_set(c: &mut Call, slot: &Option<SetRef>) -> Result<SetRef> {
    let what = c.opt.name;
    if slot.is_some() {
        return Err(Error::param(format!("--{what} can be specified only once")));
    }
    let dirs = match c.rest.peek() {
        Some(w) if !w.starts_with('-') && !w.starts_with('!') => {
            c.rest.pos += 1;
            w
        }
        _ => return Err(Error::param(format!("--{what} requires two args."))),
    };
    if c.arg.len() > MAX_NAME {
        return Err(Error::param(format!(
            "setname `{}' too long, max {MAX_NAME} characters.",
            c.arg
        )));
    }
    if c.arg.is_empty() {
        // No set can have an empty name.
        return Err(Error::param(format!("Set {} doesn't exist.\n", c.arg)));
    }
    check_plain_word("SET", what, c.arg)?;
    Ok(SetRef {
        name: c.arg.to_string(),
        dirs: parse_dirs(dirs)?,
    })
}

fn put_set(out: &mut String, prefix: &str, s: &Option<SetRef>) {
    let Some(s) = s else { return };
    let _ = write!(out, " {prefix} {}", s.name);
    for (i, src) in s.dirs.iter().enumerate() {
        out.push(if i == 0 { ' ' } else { ',' });
        out.push_str(if *src { "src" } else { "dst" });
    }
}

impl SetTarget {
    fn print(&self, out: &mut String, p: &str) {
        put_set(out, &format!("{p}add-set"), &self.add);
        if self.exist {
            let _ = write!(out, " {p}exist");
        }
        if let Some(t) = self.timeout {
            let _ = write!(out, " {p}timeout {t}");
        }
        put_set(out, &format!("{p}del-set"), &self.del);
        put_set(out, &format!("{p}map-set"), &self.map);
        for (on, name) in [
            (self.map_mark, "map-mark"),
            (self.map_prio, "map-prio"),
            (self.map_queue, "map-queue"),
        ] {
            if on {
                let _ = write!(out, " {p}{name}");
            }
        }
    }
}

impl Ext for SetTarget {
    const NAME: &'static str = "SET";
    const FAMILY: Fam = Fam::Both;
    // iptables parses these options itself (old-style getopt): any may be
    // repeated or preceded by '!' as far as the generic checks go; the
    // extension's own messages follow in `parse` and `finish`.
    const OPTS: &'static [OptDef] = &[
        OptDef::new("add-set", ADD_SET, Arg::Required).inv().multi(),
        OptDef::new("del-set", DEL_SET, Arg::Required).inv().multi(),
        OptDef::new("exist", EXIST, Arg::None).inv().multi(),
        OptDef::new("timeout", TIMEOUT, Arg::Required).inv().multi(),
        OptDef::new("map-set", MAP_SET, Arg::Required).inv().multi(),
        OptDef::new("map-mark", MAP_MARK, Arg::None).inv().multi(),
        OptDef::new("map-prio", MAP_PRIO, Arg::None).inv().multi(),
        OptDef::new("map-queue", MAP_QUEUE, Arg::None).inv().multi(),
    ];

    fn new(_: &ParseCtx) -> Self {
        SetTarget {
            add: None,
            del: None,
            map: None,
            exist: false,
            timeout: None,
            map_mark: false,
            map_prio: false,
            map_queue: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            ADD_SET => self.add = Some(parse_set(c, &self.add)?),
            DEL_SET => self.del = Some(parse_set(c, &self.del)?),
            MAP_SET => self.map = Some(parse_set(c, &self.map)?),
            EXIST => self.exist = true,
            TIMEOUT => {
                let max = u64::from(u32::MAX - 1);
                let t = crate::opt::parse_uint(c.arg, 0, max).ok_or_else(|| {
                    Error::param(format!(
                        "Invalid value for option --timeout or out of range 0-{max}"
                    ))
                })?;
                self.timeout = Some(t as u32);
            }
            MAP_MARK => self.map_mark = true,
            MAP_PRIO => self.map_prio = true,
            _ => self.map_queue = true,
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        let given = |id: u8| seen & (1 << id) != 0;
        if self.add.is_none() && self.del.is_none() && self.map.is_none() {
            return Err(Error::param(
                "You must specify either `--add-set' or `--del-set' or `--map-set'",
            ));
        }
        if self.add.is_none() {
            if given(EXIST) {
                return Err(Error::param(
                    "Flag `--exist' can be used with `--add-set' only",
                ));
            }
            if given(TIMEOUT) {
                return Err(Error::param(
                    "Option `--timeout' can be used with `--add-set' only",
                ));
            }
        }
        if self.map.is_none() {
            for (id, name) in [
                (MAP_MARK, "map-mark"),
                (MAP_PRIO, "map-prio"),
                (MAP_QUEUE, "map-queue"),
            ] {
                if given(id) {
                    return Err(Error::param(format!(
                        "Flag `--{name}' can be used with `--map-set' only"
                    )));
                }
            }
        } else if !(self.map_mark || self.map_prio || self.map_queue) {
            return Err(Error::param(
                "You must specify flags `--map-mark' or '--map-prio` or `--map-queue'",
            ));
        }
        // The kernel's checks of a mapping.
        if self.map.is_some() {
            if ctx.table != TableKind::Mangle {
                return Err(Error::op(
                    "Invalid argument: SET target: --map-set only usable from mangle table.",
                ));
            }
            let builtin = ctx.table.builtin_chains().contains(&ctx.chain);
            if (self.map_prio || self.map_queue)
                && builtin
                && !["FORWARD", "OUTPUT", "POSTROUTING"].contains(&ctx.chain)
            {
                return Err(Error::op(
                    "Invalid argument: SET target: mapping of prio or/and queue is allowed only from OUTPUT/FORWARD/POSTROUTING chains.",
                ));
            }
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

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // table, chain, rule, save (the -L form is the same without "--")
        let cases: &[(TableKind, &str, &str, &str)] = &[
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set foo src,dst",
                " --add-set foo src,dst",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --del-set bar dst,src --timeout 10 --add-set foo src --exist",
                " --add-set foo src --exist --timeout 10 --del-set bar dst,src",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET ! --add-set foo srcx,dstyy --timeout 5 --timeout 6 --exist --exist",
                " --add-set foo src,dst --exist --timeout 6",
            ),
            (
                TableKind::Mangle,
                "FORWARD",
                "-j SET --map-set m src --map-queue --map-prio --map-mark",
                " --map-set m src --map-mark --map-prio --map-queue",
            ),
            (
                TableKind::Mangle,
                "PREROUTING",
                "-j SET --map-set m src,dst --map-mark",
                " --map-set m src,dst --map-mark",
            ),
            (
                TableKind::Mangle,
                "mychain",
                "-j SET --map-set m src --map-prio",
                " --map-set m src --map-prio",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (table, chain, rule, save) in cases {
                let got = ok_in(fam, *table, chain, rule);
                assert_eq!(got.save, *save, "{rule}");
                assert_eq!(got.list, save.replace("--", ""), "{rule}");
                assert_eq!(got.list_numeric, got.list, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str, &str)] = &[
            (
                TableKind::Filter,
                "INPUT",
                "-j SET",
                "You must specify either `--add-set' or `--del-set' or `--map-set'",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set foo src --add-set foo dst",
                "--add-set can be specified only once",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set foo",
                "--add-set requires two args.",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --del-set foo ! src",
                "--del-set requires two args.",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set abcdefghijklmnopqrstuvwxyz0123456 src",
                "setname `abcdefghijklmnopqrstuvwxyz0123456' too long, max 31 characters.",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set foo any",
                "You must specify (the comma separated list of) 'src' or 'dst'.",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set foo src,dst,src,dst,src,dst,src",
                "Can't be more src/dst options than 6.",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set foo src --timeout 4294967295",
                "Invalid value for option --timeout or out of range 0-4294967294",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --del-set foo src --exist",
                "Flag `--exist' can be used with `--add-set' only",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --del-set foo src --timeout 1",
                "Option `--timeout' can be used with `--add-set' only",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --add-set foo src --map-prio",
                "Flag `--map-prio' can be used with `--map-set' only",
            ),
            (
                TableKind::Mangle,
                "INPUT",
                "-j SET --map-set m src",
                "You must specify flags `--map-mark' or '--map-prio` or `--map-queue'",
            ),
            (
                TableKind::Filter,
                "INPUT",
                "-j SET --map-set m src --map-mark",
                "Invalid argument: SET target: --map-set only usable from mangle table.",
            ),
            (
                TableKind::Mangle,
                "PREROUTING",
                "-j SET --map-set m src --map-queue",
                "Invalid argument: SET target: mapping of prio or/and queue is allowed only from OUTPUT/FORWARD/POSTROUTING chains.",
            ),
        ];
        for (table, chain, rule, want) in cases {
            assert_eq!(err_in(Family::Ipv4, *table, chain, rule), *want, "{rule}");
        }
    }
}
