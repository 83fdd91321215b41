//! `-m connlimit`: the number of connections from (or to) the packet's
//! address group (iptables' libxt_connlimit, revision 1).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connlimit {
    pub limit: u32,
    /// XT_CONNLIMIT_INVERT: match while the count is at most `limit`
    /// (`--connlimit-upto`); otherwise above it.
    pub upto: bool,
    /// XT_CONNLIMIT_DADDR: group by destination address.
    pub daddr: bool,
    /// The grouping mask as the kernel gets it (IPv4 in the first 4
    /// bytes, the rest zero, as from the `--connlimit-mask 32` that the
    /// save form always has). All ones unless `--connlimit-mask` is given.
    pub mask: [u8; 16],
}

const UPTO: u8 = 0;
const ABOVE: u8 = 1;
const MASK: u8 = 2;
const SADDR: u8 = 3;
const DADDR: u8 = 4;

/// xtables' prefix length of a mask as iptables prints it: the length up
/// to the lowest set bit's complement, i.e. `bits - (bits of ~mask up to
/// its highest one)`, per 32-bit word.
pub fn count_bits(mask: &[u8]) -> u32 {
    let total = mask.len() as u32 * 8;
    let mut zeros = 0;
    for w in mask.chunks(4) {
        let v = !u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
        zeros += 32 - v.leading_zeros();
    }
    total - zeros
}

/// XTTYPE_PLENMASK: a prefix length (any base) or a mask in address form;
/// a contiguous mask becomes the canonical one for its length, the rest of
/// the 16 bytes zero. Messages name option `--name` of extension `ext`.
pub fn parse_plenmask(ext: &str, name: &str, arg: &str, v6: bool) -> Result<[u8; 16]> {
    let max: u32 = if v6 { 128 } else { 32 };
    let mut out = [0u8; 16];
    if let Some(n) = opt::parse_uint(arg, 0, max as u64) {
        let m = opt::prefix_to_mask16(n as u32);
        if v6 {
            return Ok(m);
        }
        // hlen <= 32 fills the first word only.
        out[..4].copy_from_slice(&m[..4]);
        return Ok(out);
    }
    let parsed = if v6 {
        arg.parse::<std::net::Ipv6Addr>()
            .ok()
            .map(|a| a.octets().to_vec())
    } else {
        opt::parse_inet_aton(arg).map(|a| a.to_vec())
    };
    match parsed {
        Some(m) => {
            out[..m.len()].copy_from_slice(&m);
            Ok(out)
        }
        None => Err(Error::param(format!(
            "{ext}: bad value for option \"--{name}\", neither a valid network mask nor valid CIDR (0-{max}).\n"
        ))),
    }
}

impl Connlimit {
    fn bits(&self, v6: bool) -> u32 {
        count_bits(&self.mask[..if v6 { 16 } else { 4 }])
    }
}

impl Ext for Connlimit {
    const NAME: &'static str = "connlimit";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("connlimit-upto", UPTO, Arg::Required)
            .inv()
            .excl(1 << ABOVE),
        OptDef::new("connlimit-above", ABOVE, Arg::Required)
            .inv()
            .excl(1 << UPTO),
        OptDef::new("connlimit-mask", MASK, Arg::Required),
        OptDef::new("connlimit-saddr", SADDR, Arg::None).excl(1 << DADDR),
        OptDef::new("connlimit-daddr", DADDR, Arg::None).excl(1 << SADDR),
    ];

    fn new(ctx: &ParseCtx) -> Self {
        let mut mask = [0xff; 16];
        if !ctx.is_v6() {
            mask[4..].fill(0);
        }
        Connlimit {
            limit: 0,
            upto: false,
            daddr: false,
            mask,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            UPTO | ABOVE => {
                self.limit = c.uint(0, u32::MAX as u64)? as u32;
                self.upto = (c.opt.id == UPTO) != c.inv;
            }
            MASK => self.mask = parse_plenmask(c.ext, c.opt.name, c.arg, c.ctx.is_v6())?,
            SADDR => self.daddr = false,
            _ => self.daddr = true,
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen & ((1 << UPTO) | (1 << ABOVE)) == 0 {
            return Err(Error::param(
                "You must specify \"--connlimit-above\" or \"--connlimit-upto\".",
            ));
        }
        Ok(())
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " --connlimit-{} {} --connlimit-mask {} --connlimit-{}",
            if self.upto { "upto" } else { "above" },
            self.limit,
            self.bits(ctx.is_v6()),
            if self.daddr { "daddr" } else { "saddr" }
        );
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        let _ = write!(
            out,
            " #conn {}/{} {} {}",
            if self.daddr { "dst" } else { "src" },
            self.bits(ctx.is_v6()),
            if self.upto { "<=" } else { ">" },
            self.limit
        );
    }
}

#[cfg(test)]
mod tests {
    use super::count_bits;
    use crate::ext::testutil::{err, err_in, list, list_in, save, save_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms_v4() {
        let cases = [
            (
                "--connlimit-upto 0",
                " --connlimit-upto 0 --connlimit-mask 32 --connlimit-saddr",
                " #conn src/32 <= 0",
            ),
            (
                "! --connlimit-upto 5 --connlimit-daddr --connlimit-mask 24",
                " --connlimit-above 5 --connlimit-mask 24 --connlimit-daddr",
                " #conn dst/24 > 5",
            ),
            (
                "! --connlimit-above 4294967295 --connlimit-mask 255.255.0.0",
                " --connlimit-upto 4294967295 --connlimit-mask 16 --connlimit-saddr",
                " #conn src/16 <= 4294967295",
            ),
            (
                "--connlimit-above 1 --connlimit-mask 255.0.255.0",
                " --connlimit-above 1 --connlimit-mask 8 --connlimit-saddr",
                " #conn src/8 > 1",
            ),
            (
                // Not a length: an address (0.0.0.33), not contiguous.
                "--connlimit-above 1 --connlimit-mask 33",
                " --connlimit-above 1 --connlimit-mask 0 --connlimit-saddr",
                " #conn src/0 > 1",
            ),
            (
                "--connlimit-above 1 --connlimit-mask 0",
                " --connlimit-above 1 --connlimit-mask 0 --connlimit-saddr",
                " #conn src/0 > 1",
            ),
        ];
        for (opts, s, l) in cases {
            let args = format!("-m connlimit {opts}");
            assert_eq!(save(&args), s, "{args}");
            assert_eq!(list(&args, false), l, "{args}");
            assert_eq!(list(&args, true), l, "{args} -n");
        }
    }

    #[test]
    fn forms_v6() {
        let at = |args: &str| {
            (
                save_in(Family::Ipv6, TableKind::Filter, "INPUT", args),
                list_in(Family::Ipv6, TableKind::Filter, "INPUT", args, true),
            )
        };
        assert_eq!(
            at("-m connlimit --connlimit-above 10"),
            (
                " --connlimit-above 10 --connlimit-mask 128 --connlimit-saddr".into(),
                " #conn src/128 > 10".into()
            )
        );
        assert_eq!(
            at("-m connlimit --connlimit-upto 1 --connlimit-mask ffff:ffff:ff00::"),
            (
                " --connlimit-upto 1 --connlimit-mask 40 --connlimit-saddr".into(),
                " #conn src/40 <= 1".into()
            )
        );
        assert_eq!(
            err_in(
                Family::Ipv6,
                TableKind::Filter,
                "INPUT",
                "-m connlimit --connlimit-upto 1 --connlimit-mask 129"
            ),
            "connlimit: bad value for option \"--connlimit-mask\", neither a valid network mask nor valid CIDR (0-128).\n"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m connlimit",
                "You must specify \"--connlimit-above\" or \"--connlimit-upto\".",
            ),
            (
                "-m connlimit --connlimit-above 10 --connlimit-saddr --connlimit-daddr",
                "connlimit: option \"--connlimit-saddr\" cannot be used together with \"--connlimit-daddr\".\n",
            ),
            (
                "-m connlimit --connlimit-above 10 --connlimit-upto 3",
                "connlimit: option \"--connlimit-upto\" cannot be used together with \"--connlimit-above\".\n",
            ),
            (
                "-m connlimit --connlimit-upto 4294967296",
                "connlimit: bad value for option \"--connlimit-upto\", or out of range (0-4294967295).\n",
            ),
            (
                "-m connlimit --connlimit-upto 1 --connlimit-mask 1.2.3.4.5",
                "connlimit: bad value for option \"--connlimit-mask\", neither a valid network mask nor valid CIDR (0-32).\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }

    #[test]
    fn mask_bits() {
        let cases: &[(&[u8], u32)] = &[
            (&[255, 255, 255, 255], 32),
            (&[255, 255, 255, 0], 24),
            (&[0, 0, 0, 0], 0),
            (&[255, 0, 255, 0], 8),
            (&[255, 255, 255, 254], 31),
        ];
        for (m, bits) in cases {
            assert_eq!(count_bits(m), *bits, "{m:?}");
        }
    }
}
