//! Lowering of `-j CONNMARK`. The kernel (xt_CONNMARK, revision 2) does:
//!
//! - set:     `ctmark = ((ctmark & ~ctmask) ^ value) <shift>`
//! - save:    `ctmark = (ctmark & ~ctmask) ^ ((nfmark & nfmask) <shift>)`
//! - restore: `nfmark = (nfmark & ~nfmask) ^ ((ctmark & ctmask) <shift>)`
//!
//! and nothing when the packet has no conntrack. With the mask/xor `bitwise`
//! only one mark can feed a result, so save/restore lower natively when one
//! of the two operands is constant (a full or empty mask), and a shift only
//! when what it shifts is a constant; the rest needs a register-to-register
//! bitwise or a shift, which `nft::Expr::Bitwise` does not emit.

use super::mark::{assign, load, MarkOf};
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::connmark::{Connmark, ConnmarkMode};

const ALL: u32 = u32::MAX;

fn shift_not_native(t: &Connmark) -> LowerError {
    LowerError::not_native(
        format!(
            "-j CONNMARK --{}-shift-mark {}",
            if t.shift_right { "right" } else { "left" },
            t.shift_bits
        ),
        "shifting a mark read from the packet or conntrack needs the bitwise \
         shift operation, which nft::Expr::Bitwise (mask/xor) does not emit",
    )
}

fn combine_not_native(what: &str) -> LowerError {
    LowerError::not_native(
        format!("-j CONNMARK --{what}-mark with partial --nfmask/--ctmask"),
        "merging bits of the packet mark into the conntrack mark (or back) \
         needs a register-to-register bitwise operation, which \
         nft::Expr::Bitwise (mask/xor with constants) cannot express",
    )
}

/// `v` shifted as the target says; `None` for a shift by 32 bits (undefined
/// in the kernel's C, so its effect depends on the CPU).
fn shifted(t: &Connmark, v: u32) -> Option<u32> {
    match (t.shift_bits, t.shift_right) {
        (0, _) => Some(v),
        (32.., _) => None,
        (b, true) => Some(v >> b),
        (b, false) => Some(v << b),
    }
}

pub fn lower(t: &Connmark, cx: &mut Cx) -> Result<()> {
    let (conn, pkt) = (MarkOf::Conn, MarkOf::Packet);
    match t.mode {
        ConnmarkMode::Set => {
            if t.shift_bits == 0 {
                assign(cx, conn, Some(conn), !t.ctmask, t.ctmark);
            } else if t.ctmask == ALL {
                // The new mark is a constant: shift it here.
                let v = shifted(t, t.ctmark).ok_or_else(|| shift_not_native(t))?;
                assign(cx, conn, None, 0, v);
            } else {
                return Err(shift_not_native(t));
            }
        }
        ConnmarkMode::Save => {
            if t.nfmask == 0 {
                // Nothing of the packet mark: ctmark &= ~ctmask.
                assign(cx, conn, Some(conn), !t.ctmask, 0);
            } else if t.ctmask == ALL {
                if t.shift_bits != 0 {
                    return Err(shift_not_native(t));
                }
                assign(cx, conn, Some(pkt), t.nfmask, 0);
            } else {
                return Err(combine_not_native("save"));
            }
        }
        ConnmarkMode::Restore => {
            if t.ctmask == 0 {
                // Nothing of the conntrack mark: nfmark &= ~nfmask, but only
                // for packets with a conntrack (the ct load breaks otherwise).
                load(cx, conn);
                assign(cx, pkt, Some(pkt), !t.nfmask, 0);
            } else if t.nfmask == ALL {
                if t.shift_bits != 0 {
                    return Err(shift_not_native(t));
                }
                assign(cx, pkt, Some(conn), t.ctmask, 0);
            } else {
                return Err(combine_not_native("restore"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use nft::expr::{ct, meta};
    use nft::Expr;
    use ruleset::Family;

    fn cm(mode: ConnmarkMode, ctmark: u32, ctmask: u32, nfmask: u32, shift: i8) -> Connmark {
        Connmark {
            mode,
            ctmark,
            ctmask,
            nfmask,
            shift_right: shift < 0,
            shift_bits: shift.unsigned_abs(),
        }
    }

    #[test]
    fn forms() {
        use ConnmarkMode::*;
        let (c, m) = (ct::MARK, meta::MARK);
        let cases: Vec<(Connmark, Vec<Expr>)> = vec![
            // --set-mark 0x16
            (
                cm(Set, 0x16, ALL, ALL, 0),
                vec![imm(1, &0x16u32.to_ne_bytes()), ct_set(c, None)],
            ),
            // --set-xmark 0x16/0x12: (ct & ~0x12) ^ 0x16
            (
                cm(Set, 0x16, 0x12, ALL, 0),
                vec![ct(c, None), bitwise(!0x12, 0x16), ct_set(c, None)],
            ),
            // --and-mark 0x16
            (
                cm(Set, 0, !0x16, ALL, 0),
                vec![ct(c, None), bitwise(0x16, 0), ct_set(c, None)],
            ),
            // --set-mark 0x10 --left-shift-mark 4: a constant 0x100.
            (
                cm(Set, 0x10, ALL, ALL, 4),
                vec![imm(1, &0x100u32.to_ne_bytes()), ct_set(c, None)],
            ),
            (
                cm(Set, 0x10, ALL, ALL, -4),
                vec![imm(1, &1u32.to_ne_bytes()), ct_set(c, None)],
            ),
            // --save-mark
            (cm(Save, 0, ALL, ALL, 0), vec![meta(m), ct_set(c, None)]),
            // --save-mark --nfmask 0xff (ctmask all ones)
            (
                cm(Save, 0, ALL, 0xff, 0),
                vec![meta(m), bitwise(0xff, 0), ct_set(c, None)],
            ),
            // --save-mark --nfmask 0 --ctmask 0xf0: ct &= ~0xf0
            (
                cm(Save, 0, 0xf0, 0, 3),
                vec![ct(c, None), bitwise(!0xf0, 0), ct_set(c, None)],
            ),
            // --restore-mark
            (cm(Restore, 0, ALL, ALL, 0), vec![ct(c, None), meta_set(m)]),
            // --restore-mark --ctmask 0xff (nfmask all ones)
            (
                cm(Restore, 0, 0xff, ALL, 0),
                vec![ct(c, None), bitwise(0xff, 0), meta_set(m)],
            ),
            // --restore-mark --ctmask 0 --nfmask 0xf: guarded nfmark &= ~0xf
            (
                cm(Restore, 0, 0, 0xf, -2),
                vec![ct(c, None), meta(m), bitwise(!0xf, 0), meta_set(m)],
            ),
            // --restore-mark --ctmask 0 --nfmask 0xffffffff: nfmark = 0
            (
                cm(Restore, 0, 0, ALL, 0),
                vec![ct(c, None), imm(1, &[0; 4]), meta_set(m)],
            ),
        ];
        for (t, want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                assert_eq!(run(fam, |cx| lower(&t, cx)).unwrap(), want, "{t:?}");
            }
        }
    }

    #[test]
    fn not_native() {
        use ConnmarkMode::*;
        for t in [
            cm(Set, 0x23, 0x63, ALL, -5),
            cm(Set, 0x23, ALL, ALL, 32),
            cm(Save, 0, 0xff, 0xff, 0),
            cm(Save, 0, ALL, ALL, 1),
            cm(Restore, 0, 0xff, 0xff, 0),
            cm(Restore, 0, ALL, ALL, -1),
        ] {
            let e = run(Family::Ipv4, |cx| lower(&t, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }), "{t:?}");
        }
    }
}
