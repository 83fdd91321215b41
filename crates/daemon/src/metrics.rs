//! Counters and histograms, exposed as Prometheus text (`--metrics ADDR`)
//! and summarised by `nfkeeper status`. Lock-free on the hot path: every
//! update is one or two relaxed atomic adds.

use iptables::parse::Command;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

#[derive(Default)]
pub struct Counter(AtomicU64);

impl Counter {
    pub fn inc(&self) {
        self.0.fetch_add(1, Relaxed);
    }
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A histogram with fixed upper bounds (cumulative on output).
pub struct Histogram {
    bounds: &'static [f64],
    buckets: Vec<AtomicU64>,
    count: AtomicU64,
    /// Sum in the unit of the bounds × 1e6 (integer, so it stays atomic).
    sum_micro: AtomicU64,
}

/// Commit latency bounds, seconds.
const LATENCY: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    10.0,
];
/// Writes per commit.
const BATCH: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0];

impl Histogram {
    fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            buckets: bounds.iter().map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum_micro: AtomicU64::new(0),
        }
    }

    fn record(&self, v: f64) {
        if let Some(i) = self.bounds.iter().position(|b| v <= *b) {
            self.buckets[i].fetch_add(1, Relaxed);
        }
        self.count.fetch_add(1, Relaxed);
        self.sum_micro.fetch_add((v * 1e6) as u64, Relaxed);
    }

    pub fn observe(&self, d: Duration) {
        self.record(d.as_secs_f64());
    }

    pub fn observe_count(&self, n: u64) {
        self.record(n as f64);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// Mean of the observations (0 without any).
    pub fn mean(&self) -> f64 {
        let c = self.count();
        if c == 0 {
            0.0
        } else {
            self.sum_micro.load(Relaxed) as f64 / 1e6 / c as f64
        }
    }

    fn render(&self, name: &str, help: &str, out: &mut String) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cum = 0;
        for (b, n) in self.bounds.iter().zip(&self.buckets) {
            cum += n.load(Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cum}");
        }
        let c = self.count();
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {c}");
        let _ = writeln!(
            out,
            "{name}_sum {}",
            self.sum_micro.load(Relaxed) as f64 / 1e6
        );
        let _ = writeln!(out, "{name}_count {c}");
    }
}

/// Operation kinds counted separately (label `op`).
pub const OPS: [&str; 14] = [
    "append",
    "insert",
    "replace",
    "delete",
    "flush",
    "zero",
    "new_chain",
    "delete_chain",
    "rename",
    "policy",
    "list",
    "check",
    "restore",
    "ops",
];

pub struct Metrics {
    pub commits: Counter,
    pub conflicts: Counter,
    pub resyncs: Counter,
    pub resyncs_lost_events: Counter,
    pub foreign_changes: Counter,
    pub refused_peers: Counter,
    pub bad_requests: Counter,
    /// accept(2) failures that paused the acceptor (out of descriptors …).
    pub accept_errors: Counter,
    pub connections: Counter,
    /// ipset reads answered from sets kept from earlier reads.
    pub ipset_kept: Counter,
    pub commit_latency: Histogram,
    pub batch_writes: Histogram,
    ok: Vec<Counter>,
    failed: Vec<Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            commits: Counter::default(),
            conflicts: Counter::default(),
            resyncs: Counter::default(),
            resyncs_lost_events: Counter::default(),
            foreign_changes: Counter::default(),
            refused_peers: Counter::default(),
            accept_errors: Counter::default(),
            bad_requests: Counter::default(),
            connections: Counter::default(),
            ipset_kept: Counter::default(),
            commit_latency: Histogram::new(LATENCY),
            batch_writes: Histogram::new(BATCH),
            ok: OPS.iter().map(|_| Counter::default()).collect(),
            failed: OPS.iter().map(|_| Counter::default()).collect(),
        }
    }
}

/// The `op` label of a command.
pub fn op_kind(c: &Command) -> &'static str {
    match c {
        Command::Append(_) => "append",
        Command::Insert(..) => "insert",
        Command::Replace(..) => "replace",
        Command::Delete(_) | Command::DeleteNum(..) => "delete",
        Command::Flush(_) => "flush",
        Command::Zero { .. } => "zero",
        Command::NewChain(_) => "new_chain",
        Command::DeleteChain(_) => "delete_chain",
        Command::Rename(..) => "rename",
        Command::Policy(..) => "policy",
        Command::List { .. } | Command::ListRules { .. } | Command::Help | Command::Version => {
            "list"
        }
        Command::Check(_) => "check",
    }
}

/// Sizes reported with the metrics.
pub struct Sizes {
    pub rules: usize,
    pub chains: usize,
    pub queue: usize,
}

impl Metrics {
    pub fn ops(&self, kind: &str, ok: bool) {
        if let Some(i) = OPS.iter().position(|k| *k == kind) {
            if ok {
                self.ok[i].inc()
            } else {
                self.failed[i].inc()
            }
        }
    }

    /// Prometheus text exposition format (version 0.0.4).
    pub fn render(&self, sz: &Sizes) -> String {
        let mut o = String::new();
        let counter = |o: &mut String, name: &str, help: &str, v: u64| {
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
        };
        let gauge = |o: &mut String, name: &str, help: &str, v: usize| {
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        };
        counter(
            &mut o,
            "nfkeeper_commits_total",
            "Kernel transactions committed.",
            self.commits.get(),
        );
        counter(
            &mut o,
            "nfkeeper_commit_conflicts_total",
            "Commits refused as a whole (generation changed) and replayed.",
            self.conflicts.get(),
        );
        counter(
            &mut o,
            "nfkeeper_resyncs_total",
            "Tables re-read from the kernel.",
            self.resyncs.get(),
        );
        counter(
            &mut o,
            "nfkeeper_lost_events_total",
            "Times nftables events were lost (everything re-read).",
            self.resyncs_lost_events.get(),
        );
        counter(
            &mut o,
            "nfkeeper_foreign_changes_total",
            "Transactions by someone else that changed our tables.",
            self.foreign_changes.get(),
        );
        counter(
            &mut o,
            "nfkeeper_refused_peers_total",
            "Connections refused by credentials or namespace.",
            self.refused_peers.get(),
        );
        counter(
            &mut o,
            "nfkeeper_bad_requests_total",
            "Malformed, oversized or unknown-version requests.",
            self.bad_requests.get(),
        );
        counter(
            &mut o,
            "nfkeeper_accept_errors_total",
            "Failed accepts the acceptor paused after (out of descriptors or memory).",
            self.accept_errors.get(),
        );
        counter(
            &mut o,
            "nfkeeper_connections_total",
            "Client connections accepted.",
            self.connections.get(),
        );
        counter(
            &mut o,
            "nfkeeper_ipset_kept_reads_total",
            "ipset reads answered from sets kept since an earlier read (no kernel read).",
            self.ipset_kept.get(),
        );
        let _ = writeln!(o, "# HELP nfkeeper_ops_total Requests by operation and outcome.\n# TYPE nfkeeper_ops_total counter");
        for (i, k) in OPS.iter().enumerate() {
            let _ = writeln!(
                o,
                "nfkeeper_ops_total{{op=\"{k}\",result=\"ok\"}} {}",
                self.ok[i].get()
            );
            let _ = writeln!(
                o,
                "nfkeeper_ops_total{{op=\"{k}\",result=\"error\"}} {}",
                self.failed[i].get()
            );
        }
        self.commit_latency
            .render("nfkeeper_commit_seconds", "Kernel commit latency.", &mut o);
        self.batch_writes.render(
            "nfkeeper_commit_writes",
            "Writes folded into one commit.",
            &mut o,
        );
        gauge(
            &mut o,
            "nfkeeper_rules",
            "Rules in the model (all tables, both families).",
            sz.rules,
        );
        gauge(&mut o, "nfkeeper_chains", "Chains in the model.", sz.chains);
        gauge(
            &mut o,
            "nfkeeper_queue_writes",
            "Writes waiting for the writer.",
            sz.queue,
        );
        o
    }
}
