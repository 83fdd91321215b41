//! `-m cgroup`: the socket's cgroup, by cgroup2 path or net_cls classid
//! (iptables' libxt_cgroup, revision 2 — the newest this kernel offers).

use crate::error::Result;
use crate::ext::matches::helper::cut;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Test {
    /// `--path`: a cgroup2 path (at most `PATH_MAX` bytes; longer ones are
    /// cut as xtables cuts them to the field). Whether it exists is the
    /// kernel's check.
    Path(String),
    /// `--cgroup`: a net_cls classid.
    Classid(u32),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cgroup {
    /// `None` only until an option is given (the rule is then refused).
    pub test: Option<Test>,
    pub inv: bool,
}

const CLASSID: u8 = 0;
const PATH: u8 = 1;
/// `struct xt_cgroup_info_v2.path` holds 511 bytes and the NUL.
pub const PATH_MAX: usize = 511;

impl Ext for Cgroup {
    const NAME: &'static str = "cgroup";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("path", PATH, Arg::Required).inv(),
        OptDef::new("cgroup", CLASSID, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Cgroup {
            test: None,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.test = Some(match c.opt.id {
            PATH => Test::Path(cut(c.arg, PATH_MAX)),
            _ => Test::Classid(c.uint(0, u32::MAX as u64)? as u32),
        });
        self.inv = c.inv;
        Ok(())
    }

    /// The kernel's checks: exactly one of path and classid, and the hooks
    /// where a packet has a local socket.
    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(opt::einval("cgroup match: no path or classid specified"));
        }
        if seen == (1 << PATH) | (1 << CLASSID) {
            return Err(opt::einval("cgroup match: path and classid specified"));
        }
        opt::check_hooks(
            "cgroup match",
            ctx.table,
            ctx.chain,
            &["INPUT", "OUTPUT", "POSTROUTING"],
        )
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let inv = if self.inv { " !" } else { "" };
        match &self.test {
            Some(Test::Path(p)) => {
                let _ = write!(out, "{inv} --path");
                opt::save_string(out, p);
            }
            Some(Test::Classid(id)) => {
                let _ = write!(out, "{inv} --cgroup {id}");
            }
            None => {}
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" cgroup");
        let inv = if self.inv { "! " } else { "" };
        match &self.test {
            Some(Test::Path(p)) => {
                let _ = write!(out, " {inv}{p}");
            }
            Some(Test::Classid(id)) => {
                let _ = write!(out, " {inv}{id}");
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list, save};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        let cases = [
            ("-m cgroup --cgroup 1", " --cgroup 1", " cgroup 1"),
            (
                "-m cgroup ! --cgroup 0x10",
                " ! --cgroup 16",
                " cgroup ! 16",
            ),
            ("-m cgroup --path /", " --path \"/\"", " cgroup /"),
            (
                "-m cgroup ! --path user.slice",
                " ! --path \"user.slice\"",
                " cgroup ! user.slice",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save(args), s, "{args}");
            assert_eq!(list(args, false), l, "{args}");
            assert_eq!(list(args, true), l, "{args} -n");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m cgroup",
                "Invalid argument: cgroup match: no path or classid specified.",
            ),
            (
                "-m cgroup --cgroup 1 --path /",
                "Invalid argument: cgroup match: path and classid specified.",
            ),
            (
                "-m cgroup --cgroup 1 --cgroup 2",
                "cgroup: option \"--cgroup\" can only be used once.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
        assert_eq!(
            err_in(Family::Ipv4, TableKind::Mangle, "PREROUTING", "-m cgroup --cgroup 1"),
            "Invalid argument: cgroup match: used from hooks PREROUTING, but only valid from INPUT/OUTPUT/POSTROUTING."
        );
    }
}
