//! An interrupted bench removes its namespaces at once and exits with
//! 128 + the signal number, leaving no scratch folder (root only).

use rustix::process::{kill_process, Pid, Signal};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("nfkbench-{pid}-");
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn sigint_and_sigterm_remove_the_namespaces() {
    if !bench::netns::is_root() {
        eprintln!("SKIP: the bench needs root");
        return;
    }
    for (sig, code) in [(Signal::INT, 130), (Signal::TERM, 143)] {
        let out =
            std::env::temp_dir().join(format!("nfk-sig-{}-{}", std::process::id(), sig.as_raw()));
        let child = Command::new(env!("CARGO_BIN_EXE_nfkeeper-bench"))
            .args([
                "bench", "ruleset", "--quick", "--sizes", "2000", "--quiet", "--out",
            ])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn nfkeeper-bench");
        let pid = child.id();
        let t0 = Instant::now();
        while namespaces_of(pid).is_empty() {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "no namespace appeared"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let child_pid = Pid::from_raw(pid as i32).expect("a child's PID");
        kill_process(child_pid, sig).expect("kill our own child");
        let o = child.wait_with_output().expect("wait");
        assert_eq!(
            o.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stderr).contains("interrupted by signal"));
        assert_eq!(namespaces_of(pid), Vec::<String>::new(), "namespaces left");
        let scratch: Vec<String> = std::fs::read_dir(std::env::temp_dir())
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(&format!("nfkbench-{pid}-")))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(scratch, Vec::<String>::new(), "scratch folders left");
        let _ = std::fs::remove_dir_all(&out);
    }
}
