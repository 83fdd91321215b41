//! Lowering of `-j SNPT` and `-j DNPT` (ip6t_NPT.c, RFC 6296 prefix
//! translation): no native form. The translation replaces the prefix and
//! adds a one's complement adjustment to a 16-bit word of the address
//! (searching for a word that is not 0xffff when the prefix is longer than
//! 48 bits, and answering with an ICMPv6 parameter problem when there is
//! none), so that transport checksums stay valid; nftables has no
//! arithmetic. And the kernel runs ip6t_NPT only in a table named mangle
//! (see `compat::tables`).

use crate::lower::{Cx, LowerError, Result};
use iptables::ext::targets::npt::{Dnpt, Snpt};

fn refuse(target: &str) -> Result<()> {
    Err(LowerError::not_native(
        format!("-j {target}"),
        "the checksum-neutral prefix translation adds a one's complement \
         adjustment to an address word, and nftables has no arithmetic",
    ))
}

pub fn lower_snpt(_: &Snpt, _: &mut Cx) -> Result<()> {
    refuse("SNPT")
}

pub fn lower_dnpt(_: &Dnpt, _: &mut Cx) -> Result<()> {
    refuse("DNPT")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use iptables::ext::targets::npt::Npt;
    use ruleset::Family;

    #[test]
    fn not_native() {
        let npt = Npt {
            src_pfx: [0; 16],
            dst_pfx: [0; 16],
            src_pfx_len: 48,
            dst_pfx_len: 48,
        };
        let e = run(Family::Ipv6, |cx| lower_snpt(&Snpt(npt.clone()), cx)).unwrap_err();
        assert!(matches!(e, LowerError::NotNative { .. }));
        let e = run(Family::Ipv6, |cx| lower_dnpt(&Dnpt(npt), cx)).unwrap_err();
        assert!(matches!(e, LowerError::NotNative { .. }));
    }
}
