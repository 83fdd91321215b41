//! Lowering of `-m rpfilter`: the reverse-path check as
//! `fib saddr [. mark] [. iif] oif != 0` (`== 0` with `--invert`).
//!
//! Both xt_rpfilter and `fib ... oif` route the packet's source address
//! back (the mark only with `--validmark`, as `. mark` does) and, unless
//! `--loose`, require the route to use the input device (`. iif`); both
//! pass looped-back packets and a zero source sent to a limited-broadcast
//! or local-multicast address without a lookup, and both fail on a local
//! route. Residual difference (kernel code, both families): xt_rpfilter
//! fails when the reverse route's type is anything but unicast, `fib`
//! only refuses local ones, so a packet whose source address has a
//! broadcast/anycast route passes `fib` (the routing code then drops such
//! a source as martian).
//!
//! `--accept-local` is not native: xt_rpfilter then accepts a local route
//! when it uses the input device, and no `fib` result reports that.

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::matches::rpfilter::Rpfilter;
use nft::expr::{fib, reg, Fib};
use nft::Expr;

pub fn lower(m: &Rpfilter, cx: &mut Cx) -> Result<()> {
    if m.accept_local {
        return Err(LowerError::not_native(
            "-m rpfilter --accept-local",
            "no fib result says whether a local route uses the input device",
        ));
    }
    let mut flags = fib::F_SADDR;
    if m.validmark {
        flags |= fib::F_MARK;
    }
    if !m.loose {
        flags |= fib::F_IIF;
    }
    cx.push(Expr::Fib(Fib {
        dreg: reg::R1,
        result: fib::RESULT_OIF,
        flags,
    }));
    cx.eq(&[0; 4], !m.invert);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::*;
    use ruleset::Family;

    fn rp(loose: bool, validmark: bool, invert: bool) -> Rpfilter {
        Rpfilter {
            loose,
            validmark,
            accept_local: false,
            invert,
        }
    }

    fn oif(flags: u32) -> nft::Expr {
        Expr::Fib(Fib {
            dreg: reg::R1,
            result: fib::RESULT_OIF,
            flags,
        })
    }

    #[test]
    fn lowering() {
        let (s, m, i) = (fib::F_SADDR, fib::F_MARK, fib::F_IIF);
        let cases = [
            (rp(false, false, false), vec![oif(s | i), ne(&[0; 4])]),
            (rp(true, true, false), vec![oif(s | m), ne(&[0; 4])]),
            (rp(false, true, true), vec![oif(s | m | i), eq(&[0; 4])]),
            (rp(true, false, true), vec![oif(s), eq(&[0; 4])]),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (x, want) in &cases {
                assert_eq!(&run(fam, |cx| lower(x, cx)).unwrap(), want, "{x:?}");
            }
            for invert in [false, true] {
                let x = Rpfilter {
                    accept_local: true,
                    ..rp(false, false, invert)
                };
                let e = run(fam, |cx| lower(&x, cx)).unwrap_err();
                assert!(e.to_string().contains("--accept-local"), "{e}");
            }
        }
    }
}
