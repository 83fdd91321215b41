//! The key a run's rules differ in: one field (`-s`, `-d`, `--dport`, `-i`)
//! or a tuple of two (`-d` + `--dport`, kube-proxy's service dispatch;
//! `-s` + `--dport`; `-s` + `-d`), exact values; or one field's range
//! (`-s`/`-d` prefixes, `--dport LO:HI`) in an interval set; or the list
//! of a `-m multiport --dports` (one key per port: the only kind whose
//! member is several elements, see [`KeyKind::keys`]).
//!
//! Kernel form: a single field is loaded into register 1 and looked up with
//! its own length (2 bytes for a port); a tuple loads each field into
//! consecutive 4-byte registers, each padded to a multiple of 4 bytes, and
//! the set's key is their concatenation (nftables' concatenated data type:
//! the field types packed 6 bits apart).

use iptables::ext::matches::multiport::DESTINATION;
use iptables::ext::Match;
use iptables::rule::{inv, Addr, Iface};
use iptables::Rule;
use nft::expr::{base, meta, reg};
use nft::Expr;
use ruleset::Family;

/// What a run's rules differ in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// `-s ADDR` with a full mask.
    Src,
    /// `-d ADDR` with a full mask.
    Dst,
    /// `--dport P` of the rule's `tcp` or `udp` match (one port).
    Dport,
    /// `-i NAME` (no `+` wildcard).
    Iif,
    /// `-s ADDR` and `--dport P`, both as above.
    SrcDport,
    /// `-d ADDR` and `--dport P` (a service's address and port).
    DstDport,
    /// `-s ADDR` and `-d ADDR`.
    SrcDst,
    /// `-s NET/PREFIX` (any prefix length; an interval set).
    SrcNet,
    /// `-d NET/PREFIX` (any prefix length; an interval set).
    DstNet,
    /// `--dport LO:HI` of the rule's `tcp` or `udp` match (an interval set).
    DportRange,
    /// The ports of the rule's one `-m multiport --dports P,Q,…` (single
    /// ports only, not negated): a member is one element per port, each
    /// carrying the member's id; its counter is their sum.
    Dports,
    /// kube-proxy's endpoint selection: `-m statistic --mode random
    /// --probability 1/n` (key n-1) down to the unconditional last rule
    /// (key 0), looked up with `numgen random mod k` (see
    /// [`super::numgen`]). Not in [`KeyKind::ALL`]: a group is found whole.
    Numgen,
}

/// One field of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Src,
    Dst,
    Dport,
    Iif,
    SrcNet,
    DstNet,
    DportRange,
}

/// `NFT_NG_RANDOM`.
pub const NG_RANDOM: u32 = 1;

/// Bits between the field types of a concatenated data type (nftables'
/// `TYPE_BITS`).
const TYPE_BITS: u32 = 6;

impl Field {
    /// nftables' data type id and length in bytes.
    fn type_len(self, family: Family) -> (u32, u32) {
        match (self, family) {
            (Field::Src | Field::Dst | Field::SrcNet | Field::DstNet, Family::Ipv4) => (7, 4),
            (Field::Src | Field::Dst | Field::SrcNet | Field::DstNet, Family::Ipv6) => (8, 16),
            (Field::Dport | Field::DportRange, _) => (13, 2),
            (Field::Iif, _) => (41, 16),
        }
    }

    /// The rule's value of this field when it can be a key (present, not
    /// negated, exact), big-endian as the packet carries it; for a range
    /// field, its first value.
    fn value(self, r: &Rule, family: Family) -> Option<Vec<u8>> {
        if let Some((lo, _)) = self.range(r, family) {
            return Some(lo);
        }
        let n = if family == Family::Ipv6 { 16 } else { 4 };
        let full = |a: &Addr| a.mask[..n].iter().all(|&b| b == 0xff);
        match self {
            Field::Src => (!r.inverted(inv::SRC) && full(&r.src)).then(|| r.src.addr[..n].to_vec()),
            Field::Dst => (!r.inverted(inv::DST) && full(&r.dst)).then(|| r.dst.addr[..n].to_vec()),
            Field::Iif => {
                let name = r.iniface.as_str();
                if r.inverted(inv::IN) || name.is_empty() || name.ends_with('+') {
                    return None;
                }
                let mut k = vec![0u8; 16];
                k[..name.len()].copy_from_slice(name.as_bytes());
                Some(k)
            }
            Field::Dport => dport(r).map(|(_, d)| d.to_be_bytes().to_vec()),
            Field::SrcNet | Field::DstNet | Field::DportRange => None,
        }
    }

    /// A range field's first and last value (inclusive, big-endian) when
    /// the rule has one that can be a key: a prefix (contiguous mask, not
    /// /0), a port range (not the whole of 0:65535), not negated.
    fn range(self, r: &Rule, family: Family) -> Option<(Vec<u8>, Vec<u8>)> {
        let n = if family == Family::Ipv6 { 16 } else { 4 };
        let net = |a: &Addr, inverted: bool| {
            let mask = &a.mask[..n];
            let bits: u32 = mask.iter().map(|b| b.count_ones()).sum();
            let prefix = mask
                .iter()
                .enumerate()
                .all(|(i, b)| *b == prefix_byte(bits, i));
            if inverted || bits == 0 || !prefix {
                return None;
            }
            let lo: Vec<u8> = (0..n).map(|i| a.addr[i] & mask[i]).collect();
            let hi: Vec<u8> = (0..n).map(|i| a.addr[i] | !mask[i]).collect();
            Some((lo, hi))
        };
        match self {
            Field::SrcNet => net(&r.src, r.inverted(inv::SRC)),
            Field::DstNet => net(&r.dst, r.inverted(inv::DST)),
            Field::DportRange => dport_range(r)
                .filter(|(_, p)| *p != (0, 65535))
                .map(|(_, (lo, hi))| (lo.to_be_bytes().to_vec(), hi.to_be_bytes().to_vec())),
            _ => None,
        }
    }

    /// Remove the field from `shape` (which has it: [`Field::value`]).
    fn clear(self, shape: &mut Rule) {
        match self {
            Field::Src | Field::SrcNet => shape.src = Addr::default(),
            Field::Dst | Field::DstNet => shape.dst = Addr::default(),
            Field::Iif => shape.iniface = Iface::default(),
            Field::Dport | Field::DportRange => {
                if let Some((i, _)) = dport_range(shape) {
                    match &mut shape.matches[i] {
                        Match::Tcp(t) => t.dpts = (0, 65535),
                        Match::Udp(u) => u.dpts = (0, 65535),
                        _ => unreachable!("dport_range() found a tcp or udp match"),
                    }
                }
            }
        }
    }

    /// The expression loading the packet's field into register `dreg`.
    fn load(self, family: Family, dreg: u32) -> Expr {
        let v6 = family == Family::Ipv6;
        let payload = |base, offset, len| Expr::Payload {
            dreg,
            base,
            offset,
            len,
        };
        match self {
            Field::Src | Field::SrcNet => payload(
                base::NETWORK,
                if v6 { 8 } else { 12 },
                if v6 { 16 } else { 4 },
            ),
            Field::Dst | Field::DstNet => payload(
                base::NETWORK,
                if v6 { 24 } else { 16 },
                if v6 { 16 } else { 4 },
            ),
            Field::Dport | Field::DportRange => payload(base::TRANSPORT, 2, 2),
            Field::Iif => Expr::Meta {
                key: meta::IIFNAME,
                dreg,
            },
        }
    }
}

/// A 4-byte register as the kernel names it in a dump: one that starts a
/// 16-byte register is that register (`NFT_REG32_00` is `NFT_REG_1`), so
/// what we write reads back the same.
fn canonical(reg32: u32) -> u32 {
    let i = reg32 - reg::R32_00;
    if i % 4 == 0 {
        reg::R1 + i / 4
    } else {
        reg32
    }
}

/// The mask byte `i` of a /`bits` prefix.
fn prefix_byte(bits: u32, i: usize) -> u8 {
    let left = bits.saturating_sub(8 * i as u32).min(8);
    (0xff00u16 >> left) as u8
}

/// The one `--dport P` (single port, not negated) among the rule's `tcp`
/// and `udp` matches: its index and the port. None when there is none, when
/// it is a range, or when there is more than one such match.
fn dport(r: &Rule) -> Option<(usize, u16)> {
    dport_range(r)
        .filter(|(_, (lo, hi))| lo == hi)
        .map(|(i, (lo, _))| (i, lo))
}

/// The one `tcp` or `udp` match of the rule with a non-negated destination
/// port range (any, 0:65535 included): its index and the range. None when
/// there is none or more than one such match.
fn dport_range(r: &Rule) -> Option<(usize, (u16, u16))> {
    let mut found = None;
    for (i, m) in r.matches.iter().enumerate() {
        let d = match m {
            Match::Tcp(t) if !t.inv_dport => t.dpts,
            Match::Udp(u) if !u.inv_dport => u.dpts,
            _ => continue,
        };
        if found.is_some() {
            return None;
        }
        found = Some((i, d));
    }
    found
}

/// The ports of the rule's one `-m multiport --dports` of single ports
/// (not negated), ascending without duplicates: its index and the ports.
/// None when there is none, more than one, or a range is listed.
pub(crate) fn mports(r: &Rule) -> Option<(usize, Vec<u16>)> {
    let mut found = None;
    for (i, m) in r.matches.iter().enumerate() {
        let Match::Multiport(mp) = m else { continue };
        if mp.kind != DESTINATION || mp.inv || found.is_some() {
            return None;
        }
        if mp.ports.iter().any(|(lo, hi)| lo != hi) {
            return None;
        }
        let mut v: Vec<u16> = mp.ports.iter().map(|p| p.0).collect();
        v.sort_unstable();
        v.dedup();
        found = Some((i, v));
    }
    found.filter(|(_, v)| !v.is_empty())
}

impl KeyKind {
    /// Every kind, single fields first: a run compiler that prefers the
    /// earlier kind among equally long runs keys on one field where one
    /// suffices.
    pub const ALL: [KeyKind; 11] = [
        KeyKind::Src,
        KeyKind::Dst,
        KeyKind::Dport,
        KeyKind::Iif,
        KeyKind::SrcDport,
        KeyKind::DstDport,
        KeyKind::SrcDst,
        KeyKind::SrcNet,
        KeyKind::DstNet,
        KeyKind::DportRange,
        KeyKind::Dports,
    ];

    fn fields(self) -> &'static [Field] {
        match self {
            KeyKind::Src => &[Field::Src],
            KeyKind::Dst => &[Field::Dst],
            KeyKind::Dport => &[Field::Dport],
            KeyKind::Iif => &[Field::Iif],
            KeyKind::SrcDport => &[Field::Src, Field::Dport],
            KeyKind::DstDport => &[Field::Dst, Field::Dport],
            KeyKind::SrcDst => &[Field::Src, Field::Dst],
            KeyKind::SrcNet => &[Field::SrcNet],
            KeyKind::DstNet => &[Field::DstNet],
            KeyKind::DportRange => &[Field::DportRange],
            // A port, as `Dport` loads and types it; its values come from
            // the multiport match ([`mports`]), not the field.
            KeyKind::Dports => &[Field::Dport],
            KeyKind::Numgen => &[],
        }
    }

    /// Whether the key is a range (an interval set: each member is a start
    /// element and, unless its range runs to the top, an end marker).
    pub fn is_interval(self) -> bool {
        matches!(
            self,
            KeyKind::SrcNet | KeyKind::DstNet | KeyKind::DportRange
        )
    }

    /// An interval key's range in the rule: first and last value
    /// (inclusive), or `None` (not an interval kind, or no such key).
    pub fn range(self, r: &Rule, family: Family) -> Option<(Vec<u8>, Vec<u8>)> {
        match self.fields() {
            [f] => f.range(r, family),
            _ => None,
        }
    }

    /// The end marker of an interval key: one past the range's last value,
    /// `None` when the range runs to the top of the key space (or the kind
    /// is exact).
    pub fn end_marker(self, r: &Rule, family: Family) -> Option<Vec<u8>> {
        let (_, mut hi) = self.range(r, family)?;
        for b in hi.iter_mut().rev() {
            let (v, carry) = b.overflowing_add(1);
            *b = v;
            if !carry {
                return Some(hi);
            }
        }
        None
    }

    /// Whether the key concatenates fields.
    pub fn is_tuple(self) -> bool {
        self.fields().len() > 1
    }

    /// nftables' data type id and key length in bytes (a tuple: the
    /// concatenated type, fields padded to 4 bytes each).
    pub fn key_type(self, family: Family) -> (u32, u32) {
        if self == KeyKind::Numgen {
            // nftables' integer type, numgen's 32-bit value.
            return (4, 4);
        }
        match self.fields() {
            [f] => f.type_len(family),
            fs => fs.iter().fold((0, 0), |(t, l), f| {
                let (ft, fl) = f.type_len(family);
                ((t << TYPE_BITS) | ft, l + fl.div_ceil(4) * 4)
            }),
        }
    }

    /// Whether the key loads a transport-header field (a port).
    pub fn loads_transport(self) -> bool {
        self.fields()
            .iter()
            .any(|f| matches!(f, Field::Dport | Field::DportRange))
    }

    /// The expressions that load the packet's key into register 1 (a
    /// tuple: its fields into the 4-byte registers from there on; numgen:
    /// a draw modulo `len`, the run's member count).
    pub(crate) fn load(self, family: Family, len: usize) -> Vec<Expr> {
        if self == KeyKind::Numgen {
            return vec![Expr::Numgen {
                dreg: reg::R1,
                modulus: len as u32,
                ty: NG_RANDOM,
                offset: None,
            }];
        }
        match self.fields() {
            [f] => vec![f.load(family, reg::R1)],
            fs => {
                let mut at = reg::R32_00;
                fs.iter()
                    .map(|f| {
                        let e = f.load(family, canonical(at));
                        at += f.type_len(family).1.div_ceil(4);
                        e
                    })
                    .collect()
            }
        }
    }

    /// The rule's key for this kind (what [`KeyKind::split`] returns
    /// first), without building its shape. Not for [`KeyKind::Numgen`].
    pub(crate) fn key(self, r: &Rule, family: Family) -> Option<Vec<u8>> {
        if self == KeyKind::Dports {
            return mports(r).map(|(_, v)| v[0].to_be_bytes().to_vec());
        }
        match self.fields() {
            [f] => f.value(r, family),
            fs => {
                let mut key = Vec::with_capacity(self.key_type(family).1 as usize);
                for f in fs {
                    let v = f.value(r, family)?;
                    key.extend_from_slice(&v);
                    key.resize(key.len().div_ceil(4) * 4, 0);
                }
                Some(key)
            }
        }
    }

    /// Every key of the rule for this kind, ascending: one, except for
    /// [`KeyKind::Dports`] (a port each). `None` as [`KeyKind::key`].
    pub fn keys(self, r: &Rule, family: Family) -> Option<Vec<Vec<u8>>> {
        if self == KeyKind::Dports {
            let (_, v) = mports(r)?;
            return Some(v.iter().map(|p| p.to_be_bytes().to_vec()).collect());
        }
        if self == KeyKind::Numgen {
            return self.split(r, family).map(|(k, _)| vec![k]);
        }
        self.key(r, family).map(|k| vec![k])
    }

    /// Which parts of a rule this kind's key takes out of its shape
    /// ([`super::extent::SRC`] …): two rules have one shape for this kind
    /// iff they differ in no other part (see [`super::extent::diff`]).
    pub(crate) fn parts(self) -> u8 {
        use super::extent::{DPORT, DST, IIF, MPORTS, SRC};
        if self == KeyKind::Dports {
            return MPORTS;
        }
        self.fields()
            .iter()
            .map(|f| match f {
                Field::Src | Field::SrcNet => SRC,
                Field::Dst | Field::DstNet => DST,
                Field::Iif => IIF,
                Field::Dport | Field::DportRange => DPORT,
            })
            .fold(0, |a, b| a | b)
    }

    /// The rule's key for this kind and the rule without it and without
    /// its comment (its shape: each member's comment lives in its
    /// element's userdata), or `None` when the rule has no usable key of
    /// this kind. O(matches); clones the rule only when it has the key.
    pub fn split(self, r: &Rule, family: Family) -> Option<(Vec<u8>, Rule)> {
        if self == KeyKind::Numgen {
            let k = super::numgen::member_key(r)?;
            return Some((super::numgen::key_bytes(k), super::numgen::shape_of(r)));
        }
        let key = self.key(r, family)?;
        let mut shape = r.clone();
        if self == KeyKind::Dports {
            let (i, _) = mports(r)?;
            shape.matches.remove(i);
        } else {
            for f in self.fields() {
                f.clear(&mut shape);
            }
        }
        shape.matches.retain(|m| !matches!(m, Match::Comment(_)));
        Some((key, shape))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables::parse::{parse, ParseOpts};
    use ruleset::TableKind;

    fn rule(line: &str, family: Family) -> Rule {
        let words: Vec<&str> = line.split(' ').collect();
        let o = ParseOpts {
            family,
            restore: true,
            table: Some(TableKind::Filter),
            prog: "t",
        };
        parse(&words, o).expect(line).rules.remove(0)
    }

    #[test]
    fn keys_types_and_loads() {
        let v4 = Family::Ipv4;
        let r = rule(
            "-A X -s 10.0.0.1/32 -d 10.9.9.9/32 -p tcp -m tcp --dport 443 -m comment --comment svc -j ACCEPT",
            v4,
        );
        // (kind, key bytes, (type, len), registers loaded)
        type Case = (KeyKind, &'static [u8], (u32, u32), &'static [u32]);
        let cases: &[Case] = &[
            (KeyKind::Src, &[10, 0, 0, 1], (7, 4), &[reg::R1]),
            (KeyKind::Dport, &[1, 187], (13, 2), &[reg::R1]),
            (
                KeyKind::DstDport,
                &[10, 9, 9, 9, 1, 187, 0, 0],
                (7 << 6 | 13, 8),
                &[1, 9],
            ),
            (
                KeyKind::SrcDport,
                &[10, 0, 0, 1, 1, 187, 0, 0],
                (7 << 6 | 13, 8),
                &[1, 9],
            ),
            (
                KeyKind::SrcDst,
                &[10, 0, 0, 1, 10, 9, 9, 9],
                (7 << 6 | 7, 8),
                &[1, 9],
            ),
        ];
        for (kind, key, tl, regs) in cases {
            let (k, shape) = kind.split(&r, v4).expect("has the key");
            assert_eq!(k, *key, "{kind:?}");
            assert_eq!(kind.key_type(v4), *tl, "{kind:?}");
            let loaded: Vec<u32> = kind
                .load(v4, 1)
                .iter()
                .map(|e| match e {
                    Expr::Payload { dreg, .. } | Expr::Meta { dreg, .. } => *dreg,
                    _ => panic!("{e:?}"),
                })
                .collect();
            assert_eq!(loaded, *regs, "{kind:?}");
            assert!(
                !shape.matches.iter().any(|m| matches!(m, Match::Comment(_))),
                "{kind:?}: the comment stays with the member"
            );
            assert_eq!(kind.split(&shape, v4), None, "{kind:?}: key removed");
        }
        // IPv6 address + port: 16 + 4 bytes, the port in register 2 (the
        // 4-byte register 12).
        let r6 = rule(
            "-A X -d 2001:db8::1/128 -p udp -m udp --dport 53 -j DROP",
            Family::Ipv6,
        );
        let (k, _) = KeyKind::DstDport.split(&r6, Family::Ipv6).unwrap();
        assert_eq!(k.len(), 20);
        assert_eq!(&k[16..], &[0, 53, 0, 0]);
        assert_eq!(KeyKind::DstDport.key_type(Family::Ipv6), (8 << 6 | 13, 20));
        let regs: Vec<u32> = KeyKind::DstDport
            .load(Family::Ipv6, 1)
            .iter()
            .map(|e| match e {
                Expr::Payload { dreg, .. } => *dreg,
                _ => panic!("{e:?}"),
            })
            .collect();
        assert_eq!(regs, [1, 2]);
        // Not keys: a prefix, a negation, a port range, a wildcard.
        for line in [
            "-A X -s 10.0.0.0/24 -p tcp -m tcp --dport 1 -j ACCEPT",
            "-A X ! -s 10.0.0.1/32 -p tcp -m tcp --dport 1 -j ACCEPT",
        ] {
            assert_eq!(KeyKind::SrcDport.split(&rule(line, v4), v4), None, "{line}");
        }
        let range = rule(
            "-A X -s 10.0.0.1/32 -p tcp -m tcp --dport 1:2 -j ACCEPT",
            v4,
        );
        assert_eq!(KeyKind::SrcDport.split(&range, v4), None);
        assert!(KeyKind::Src.split(&range, v4).is_some());
        let wild = rule("-A X -i veth+ -j ACCEPT", v4);
        assert_eq!(KeyKind::Iif.split(&wild, v4), None);
    }

    #[test]
    fn interval_keys_ranges_and_end_markers() {
        let v4 = Family::Ipv4;
        // (kind, rule, (first, last), end marker)
        type Case = (
            KeyKind,
            &'static str,
            Option<(&'static [u8], &'static [u8])>,
            Option<&'static [u8]>,
        );
        let cases: &[Case] = &[
            (
                KeyKind::SrcNet,
                "-A X -s 10.1.2.3/24 -j DROP",
                Some((&[10, 1, 2, 0], &[10, 1, 2, 255])),
                Some(&[10, 1, 3, 0]),
            ),
            (
                KeyKind::SrcNet,
                "-A X -s 10.1.2.3/32 -j DROP",
                Some((&[10, 1, 2, 3], &[10, 1, 2, 3])),
                Some(&[10, 1, 2, 4]),
            ),
            (
                KeyKind::DstNet,
                "-A X -d 255.255.255.0/24 -j DROP",
                Some((&[255, 255, 255, 0], &[255; 4])),
                None,
            ),
            (
                KeyKind::DstNet,
                "-A X -d 10.0.0.0/9 -j DROP",
                Some((&[10, 0, 0, 0], &[10, 127, 255, 255])),
                Some(&[10, 128, 0, 0]),
            ),
            (
                KeyKind::SrcNet,
                "-A X -s 10.0.0.0/255.255.0.255 -j DROP",
                None,
                None,
            ),
            (KeyKind::SrcNet, "-A X ! -s 10.0.0.0/8 -j DROP", None, None),
            (KeyKind::SrcNet, "-A X -j DROP", None, None),
            (
                KeyKind::DportRange,
                "-A X -p udp -m udp --dport 53:60 -j DROP",
                Some((&[0, 53], &[0, 60])),
                Some(&[0, 61]),
            ),
            (
                KeyKind::DportRange,
                "-A X -p udp -m udp --dport 60000:65535 -j DROP",
                Some((&[234, 96], &[255, 255])),
                None,
            ),
            (
                KeyKind::DportRange,
                "-A X -p udp -m udp -j DROP",
                None,
                None,
            ),
            (KeyKind::Src, "-A X -s 10.1.2.3/32 -j DROP", None, None),
        ];
        for (kind, line, range, end) in cases {
            let r = rule(line, v4);
            let want = range.map(|(a, b)| (a.to_vec(), b.to_vec()));
            assert_eq!(kind.range(&r, v4), want, "{line}");
            assert_eq!(kind.end_marker(&r, v4).as_deref(), *end, "{line}");
            if let Some((lo, _)) = range {
                let (k, shape) = kind.split(&r, v4).expect(line);
                assert_eq!(k, lo.to_vec(), "{line}: the key is the first value");
                assert_eq!(kind.split(&shape, v4), None, "{line}: key removed");
            }
        }
        assert!(KeyKind::SrcNet.is_interval() && !KeyKind::SrcDport.is_interval());
    }
}
