//! `-m osf`: passive OS fingerprint of TCP SYN packets (iptables'
//! libxt_osf; IPv4 only in iptables).

use crate::error::Result;
use crate::ext::matches::helper::cut;
use crate::ext::{require_proto, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Osf {
    /// At most `GENRE_MAX` bytes (cut as xtables cuts it to the field).
    pub genre: String,
    pub inv: bool,
    /// `--ttl` level 0..=2, if given.
    pub ttl: Option<u32>,
    /// `--log` level 0..=2, if given.
    pub log: Option<u32>,
}

const GENRE: u8 = 0;
const TTL: u8 = 1;
const LOG: u8 = 2;
/// `struct xt_osf_info.genre` holds 31 bytes and the NUL.
pub const GENRE_MAX: usize = 31;

impl Ext for Osf {
    const NAME: &'static str = "osf";
    const FAMILY: Fam = Fam::V4;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("genre", GENRE, Arg::Required).inv().mand(),
        OptDef::new("ttl", TTL, Arg::Required),
        OptDef::new("log", LOG, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Osf {
            genre: String::new(),
            inv: false,
            ttl: None,
            log: None,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            GENRE => {
                self.genre = cut(c.arg, GENRE_MAX);
                self.inv = c.inv;
            }
            TTL => self.ttl = Some(c.uint(0, 2)? as u32),
            _ => self.log = Some(c.uint(0, 2)? as u32),
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("osf match", ctx, &[6])?;
        opt::check_hooks(
            "osf match",
            ctx.table,
            ctx.chain,
            &["PREROUTING", "INPUT", "FORWARD"],
        )
    }

    /// The genre is printed as is, unquoted.
    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        let _ = write!(out, " --genre {}", self.genre);
        if let Some(t) = self.ttl {
            let _ = write!(out, " --ttl {t}");
        }
        if let Some(l) = self.log {
            let _ = write!(out, " --log {l}");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " OS fingerprint match {}{}",
            if self.inv { "! " } else { "" },
            self.genre
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list, save};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        let cases = [
            (
                "-p tcp -m osf --genre linux --ttl 0 --log 0",
                " --genre linux --ttl 0 --log 0",
                " OS fingerprint match linux",
            ),
            (
                "-p tcp -m osf --log 2 ! --genre \"a b\"",
                " ! --genre a b --log 2",
                " OS fingerprint match ! a b",
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
                "-m osf --genre linux",
                "Invalid argument: osf match: only valid for protocol 6.",
            ),
            (
                "-p tcp -m osf --genre linux --ttl 3",
                "osf: bad value for option \"--ttl\", or out of range (0-2).\n",
            ),
            (
                "-p tcp -m osf",
                "osf: option \"--genre\" must be specified\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
        assert_eq!(
            err_in(Family::Ipv4, TableKind::Filter, "OUTPUT", "-p tcp -m osf --genre x"),
            "Invalid argument: osf match: used from hooks OUTPUT, but only valid from PREROUTING/INPUT/FORWARD."
        );
    }
}
