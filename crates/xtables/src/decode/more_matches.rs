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
    "hashlimit",
    "ipvs",
    "mh",
    "nfacct",
    "policy",
    "quota",
    "realm",
    "rpfilter",
    "rt",
    "sctp",
    "socket",
    "string",
    "time",
    "u32",
    "osf",
    "srh",
    "bpf",
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
        ("hashlimit", 3) => hashlimit(&r),
        ("ipvs", 0) => r.need(40).map(|()| {
            Match::Ipvs(m::ipvs::Ipvs {
                vaddr: r.addr(0, 16),
                vmask: r.addr(16, 16),
                vport: r.be16(32),
                l4proto: r.u8(34),
                fwd_method: r.u8(35),
                vportctl: r.be16(36),
                invert: r.u8(38),
                bitmask: r.u8(39),
            })
        }),
        ("mh", 0) if v6 => r.need(3).map(|()| {
            Match::Mh(m::mh::Mh {
                types: (r.u8(0), r.u8(1)),
                inv: r.u8(2) & 1 != 0,
            })
        }),
        ("nfacct", 1) => r
            .cstr(0, 32)
            .map(|name| Match::Nfacct(m::nfacct::Nfacct { name })),
        ("policy", 0) => policy(&r, v6),
        ("quota", 0) => r.need(16).map(|()| {
            Match::Quota(m::quota::Quota {
                quota: r.u64(8),
                inv: r.u32(0) & 1 != 0,
            })
        }),
        ("realm", 0) => r.need(9).map(|()| {
            Match::Realm(m::realm::Realm {
                id: r.u32(0),
                mask: r.u32(4),
                inv: r.u8(8) != 0,
            })
        }),
        ("rpfilter", 0) => r.need(1).map(|()| {
            let f = r.u8(0);
            Match::Rpfilter(m::rpfilter::Rpfilter {
                loose: f & 1 != 0,
                validmark: f & 2 != 0,
                accept_local: f & 4 != 0,
                invert: f & 8 != 0,
            })
        }),
        ("rt", 0) if v6 => rt(&r),
        ("sctp", 0) => sctp(&r),
        ("socket", 3) => r.need(2).map(|()| {
            Match::Socket(m::socket::Socket {
                flags: r.u16(0) as u8,
            })
        }),
        ("string", 1) => string(&r),
        ("time", 0) => r.need(22).map(|()| {
            Match::Time(m::time::Time {
                date_start: r.u32(0),
                date_stop: r.u32(4),
                daytime_start: r.u32(8),
                daytime_stop: r.u32(12),
                monthdays: r.u32(16),
                weekdays: r.u8(20),
                flags: r.u8(21),
            })
        }),
        ("u32", 0) => u32_match(&r),
        ("osf", 0) => r.cstr(0, 32).and_then(|genre| {
            r.need(48)?;
            let f = r.u32(36);
            Ok(Match::Osf(m::osf::Osf {
                genre,
                inv: f & 8 != 0,
                ttl: (f & 2 != 0).then(|| r.u32(44)),
                log: (f & 4 != 0).then(|| r.u32(40)),
            }))
        }),
        ("srh", 1) if v6 => r.need(108).map(|()| {
            let sid = |n: usize| (r.addr(8 + 16 * n, 16), r.addr(56 + 16 * n, 16));
            Match::Srh(m::srh::Srh {
                flags: r.u16(104),
                inv: r.u16(106),
                next_hdr: r.u8(0),
                hdr_len: r.u8(1),
                segs_left: r.u8(2),
                last_entry: r.u8(3),
                tag: r.u16(4),
                sids: [sid(0), sid(1), sid(2)],
            })
        }),
        ("bpf", 1) => bpf(&r),
        ("eui64" | "hbh" | "dst" | "ipv6header" | "frag" | "mh" | "rt" | "srh", _) if !v6 => {
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

fn hashlimit(r: &Reader) -> Result<Match, Refusal> {
    r.need(298)?;
    let mut h = m::hashlimit::Hashlimit::default();
    h.name = r.cstr(0, 255)?;
    h.avg = r.u64(256);
    h.burst = r.u64(264);
    h.mode = r.u32(272);
    h.size = r.u32(276);
    h.max = r.u32(280);
    h.gc_interval = r.u32(284);
    h.expire = r.u32(288);
    h.interval = r.u32(292);
    h.srcmask = r.u8(296);
    h.dstmask = r.u8(297);
    Ok(Match::Hashlimit(h))
}

fn policy(r: &Reader, v6: bool) -> Result<Match, Refusal> {
    r.need(308)?;
    let len = usize::from(r.u16(306));
    if len > 4 {
        return Err(Refusal::info(format!("{len} policy elements")));
    }
    let alen = if v6 { 16 } else { 4 };
    let elems = (0..len)
        .map(|n| {
            let at = 76 * n;
            let (on, inv) = (r.u8(at + 74), r.u8(at + 75));
            let test = |bit: u8| (on & bit != 0).then_some(inv & bit != 0);
            let tunnel = |bit: u8, a: usize| {
                test(bit).map(|v| (r.addr(at + a, alen), r.addr(at + a + 16, alen), v))
            };
            m::policy::Elem {
                src: tunnel(1, 0),
                dst: tunnel(2, 32),
                proto: test(4).map(|v| (r.u8(at + 72), v)),
                mode: test(8).map(|v| (r.u8(at + 73), v)),
                spi: test(16).map(|v| (r.u32(at + 64), v)),
                reqid: test(32).map(|v| (r.u32(at + 68), v)),
            }
        })
        .collect();
    Ok(Match::Policy(m::policy::Policy {
        flags: r.u16(304),
        elems,
    }))
}

fn rt(r: &Reader) -> Result<Match, Refusal> {
    r.need(277)?;
    let (f, inv) = (r.u8(16), r.u8(17));
    let n = usize::from(r.u8(276));
    if n > 16 {
        return Err(Refusal::info(format!("{n} addresses")));
    }
    Ok(Match::Rt(m::rt::Rt {
        typ: (f & 1 != 0).then(|| (r.u32(0), inv & 1 != 0)),
        segs: (r.u32(4), r.u32(8)),
        inv_segs: inv & 2 != 0,
        len: (f & 4 != 0).then(|| (r.u32(12), inv & 4 != 0)),
        res: f & 8 != 0,
        addrs: (f & 0x10 != 0).then(|| (0..n).map(|i| r.addr(20 + 16 * i, 16)).collect()),
        not_strict: f & 0x20 != 0,
    }))
}

fn sctp(r: &Reader) -> Result<Match, Refusal> {
    r.need(292)?;
    let (flags, inv) = (r.u32(284), r.u32(288));
    let chunks = if flags & 4 != 0 {
        let all = r.bytes(8, 256).iter().all(|&b| b == 0xff);
        let mut map = [0u64; 4];
        if !all {
            for w in 0..8 {
                map[w / 2] |= u64::from(r.u32(8 + 4 * w)) << (32 * (w % 2));
            }
        }
        let n = r.u32(280) as usize;
        if n > 4 {
            return Err(Refusal::info(format!("{n} chunk flags")));
        }
        let mode = r.u32(264);
        Some(m::sctp::Chunks {
            mode: u8::try_from(mode)
                .map_err(|_| Refusal::info(format!("chunk match type {mode}")))?,
            all,
            map,
            flags: (0..n)
                .map(|i| m::sctp::ChunkFlags {
                    key: r.u8(268 + 3 * i),
                    flag: r.u8(269 + 3 * i),
                    mask: r.u8(270 + 3 * i),
                })
                .collect(),
        })
    } else {
        None
    };
    Ok(Match::Sctp(m::sctp::Sctp {
        spts: (flags & 1 != 0).then(|| (r.u16(4), r.u16(6))),
        dpts: (flags & 2 != 0).then(|| (r.u16(0), r.u16(2))),
        chunks,
        inv_sport: inv & 1 != 0,
        inv_dport: inv & 2 != 0,
        inv_chunks: inv & 4 != 0,
    }))
}

fn string(r: &Reader) -> Result<Match, Refusal> {
    r.need(150)?;
    let n = usize::from(r.u8(148));
    if n > 128 {
        return Err(Refusal::info(format!("pattern length {n}")));
    }
    let f = r.u8(149);
    Ok(Match::String(m::string::StringMatch {
        from: r.u16(0),
        to: r.u16(2),
        algo: r.cstr(4, 16)?,
        pattern: r.bytes(20, n).to_vec(),
        inv: f & 1 != 0,
        icase: f & 2 != 0,
    }))
}

/// `struct xt_u32` (layout in `compile::compat::matches::u32`).
fn u32_match(r: &Reader) -> Result<Match, Refusal> {
    const TEST: usize = 180;
    r.need(1982)?;
    let n = usize::from(r.u8(1980));
    if n > 11 {
        return Err(Refusal::info(format!("{n} tests")));
    }
    let mut tests = Vec::with_capacity(n);
    for t in 0..n {
        let at = TEST * t;
        let (nn, nv) = (usize::from(r.u8(at + 176)), usize::from(r.u8(at + 177)));
        if nn > 11 || nv > 11 {
            return Err(Refusal::info(format!("{nn} locations, {nv} values")));
        }
        tests.push(m::u32::Test {
            location: (0..nn)
                .map(|i| (r.u8(at + 8 * i + 4), r.u32(at + 8 * i)))
                .collect(),
            values: (0..nv)
                .map(|i| (r.u32(at + 88 + 8 * i), r.u32(at + 92 + 8 * i)))
                .collect(),
        });
    }
    Ok(Match::U32(m::u32::U32 {
        tests,
        inv: r.u8(1981) != 0,
    }))
}

/// `struct xt_bpf_info_v1`: bytecode only; a pinned object (mode 1) or
/// an fd-based program cannot be taken from another process's table.
fn bpf(r: &Reader) -> Result<Match, Refusal> {
    r.need(520)?;
    if r.u16(0) != 0 {
        return Err(Refusal::new(
            "a pinned or fd-based BPF program cannot be read back from the kernel",
        ));
    }
    let n = usize::from(r.u16(2));
    if n > 64 {
        return Err(Refusal::info(format!("{n} instructions")));
    }
    let prog = (0..n)
        .map(|i| {
            let at = 8 + 8 * i;
            (r.u16(at), r.u8(at + 2), r.u8(at + 3), r.u32(at + 4))
        })
        .collect();
    Ok(Match::Bpf(m::bpf::Bpf {
        prog: Some(m::bpf::Program::Bytecode(prog)),
    }))
}
