//! Byte goldens of the nft_compat expressions (`match`, `target`) and of
//! a rule's `NFTA_RULE_COMPAT`, rendered as annotated rows (see
//! common/golden.rs).

mod common;

use common::golden::{golden, one};
use nft::{Expr, Family, Rule, RuleCompat};

/// `-p tcp -m recent ... -j CHECKSUM`-shaped: a match, a target and the
/// rule's protocol, inverted (`! -p tcp`).
#[test]
fn golden_match_target_and_rule_compat() {
    let r = Rule {
        compat: Some(RuleCompat::new(6, true)),
        ..Rule::new(
            Family::Ipv4,
            "t",
            "c",
            vec![
                Expr::Match {
                    name: "recent".into(),
                    rev: 1,
                    info: vec![0xaa; 8],
                },
                Expr::Target {
                    name: "CHECKSUM".into(),
                    rev: 0,
                    info: vec![1, 0, 0, 0, 0, 0, 0, 0],
                },
            ],
        )
    };
    // match: NAME "recent" (NUL-terminated), REV 1 (big-endian), INFO
    // the raw info bytes. target: the same layout. Then NFTA_RULE_COMPAT
    // (5): PROTO 6, FLAGS 2 (NFT_RULE_COMPAT_F_INV), both big-endian —
    // the bytes iptables-nft sends for `! -p tcp`.
    golden(
        &one(&r),
        "msg len=168 type=0x0a06 flags=0x0401 seq=1 family=2 res_id=0000
        |    6    1 74 00
        |    6    2 63 00
        |  112 nest 4
        |     52 nest 1
        |       10    1 6d 61 74 63 68 00
        |       36 nest 2
        |         11    1 72 65 63 65 6e 74 00
        |          8    2 00 00 00 01
        |         12    3 aa aa aa aa aa aa aa aa
        |     56 nest 1
        |       11    1 74 61 72 67 65 74 00
        |       40 nest 2
        |         13    1 43 48 45 43 4b 53 55 4d 00
        |          8    2 00 00 00 00
        |         12    3 01 00 00 00 00 00 00 00
        |   20 nest 5
        |      8    1 00 00 00 06
        |      8    2 00 00 00 02
        ",
    );
}
