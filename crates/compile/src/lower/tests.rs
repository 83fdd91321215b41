//! Whole rules through [`lower_rule`]: which form each target gets — native
//! expressions, the kernel's xtables extension (nft_compat, with the
//! rule's protocol in NFTA_RULE_COMPAT), or a refusal whose reason names
//! both the missing native form and, where the compat form exists, why the
//! kernel refuses it in nfkeeper's tables.

use super::*;
use iptables::parse::{parse, restore::tokenize, ParseOpts};
use ruleset::{Family, TableKind};

/// How a rule came out.
#[derive(Debug, PartialEq)]
enum Form {
    Native,
    /// nft_compat with this extension name.
    Compat(&'static str),
    /// Refused; the error's text holds every one of these.
    Refused(&'static [&'static str]),
}

fn lower_text(family: Family, table: TableKind, chain: &str, rule: &str) -> Result<Lowered> {
    let words = tokenize(rule).unwrap();
    let mut argv = vec!["-A", chain];
    argv.extend(words.iter().map(String::as_str));
    let o = ParseOpts {
        family,
        restore: true,
        table: Some(table),
        prog: "iptables",
    };
    let parsed = parse(&argv, o).unwrap_or_else(|e| panic!("{rule}: {e:?}"));
    lower_rule(&parsed.rules[0], family, table, chain)
}

#[test]
fn target_forms() {
    use Family::{Ipv4, Ipv6};
    use TableKind::{Filter, Mangle, Nat, Raw};
    const TABLE_MANGLE: &str = "runs only in a table named mangle, and nfkeeper's table is \
                                named nfkeeper_mangle";
    let cases: &[(Family, TableKind, &str, &str, Form)] = &[
        (
            Ipv4,
            Mangle,
            "OUTPUT",
            "-j TOS --set-tos 0x10",
            Form::Native,
        ),
        (Ipv6, Mangle, "OUTPUT", "-j DSCP --set-dscp 6", Form::Native),
        (Ipv4, Mangle, "FORWARD", "-j TTL --ttl-dec 1", Form::Native),
        (Ipv6, Mangle, "FORWARD", "-j HL --hl-inc 2", Form::Native),
        (
            Ipv4,
            Mangle,
            "OUTPUT",
            "-j ECN --ecn-ip-ect 1",
            Form::Native,
        ),
        (
            Ipv4,
            Mangle,
            "PREROUTING",
            "-j TEE --gateway 10.0.0.1",
            Form::Native,
        ),
        (
            Ipv4,
            Nat,
            "PREROUTING",
            "-j NETMAP --to 10.1.0.0/16",
            Form::Native,
        ),
        (Ipv4, Mangle, "INPUT", "-j CONNSECMARK --save", Form::Native),
        (Ipv4, Raw, "PREROUTING", "-j CT --zone 5", Form::Native),
        (
            Ipv4,
            Mangle,
            "INPUT",
            "-j SECMARK --selctx system_u:object_r:ssh_packet_t:s0",
            Form::Native,
        ),
        (
            Ipv4,
            Filter,
            "INPUT",
            "-j TEE --gateway 10.0.0.1 --oif eth0",
            Form::Compat("TEE"),
        ),
        (
            Ipv4,
            Filter,
            "INPUT",
            "-p tcp -j SYNPROXY --mss 1460",
            Form::Compat("SYNPROXY"),
        ),
        (
            Ipv4,
            Mangle,
            "FORWARD",
            "-p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu",
            Form::Compat("TCPMSS"),
        ),
        (
            Ipv4,
            Mangle,
            "POSTROUTING",
            "-p udp -j CHECKSUM --checksum-fill",
            Form::Refused(&["skb_checksum_help", "xtables CHECKSUM target", TABLE_MANGLE]),
        ),
        (
            Ipv6,
            Mangle,
            "POSTROUTING",
            "-j SNPT --src-pfx 2001:db8::/48 --dst-pfx 2001:db9::/48",
            Form::Refused(&["no arithmetic", "xtables SNPT target", TABLE_MANGLE]),
        ),
        (
            Ipv4,
            Mangle,
            "FORWARD",
            "-p tcp -j ECN --ecn-tcp-remove",
            Form::Refused(&["cut short", "xtables ECN target", TABLE_MANGLE]),
        ),
        (
            Ipv4,
            Mangle,
            "PREROUTING",
            "-p tcp -j TPROXY --on-port 1",
            Form::Refused(&["transparent socket", "xtables TPROXY target", TABLE_MANGLE]),
        ),
        (
            Ipv4,
            Mangle,
            "INPUT",
            "-p tcp -j TCPOPTSTRIP --strip-options mss",
            Form::Refused(&["first occurrence", "xtables TCPOPTSTRIP target"]),
        ),
        (
            Ipv4,
            Nat,
            "PREROUTING",
            "-p tcp -j DNAT --to-destination 1.1.1.1:1000-2000/3000",
            Form::Refused(&[
                "NFTA_NAT_REG_PROTO_BASE",
                "xtables DNAT target runs only in a table named nat, and nfkeeper's \
                 table is named nfkeeper_nat",
            ]),
        ),
        (
            Ipv4,
            Nat,
            "mine",
            "-j NETMAP --to 10.1.0.0/16",
            Form::Refused(&["user-defined chain mine", "xtables NETMAP target"]),
        ),
        (
            Ipv4,
            Raw,
            "PREROUTING",
            "-p tcp -j CT --helper ftp",
            // The helper itself is the replay's (compile::replay).
            Form::Native,
        ),
        (
            Ipv4,
            Raw,
            "PREROUTING",
            "-j CT --helper ftp",
            Form::Refused(&[
                "needs -p PROTO",
                "xtables CT target runs only in a table named raw, and nfkeeper's \
                 table is named nfkeeper_raw",
            ]),
        ),
        (
            Ipv4,
            Raw,
            "PREROUTING",
            "-j CT --ctevents new",
            Form::Refused(&["event mask", "xtables CT target"]),
        ),
    ];
    for (family, table, chain, rule, want) in cases {
        let got = lower_text(*family, *table, chain, rule);
        match (want, got) {
            (Form::Native, Ok(l)) => {
                assert_eq!(l.compat, None, "{rule}");
                assert!(
                    !l.exprs
                        .iter()
                        .any(|e| matches!(e, Expr::Target { .. } | Expr::Match { .. })),
                    "{rule}: {:?}",
                    l.exprs
                );
            }
            (Form::Compat(name), Ok(l)) => {
                let Some(Expr::Target { name: got, .. }) = l.exprs.last() else {
                    panic!("{rule}: no target expression: {:?}", l.exprs);
                };
                assert_eq!(got, name, "{rule}");
                let c = l.compat.expect("NFTA_RULE_COMPAT");
                assert_eq!(c, nft::RuleCompat::new(u32::from(proto_of(rule)), false));
            }
            (Form::Refused(texts), Err(e)) => {
                let text = e.to_string();
                for t in *texts {
                    assert!(text.contains(t), "{rule}: `{t}` not in `{text}`");
                }
            }
            (want, got) => panic!("{rule}: want {want:?}, got {got:?}"),
        }
    }
}

/// The protocol number of a case's `-p`.
fn proto_of(rule: &str) -> u8 {
    if rule.contains("-p tcp") {
        6
    } else if rule.contains("-p udp") {
        17
    } else {
        0
    }
}

#[test]
fn objects_are_listed_once() {
    let l = lower_text(
        Family::Ipv4,
        TableKind::Security,
        "INPUT",
        "-j SECMARK --selctx system_u:object_r:ssh_packet_t:s0",
    )
    .unwrap();
    assert_eq!(
        l.objects,
        vec![targets::secmark::object(
            "system_u:object_r:ssh_packet_t:s0"
        )]
    );
    let l = lower_text(
        Family::Ipv4,
        TableKind::Mangle,
        "INPUT",
        "-j TOS --set-tos 1",
    )
    .unwrap();
    assert!(l.objects.is_empty());
}

#[test]
fn maps_to_nft() {
    let l = lower_text(
        Family::Ipv4,
        TableKind::Mangle,
        "OUTPUT",
        "-j TTL --ttl-inc 1",
    )
    .unwrap();
    assert_eq!(l.sets.len(), 1);
    let (s, es) = l.sets[0].to_nft(nft::Family::Ipv4, "t", 7);
    use nft::set::flags;
    assert_eq!(
        s.flags,
        Some(flags::ANONYMOUS | flags::CONSTANT | flags::MAP)
    );
    assert_eq!(
        (s.key_len, s.data_len, s.size),
        (Some(1), Some(1), Some(255))
    );
    assert_eq!(es.elems.len(), 255);
    let e = &es.elems[10];
    assert_eq!(e.key.as_deref(), Some(&[10u8][..]));
    assert_eq!(e.data, Some(Data::Value(vec![11])));
}
