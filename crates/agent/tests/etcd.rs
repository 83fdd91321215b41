//! The agent against a real etcd (Debian's etcd-server), every host in a
//! network namespace of its own (see tests/lab). Skips with the reason
//! without root, etcd or the nfkeeper binary.

mod lab;

use lab::Lab;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(30);

fn skip() -> bool {
    match lab::unavailable() {
        Some(why) => {
            eprintln!("SKIP: {why}");
            true
        }
        None => false,
    }
}

/// A filter table: INPUT drops except established traffic and `ports`.
fn rules(ports: &[u16]) -> String {
    let mut s = String::from("*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -i lo -j ACCEPT\n-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n");
    for p in ports {
        s.push_str(&format!("-A INPUT -p tcp --dport {p} -j ACCEPT\n"));
    }
    s.push_str("COMMIT\n");
    s
}

const V6: &str = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 22 -j ACCEPT\nCOMMIT\n";

/// A lab with `n` hosts (daemons), group `web` on ruleset `web`.
fn fleet(n: usize, group_args: &[&str]) -> (Lab, Vec<String>) {
    let mut lab = Lab::new();
    let names: Vec<String> = (0..n).map(|i| format!("web{i}")).collect();
    let mut args = vec!["set-group", "web", "--ruleset", "web"];
    args.extend_from_slice(group_args);
    lab.fleet_ok(&args);
    for (i, n) in names.iter().enumerate() {
        lab.add_host(n, true);
        lab.fleet_ok(&["assign", n, "web"]);
        lab.start_agent(i, &[]);
    }
    (lab, names)
}

fn publish(lab: &mut Lab, v4: &str, v6: &str) -> i64 {
    let f4 = lab.file("v4", v4);
    let f6 = lab.file("v6", v6);
    lab.fleet_ok(&["set-ruleset", "web", "--v4", &f4, "--v6", &f6]);
    lab.head_rev("web")
}

#[test]
fn apply_update_rollout_rollback_and_refusals() {
    if skip() {
        return;
    }
    let (mut lab, names) = fleet(3, &["--canary", "30", "--step", "35", "--hold", "1"]);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    // Nothing assigned yet: the hosts report, untouched.
    lab.wait(T, |s| {
        s.len() == 3 && s.iter().all(|s| s.revision == 0 && s.in_sync)
    })
    .expect("first statuses");

    // First release.
    let r1 = publish(&mut lab, &rules(&[80]), V6);
    let out = lab.fleet_ok(&["rollout", "web"]);
    assert!(out.contains(&format!("rolling out release {r1}")), "{out}");
    let st = lab.wait_rev(&names, r1, T);
    assert!(
        st.iter().all(|s| s.applies == 1 && s.mode == "daemon"),
        "{st:#?}"
    );
    for i in 0..3 {
        assert!(
            lab.rules(i)
                .contains("-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT"),
            "{}",
            lab.rules(i)
        );
        let v6 = lab.nfk(i, &["ip6tables-save"]).unwrap();
        assert!(v6.contains("--dport 22"), "{v6}");
    }
    // The group settles on it (after the hold); the same release again
    // is refused.
    lab.wait_fleet_status(&format!("ruleset web release {r1},"));
    let (code, _) = lab.fleet(&["rollout", "web"]);
    assert_eq!(code, 1, "the same release again is refused");

    // Update through three stages: the canary host first.
    let r2 = publish(&mut lab, &rules(&[80, 443]), V6);
    lab.fleet_ok(&["rollout", "web"]);
    let mut seen_partial = false;
    let t0 = Instant::now();
    loop {
        let s = lab.statuses();
        let on2 = s.iter().filter(|s| s.healthy_on(r2)).count();
        if (1..3).contains(&on2) {
            seen_partial = true;
        }
        if on2 == 3 {
            break;
        }
        assert!(t0.elapsed() < T, "rollout stuck: {s:#?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(seen_partial, "the canary stage was never seen on its own");
    let hist = lab.wait_history(2);
    assert!(
        hist.contains(&format!("{r1} -> {r2} done stage 3/3")),
        "{hist}"
    );
    assert!(lab.statuses().iter().all(|s| s.applies == 2));

    // Roll back at once.
    let out = lab.fleet_ok(&["rollback", "web", "--now"]);
    assert!(out.contains(&format!("back to release {r1}")), "{out}");
    lab.wait_rev(&names, r1, T);
    assert!(!lab.rules(0).contains("443"));

    // A ruleset the model refuses: the canary refuses it, the rollout
    // stops there, nobody's kernel changes.
    let before: Vec<String> = (0..3).map(|i| lab.rules(i)).collect();
    let bad = publish(
        &mut lab,
        &rules(&[80]).replace("COMMIT", "-A INPUT -j NOWHERE\nCOMMIT"),
        V6,
    );
    let (code, out) = lab.fleet(&["rollout", "web"]);
    assert_eq!(code, 1, "checked before publishing: {out}");
    assert!(out.contains("line"), "{out}");
    lab.fleet_ok(&["rollout", "web", "--no-check"]);
    let st = lab
        .wait(T, |s| {
            s.iter()
                .any(|s| s.desired == bad && s.error.starts_with("refused: release"))
        })
        .expect("the canary refuses");
    assert_eq!(
        st.iter().filter(|s| s.desired == bad).count(),
        1,
        "only the canary got it: {st:#?}"
    );
    let out = lab.wait_fleet_status("failed");
    assert!(out.contains("rollout") && out.contains("failed"), "{out}");
    let after: Vec<String> = (0..3).map(|i| lab.rules(i)).collect();
    assert_eq!(before, after);

    // A ruleset that would cut the hosts off from etcd: refused with the
    // reason. Abort the failed rollout first.
    lab.fleet_ok(&["rollback", "web"]);
    lab.wait_rev(&names, r1, T);
    let lock = publish(&mut lab, "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 80 -j ACCEPT\nCOMMIT\n", V6);
    lab.fleet_ok(&["rollout", "web"]);
    let st = lab
        .wait(T, |s| {
            s.iter().any(|s| s.desired == lock && !s.error.is_empty())
        })
        .expect("lockout refused");
    let refused = st.iter().find(|s| s.desired == lock).unwrap();
    assert!(
        refused.error.starts_with(&format!(
            "refused: lockout: etcd {}:{} (replies in): DROP in filter INPUT",
            lab::CORE_ADDR,
            lab::PORT
        )),
        "{refused:?}"
    );
    assert_eq!(before, (0..3).map(|i| lab.rules(i)).collect::<Vec<_>>());
    lab.wait_fleet_status("failed");
}

#[test]
fn drift_reasserted_or_reported_within_a_second() {
    if skip() {
        return;
    }
    for (policy, reasserted) in [("reassert", true), ("report", false)] {
        let mut lab = Lab::new();
        lab.fleet_ok(&[
            "set-group",
            "web",
            "--ruleset",
            "web",
            "--canary",
            "100",
            "--drift",
            policy,
        ]);
        lab.add_host("web0", true);
        lab.fleet_ok(&["assign", "web0", "web"]);
        lab.start_agent(0, &["--metrics=127.0.0.1:9470"]);
        let names = ["web0".to_string()];
        let r1 = publish(&mut lab, &rules(&[80]), "");
        lab.fleet_ok(&["rollout", "web"]);
        lab.wait_rev(&[names[0].as_str()], r1, T);
        let want = lab.rules(0);
        let t0 = Instant::now();
        lab.nfk(
            0,
            &["iptables", "-I", "INPUT", "-s", "198.18.9.9", "-j", "DROP"],
        )
        .unwrap();
        if reasserted {
            lab.wait(Duration::from_secs(1), |s| {
                s[0].applies == 2 && s[0].in_sync
            })
            .unwrap_or_else(|s| panic!("not re-asserted within 1 s: {s:#?}"));
            assert_eq!(lab.rules(0), want);
        } else {
            let s = lab
                .wait(Duration::from_secs(1), |s| s[0].drift && !s[0].in_sync)
                .unwrap_or_else(|s| panic!("drift not reported within 1 s: {s:#?}"));
            assert_eq!(s[0].applies, 1);
            assert!(lab.rules(0).contains("198.18.9.9"));
        }
        eprintln!("drift ({policy}) handled after {:?}", t0.elapsed());
        let m = lab.host_metrics(0, "127.0.0.1:9470");
        for want in [
            "nfkeeper_agent_drift_total 1\n".to_string(),
            format!(
                "nfkeeper_agent_applies_total {}\n",
                1 + u8::from(reasserted)
            ),
            format!("nfkeeper_agent_in_sync {}\n", u8::from(reasserted)),
            format!("nfkeeper_agent_applied_revision {r1}\n"),
            "nfkeeper_agent_etcd_connected 1\n".to_string(),
        ] {
            assert!(m.contains(&want), "{want:?} not in\n{m}");
        }
    }
}

#[test]
fn agent_killed_mid_apply_leaves_old_or_new() {
    if skip() {
        return;
    }
    // Direct mode (no daemon): killing the agent's process group kills the
    // nfkeeper restore under way.
    let mut lab = Lab::new();
    lab.fleet_ok(&["set-group", "web", "--ruleset", "web", "--canary", "100"]);
    lab.add_host("big", false);
    lab.fleet_ok(&["assign", "big", "web"]);
    lab.start_agent(0, &["--direct"]);
    let many = |n: usize, tag: u16| {
        let mut s = rules(&[80]).replace("COMMIT\n", "");
        for i in 0..n {
            s.push_str(&format!(
                "-A INPUT -s 10.{}.{}.{}/32 -p tcp --dport {tag} -j ACCEPT\n",
                i >> 16,
                (i >> 8) & 255,
                i & 255
            ));
        }
        s + "COMMIT\n"
    };
    let old = many(20000, 1000);
    let new = many(20000, 2000);
    let r_old = publish(&mut lab, &old, V6);
    lab.fleet_ok(&["rollout", "web"]);
    lab.wait_rev(&["big"], r_old, Duration::from_secs(120));
    // Save text without comments and with the chains' counters zeroed:
    // the host's own traffic moves the policy counters between two reads.
    let plain = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| match (l.starts_with(':'), l.rfind(" [")) {
                (true, Some(i)) => format!("{} [0:0]", &l[..i]),
                _ => l.to_string(),
            })
            .collect()
    };
    let held_old = plain(&lab.rules(0));
    let held_old6 = plain(&lab.nfk(0, &["ip6tables-save"]).unwrap());
    let held = |lab: &Lab| {
        let v4 = lab.rules(0);
        let v6: String = lab.nfk(0, &["ip6tables-save"]).unwrap();
        let v4_new = v4.contains("--dport 2000")
            && !v4.contains("--dport 1000")
            && v4.matches("-A INPUT").count() == 20003;
        let v4_old = plain(&v4) == held_old;
        assert!(v4_old || v4_new, "v4 a mix:\n{}", &v4[..v4.len().min(2000)]);
        let v6_old = plain(&v6) == held_old6;
        assert!(v6_old || !v6.contains("-A "), "v6 a mix:\n{v6}");
        v4_new
    };
    // Toggle between the two rulesets; each time kill the agent's
    // process group while its nfkeeper restore runs (seen in /proc), at
    // a different point into it. Every time the kernel holds one or the
    // other, family by family.
    let mut outcomes = Vec::new();
    let mut want_new = true;
    let mut rev = r_old;
    for offset_ms in [0u64, 100, 250, 500, 1000, 2000] {
        rev = publish(
            &mut lab,
            if want_new { &new } else { &old },
            if want_new { "" } else { V6 },
        );
        lab.fleet_ok(&["rollout", "web"]);
        let t0 = Instant::now();
        while !lab.agent_runs(0, "iptables-restore") {
            assert!(t0.elapsed() < Duration::from_secs(60), "no restore started");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(offset_ms));
        lab.kill_agent(0);
        let is_new = held(&lab);
        outcomes.push((offset_ms, is_new == want_new));
        lab.start_agent(0, &[]);
        lab.wait_rev(&["big"], rev, Duration::from_secs(120));
        assert_eq!(held(&lab), want_new);
        want_new = !want_new;
    }
    eprintln!("kills (ms into the restore, the new ruleset held): {outcomes:?}");
    // The agent restarted after each kill finished the job without a mix.
    let _ = rev;
    assert!(lab.status("big").is_some_and(|s| s.error.is_empty()));
}

#[test]
fn etcd_restart_resumes_without_applying_again() {
    if skip() {
        return;
    }
    let (mut lab, names) = fleet(2, &["--canary", "100"]);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let r1 = publish(&mut lab, &rules(&[80]), "");
    lab.fleet_ok(&["rollout", "web"]);
    lab.wait_rev(&names, r1, T);
    lab.stop_etcd();
    std::thread::sleep(Duration::from_secs(2));
    lab.start_etcd();
    // The leases survive the restart; the statuses are still there and
    // nobody applied again.
    std::thread::sleep(Duration::from_secs(4));
    let st = lab.wait_rev(&names, r1, T);
    assert!(st.iter().all(|s| s.applies == 1), "applied again: {st:#?}");
    // The watches resumed: a change converges.
    let r2 = publish(&mut lab, &rules(&[80, 8080]), "");
    lab.fleet_ok(&["rollout", "web"]);
    let st = lab.wait_rev(&names, r2, T);
    assert!(st.iter().all(|s| s.applies == 2), "{st:#?}");
}

#[test]
fn partitioned_agent_expires_and_converges() {
    if skip() {
        return;
    }
    let (mut lab, names) = fleet(2, &["--canary", "100"]);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let r1 = publish(&mut lab, &rules(&[80]), "");
    lab.fleet_ok(&["rollout", "web"]);
    lab.wait_rev(&names, r1, T);
    lab.link(1, false);
    let t0 = Instant::now();
    lab.wait(Duration::from_secs(10), |s| {
        s.len() == 1 && s[0].host == names[0]
    })
    .unwrap_or_else(|s| panic!("the cut-off host's status did not expire: {s:#?}"));
    eprintln!("status expired {:?} after the partition", t0.elapsed());
    // A change while it is away reaches the other host (the controller
    // does not wait for the missing one).
    let r2 = publish(&mut lab, &rules(&[80, 25]), "");
    lab.fleet_ok(&["rollout", "web"]);
    lab.wait_rev(&names[..1], r2, T);
    assert!(!lab.rules(1).contains("--dport 25"));
    lab.link(1, true);
    let st = lab.wait_rev(&names, r2, T);
    assert!(st.iter().all(|s| s.error.is_empty()));
    assert!(lab.rules(1).contains("--dport 25"));
}

trait LabExt {
    fn wait_history(&mut self, n: usize) -> String;
    fn wait_fleet_status(&mut self, word: &str) -> String;
}

impl LabExt for Lab {
    fn wait_history(&mut self, n: usize) -> String {
        let t0 = Instant::now();
        loop {
            let h = self.fleet_ok(&["history", "web"]);
            if h.lines().count() >= n || t0.elapsed() > T {
                return h;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_fleet_status(&mut self, word: &str) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.fleet_ok(&["status", "web"]);
            if s.contains(word) {
                return s;
            }
            assert!(t0.elapsed() < T, "fleet status never said {word:?}:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn tls_with_client_certificates() {
    if skip() {
        return;
    }
    if lab::which_openssl().is_none() {
        eprintln!("SKIP: no openssl command to make certificates");
        return;
    }
    let mut lab = Lab::with_tls();
    lab.fleet_ok(&["set-group", "web", "--ruleset", "web", "--canary", "100"]);
    lab.add_host("tls", true);
    lab.add_host("nocert", true);
    lab.fleet_ok(&["assign", "tls", "web"]);
    lab.fleet_ok(&["assign", "nocert", "web"]);
    lab.start_agent(0, &[]);
    // An agent that trusts the CA but has no client certificate is not let
    // in.
    let dir = lab.tls.take().unwrap();
    let ca = format!("--cacert={}", dir.join("ca.pem").display());
    lab.start_agent(1, &[&ca]);
    let r1 = publish(&mut lab, &rules(&[80]), "");
    lab.fleet_ok(&["rollout", "web"]);
    lab.wait_rev(&["tls"], r1, T);
    std::thread::sleep(Duration::from_secs(1));
    let st = lab.statuses();
    assert!(st.iter().all(|s| s.host != "nocert"), "{st:#?}");
    assert!(lab.rules(0).contains("--dport 80"));
    assert!(!lab.rules(1).contains("--dport 80"));
}

#[test]
fn auth_with_a_user_limited_to_the_prefix() {
    if skip() {
        return;
    }
    let mut lab = Lab::new();
    lab.etcd(|c| {
        Box::pin(async move {
            use etcd_client::Permission;
            c.role_add("fleet").await.expect("role");
            c.role_grant_permission("fleet", Permission::read_write("/nfkeeper/").with_prefix())
                .await
                .expect("grant");
            c.user_add("root", "rootpw", None).await.expect("root");
            c.user_grant_role("root", "root").await.expect("root role");
            c.user_add("agent", "agentpw", None).await.expect("agent");
            c.user_grant_role("agent", "fleet")
                .await
                .expect("agent role");
            c.auth_enable().await.expect("auth on");
        })
    });
    lab.user = Some(("root".into(), "rootpw".into()));
    lab.client = None;
    lab.fleet_ok(&["set-group", "web", "--ruleset", "web", "--canary", "100"]);
    lab.add_host("ok", true);
    lab.add_host("badpw", true);
    lab.fleet_ok(&["assign", "ok", "web"]);
    lab.fleet_ok(&["assign", "badpw", "web"]);
    // The agent's user may touch the prefix only; the controller runs in it.
    lab.start_agent(0, &["--user=agent", "--password=agentpw"]);
    lab.start_agent(1, &["--user=agent:wrong", "--no-controller"]);
    let r1 = publish(&mut lab, &rules(&[80]), "");
    lab.fleet_ok(&["rollout", "web"]);
    lab.wait_rev(&["ok"], r1, T);
    std::thread::sleep(Duration::from_secs(1));
    let st = lab.statuses();
    assert!(st.iter().all(|s| s.host != "badpw"), "{st:#?}");
    assert!(!lab.rules(1).contains("--dport 80"));
}
