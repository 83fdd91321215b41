//! `-m owner`: the owner of the local socket (iptables' libxt_owner,
//! revision 1). Only valid where the kernel knows the socket: OUTPUT and
//! POSTROUTING.
//!
//! User and group names are looked up in /etc/passwd and /etc/group (a small
//! reader of the files, no NSS); numbers and ranges need no lookup.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// An inclusive id range with its inversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IdRange {
    pub min: u32,
    pub max: u32,
    pub inv: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Owner {
    pub uid: Option<IdRange>,
    pub gid: Option<IdRange>,
    /// `--socket-exists`, with its inversion.
    pub socket: Option<bool>,
    pub suppl_groups: bool,
}

const USER: u8 = 0;
const GROUP: u8 = 1;
const SOCK_EXISTS: u8 = 2;
const SUPPL_GROUPS: u8 = 3;

/// Lines of a passwd/group style file: (name, id) from the first and third
/// colon separated fields.
fn entries(text: &str) -> impl Iterator<Item = (&str, u32)> {
    text.lines().filter_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        let id = f.nth(1)?.parse().ok()?;
        (!name.is_empty() && !name.starts_with('#')).then_some((name, id))
    })
}

fn id_of(text: &str, name: &str) -> Option<u32> {
    entries(text).find(|e| e.0 == name).map(|e| e.1)
}

fn name_of(text: &str, id: u32) -> Option<&str> {
    entries(text).find(|e| e.1 == id).map(|e| e.0)
}

/// The id of user (or, with `group`, group) `name` from /etc/passwd or
/// /etc/group, as the owner match resolves names.
pub fn lookup_id(group: bool, name: &str) -> Option<u32> {
    id_of(&db(group), name)
}

fn db(group: bool) -> String {
    let path = if group { "/etc/group" } else { "/etc/passwd" };
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `n`, `n-m` or `n:m` with ids up to 2^32-2 (-1 is "no id").
fn parse_range(s: &str, optname: &str) -> Result<(u32, u32)> {
    let bad = || {
        Error::param(format!(
            "owner: Bad value for \"{optname}\" option: \"{s}\""
        ))
    };
    let num = |t: &str| -> Option<(u32, usize)> {
        if t.trim_start().starts_with('-') {
            return None;
        }
        let (v, rest) = opt::strtoul(t, 0)?;
        (v < u32::MAX as u64).then_some((v as u32, t.len() - rest.len()))
    };
    let (from, used) = num(s).ok_or_else(bad)?;
    let mut rest = &s[used..];
    let mut to = from;
    if let Some(r) = rest.strip_prefix(['-', ':']) {
        let (v, used) = num(r).ok_or_else(bad)?;
        to = v;
        rest = &r[used..];
    }
    if !rest.is_empty() {
        return Err(bad());
    }
    Ok((from, to))
}

fn parse_id(c: &Call, group: bool) -> Result<IdRange> {
    let (min, max) = match id_of(&db(group), c.arg) {
        Some(id) => (id, id),
        None => parse_range(c.arg, if group { "--gid-owner" } else { "--uid-owner" })?,
    };
    Ok(IdRange {
        min,
        max,
        inv: c.inv,
    })
}

/// One item as iptables prints it: ` [!] LABEL[ value]`; single ids by name
/// unless numeric.
fn put_id(out: &mut String, label: &str, r: &IdRange, group: bool, numeric: bool) {
    if r.inv {
        out.push_str(" !");
    }
    out.push(' ');
    out.push_str(label);
    if r.min != r.max {
        let _ = write!(out, " {}-{}", r.min, r.max);
        return;
    }
    if !numeric {
        if let Some(name) = name_of(&db(group), r.min) {
            out.push(' ');
            out.push_str(name);
            return;
        }
    }
    let _ = write!(out, " {}", r.min);
}

impl Owner {
    fn put(&self, out: &mut String, labels: [&str; 4], numeric: bool) {
        if let Some(inv) = self.socket {
            if inv {
                out.push_str(" !");
            }
            out.push(' ');
            out.push_str(labels[0]);
        }
        if let Some(r) = &self.uid {
            put_id(out, labels[1], r, false, numeric);
        }
        if let Some(r) = &self.gid {
            put_id(out, labels[2], r, true, numeric);
        }
        if self.suppl_groups {
            out.push(' ');
            out.push_str(labels[3]);
        }
    }
}

impl Ext for Owner {
    const NAME: &'static str = "owner";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("uid-owner", USER, Arg::Required).inv(),
        OptDef::new("gid-owner", GROUP, Arg::Required).inv(),
        OptDef::new("socket-exists", SOCK_EXISTS, Arg::None).inv(),
        OptDef::new("suppl-groups", SUPPL_GROUPS, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Owner {
            uid: None,
            gid: None,
            socket: None,
            suppl_groups: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            USER => self.uid = Some(parse_id(c, false)?),
            GROUP => self.gid = Some(parse_id(c, true)?),
            SOCK_EXISTS => self.socket = Some(c.inv),
            _ => {
                if self.gid.is_none() {
                    return Err(Error::param(
                        "owner: Bad value for \"--suppl-groups\" option: \"you need to use --gid-owner first\"",
                    ));
                }
                self.suppl_groups = true;
            }
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param(
                "owner: At least one of --uid-owner, --gid-owner or --socket-exists is required",
            ));
        }
        opt::check_hooks(
            "owner match",
            ctx.table,
            ctx.chain,
            &["OUTPUT", "POSTROUTING"],
        )?;
        // The kernel refuses reversed ranges.
        for (r, what) in [(&self.uid, "uid"), (&self.gid, "gid")] {
            if let Some(r) = r {
                if r.max < r.min {
                    return Err(opt::einval(&format!(
                        "owner match: {what} range {}-{} is reversed",
                        r.min, r.max
                    )));
                }
            }
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.put(
            out,
            [
                "--socket-exists",
                "--uid-owner",
                "--gid-owner",
                "--suppl-groups",
            ],
            true,
        );
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        self.put(
            out,
            [
                "owner socket exists",
                "owner UID match",
                "owner GID match",
                "incl. suppl. groups",
            ],
            ctx.numeric,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{id_of, name_of};
    use crate::ext::testutil::{err_in, list_in, save_in};
    use ruleset::{Family, TableKind};

    fn list(args: &str, numeric: bool) -> String {
        list_in(Family::Ipv4, TableKind::Filter, "OUTPUT", args, numeric)
    }

    fn save(args: &str) -> String {
        save_in(Family::Ipv4, TableKind::Filter, "OUTPUT", args)
    }

    fn err(args: &str) -> String {
        err_in(Family::Ipv4, TableKind::Filter, "OUTPUT", args)
    }

    #[test]
    fn list_output() {
        // Ranges never print names; numeric single ids never do.
        let cases = [
            ("-m owner --uid-owner 0-10", false, " owner UID match 0-10"),
            (
                "-m owner ! --gid-owner 5:7 --suppl-groups",
                false,
                " ! owner GID match 5-7 incl. suppl. groups",
            ),
            (
                "-m owner --uid-owner 4294967294",
                true,
                " owner UID match 4294967294",
            ),
            (
                "-m owner --gid-owner 3 ! --socket-exists --uid-owner 0x10",
                true,
                " ! owner socket exists owner UID match 16 owner GID match 3",
            ),
        ];
        for (args, numeric, want) in cases {
            assert_eq!(list(args, numeric), want, "{args}");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save("-m owner ! --uid-owner 0 --gid-owner 0-10 --suppl-groups --socket-exists"),
            " --socket-exists ! --uid-owner 0 --gid-owner 0-10 --suppl-groups"
        );
        assert_eq!(save("-m owner --gid-owner 7:7"), " --gid-owner 7");
    }

    #[test]
    fn name_lookup_in_files() {
        let passwd = "# comment\nroot:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1::/:/bin/false\nbroken\nalias:x:1:1::/:\n";
        assert_eq!(id_of(passwd, "daemon"), Some(1));
        assert_eq!(id_of(passwd, "root"), Some(0));
        assert_eq!(id_of(passwd, "nobody"), None);
        assert_eq!(id_of(passwd, "x"), None);
        assert_eq!(name_of(passwd, 1), Some("daemon"));
        assert_eq!(name_of(passwd, 7), None);
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m owner --uid-owner 4294967295",
                "owner: Bad value for \"--uid-owner\" option: \"4294967295\"",
            ),
            (
                "-m owner --gid-owner 1-",
                "owner: Bad value for \"--gid-owner\" option: \"1-\"",
            ),
            (
                "-m owner --uid-owner no-such-user-here",
                "owner: Bad value for \"--uid-owner\" option: \"no-such-user-here\"",
            ),
            (
                "-m owner --suppl-groups --gid-owner 0-10",
                "owner: Bad value for \"--suppl-groups\" option: \"you need to use --gid-owner first\"",
            ),
            (
                "-m owner --gid-owner 0-10 ! --suppl-groups",
                "owner: option \"--suppl-groups\" cannot be inverted.\n",
            ),
            (
                "-m owner",
                "owner: At least one of --uid-owner, --gid-owner or --socket-exists is required",
            ),
            (
                "-m owner --uid-owner 10-5",
                "Invalid argument: owner match: uid range 10-5 is reversed.",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
        assert_eq!(
            err_in(Family::Ipv6, TableKind::Mangle, "INPUT", "-m owner --uid-owner 0"),
            "Invalid argument: owner match: used from hooks INPUT, but only valid from OUTPUT/POSTROUTING."
        );
    }
}
