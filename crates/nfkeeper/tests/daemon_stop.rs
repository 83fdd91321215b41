//! `nfkeeper serve` stopped by SIGTERM amid writes, in private network
//! namespaces: the daemon exits 0 and removes its socket, and no client is
//! left in doubt — every write of clients in auto mode succeeds exactly
//! once (through the daemon before the stop, in direct mode after it), and
//! a connection open at the stop finds the "stopping" answer.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod daemon_support;
use daemon_support::{wait_for, Ns, BIN};

/// `nfkeeper serve --socket SOCK` in `ns`, logging to `log`, once it
/// answers.
fn serve(ns: &Ns, sock: &Path, log: &Path) -> Child {
    let child = Command::new("nsenter")
        .arg(ns.path())
        .arg(BIN)
        .args(["serve", "--socket"])
        .arg(sock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("spawn nfkeeper serve");
    wait_for(sock);
    child
}

/// SIGTERM to `child`, then its exit status (within 20 s).
fn terminate(child: &mut Child) -> std::process::ExitStatus {
    // SAFETY: a signal to our own child, not yet reaped.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "serve did not stop within 20 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sigterm_amid_writes_applies_every_write_once_and_removes_the_socket() {
    let Some(ns) = Ns::new("stop") else { return };
    let dir = std::env::temp_dir();
    let sock = dir.join(format!("{}.sock", ns.0));
    let log = dir.join(format!("{}.log", ns.0));
    let (clients, writes) = (2u32, 40u32);
    let (mut through_daemon, mut after_stop) = (0, 0);
    for round in 0..6u32 {
        let mut d = serve(&ns, &sock, &log);
        let first = round * clients * writes;
        let delay = Duration::from_millis(5 + 7 * u64::from(round));
        let results: Vec<(u32, bool, String)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..clients)
                .map(|c| {
                    let (ns, sock) = (&ns, sock.clone());
                    s.spawn(move || {
                        (0..writes)
                            .map(|i| {
                                let id = first + c * writes + i;
                                // Two rules per write: both or neither.
                                let input = format!(
                                    "*filter\n-A INPUT -s 10.0.{}.{} -m comment --comment a{id} -j ACCEPT\n-A INPUT -m comment --comment b{id} -j DROP\nCOMMIT\n",
                                    id >> 8 & 255,
                                    id & 255
                                );
                                let o = ns.run("auto", &sock, &["iptables-restore", "--noflush"], &input);
                                (id, o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            std::thread::sleep(delay);
            let st = terminate(&mut d);
            assert_eq!(
                st.code(),
                Some(0),
                "round {round}: serve's exit after SIGTERM"
            );
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        assert!(
            !sock.exists(),
            "round {round}: the socket file is left behind"
        );
        let logged = std::fs::read_to_string(&log).unwrap();
        assert!(
            logged.contains("event=stop signal=TERM"),
            "round {round}: no stop line in the log:\n{logged}"
        );
        let committed = logged.matches("event=write").count();
        through_daemon += committed;
        after_stop += results.len() - committed.min(results.len());
        let save = ns.kernel_save();
        for (id, ok, err) in &results {
            assert!(ok, "round {round}: write {id} failed: {err}");
            for tag in ["a", "b"] {
                let n = save.matches(&format!("--comment {tag}{id} ")).count();
                assert_eq!(
                    n, 1,
                    "round {round}: rule {tag}{id} is in the kernel {n} times"
                );
            }
        }
    }
    let _ = std::fs::remove_file(&log);
    eprintln!("{through_daemon} writes through the daemon, {after_stop} after its stop");
    assert!(
        through_daemon > 0 && after_stop > 0,
        "the stops must land amid writes ({through_daemon} through the daemon, {after_stop} after)"
    );
}

#[test]
fn a_connection_open_at_the_stop_is_told_nothing_was_applied() {
    let Some(ns) = Ns::new("stopidle") else {
        return;
    };
    let dir = std::env::temp_dir();
    let sock = dir.join(format!("{}.sock", ns.0));
    let log = dir.join(format!("{}.log", ns.0));
    let mut d = serve(&ns, &sock, &log);
    // One connection that has served a request and idles, one that has
    // sent nothing yet.
    let mut idle = proto::client::Client::connect(&sock).unwrap();
    let list = proto::Request::Iptables {
        family: proto::Fam::V4,
        prog: "iptables".into(),
        args: vec!["-S".into()],
    };
    let out = idle.run(&list).unwrap();
    assert_eq!(out.code, 0);
    let mut fresh = proto::client::Client::connect(&sock).unwrap();
    assert_eq!(terminate(&mut d).code(), Some(0));
    let _ = std::fs::remove_file(&log);
    let append = proto::Request::Iptables {
        family: proto::Fam::V4,
        prog: "iptables".into(),
        args: ["-A", "INPUT", "-j", "ACCEPT"].map(String::from).to_vec(),
    };
    for (what, c) in [("idle", &mut idle), ("fresh", &mut fresh)] {
        match c.run(&append) {
            Err(proto::client::ClientError::Refused { code, message }) => {
                assert_eq!(code, proto::STOPPING, "{what}: {message}");
                assert!(message.contains("nothing was applied"), "{what}: {message}");
            }
            other => panic!("{what} connection: expected the stopping answer, got {other:?}"),
        }
    }
    let save = ns.kernel_save();
    assert!(!save.contains("-A INPUT -j ACCEPT"), "{save}");
    // With no daemon, a command runs in direct mode.
    let mut c = ns.cmd("auto", &sock, &["iptables", "-A", "INPUT", "-j", "ACCEPT"]);
    let o = c.spawn().unwrap().wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(ns.kernel_save().contains("-A INPUT -j ACCEPT"));
}
