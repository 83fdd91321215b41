//! `-m rt`: IPv6 routing header (ip6tables' libip6t_rt).

use super::ah::{list_u32_range, parse_u32_range, save_u32_range};
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;
use std::net::Ipv6Addr;

/// IP6T_RT_HOPS: addresses `--rt-0-addrs` may list.
pub const HOPS: usize = 16;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rt {
    /// `--rt-type`, inverted.
    pub typ: Option<(u32, bool)>,
    /// Segments left range (0:4294967295 uninverted tests nothing).
    pub segs: (u32, u32),
    pub inv_segs: bool,
    /// `--rt-len`, inverted.
    pub len: Option<(u32, bool)>,
    /// `--rt-0-res`.
    pub res: bool,
    /// `--rt-0-addrs`.
    pub addrs: Option<Vec<[u8; 16]>>,
    /// `--rt-0-not-strict`.
    pub not_strict: bool,
}

const TYPE: u8 = 0;
const SEGSLEFT: u8 = 1;
const LEN: u8 = 2;
const RES: u8 = 3;
const ADDRS: u8 = 4;
const NSTRICT: u8 = 5;

impl Rt {
    /// `--rt-type 0` given, not inverted: what the type 0 options need.
    fn is_type0(&self) -> bool {
        self.typ == Some((0, false))
    }
}

fn parse_addrs(s: &str) -> Result<Vec<[u8; 16]>> {
    let mut out = Vec::new();
    for a in s.split(',') {
        if out.len() == HOPS {
            return Err(Error::param("too many addresses specified"));
        }
        let addr: Ipv6Addr = a
            .parse()
            .map_err(|_| Error::param(format!("bad address: {a}")))?;
        out.push(addr.octets());
    }
    Ok(out)
}

fn put_addrs(out: &mut String, addrs: &[[u8; 16]]) {
    for (i, a) in addrs.iter().enumerate() {
        out.push(if i == 0 { ' ' } else { ',' });
        opt::fmt_v6(out, a);
    }
}

impl Ext for Rt {
    const NAME: &'static str = "rt";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("rt-type", TYPE, Arg::Required).inv(),
        OptDef::new("rt-segsleft", SEGSLEFT, Arg::Required).inv(),
        OptDef::new("rt-len", LEN, Arg::Required).inv(),
        OptDef::new("rt-0-res", RES, Arg::None),
        OptDef::new("rt-0-addrs", ADDRS, Arg::Required),
        OptDef::new("rt-0-not-strict", NSTRICT, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Rt {
            typ: None,
            segs: (0, u32::MAX),
            inv_segs: false,
            len: None,
            res: false,
            addrs: None,
            not_strict: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            TYPE => self.typ = Some((c.uint(0, u32::MAX as u64)? as u32, c.inv)),
            SEGSLEFT => {
                self.segs = parse_u32_range(c)?;
                self.inv_segs |= c.inv;
            }
            LEN => self.len = Some((c.uint(0, u32::MAX as u64)? as u32, c.inv)),
            RES => {
                if !self.is_type0() {
                    return Err(Error::param("`--rt-type 0' required before `--rt-0-res'"));
                }
                self.res = true;
            }
            ADDRS => {
                if !self.is_type0() {
                    return Err(Error::param("`--rt-type 0' required before `--rt-0-addrs'"));
                }
                self.addrs = Some(parse_addrs(c.arg)?);
            }
            _ => {
                if self.addrs.is_none() {
                    return Err(Error::param(
                        "`--rt-0-addr ...' required before `--rt-0-not-strict'",
                    ));
                }
                self.not_strict = true;
            }
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if let Some((t, inv)) = self.typ {
            let _ = write!(out, "{} --rt-type {t}", if inv { " !" } else { "" });
        }
        save_u32_range(out, "rt-segsleft", self.segs, self.inv_segs);
        if let Some((l, inv)) = self.len {
            let _ = write!(out, "{} --rt-len {l}", if inv { " !" } else { "" });
        }
        if self.res {
            out.push_str(" --rt-0-res");
        }
        if let Some(a) = &self.addrs {
            out.push_str(" --rt-0-addrs");
            put_addrs(out, a);
        }
        if self.not_strict {
            out.push_str(" --rt-0-not-strict");
        }
    }

    /// The type prints as a signed number here (`%d`), as iptables does.
    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" rt");
        if let Some((t, inv)) = self.typ {
            let _ = write!(out, " type:{}{}", if inv { "!" } else { "" }, t as i32);
        }
        if self.segs != (0, u32::MAX) || self.inv_segs {
            out.push(' ');
            list_u32_range(out, "segsleft", self.segs, self.inv_segs);
        }
        if let Some((l, inv)) = self.len {
            let _ = write!(out, " length:{}{l}", if inv { "!" } else { "" });
        }
        if self.res {
            out.push_str(" reserved");
        }
        if let Some(a) = &self.addrs {
            out.push_str(" 0-addrs");
            put_addrs(out, a);
        }
        if self.not_strict {
            out.push_str(" 0-not-strict");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, list_in, save_in};
    use ruleset::{Family, TableKind};

    fn at(args: &str) -> (String, String) {
        (
            save_in(Family::Ipv6, TableKind::Filter, "INPUT", args),
            list_in(Family::Ipv6, TableKind::Filter, "INPUT", args, true),
        )
    }

    #[test]
    fn forms() {
        let cases = [
            ("-m rt", "", " rt"),
            ("-m rt --rt-segsleft :", "", " rt"),
            (
                "-m rt ! --rt-segsleft :",
                " ! --rt-segsleft 0:4294967295",
                " rt segslefts:!0:4294967295",
            ),
            (
                "-m rt --rt-type 0 ! --rt-segsleft 1:23 ! --rt-len 42 --rt-0-res",
                " --rt-type 0 ! --rt-segsleft 1:23 ! --rt-len 42 --rt-0-res",
                " rt type:0 segslefts:!1:23 length:!42 reserved",
            ),
            (
                "-m rt ! --rt-type 4294967295 --rt-segsleft 3:3",
                " ! --rt-type 4294967295 --rt-segsleft 3",
                " rt type:!-1 segsleft:3",
            ),
            (
                "-m rt --rt-type 0 --rt-0-addrs 2001:db8::1,::ffff:1.2.3.4 --rt-0-not-strict",
                " --rt-type 0 --rt-0-addrs 2001:db8::1,::ffff:1.2.3.4 --rt-0-not-strict",
                " rt type:0 0-addrs 2001:db8::1,::ffff:1.2.3.4 0-not-strict",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(at(args), (s.to_string(), l.to_string()), "{args}");
        }
    }

    #[test]
    fn errors() {
        let seventeen = ["::1"; 17].join(",");
        let cases = [
            (
                "-m rt --rt-0-res".to_string(),
                "`--rt-type 0' required before `--rt-0-res'",
            ),
            (
                "-m rt ! --rt-type 0 --rt-0-addrs ::1".into(),
                "`--rt-type 0' required before `--rt-0-addrs'",
            ),
            (
                "-m rt --rt-0-not-strict".into(),
                "`--rt-0-addr ...' required before `--rt-0-not-strict'",
            ),
            (
                "-m rt --rt-type 0 --rt-0-addrs ::1,x".into(),
                "bad address: x",
            ),
            (
                format!("-m rt --rt-type 0 --rt-0-addrs {seventeen}"),
                "too many addresses specified",
            ),
            (
                "-m rt --rt-segsleft 4:3".into(),
                "rt: bad value for option \"--rt-segsleft\" near \"3\", or out of range (4-4294967295).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(
                err_in(Family::Ipv6, TableKind::Filter, "INPUT", &args),
                want,
                "{args}"
            );
        }
    }
}
