//! Printers: save/`-S` form (`save.rs`) and the `-L` table (`list.rs`).

pub mod ctime;
pub mod list;
pub mod save;

pub use save::{save_rule, CounterStyle};

/// How `-p PROTO` prints (iptables 1.8.11's proto_to_name): save and `-S`
/// use only iptables' built-in names (xtables_chain_protos, first name of a
/// number wins), anything else as a number; `-L` tries the built-in names
/// first (so protocol 0 is "all", even with `-n`), then, without `-n`, the
/// protocols database, else the number.
#[cfg(test)]
mod proto_tests {
    use super::{list::rule_row, save::save_rule_body, CounterStyle};
    use crate::parse::{parse, ListFlags, ParseOpts};
    use ruleset::{Counters, Family, TableKind};

    #[test]
    fn protocol_names() {
        // (family, -p argument, save, -L column, -L -n column)
        let cases: &[(Family, &str, &str, &str, &str)] = &[
            (Family::Ipv4, "all", "", "all", "all"),
            (Family::Ipv4, "0", "", "all", "all"),
            (Family::Ipv4, "tcp", " -p tcp", "tcp", "tcp"),
            (Family::Ipv4, "6", " -p tcp", "tcp", "tcp"),
            (Family::Ipv4, "TCP", " -p tcp", "tcp", "tcp"),
            (Family::Ipv4, "udp", " -p udp", "udp", "udp"),
            (Family::Ipv4, "udplite", " -p udplite", "udplite", "udplite"),
            (Family::Ipv4, "sctp", " -p sctp", "sctp", "sctp"),
            (Family::Ipv4, "dccp", " -p dccp", "dccp", "dccp"),
            (Family::Ipv4, "icmp", " -p icmp", "icmp", "icmp"),
            (Family::Ipv4, "esp", " -p esp", "esp", "esp"),
            (Family::Ipv4, "51", " -p ah", "ah", "ah"),
            (Family::Ipv4, "ipcomp", " -p ipcomp", "ipcomp", "ipcomp"),
            (
                Family::Ipv6,
                "icmpv6",
                " -p ipv6-icmp",
                "ipv6-icmp",
                "ipv6-icmp",
            ),
            (
                Family::Ipv6,
                "IPv6-ICMP",
                " -p ipv6-icmp",
                "ipv6-icmp",
                "ipv6-icmp",
            ),
            (
                Family::Ipv6,
                "mh",
                " -p mobility-header",
                "mobility-header",
                "mobility-header",
            ),
            (
                Family::Ipv6,
                "ipv6-mh",
                " -p mobility-header",
                "mobility-header",
                "mobility-header",
            ),
            // Names only the protocols database has.
            (Family::Ipv4, "gre", " -p 47", "gre", "47"),
            (Family::Ipv4, "47", " -p 47", "gre", "47"),
            (Family::Ipv4, "igmp", " -p 2", "igmp", "2"),
            (Family::Ipv6, "ipv6-frag", " -p 44", "ipv6-frag", "44"),
            (Family::Ipv4, "ospf", " -p 89", "ospf", "89"),
            // Numbers without a name anywhere.
            (Family::Ipv4, "200", " -p 200", "200", "200"),
            (Family::Ipv4, "255", " -p 255", "255", "255"),
        ];
        for &(family, p, save, list, numeric) in cases {
            // `! -p all` is refused ("rule would never match protocol").
            for inv in [false, true]
                .into_iter()
                .filter(|i| !*i || !save.is_empty())
            {
                let mut argv = vec!["-A", "INPUT"];
                if inv {
                    argv.push("!");
                }
                argv.extend(["-p", p]);
                let o = ParseOpts {
                    family,
                    restore: true,
                    table: Some(TableKind::Filter),
                    prog: "iptables",
                };
                let rule = &parse(&argv, o)
                    .unwrap_or_else(|e| panic!("{p}: {e:?}"))
                    .rules[0];
                let mut s = String::new();
                save_rule_body(
                    &mut s,
                    family,
                    rule,
                    Counters::default(),
                    CounterStyle::None,
                );
                let want = if inv {
                    format!(" !{save}")
                } else {
                    save.to_string()
                };
                assert_eq!(s, want, "save -p {p} (inverted: {inv})");
                for (n, col) in [(false, list), (true, numeric)] {
                    let flags = ListFlags {
                        numeric: n,
                        ..Default::default()
                    };
                    let mut row = String::new();
                    rule_row(&mut row, family, 1, rule, Counters::default(), &flags);
                    let bang = if inv { '!' } else { ' ' };
                    let head = format!("{:<9} {bang}{col:<4} ", "");
                    assert!(row.starts_with(&head), "-L -p {p} (numeric {n}): {row:?}");
                }
            }
        }
    }
}
