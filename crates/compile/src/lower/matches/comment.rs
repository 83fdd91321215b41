//! Lowering of `-m comment`: no expression. The text travels in the rule's
//! userdata as nftables' own comment (see `crate::userdata`).

use crate::lower::{Cx, Result};
use iptables::ext::matches::comment::Comment;

pub fn lower(_: &Comment, _: &mut Cx) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run;
    use ruleset::Family;

    #[test]
    fn emits_nothing() {
        let m = Comment { text: "x".into() };
        assert_eq!(run(Family::Ipv6, |cx| lower(&m, cx)).unwrap(), vec![]);
    }
}
