//! The agent's Prometheus metrics (text format 0.0.4) and the endpoint
//! that serves them (`--metrics ADDR:PORT`, any path, HTTP/1.0 style: one
//! response per connection).

use crate::host::Counts;
use crate::layout::Status;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters kept by the agent's etcd side.
#[derive(Default)]
pub struct Etcd {
    /// Requests sent, by kind.
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub watches: AtomicU64,
    pub lease_grants: AtomicU64,
    /// Watch responses carrying events.
    pub events: AtomicU64,
    /// Sessions started after the first (reconnects).
    pub reconnects: AtomicU64,
    /// 1 while a session is up.
    pub connected: AtomicU64,
}

impl Etcd {
    pub fn add(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }
}

fn metric(out: &mut String, name: &str, kind: &str, help: &str, v: impl std::fmt::Display) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let _ = writeln!(out, "{name} {v}");
}

/// The metrics text.
pub fn render(c: &Counts, s: &Status, e: &Etcd) -> String {
    let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let mut o = String::new();
    let m = &mut o;
    metric(
        m,
        "nfkeeper_agent_applies_total",
        "counter",
        "Restores applied (each one transaction per family).",
        c.applies,
    );
    metric(
        m,
        "nfkeeper_agent_apply_errors_total",
        "counter",
        "Applies the kernel refused or that broke off.",
        c.apply_errors,
    );
    metric(
        m,
        "nfkeeper_agent_refusals_total",
        "counter",
        "Desired states refused before applying (they do not parse).",
        c.refusals,
    );
    metric(
        m,
        "nfkeeper_agent_lockout_refusals_total",
        "counter",
        "Desired states refused because they would cut the host off.",
        c.lockouts,
    );
    metric(
        m,
        "nfkeeper_agent_drift_total",
        "counter",
        "Times the kernel was found changed by someone else.",
        c.drifts,
    );
    metric(
        m,
        "nfkeeper_agent_checks_total",
        "counter",
        "Reconciliations (kernel reads).",
        c.checks,
    );
    metric(
        m,
        "nfkeeper_agent_last_apply_seconds",
        "gauge",
        "Duration of the last apply.",
        c.last_apply_s,
    );
    metric(
        m,
        "nfkeeper_agent_in_sync",
        "gauge",
        "1 if the kernel holds the desired state.",
        u8::from(s.in_sync),
    );
    metric(
        m,
        "nfkeeper_agent_drift",
        "gauge",
        "1 while drift is reported and left alone.",
        u8::from(s.drift),
    );
    metric(
        m,
        "nfkeeper_agent_error",
        "gauge",
        "1 while the last reconciliation failed.",
        u8::from(!s.error.is_empty()),
    );
    metric(
        m,
        "nfkeeper_agent_applied_revision",
        "gauge",
        "The release the kernel holds.",
        s.revision,
    );
    metric(
        m,
        "nfkeeper_agent_desired_revision",
        "gauge",
        "The release the host should hold.",
        s.desired,
    );
    metric(
        m,
        "nfkeeper_agent_etcd_connected",
        "gauge",
        "1 while connected to etcd.",
        g(&e.connected),
    );
    metric(
        m,
        "nfkeeper_agent_etcd_reconnects_total",
        "counter",
        "Sessions with etcd after the first.",
        g(&e.reconnects),
    );
    let _ = writeln!(
        m,
        "# HELP nfkeeper_agent_etcd_requests_total Requests sent to etcd, by kind."
    );
    let _ = writeln!(m, "# TYPE nfkeeper_agent_etcd_requests_total counter");
    for (k, v) in [
        ("read", &e.reads),
        ("write", &e.writes),
        ("watch", &e.watches),
        ("lease_grant", &e.lease_grants),
    ] {
        let _ = writeln!(
            m,
            "nfkeeper_agent_etcd_requests_total{{kind=\"{k}\"}} {}",
            g(v)
        );
    }
    metric(
        m,
        "nfkeeper_agent_etcd_watch_events_total",
        "counter",
        "Watch responses that carried events.",
        g(&e.events),
    );
    o
}

/// Serve `text()` to every connection on `l` until the runtime ends.
pub async fn serve(l: tokio::net::TcpListener, text: impl Fn() -> String + Send + Sync + 'static) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let text = std::sync::Arc::new(text);
    loop {
        let Ok((mut s, _)) = l.accept().await else {
            continue;
        };
        let text = text.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            // The request itself does not matter; read what came.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), s.read(&mut buf)).await;
            let body = text();
            let head = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(body.as_bytes()).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_format() {
        let c = Counts {
            applies: 3,
            drifts: 1,
            ..Counts::default()
        };
        let s = Status {
            revision: 42,
            desired: 43,
            in_sync: false,
            ..Status::default()
        };
        let e = Etcd::default();
        Etcd::add(&e.reads);
        Etcd::add(&e.reads);
        let t = render(&c, &s, &e);
        for want in [
            "# TYPE nfkeeper_agent_applies_total counter\nnfkeeper_agent_applies_total 3\n",
            "nfkeeper_agent_drift_total 1\n",
            "nfkeeper_agent_in_sync 0\n",
            "nfkeeper_agent_applied_revision 42\n",
            "nfkeeper_agent_desired_revision 43\n",
            "nfkeeper_agent_etcd_requests_total{kind=\"read\"} 2\n",
        ] {
            assert!(t.contains(want), "{want:?} missing from\n{t}");
        }
        // Every sample line is `name[{labels}] value`.
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            let (n, v) = l.rsplit_once(' ').unwrap();
            assert!(n.starts_with("nfkeeper_agent_"), "{l}");
            assert!(v.parse::<f64>().is_ok(), "{l}");
        }
    }
}
