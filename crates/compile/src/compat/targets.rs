//! Target extensions lowered through nft_compat (see [`super`]): for each
//! target, the revision iptables 1.8 loads on a current kernel and its info
//! as the kernel reads it. One module per extension.

mod audit;
mod checksum;
mod classify;
mod connmark;
mod connsecmark;
mod ct;
mod dscp;
mod ecn;
mod hmark;
mod idletimer;
mod layout;
mod led;
mod nat;
mod netmap;
mod nfqueue;
mod npt;
mod rateest;
mod reject;
mod secmark;
pub mod set;
mod synproxy;
mod tcpmss;
mod tcpoptstrip;
mod tee;
mod tos;
mod tproxy;
mod ttl;

use super::tables::{required_tables, Kind};
use super::CompatInfo;
use iptables::ext::TargetExt;
use ruleset::Family;

/// The compat form of target `t` in `family` that the kernel accepts in
/// nfkeeper's tables, if it has one: [`layout`], except for the targets
/// the kernel runs only in tables of other names (see
/// [`super::tables`]), which have none.
pub fn info(t: &TargetExt, family: Family) -> Option<CompatInfo> {
    layout(t, family).filter(|c| required_tables(Kind::Target, c.name).is_none())
}

/// The nft_compat `target` expression's name, revision and info for `t`
/// in `family` as the kernel reads them (what iptables-nft loads), whether
/// or not the kernel accepts it in nfkeeper's tables (see [`info`]).
/// `None` for the targets that always lower to native expressions (LOG,
/// NFLOG, MARK, NOTRACK, TRACE) and for SET, whose info holds the kernel's
/// set indexes (see [`set::info`]).
pub fn layout(t: &TargetExt, family: Family) -> Option<CompatInfo> {
    let v6 = family == Family::Ipv6;
    Some(match t {
        TargetExt::Audit(x) => audit::info(x),
        TargetExt::Checksum(x) => checksum::info(x),
        TargetExt::Classify(x) => classify::info(x),
        TargetExt::Connmark(x) => connmark::info(x),
        TargetExt::Connsecmark(x) => connsecmark::info(x),
        TargetExt::Ct(x) => ct::info(x),
        TargetExt::Dscp(x) => dscp::info(x),
        TargetExt::Ecn(x) => ecn::info(x),
        TargetExt::Hl(x) => ttl::info(&x.0, "HL"),
        TargetExt::Hmark(x) => hmark::info(x),
        TargetExt::Idletimer(x) => idletimer::info(x),
        TargetExt::Led(x) => led::info(x),
        TargetExt::Netmap(x) => netmap::info(x, v6),
        TargetExt::Nfqueue(x) => nfqueue::info(x),
        TargetExt::Rateest(x) => rateest::info(x),
        TargetExt::Reject(x) => reject::info(x),
        TargetExt::Secmark(x) => secmark::info(x),
        TargetExt::Snpt(x) => npt::info(&x.0, "SNPT"),
        TargetExt::Dnpt(x) => npt::info(&x.0, "DNPT"),
        TargetExt::Synproxy(x) => synproxy::info(x),
        TargetExt::Tcpmss(x) => tcpmss::info(x),
        TargetExt::Tcpoptstrip(x) => tcpoptstrip::info(x),
        TargetExt::Tee(x) => tee::info(x),
        TargetExt::Tos(x) => tos::info(x),
        TargetExt::Tproxy(x) => tproxy::info(x),
        TargetExt::Ttl(x) => ttl::info(&x.0, "TTL"),
        TargetExt::Snat(x) => nat::snat(&x.range, v6),
        TargetExt::Dnat(x) => nat::dnat(&x.range),
        TargetExt::Masquerade(x) => nat::masquerade(&x.range, v6),
        TargetExt::Redirect(x) => nat::redirect(&x.range, v6),
        TargetExt::Set(_)
        | TargetExt::Log(_)
        | TargetExt::Nflog(_)
        | TargetExt::Mark(_)
        | TargetExt::Notrack(_)
        | TargetExt::Trace(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables::parse::{parse, restore::tokenize, ParseOpts};
    use iptables::Target;
    use ruleset::TableKind;

    /// The info of the target of `-A chain rule` in `table`.
    fn encode(family: Family, table: TableKind, chain: &str, rule: &str) -> CompatInfo {
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
        let Target::Ext(t) = &parsed.rules[0].target else {
            panic!("{rule}: no target extension");
        };
        if let TargetExt::Set(s) = &**t {
            let index = |n: &str| {
                ["a", "b", "m"]
                    .iter()
                    .position(|x| *x == n)
                    .map(|i| i as u16)
            };
            return set::info(s, index).unwrap();
        }
        layout(t, family).unwrap_or_else(|| panic!("{rule}: no compat form"))
    }

    /// The targets the kernel refuses in nfkeeper's tables have a layout
    /// but no compat form; the others have both.
    #[test]
    fn info_leaves_out_table_bound_targets() {
        use TableKind::{Filter, Mangle, Nat, Raw};
        let cases: &[(Family, TableKind, &str, bool)] = &[
            (Family::Ipv4, Mangle, "-j TOS --set-tos 1", false),
            (
                Family::Ipv4,
                Mangle,
                "-p udp -j CHECKSUM --checksum-fill",
                false,
            ),
            (Family::Ipv4, Raw, "-j CT --zone 1", false),
            (Family::Ipv4, Nat, "-j NETMAP --to 1.2.3.0/24", false),
            (Family::Ipv6, Mangle, "-j HL --hl-set 1", false),
            (Family::Ipv4, Filter, "-j TEE --gateway 1.2.3.4", true),
            (
                Family::Ipv4,
                Mangle,
                "-p tcp -j TCPMSS --set-mss 1400",
                true,
            ),
            (Family::Ipv4, Filter, "-j AUDIT --type accept", true),
        ];
        for (fam, table, rule, offered) in cases {
            let words = tokenize(rule).unwrap();
            let mut argv = vec!["-A", "OUTPUT"];
            argv.extend(words.iter().map(String::as_str));
            let o = ParseOpts {
                family: *fam,
                restore: true,
                table: Some(*table),
                prog: "iptables",
            };
            let parsed = parse(&argv, o).unwrap_or_else(|e| panic!("{rule}: {e:?}"));
            let Target::Ext(t) = &parsed.rules[0].target else {
                panic!("{rule}");
            };
            assert!(layout(t, *fam).is_some(), "{rule}");
            assert_eq!(info(t, *fam).is_some(), *offered, "{rule}");
        }
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// Golden infos. Each rule is also among the kernel test's cases
    /// (tests/compat_targets_kernel.rs), which found iptables-nft to load
    /// these bytes; LED's come from its struct (this kernel lacks it).
    #[test]
    #[cfg(target_endian = "little")]
    fn layouts() {
        use Family::{Ipv4, Ipv6};
        use TableKind::{Filter, Mangle, Nat, Raw};
        // family, table, chain, rule, name, revision, info in hex
        let cases: &[(Family, TableKind, &str, &str, &str, u32, &str)] = &[
            (
                Ipv4,
                Filter,
                "INPUT",
                "-j AUDIT --type reject",
                "AUDIT",
                0,
                "0200000000000000",
            ),
            (
                Ipv4,
                Mangle,
                "FORWARD",
                "-p tcp -j ECN --ecn-tcp-cwr 1 --ecn-tcp-ece 0 --ecn-ip-ect 2",
                "ECN",
                0,
                "3102020000000000",
            ),
            (
                Ipv4,
                Mangle,
                "POSTROUTING",
                "-j CLASSIFY --set-class 1:10",
                "CLASSIFY",
                0,
                "1000010000000000",
            ),
            (
                Ipv4,
                Filter,
                "INPUT",
                "-j NFQUEUE --queue-balance 4:6 --queue-cpu-fanout",
                "NFQUEUE",
                3,
                "0400030002000000",
            ),
            (
                Ipv6,
                Raw,
                "OUTPUT",
                "-p tcp -j CT --zone-reply mark --helper ftp --ctevents new,secmark",
                "CT",
                2,
                concat!(
                    "1800000001020000000000006674700000000000000000000000000000000000",
                    "0000000000000000000000000000000000000000000000000000000000000000",
                    "0000000000000000",
                ),
            ),
            (
                Ipv4,
                Raw,
                "PREROUTING",
                "-p tcp -j CT --timeout t1 --expevents new",
                "CT",
                2,
                concat!(
                    "0000000000000000010000000000000000000000000000000000000074310000",
                    "0000000000000000000000000000000000000000000000000000000000000000",
                    "0000000000000000",
                ),
            ),
            (
                Ipv4,
                Filter,
                "INPUT",
                "-j IDLETIMER --timeout 42 --label bar --alarm",
                "IDLETIMER",
                1,
                concat!(
                    "2a00000062617200000000000000000000000000000000000000000000000000",
                    "00010000000000000000000000000000",
                ),
            ),
            (
                Ipv4,
                Filter,
                "INPUT",
                "-j LED --led-trigger-id foo --led-delay 42 --led-always-blink",
                "LED",
                0,
                concat!(
                    "6e657466696c7465722d666f6f0000000000000000000000000000012a000000",
                    "0000000000000000",
                ),
            ),
            (
                Ipv4,
                Nat,
                "POSTROUTING",
                "-p udp -j SNAT --to-source 1.2.3.4-1.2.3.9:100-200 --random-fully --persistent",
                "SNAT",
                0,
                "010000001b0000000102030401020309006400c800000000",
            ),
            (
                Ipv6,
                Nat,
                "PREROUTING",
                "-p tcp -j DNAT --to-destination [dead::beef]:10-20/21",
                "DNAT",
                2,
                concat!(
                    "23000000dead000000000000000000000000beefdead00000000000000000000",
                    "0000beef000a00140015000000000000",
                ),
            ),
            (
                Ipv4,
                Nat,
                "PREROUTING",
                "-j NETMAP --to 1.2.3.0/24",
                "NETMAP",
                0,
                "010000000100000001020300010203ff0000000000000000",
            ),
            (
                Ipv4,
                Filter,
                "INPUT",
                "-j HMARK --hmark-src-prefix 24 --hmark-sport 0x1234 --hmark-dport 5 --hmark-rnd 1 --hmark-mod 2 --hmark-offset 3",
                "HMARK",
                0,
                concat!(
                    "ffffff0000000000000000000000000000000000000000000000000000000000",
                    "0000000012340005310e00000000000001000000020000000300000000000000",
                ),
            ),
            (
                Ipv6,
                Mangle,
                "PREROUTING",
                "-p udp -j TPROXY --on-port 12345 --on-ip 2001:db8::1 --tproxy-mark 0x23/0xff",
                "TPROXY",
                1,
                "ff0000002300000020010db80000000000000000000000013039000000000000",
            ),
            (
                Ipv6,
                Mangle,
                "POSTROUTING",
                "-j SNPT --src-pfx 2001:db8::/48 --dst-pfx 2001:db9::/48",
                "SNPT",
                0,
                concat!(
                    "20010db800000000000000000000000020010db9000000000000000000000000",
                    "3030000000000000",
                ),
            ),
            (
                Ipv4,
                Mangle,
                "FORWARD",
                "-j SET --map-set m src --map-mark --add-set a src,dst --timeout 10",
                "SET",
                3,
                "00000202ffff000002000102000100000a00000000000000",
            ),
            (
                Ipv6,
                Mangle,
                "INPUT",
                "-p tcp -j TCPOPTSTRIP --strip-options md5,timestamp,255",
                "TCPOPTSTRIP",
                0,
                "0001080000000000000000000000000000000000000000000000000000000080",
            ),
            (
                Ipv4,
                Mangle,
                "FORWARD",
                "-j CONNMARK --save-mark --nfmask 0xff --ctmask 0xf0 --right-shift-mark 4",
                "CONNMARK",
                2,
                "00000000f0000000ff00000001040100",
            ),
            (
                Ipv4,
                Filter,
                "INPUT",
                "-j RATEEST --rateest-name x --rateest-interval 1s --rateest-ewmalog 8s",
                "RATEEST",
                0,
                "7800000000000000000000000000000000030000000000000000000000000000",
            ),
            (
                Ipv6,
                Filter,
                "INPUT",
                "-j TEE --gateway 2001:db8::1 --oif lo",
                "TEE",
                1,
                concat!(
                    "20010db80000000000000000000000016c6f0000000000000000000000000000",
                    "0000000000000000",
                ),
            ),
            (
                Ipv4,
                Filter,
                "INPUT",
                "-p tcp -j REJECT --reject-with tcp-reset",
                "REJECT",
                0,
                "0700000000000000",
            ),
        ];
        for (fam, table, chain, rule, name, rev, want) in cases {
            let got = encode(*fam, *table, chain, rule);
            assert_eq!((got.name, got.rev), (*name, *rev), "{rule}");
            assert_eq!(hex(&got.info), *want, "{rule}");
        }
    }
}
