//! `nfkeeper bench daemon --case parallel`: what scripts and orchestrators
//! do when they run side by side — N processes at once, each running M
//! `iptables -w -A X RULE` commands one after another (M distinct rules),
//! then the same M rules deleted by spec (`-D X RULE`).
//!
//! Every tool gets a fresh namespace with an empty chain X (made by the
//! tool itself, untimed): nfkeeper in direct mode (`--direct`), nfkeeper
//! through its daemon (`--daemon`, the daemon started in that namespace
//! first), iptables-nft and iptables-legacy (both `-w`, as scripts call
//! them; their lock file is the host's, see [`crate::netns`]); with
//! $NFKEEPER_OLD_BIN also that build, direct and through its daemon.
//!
//! Reported per tool and phase: the commands that failed (count and the
//! first distinct messages, exit code included), the wall time from the
//! first start to the last exit, and the successful commands per second;
//! and the rules `-S X` lists after each phase (what succeeded must be
//! what is there: N×M minus failed appends, then 0).

use super::{ns, ns_path, rule, Daemon};
use crate::netns::{enter, spawn_in_netns};
use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Distinct failure messages kept per phase.
const MESSAGES: usize = 3;

/// One tool of the case.
struct Tool {
    label: String,
    /// The program and leading words (`nfkeeper --direct iptables`).
    argv: Vec<String>,
    /// Start this nfkeeper's daemon in the namespace first; commands
    /// reach it through $NFKEEPER_SOCKET.
    daemon: Option<String>,
}

/// The tools present here, in report order.
fn tools() -> Vec<Tool> {
    let mut v = Vec::new();
    let mut nfk = |label: &str, bin: String| {
        v.push(Tool {
            label: format!("{label} direct (`--direct`)"),
            argv: vec![bin.clone(), "--direct".into(), "iptables".into()],
            daemon: None,
        });
        v.push(Tool {
            label: format!("{label} through its daemon"),
            argv: vec![bin.clone(), "--daemon".into(), "iptables".into()],
            daemon: Some(bin),
        });
    };
    nfk("nfkeeper", super::super::adapters::nfkeeper_bin());
    if let Some(old) = super::super::adapters::nfkeeper_old_bin() {
        nfk("nfkeeper-old ($NFKEEPER_OLD_BIN)", old);
    }
    for t in ["iptables-nft", "iptables-legacy"] {
        if super::have(t) {
            v.push(Tool {
                label: format!("{t} `-w`"),
                argv: vec![t.into()],
                daemon: None,
            });
        }
    }
    v
}

/// One phase's outcome.
struct Phase {
    wall: Duration,
    ok: usize,
    failed: usize,
    /// Distinct messages in the order first seen, with their counts.
    messages: Vec<(String, usize)>,
}

/// `exit CODE: first line of stderr` of a failed command.
fn failure(o: &std::process::Output) -> String {
    let code = o
        .status
        .code()
        .map_or_else(|| format!("{}", o.status), |c| format!("exit {c}"));
    let err = String::from_utf8_lossy(&o.stderr);
    format!("{code}: {}", err.lines().next().unwrap_or("").trim())
}

/// `procs` threads, each inside `path`'s namespace, run `cmds` commands
/// `argv -w VERB X RULE` one after another (rule `i` of thread `c` is
/// `rule(c, i)`); all threads start together.
fn phase(
    path: &Path,
    argv: &[String],
    env: &[(String, String)],
    verb: &str,
    procs: usize,
    cmds: usize,
) -> Result<Phase, String> {
    let go = std::sync::Barrier::new(procs + 1);
    let (t0, results) = std::thread::scope(|s| {
        let hs: Vec<_> = (0..procs)
            .map(|c| {
                let go = &go;
                s.spawn(move || -> Result<Vec<String>, String> {
                    // Only this thread's namespace changes, and the thread
                    // ends here; its children inherit it (spawned without
                    // a fork of the harness, see crate::netns).
                    let entered = enter(path).map_err(|e| format!("setns: {e}"));
                    go.wait();
                    entered?;
                    let mut failed = Vec::new();
                    for i in 0..cmds {
                        let o = Command::new(&argv[0])
                            .args(&argv[1..])
                            .args(["-w", verb, "X"])
                            .args(rule(c, i))
                            .envs(env.iter().map(|(k, v)| (k, v)))
                            .stdin(Stdio::null())
                            .stdout(Stdio::null())
                            .stderr(Stdio::piped())
                            .output()
                            .map_err(|e| format!("{}: {e}", argv[0]))?;
                        if !o.status.success() {
                            failed.push(failure(&o));
                        }
                    }
                    Ok(failed)
                })
            })
            .collect();
        go.wait();
        let t0 = Instant::now();
        let r: Vec<_> = hs
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panic".into())))
            .collect();
        (t0, r)
    });
    let wall = t0.elapsed();
    let mut p = Phase {
        wall,
        ok: 0,
        failed: 0,
        messages: Vec::new(),
    };
    for r in results {
        for m in r? {
            p.failed += 1;
            match p.messages.iter_mut().find(|(x, _)| *x == m) {
                Some((_, n)) => *n += 1,
                None => p.messages.push((m, 1)),
            }
        }
    }
    p.ok = procs * cmds - p.failed;
    Ok(p)
}

/// Runs `argv -w WORDS...` once in the namespace open as `ns`: its stdout,
/// or why it failed.
fn once(
    ns: &std::fs::File,
    argv: &[String],
    env: &[(String, String)],
    words: &[&str],
) -> Result<String, String> {
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .arg("-w")
        .args(words)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (child, _) = spawn_in_netns(ns.as_fd(), &mut c).map_err(|e| e.to_string())?;
    let o = child.wait_with_output().map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!(
            "{} {}: {}",
            argv.join(" "),
            words.join(" "),
            failure(&o)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Rules `-S X` lists.
fn rules_in_x(ns: &std::fs::File, argv: &[String], env: &[(String, String)]) -> String {
    match once(ns, argv, env, &["-S", "X"]) {
        Ok(out) => out
            .lines()
            .filter(|l| l.starts_with("-A X "))
            .count()
            .to_string(),
        Err(e) => format!("? ({e})"),
    }
}

/// The case: one table row per tool, then the failure messages.
pub(super) fn run(procs: usize, cmds: usize, md: &mut String) -> Result<(), String> {
    let _ = writeln!(
        md,
        "\n### {procs} processes at once × {cmds} commands each: `-A` of distinct rules, then `-D` of them by spec\n\nEach tool in a fresh namespace with an empty chain X; \"wall\" is from the first start to the last exit; per second counts the commands that succeeded; \"rules\" is what `-S X` lists after the phase.\n\n| tool | `-A` failed | `-A` wall | appends/s | rules after `-A` | `-D` failed | `-D` wall | deletes/s | rules after `-D` |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    let mut notes = String::new();
    for t in tools() {
        let n = ns()?;
        let path = ns_path(&n);
        let f = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let d = match &t.daemon {
            Some(bin) => Some(Daemon::start_with(&n, bin, &[])?),
            None => None,
        };
        let env: Vec<(String, String)> = d
            .iter()
            .map(|d| {
                (
                    "NFKEEPER_SOCKET".to_string(),
                    d.sock.to_string_lossy().into_owned(),
                )
            })
            .collect();
        once(&f, &t.argv, &env, &["-N", "X"])?;
        let a = phase(&path, &t.argv, &env, "-A", procs, cmds)?;
        let after_a = rules_in_x(&f, &t.argv, &env);
        let dl = phase(&path, &t.argv, &env, "-D", procs, cmds)?;
        let after_d = rules_in_x(&f, &t.argv, &env);
        drop(d);
        drop(f);
        drop(n);
        let rate = |p: &Phase| format!("{:.0}", p.ok as f64 / p.wall.as_secs_f64());
        let _ = writeln!(
            md,
            "| {} | {} of {} | {:.2} s | {} | {after_a} | {} of {} | {:.2} s | {} | {after_d} |",
            t.label,
            a.failed,
            procs * cmds,
            a.wall.as_secs_f64(),
            rate(&a),
            dl.failed,
            procs * cmds,
            dl.wall.as_secs_f64(),
            rate(&dl),
        );
        for (verb, p) in [("-A", &a), ("-D", &dl)] {
            if p.messages.is_empty() {
                continue;
            }
            let shown: Vec<String> = p
                .messages
                .iter()
                .take(MESSAGES)
                .map(|(m, k)| format!("{k}× `{m}`"))
                .collect();
            let _ = writeln!(
                notes,
                "- {} `{verb}`: {}{}",
                t.label,
                shown.join("; "),
                if p.messages.len() > MESSAGES {
                    format!(" (and {} other messages)", p.messages.len() - MESSAGES)
                } else {
                    String::new()
                }
            );
        }
    }
    if !notes.is_empty() {
        let _ = write!(md, "\nFailures (first distinct messages):\n\n{notes}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn failure_lines() {
        let out = |raw: i32, err: &str| std::process::Output {
            status: std::process::ExitStatus::from_raw(raw),
            stdout: Vec::new(),
            stderr: err.as_bytes().to_vec(),
        };
        let cases = [
            (
                4 << 8,
                "iptables: changed concurrently\nmore\n",
                "exit 4: iptables: changed concurrently",
            ),
            (1 << 8, "", "exit 1: "),
            (9, "x", "signal: 9 (SIGKILL): x"),
        ];
        for (raw, err, want) in cases {
            assert_eq!(failure(&out(raw, err)), want, "{raw}");
        }
    }

    /// Phases count what succeeded and group what failed by message: the
    /// appends all succeed, the deletes too, a second round of deletes
    /// fails for every rule with one message.
    #[test]
    fn phases_count_and_group_failures_root() {
        if !crate::netns::is_root() {
            eprintln!("skipped: creating network namespaces needs root");
            return;
        }
        let Some(tool) = ["iptables-legacy", "iptables-nft"]
            .into_iter()
            .find(|t| super::super::have(t))
        else {
            eprintln!("skipped: neither iptables-legacy nor iptables-nft is installed");
            return;
        };
        let n = ns().expect("namespace");
        let path = ns_path(&n);
        let f = std::fs::File::open(&path).unwrap();
        let argv = vec![tool.to_string()];
        once(&f, &argv, &[], &["-N", "X"]).unwrap();
        let a = phase(&path, &argv, &[], "-A", 2, 3).unwrap();
        assert_eq!((a.ok, a.failed), (6, 0));
        assert_eq!(rules_in_x(&f, &argv, &[]), "6");
        let d = phase(&path, &argv, &[], "-D", 2, 3).unwrap();
        assert_eq!((d.ok, d.failed), (6, 0));
        let again = phase(&path, &argv, &[], "-D", 2, 3).unwrap();
        assert_eq!((again.ok, again.failed), (0, 6));
        assert_eq!(again.messages.len(), 1, "{:?}", again.messages);
        assert!(
            again.messages[0].0.starts_with("exit 1: "),
            "{:?}",
            again.messages
        );
        assert_eq!(rules_in_x(&f, &argv, &[]), "0");
    }
}
