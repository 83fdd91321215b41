//! The same cluster as [`Kube`] in the shape kube-proxy's *nftables* mode
//! writes it: `nft -f` transactions on the table `ip kube-proxy`, as its
//! nftables library writes them out (one command a line: `add`, `flush`,
//! `delete` of tables, chains, sets, maps, rules and elements).
//!
//! What kube-proxy (nftables mode, `pkg/proxy/nftables`) keeps there:
//! - base chains `filter-{prerouting,input,forward,output}` at priority
//!   dstnat-10 (-110), `filter-output-post-dnat` at dstnat+10 (-90),
//!   `nat-{prerouting,output}` at dstnat (-100), `nat-postrouting` at
//!   srcnat (100); the first sync of a process adds and deletes each of
//!   them before creating it, so a changed priority can never fail it;
//! - regular chains jumped to from them (`services`, `masquerading`, the
//!   `*-check` chains), `mark-for-masquerade`, `reject-chain`;
//! - the verdict map `service-ips` (`ipv4_addr . inet_proto .
//!   inet_service : verdict`): per ClusterIP `IP . tcp . PORT : goto
//!   service-…`, which the `services` chain looks up; `service-nodeports`
//!   and the no-endpoint and firewall maps beside it (empty here); the set
//!   `cluster-ips`;
//! - per service port a chain `service-HASH-NS/NAME/tcp/PORTNAME`: a rule
//!   marking traffic from outside the pod network for masquerade, then
//!   `numgen random mod N vmap { 0 : goto endpoint-…, … }`;
//! - per endpoint a chain `endpoint-HASH-NS/NAME/tcp/PORTNAME__IP/PORT`:
//!   `ip saddr IP jump mark-for-masquerade`, `meta l4proto tcp dnat to
//!   IP:PORT`.
//!
//! A *full* sync (the first one of a process, or after a failure) writes
//! everything: the table, every chain added and flushed, the fixed rules,
//! the maps and sets flushed and every element added again, every service
//! and endpoint chain added, flushed and written. The first sync onto an
//! empty table and a full sync onto the same ruleset (after a restart) are
//! the same text. A *partial* sync writes only what changed: the changed
//! service's endpoint chains and service chain added, flushed and
//! rewritten; map elements only when theirs changed (here none: the
//! service keeps its ClusterIP and chain). A chain no longer used is
//! flushed in that sync and deleted by a later one (at least a second
//! later, in a transaction of its own: older kernels notice late that a
//! map element no longer points to it).
//!
//! Simplified here: services are iterated in index order (kube-proxy's in
//! map order); the 8-character hash in chain names is a cheap stand-in of
//! the same length and alphabet (kube-proxy takes the base32 of a SHA-256
//! of the rest of the name); node ports and the no-endpoint, firewall and
//! affinity objects are declared but hold nothing (no service uses them);
//! `--nodeport-addresses` is unset (node ports on every local address);
//! the reads kube-proxy does around a sync (`nft list chains`, `list
//! sets`) are left out; a removed endpoint's chain is flushed and deleted
//! in the same `nft -f` text (kube-proxy deletes it in a later sync of its
//! own).

use crate::Kube;
use std::fmt::Write;

/// The table kube-proxy's nftables mode owns.
pub const NFT_TABLE: &str = "kube-proxy";

/// `add`/`flush`/`delete` lines all start with the family and table.
const T: &str = "ip kube-proxy";

/// The masquerade mark (bit 14, as in the iptables form's 0x4000), as
/// kube-proxy formats it (`%#08x`).
const MARK: &str = "0x004000";

/// The pod network (traffic from outside it to a ClusterIP is
/// masqueraded), the same as the iptables form's `! -s 10.128.0.0/10`.
const POD_CIDR: &str = "10.128.0.0/10";

/// Base chains: name, type, hook, priority (numeric, as written out).
const BASE_CHAINS: [(&str, &str, &str, i32); 8] = [
    ("filter-prerouting", "filter", "prerouting", -110),
    ("filter-input", "filter", "input", -110),
    ("filter-forward", "filter", "forward", -110),
    ("filter-output", "filter", "output", -110),
    ("filter-output-post-dnat", "filter", "output", -90),
    ("nat-prerouting", "nat", "prerouting", -100),
    ("nat-output", "nat", "output", -100),
    ("nat-postrouting", "nat", "postrouting", 100),
];

/// Regular chains jumped to from a base chain: target, from, condition.
/// The target is created (added and flushed) on its first appearance.
const JUMPS: [(&str, &str, &str); 11] = [
    ("nodeport-endpoints-check", "filter-input", "ct state new "),
    ("service-endpoints-check", "filter-input", "ct state new "),
    ("service-endpoints-check", "filter-forward", "ct state new "),
    ("service-endpoints-check", "filter-output", "ct state new "),
    ("firewall-check", "filter-prerouting", "ct state new "),
    ("firewall-check", "filter-output", "ct state new "),
    ("services", "nat-output", ""),
    ("services", "nat-prerouting", ""),
    ("masquerading", "nat-postrouting", ""),
    ("cluster-ips-check", "filter-forward", "ct state new "),
    (
        "cluster-ips-check",
        "filter-output-post-dnat",
        "ct state new ",
    ),
];

/// Regular chains that are not service or endpoint chains (every chain of
/// [`JUMPS`], `mark-for-masquerade`, `reject-chain`).
pub const NFT_FIXED_CHAINS: usize = 8;

/// Maps flushed by every full sync; the first is the one services use.
const MAPS: [(&str, &str, &str); 5] = [
    (
        "no-endpoint-services",
        "ipv4_addr . inet_proto . inet_service : verdict",
        "vmap to drop or reject packets to services with no endpoints",
    ),
    (
        "no-endpoint-nodeports",
        "inet_proto . inet_service : verdict",
        "vmap to drop or reject packets to service nodeports with no endpoints",
    ),
    (
        "firewall-ips",
        "ipv4_addr . inet_proto . inet_service : verdict",
        "destinations that are subject to LoadBalancerSourceRanges",
    ),
    (
        "service-ips",
        "ipv4_addr . inet_proto . inet_service : verdict",
        "ClusterIP, ExternalIP and LoadBalancer IP traffic",
    ),
    (
        "service-nodeports",
        "inet_proto . inet_service : verdict",
        "NodePort traffic",
    ),
];

/// 8 characters of A-Z2-7 from a 64-bit FNV-1a of `name` (see the module
/// doc: kube-proxy's are SHA-256 in base32; only length and alphabet
/// matter to nft).
fn hash8(name: &str) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    (0..8)
        .map(|i| ALPHABET[(h >> (59 - 5 * i)) as usize & 31] as char)
        .collect()
}

impl Kube {
    /// Service `s`'s port name, kube-proxy's `NS/NAME/PROTO/PORTNAME`
    /// (the iptables form's comment `nsX/svcS:http`).
    fn port_name(s: usize) -> String {
        format!("ns{}/svc{s}/tcp/http", s % 97)
    }

    /// The chain of service `s` in the nftables form.
    pub fn nft_service_chain(s: usize) -> String {
        let base = Self::port_name(s);
        format!("service-{}-{base}", hash8(&base))
    }

    /// The chain of endpoint `e` of service `s` in the nftables form.
    pub fn nft_endpoint_chain(s: usize, e: usize) -> String {
        let base = format!("{}__{}/8080", Self::port_name(s), Self::pod(s, e));
        format!("endpoint-{}-{base}", hash8(&base))
    }

    /// Regular chains of the nftables form after a full sync: the fixed
    /// ones and one per service and endpoint.
    pub fn nft_regular_chains(&self) -> usize {
        NFT_FIXED_CHAINS + self.services * (1 + self.endpoints)
    }

    /// kube-proxy's full sync in its nftables mode, the first of its
    /// process: onto an empty table or onto the same ruleset alike.
    pub fn nft_full(&self) -> String {
        let mut out = String::with_capacity(4096 + self.services * (700 + self.endpoints * 420));
        Self::nft_setup(&mut out);
        for s in 0..self.services {
            self.nft_service_objects(s, 0, self.endpoints, true, &mut out);
        }
        out
    }

    /// kube-proxy's partial sync after service `changed`'s endpoints moved
    /// (listed from endpoint `first` on): that service's chains only.
    pub fn nft_partial(&self, changed: usize, first: usize) -> String {
        let mut out = String::with_capacity(2048);
        self.nft_service_objects(changed, first, self.endpoints, false, &mut out);
        out
    }

    /// kube-proxy's partial sync after service `s` went from `from` to
    /// `to` endpoints: its chains rewritten with the new endpoints', the
    /// gone endpoints' chains flushed and deleted.
    pub fn nft_endpoints_changed(&self, s: usize, from: usize, to: usize) -> String {
        let mut out = String::with_capacity(2048);
        self.nft_service_objects(s, 0, to, false, &mut out);
        for e in to..from {
            let _ = writeln!(out, "flush chain {T} {}", Self::nft_endpoint_chain(s, e));
        }
        for e in to..from {
            let _ = writeln!(out, "delete chain {T} {}", Self::nft_endpoint_chain(s, e));
        }
        out
    }

    /// The table, base chains, fixed chains and rules, sets and maps of a
    /// full sync, the maps and sets flushed at the end.
    fn nft_setup(out: &mut String) {
        let _ = writeln!(
            out,
            "add table {T} {{ comment \"rules for kube-proxy\" ; }}"
        );
        for (c, ..) in BASE_CHAINS {
            let _ = writeln!(out, "add chain {T} {c}\ndelete chain {T} {c}");
        }
        for (c, ty, hook, prio) in BASE_CHAINS {
            let _ = writeln!(
                out,
                "add chain {T} {c} {{ type {ty} hook {hook} priority {prio} ; }}\nflush chain {T} {c}"
            );
        }
        let mut made: Vec<&str> = Vec::new();
        let mut ensure = |out: &mut String, c: &'static str| {
            if !made.contains(&c) {
                made.push(c);
                let _ = writeln!(out, "add chain {T} {c}\nflush chain {T} {c}");
            }
        };
        for (to, from, cond) in JUMPS {
            ensure(out, to);
            let _ = writeln!(out, "add rule {T} {from} {cond}jump {to}");
        }
        ensure(out, "mark-for-masquerade");
        let _ = writeln!(
            out,
            "add rule {T} mark-for-masquerade mark set mark or {MARK}\n\
             add rule {T} masquerading mark and {MARK} == 0 return\n\
             add rule {T} masquerading mark set mark xor {MARK}\n\
             add rule {T} masquerading masquerade fully-random\n\
             add set {T} cluster-ips {{ type ipv4_addr ; comment \"Active ClusterIPs\" ; }}\n\
             add rule {T} cluster-ips-check ip daddr @cluster-ips reject comment \"Reject traffic to invalid ports of ClusterIPs\"\n\
             add rule {T} cluster-ips-check ip daddr {{ 10.96.0.0/12 }} drop comment \"Drop traffic to unallocated ClusterIPs\"\n\
             add set {T} nodeport-ips {{ type ipv4_addr ; comment \"IPs that accept NodePort traffic\" ; }}\n\
             delete set {T} nodeport-ips"
        );
        let map = |out: &mut String, (name, ty, comment): (&str, &str, &str)| {
            let _ = writeln!(
                out,
                "add map {T} {name} {{ type {ty} ; comment \"{comment}\" ; }}"
            );
        };
        map(out, MAPS[0]);
        map(out, MAPS[1]);
        let _ = writeln!(
            out,
            "add chain {T} reject-chain {{ comment \"helper for @no-endpoint-services / @no-endpoint-nodeports\" ; }}\n\
             flush chain {T} reject-chain\n\
             add rule {T} reject-chain reject\n\
             add rule {T} service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services\n\
             add rule {T} nodeport-endpoints-check ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @no-endpoint-nodeports"
        );
        map(out, MAPS[2]);
        let _ = writeln!(
            out,
            "add rule {T} firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips"
        );
        map(out, MAPS[3]);
        map(out, MAPS[4]);
        let _ = writeln!(
            out,
            "add rule {T} services ip daddr . meta l4proto . th dport vmap @service-ips\n\
             add rule {T} services fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports\n\
             flush set {T} cluster-ips"
        );
        for (name, ..) in [MAPS[3], MAPS[2], MAPS[0], MAPS[1], MAPS[4]] {
            let _ = writeln!(out, "flush map {T} {name}");
        }
    }

    /// Service `s` with `n` endpoints listed from `first` on: its endpoint
    /// chains and its chain added and flushed, with `elements` its
    /// `cluster-ips` and `service-ips` elements, then its rules.
    fn nft_service_objects(
        &self,
        s: usize,
        first: usize,
        n: usize,
        elements: bool,
        out: &mut String,
    ) {
        let order: Vec<usize> = (0..n).map(|k| (first + k) % n).collect();
        let svc = Self::nft_service_chain(s);
        let eps: Vec<String> = order
            .iter()
            .map(|&e| Self::nft_endpoint_chain(s, e))
            .collect();
        for c in eps.iter().chain(std::iter::once(&svc)) {
            let _ = writeln!(out, "add chain {T} {c}\nflush chain {T} {c}");
        }
        let ip = Self::cluster_ip(s);
        if elements {
            let _ = writeln!(
                out,
                "add element {T} cluster-ips {{ {ip} }}\nadd element {T} service-ips {{ {ip} . tcp . 80 : goto {svc} }}"
            );
        }
        let _ = writeln!(
            out,
            "add rule {T} {svc} ip daddr {ip} tcp dport 80 ip saddr != {POD_CIDR} jump mark-for-masquerade"
        );
        let _ = write!(out, "add rule {T} {svc} numgen random mod {n} vmap {{ ");
        for (k, c) in eps.iter().enumerate() {
            let sep = if k + 1 < n { " , " } else { " }\n" };
            let _ = write!(out, "{k} : goto {c}{sep}");
        }
        for (&e, c) in order.iter().zip(&eps) {
            let pod = Self::pod(s, e);
            let _ = writeln!(
                out,
                "add rule {T} {c} ip saddr {pod} jump mark-for-masquerade\nadd rule {T} {c} meta l4proto tcp dnat to {pod}:8080"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn testdata(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/kube_nft")
            .join(name)
    }

    /// Every sync of a 2-service cluster against its golden file
    /// (`NFK_UPDATE_GOLDEN=1 cargo test -p nfk-workload` rewrites them).
    #[test]
    fn syncs_match_their_golden_files() {
        let k = Kube {
            services: 2,
            endpoints: 3,
        };
        let cases = [
            ("full.nft", k.nft_full()),
            ("partial.nft", k.nft_partial(1, 1)),
            ("endpoint-added.nft", k.nft_endpoints_changed(1, 3, 4)),
            ("endpoint-removed.nft", k.nft_endpoints_changed(1, 4, 3)),
        ];
        for (name, text) in cases {
            let path = testdata(name);
            if std::env::var_os("NFK_UPDATE_GOLDEN").is_some() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "{name}: {e}; regenerate with NFK_UPDATE_GOLDEN=1 cargo test -p nfk-workload"
                )
            });
            assert_eq!(
                text, want,
                "{name} differs; regenerate with NFK_UPDATE_GOLDEN=1 cargo test -p nfk-workload"
            );
        }
    }

    /// Counts at a larger size, per sync: lines by kind, the chains a sync
    /// creates, and that every name is distinct.
    #[test]
    fn shapes() {
        let k = Kube {
            services: 300,
            endpoints: 3,
        };
        let count = |t: &str, p: &str| t.lines().filter(|l| l.starts_with(p)).count();
        let full = k.nft_full();
        let cases = [
            // (text, add chain, flush chain, delete chain, add rule, add element)
            (
                &full,
                8 + 8 + 8 + 300 * 4,
                8 + 8 + 300 * 4,
                8,
                11 + 12 + 300 * 8,
                600,
            ),
            (&k.nft_partial(7, 1), 4, 4, 0, 8, 0),
            (&k.nft_endpoints_changed(5, 3, 4), 5, 5, 0, 10, 0),
            (&k.nft_endpoints_changed(5, 4, 3), 4, 5, 1, 8, 0),
        ];
        for (i, (text, add, flush, del, rules, elems)) in cases.into_iter().enumerate() {
            let got = (
                count(text, "add chain "),
                count(text, "flush chain "),
                count(text, "delete chain "),
                count(text, "add rule "),
                count(text, "add element "),
            );
            assert_eq!(got, (add, flush, del, rules, elems), "case {i}");
        }
        assert_eq!(k.nft_full(), full, "deterministic");
        assert_eq!(k.nft_regular_chains(), 8 + 1200);
        let mut names = std::collections::HashSet::new();
        for s in 0..300 {
            assert!(names.insert(Kube::nft_service_chain(s)));
            for e in 0..4 {
                assert!(names.insert(Kube::nft_endpoint_chain(s, e)));
            }
        }
        assert!(full.contains("numgen random mod 3 vmap { 0 : goto endpoint-"));
        let p = k.nft_partial(7, 1);
        assert!(p.contains(&format!(
            "vmap {{ 0 : goto {} , ",
            Kube::nft_endpoint_chain(7, 1)
        )));
        assert_ne!(p, k.nft_partial(7, 0));
    }
}
