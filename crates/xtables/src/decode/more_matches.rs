//! The less common matches (see [`super::matches`], which dispatches
//! here): the inverse of their `compile::compat::matches` encoders (C
//! layouts documented there), and esp/frag, which compile lowers
//! natively (layouts here).

use super::{Reader, Refusal};
use iptables::ext::matches as m;
use iptables::ext::Match;
use ruleset::Family;

/// The matches this module decodes.
pub const DECODED: &[&str] = &[
    "ah",
    "esp",
    "frag",
    "cgroup",
    "cluster",
    "connbytes",
    "connlabel",
    "connlimit",
    "cpu",
    "dccp",
    "devgroup",
    "ecn",
    "eui64",
    "hbh",
    "dst",
    "helper",
    "ipcomp",
    "ipv6header",
];

/// Match `name` revision `rev` (one of [`DECODED`]) with info `d`;
/// `None` for a revision not decoded.
pub fn decode(family: Family, name: &str, rev: u8, d: &[u8]) -> Option<Result<Match, Refusal>> {
    let r = Reader::new(d);
    let v6 = family == Family::Ipv6;
    let res = match (name, rev) {
        ("ah", 0) => ah(&r, v6),
        // struct xt_esp: spis u32[2] @0, invflags u8 @8 (INV_SPI 1).
        ("esp", 0) => r.need(9).map(|()| {
            Match::Esp(m::esp::Esp {
                spis: (r.u32(0), r.u32(4)),
                inv: r.u8(8) & 1 != 0,
            })
        }),
        ("frag", 0) if v6 => frag(&r),
        ("cgroup", 2) => cgroup(&r),
        ("cluster", 0) => r.need(16).map(|()| {
            Match::Cluster(m::cluster::Cluster {
                total_nodes: r.u32(0),
                node_mask: r.u32(4),
                hash_seed: r.u32(8),
                inv: r.u32(12) & 1 != 0,
            })
        }),
        ("connbytes", 0) => r.need(18).map(|()| {
            Match::Connbytes(m::connbytes::Connbytes {
                from: r.u64(0),
                to: r.u64(8),
                what: r.u8(16),
                dir: r.u8(17),
            })
        }),
        ("connlabel", 0) => r.need(4).map(|()| {
            let o = r.u16(2);
            Match::Connlabel(m::connlabel::Connlabel {
                bit: r.u16(0),
                inv: o & 1 != 0,
                set: o & 2 != 0,
            })
        }),
        ("connlimit", 1) => r.need(24).map(|()| {
            // An IPv4 mask in the model's first 4 bytes only (iptables'
            // default fills all 16).
            let mask = r.addr(0, if v6 { 16 } else { 4 });
            let f = r.u32(20);
            Match::Connlimit(m::connlimit::Connlimit {
                limit: r.u32(16),
                upto: f & 1 != 0,
                daddr: f & 2 != 0,
                mask,
            })
        }),
        ("cpu", 0) => r.need(8).map(|()| {
            Match::Cpu(m::cpu::Cpu {
                cpu: r.u32(0),
                inv: r.u32(4) != 0,
            })
        }),
        ("dccp", 0) => r.need(15).map(|()| {
            let (flags, inv) = (r.u16(8), r.u16(10));
            let on = |b: u16| flags & b != 0;
            let neg = |b: u16| inv & b != 0;
            Match::Dccp(m::dccp::Dccp {
                spts: on(1).then(|| (r.u16(4), r.u16(6), neg(1))),
                dpts: on(2).then(|| (r.u16(0), r.u16(2), neg(2))),
                types: on(4).then(|| (r.u16(12), neg(4))),
                option: on(8).then(|| (r.u8(14), neg(8))),
            })
        }),
        ("devgroup", 0) => r.need(20).map(|()| {
            let f = r.u32(0);
            let group = |bit: u32, at: usize| {
                (f & bit != 0).then(|| m::devgroup::Group {
                    group: r.u32(at),
                    mask: r.u32(at + 4),
                    inv: f & (bit << 1) != 0,
                })
            };
            Match::Devgroup(m::devgroup::Devgroup {
                src: group(1, 4),
                dst: group(4, 12),
            })
        }),
        ("ecn", 0) => r.need(3).map(|()| {
            let (op, inv) = (r.u8(0), r.u8(1));
            let test = |bit: u8| m::ecn::Test {
                on: op & bit != 0,
                inv: inv & bit != 0,
            };
            Match::Ecn(m::ecn::Ecn {
                ip: test(0x01),
                ece: test(0x10),
                cwr: test(0x20),
                ect: if op & 1 != 0 { r.u8(2) } else { 0 },
            })
        }),
        ("eui64", 0) if v6 => Ok(Match::Eui64(m::eui64::Eui64)),
        ("hbh", 0) if v6 => opts_header(&r).map(|h| Match::Hbh(m::hbh::Hbh(h))),
        ("dst", 0) if v6 => opts_header(&r).map(|h| Match::Dst(m::dst::Dst(h))),
        ("helper", 0) => r.cstr(4, 30).map(|name| {
            Match::Helper(m::helper::Helper {
                name,
                inv: r.u32(0) != 0,
            })
        }),
        ("ipcomp", 0) => r.need(10).map(|()| {
            Match::Ipcomp(m::ipcomp::Ipcomp {
                spis: (r.u32(0), r.u32(4)),
                inv: r.u8(8) & 1 != 0,
                hdrres: r.u8(9) != 0,
            })
        }),
        ("ipv6header", 0) if v6 => r.need(3).map(|()| {
            Match::Ipv6header(m::ipv6header::Ipv6header {
                flags: r.u8(0),
                inv: r.u8(1) != 0,
                soft: r.u8(2) != 0,
            })
        }),
        ("eui64" | "hbh" | "dst" | "ipv6header" | "frag", 0) => {
            Err(Refusal::new("an IPv6 match in an IPv4 table"))
        }
        _ => return None,
    };
    Some(res)
}

fn ah(r: &Reader, v6: bool) -> Result<Match, Refusal> {
    r.need(if v6 { 14 } else { 9 })?;
    let spis = (r.u32(0), r.u32(4));
    Ok(Match::Ah(if v6 {
        let inv = r.u8(13);
        m::ah::Ah {
            spis,
            inv_spi: inv & 1 != 0,
            hdrlen: r.u32(8),
            inv_len: inv & 2 != 0,
            hdrres: r.u8(12) != 0,
        }
    } else {
        m::ah::Ah {
            spis,
            inv_spi: r.u8(8) & 1 != 0,
            hdrlen: 0,
            inv_len: false,
            hdrres: false,
        }
    }))
}

/// `struct ip6t_frag`: ids u32[2] @0, hdrlen u32 @8, flags u8 @12 (IDS 1,
/// LEN 2, RES 4, FST 8, MF 0x10, NMF 0x20), invflags u8 @13 (INV_IDS 1,
/// INV_LEN 2).
fn frag(r: &Reader) -> Result<Match, Refusal> {
    r.need(14)?;
    let (f, inv) = (r.u8(12), r.u8(13));
    Ok(Match::Frag(m::frag::Frag {
        ids: (r.u32(0), r.u32(4)),
        inv_ids: inv & 1 != 0,
        len: (f & 2 != 0).then(|| r.u32(8)),
        inv_len: inv & 2 != 0,
        res: f & 4 != 0,
        first: f & 8 != 0,
        more: f & 0x10 != 0,
        last: f & 0x20 != 0,
    }))
}

fn cgroup(r: &Reader) -> Result<Match, Refusal> {
    r.need(516)?;
    let test = if r.u8(0) != 0 {
        Some((m::cgroup::Test::Path(r.cstr(4, 512)?), r.u8(2) != 0))
    } else if r.u8(1) != 0 {
        Some((m::cgroup::Test::Classid(r.u32(4)), r.u8(3) != 0))
    } else {
        None
    };
    Ok(Match::Cgroup(match test {
        Some((t, inv)) => m::cgroup::Cgroup { test: Some(t), inv },
        None => m::cgroup::Cgroup {
            test: None,
            inv: false,
        },
    }))
}

fn opts_header(r: &Reader) -> Result<m::hbh::OptsHeader, Refusal> {
    r.need(39)?;
    let f = r.u8(4);
    let n = usize::from(r.u8(38));
    if n > 16 {
        return Err(Refusal::info(format!("{n} options")));
    }
    Ok(m::hbh::OptsHeader {
        len: (f & 1 != 0).then(|| (r.u32(0), r.u8(5) & 1 != 0)),
        opts: (f & 2 != 0).then(|| (0..n).map(|i| r.u16(6 + 2 * i)).collect()),
    })
}
