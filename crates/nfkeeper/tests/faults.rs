//! Fault injection with real processes: `nfkeeper iptables-restore` killed
//! with SIGKILL at random moments while it replaces a table leaves the
//! kernel holding either the old ruleset or the new one, never a mix (the
//! daemon's kill test, `daemon.rs` `kill_9_loses_no_acknowledged_write_and_half_applies_none`,
//! covers the daemon). Kernel test in a namespace of its own; skips
//! without root.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_nfkeeper");

/// A ruleset of `n` rules whose addresses start at `base`.
fn ruleset(base: u8, n: usize) -> String {
    let mut t = String::from(
        "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n:web - [0:0]\n",
    );
    for i in 0..n {
        t.push_str(&format!(
            "-A FORWARD -s 10.{base}.{}.{} -p tcp -m tcp --dport {} -j web\n",
            i / 250,
            i % 250,
            1000 + i % 7
        ));
    }
    t.push_str("-A web -j ACCEPT\nCOMMIT\n");
    t
}

fn rules_of(save: &str) -> Vec<&str> {
    save.lines().filter(|l| !l.starts_with('#')).collect()
}

#[test]
fn killed_restores_leave_old_or_new() {
    if !testkit::is_root() {
        eprintln!("SKIP: kernel test needs root");
        return;
    }
    let ns = format!("nfk-faults-{}", std::process::id());
    if !Command::new("ip")
        .args(["netns", "add", &ns])
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("SKIP: cannot create a network namespace");
        return;
    }
    struct Del(String);
    impl Drop for Del {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
        }
    }
    let _del = Del(ns.clone());
    let run = |args: &[&str], input: Option<&str>| {
        let mut c = Command::new("ip")
            .args(["netns", "exec", &ns, BIN, "--direct"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        if let Some(i) = input {
            c.stdin.take().unwrap().write_all(i.as_bytes()).unwrap();
        }
        c
    };
    let save = || {
        let o = run(&["iptables-save"], None).wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let (a, b) = (ruleset(1, 3000), ruleset(2, 3000));
    let st = run(&["iptables-restore"], Some(&a)).wait().unwrap();
    assert!(st.success());
    let want_a = rules_of(&save()).join("\n");
    let st = run(&["iptables-restore"], Some(&b)).wait().unwrap();
    assert!(st.success());
    let want_b = rules_of(&save()).join("\n");
    let st = run(&["iptables-restore"], Some(&a)).wait().unwrap();
    assert!(st.success());
    let (mut old, mut new) = (0, 0);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id());
    for round in 0..30 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // From A, a restore of B killed after a random pause (up to 150 ms:
        // before, during and after its commit).
        let mut c = run(&["iptables-restore"], None);
        let mut stdin = c.stdin.take().unwrap();
        let input = b.clone();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        std::thread::sleep(Duration::from_micros(seed % 150_000));
        let _ = c.kill();
        let _ = c.wait();
        let _ = feeder.join();
        let now = rules_of(&save()).join("\n");
        if now == want_a {
            old += 1;
        } else if now == want_b {
            new += 1;
        } else {
            panic!("round {round}: a mix of old and new:\n{now}");
        }
        let st = run(&["iptables-restore"], Some(&a)).wait().unwrap();
        assert!(st.success());
    }
    eprintln!("30 killed restores: {old} left the old ruleset, {new} the new");
}
