//! `-m ah`: IPsec AH SPI (iptables' libipt_ah for IPv4; ip6tables'
//! libip6t_ah for IPv6, which adds `--ahlen` and `--ahres`). One type for
//! both families; the family decides the options and the printed form.

use crate::error::{Error, Result};
use crate::ext::{require_proto, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ah {
    pub spis: (u32, u32),
    pub inv_spi: bool,
    /// IPv6 only: header length (0 = not checked unless inverted).
    pub hdrlen: u32,
    pub inv_len: bool,
    /// IPv6 only: check the reserved field.
    pub hdrres: bool,
}

const SPI: u8 = 0;
const LEN: u8 = 1;
const RES: u8 = 2;

/// Save form of an SPI-style range: nothing for the full range uninverted.
pub(crate) fn save_u32_range(out: &mut String, opt: &str, r: (u32, u32), inv: bool) {
    if r == (0, u32::MAX) && !inv {
        return;
    }
    let _ = write!(out, "{} --{opt} ", if inv { " !" } else { "" });
    if r.0 != r.1 {
        let _ = write!(out, "{}:{}", r.0, r.1);
    } else {
        let _ = write!(out, "{}", r.0);
    }
}

/// `-L` form `NAME:[!]N` or `NAMEs:[!]A:B` (no leading space); nothing for
/// the full range uninverted.
pub(crate) fn list_u32_range(out: &mut String, name: &str, r: (u32, u32), inv: bool) {
    if r == (0, u32::MAX) && !inv {
        return;
    }
    let inv = if inv { "!" } else { "" };
    if r.0 == r.1 {
        let _ = write!(out, "{name}:{inv}{}", r.0);
    } else {
        let _ = write!(out, "{name}s:{inv}{}:{}", r.0, r.1);
    }
}

/// Parse a 32-bit `a[:b]` range option; one value means `a:a`.
pub(crate) fn parse_u32_range(c: &Call) -> Result<(u32, u32)> {
    let (lo, hi) = opt::parse_uint_range(c.ext, c.opt.name, c.arg, u32::MAX as u64)?;
    Ok((lo as u32, hi.unwrap_or(lo) as u32))
}

impl Ext for Ah {
    const NAME: &'static str = "ah";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("ahspi", SPI, Arg::Required).inv(),
        OptDef::new("ahlen", LEN, Arg::Required).inv(),
        OptDef::new("ahres", RES, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Ah {
            spis: (0, u32::MAX),
            inv_spi: false,
            hdrlen: 0,
            inv_len: false,
            hdrres: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        if c.opt.id != SPI && !c.ctx.is_v6() {
            // IPv4's ah has only --ahspi.
            return Err(Error::param(format!("unknown option \"--{}\"", c.opt.name)));
        }
        match c.opt.id {
            SPI => {
                self.spis = parse_u32_range(c)?;
                self.inv_spi |= c.inv;
            }
            LEN => {
                self.hdrlen = c.uint(0, u32::MAX as u64)? as u32;
                self.inv_len |= c.inv;
            }
            _ => self.hdrres = true,
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        if ctx.is_v6() {
            // An extension header: no protocol needed.
            return Ok(());
        }
        require_proto("ah match", ctx, &[51])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        save_u32_range(out, "ahspi", self.spis, self.inv_spi);
        if self.hdrlen != 0 || self.inv_len {
            let _ = write!(
                out,
                "{} --ahlen {}",
                if self.inv_len { " !" } else { "" },
                self.hdrlen
            );
        }
        if self.hdrres {
            out.push_str(" --ahres");
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" ah ");
        list_u32_range(out, "spi", self.spis, self.inv_spi);
        if !ctx.is_v6() {
            return;
        }
        if self.hdrlen != 0 || self.inv_len {
            let _ = write!(
                out,
                "length:{}{}",
                if self.inv_len { "!" } else { "" },
                self.hdrlen
            );
        }
        if self.hdrres {
            out.push_str(" reserved");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    fn ah(spis: (u32, u32), inv_spi: bool, hdrlen: u32, inv_len: bool, hdrres: bool) -> Ah {
        Ah {
            spis,
            inv_spi,
            hdrlen,
            inv_len,
            hdrres,
        }
    }

    #[test]
    fn list_forms() {
        let all = (0, u32::MAX);
        let cases: Vec<(Ah, Family, &str)> = vec![
            (ah(all, false, 0, false, false), Family::Ipv4, " ah "),
            (
                ah((5, 5), false, 0, false, false),
                Family::Ipv4,
                " ah spi:5",
            ),
            (
                ah((5, 5), true, 0, false, false),
                Family::Ipv4,
                " ah spi:!5",
            ),
            (
                ah((1, 9), false, 0, false, false),
                Family::Ipv4,
                " ah spis:1:9",
            ),
            (
                ah(all, true, 0, false, false),
                Family::Ipv4,
                " ah spis:!0:4294967295",
            ),
            (ah(all, false, 0, false, false), Family::Ipv6, " ah "),
            (
                ah((3, 3), false, 32, true, true),
                Family::Ipv6,
                " ah spi:3length:!32 reserved",
            ),
            (
                ah(all, false, 8, false, false),
                Family::Ipv6,
                " ah length:8",
            ),
            (
                ah(all, false, 0, false, true),
                Family::Ipv6,
                " ah  reserved",
            ),
        ];
        for (m, family, want) in cases {
            let p = print_ext(&m, family, 51);
            for numeric in [false, true] {
                assert_eq!(p.listed(numeric), want, "{m:?}");
            }
        }
    }

    #[test]
    fn save_forms() {
        let cases: Vec<(Ah, &str)> = vec![
            (ah((0, u32::MAX), false, 0, false, false), ""),
            (
                ah((0, u32::MAX), true, 0, false, false),
                " ! --ahspi 0:4294967295",
            ),
            (ah((7, 7), false, 0, true, false), " --ahspi 7 ! --ahlen 0"),
            (
                ah((0, 3), false, 32, false, true),
                " --ahspi 0:3 --ahlen 32 --ahres",
            ),
        ];
        for (m, want) in cases {
            assert_eq!(print_ext(&m, Family::Ipv6, 0).save, want);
        }
    }

    #[test]
    fn range_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "4:3",
                "ah: bad value for option \"--ahspi\" near \"3\", or out of range (4-4294967295).\n",
            ),
            (
                "0:invalid",
                "ah: bad value for option \"--ahspi\" near \"invalid\", or out of range (0-4294967295).\n",
            ),
            (
                "4294967296",
                "ah: bad value for option \"--ahspi\" near \"4294967296\", or out of range (0-4294967295).\n",
            ),
            (
                "1x",
                "ah: Argument to \"--ahspi\" has unexpected characters near \"x\".\n",
            ),
            (
                "1:2:3",
                "ah: Too many components for option \"--ahspi\" (max: 2)\n",
            ),
        ];
        for (arg, want) in cases {
            let e = opt::parse_uint_range("ah", "ahspi", arg, u32::MAX as u64).unwrap_err();
            assert_eq!(e.msg, *want, "{arg}");
        }
        let ok: &[(&str, (u64, Option<u64>))] = &[
            (":", (0, Some(u32::MAX as u64))),
            (":3", (0, Some(3))),
            ("3:", (3, Some(u32::MAX as u64))),
            ("0x10", (16, None)),
            ("", (0, None)),
        ];
        for (arg, want) in ok {
            assert_eq!(
                opt::parse_uint_range("ah", "ahspi", arg, u32::MAX as u64).unwrap(),
                *want,
                "{arg}"
            );
        }
    }
}
