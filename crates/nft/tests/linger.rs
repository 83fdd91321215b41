//! `nft::linger`: sockets handed to the namespace's closer outlive the
//! program that handed them over, are closed together once none has come
//! for a while, and are never handed to a closer run by another user.
//! Checked with unix socket pairs standing in for netlink sockets: what
//! matters is who holds a descriptor when, not what it is.
//!
//! The test re-runs its own binary as the program that hands descriptors
//! over (`LINGER_ROLE`), in a network namespace of its own (the closer's
//! address is private to the namespace), so "after the program exited" is
//! real. Needs root for the namespace; skips without.

use std::io::{BufRead, BufReader};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nft::linger::{hand_off, Handoff, QUIET_MS};

const ROLE: &str = "LINGER_ROLE";

fn private_netns() {
    // SAFETY: unshare of the network namespace for this process (the
    // helper is single-purpose and has not started threads of its own).
    let r = unsafe { libc::unshare(libc::CLONE_NEWNET) };
    assert_eq!(r, 0, "unshare: {}", std::io::Error::last_os_error());
}

/// Role `handoff`: hands over fds 3 and 4, closes its own copies, reports,
/// then lives on for a while (the closer must not wait for it).
fn role_handoff() {
    private_netns();
    let a = hand_off(3).expect("first hand-off");
    let b = hand_off(4).expect("second hand-off");
    // SAFETY: fds 3 and 4 were given to this process for this purpose.
    unsafe {
        libc::close(3);
        libc::close(4);
    }
    let pid = match a {
        Handoff::Started(p) => p,
        Handoff::Sent => 0,
    };
    println!("\nlinger-report first={a:?} second={b:?} closer={pid}");
    std::thread::sleep(Duration::from_millis(10 * QUIET_MS as u64));
}

/// Role `impostor`: a listener of another user holds the closer's address;
/// the hand-off must fail and the impostor must receive nothing.
fn role_impostor() {
    private_netns();
    let mut ready = [0; 2];
    // SAFETY: pipe writes two descriptors.
    assert_eq!(unsafe { libc::pipe(ready.as_mut_ptr()) }, 0);
    let name = format!("nfkeeper-closer-{}", unsafe { libc::geteuid() });
    // SAFETY: the child only makes system calls and exits with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        unsafe {
            let mut sa: libc::sockaddr_un = std::mem::zeroed();
            sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
            for (i, b) in name.bytes().enumerate() {
                sa.sun_path[i + 1] = b as libc::c_char;
            }
            let len = (2 + 1 + name.len()) as libc::socklen_t;
            if libc::setresuid(65534, 65534, 65534) != 0 {
                libc::_exit(3);
            }
            let l = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0);
            if libc::bind(l, &sa as *const _ as *const libc::sockaddr, len) != 0
                || libc::listen(l, 8) != 0
            {
                libc::_exit(4);
            }
            libc::write(ready[1], b"r".as_ptr().cast(), 1);
            // Connections may come (a probe that finds the wrong user
            // closes at once); a descriptor must not.
            let deadline = Instant::now() + Duration::from_millis(1000);
            while Instant::now() < deadline {
                let mut p = libc::pollfd {
                    fd: l,
                    events: libc::POLLIN,
                    revents: 0,
                };
                if libc::poll(&mut p, 1, 100) != 1 {
                    continue;
                }
                let c = libc::accept(l, std::ptr::null_mut(), std::ptr::null_mut());
                let mut byte = [0u8; 1];
                let mut iov = libc::iovec {
                    iov_base: byte.as_mut_ptr().cast(),
                    iov_len: 1,
                };
                let mut cbuf = [0u64; 8];
                let mut m: libc::msghdr = std::mem::zeroed();
                m.msg_iov = &mut iov;
                m.msg_iovlen = 1;
                m.msg_control = cbuf.as_mut_ptr().cast();
                m.msg_controllen = std::mem::size_of_val(&cbuf);
                if libc::recvmsg(c, &mut m, 0) >= 0 && m.msg_controllen > 0 {
                    libc::_exit(1);
                }
                libc::close(c);
            }
            libc::_exit(0);
        }
    }
    let mut b = [0u8; 1];
    // SAFETY: reads one byte from our pipe.
    assert_eq!(unsafe { libc::read(ready[0], b.as_mut_ptr().cast(), 1) }, 1);
    let r = hand_off(3);
    let mut status = 0;
    // SAFETY: waits for our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    println!(
        "\nlinger-report handoff_ok={} impostor_exit={}",
        r.is_ok(),
        libc::WEXITSTATUS(status)
    );
}

fn socket_pair() -> (OwnedFd, OwnedFd) {
    let mut sv = [0; 2];
    // SAFETY: socketpair writes two fresh descriptors into `sv`.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            sv.as_mut_ptr(),
        )
    };
    assert_eq!(r, 0, "socketpair: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are ours.
    unsafe { (OwnedFd::from_raw_fd(sv[0]), OwnedFd::from_raw_fd(sv[1])) }
}

/// Whether the peer of `fd` has closed within `wait`.
fn hung_up(fd: &OwnedFd, wait: Duration) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, wait.as_millis() as i32) };
    n == 1 && p.revents & (libc::POLLHUP | libc::POLLRDHUP) != 0
}

/// Runs this test binary as `role`, with `give` as its fds 3, 4, …;
/// returns the child, its `linger-report` line and its output's rest
/// (keep it open: the child writes more after the report). The caller
/// waits for the child.
#[allow(clippy::zombie_processes)]
fn run_role(test: &str, role: &str, give: &[RawFd]) -> (Child, String, impl std::io::Read) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let give = give.to_vec();
    // SAFETY: dup2 between fork and exec is async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            for (i, &fd) in give.iter().enumerate() {
                if libc::dup2(fd, 3 + i as i32) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{role}: no report in {seen:?}");
        }
        if let Some(r) = line.trim().strip_prefix("linger-report ") {
            let r = r.to_string();
            return (child, r, out);
        }
        seen.push_str(&line);
    }
}

fn field<'a>(report: &'a str, key: &str) -> &'a str {
    report
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {report:?}"))
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn closer_holds_sockets_past_the_program_and_closes_them_when_quiet() {
    const NAME: &str = "closer_holds_sockets_past_the_program_and_closes_them_when_quiet";
    if std::env::var(ROLE).as_deref() == Ok("handoff") {
        return role_handoff();
    }
    if !is_root() {
        eprintln!("skipped: needs root (a private network namespace for the closer's address)");
        return;
    }
    let (a_ours, a_theirs) = socket_pair();
    let (b_ours, b_theirs) = socket_pair();
    let started = Instant::now();
    let (mut child, report, _out) = run_role(
        NAME,
        "handoff",
        &[a_theirs.as_raw_fd(), b_theirs.as_raw_fd()],
    );
    drop((a_theirs, b_theirs));
    assert!(field(&report, "first").starts_with("Started("), "{report}");
    assert_eq!(field(&report, "second"), "Sent", "{report}");
    let closer: u32 = field(&report, "closer").parse().unwrap();
    // The program closed its copies; the closer keeps both sockets (and
    // nothing else but its listener) for QUIET_MS after the last one came.
    let fds = || {
        std::fs::read_dir(format!("/proc/{closer}/fd"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    // (Right after the fork it still has the program's descriptors; the
    // second socket may still wait in the listener's queue.)
    let mut n = fds();
    while n != 3 && started.elapsed() < Duration::from_millis(QUIET_MS as u64 / 2) {
        std::thread::sleep(Duration::from_millis(1));
        n = fds();
    }
    if started.elapsed() < Duration::from_millis(QUIET_MS as u64 / 2) {
        assert!(!hung_up(&a_ours, Duration::ZERO), "closed at once");
        assert_eq!(n, 3, "closer {closer}: listener and two sockets");
    }
    // Then it closes them, while the program still runs.
    assert!(
        hung_up(&a_ours, Duration::from_secs(5)),
        "first never closed"
    );
    assert!(
        hung_up(&b_ours, Duration::from_secs(1)),
        "second never closed"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "the program ended before the closer closed (test timing)"
    );
    child.kill().ok();
    child.wait().unwrap();
}

#[test]
fn a_closer_of_another_user_gets_nothing() {
    const NAME: &str = "a_closer_of_another_user_gets_nothing";
    if std::env::var(ROLE).as_deref() == Ok("impostor") {
        return role_impostor();
    }
    if !is_root() {
        eprintln!("skipped: needs root (a private network namespace, another user)");
        return;
    }
    let (_ours, theirs) = socket_pair();
    let (mut child, report, _out) = run_role(NAME, "impostor", &[theirs.as_raw_fd()]);
    assert_eq!(field(&report, "handoff_ok"), "false", "{report}");
    assert_eq!(
        field(&report, "impostor_exit"),
        "0",
        "impostor received a connection: {report}"
    );
    child.wait().unwrap();
}
