//! The key a run's rules differ in: one field (`-s`, `-d`, `--dport`, `-i`)
//! or a tuple of two (`-d` + `--dport`, kube-proxy's service dispatch;
//! `-s` + `--dport`; `-s` + `-d`).
//!
//! Kernel form: a single field is loaded into register 1 and looked up with
//! its own length (2 bytes for a port); a tuple loads each field into
//! consecutive 4-byte registers, each padded to a multiple of 4 bytes, and
//! the set's key is their concatenation (nftables' concatenated data type:
//! the field types packed 6 bits apart).

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
}

/// One field of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Src,
    Dst,
    Dport,
    Iif,
}

/// Bits between the field types of a concatenated data type (nftables'
/// `TYPE_BITS`).
const TYPE_BITS: u32 = 6;

impl Field {
    /// nftables' data type id and length in bytes.
    fn type_len(self, family: Family) -> (u32, u32) {
        match (self, family) {
            (Field::Src | Field::Dst, Family::Ipv4) => (7, 4),
            (Field::Src | Field::Dst, Family::Ipv6) => (8, 16),
            (Field::Dport, _) => (13, 2),
            (Field::Iif, _) => (41, 16),
        }
    }

    /// The rule's value of this field when it can be a key (present, not
    /// negated, exact), big-endian as the packet carries it.
    fn value(self, r: &Rule, family: Family) -> Option<Vec<u8>> {
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
        }
    }

    /// Remove the field from `shape` (which has it: [`Field::value`]).
    fn clear(self, shape: &mut Rule) {
        match self {
            Field::Src => shape.src = Addr::default(),
            Field::Dst => shape.dst = Addr::default(),
            Field::Iif => shape.iniface = Iface::default(),
            Field::Dport => {
                if let Some((i, _)) = dport(shape) {
                    match &mut shape.matches[i] {
                        Match::Tcp(t) => t.dpts = (0, 65535),
                        Match::Udp(u) => u.dpts = (0, 65535),
                        _ => unreachable!("dport() found a tcp or udp match"),
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
            Field::Src => payload(
                base::NETWORK,
                if v6 { 8 } else { 12 },
                if v6 { 16 } else { 4 },
            ),
            Field::Dst => payload(
                base::NETWORK,
                if v6 { 24 } else { 16 },
                if v6 { 16 } else { 4 },
            ),
            Field::Dport => payload(base::TRANSPORT, 2, 2),
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

/// The one `--dport P` (single port, not negated) among the rule's `tcp`
/// and `udp` matches: its index and the port. None when there is none or
/// more than one such match.
fn dport(r: &Rule) -> Option<(usize, u16)> {
    let mut found = None;
    for (i, m) in r.matches.iter().enumerate() {
        let d = match m {
            Match::Tcp(t) if !t.inv_dport && t.dpts.0 == t.dpts.1 => t.dpts.0,
            Match::Udp(u) if !u.inv_dport && u.dpts.0 == u.dpts.1 => u.dpts.0,
            _ => continue,
        };
        if found.is_some() {
            return None;
        }
        found = Some((i, d));
    }
    found
}

impl KeyKind {
    /// Every kind, single fields first: a run compiler that prefers the
    /// earlier kind among equally long runs keys on one field where one
    /// suffices.
    pub const ALL: [KeyKind; 7] = [
        KeyKind::Src,
        KeyKind::Dst,
        KeyKind::Dport,
        KeyKind::Iif,
        KeyKind::SrcDport,
        KeyKind::DstDport,
        KeyKind::SrcDst,
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
        }
    }

    /// Whether the key concatenates fields.
    pub fn is_tuple(self) -> bool {
        self.fields().len() > 1
    }

    /// nftables' data type id and key length in bytes (a tuple: the
    /// concatenated type, fields padded to 4 bytes each).
    pub fn key_type(self, family: Family) -> (u32, u32) {
        match self.fields() {
            [f] => f.type_len(family),
            fs => fs.iter().fold((0, 0), |(t, l), f| {
                let (ft, fl) = f.type_len(family);
                ((t << TYPE_BITS) | ft, l + fl.div_ceil(4) * 4)
            }),
        }
    }

    /// The expressions that load the packet's key into register 1 (a
    /// tuple: its fields into the 4-byte registers from there on).
    pub(crate) fn load(self, family: Family) -> Vec<Expr> {
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

    /// The rule's key for this kind and the rule without it and without
    /// its comment (its shape: each member's comment lives in its
    /// element's userdata), or `None` when the rule has no usable key of
    /// this kind. O(matches); clones the rule only when it has the key.
    pub fn split(self, r: &Rule, family: Family) -> Option<(Vec<u8>, Rule)> {
        let key = match self.fields() {
            [f] => f.value(r, family)?,
            fs => {
                let mut key = Vec::with_capacity(self.key_type(family).1 as usize);
                for f in fs {
                    let v = f.value(r, family)?;
                    key.extend_from_slice(&v);
                    key.resize(key.len().div_ceil(4) * 4, 0);
                }
                key
            }
        };
        let mut shape = r.clone();
        for f in self.fields() {
            f.clear(&mut shape);
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
                .load(v4)
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
            .load(Family::Ipv6)
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
}
