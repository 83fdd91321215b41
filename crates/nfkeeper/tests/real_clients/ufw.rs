//! ufw 0.36: enable (its before/after rules through iptables-restore -n,
//! IPv6 `-m rt` included), allow, limit (`-m recent`), deny, reject,
//! route, logging, delete, reload and disable, IPv4 and IPv6 (ufw.sh).

use crate::harness::{check, Client};

#[test]
fn ufw() {
    check(&Client {
        name: "ufw",
        script: "ufw.sh",
        case: "",
        needs: &[("ufw", "ufw")],
        known: &[],
        known_failure: None,
    });
}
