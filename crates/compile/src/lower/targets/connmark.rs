//! Lowering of `-j CONNMARK`. The kernel (xt_CONNMARK, revision 2) does:
//!
//! - set:     `ctmark = ((ctmark & ~ctmask) ^ value) <shift>`
//! - save:    `ctmark = (ctmark & ~ctmask) ^ ((nfmark & nfmask) <shift>)`
//! - restore: `nfmark = (nfmark & ~nfmask) ^ ((ctmark & ctmask) <shift>)`
//!
//! and nothing when the packet has no conntrack. Marks are host-order u32
//! registers, so the mask/xor `bitwise` and the `bitwise` shift (one
//! 32-bit word) compute each step exactly. With only constant operands for
//! mask/xor, one mark can feed a result: save/restore lower natively when
//! one of the two marks is fully kept or fully replaced (a full or empty
//! mask); merging parts of both needs a register-to-register bitwise.

use super::mark::{and_xor, assign, load, store, MarkOf};
use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::connmark::{Connmark, ConnmarkMode};
use nft::expr::{reg, Shift};
use nft::Expr;

const ALL: u32 = u32::MAX;

fn shift_not_native(t: &Connmark) -> LowerError {
    LowerError::not_native(
        format!(
            "-j CONNMARK --{}-shift-mark {}",
            if t.shift_right { "right" } else { "left" },
            t.shift_bits
        ),
        "a shift by 32 or more bits is undefined in the kernel's C (its effect \
         depends on the CPU), and the bitwise shift takes less than 32",
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

/// `v` shifted as the target says; `None` for a shift by 32 bits or more.
fn shifted(t: &Connmark, v: u32) -> Option<u32> {
    match (t.shift_bits, t.shift_right) {
        (0, _) => Some(v),
        (32.., _) => None,
        (b, true) => Some(v >> b),
        (b, false) => Some(v << b),
    }
}

/// `dst = ((src & and) ^ xor) <shift>`; callers pass `and != 0` (an empty
/// `and` makes the result a constant, handled before).
fn assign_shifted(
    cx: &mut Cx,
    t: &Connmark,
    dst: MarkOf,
    src: MarkOf,
    and: u32,
    xor: u32,
) -> Result<()> {
    if t.shift_bits == 0 {
        assign(cx, dst, Some(src), and, xor);
        return Ok(());
    }
    if t.shift_bits >= 32 {
        return Err(shift_not_native(t));
    }
    load(cx, src);
    and_xor(cx, and, xor);
    cx.push(Expr::Shift(Shift {
        sreg: reg::R1,
        dreg: reg::R1,
        len: 4,
        right: t.shift_right,
        amount: u32::from(t.shift_bits),
    }));
    store(cx, dst);
    Ok(())
}

pub fn lower(t: &Connmark, cx: &mut Cx) -> Result<()> {
    let (conn, pkt) = (MarkOf::Conn, MarkOf::Packet);
    match t.mode {
        ConnmarkMode::Set => {
            if t.ctmask == ALL {
                // The new mark is a constant: shift it here.
                let v = shifted(t, t.ctmark).ok_or_else(|| shift_not_native(t))?;
                assign(cx, conn, None, 0, v);
            } else {
                assign_shifted(cx, t, conn, conn, !t.ctmask, t.ctmark)?;
            }
        }
        ConnmarkMode::Save => {
            if t.nfmask == 0 {
                // Nothing of the packet mark: ctmark &= ~ctmask.
                assign(cx, conn, Some(conn), !t.ctmask, 0);
            } else if t.ctmask == ALL {
                assign_shifted(cx, t, conn, pkt, t.nfmask, 0)?;
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
                assign_shifted(cx, t, pkt, conn, t.ctmask, 0)?;
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
            // --set-mark 0x23/0x42 --right-shift-mark 5 (ctmask 0x63):
            // ((ct & ~0x63) ^ 0x23) >> 5
            (
                cm(Set, 0x23, 0x63, ALL, -5),
                vec![
                    ct(c, None),
                    bitwise(!0x63, 0x23),
                    shift(true, 5),
                    ct_set(c, None),
                ],
            ),
            // --save-mark --left-shift-mark 1: ct = nfmark << 1
            (
                cm(Save, 0, ALL, ALL, 1),
                vec![meta(m), shift(false, 1), ct_set(c, None)],
            ),
            // --save-mark --nfmask 0xff00 --right-shift-mark 8
            (
                cm(Save, 0, ALL, 0xff00, -8),
                vec![meta(m), bitwise(0xff00, 0), shift(true, 8), ct_set(c, None)],
            ),
            // --restore-mark --ctmask 0xff --left-shift-mark 31
            (
                cm(Restore, 0, 0xff, ALL, 31),
                vec![ct(c, None), bitwise(0xff, 0), shift(false, 31), meta_set(m)],
            ),
            // --restore-mark --right-shift-mark 1
            (
                cm(Restore, 0, ALL, ALL, -1),
                vec![ct(c, None), shift(true, 1), meta_set(m)],
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
            cm(Set, 0x23, 0x63, ALL, -32),
            cm(Set, 0x23, ALL, ALL, 32),
            cm(Save, 0, ALL, ALL, 40),
            cm(Save, 0, 0xff, 0xff, 0),
            cm(Save, 0, 0xff, 0xff, 3),
            cm(Restore, 0, 0xff, 0xff, 0),
            cm(Restore, 0, 0xff, 0xff, -1),
        ] {
            let e = run(Family::Ipv4, |cx| lower(&t, cx)).unwrap_err();
            assert!(matches!(e, LowerError::NotNative { .. }), "{t:?}");
        }
    }
}
