//! k.kube: kube-proxy's ruleset in the packet path (issue: kube-proxy at
//! scale). The server namespace loads `workload::Kube { services: N,
//! endpoints: 3 }.full(true)` through the tool under test (the kube
//! suite's full sync: the small `*filter` part, every KUBE-SERVICES /
//! KUBE-SVC / KUBE-SEP chain of the `*nat` table, and the built-in
//! chains' jumps into them); nft loads kube-proxy's nftables mode for the
//! same cluster (`workload::Kube::nft_full`: a `service-ips` verdict map,
//! per service a numgen map of its endpoint chains). The client connects
//! to the LAST service's cluster IP on port 80: the last of KUBE-SERVICES'
//! N rules, the worst case of a linear walk (iptables-legacy,
//! iptables-nft), one map lookup for nfkeeper and for nft.
//!
//! Delivery: the client routes that cluster IP to the server (one /32
//! route; no other service is reachable, none needs to be), and the
//! server owns the service's three endpoint addresses (/32 on `lo`) and
//! listens on their port, so whichever endpoint the statistic rules pick,
//! the DNATed connection lands on the server's socket. Without the DNAT
//! nothing arrives: the cluster IP is not the server's and the server
//! does not forward. The endpoints are read from the ruleset text (the
//! target service's DNAT rules), not recomputed, so the check follows the
//! workload if its addresses change.
//!
//! Rows (sub-rows of k.kube; N ≥ 1, a ruleset without services has no
//! cluster IP to reach):
//! - `k.kube.first`: new TCP connections one after the other for the
//!   measurement's length ([`traffic::tcp_connects`]). The services are
//!   TCP only, so the first packet of a flow to a service is a SYN: each
//!   connection is a new 4-tuple, its SYN the first packet of a new
//!   conntrack entry, and the nat table runs for it (PREROUTING:
//!   KUBE-SERVICES, the service chain, an endpoint chain, DNAT). The
//!   sample is seconds per connection (rate: connections per second), so
//!   the handshake and the sockets' cost sit around the walk; that cost
//!   is the same for every tool and shows as the N = 1 row. Conntrack:
//!   the client resets each connection (SO_LINGER 0), so its port is free
//!   at once and the server's entry goes to CLOSE; the server namespace's
//!   `nf_conntrack_tcp_timeout_close` (and `_time_wait`) are 1 s instead
//!   of 10 s / 120 s (per-namespace sysctls, set in the server namespace
//!   only), so at the measured rates (below 40 000 per second) the
//!   namespace holds well under 262 144 (the host's `nf_conntrack_max`)
//!   entries (the conntrack statistics of a 15 000 per second run showed
//!   about 25 000 live, no early drop, no insert failure). The client's
//!   `ip_local_port_range` is 1024–65535, so a port comes round again after
//!   tens of thousands of connections, seconds at these rates; should its
//!   SYN still meet its 4-tuple's old entry (in CLOSE after the client's
//!   reset; the server waits for that reset before it drops its end),
//!   conntrack deletes that entry and starts a new one, so the SYN walks
//!   the nat table all the same. No TIME_WAIT socket holds a 4-tuple
//!   (the client resets, it never closes with a FIN); the server's accept queue is
//!   65535 (`net.core.somaxconn` of the server namespace), so a server
//!   thread that waits for a CPU does not make the kernel drop SYNs (a
//!   dropped SYN costs the client a second).
//! - `k.kube.steady`: one TCP connection's bulk transfer
//!   ([`traffic::tcp_bulk`]): after its first packet conntrack translates
//!   the flow and the nat table no longer runs, so it should be flat in N.
//!
//! Check before measuring (a FAIL otherwise): 20 connections to the
//! cluster IP all arrive, each at one of the target service's endpoints
//! (the DNAT happened) and not all at the same one (the statistic rules
//! choose among the three; all on one by chance: 3 in 3^20).

use super::traffic::{self, Place};
use super::{dialect, install, ip_batch, Dialect, Install, Pair, Plan, Slot, PASS_WAIT, SERVER};
use crate::netns::Netns;
use crate::suites::report::Status;
use crate::suites::Adapter;
use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

/// Endpoints per service.
pub const ENDPOINTS: usize = 3;
/// Connections of the check.
const CHECK_CONNECTIONS: usize = 20;

/// Sysctls of the server namespace (see the module doc).
const SERVER_SYSCTLS: [&str; 3] = [
    "net.netfilter.nf_conntrack_tcp_timeout_close=1",
    "net.netfilter.nf_conntrack_tcp_timeout_time_wait=1",
    "net.core.somaxconn=65535",
];
/// Sysctls of the client namespace.
const CLIENT_SYSCTLS: [&str; 1] = ["net.ipv4.ip_local_port_range=1024 65535"];

/// A sub-row of k.kube.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// New connections: every SYN walks the nat table.
    First,
    /// One established connection: conntrack alone.
    Steady,
}

/// Every mode, in report order.
pub const MODES: [Mode; 2] = [Mode::First, Mode::Steady];

impl Mode {
    /// Stable case id.
    pub fn id(self) -> &'static str {
        match self {
            Mode::First => "k.kube.first",
            Mode::Steady => "k.kube.steady",
        }
    }

    /// The record's name; the part from `, s per` on is the raw samples'
    /// unit (the report drops it for the rate).
    pub fn name(self) -> &'static str {
        match self {
            Mode::First => {
                "kube-proxy nat, N services × 3 endpoints, to the last; new TCP connections, s per connection"
            }
            Mode::Steady => {
                "kube-proxy nat, N services × 3 endpoints, to the last; one TCP connection's bulk, s per Gbit"
            }
        }
    }
}

/// The modes a plan runs: with `--case`, those whose id starts with one
/// of its values; otherwise both in the full plan and none in `--quick`
/// (each size loads N × 11 rules per tool, which would eat the quick
/// run's five minutes).
pub fn selected(cases: &[String], quick: bool) -> Vec<Mode> {
    MODES
        .iter()
        .copied()
        .filter(|m| {
            if cases.is_empty() {
                !quick
            } else {
                cases.iter().any(|c| m.id().starts_with(c.as_str()))
            }
        })
        .collect()
}

/// The rows of a plan: every selected mode at every size but 0.
pub fn rows(plan: &Plan) -> Vec<(Mode, usize)> {
    plan.kube
        .iter()
        .flat_map(|&m| plan.sizes.iter().filter(|&&n| n > 0).map(move |&n| (m, n)))
        .collect()
}

/// kube-proxy's full sync of `n` services, with the built-in chains' jumps.
pub fn ruleset(n: usize) -> String {
    workload::Kube {
        services: n,
        endpoints: ENDPOINTS,
    }
    .full(true)
}

/// Where the measured traffic goes: the last service's cluster IP and
/// port, and the endpoints its DNAT rules name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub vip: SocketAddrV4,
    pub endpoints: Vec<SocketAddrV4>,
}

impl Target {
    /// The port the server listens on: the endpoints' (one for all).
    pub fn listen(&self) -> u16 {
        self.endpoints[0].port()
    }
}

/// The word after the first `flag` among `line`'s words.
fn arg<'a>(line: &'a str, flag: &str) -> Option<&'a str> {
    let mut w = line.split_whitespace();
    w.find(|x| *x == flag)?;
    w.next()
}

/// The `-j` targets of the rules of `chain` in `text`, in order.
fn jumps<'a>(text: &'a str, chain: &str) -> Vec<&'a str> {
    let head = format!("-A {chain} ");
    text.lines()
        .filter(|l| l.starts_with(&head))
        .filter_map(|l| arg(l, "-j"))
        .collect()
}

/// The target of a kube ruleset: the last `-A KUBE-SERVICES -d VIP/32 …
/// --dport P -j SVC` rule, and the `--to-destination` of every endpoint
/// chain SVC jumps to. Errors name what is missing.
pub fn target(text: &str) -> Result<Target, String> {
    let rule = text
        .lines()
        .rev()
        .find(|l| l.starts_with("-A KUBE-SERVICES -d "))
        .ok_or("no service rule in KUBE-SERVICES")?;
    let bad = |what: &str| format!("{what} in `{rule}`");
    let ip: Ipv4Addr = arg(rule, "-d")
        .and_then(|d| d.strip_suffix("/32"))
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| bad("no -d ADDR/32"))?;
    let port: u16 = arg(rule, "--dport")
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| bad("no --dport"))?;
    let svc = arg(rule, "-j").ok_or_else(|| bad("no -j"))?;
    let mut endpoints = Vec::new();
    for sep in jumps(text, svc)
        .into_iter()
        .filter(|j| j.starts_with("KUBE-SEP-"))
    {
        let head = format!("-A {sep} ");
        let to = text
            .lines()
            .filter(|l| l.starts_with(&head))
            .find_map(|l| arg(l, "--to-destination"))
            .ok_or_else(|| format!("{sep}: no DNAT rule"))?;
        let a: SocketAddrV4 = to
            .parse()
            .map_err(|_| format!("{sep}: --to-destination {to} is not ADDR:PORT"))?;
        endpoints.push(a);
    }
    if endpoints.is_empty() {
        return Err(format!("{svc}: no endpoint chain"));
    }
    if endpoints.iter().any(|e| e.port() != endpoints[0].port()) {
        return Err(format!("{svc}: endpoints on different ports"));
    }
    Ok(Target {
        vip: SocketAddrV4::new(ip, port),
        endpoints,
    })
}

/// The `ip` commands added to the suite's topology: the client routes the
/// cluster IP to the server; the server owns the endpoint addresses.
fn topology(t: &Target) -> (String, String) {
    let c = format!("route add {}/32 via {SERVER}\n", t.vip.ip());
    let s = t
        .endpoints
        .iter()
        .map(|e| format!("addr add {}/32 dev lo\n", e.ip()))
        .collect();
    (c, s)
}

fn sysctls(ns: &Netns, set: &[&str], limit: Duration) -> Result<(), String> {
    for kv in set {
        let r = ns
            .run(&["sysctl", "-q", "-w", kv], None, limit)
            .map_err(|e| format!("sysctl {kv}: {e}"))?;
        if !r.status.success() {
            return Err(format!("sysctl {kv}: {}", r.stderr.trim()));
        }
    }
    Ok(())
}

/// The check of the module doc.
pub fn check(cl: &Place, sv: &Place, t: &Target) -> Result<(), String> {
    let at = traffic::landed(cl, sv, t.vip, t.listen(), CHECK_CONNECTIONS, PASS_WAIT)?;
    judge(t, &at)
}

/// The verdict on where the check's connections landed.
fn judge(t: &Target, at: &[SocketAddr]) -> Result<(), String> {
    if at.len() < CHECK_CONNECTIONS {
        return Err(format!(
            "{} of {CHECK_CONNECTIONS} TCP connections to {} arrived (no DNAT to its endpoints?)",
            at.len(),
            t.vip
        ));
    }
    let mut seen = BTreeSet::new();
    for a in at {
        match a {
            SocketAddr::V4(v) if t.endpoints.contains(v) => seen.insert(*v),
            other => {
                return Err(format!(
                    "a connection to {} arrived at {other}, not at one of its endpoints",
                    t.vip
                ))
            }
        };
    }
    if seen.len() < 2 && t.endpoints.len() > 1 {
        return Err(format!(
            "all {CHECK_CONNECTIONS} connections to {} went to {}: the endpoint is not chosen at random",
            t.vip,
            at[0]
        ));
    }
    Ok(())
}

/// Setup and check of one row for one adapter (the text and target are
/// the row's, made once for all adapters).
pub(super) fn prepare(
    plan: &Plan,
    (n, text, t): (usize, &str, &Target),
    a: &dyn Adapter,
    tool: &Result<String, String>,
) -> Slot {
    if let Err(why) = tool {
        return Slot::Done(Status::Unavailable(why.clone()));
    }
    // nft: kube-proxy's nftables mode for the same cluster (same cluster
    // IPs, endpoints and ports, so the same target and check).
    let rules = match dialect(a.name()) {
        Dialect::Nft => workload::Kube {
            services: n,
            endpoints: ENDPOINTS,
        }
        .nft_full(),
        Dialect::Iptables => text.to_string(),
    };
    let lim = plan.setup_limit;
    let pair = match Pair::new(None, lim) {
        Ok(x) => x,
        Err(e) => return Slot::Done(Status::Fail(format!("topology: {e}"))),
    };
    let (c, s) = topology(t);
    let setup = ip_batch(&pair.client, &c, lim)
        .and_then(|()| ip_batch(&pair.server, &s, lim))
        .and_then(|()| sysctls(&pair.client, &CLIENT_SYSCTLS, lim))
        .and_then(|()| sysctls(&pair.server, &SERVER_SYSCTLS, lim));
    if let Err(e) = setup {
        return Slot::Done(Status::Fail(format!("topology: {e}")));
    }
    let inst = Install {
        ipset: None,
        own_set: false,
        nfacct: None,
        rules,
    };
    if let Err(e) = install(&pair.server, a, &inst, lim) {
        return Slot::Done(Status::Fail(format!("setup: {e}")));
    }
    let (cl, sv) = pair.places(plan.pin);
    if let Err(e) = check(&cl, &sv, t) {
        return Slot::Done(Status::Fail(format!("verify: {e}")));
    }
    Slot::Ready {
        _pair: Box::new(pair),
        cl,
        sv,
    }
}

/// One measurement: seconds per connection (first) or per Gbit (steady).
pub(super) fn measure(
    cl: &Place,
    sv: &Place,
    m: Mode,
    t: &Target,
    plan: &Plan,
) -> Result<f64, String> {
    match m {
        Mode::First => {
            let r = traffic::tcp_connects(cl, sv, t.vip, t.listen(), plan.duration, plan.limit)?;
            r.rate()
                .map(|x| 1.0 / x)
                .ok_or_else(|| format!("no connection opened: {r:?}"))
        }
        Mode::Steady => {
            let r = traffic::tcp_bulk(cl, sv, t.vip, t.listen(), plan.duration, plan.limit)?;
            r.gbits()
                .map(|g| 1.0 / g)
                .ok_or_else(|| format!("nothing got through: {r:?}"))
        }
    }
}

/// The method's note for k.kube rows.
pub fn note() -> String {
    format!(
        "k.kube: the server namespace loads kube-proxy's full sync of N services × {ENDPOINTS} \
         endpoints (nat table, with the built-in chains' jumps; nft: kube-proxy's \
         nftables mode for the same cluster); the client \
         connects to the last service's cluster IP on port 80 (the end of KUBE-SERVICES), \
         whose endpoint addresses the server owns, so every DNATed connection arrives \
         (checked: {CHECK_CONNECTIONS} connections arrive at its endpoints, not all at one). \
         k.kube.first: new TCP connections one after the other, each reset by the client, \
         so every SYN is the first packet of a new conntrack entry and walks the nat table \
         (server conntrack close/time-wait timeouts 1 s; rate in connections per second, \
         handshake included). k.kube.steady: one connection's bulk transfer, which \
         conntrack translates without the nat table after its first packet.\n"
    )
}

#[cfg(test)]
mod tests;
