//! Lowering of `-j MARK`: the kernel does `mark = (mark & ~mask) ^ value`,
//! which is one `meta` load, one `bitwise` (mask/xor) and one `meta` set; a
//! full mask (`--set-mark V`) needs no load, only an immediate.
//!
//! This file also holds the mark-assignment helper CONNMARK and CT share.
//! Marks are 32-bit host-order values in registers, so constants are written
//! with `to_ne_bytes`.

use crate::lower::{Cx, Result};
use iptables::ext::targets::mark::Mark;
use nft::expr::{ct, meta, reg};
use nft::{Data, Expr};

/// A 32-bit mark: the packet's (`meta mark`) or its conntrack's (`ct mark`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MarkOf {
    Packet,
    Conn,
}

/// Load the mark into register 1. Loading `ct mark` ends the rule (break)
/// when the packet has no conntrack, as the CONNMARK target does nothing then.
pub(crate) fn load(cx: &mut Cx, m: MarkOf) {
    match m {
        MarkOf::Packet => cx.meta(meta::MARK),
        MarkOf::Conn => cx.ct(ct::MARK, None),
    }
}

/// Store register 1 into the mark (`ct mark set` is a no-op without a
/// conntrack).
pub(crate) fn store(cx: &mut Cx, m: MarkOf) {
    cx.push(match m {
        MarkOf::Packet => Expr::MetaSet {
            key: meta::MARK,
            sreg: reg::R1,
        },
        MarkOf::Conn => Expr::CtSet {
            key: ct::MARK,
            sreg: reg::R1,
            dir: None,
        },
    });
}

/// Load a constant into register 1.
pub(crate) fn imm(cx: &mut Cx, data: &[u8]) {
    cx.push(Expr::Immediate {
        dreg: reg::R1,
        data: Data::Value(data.to_vec()),
    });
}

/// `dst = (src & and) ^ xor`; without a source (or with `and == 0`) the
/// result is the constant `xor`.
/// `R1 = (R1 & and) ^ xor` on a 32-bit mark; nothing when that is R1.
pub(crate) fn and_xor(cx: &mut Cx, and: u32, xor: u32) {
    if and != u32::MAX || xor != 0 {
        cx.push(Expr::Bitwise {
            sreg: reg::R1,
            dreg: reg::R1,
            len: 4,
            mask: and.to_ne_bytes().to_vec(),
            xor: xor.to_ne_bytes().to_vec(),
        });
    }
}

pub(crate) fn assign(cx: &mut Cx, dst: MarkOf, src: Option<MarkOf>, and: u32, xor: u32) {
    match src {
        Some(s) if and != 0 => {
            load(cx, s);
            and_xor(cx, and, xor);
        }
        _ => imm(cx, &xor.to_ne_bytes()),
    }
    store(cx, dst);
}

pub fn lower(t: &Mark, cx: &mut Cx) -> Result<()> {
    assign(cx, MarkOf::Packet, Some(MarkOf::Packet), !t.mask, t.mark);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{lower, meta as keys, Expr, Mark};
    use crate::lower::testutil::{bitwise, imm, meta, meta_set, run};
    use ruleset::Family;

    #[test]
    fn forms() {
        let m = keys::MARK;
        // (mark, mask as stored), expressions
        let cases: Vec<((u32, u32), Vec<Expr>)> = vec![
            // --set-mark 0x40 / --set-xmark 0x40/0xffffffff: a constant.
            (
                (0x40, u32::MAX),
                vec![imm(1, &0x40u32.to_ne_bytes()), meta_set(m)],
            ),
            ((0, u32::MAX), vec![imm(1, &[0; 4]), meta_set(m)]),
            // --set-xmark 0x40/0x32
            (
                (0x40, 0x32),
                vec![meta(m), bitwise(0xffff_ffcd, 0x40), meta_set(m)],
            ),
            // --or-mark 0x40
            (
                (0x40, 0x40),
                vec![meta(m), bitwise(!0x40, 0x40), meta_set(m)],
            ),
            // --and-mark 0x40
            ((0, !0x40), vec![meta(m), bitwise(0x40, 0), meta_set(m)]),
            // --xor-mark 0x40
            (
                (0x40, 0),
                vec![meta(m), bitwise(u32::MAX, 0x40), meta_set(m)],
            ),
            // --and-mark 0xffffffff: the mark unchanged (load and store).
            ((0, 0), vec![meta(m), meta_set(m)]),
            // --set-mark 0x5/0x0f (value 5, mask 0xf): keep the high bits.
            ((5, 0xf), vec![meta(m), bitwise(!0xf, 5), meta_set(m)]),
        ];
        for ((mark, mask), want) in cases {
            for fam in [Family::Ipv4, Family::Ipv6] {
                let got = run(fam, |cx| lower(&Mark { mark, mask }, cx)).unwrap();
                assert_eq!(got, want, "mark {mark:#x} mask {mask:#x}");
            }
        }
    }
}
