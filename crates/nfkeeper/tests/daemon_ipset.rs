//! `nfkeeper ipset` through `nfkeeper serve`: every command's output and
//! exit status equal direct mode's (each mode in its own namespace, same
//! commands; `References:` of sets rules use, counted in the daemon's
//! model, against direct mode's count from the kernel), concurrent `ipset add` processes (fail2ban's shape) all
//! land, and a set the daemon changed is what direct mode reads. Needs
//! root and `nsenter` (skips otherwise).

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Output, Stdio};

mod daemon_support;
use daemon_support::{Ns, Serve};

/// Output with what differs by design between two processes taken out:
/// a hash set's `initval` (random per set, as the kernel draws it).
fn comparable(o: &Output) -> (i32, String, String) {
    let mask = |b: &[u8]| -> String {
        let mut t = String::from_utf8_lossy(b).into_owned();
        let mut from = 0;
        while let Some(i) = t[from..].find("initval 0x") {
            let at = from + i + "initval 0x".len();
            let end = (at + 8).min(t.len());
            t.replace_range(at..end, "........");
            from = end;
        }
        t
    };
    (
        o.status.code().unwrap_or(-1),
        mask(&o.stdout),
        mask(&o.stderr),
    )
}

/// (command line, restore input): each run in direct mode in one
/// namespace and through the daemon in another.
const STEPS: &[(&str, &str)] = &[
    ("ipset create s hash:ip timeout 600 counters comment", ""),
    ("ipset create s hash:ip", ""),
    (
        "ipset -exist create s hash:ip timeout 600 counters comment",
        "",
    ),
    ("ipset add s 10.0.0.1", ""),
    ("ipset add s 10.0.0.1", ""),
    ("ipset -exist add s 10.0.0.1 timeout 0 comment x", ""),
    ("ipset add s 10.0.0.0/30 timeout 0", ""),
    ("ipset -exist add s 10.0.0.0/30 timeout 0", ""),
    ("ipset test s 10.0.0.2", ""),
    ("ipset test s 10.0.0.9", ""),
    ("ipset del s 10.0.0.9", ""),
    ("ipset -q del s 10.0.0.9", ""),
    ("ipset del s 10.0.0.3", ""),
    ("iptables -A INPUT -m set --match-set s src -j DROP", ""),
    (
        "iptables -t mangle -A PREROUTING -m set --match-set s dst -j ACCEPT",
        "",
    ),
    ("ipset list -t s", ""),
    ("ipset destroy s", ""),
    ("iptables -F", ""),
    ("ipset list -t s", ""),
    ("iptables -t mangle -F", ""),
    ("ipset list -t", ""),
    ("ipset add nosuch 10.0.0.1", ""),
    ("ipset add s not-an-address", ""),
    ("ipset frobnicate", ""),
    (
        "ipset restore",
        "create n hash:net family inet\nadd n 192.168.0.0/16\nadd n 10.1.0.0/24\n",
    ),
    ("ipset restore", "add n 172.16.0.0/12\nadd n bogus\n"),
    ("ipset -exist restore", "add n 192.168.0.0/16\n"),
    ("ipset list -name", ""),
    ("ipset list n", ""),
    ("ipset save n", ""),
    ("ipset list -terse", ""),
    ("ipset rename n m", ""),
    ("ipset swap s m", ""),
    ("ipset create t hash:net family inet", ""),
    ("ipset swap s m", ""),
    ("ipset flush m", ""),
    ("ipset list m", ""),
    ("ipset destroy nosuch", ""),
    ("ipset destroy", ""),
    ("ipset list", ""),
];

#[test]
fn ipset_through_the_daemon_equals_direct_mode() {
    let Some(direct) = Ns::new("direct") else {
        return;
    };
    let Some(served) = Ns::new("served") else {
        return;
    };
    let d = Serve::start(&served, &[]);
    let none = Path::new("/nonexistent");
    for (line, input) in STEPS {
        let args: Vec<&str> = line.split_whitespace().collect();
        let want = comparable(&direct.run("direct", none, &args, input));
        // Forced daemon mode: a daemon that cannot take the request makes
        // this fail instead of falling back.
        let got = comparable(&served.run("daemon", &d.sock, &args, input));
        assert_eq!(got, want, "`{line}`: through the daemon vs direct mode");
    }
}

#[test]
fn concurrent_adds_through_the_daemon_all_land() {
    const N: usize = 40;
    let Some(ns) = Ns::new("adds") else { return };
    let d = Serve::start(&ns, &[]);
    let o = ns.run(
        "daemon",
        &d.sock,
        &["ipset", "create", "ban", "hash:ip"],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = d.commits();
    let children: Vec<(String, Child)> = (0..N)
        .map(|i| {
            let ip = format!("10.9.{}.{}", i / 200, i % 200 + 1);
            let c = ns
                .cmd("daemon", &d.sock, &["ipset", "add", "ban", &ip])
                .stdin(Stdio::null())
                .spawn()
                .expect("spawn");
            (ip, c)
        })
        .collect();
    for (ip, c) in children {
        let o = c.wait_with_output().unwrap();
        assert!(
            o.status.success() && o.stdout.is_empty() && o.stderr.is_empty(),
            "add {ip}: {o:?}"
        );
    }
    let commits = d.commits() - before;
    eprintln!("{N} concurrent adds: {commits} commits");
    assert!((1..=N as u64).contains(&commits), "{commits} commits");
    // Direct mode reads the kernel: every member is there.
    let o = ns.run(
        "direct",
        Path::new("/nonexistent"),
        &["ipset", "list", "ban"],
        "",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("Number of entries: {N}\n")),
        "{text}"
    );
    for i in 0..N {
        let ip = format!("10.9.{}.{}", i / 200, i % 200 + 1);
        assert!(text.lines().any(|l| l == ip), "{ip} missing:\n{text}");
    }
    // And a second add of one of them is ipset's error, through the daemon.
    let o = ns.run("daemon", &d.sock, &["ipset", "add", "ban", "10.9.0.1"], "");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "ipset v7.21: Element cannot be added to the set: it's already added\n"
    );
}

/// Reads through the daemon meet sets kept from earlier reads only while
/// nothing could have changed them: each step runs through the daemon and
/// says whether its answer came from memory; the answer always equals
/// direct mode's (members added by another process or by nft behind the
/// daemon's back are seen at once; a set with timeouts, or one a `-j SET`
/// rule changes, is always read again).
#[test]
fn kept_reads_follow_the_kernel() {
    let Some(ns) = Ns::new("kept") else { return };
    let d = Serve::start(&ns, &[]);
    let none = Path::new("/nonexistent");
    // (mode, command line, whether the daemon answers from memory)
    let steps: &[(&str, &str, bool)] = &[
        ("daemon", "ipset create s hash:ip", false),
        ("daemon", "ipset add s 10.0.0.1", false),
        ("daemon", "ipset list s", false),
        ("daemon", "ipset list s", true),
        ("daemon", "ipset test s 10.0.0.1", true),
        ("daemon", "ipset test s 10.0.0.2", true),
        // Every set is in the kept picture already.
        ("daemon", "ipset save", true),
        // Another process adds a member: the generation moved.
        ("direct", "ipset add s 10.0.0.2", false),
        ("daemon", "ipset test s 10.0.0.2", false),
        // The test kept what it probed; the listing reads the rest.
        ("daemon", "ipset list s", true),
        // nft, behind every nfkeeper's back.
        (
            "nft",
            "add element inet nfkeeper_ipset s { 10.0.0.3 }",
            false,
        ),
        ("daemon", "ipset list s", false),
        ("daemon", "ipset list s", true),
        // A rule that only looks the set up changes nothing.
        (
            "daemon",
            "iptables -A INPUT -m set --match-set s src -j DROP",
            false,
        ),
        ("daemon", "ipset list s", false),
        ("daemon", "ipset list s", true),
        // One that adds members from the packet path does.
        ("daemon", "iptables -A INPUT -j SET --add-set s src", false),
        ("daemon", "ipset list s", false),
        ("daemon", "ipset list s", false),
        ("daemon", "iptables -D INPUT -j SET --add-set s src", false),
        ("daemon", "ipset list s", false),
        ("daemon", "ipset list s", true),
        // Timeouts: never kept.
        ("daemon", "ipset create t hash:ip timeout 600", false),
        ("daemon", "ipset list", false),
        ("daemon", "ipset list", false),
        ("daemon", "ipset list s", false),
    ];
    for (mode, line, kept) in steps {
        let args: Vec<&str> = line.split_whitespace().collect();
        let before = d.status_count("ipset reads:");
        let o = match *mode {
            "nft" => {
                let mut c = std::process::Command::new("nsenter");
                c.arg(ns.path()).arg("nft").args(&args);
                c.output().expect("nft")
            }
            "direct" => ns.run("direct", none, &args, ""),
            _ => ns.run("daemon", &d.sock, &args, ""),
        };
        assert!(
            o.status.success() || line.contains("test s 10.0.0.2"),
            "`{line}`: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let after = d.status_count("ipset reads:");
        assert_eq!(after > before, *kept, "`{line}`: answered from memory?");
        if *mode == "daemon" && args[0] == "ipset" && matches!(args[1], "list" | "save" | "test") {
            let want = comparable(&ns.run("direct", none, &args, ""));
            assert_eq!(comparable(&o), want, "`{line}`: daemon vs direct mode");
        }
    }
}

/// A daemon older than the client refuses the ipset request type: in auto
/// mode the command runs directly instead (same output as direct mode);
/// forced daemon mode reports the refusal.
#[test]
fn an_older_daemon_means_direct_mode_in_auto_mode() {
    use std::os::unix::net::UnixListener;
    let Some(ns) = Ns::new("old") else { return };
    let sock = std::env::temp_dir().join(format!("{}.sock", ns.0));
    let _ = std::fs::remove_file(&sock);
    let l = UnixListener::bind(&sock).expect("bind");
    // Answers every connection as a daemon without the request would.
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let _ = proto::read_frame(&mut s, 1 << 20, &mut Vec::new());
            let mut out = Vec::new();
            proto::encode_reply(
                &proto::Reply::Error {
                    code: 2,
                    message: "bad request: malformed message: unknown request type 0x06".into(),
                },
                &mut out,
            );
            let _ = s.write_all(&out);
        }
    });
    let args = ["ipset", "create", "x", "hash:ip"];
    let auto = ns.run("auto", &sock, &args, "");
    assert!(
        auto.status.success(),
        "{}",
        String::from_utf8_lossy(&auto.stderr)
    );
    let listed = ns.run("direct", &sock, &["ipset", "list", "-name"], "");
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "x\n");
    let forced = ns.run("daemon", &sock, &["ipset", "list", "-name"], "");
    assert_eq!(forced.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&forced.stderr),
        "ipset: bad request: malformed message: unknown request type 0x06\n"
    );
    let _ = std::fs::remove_file(&sock);
}
