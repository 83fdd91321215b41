//! The nf_tables expression codec (crate nft): bytes as an expression
//! body (`NFTA_EXPR_NAME` + `NFTA_EXPR_DATA`), as expression lists, and as
//! the attributes of a rule message.
//!
//! Properties: no parser panics on any bytes; whatever parses re-emits to
//! bytes that parse back to the same value (an expression, a list, a rule
//! with its expressions and `NFTA_RULE_COMPAT`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nft::netlink::{Attrs, Writer};
use nft::{expr, Expr, Family, Object, Rule};

fuzz_target!(|data: &[u8]| {
    if let Ok(e) = Expr::parse_body(data) {
        let mut buf = Vec::new();
        e.emit_body(&mut Writer::new(&mut buf));
        let again = Expr::parse_body(&buf);
        assert_eq!(again.as_ref().ok(), Some(&e), "re-emitted {buf:02x?}");
    }
    for a in Attrs::new(data).flatten() {
        if let Ok(list) = expr::parse_list(&a) {
            let mut buf = Vec::new();
            expr::emit_list(&mut Writer::new(&mut buf), a.ty, &list);
            let b = Attrs::new(&buf).next().expect("one nest").expect("well-formed");
            assert_eq!(expr::parse_list(&b).ok(), Some(list));
        }
    }
    if let Ok(r) = Rule::parse(Family::Ipv4, Attrs::new(data)) {
        let mut buf = Vec::new();
        r.emit(&mut Writer::new(&mut buf));
        let again = Rule::parse(Family::Ipv4, Attrs::new(&buf));
        assert_eq!(again.ok(), Some(r));
    }
});
