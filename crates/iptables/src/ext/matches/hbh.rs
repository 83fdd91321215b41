//! `-m hbh`: IPv6 hop-by-hop options header (ip6tables' libip6t_hbh).
//! [`OptsHeader`] is shared with `-m dst` (destination options), which
//! the kernel implements with the same code and struct (`ip6t_opts`).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// IP6T_OPTS_OPTSNR: options a rule may list.
pub const OPTSNR: usize = 16;

/// What `-m hbh` and `-m dst` test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OptsHeader {
    /// `--*-len`: total header length, and inverted.
    pub len: Option<(u32, bool)>,
    /// `--*-opts`: each option as the kernel gets it: type << 8 | length,
    /// with length 0xff for "any length".
    pub opts: Option<Vec<u16>>,
}

/// Option ids shared by both extensions.
pub const LEN: u8 = 0;
pub const OPTS: u8 = 1;

/// The per-extension words: name, message prefix, PAD0 message.
pub struct Words {
    pub name: &'static str,
    pub pad0: &'static str,
}

/// parse_opts_num: the whole string as `strtoul(.., 0)`.
fn opts_num(w: &Words, s: &str, what: &str) -> Result<u64> {
    match opt::c_strtoul(s, 0) {
        None => Err(Error::param(format!(
            "{}: no valid digits in {what} `{s}'",
            w.name
        ))),
        Some((_, true, _)) => Err(Error::param(format!(
            "{what} `{s}' specified too big: would overflow"
        ))),
        Some((_, false, rest)) if !rest.is_empty() => Err(Error::param(format!(
            "{}: error parsing {what} `{s}'",
            w.name
        ))),
        Some((v, false, _)) => Ok(v),
    }
}

/// `TYPE[:LEN][,TYPE[:LEN]...]`, at most 16, as iptables reads it.
pub fn parse_opts(w: &Words, s: &str) -> Result<Vec<u16>> {
    let mut out = Vec::new();
    let mut rest = Some(s);
    while let Some(cp) = rest {
        if out.len() == OPTSNR {
            return Err(Error::param("too many addresses specified"));
        }
        let (item, next) = match cp.split_once(',') {
            Some((a, b)) => (a, Some(b)),
            None => (cp, None),
        };
        rest = next;
        let (typ, len) = match item.split_once(':') {
            Some((t, l)) => {
                if out.len() == OPTSNR - 1 {
                    return Err(Error::param("too many ports specified"));
                }
                (t, Some(l))
            }
            None => (item, None),
        };
        let mut o = ((opts_num(w, typ, "opt")? & 0xff) << 8) as u16;
        match len {
            Some(l) => {
                if o == 0 {
                    return Err(Error::param(w.pad0));
                }
                o |= (opts_num(w, l, "length")? & 0xff) as u16;
            }
            None => o |= 0xff,
        }
        out.push(o);
    }
    Ok(out)
}

fn put_opts(out: &mut String, opts: &[u16]) {
    for (i, o) in opts.iter().enumerate() {
        let _ = write!(out, "{}{}", if i == 0 { ' ' } else { ',' }, o >> 8);
        if o & 0xff != 0xff {
            let _ = write!(out, ":{}", o & 0xff);
        }
    }
}

impl OptsHeader {
    pub fn parse(&mut self, w: &Words, c: &Call) -> Result<()> {
        if c.opt.id == LEN {
            self.len = Some((c.uint(0, u32::MAX as u64)? as u32, c.inv));
        } else {
            self.opts = Some(parse_opts(w, c.arg)?);
        }
        Ok(())
    }

    pub fn save(&self, name: &str, out: &mut String) {
        if let Some((len, inv)) = self.len {
            let _ = write!(out, "{} --{name}-len {len}", if inv { " !" } else { "" });
        }
        if let Some(o) = &self.opts {
            let _ = write!(out, " --{name}-opts");
            put_opts(out, o);
        }
    }

    pub fn list(&self, name: &str, out: &mut String) {
        let _ = write!(out, " {name}");
        if let Some((len, inv)) = self.len {
            let _ = write!(out, " length:{}{len}", if inv { "!" } else { "" });
        }
        if let Some(o) = &self.opts {
            out.push_str(" opts");
            put_opts(out, o);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hbh(pub OptsHeader);

const WORDS: Words = Words {
    name: "hbh",
    pad0: "PAD0 has not got length",
};

impl Ext for Hbh {
    const NAME: &'static str = "hbh";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("hbh-len", LEN, Arg::Required).inv(),
        OptDef::new("hbh-opts", OPTS, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Hbh(OptsHeader::default())
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.0.parse(&WORDS, c)
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.0.save("hbh", out);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.0.list("hbh", out);
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
            ("-m hbh", "", " hbh"),
            (
                "-m hbh ! --hbh-len 42",
                " ! --hbh-len 42",
                " hbh length:!42",
            ),
            (
                "-m hbh --hbh-len 42 --hbh-opts 1:2,23:42,4:6,8:10,42,23,4:5",
                " --hbh-len 42 --hbh-opts 1:2,23:42,4:6,8:10,42,23,4:5",
                " hbh length:42 opts 1:2,23:42,4:6,8:10,42,23,4:5",
            ),
            (
                // Values are cut to a byte; a length of 255 reads as "any".
                "-m hbh --hbh-opts 0x101:258,0,-1,7:255",
                " --hbh-opts 1:2,0,255,7",
                " hbh opts 1:2,0,255,7",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(at(args), (s.to_string(), l.to_string()), "{args}");
        }
    }

    #[test]
    fn errors() {
        let sixteen = ["1"; 16].join(",");
        let cases = [
            (
                "-m hbh --hbh-opts 0:1".to_string(),
                "PAD0 has not got length",
            ),
            (
                "-m hbh --hbh-opts 1,,2".into(),
                "hbh: no valid digits in opt `'",
            ),
            (
                "-m hbh --hbh-opts x".into(),
                "hbh: no valid digits in opt `x'",
            ),
            (
                "-m hbh --hbh-opts 1:2x".into(),
                "hbh: error parsing length `2x'",
            ),
            (
                "-m hbh --hbh-opts 99999999999999999999".into(),
                "opt `99999999999999999999' specified too big: would overflow",
            ),
            (
                format!("-m hbh --hbh-opts {sixteen},1"),
                "too many addresses specified",
            ),
            (
                format!("-m hbh --hbh-opts {},1:1", ["1"; 15].join(",")),
                "too many ports specified",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(
                err_in(Family::Ipv6, TableKind::Filter, "INPUT", &args),
                want,
                "{args}"
            );
        }
        assert_eq!(at(&format!("-m hbh --hbh-opts {sixteen}")).0.len(), 43);
    }
}
