//! Target infos back into `iptables::ext::TargetExt`: the inverse of
//! `compile::compat::targets` (layouts documented there) plus the targets
//! nfkeeper lowers natively (LOG, NFLOG, MARK, NOTRACK, TRACE), whose
//! layouts are given here.

use super::{Reader, Refusal};
use iptables::ext::targets as t;
use iptables::ext::TargetExt;
use ruleset::Family;

/// Every target decoded (here and in [`super::more_targets`]).
pub fn names() -> Vec<&'static str> {
    DECODED
        .iter()
        .chain(super::more_targets::DECODED)
        .copied()
        .collect()
}

/// The targets this module decodes itself.
pub const DECODED: &[&str] = &[
    "REJECT",
    "LOG",
    "NFLOG",
    "DNAT",
    "SNAT",
    "MASQUERADE",
    "REDIRECT",
    "MARK",
    "CONNMARK",
    "CT",
    "NOTRACK",
    "TCPMSS",
    "CHECKSUM",
    "TRACE",
];

/// `XT_CT_NOTRACK` and `XT_CT_NOTRACK_ALIAS` (`-j NOTRACK` loaded as CT).
const CT_NOTRACK: u16 = 1;
const CT_NOTRACK_ALIAS: u16 = 2;
const CT_ZONE_DIR_ORIG: u16 = 1 << 2;
const CT_ZONE_DIR_REPL: u16 = 1 << 3;
const CT_ZONE_MARK: u16 = 1 << 4;

/// Target `name` revision `rev` with info `d` in `family`.
pub fn decode(family: Family, name: &str, rev: u8, d: &[u8]) -> Result<TargetExt, Refusal> {
    let r = Reader::new(d);
    let v6 = family == Family::Ipv6;
    Ok(match (name, rev) {
        ("REJECT", 0) => {
            r.need(4)?;
            let with = r.u32(0);
            if with > 255 {
                return Err(Refusal::info(format!("reject type {with}")));
            }
            TargetExt::Reject(t::reject::Reject {
                v6,
                with: with as u8,
            })
        }
        // struct xt_log_info: level u8 @0, logflags u8 @1, prefix[30] @2.
        ("LOG", 0) => {
            r.need(32)?;
            TargetExt::Log(t::log::Log {
                level: r.u8(0),
                flags: r.u8(1),
                prefix: r.cstr(2, 30)?,
            })
        }
        // struct xt_nflog_info: len u32 @0, group u16 @4, threshold u16
        // @6, flags u16 @8 (COPY_LEN 1), prefix[64] @12.
        ("NFLOG", 0) => {
            r.need(76)?;
            TargetExt::Nflog(t::nflog::Nflog {
                group: r.u16(4),
                prefix: r.cstr(12, 64)?,
                size: (r.u16(8) & 1 != 0).then(|| r.u32(0)),
                threshold: r.u16(6),
            })
        }
        ("SNAT", 0) if !v6 => TargetExt::Snat(t::snat::Snat {
            range: compat_range(&r)?,
        }),
        ("SNAT", 1) => TargetExt::Snat(t::snat::Snat {
            range: range(&r, false)?,
        }),
        ("DNAT", 0) if !v6 => TargetExt::Dnat(t::dnat::Dnat {
            range: compat_range(&r)?,
        }),
        ("DNAT", 1 | 2) => TargetExt::Dnat(t::dnat::Dnat {
            range: range(&r, rev == 2)?,
        }),
        ("MASQUERADE", 0) => TargetExt::Masquerade(t::masquerade::Masquerade {
            range: if v6 {
                range(&r, false)?
            } else {
                compat_range(&r)?
            },
        }),
        ("REDIRECT", 0) => TargetExt::Redirect(t::redirect::Redirect {
            range: if v6 {
                range(&r, false)?
            } else {
                compat_range(&r)?
            },
        }),
        // struct xt_mark_tginfo2: mark u32 @0, mask @4.
        ("MARK", 2) => {
            r.need(8)?;
            TargetExt::Mark(t::mark::Mark {
                mark: r.u32(0),
                mask: r.u32(4),
            })
        }
        // xt_connmark_tginfo1 (ctmark, ctmask, nfmask u32, mode u8 @12);
        // tginfo2 adds shift_dir @12, shift_bits @13 and has mode @14.
        ("CONNMARK", 1 | 2) => {
            r.need(if rev == 1 { 13 } else { 15 })?;
            let (mode_at, shift) = if rev == 1 {
                (12, (false, 0))
            } else {
                (14, (r.u8(12) != 0, r.u8(13)))
            };
            use t::connmark::ConnmarkMode;
            let mode = match r.u8(mode_at) {
                0 => ConnmarkMode::Set,
                1 => ConnmarkMode::Save,
                2 => ConnmarkMode::Restore,
                x => return Err(Refusal::info(format!("mode {x}"))),
            };
            let set = mode == ConnmarkMode::Set;
            TargetExt::Connmark(t::connmark::Connmark {
                mode,
                ctmark: r.u32(0),
                ctmask: r.u32(4),
                // The model's canonical form (see the parser's finish).
                nfmask: if set { u32::MAX } else { r.u32(8) },
                shift_right: shift.1 != 0 && shift.0,
                shift_bits: shift.1,
            })
        }
        ("CT", 0..=2) => ct(&r, rev)?,
        ("NOTRACK", 0) => TargetExt::Notrack(t::notrack::Notrack),
        ("TRACE", 0) => TargetExt::Trace(t::trace::Trace),
        ("TCPMSS", 0) => {
            r.need(2)?;
            TargetExt::Tcpmss(t::tcpmss::Tcpmss { mss: r.u16(0) })
        }
        ("CHECKSUM", 0) => {
            r.need(1)?;
            TargetExt::Checksum(t::checksum::Checksum {
                fill: r.u8(0) & 1 != 0,
            })
        }
        _ if super::more_targets::DECODED.contains(&name) => {
            return super::more_targets::decode(family, name, rev, d)
                .unwrap_or_else(|| Err(Refusal::new(format!("revision {rev} is not decoded"))))
        }
        ("SET", _) => {
            return Err(Refusal::new(
                "ipset sets are named by the kernel's set index; migrate them with \
                 the rule by hand (nfkeeper ipset, then -j SET)",
            ))
        }
        _ if DECODED.contains(&name) => {
            return Err(Refusal::new(format!("revision {rev} is not decoded")))
        }
        _ => return Err(Refusal::new("extension not decoded")),
    })
}

/// `struct nf_nat_ipv4_multi_range_compat` with one range: rangesize u32
/// @0, flags u32 @4, min_ip @8, max_ip @12, ports (network order) @16, @18.
fn compat_range(r: &Reader) -> Result<t::snat::NatRange, Refusal> {
    r.need(20)?;
    if r.u32(0) != 1 {
        return Err(Refusal::info(format!("{} ranges", r.u32(0))));
    }
    Ok(t::snat::NatRange {
        flags: flags8(r.u32(4))?,
        min_addr: r.addr(8, 4),
        max_addr: r.addr(12, 4),
        min_port: r.be16(16),
        max_port: r.be16(18),
        base_port: 0,
    })
}

/// `struct nf_nat_range` (flags u32 @0, min/max address @4/@20, ports
/// @36/@38) or `nf_nat_range2` (base port @40).
fn range(r: &Reader, two: bool) -> Result<t::snat::NatRange, Refusal> {
    r.need(if two { 42 } else { 40 })?;
    Ok(t::snat::NatRange {
        flags: flags8(r.u32(0))?,
        min_addr: r.addr(4, 16),
        max_addr: r.addr(20, 16),
        min_port: r.be16(36),
        max_port: r.be16(38),
        base_port: if two { r.be16(40) } else { 0 },
    })
}

fn flags8(f: u32) -> Result<u8, Refusal> {
    u8::try_from(f).map_err(|_| Refusal::info(format!("range flags {f:#x}")))
}

/// `struct xt_ct_target_info` (rev 0: flags u16 @0, zone u16 @2,
/// ct_events u32 @4, exp_events @8, helper[16] @12) and
/// `xt_ct_target_info_v1` (rev 1, 2: timeout[32] @28 added).
fn ct(r: &Reader, rev: u8) -> Result<TargetExt, Refusal> {
    r.need(if rev == 0 { 28 } else { 60 })?;
    let flags = r.u16(0);
    if flags & CT_NOTRACK_ALIAS != 0 {
        return Ok(TargetExt::Notrack(t::notrack::Notrack));
    }
    use t::ct::ZoneDir;
    let zone_dir = match flags & (CT_ZONE_DIR_ORIG | CT_ZONE_DIR_REPL) {
        0 => ZoneDir::Both,
        CT_ZONE_DIR_ORIG => ZoneDir::Orig,
        CT_ZONE_DIR_REPL => ZoneDir::Reply,
        _ => ZoneDir::Both,
    };
    Ok(TargetExt::Ct(t::ct::Ct {
        notrack: flags & CT_NOTRACK != 0,
        helper: r.cstr(12, 16)?,
        timeout: if rev == 0 {
            String::new()
        } else {
            r.cstr(28, 32)?
        },
        ct_events: r.u32(4),
        exp_events: r.u32(8),
        zone: r.u16(2),
        zone_mark: flags & CT_ZONE_MARK != 0,
        zone_dir,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Infos built by hand from the C layouts, for the targets nfkeeper
    /// lowers natively, and the aliases iptables loads.
    #[test]
    #[cfg(target_endian = "little")]
    fn native_target_infos() {
        let v4 = Family::Ipv4;
        let mut log = vec![6, 0x02];
        log.extend(b"drop: ");
        log.resize(32, 0);
        let mut nflog = vec![64, 0, 0, 0, 3, 0, 2, 0, 1, 0, 0, 0];
        nflog.extend(b"x");
        nflog.resize(80, 0);
        let mut notrack = vec![0u8; 72];
        notrack[0] = 3;
        let cases: Vec<(&str, u8, Vec<u8>, TargetExt)> = vec![
            (
                "LOG",
                0,
                log,
                TargetExt::Log(t::log::Log {
                    level: 6,
                    flags: 2,
                    prefix: "drop: ".into(),
                }),
            ),
            (
                "NFLOG",
                0,
                nflog,
                TargetExt::Nflog(t::nflog::Nflog {
                    group: 3,
                    prefix: "x".into(),
                    size: Some(64),
                    threshold: 2,
                }),
            ),
            (
                "MARK",
                2,
                vec![5, 0, 0, 0, 0xff, 0, 0, 0],
                TargetExt::Mark(t::mark::Mark {
                    mark: 5,
                    mask: 0xff,
                }),
            ),
            ("CT", 2, notrack, TargetExt::Notrack(t::notrack::Notrack)),
            (
                "NOTRACK",
                0,
                vec![],
                TargetExt::Notrack(t::notrack::Notrack),
            ),
            ("TRACE", 0, vec![], TargetExt::Trace(t::trace::Trace)),
        ];
        for (name, rev, info, want) in cases {
            assert_eq!(decode(v4, name, rev, &info), Ok(want), "{name}");
        }
    }

    #[test]
    fn refusals_say_why() {
        let cases: &[(&str, u8, &[u8], &str)] = &[
            ("MARK", 1, &[0; 16], "revision 1 is not decoded"),
            ("RATEEST", 0, &[0; 32], "extension not decoded"),
            (
                "SNAT",
                0,
                &[2, 0, 0, 0],
                "unexpected info (4 bytes, 20 expected)",
            ),
            (
                "CONNMARK",
                2,
                &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0],
                "mode 9",
            ),
        ];
        for (name, rev, info, want) in cases {
            let e = decode(Family::Ipv4, name, *rev, info).unwrap_err();
            assert!(e.0.contains(want), "{name}: {}", e.0);
        }
    }
}
