//! The fleet at scale on one machine: N hosts (network namespaces, each
//! with its nfkeeper daemon and agent) against one etcd, as in tests/lab.
//! Measures, per ruleset change, the time from the rollout's creation in
//! etcd to each host reporting it applied (p50/p99/max), etcd's requests
//! (gRPC calls handled, watch messages sent), and the memory of agents,
//! daemons and etcd. Prints Markdown. Root; run it built with --release:
//!
//! ```text
//! cargo build --release --target x86_64-unknown-linux-gnu --bins --examples
//! target/x86_64-unknown-linux-gnu/release/examples/fleet_scale --hosts 100 --changes 5 \
//!     [--rules 200] [--canary 100 --step 100] [--direct]
//! ```

#[path = "../tests/lab/mod.rs"]
mod lab;

use agent::layout::now_ms;
use lab::Lab;
use std::time::{Duration, Instant};

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn pct(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    if v.is_empty() {
        return 0;
    }
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

/// Sums of etcd's counters: gRPC calls handled, and messages sent on
/// watch streams.
fn etcd_counts(text: &str) -> (f64, f64) {
    let mut calls = 0.0;
    let mut watch_msgs = 0.0;
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, v)) = l.rsplit_once(' ') else {
            continue;
        };
        let v: f64 = v.parse().unwrap_or(0.0);
        if name.starts_with("grpc_server_handled_total") {
            calls += v;
        }
        if name.starts_with("grpc_server_msg_sent_total") && name.contains("grpc_method=\"Watch\"")
        {
            watch_msgs += v;
        }
    }
    (calls, watch_msgs)
}

fn ruleset(n: usize, tag: usize) -> String {
    let mut s = String::from("*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -i lo -j ACCEPT\n-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n-A INPUT -p tcp --dport 22 -j ACCEPT\n");
    for i in 0..n {
        s.push_str(&format!(
            "-A INPUT -s 203.0.{}.{}/32 -p tcp --dport {} -j ACCEPT\n",
            (i >> 8) & 255,
            i & 255,
            1000 + tag
        ));
    }
    s + "COMMIT\n"
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |k: &str, d: usize| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let hosts = get("--hosts", 100);
    let changes = get("--changes", 5);
    let rules = get("--rules", 200);
    let canary = get("--canary", 100);
    let step = get("--step", 100);
    let direct = args.iter().any(|a| a == "--direct");
    if let Some(why) = lab::unavailable() {
        eprintln!("fleet_scale: {why}");
        std::process::exit(1);
    }
    let mut lab = Lab::new();
    eprintln!("lab {} in {}", lab.id, lab.dir.display());
    let (cs, ss) = (canary.to_string(), step.to_string());
    lab.fleet_ok(&[
        "set-group",
        "web",
        "--ruleset",
        "web",
        "--canary",
        &cs,
        "--step",
        &ss,
    ]);
    let t0 = Instant::now();
    for i in 0..hosts {
        let name = format!("h{i:03}");
        lab.add_host(&name, !direct);
        lab.fleet_ok(&["assign", &name, "web"]);
        let mut extra = vec!["--resync=600"];
        if direct {
            extra.push("--direct");
        }
        if i >= 3 {
            extra.push("--no-controller");
        }
        lab.start_agent(i, &extra);
    }
    eprintln!("{hosts} hosts up in {:?}", t0.elapsed());
    lab.wait(Duration::from_secs(120), |s| s.len() == hosts)
        .expect("every agent reports");

    let names: Vec<String> = (0..hosts).map(|i| format!("h{i:03}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut lat_all: Vec<u64> = Vec::new();
    let mut rows = Vec::new();
    for c in 0..=changes {
        let f = lab.file("v4", &ruleset(rules, c));
        lab.fleet_ok(&["set-ruleset", "web", "--v4", &f]);
        let rev = lab.head_rev("web");
        let before = etcd_counts(&lab.etcd_metrics());
        let calls0 = lab.calls;
        let start = now_ms();
        lab.fleet_ok(&["rollout", "web"]);
        let st = lab.wait_rev(&refs, rev, Duration::from_secs(300));
        let all_ms = now_ms() - start;
        // Let the controller settle the group before counting.
        std::thread::sleep(Duration::from_millis(1500));
        let after = etcd_counts(&lab.etcd_metrics());
        // The harness's own calls: its status polls, and `fleet rollout`
        // (five: the group, the head, the rollout, the release count, the
        // transaction).
        let own = (lab.calls - calls0 + 5) as f64;
        // Latency from the rollout's creation in etcd (its start time, in
        // the history once done) to each host's report of the apply.
        let started = lab.etcd(|c| {
            Box::pin(async move {
                let r = c
                    .get(
                        "/nfkeeper/history/web/",
                        Some(etcd_client::GetOptions::new().with_prefix()),
                    )
                    .await
                    .expect("history");
                r.kvs()
                    .iter()
                    .filter_map(|kv| {
                        serde_json::from_slice::<agent::layout::Rollout>(kv.value()).ok()
                    })
                    .map(|r| r.started_ms)
                    .max()
                    .unwrap_or(0)
            })
        });
        let start = if started >= start { started } else { start };
        let mut lat: Vec<u64> = st
            .iter()
            .filter(|s| s.revision == rev)
            .map(|s| s.applied_ms.saturating_sub(start))
            .collect();
        if c == 0 {
            eprintln!("warm-up: all {hosts} applied in {all_ms} ms");
            continue;
        }
        lat_all.extend(lat.iter().copied());
        let row = (
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99),
            *lat.iter().max().unwrap_or(&0),
            after.0 - before.0 - own,
            after.1 - before.1,
        );
        eprintln!(
            "change {c}: p50 {} ms p99 {} ms max {} ms; etcd calls {} watch msgs {}",
            row.0, row.1, row.2, row.3, row.4
        );
        rows.push(row);
    }
    let agent_rss: Vec<u64> = lab
        .hosts
        .iter()
        .filter_map(|h| h.agent.as_ref())
        .map(|c| rss_kb(c.id()))
        .collect();
    let daemon_rss: Vec<u64> = lab
        .hosts
        .iter()
        .filter_map(|h| h.daemon.as_ref())
        .map(|c| rss_kb(c.id()))
        .collect();
    let etcd_rss = lab.etcd.as_ref().map_or(0, |c| rss_kb(c.id()));
    let mean = |v: &[u64]| {
        if v.is_empty() {
            0
        } else {
            v.iter().sum::<u64>() / v.len() as u64
        }
    };
    println!(
        "## Fleet: {hosts} agents in {hosts} network namespaces, one etcd ({} mode)\n",
        if direct { "direct" } else { "daemon" }
    );
    println!(
        "Ruleset of {} rules per change; rollout stages {:?}% (hold 0 s).\n",
        rules + 3,
        agent::rollout::stages(canary as u32, step as u32)
    );
    println!("| change | p50 ms | p99 ms | max ms | etcd gRPC calls | etcd watch messages |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for (i, r) in rows.iter().enumerate() {
        println!(
            "| {} | {} | {} | {} | {:.0} | {:.0} |",
            i + 1,
            r.0,
            r.1,
            r.2,
            r.3,
            r.4
        );
    }
    let mut all = lat_all.clone();
    println!(
        "\nAll changes: p50 {} ms, p99 {} ms; per change {:.0} etcd calls ({:.2} per host), {:.0} watch messages.",
        pct(&mut all.clone(), 0.5),
        pct(&mut all, 0.99),
        rows.iter().map(|r| r.3).sum::<f64>() / rows.len().max(1) as f64,
        rows.iter().map(|r| r.3).sum::<f64>() / rows.len().max(1) as f64 / hosts as f64,
        rows.iter().map(|r| r.4).sum::<f64>() / rows.len().max(1) as f64,
    );
    println!(
        "Memory (RSS): agent mean {} kB, max {} kB; daemon mean {} kB; etcd {} kB.",
        mean(&agent_rss),
        agent_rss.iter().max().unwrap_or(&0),
        mean(&daemon_rss),
        etcd_rss
    );
}
