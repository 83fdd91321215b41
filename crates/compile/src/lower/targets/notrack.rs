//! Lowering of `-j NOTRACK`: the `notrack` expression (both leave an
//! untracked packet's conntrack alone and mark others untracked).

use crate::lower::{Cx, Result};
use iptables::ext::targets::notrack::Notrack;
use nft::Expr;

pub fn lower(_: &Notrack, cx: &mut Cx) -> Result<()> {
    cx.push(Expr::Notrack);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn notrack() {
        for fam in [Family::Ipv4, Family::Ipv6] {
            assert_eq!(
                run(fam, |cx| lower(&Notrack, cx)).unwrap(),
                vec![Expr::Notrack]
            );
        }
    }
}
