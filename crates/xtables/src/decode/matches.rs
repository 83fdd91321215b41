//! Match infos back into `iptables::ext::Match`: the inverse of
//! `compile::compat::matches` (whose modules document the C layouts of
//! the extensions it encodes) plus the matches nfkeeper lowers natively,
//! whose layouts are given here. One function per extension; the
//! revisions are those iptables 1.8 writes on current kernels.

use super::{Reader, Refusal};
use iptables::ext::matches as m;
use iptables::ext::Match;
use ruleset::Family;

/// Every match decoded (here and in [`super::more_matches`]).
pub fn names() -> Vec<&'static str> {
    DECODED
        .iter()
        .chain(super::more_matches::DECODED)
        .copied()
        .collect()
}

/// The matches this module decodes itself.
pub const DECODED: &[&str] = &[
    "tcp",
    "udp",
    "icmp",
    "icmp6",
    "multiport",
    "conntrack",
    "state",
    "comment",
    "mark",
    "connmark",
    "limit",
    "addrtype",
    "iprange",
    "mac",
    "pkttype",
    "owner",
    "physdev",
    "recent",
    "statistic",
    "tcpmss",
    "length",
    "ttl",
    "hl",
    "tos",
    "dscp",
];

/// Match `name` revision `rev` with info `d` in `family`.
pub fn decode(family: Family, name: &str, rev: u8, d: &[u8]) -> Result<Match, Refusal> {
    let r = Reader::new(d);
    let v6 = family == Family::Ipv6;
    Ok(match (name, rev) {
        // struct xt_tcp: spts u16[2] @0, dpts @4, option u8 @8, flg_mask @9,
        // flg_cmp @10, invflags @11 (SRCPT 1, DSTPT 2, FLAGS 4, OPTION 8).
        ("tcp", 0) => {
            r.need(12)?;
            let inv = r.u8(11);
            Match::Tcp(m::tcp::Tcp {
                spts: (r.u16(0), r.u16(2)),
                dpts: (r.u16(4), r.u16(6)),
                option: r.u8(8),
                flg_mask: r.u8(9),
                flg_cmp: r.u8(10),
                inv_sport: inv & 1 != 0,
                inv_dport: inv & 2 != 0,
                inv_flags: inv & 4 != 0,
                inv_option: inv & 8 != 0,
            })
        }
        // struct xt_udp: spts @0, dpts @4, invflags u8 @8.
        ("udp", 0) => {
            r.need(9)?;
            let inv = r.u8(8);
            Match::Udp(m::udp::Udp {
                spts: (r.u16(0), r.u16(2)),
                dpts: (r.u16(4), r.u16(6)),
                inv_sport: inv & 1 != 0,
                inv_dport: inv & 2 != 0,
            })
        }
        // struct ipt_icmp / ip6t_icmp: type u8 @0, code[2] @1, invflags @3.
        ("icmp", 0) if !v6 => {
            r.need(4)?;
            Match::Icmp(m::icmp::Icmp {
                typ: r.u8(0),
                code_min: r.u8(1),
                code_max: r.u8(2),
                inv: r.u8(3) & 1 != 0,
            })
        }
        ("icmp6", 0) if v6 => {
            r.need(4)?;
            Match::Icmp6(m::icmp6::Icmp6 {
                typ: r.u8(0),
                code_min: r.u8(1),
                code_max: r.u8(2),
                inv: r.u8(3) & 1 != 0,
            })
        }
        ("multiport", 1) => {
            r.need(48)?;
            let count = usize::from(r.u8(1));
            if count > 15 {
                return Err(Refusal::info(format!("{count} ports")));
            }
            let mut ports = Vec::new();
            let mut i = 0;
            while i < count {
                let lo = r.u16(2 + 2 * i);
                if r.u8(32 + i) != 0 && i + 1 < count {
                    ports.push((lo, r.u16(2 + 2 * (i + 1))));
                    i += 2;
                } else {
                    ports.push((lo, lo));
                    i += 1;
                }
            }
            Match::Multiport(m::multiport::Multiport {
                kind: r.u8(0),
                ports,
                inv: r.u8(47) != 0,
            })
        }
        ("conntrack", 3) => conntrack(&r, v6)?,
        // struct xt_state_info: statemask u32 (INVALID 1, ESTABLISHED 2,
        // RELATED 4, NEW 8, UNTRACKED 1 << 6).
        ("state", 0) => {
            r.need(4)?;
            let raw = r.u32(0);
            let mut mask = raw & 0xf;
            if raw & (1 << 6) != 0 {
                mask |= m::conntrack::ST_UNTRACKED;
            }
            Match::State(m::state::State { mask, inv: false })
        }
        // struct xt_comment_info: comment[256].
        ("comment", 0) => Match::Comment(m::comment::Comment {
            text: r.cstr(0, 256)?,
        }),
        // struct xt_mark_mtinfo1 / xt_connmark_mtinfo1: mark u32 @0, mask
        // @4, invert u8 @8.
        ("mark", 1) => {
            r.need(9)?;
            Match::Mark(m::mark::Mark {
                mark: r.u32(0),
                mask: r.u32(4),
                inv: r.u8(8) != 0,
            })
        }
        ("connmark", 1) => {
            r.need(9)?;
            Match::Connmark(m::connmark::Connmark {
                mark: r.u32(0),
                mask: r.u32(4),
                inv: r.u8(8) != 0,
            })
        }
        ("limit", 0) => {
            r.need(8)?;
            Match::Limit(m::limit::Limit {
                avg: r.u32(0),
                burst: r.u32(4),
            })
        }
        ("addrtype", 1) => {
            r.need(8)?;
            let f = r.u32(4);
            Match::Addrtype(m::addrtype::Addrtype {
                src: r.u16(0),
                dst: r.u16(2),
                inv_src: f & 1 != 0,
                inv_dst: f & 2 != 0,
                limit_in: f & 4 != 0,
                limit_out: f & 8 != 0,
            })
        }
        // struct xt_iprange_mtinfo: src_min, src_max, dst_min, dst_max
        // (union nf_inet_addr, 16 each) @0..64, flags u8 @64 (SRC 1, DST 2,
        // SRC_INV 0x10, DST_INV 0x20).
        ("iprange", 1) => {
            r.need(65)?;
            let f = r.u8(64);
            let alen = if v6 { 16 } else { 4 };
            let range = |at: usize, on: u8, inv: u8| {
                (f & on != 0).then(|| m::iprange::Range {
                    lo: r.addr(at, alen),
                    hi: r.addr(at + 16, alen),
                    inv: f & inv != 0,
                })
            };
            Match::Iprange(m::iprange::Iprange {
                src: range(0, 1, 0x10),
                dst: range(32, 2, 0x20),
            })
        }
        // struct xt_mac_info: srcaddr[6] @0, invert int @8.
        ("mac", 0) => {
            r.need(12)?;
            let mut addr = [0; 6];
            addr.copy_from_slice(r.bytes(0, 6));
            Match::Mac(m::mac::Mac {
                addr,
                inv: r.u32(8) != 0,
            })
        }
        // struct xt_pkttype_info: pkttype int @0, invert int @4.
        ("pkttype", 0) => {
            r.need(8)?;
            let t = r.u32(0);
            if t > 255 {
                return Err(Refusal::info(format!("packet type {t}")));
            }
            Match::Pkttype(m::pkttype::Pkttype {
                pkttype: t as u8,
                inv: r.u32(4) != 0,
            })
        }
        ("owner", 1) => {
            r.need(18)?;
            let (matched, inv) = (r.u8(16), r.u8(17));
            let range = |bit: u8, at: usize| {
                (matched & bit != 0).then(|| m::owner::IdRange {
                    min: r.u32(at),
                    max: r.u32(at + 4),
                    inv: inv & bit != 0,
                })
            };
            Match::Owner(m::owner::Owner {
                uid: range(1, 0),
                gid: range(2, 8),
                socket: (matched & 4 != 0).then_some(inv & 4 != 0),
                suppl_groups: matched & 8 != 0,
            })
        }
        ("physdev", 0) => {
            r.need(66)?;
            let (inv, bits) = (r.u8(64), r.u8(65));
            let port = |bit: u8, at: usize| -> Result<Option<m::physdev::Port>, Refusal> {
                Ok(if bits & bit != 0 {
                    Some(m::physdev::Port {
                        name: r.cstr(at, 16)?,
                        inv: inv & bit != 0,
                    })
                } else {
                    None
                })
            };
            let flag = |bit: u8| (bits & bit != 0).then_some(inv & bit != 0);
            Match::Physdev(m::physdev::Physdev {
                physin: port(1, 0)?,
                physout: port(2, 32)?,
                is_bridged: flag(4),
                is_in: flag(8),
                is_out: flag(16),
            })
        }
        ("recent", 1) => {
            r.need(228)?;
            // The model keeps an IPv4 mask in its first 4 bytes only
            // (iptables fills all 16).
            let mask = r.addr(212, if v6 { 16 } else { 4 });
            Match::Recent(m::recent::Recent {
                v6,
                seconds: r.u32(0),
                hit_count: r.u32(4),
                check_set: r.u8(8),
                invert: r.u8(9) != 0,
                name: r.cstr(10, 200)?,
                dest: r.u8(210) != 0,
                mask,
            })
        }
        ("statistic", 0) => {
            r.need(16)?;
            let nth = match r.u16(0) {
                0 => false,
                1 => true,
                x => return Err(Refusal::info(format!("mode {x}"))),
            };
            Match::Statistic(m::statistic::Statistic {
                nth,
                val: r.u32(4),
                packet: if nth { r.u32(8) } else { 0 },
                inv: r.u16(2) & 1 != 0,
            })
        }
        ("tcpmss", 0) => {
            r.need(5)?;
            Match::Tcpmss(m::tcpmss::Tcpmss {
                min: r.u16(0),
                max: r.u16(2),
                inv: r.u8(4) != 0,
            })
        }
        // struct xt_length_info: min u16 @0, max @2, invert u8 @4.
        ("length", 0) => {
            r.need(5)?;
            Match::Length(m::length::Length {
                min: r.u16(0),
                max: r.u16(2),
                inv: r.u8(4) != 0,
            })
        }
        // struct ipt_ttl_info / ip6t_hl_info: mode u8 @0 (EQ 0, NE 1, LT 2,
        // GT 3), value u8 @1.
        ("ttl", 0) if !v6 => {
            r.need(2)?;
            Match::Ttl(m::ttl::Ttl {
                mode: mode(r.u8(0))?,
                ttl: r.u8(1),
            })
        }
        ("hl", 0) if v6 => {
            r.need(2)?;
            Match::Hl(m::hl::Hl {
                mode: mode(r.u8(0))?,
                hop_limit: r.u8(1),
            })
        }
        // struct xt_tos_match_info: tos_mask u8 @0, tos_value @1, invert @2.
        ("tos", 1) => {
            r.need(3)?;
            Match::Tos(m::tos::Tos {
                value: r.u8(1),
                mask: r.u8(0),
                inv: r.u8(2) != 0,
            })
        }
        // struct xt_dscp_info: dscp u8 @0, invert @1.
        ("dscp", 0) => {
            r.need(2)?;
            Match::Dscp(m::dscp::Dscp {
                dscp: r.u8(0),
                inv: r.u8(1) != 0,
            })
        }
        _ if super::more_matches::DECODED.contains(&name) => {
            return super::more_matches::decode(family, name, rev, d)
                .unwrap_or_else(|| Err(Refusal::new(format!("revision {rev} is not decoded"))))
        }
        ("set", _) => {
            return Err(Refusal::new(
                "ipset sets are named by the kernel's set index; migrate them with \
                 the rule by hand (nfkeeper ipset, then -m set)",
            ))
        }
        ("icmp" | "ttl", _) if v6 => return Err(Refusal::new("an IPv4 match in an IPv6 table")),
        ("icmp6" | "hl", _) if !v6 => return Err(Refusal::new("an IPv6 match in an IPv4 table")),
        _ if DECODED.contains(&name) => {
            return Err(Refusal::new(format!("revision {rev} is not decoded")))
        }
        _ => return Err(Refusal::new("extension not decoded")),
    })
}

fn mode(m: u8) -> Result<u8, Refusal> {
    if m > 3 {
        return Err(Refusal::info(format!("mode {m}")));
    }
    Ok(m)
}

/// The kernel's conntrack state bits back into nfkeeper's (SNAT, DNAT and
/// UNTRACKED move from bits 6..8 to 8..10; see
/// `compile::compat::matches::conntrack`).
fn state_bits(v: u16) -> u32 {
    let mut mask = u32::from(v & 0xf);
    for (bit, ours) in [
        (1u16 << 6, m::conntrack::ST_SNAT),
        (1 << 7, m::conntrack::ST_DNAT),
        (1 << 8, m::conntrack::ST_UNTRACKED),
    ] {
        if v & bit != 0 {
            mask |= ours;
        }
    }
    mask
}

/// `XT_CONNTRACK_STATE_ALIAS`: `-m state` loaded as conntrack.
const STATE_ALIAS: u16 = 1 << 13;

/// `struct xt_conntrack_mtinfo3` (layout in
/// `compile::compat::matches::conntrack`); with the state alias flag it is
/// `-m state`.
fn conntrack(r: &Reader, v6: bool) -> Result<Match, Refusal> {
    r.need(162)?;
    let (flags, inv) = (r.u16(146), r.u16(148));
    let on = |bit: u16| flags & bit != 0;
    let neg = |bit: u16| inv & bit != 0;
    if flags & STATE_ALIAS != 0 {
        return Ok(Match::State(m::state::State {
            mask: state_bits(r.u16(150)),
            inv: neg(1),
        }));
    }
    let alen = if v6 { 16 } else { 4 };
    let addr = |n: usize, bit: u16| {
        on(bit).then(|| m::conntrack::CtAddr {
            addr: r.addr(32 * n, alen),
            mask: r.addr(32 * n + 16, alen),
            inv: neg(bit),
        })
    };
    let port = |n: usize, bit: u16| {
        on(bit).then(|| m::conntrack::CtPorts {
            lo: r.u16(138 + 2 * n),
            hi: r.u16(154 + 2 * n),
            inv: neg(bit),
        })
    };
    Ok(Match::Conntrack(m::conntrack::Conntrack {
        v6,
        state: on(1).then(|| (state_bits(r.u16(150)), neg(1))),
        proto: on(2).then(|| (r.u16(136) as u8, neg(2))),
        origsrc: addr(0, 4),
        origdst: addr(1, 8),
        replsrc: addr(2, 16),
        repldst: addr(3, 32),
        origsrcport: port(0, 256),
        origdstport: port(1, 512),
        replsrcport: port(2, 1024),
        repldstport: port(3, 2048),
        status: on(64).then(|| (u32::from(r.u16(152)), neg(64))),
        expire: on(128).then(|| (r.u32(128), r.u32(132), neg(128))),
        dir_reply: on(4096).then_some(neg(4096)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Infos built by hand from the C layouts, for the matches nfkeeper
    /// lowers natively (compile has no encoder to round-trip them with).
    #[test]
    #[cfg(target_endian = "little")]
    fn native_match_infos() {
        use m::conntrack::ST_UNTRACKED;
        let v4 = Family::Ipv4;
        let cases: Vec<(&str, u8, Vec<u8>, Match)> = vec![
            (
                "tcp",
                0,
                vec![0, 0, 0xff, 0xff, 22, 0, 22, 0, 0, 0x12, 0x02, 0x05],
                Match::Tcp(m::tcp::Tcp {
                    spts: (0, 0xffff),
                    dpts: (22, 22),
                    option: 0,
                    flg_mask: 0x12,
                    flg_cmp: 0x02,
                    inv_sport: true,
                    inv_dport: false,
                    inv_flags: true,
                    inv_option: false,
                }),
            ),
            (
                "udp",
                0,
                vec![53, 0, 53, 0, 0, 0, 0xff, 0xff, 2, 0, 0, 0],
                Match::Udp(m::udp::Udp {
                    spts: (53, 53),
                    dpts: (0, 0xffff),
                    inv_sport: false,
                    inv_dport: true,
                }),
            ),
            (
                "icmp",
                0,
                vec![3, 4, 4, 1],
                Match::Icmp(m::icmp::Icmp {
                    typ: 3,
                    code_min: 4,
                    code_max: 4,
                    inv: true,
                }),
            ),
            (
                "state",
                0,
                vec![0x46, 0, 0, 0],
                Match::State(m::state::State {
                    mask: 0x6 | ST_UNTRACKED,
                    inv: false,
                }),
            ),
            (
                "mark",
                1,
                vec![1, 0, 0, 0, 0xff, 0, 0, 0, 1, 0, 0, 0],
                Match::Mark(m::mark::Mark {
                    mark: 1,
                    mask: 0xff,
                    inv: true,
                }),
            ),
            (
                "length",
                0,
                vec![100, 0, 200, 0, 0, 0],
                Match::Length(m::length::Length {
                    min: 100,
                    max: 200,
                    inv: false,
                }),
            ),
            (
                "ttl",
                0,
                vec![3, 9],
                Match::Ttl(m::ttl::Ttl { mode: 3, ttl: 9 }),
            ),
            (
                "tos",
                1,
                vec![0x3f, 0x10, 1],
                Match::Tos(m::tos::Tos {
                    value: 0x10,
                    mask: 0x3f,
                    inv: true,
                }),
            ),
            (
                "pkttype",
                0,
                vec![1, 0, 0, 0, 0, 0, 0, 0],
                Match::Pkttype(m::pkttype::Pkttype {
                    pkttype: 1,
                    inv: false,
                }),
            ),
            (
                "mac",
                0,
                vec![0, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0, 1, 0, 0, 0],
                Match::Mac(m::mac::Mac {
                    addr: [0, 0x11, 0x22, 0x33, 0x44, 0x55],
                    inv: true,
                }),
            ),
        ];
        for (name, rev, info, want) in cases {
            assert_eq!(decode(v4, name, rev, &info), Ok(want), "{name}");
        }
        // `-m state` loaded as conntrack revision 3 (the state alias flag).
        let mut ct = vec![0u8; 168];
        ct[146..148].copy_from_slice(&(1u16 | 1 << 13).to_ne_bytes());
        ct[148..150].copy_from_slice(&1u16.to_ne_bytes());
        ct[150..152].copy_from_slice(&(8u16 | 1 << 8).to_ne_bytes());
        assert_eq!(
            decode(v4, "conntrack", 3, &ct),
            Ok(Match::State(m::state::State {
                mask: 8 | ST_UNTRACKED,
                inv: true,
            }))
        );
    }

    #[test]
    fn refusals_say_why() {
        let v4 = Family::Ipv4;
        let cases: &[(&str, u8, &[u8], &str)] = &[
            ("tcp", 0, &[0; 4], "unexpected info (4 bytes, 12 expected)"),
            ("tcp", 1, &[0; 12], "revision 1 is not decoded"),
            ("rateest", 0, &[0; 72], "extension not decoded"),
            ("set", 4, &[0; 40], "kernel's set index"),
            ("ttl", 0, &[7, 1], "unexpected info (mode 7)"),
            ("icmp6", 0, &[0; 4], "an IPv6 match in an IPv4 table"),
        ];
        for (name, rev, info, want) in cases {
            let e = decode(v4, name, *rev, info).unwrap_err();
            assert!(e.0.contains(want), "{name}: {}", e.0);
        }
    }
}
