//! The less common targets (see [`super::targets`], which dispatches
//! here): the inverse of their `compile::compat::targets` encoders, whose
//! modules give the C layouts. Many of them run in the kernel only in
//! tables of the legacy names; nfkeeper's restore then refuses the rule
//! with its reason, after decoding and before anything changes.

use super::{Reader, Refusal};
use iptables::ext::targets as t;
use iptables::ext::TargetExt;
use ruleset::Family;

/// The targets this module decodes.
pub const DECODED: &[&str] = &[
    "AUDIT",
    "CLASSIFY",
    "CONNSECMARK",
    "DSCP",
    "ECN",
    "HMARK",
    "IDLETIMER",
    "LED",
    "NETMAP",
    "NFQUEUE",
    "SNPT",
    "DNPT",
    "SECMARK",
    "SYNPROXY",
    "TCPOPTSTRIP",
    "TEE",
    "TOS",
    "TPROXY",
    "TTL",
    "HL",
];

/// Target `name` revision `rev` (one of [`DECODED`]) with info `d`;
/// `None` for a revision not decoded.
pub fn decode(family: Family, name: &str, rev: u8, d: &[u8]) -> Option<Result<TargetExt, Refusal>> {
    let r = Reader::new(d);
    let v6 = family == Family::Ipv6;
    let alen = if v6 { 16 } else { 4 };
    let res = match (name, rev) {
        ("AUDIT", 0) => r.need(1).and_then(|()| {
            use t::audit::AuditType;
            let kind = match r.u8(0) {
                0 => AuditType::Accept,
                1 => AuditType::Drop,
                2 => AuditType::Reject,
                x => return Err(Refusal::info(format!("type {x}"))),
            };
            Ok(TargetExt::Audit(t::audit::Audit { kind }))
        }),
        ("CLASSIFY", 0) => r
            .need(4)
            .map(|()| TargetExt::Classify(t::classify::Classify { priority: r.u32(0) })),
        ("CONNSECMARK", 0) => r.need(1).and_then(|()| {
            use t::connsecmark::ConnsecmarkMode;
            let mode = match r.u8(0) {
                1 => ConnsecmarkMode::Save,
                2 => ConnsecmarkMode::Restore,
                x => return Err(Refusal::info(format!("mode {x}"))),
            };
            Ok(TargetExt::Connsecmark(t::connsecmark::Connsecmark { mode }))
        }),
        ("DSCP", 0) => r
            .need(1)
            .map(|()| TargetExt::Dscp(t::dscp::Dscp { dscp: r.u8(0) })),
        // struct ipt_ECN_info: operation u8 @0, ip_ect @1, the TCP bits
        // @2 (a bitfield: ECE, CWR from the low end on little-endian
        // hosts, from the high end on big-endian ones).
        ("ECN", 0) => r.need(3).map(|()| {
            let (ece, cwr) = if cfg!(target_endian = "big") {
                (0x80, 0x40)
            } else {
                (0x01, 0x02)
            };
            let bits = r.u8(2);
            TargetExt::Ecn(t::ecn::Ecn {
                operation: r.u8(0),
                ip_ect: r.u8(1),
                ece: bits & ece != 0,
                cwr: bits & cwr != 0,
            })
        }),
        ("HMARK", 0) => r.need(60).map(|()| {
            let four = |at: usize| {
                let mut a = [0; 4];
                a.copy_from_slice(r.bytes(at, 4));
                a
            };
            TargetExt::Hmark(t::hmark::Hmark {
                flags: r.u32(40),
                src_mask: r.addr(0, 16),
                dst_mask: r.addr(16, 16),
                port_mask: four(32),
                port_set: four(36),
                proto_mask: r.u16(44),
                hashrnd: r.u32(48),
                hmodulus: r.u32(52),
                hoffset: r.u32(56),
            })
        }),
        ("IDLETIMER", 1) => r.cstr(4, t::idletimer::LABEL_SIZE).and_then(|label| {
            r.need(34)?;
            Ok(TargetExt::Idletimer(t::idletimer::Idletimer {
                timeout: r.u32(0),
                label,
                alarm: r.u8(33) & 1 != 0,
                send_nl_msg: r.u8(32) != 0,
            }))
        }),
        // struct xt_led_info: id[27] @0 ("netfilter-" and the user's id),
        // always_blink u8 @27, delay u32 @28.
        ("LED", 0) => r.cstr(0, 27).and_then(|full| {
            r.need(32)?;
            let Some(id) = full.strip_prefix("netfilter-") else {
                return Err(Refusal::info(format!("trigger {full:?}")));
            };
            Ok(TargetExt::Led(t::led::Led {
                id: id.to_string(),
                always_blink: r.u8(27) != 0,
                delay: r.u32(28),
            }))
        }),
        ("NETMAP", 0) => netmap(&r, v6),
        ("NFQUEUE", 3) => r.need(6).map(|()| {
            TargetExt::Nfqueue(t::nfqueue::Nfqueue {
                queuenum: r.u16(0),
                queues_total: r.u16(2),
                flags: r.u16(4),
            })
        }),
        ("SNPT", 0) if v6 => npt(&r).map(|n| TargetExt::Snpt(t::npt::Snpt(n))),
        ("DNPT", 0) if v6 => npt(&r).map(|n| TargetExt::Dnpt(t::npt::Dnpt(n))),
        // struct xt_secmark_target_info_v1: mode u8 @0 (SELinux 1),
        // secctx[256] @1.
        ("SECMARK", 1) => r.cstr(1, t::secmark::SECCTX_SIZE).and_then(|selctx| {
            if r.u8(0) != 1 {
                return Err(Refusal::info(format!("mode {}", r.u8(0))));
            }
            Ok(TargetExt::Secmark(t::secmark::Secmark { selctx }))
        }),
        ("SYNPROXY", 0) => r.need(4).map(|()| {
            TargetExt::Synproxy(t::synproxy::Synproxy {
                options: r.u8(0),
                wscale: r.u8(1),
                mss: r.u16(2),
            })
        }),
        ("TCPOPTSTRIP", 0) => r.need(32).map(|()| {
            let mut strip_bmap = [0u32; 8];
            for (i, w) in strip_bmap.iter_mut().enumerate() {
                *w = r.u32(4 * i);
            }
            TargetExt::Tcpoptstrip(t::tcpoptstrip::Tcpoptstrip { strip_bmap })
        }),
        ("TEE", 1) => r.cstr(16, t::tee::OIF_SIZE).map(|oif| {
            TargetExt::Tee(t::tee::Tee {
                gw: r.addr(0, alen),
                oif,
            })
        }),
        ("TOS", 1) => r.need(2).map(|()| {
            TargetExt::Tos(t::tos::Tos {
                value: r.u8(0),
                mask: r.u8(1),
            })
        }),
        ("TPROXY", 1) => r.need(26).map(|()| {
            TargetExt::Tproxy(t::tproxy::Tproxy {
                mark_mask: r.u32(0),
                mark_value: r.u32(4),
                laddr: r.addr(8, alen),
                lport: r.be16(24),
            })
        }),
        ("TTL", 0) if !v6 => hop(&r).map(|h| TargetExt::Ttl(t::ttl::Ttl(h))),
        ("HL", 0) if v6 => hop(&r).map(|h| TargetExt::Hl(t::ttl::Hl(h))),
        ("SNPT" | "DNPT" | "HL", _) if !v6 => Err(Refusal::new("an IPv6 target in an IPv4 table")),
        ("TTL", _) if v6 => Err(Refusal::new("an IPv4 target in an IPv6 table")),
        _ => return None,
    };
    Some(res)
}

/// NETMAP's range (IPv4: `nf_nat_ipv4_multi_range_compat`, IPv6:
/// `nf_nat_range`) back into the prefix: the mask is what min and max
/// share.
fn netmap(r: &Reader, v6: bool) -> Result<TargetExt, Refusal> {
    let (min, max) = if v6 {
        r.need(36)?;
        (r.addr(4, 16), r.addr(20, 16))
    } else {
        r.need(16)?;
        if r.u32(0) != 1 {
            return Err(Refusal::info(format!("{} ranges", r.u32(0))));
        }
        (r.addr(8, 4), r.addr(12, 4))
    };
    let alen = if v6 { 16 } else { 4 };
    let mut mask = [0u8; 16];
    for i in 0..alen {
        mask[i] = !(min[i] ^ max[i]);
    }
    Ok(TargetExt::Netmap(t::netmap::Netmap { addr: min, mask }))
}

/// `struct ip6t_npt_tginfo`: src_pfx @0, dst_pfx @16, src_pfx_len u8
/// @32, dst_pfx_len @33.
fn npt(r: &Reader) -> Result<t::npt::Npt, Refusal> {
    r.need(34)?;
    Ok(t::npt::Npt {
        src_pfx: r.addr(0, 16),
        dst_pfx: r.addr(16, 16),
        src_pfx_len: r.u8(32),
        dst_pfx_len: r.u8(33),
    })
}

/// `struct ipt_TTL_info` / `ip6t_HL_info`: mode u8 @0 (SET 0, INC 1,
/// DEC 2), value u8 @1.
fn hop(r: &Reader) -> Result<t::ttl::HopLimit, Refusal> {
    r.need(2)?;
    use t::ttl::HopMode;
    let mode = match r.u8(0) {
        0 => HopMode::Set,
        1 => HopMode::Inc,
        2 => HopMode::Dec,
        x => return Err(Refusal::info(format!("mode {x}"))),
    };
    Ok(t::ttl::HopLimit {
        mode,
        value: r.u8(1),
    })
}
