//! Synthetic rulesets as iptables-restore text, in the shapes the studies
//! behind nfkeeper used: Cloud Foundry (one `-s ADDR -j ACCEPT` rule per
//! container) and kube-proxy (per-service chains with comments, statistic,
//! DNAT and MARK). Deterministic: the same arguments give the same text.
//!
//! What it is not: a parser or a model; it only writes text.

use std::fmt::Write;

/// The address of the i-th Cloud Foundry rule: 10.a.b.c with c in 1..=254.
pub fn cf_addr(i: usize) -> [u8; 4] {
    let c = (i % 254) as u8 + 1;
    let rest = i / 254;
    [10, ((rest / 256) % 256) as u8, (rest % 256) as u8, c]
}

/// `*filter` with `n` rules `-A FORWARD -s 10.a.b.c/32 -j ACCEPT`.
pub fn cloud_foundry(n: usize) -> String {
    let mut s = String::with_capacity(n * 44 + 128);
    s.push_str("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for i in 0..n {
        let a = cf_addr(i);
        let _ = writeln!(
            s,
            "-A FORWARD -s {}.{}.{}.{}/32 -j ACCEPT",
            a[0], a[1], a[2], a[3]
        );
    }
    s.push_str("COMMIT\n");
    s
}

/// A kube-proxy-like `*nat` table with about `rules` rules: per service a
/// KUBE-SVC chain jumped to from KUBE-SERVICES, two endpoints chosen by
/// statistic, and per endpoint a KUBE-SEP chain that marks and DNATs.
pub fn kube_proxy(rules: usize) -> String {
    // Each service costs 1 (services) + 2 (svc) + 2*3 (seps) = 9 rules.
    let services = rules.div_ceil(9).max(1);
    let mut chains = String::new();
    let mut body = String::new();
    chains.push_str("*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n");
    chains.push_str(":KUBE-MARK-MASQ - [0:0]\n:KUBE-POSTROUTING - [0:0]\n:KUBE-SERVICES - [0:0]\n");
    body.push_str(
        "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n",
    );
    body.push_str(
        "-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n",
    );
    body.push_str("-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n");
    body.push_str("-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n");
    body.push_str("-A KUBE-POSTROUTING -m mark --mark 0x4000/0x4000 -j MASQUERADE\n");
    for s in 0..services {
        let svc = format!(
            "KUBE-SVC-{:016X}",
            (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        );
        let ip = [10, 96, (s / 250 % 256) as u8, (s % 250) as u8 + 1];
        let _ = writeln!(chains, ":{svc} - [0:0]");
        let _ = writeln!(
            body,
            "-A KUBE-SERVICES -d {}.{}.{}.{}/32 -p tcp -m comment --comment \"ns{}/svc{}:http cluster IP\" -m tcp --dport 80 -j {svc}",
            ip[0], ip[1], ip[2], ip[3], s % 97, s
        );
        for e in 0..2 {
            let sep = format!(
                "KUBE-SEP-{:016X}",
                (s as u64 * 2 + e).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            );
            let _ = writeln!(chains, ":{sep} - [0:0]");
            if e == 0 {
                let _ = writeln!(
                    body,
                    "-A {svc} -m comment --comment \"ns{}/svc{}:http\" -m statistic --mode random --probability 0.50000000000 -j {sep}",
                    s % 97, s
                );
            } else {
                let _ = writeln!(
                    body,
                    "-A {svc} -m comment --comment \"ns{}/svc{}:http\" -j {sep}",
                    s % 97,
                    s
                );
            }
            let pod = [
                10,
                244,
                (s / 128 % 256) as u8,
                ((s % 128) * 2 + e as usize) as u8,
            ];
            let _ = writeln!(
                body,
                "-A {sep} -s {}.{}.{}.{}/32 -m comment --comment \"ns{}/svc{}:http\" -j KUBE-MARK-MASQ",
                pod[0], pod[1], pod[2], pod[3], s % 97, s
            );
            let _ = writeln!(
                body,
                "-A {sep} -p tcp -m comment --comment \"ns{}/svc{}:http\" -m tcp -j DNAT --to-destination {}.{}.{}.{}:8080",
                s % 97, s, pod[0], pod[1], pod[2], pod[3]
            );
            let _ = writeln!(
                body,
                "-A {sep} -m comment --comment \"ns{}/svc{}:http\" -j RETURN",
                s % 97,
                s
            );
        }
    }
    chains.push_str(&body);
    chains.push_str("COMMIT\n");
    chains
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cf_addresses_are_distinct_and_valid() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..200_000 {
            let a = cf_addr(i);
            assert!(a[3] >= 1 && a[3] <= 254);
            assert!(seen.insert(a), "duplicate at {i}");
        }
    }

    #[test]
    fn shapes_have_the_asked_size() {
        let cf = cloud_foundry(1000);
        assert_eq!(cf.lines().filter(|l| l.starts_with("-A ")).count(), 1000);
        let kp = kube_proxy(900);
        let n = kp.lines().filter(|l| l.starts_with("-A ")).count();
        assert!((900..=920).contains(&n), "{n}");
    }
}
