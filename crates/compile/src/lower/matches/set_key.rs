//! The key of an ipset lookup: the packet fields ipset's kernel module
//! reads for a set type and the rule's `src`/`dst` list, loaded into
//! registers in the layout of the set's nftables form
//! ([`crate::ipset::set_spec`]). Shared by `-m set` and `-j SET`.
//!
//! ipset reads, per dimension N of the type, the source or the
//! destination (bit N of the rule's list) of: the address (ip, net), the
//! port with the packet's protocol (port: TCP, UDP, SCTP, UDPLITE, or an
//! ICMP type and code), the MAC of the link-layer header, the interface
//! (`src`: in, `dst`: out). A mark is the packet's, whatever the list
//! says. A rule that lists fewer directions than the type has dimensions
//! never matches in the kernel; so does one whose set is of the other
//! address family.
//!
//! Registers: the key starts in register 1; in a concatenation each
//! further field goes to the next 4-byte register after the previous one
//! padded to 4 bytes (the kernel zeroes a partly written register's tail,
//! so the padding matches the set's keys). A 4-byte register at the start
//! of a 16-byte one is named as the 16-byte register, as the kernel dumps
//! it ([`reg32`]).

use crate::ipset::{set_spec, Field, SetSpec};
use crate::lower::{Cx, LowerError, Result};
use ipset::addr::Family as SetFamily;
use ipset::model::Header;
use ipset::types::SetType;
use nft::expr::{base, meta, reg};
use nft::Expr;

/// One key field and the dimension whose direction it takes (`None`:
/// undirected — a protocol goes with its port, a mark is the packet's).
type Dim = (Field, Option<usize>);

/// The key fields of set type `ty` with their dimensions, and its
/// dimension count (ipset's `dimension`).
fn dims(ty: SetType, ip: Field) -> (Vec<Dim>, usize) {
    use Field::*;
    let d = |n| Some(n);
    let v = match ty {
        SetType::HashIp | SetType::BitmapIp | SetType::HashNet => vec![(ip, d(0))],
        SetType::HashMac => vec![(EtherAddr, d(0))],
        SetType::BitmapPort => vec![(InetService, d(0))],
        SetType::HashIpMac | SetType::BitmapIpMac => vec![(ip, d(0)), (EtherAddr, d(1))],
        SetType::HashIpMark => vec![(ip, d(0)), (Mark, None)],
        SetType::HashIpPort | SetType::HashNetPort => {
            vec![(ip, d(0)), (InetProto, None), (InetService, d(1))]
        }
        SetType::HashIpPortIp | SetType::HashIpPortNet | SetType::HashNetPortNet => vec![
            (ip, d(0)),
            (InetProto, None),
            (InetService, d(1)),
            (ip, d(2)),
        ],
        SetType::HashNetNet => vec![(ip, d(0)), (ip, d(1))],
        SetType::HashNetIface => vec![(ip, d(0)), (Ifname, d(1))],
        SetType::ListSet => Vec::new(),
    };
    // hash:ip,mark counts the mark as its second dimension.
    let n = match ty {
        SetType::HashIpMark => 2,
        _ => v.iter().filter_map(|(_, d)| *d).max().map_or(0, |m| m + 1),
    };
    (v, n)
}

/// Protocols whose ports ipset reads (IPPROTO_TCP, UDP, SCTP, UDPLITE).
const PORT_PROTOS: [u8; 4] = [6, 17, 132, 136];
/// bitmap:port stores no protocol; ipset's bitmap:port reads TCP and UDP.
const BITMAP_PORT_PROTOS: [u8; 2] = [6, 17];

/// How the port field is read for the rule's protocol: the port at
/// `offset` of the transport header (source 0, destination 2), or ICMP's
/// type and code (offset 0 whatever the direction).
fn port_offset(cx: &Cx, ty: SetType, src: bool) -> std::result::Result<u32, String> {
    let p = cx.rule.proto;
    let fixed = p != 0 && !cx.rule.inverted(iptables::rule::inv::PROTO);
    let icmp = if cx.is_v6() { 58 } else { 1 };
    let allowed: &[u8] = if ty == SetType::BitmapPort {
        &BITMAP_PORT_PROTOS
    } else {
        &PORT_PROTOS
    };
    if fixed && allowed.contains(&p) {
        Ok(if src { 0 } else { 2 })
    } else if fixed && p == icmp && ty != SetType::BitmapPort {
        Ok(0)
    } else {
        Err(format!(
            "the port ipset reads depends on the packet's protocol; nfkeeper looks it up for a rule with -p {}",
            if ty == SetType::BitmapPort {
                "tcp or udp"
            } else if cx.is_v6() {
                "tcp, udp, sctp, udplite or icmpv6"
            } else {
                "tcp, udp, sctp, udplite or icmp"
            }
        ))
    }
}

/// Load the key of set `name` (header `h`) for the rule's direction list
/// `dirs` (`true`: src); returns the register the key starts in and the
/// set's nftables form. `what` names the rule part in refusals.
pub fn load_key(
    cx: &mut Cx,
    what: &str,
    name: &str,
    h: &Header,
    dirs: &[bool],
) -> Result<(u32, SetSpec)> {
    let refuse = |why: String| LowerError::not_native(what, why);
    let spec = set_spec(h).map_err(|e| refuse(e.to_string()))?;
    let v6 = cx.is_v6();
    let fits = match h.family {
        None => true,
        Some(SetFamily::Inet) => !v6,
        Some(SetFamily::Inet6) => v6,
    };
    if !fits {
        return Err(refuse(format!(
            "set {name} is of family {}, which a rule of this family never matches",
            if v6 { "inet" } else { "inet6" }
        )));
    }
    let ip = if v6 { Field::Ipv6Addr } else { Field::Ipv4Addr };
    let (fields, dimension) = dims(h.ty, ip);
    if dirs.len() < dimension {
        return Err(refuse(format!(
            "set {name} has {dimension} dimensions and the rule gives {} direction(s): the kernel never matches it",
            dirs.len()
        )));
    }
    debug_assert_eq!(
        fields.iter().map(|f| f.0).collect::<Vec<_>>(),
        spec.fields,
        "key fields follow compile::ipset's layout"
    );
    let concat = fields.len() > 1;
    let mut at = 0u32;
    for &(f, d) in &fields {
        let src = d.map(|n| dirs[n]);
        let dreg = reg32(at / 4);
        let e = match f {
            Field::Ipv4Addr => payload(
                dreg,
                base::NETWORK,
                if src == Some(true) { 12 } else { 16 },
                4,
            ),
            Field::Ipv6Addr => payload(
                dreg,
                base::NETWORK,
                if src == Some(true) { 8 } else { 24 },
                16,
            ),
            Field::InetProto => Expr::Meta {
                key: meta::L4PROTO,
                dreg,
            },
            Field::InetService => {
                let off = port_offset(cx, h.ty, src == Some(true)).map_err(refuse)?;
                payload(dreg, base::TRANSPORT, off, 2)
            }
            Field::EtherAddr => payload(dreg, base::LL, if src == Some(true) { 6 } else { 0 }, 6),
            Field::Mark => Expr::Meta {
                key: meta::MARK,
                dreg,
            },
            Field::Ifname => Expr::Meta {
                key: if src == Some(true) {
                    meta::IIFNAME
                } else {
                    meta::OIFNAME
                },
                dreg,
            },
        };
        cx.push(e);
        at += if concat {
            f.bytes().div_ceil(4) * 4
        } else {
            f.bytes()
        };
    }
    Ok((reg::R1, spec))
}

/// The register of 4-byte slot `i` (`NFT_REG32_00 + i`), named as the
/// 16-byte register `NFT_REG_1 + i / 4` when it starts one (the same
/// storage; the kernel dumps that name).
fn reg32(i: u32) -> u32 {
    if i % 4 == 0 {
        reg::R1 + i / 4
    } else {
        reg::R32_00 + i
    }
}

fn payload(dreg: u32, base: u32, offset: u32, len: u32) -> Expr {
    Expr::Payload {
        dreg,
        base,
        offset,
        len,
    }
}
