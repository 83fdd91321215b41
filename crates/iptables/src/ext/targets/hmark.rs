//! `-j HMARK`: set the packet mark from a hash of (masked) addresses,
//! ports/SPI and protocol (iptables' libxt_HMARK). Usable everywhere.

use super::xtypes::{einval, parse_plen, unsaveable};
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// Option ids; for all but `TUPLE` they are also the bit numbers of
/// `xt_hmark_info.flags` (XT_HMARK_*).
pub const SADDR_MASK: u8 = 0;
pub const DADDR_MASK: u8 = 1;
pub const SPI: u8 = 2;
pub const SPI_MASK: u8 = 3;
pub const SPORT: u8 = 4;
pub const DPORT: u8 = 5;
pub const SPORT_MASK: u8 = 6;
pub const DPORT_MASK: u8 = 7;
pub const PROTO_MASK: u8 = 8;
pub const RND: u8 = 9;
pub const MODULUS: u8 = 10;
pub const OFFSET: u8 = 11;
pub const CT: u8 = 12;
const TUPLE: u8 = 13;

const fn bit(id: u8) -> u32 {
    1 << id
}

/// What counts as "a tuple was given" (HMARK_OPT_PKT_MASK, plus ct).
const PKT_MASK: u32 = bit(SADDR_MASK)
    | bit(DADDR_MASK)
    | bit(SPI_MASK)
    | bit(SPORT_MASK)
    | bit(DPORT_MASK)
    | bit(PROTO_MASK)
    | bit(SPORT)
    | bit(DPORT)
    | bit(SPI);

/// `xt_hmark_info`. The port fields are the kernel's unions kept as their
/// four bytes in network order: ports in bytes 0..2 (source) and 2..4
/// (destination), or the SPI in all four. Masks of IPv4 rules use the first
/// 4 bytes (the rest zero). Fields whose flag is not set are zero.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hmark {
    pub flags: u32,
    pub src_mask: [u8; 16],
    pub dst_mask: [u8; 16],
    pub port_mask: [u8; 4],
    pub port_set: [u8; 4],
    pub proto_mask: u16,
    pub hashrnd: u32,
    pub hmodulus: u32,
    pub hoffset: u32,
}

/// The `--hmark-tuple` words, in the order iptables tries them (each word
/// may be abbreviated, case-insensitively).
const TUPLE_WORDS: &[(&str, u8)] = &[
    ("ct", CT),
    ("src", SADDR_MASK),
    ("dst", DADDR_MASK),
    ("sport", SPORT_MASK),
    ("dport", DPORT_MASK),
    ("proto", PROTO_MASK),
    ("spi", SPI_MASK),
];

/// All ones for the family's address width (IPv4: the first 4 bytes).
fn full_mask(v6: bool) -> [u8; 16] {
    let mut m = [0u8; 16];
    m[..if v6 { 16 } else { 4 }].fill(0xff);
    m
}

/// Prefix length of a mask for the save form (-1 for a mask with holes).
fn cidr(mask: &[u8; 16], v6: bool) -> i64 {
    let n = if v6 { 16 } else { 4 };
    opt::mask_prefix(&mask[..n]).map_or(-1, i64::from)
}

fn u16_at(b: &[u8; 4], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

impl Hmark {
    fn has(&self, id: u8) -> bool {
        self.flags & bit(id) != 0
    }

    /// One `--hmark-tuple` word: everything in the hash for that field.
    fn tuple_word(&mut self, id: u8, v6: bool) {
        match id {
            SADDR_MASK => self.src_mask = full_mask(v6),
            DADDR_MASK => self.dst_mask = full_mask(v6),
            SPORT_MASK => self.port_mask[..2].fill(0xff),
            DPORT_MASK => self.port_mask[2..].fill(0xff),
            PROTO_MASK => self.proto_mask = 0xffff,
            SPI_MASK => self.port_mask = [0xff; 4],
            _ => {}
        }
        self.flags |= bit(id);
    }

    fn parse_tuple(&mut self, arg: &str, v6: bool) -> Result<()> {
        let mut rest = arg;
        loop {
            let (word, next) = match rest.split_once(',') {
                Some((w, n)) => (w, Some(n)),
                None => (rest, None),
            };
            if next.is_none() && word.is_empty() {
                return Err(Error::param(
                    "\"--hmark-tuple\" requires a list of types with no spaces, e.g. src,dst,sport,dport,proto",
                ));
            }
            let id = TUPLE_WORDS
                .iter()
                .find(|(name, _)| {
                    !word.is_empty()
                        && word.len() <= name.len()
                        && name.as_bytes()[..word.len()].eq_ignore_ascii_case(word.as_bytes())
                })
                .map(|e| e.1)
                .ok_or_else(|| Error::param(format!("Bad type \"{rest}\"")))?;
            self.tuple_word(id, v6);
            match next {
                Some(n) => rest = n,
                None => return Ok(()),
            }
        }
    }

    /// The `-L` form of a prefix: IPv4 prints the length as unsigned;
    /// IPv6 prints xtables_ip6mask_to_numeric without its '/' (nothing for
    /// 128, the mask itself when it has holes).
    fn list_prefix(out: &mut String, mask: &[u8; 16], v6: bool) {
        if !v6 {
            let _ = write!(out, "{} ", cidr(mask, v6) as u32);
            return;
        }
        match opt::mask_prefix(mask) {
            Some(128) => {}
            Some(b) => {
                let _ = write!(out, "{b}");
            }
            None => opt::fmt_v6(out, mask),
        }
        out.push(' ');
    }

    /// Port, SPI, protocol and seed pieces shared by both printers.
    fn port_pieces(&self) -> Vec<(&'static str, String, String)> {
        let (pm, ps) = (&self.port_mask, &self.port_set);
        let mut v = Vec::new();
        if self.has(SPORT_MASK) {
            let x = u16_at(pm, 0);
            v.push(("sport-mask", format!("{x:#06x}"), format!("{x:#x}")));
        }
        if self.has(DPORT_MASK) {
            let x = u16_at(pm, 2);
            v.push(("dport-mask", format!("{x:#06x}"), format!("{x:#x}")));
        }
        if self.has(SPI_MASK) {
            let x = u32::from_be_bytes(*pm);
            v.push(("spi-mask", format!("{x:#010x}"), format!("{x:#x}")));
        }
        if self.has(SPORT) {
            let x = u16_at(ps, 0);
            v.push(("sport", format!("{x:#06x}"), format!("{x:#x}")));
        }
        if self.has(DPORT) {
            let x = u16_at(ps, 2);
            v.push(("dport", format!("{x:#06x}"), format!("{x:#x}")));
        }
        if self.has(SPI) {
            let x = u32::from_be_bytes(*ps);
            v.push(("spi", format!("{x:#010x}"), format!("{x:#x}")));
        }
        if self.has(PROTO_MASK) {
            let x = self.proto_mask;
            v.push(("proto-mask", format!("{x:#04x}"), format!("{x:#x}")));
        }
        if self.has(RND) {
            let x = self.hashrnd;
            v.push(("rnd", format!("{x:#010x}"), format!("{x:#x}")));
        }
        v
    }
}

impl Ext for Hmark {
    const NAME: &'static str = "HMARK";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("hmark-tuple", TUPLE, Arg::Required),
        OptDef::new("hmark-src-prefix", SADDR_MASK, Arg::Required),
        OptDef::new("hmark-dst-prefix", DADDR_MASK, Arg::Required),
        OptDef::new("hmark-sport-mask", SPORT_MASK, Arg::Required),
        OptDef::new("hmark-dport-mask", DPORT_MASK, Arg::Required),
        OptDef::new("hmark-spi-mask", SPI_MASK, Arg::Required),
        OptDef::new("hmark-sport", SPORT, Arg::Required),
        OptDef::new("hmark-dport", DPORT, Arg::Required),
        OptDef::new("hmark-spi", SPI, Arg::Required),
        OptDef::new("hmark-proto-mask", PROTO_MASK, Arg::Required),
        OptDef::new("hmark-rnd", RND, Arg::Required),
        OptDef::new("hmark-mod", MODULUS, Arg::Required).mand(),
        OptDef::new("hmark-offset", OFFSET, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Hmark {
            flags: 0,
            src_mask: [0; 16],
            dst_mask: [0; 16],
            port_mask: [0; 4],
            port_set: [0; 4],
            proto_mask: 0,
            hashrnd: 0,
            hmodulus: 0,
            hoffset: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let id = c.opt.id;
        // A tuple word marks its option as given, so the option itself may
        // not follow (xtables' "can only be used once").
        if id != TUPLE && self.has(id) {
            return Err(Error::param(format!(
                "HMARK: option \"--{}\" can only be used once.\n",
                c.opt.name
            )));
        }
        let v6 = c.ctx.is_v6();
        let u16_arg = |c: &Call| c.uint(0, 0xffff).map(|v| (v as u16).to_be_bytes());
        let u32_arg = |c: &Call| c.uint(0, u32::MAX as u64).map(|v| v as u32);
        match id {
            TUPLE => return self.parse_tuple(c.arg, v6),
            SADDR_MASK => self.src_mask = parse_plen(c, c.arg, v6)?.0,
            DADDR_MASK => self.dst_mask = parse_plen(c, c.arg, v6)?.0,
            SPORT_MASK => self.port_mask[..2].copy_from_slice(&u16_arg(c)?),
            DPORT_MASK => self.port_mask[2..].copy_from_slice(&u16_arg(c)?),
            SPI_MASK => self.port_mask = u32_arg(c)?.to_be_bytes(),
            SPORT => self.port_set[..2].copy_from_slice(&u16_arg(c)?),
            DPORT => self.port_set[2..].copy_from_slice(&u16_arg(c)?),
            SPI => self.port_set = u32_arg(c)?.to_be_bytes(),
            PROTO_MASK => self.proto_mask = c.uint(0, 0xffff)? as u16,
            RND => self.hashrnd = u32_arg(c)?,
            MODULUS => self.hmodulus = c.uint(1, u32::MAX as u64)? as u32,
            _ => self.hoffset = u32_arg(c)?,
        }
        self.flags |= bit(id);
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        let given = seen | self.flags;
        if given & bit(MODULUS) == 0 {
            return Err(Error::param("--hmark-mod is mandatory"));
        }
        if given & bit(RND) == 0 {
            return Err(Error::param("--hmark-rnd is mandatory"));
        }
        if given & bit(SPI_MASK) != 0 && given & (bit(SPORT_MASK) | bit(DPORT_MASK)) != 0 {
            return Err(Error::param(
                "you cannot use --hmark-spi-mask and --hmark-?port-mask,at the same time",
            ));
        }
        if given & (PKT_MASK | bit(CT)) == 0 {
            return Err(Error::param("you have to specify --hmark-tuple at least"));
        }
        if self.has(SPI) && self.flags & (bit(SPORT) | bit(DPORT)) != 0 {
            return Err(einval("HMARK", "spi-set and port-set can't be combined"));
        }
        // iptables saves a mask with holes as prefix length -1.
        let v6 = ctx.is_v6();
        for (id, name, mask) in [
            (SADDR_MASK, "hmark-src-prefix", &self.src_mask),
            (DADDR_MASK, "hmark-dst-prefix", &self.dst_mask),
        ] {
            if self.has(id) && cidr(mask, v6) < 0 {
                return Err(unsaveable("HMARK", name, "-1"));
            }
        }
        Ok(())
    }

    fn save(&self, ctx: &PrintCtx, out: &mut String) {
        let v6 = ctx.is_v6();
        if self.has(SADDR_MASK) {
            let _ = write!(out, " --hmark-src-prefix {}", cidr(&self.src_mask, v6));
        }
        if self.has(DADDR_MASK) {
            let _ = write!(out, " --hmark-dst-prefix {}", cidr(&self.dst_mask, v6));
        }
        for (name, text, _) in self.port_pieces() {
            let _ = write!(out, " --hmark-{name} {text}");
        }
        if self.has(MODULUS) {
            let _ = write!(out, " --hmark-mod {}", self.hmodulus);
        }
        if self.has(OFFSET) {
            let _ = write!(out, " --hmark-offset {}", self.hoffset);
        }
        if self.has(CT) {
            out.push_str(" --hmark-tuple ct");
        }
    }

    // Every piece is followed by a space, as iptables prints it.
    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        let v6 = ctx.is_v6();
        out.push_str(" HMARK ");
        if self.has(MODULUS) {
            let _ = write!(out, "mod {} ", self.hmodulus);
        }
        if self.has(OFFSET) {
            let _ = write!(out, "+ {:#x} ", self.hoffset);
        }
        if self.has(CT) {
            out.push_str("ct, ");
        }
        if self.has(SADDR_MASK) {
            out.push_str("src-prefix ");
            Self::list_prefix(out, &self.src_mask, v6);
        }
        if self.has(DADDR_MASK) {
            out.push_str("dst-prefix ");
            Self::list_prefix(out, &self.dst_mask, v6);
        }
        for (name, _, text) in self.port_pieces() {
            let _ = write!(out, "{name} {text} ");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    const TAIL: &str = " --hmark-rnd 1 --hmark-mod 2";

    #[test]
    fn forms() {
        // family, rule, save, -L
        let cases: &[(Family, &str, &str, &str)] = &[
            (
                Family::Ipv4,
                "-j HMARK --hmark-src-prefix 32 --hmark-rnd 0x00000004 --hmark-mod 42",
                " --hmark-src-prefix 32 --hmark-rnd 0x00000004 --hmark-mod 42",
                " HMARK mod 42 src-prefix 32 rnd 0x4 ",
            ),
            (
                Family::Ipv6,
                "-j HMARK --hmark-src-prefix 1 --hmark-dst-prefix 2 --hmark-sport-mask 0x0003 --hmark-dport-mask 0x0004 --hmark-proto-mask 0x05 --hmark-rnd 0x00000004 --hmark-mod 42 --hmark-offset 1 --hmark-tuple ct",
                " --hmark-src-prefix 1 --hmark-dst-prefix 2 --hmark-sport-mask 0x0003 --hmark-dport-mask 0x0004 --hmark-proto-mask 0x05 --hmark-rnd 0x00000004 --hmark-mod 42 --hmark-offset 1 --hmark-tuple ct",
                " HMARK mod 42 + 0x1 ct, src-prefix 1 dst-prefix 2 sport-mask 0x3 dport-mask 0x4 proto-mask 0x5 rnd 0x4 ",
            ),
            (
                Family::Ipv4,
                "-j HMARK --hmark-sport 0x1234 --hmark-dport 5 --hmark-spi-mask 7 --hmark-mod 2 --hmark-rnd 3",
                " --hmark-spi-mask 0x00000007 --hmark-sport 0x1234 --hmark-dport 0x0005 --hmark-rnd 0x00000003 --hmark-mod 2",
                " HMARK mod 2 spi-mask 0x7 sport 0x1234 dport 0x5 rnd 0x3 ",
            ),
            // Tuple words: abbreviated, any case; "src" is a full prefix.
            (
                Family::Ipv4,
                "-j HMARK --hmark-src-prefix 16 --hmark-tuple Sr,C,spi --hmark-rnd 1 --hmark-mod 2",
                " --hmark-src-prefix 32 --hmark-spi-mask 0xffffffff --hmark-rnd 0x00000001 --hmark-mod 2 --hmark-tuple ct",
                " HMARK mod 2 ct, src-prefix 32 spi-mask 0xffffffff rnd 0x1 ",
            ),
            (
                Family::Ipv4,
                "-j HMARK --hmark-tuple sport,dport,proto,dst --hmark-rnd 1 --hmark-mod 2",
                " --hmark-dst-prefix 32 --hmark-sport-mask 0xffff --hmark-dport-mask 0xffff --hmark-proto-mask 0xffff --hmark-rnd 0x00000001 --hmark-mod 2",
                " HMARK mod 2 dst-prefix 32 sport-mask 0xffff dport-mask 0xffff proto-mask 0xffff rnd 0x1 ",
            ),
            // IPv6 -L prints nothing for /128 and the mask for one with holes.
            (
                Family::Ipv6,
                "-j HMARK --hmark-tuple src,dst --hmark-rnd 1 --hmark-mod 2",
                " --hmark-src-prefix 128 --hmark-dst-prefix 128 --hmark-rnd 0x00000001 --hmark-mod 2",
                " HMARK mod 2 src-prefix  dst-prefix  rnd 0x1 ",
            ),
            (
                Family::Ipv4,
                "-j HMARK --hmark-src-prefix 255.255.255.0 --hmark-dst-prefix 0x10 --hmark-rnd 1 --hmark-mod 2",
                " --hmark-src-prefix 24 --hmark-dst-prefix 16 --hmark-rnd 0x00000001 --hmark-mod 2",
                " HMARK mod 2 src-prefix 24 dst-prefix 16 rnd 0x1 ",
            ),
        ];
        for (fam, rule, save, list) in cases {
            let got = ok_in(*fam, TableKind::Filter, "INPUT", rule);
            assert_eq!(got.save, *save, "{rule}");
            assert_eq!(got.list, *list, "{rule}");
            assert_eq!(got.list_numeric, *list, "{rule}");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(String, &str)] = &[
            ("-j HMARK".into(), "--hmark-mod is mandatory"),
            (
                "-j HMARK --hmark-mod 2 --hmark-offset 3".into(),
                "--hmark-rnd is mandatory",
            ),
            (
                "-j HMARK --hmark-mod 2 --hmark-rnd 3".into(),
                "you have to specify --hmark-tuple at least",
            ),
            (
                format!("-j HMARK --hmark-tuple sport --hmark-spi-mask 4{TAIL}"),
                "you cannot use --hmark-spi-mask and --hmark-?port-mask,at the same time",
            ),
            (
                format!("-j HMARK --hmark-tuple src --hmark-src-prefix 16{TAIL}"),
                "HMARK: option \"--hmark-src-prefix\" can only be used once.\n",
            ),
            (
                format!("-j HMARK --hmark-tuple src,{TAIL}"),
                "\"--hmark-tuple\" requires a list of types with no spaces, e.g. src,dst,sport,dport,proto",
            ),
            (
                format!("-j HMARK --hmark-tuple foo,src{TAIL}"),
                "Bad type \"foo,src\"",
            ),
            (
                format!("-j HMARK --hmark-tuple ,src{TAIL}"),
                "Bad type \",src\"",
            ),
            (
                format!("-j HMARK --hmark-tuple srcx{TAIL}"),
                "Bad type \"srcx\"",
            ),
            (
                format!("-j HMARK --hmark-src-prefix 1.2.3.4.5{TAIL}"),
                "HMARK: bad value for option \"--hmark-src-prefix\", neither a valid network mask nor valid CIDR (0-32).\n",
            ),
            (
                "-j HMARK --hmark-mod 0 --hmark-rnd 3".into(),
                "HMARK: bad value for option \"--hmark-mod\", or out of range (1-4294967295).\n",
            ),
            (
                format!("-j HMARK --hmark-sport-mask 0x10000{TAIL}"),
                "HMARK: bad value for option \"--hmark-sport-mask\", or out of range (0-65535).\n",
            ),
            (
                format!("-j HMARK --hmark-src-prefix 255.0.255.0{TAIL}"),
                "HMARK: \"--hmark-src-prefix -1\" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
            (
                format!("-j HMARK --hmark-spi 1 --hmark-sport 2{TAIL}"),
                "Invalid argument: HMARK target: spi-set and port-set can't be combined.",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, TableKind::Mangle, "FORWARD", rule),
                *want,
                "{rule}"
            );
        }
    }
}
