//! Every target rule nfkeeper accepts must read back from its save form as
//! the same rule (nfkeeper keeps rules as their save text). One row per
//! form of the targets whose values have several spellings or quirks.

use crate::ext::testutil::rule;
use crate::print::save::{save_rule_body, CounterStyle};
use ruleset::{Counters, Family, TableKind};

const ROWS: &[(Family, TableKind, &str, &str)] = &[
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j AUDIT --type DROP"),
    (Family::Ipv4, TableKind::Mangle, "FORWARD", "-j CLASSIFY --set-class 1:-1"),
    (Family::Ipv6, TableKind::Security, "INPUT", "-j CONNSECMARK --restore"),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-j DSCP --set-dscp-class af41"),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-j TOS --set-tos Minimize-Cost"),
    (Family::Ipv6, TableKind::Mangle, "OUTPUT", "-j TOS --and-tos 0x12"),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-p tcp -j ECN --ecn-tcp-remove --ecn-ip-ect 3"),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-p tcp -j ECN --ecn-tcp-ece 0 --ecn-tcp-cwr 0"),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-j TTL --ttl-dec 0x10"),
    (Family::Ipv6, TableKind::Mangle, "OUTPUT", "-j HL --hl-inc 3"),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-tuple sport,dport,proto,src,dst,ct --hmark-rnd 1 --hmark-mod 2 --hmark-offset 9",
    ),
    (
        Family::Ipv6,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-tuple spi,src --hmark-dst-prefix ffff:: --hmark-spi 7 --hmark-rnd 1 --hmark-mod 2",
    ),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-sport 3 --hmark-dport 4 --hmark-proto-mask 0xffff --hmark-rnd 1 --hmark-mod 2",
    ),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j IDLETIMER --timeout 9 --label x --alarm --send_nl_msg"),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j LED --led-trigger-id \"a\\\"b\" --led-delay 7 --led-always-blink"),
    (Family::Ipv4, TableKind::Nat, "PREROUTING", "-j NETMAP --to 1.2.3.4/255.0.255.0"),
    (Family::Ipv6, TableKind::Nat, "POSTROUTING", "-j NETMAP --to dead::beef/ffff::ff00"),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j NFQUEUE --queue-balance 4: --queue-cpu-fanout --queue-bypass"),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j NFQUEUE --queue-bypass"),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j RATEEST --rateest-name r --rateest-interval 0.3s --rateest-ewmalog 10s",
    ),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j RATEEST --rateest-name r --rateest-interval 8s --rateest-ewmalog 4000s",
    ),
    (Family::Ipv4, TableKind::Security, "INPUT", "-j SECMARK --selctx a:b:c:s0"),
    (
        Family::Ipv4,
        TableKind::Mangle,
        "FORWARD",
        "-j SET --map-set m src,dst --map-prio --add-set a dst --timeout 5 --exist --del-set d src",
    ),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-p tcp -j SYNPROXY --wscale 300 --mss 65537 --ecn"),
    (Family::Ipv6, TableKind::Mangle, "INPUT", "-p tcp -j TCPOPTSTRIP --strip-options md5,0xff,sack"),
    (Family::Ipv6, TableKind::Mangle, "INPUT", "-p tcp -j TCPOPTSTRIP"),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j TEE --gateway 10.1 --oif abcdefghijklmnopq"),
    (Family::Ipv6, TableKind::Mangle, "PREROUTING", "-p udp -j TPROXY --on-port ssh --tproxy-mark 1"),
    (Family::Ipv6, TableKind::Mangle, "PREROUTING", "-j DNPT --src-pfx 1::/ffff:: --dst-pfx 2::/16"),
    (Family::Ipv6, TableKind::Mangle, "POSTROUTING", "-j SNPT --src-pfx 1::/64 --dst-pfx 2::/64"),
];

#[test]
fn save_reads_back() {
    for (fam, table, chain, text) in ROWS {
        let first = rule(*fam, *table, chain, text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        let mut saved = String::new();
        save_rule_body(
            &mut saved,
            *fam,
            &first,
            Counters::default(),
            CounterStyle::None,
        );
        let again = rule(*fam, *table, chain, &saved).unwrap_or_else(|e| panic!("{saved}: {e:?}"));
        assert_eq!(first, again, "{text} saved as {saved}");
    }
}
