//! Synthetic rulesets as iptables-restore text, in the shapes the studies
//! behind nfkeeper used: Cloud Foundry (one `-s ADDR -j ACCEPT` rule per
//! container) and kube-proxy (per-service chains with comments, statistic,
//! DNAT and MARK). Deterministic: the same arguments give the same text.
//! [`kube_nft`]: the same kube-proxy cluster as kube-proxy's nftables mode
//! writes it (`nft -f` input).
//!
//! What it is not: a parser or a model; it only writes text.

use std::fmt::Write;

pub mod kube_nft;

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

/// A kube-proxy cluster's shape: `services` services of `endpoints`
/// endpoints each, as kube-proxy's iptables mode writes its `*nat` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kube {
    pub services: usize,
    pub endpoints: usize,
}

impl Kube {
    fn svc(s: usize) -> String {
        format!(
            "KUBE-SVC-{:016X}",
            (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        )
    }

    fn sep(s: usize, e: usize) -> String {
        format!(
            "KUBE-SEP-{:016X}",
            ((s * 64 + e) as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        )
    }

    fn cluster_ip(s: usize) -> String {
        format!("10.96.{}.{}", s / 250 % 256, s % 250 + 1)
    }

    fn pod(s: usize, e: usize) -> String {
        let i = s * 64 + e;
        format!(
            "10.{}.{}.{}",
            128 + i / 62_500 % 64,
            i / 250 % 250,
            i % 250 + 2
        )
    }

    /// Declarations of every chain kube-proxy owns.
    fn declare_all(&self, out: &mut String) {
        for c in [
            "KUBE-SERVICES",
            "KUBE-POSTROUTING",
            "KUBE-MARK-MASQ",
            "KUBE-NODEPORTS",
        ] {
            let _ = writeln!(out, ":{c} - [0:0]");
        }
        for s in 0..self.services {
            let _ = writeln!(out, ":{} - [0:0]", Self::svc(s));
            for e in 0..self.endpoints {
                let _ = writeln!(out, ":{} - [0:0]", Self::sep(s, e));
            }
        }
    }

    /// KUBE-SERVICES: one jump per service, then the node-ports rule.
    fn services_chain(&self, out: &mut String) {
        for s in 0..self.services {
            let _ = writeln!(
                out,
                "-A KUBE-SERVICES -d {}/32 -p tcp -m comment --comment \"ns{}/svc{}:http cluster IP\" -m tcp --dport 80 -j {}",
                Self::cluster_ip(s),
                s % 97,
                s,
                Self::svc(s)
            );
        }
        out.push_str("-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n");
    }

    /// Service `s`'s chain with its endpoints listed from `first` on (a
    /// different `first` is a changed service): masquerade for traffic
    /// from outside the pod network, then endpoint k of n chosen with
    /// probability 1/(n-k) written as kube-proxy does (`%0.10f`), the last
    /// unconditionally.
    fn service(&self, s: usize, first: usize, out: &mut String) {
        Self::service_of(s, first, self.endpoints, out);
    }

    /// [`Kube::service`] with `n` endpoints.
    fn service_of(s: usize, first: usize, n: usize, out: &mut String) {
        let svc = Self::svc(s);
        let _ = writeln!(
            out,
            "-A {svc} ! -s 10.128.0.0/10 -d {}/32 -p tcp -m comment --comment \"ns{}/svc{}:http cluster IP\" -m tcp --dport 80 -j KUBE-MARK-MASQ",
            Self::cluster_ip(s),
            s % 97,
            s
        );
        for k in 0..n {
            let e = (first + k) % n;
            let comment = format!("ns{}/svc{}:http -> {}:8080", s % 97, s, Self::pod(s, e));
            if k + 1 < n {
                let _ = writeln!(
                    out,
                    "-A {svc} -m comment --comment \"{comment}\" -m statistic --mode random --probability {:.10} -j {}",
                    1.0 / (n - k) as f64,
                    Self::sep(s, e)
                );
            } else {
                let _ = writeln!(
                    out,
                    "-A {svc} -m comment --comment \"{comment}\" -j {}",
                    Self::sep(s, e)
                );
            }
        }
    }

    fn endpoint(s: usize, e: usize, out: &mut String) {
        let (sep, pod) = (Self::sep(s, e), Self::pod(s, e));
        let _ = writeln!(
            out,
            "-A {sep} -s {pod}/32 -m comment --comment \"ns{}/svc{}:http\" -j KUBE-MARK-MASQ",
            s % 97,
            s
        );
        let _ = writeln!(
            out,
            "-A {sep} -p tcp -m comment --comment \"ns{}/svc{}:http\" -m tcp -j DNAT --to-destination {pod}:8080",
            s % 97,
            s
        );
    }

    /// The `*filter` part of every sync: the firewall rule that drops
    /// connections to 127.0.0.0/8 from elsewhere unless kube-proxy DNATed
    /// them (`-m conntrack ! --ctstate ...,DNAT`); `jumps`: also the
    /// built-in chains' jumps into it.
    fn firewall(jumps: bool, out: &mut String) {
        out.push_str("*filter\n:KUBE-FIREWALL - [0:0]\n");
        if jumps {
            out.push_str("-A INPUT -j KUBE-FIREWALL\n-A OUTPUT -j KUBE-FIREWALL\n");
        }
        out.push_str("-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment \"block incoming localnet connections\" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\nCOMMIT\n");
    }

    /// kube-proxy's full sync, for `iptables-restore --noflush --counters`:
    /// every chain declared (flushed) and written. `jumps`: also the
    /// built-in chains' jumps into KUBE-SERVICES and KUBE-POSTROUTING
    /// (kube-proxy adds those once, outside its restores).
    pub fn full(&self, jumps: bool) -> String {
        let rules = self.services * (2 + self.endpoints * 3) + 8;
        let mut out = String::with_capacity(rules * 150);
        Self::firewall(jumps, &mut out);
        out.push_str("*nat\n");
        self.declare_all(&mut out);
        if jumps {
            out.push_str("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
            out.push_str(
                "-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n",
            );
            out.push_str("-A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n");
        }
        out.push_str("-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n");
        out.push_str("-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n");
        out.push_str("-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE\n");
        out.push_str("-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n");
        self.services_chain(&mut out);
        for s in 0..self.services {
            self.service(s, 0, &mut out);
            for e in 0..self.endpoints {
                Self::endpoint(s, e, &mut out);
            }
        }
        out.push_str("COMMIT\n");
        out
    }

    /// kube-proxy's partial sync after service `changed`'s endpoints moved
    /// (listed from endpoint `first` on): KUBE-SERVICES rewritten whole
    /// with the same content, and that one service chain.
    pub fn partial(&self, changed: usize, first: usize) -> String {
        let mut out = String::with_capacity(self.services * 160 + 1024);
        Self::firewall(false, &mut out);
        out.push_str("*nat\n:KUBE-SERVICES - [0:0]\n");
        let _ = writeln!(out, ":{} - [0:0]", Self::svc(changed));
        self.services_chain(&mut out);
        self.service(changed, first, &mut out);
        out.push_str("COMMIT\n");
        out
    }

    /// kube-proxy's partial sync after service `s` went from `from` to `to`
    /// endpoints (one added or removed): KUBE-SERVICES rewritten whole with
    /// the same content, the service chain, the new endpoints' chains
    /// declared and written, the gone ones declared (flushed) and deleted
    /// (`-X`) at the end.
    pub fn endpoints_changed(&self, s: usize, from: usize, to: usize) -> String {
        let mut out = String::with_capacity(self.services * 160 + 2048);
        Self::firewall(false, &mut out);
        out.push_str("*nat\n:KUBE-SERVICES - [0:0]\n");
        let _ = writeln!(out, ":{} - [0:0]", Self::svc(s));
        // A gone endpoint's chain is declared too (flushed), so that its
        // `-X` finds it empty.
        for e in from.min(to)..from.max(to) {
            let _ = writeln!(out, ":{} - [0:0]", Self::sep(s, e));
        }
        self.services_chain(&mut out);
        Self::service_of(s, 0, to, &mut out);
        for e in from..to {
            Self::endpoint(s, e, &mut out);
        }
        for e in to..from {
            let _ = writeln!(out, "-X {}", Self::sep(s, e));
        }
        out.push_str("COMMIT\n");
        out
    }

    /// The chain name of service `s` (for checks).
    pub fn service_chain(s: usize) -> String {
        Self::svc(s)
    }
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
    fn kube_shapes() {
        let k = Kube {
            services: 300,
            endpoints: 3,
        };
        let full = k.full(true);
        let count = |t: &str, p: &str| t.lines().filter(|l| l.starts_with(p)).count();
        // Per service: 1 in KUBE-SERVICES, 1 + 3 in its chain, 2 per endpoint;
        // the firewall rule (and its two jumps).
        assert_eq!(count(&full, "-A "), 300 * 11 + 1 + 3 + 4 + 3);
        assert_eq!(count(&full, ":"), 1 + 4 + 300 * 4);
        assert_eq!(count(&k.full(false), "-A "), 300 * 11 + 1 + 4 + 1);
        assert_eq!(count(&full, "*"), 2);
        assert!(full.contains("! --ctstate RELATED,ESTABLISHED,DNAT -j DROP"));
        assert!(
            full.contains("--probability 0.3333333333 "),
            "{}",
            &full[..2000]
        );
        let pods: std::collections::HashSet<&str> = full
            .lines()
            .filter(|l| l.contains("DNAT"))
            .filter_map(|l| l.split("--to-destination ").nth(1))
            .collect();
        assert_eq!(pods.len(), 900, "endpoints are distinct");
        let p = k.partial(7, 1);
        assert_eq!(count(&p, ":"), 3);
        assert_eq!(count(&p, "-A KUBE-SERVICES "), 301);
        assert_eq!(count(&p, &format!("-A {} ", Kube::service_chain(7))), 4);
        assert_ne!(p, k.partial(7, 0));
        // One endpoint added to service 5, then removed again.
        let add = k.endpoints_changed(5, 3, 4);
        assert_eq!(count(&add, ":"), 4);
        assert_eq!(count(&add, &format!("-A {} ", Kube::service_chain(5))), 5);
        assert!(add.contains("--probability 0.2500000000 "));
        assert_eq!(count(&add, "-X "), 0);
        let del = k.endpoints_changed(5, 4, 3);
        assert_eq!(count(&del, ":"), 4);
        assert_eq!(count(&del, &format!("-A {} ", Kube::service_chain(5))), 4);
        assert_eq!(count(&del, "-X KUBE-SEP-"), 1);
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
