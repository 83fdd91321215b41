//! fail2ban 1.0.2: jails on a test log driven by fail2ban-client (start,
//! banip and unbanip of IPv4 and IPv6 addresses, stop), one case per kind
//! of action (fail2ban.sh). fail2ban exits 0 when an action fails; its
//! log's errors are compared.

use crate::harness::{check, Client};

const NEEDS: &[(&str, &str)] = &[
    ("fail2ban-client", "fail2ban"),
    ("fail2ban-server", "fail2ban"),
];

/// iptables-multiport (`-m multiport --dports`) and iptables-allports
/// (whole-chain jumps), each with its own chain.
#[test]
fn fail2ban_iptables() {
    check(&Client {
        name: "fail2ban-iptables",
        script: "fail2ban.sh",
        case: "iptables",
        needs: NEEDS,
        known: &[],
        known_failure: None,
    });
}

/// iptables-ipset: `ipset create … timeout`, `-m set --match-set` rules,
/// members added and deleted by ipset (nfkeeper's own ipsets, looked up
/// natively by the rules: issue 19).
#[test]
fn fail2ban_ipset() {
    check(&Client {
        name: "fail2ban-ipset",
        script: "fail2ban.sh",
        case: "ipset",
        needs: &[
            ("fail2ban-client", "fail2ban"),
            ("fail2ban-server", "fail2ban"),
            ("ipset", "ipset"),
        ],
        known: &[],
        known_failure: None,
    });
}
