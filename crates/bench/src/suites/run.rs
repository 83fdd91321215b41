//! The runner: cases × adapters, each in a fresh namespace.

use super::model::{Check, Op};
use super::report::{fmt_secs, Record, Status};
use super::{Adapter, Case, Opts, Step};
use crate::netns::{Netns, RunError};
use std::time::{Duration, Instant};

/// Runs every case with every adapter and returns the records (per case,
/// per step, adapters in the given order).
pub fn run(cases: &[Case], adapters: &[Box<dyn Adapter>], o: &Opts) -> Vec<Record> {
    let avail: Vec<Result<String, String>> = adapters.iter().map(|a| a.available()).collect();
    let total: usize = cases.iter().map(|c| c.steps.len()).sum::<usize>() * adapters.len();
    let mut p = Progress {
        on: o.progress,
        total,
        done: 0,
        t0: Instant::now(),
    };
    let mut out = Vec::new();
    for case in cases {
        run_case(case, adapters, &avail, o, &mut out, &mut p);
    }
    out
}

struct Progress {
    on: bool,
    total: usize,
    done: usize,
    t0: Instant,
}

impl Progress {
    fn step(&mut self, r: &Record) {
        self.done += 1;
        if !self.on {
            return;
        }
        let el = self.t0.elapsed().as_secs_f64();
        let left = el / self.done as f64 * (self.total - self.done) as f64;
        let what = match (&r.status, r.summary()) {
            (Status::Ok, Some(s)) => fmt_secs(s.median),
            (st, _) => format!("{} {}", st.word(), st.detail()),
        };
        // The estimate covers this suite only: the runner does not know
        // which suites follow.
        eprintln!(
            "[{s} {}/{}, ~{:.0} s left in {s}] {} N={} {}: {}",
            self.done,
            self.total,
            left,
            r.case,
            r.n,
            r.adapter,
            what,
            s = r.suite,
        );
    }
}

fn record(case: &Case, step: &Step, a: &dyn Adapter, status: Status, samples: Vec<f64>) -> Record {
    Record {
        suite: case.suite.to_string(),
        case: step.id.clone(),
        name: step.name.clone(),
        adapter: a.name().to_string(),
        n: case.n,
        status,
        samples,
    }
}

/// One adapter's namespace for a case, or why it has none.
enum Lane {
    Ready(Netns),
    /// Every step of the case gets this status.
    Out(Status),
}

/// One case with every adapter: each adapter gets its own namespace and
/// setup (untimed); then each step's repetitions go round the adapters —
/// repetition 1 of every adapter, then repetition 2, … — so that a
/// disturbance (a namespace torn down in the background, another program,
/// caches the host's other guests emptied) falls on all of them alike
/// rather than on one adapter's block of repetitions, which is what made
/// ratios drift between runs. After the setup and after every repetition
/// the adapter is quiesced ([`Adapter::quiesce`]: a daemon stopped), so no
/// tool is measured while another one's listener is alive. Records in
/// step order, adapters in the given order.
fn run_case(
    case: &Case,
    adapters: &[Box<dyn Adapter>],
    avail: &[Result<String, String>],
    o: &Opts,
    out: &mut Vec<Record>,
    p: &mut Progress,
) {
    let lanes: Vec<Lane> = adapters
        .iter()
        .zip(avail)
        .map(|(a, av)| {
            let a: &dyn Adapter = a.as_ref();
            if let Err(why) = av {
                return Lane::Out(Status::Unavailable(why.clone()));
            }
            if !case.steps.iter().any(|s| a.commands(&(s.op)(0)).is_some()) {
                return Lane::Out(Status::NoForm);
            }
            let ns = match Netns::new() {
                Ok(ns) => ns,
                Err(e) => return Lane::Out(Status::Fail(format!("namespace: {e}"))),
            };
            for op in std::iter::once(&Op::Reset).chain(&case.setup) {
                if let Err(e) = exec_op(&ns, a, op, o.setup_limit) {
                    return Lane::Out(Status::Fail(format!("setup: {e}")));
                }
            }
            a.quiesce(&ns);
            Lane::Ready(ns)
        })
        .collect();
    for step in &case.steps {
        // Per adapter: its status so far, samples, per-call times.
        let mut st: Vec<(Status, Vec<f64>, Vec<f64>)> = adapters
            .iter()
            .zip(&lanes)
            .map(|(a, lane)| match lane {
                Lane::Out(s) => (s.clone(), Vec::new(), Vec::new()),
                Lane::Ready(_) if a.commands(&(step.op)(0)).is_none() => {
                    (Status::NoForm, Vec::new(), Vec::new())
                }
                Lane::Ready(_) => (Status::Ok, Vec::new(), Vec::new()),
            })
            .collect();
        // Warm-up repetitions come first and are measured like the
        // others (a failure ends the step) but not kept.
        let warm = case.warmup;
        for rep in 0..warm + case.reps.max(1) {
            for ((a, lane), (status, samples, calls)) in adapters.iter().zip(&lanes).zip(&mut st) {
                let Lane::Ready(ns) = lane else { continue };
                if *status != Status::Ok {
                    continue;
                }
                let mut scratch = Vec::new();
                let sink = if rep < warm {
                    &mut scratch
                } else {
                    &mut *calls
                };
                let r = measure_rep(ns, a.as_ref(), step, o, rep, sink);
                a.quiesce(ns);
                match r {
                    Ok(_) if rep < warm => {}
                    Ok(t) => samples.push(t),
                    Err(e) => *status = e,
                }
            }
        }
        for (a, (status, samples, calls)) in adapters.iter().zip(st) {
            let ok = status == Status::Ok;
            let r = record(case, step, a.as_ref(), status, samples);
            p.step(&r);
            out.push(r);
            if step.per_call && ok {
                let mut r = record(case, step, a.as_ref(), Status::Ok, calls);
                r.case = format!("{}.call", step.id);
                r.name = format!("{}, per call", step.name);
                out.push(r);
            }
        }
    }
}

/// The first line of a command's complaint.
fn why(argv: &[String], status: &std::process::ExitStatus, stderr: &str) -> String {
    use std::os::unix::process::ExitStatusExt;
    let line = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let prog = argv.iter().take(6).cloned().collect::<Vec<_>>().join(" ");
    let how = match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "ended".into(),
    };
    format!("`{prog}` {how}: {line}")
}

/// Runs an untimed op to completion; its last stdout.
fn exec_op(ns: &Netns, a: &dyn Adapter, op: &Op, limit: Duration) -> Result<String, String> {
    let cmds = a
        .commands(op)
        .ok_or_else(|| format!("{} has no form of {op:?}", a.name()))?;
    let mut last = String::new();
    for (i, c) in cmds.iter().enumerate() {
        let stdin = match &c.stdin {
            Some(t) => Some(
                ns.stage(&i.to_string(), t.as_bytes())
                    .map_err(|e| e.to_string())?,
            ),
            None => None,
        };
        let r = a
            .exec(ns, c, stdin.as_deref(), limit)
            .map_err(|e| e.to_string())?;
        if !r.status.success() {
            return Err(why(&c.argv, &r.status, &r.stderr));
        }
        last = r.stdout;
    }
    Ok(last)
}

/// Repetitions of one step: (status, per-repetition seconds, per-process
/// seconds).
/// Repetition `rep` of `step` with one adapter: its commands timed (each
/// one's time pushed to `calls`), its effect verified on the first
/// repetition, then its undo (untimed). The total time, or the status that
/// ends the step for this adapter.
fn measure_rep(
    ns: &Netns,
    a: &dyn Adapter,
    step: &Step,
    o: &Opts,
    rep: usize,
    calls: &mut Vec<f64>,
) -> Result<f64, Status> {
    let Some(cmds) = a.commands(&(step.op)(rep)) else {
        return Err(Status::NoForm);
    };
    let mut staged = Vec::with_capacity(cmds.len());
    for (i, c) in cmds.iter().enumerate() {
        staged.push(match &c.stdin {
            Some(t) => Some(
                ns.stage(&i.to_string(), t.as_bytes())
                    .map_err(|e| Status::Fail(format!("staging: {e}")))?,
            ),
            None => None,
        });
    }
    let mut total = Duration::ZERO;
    let mut last = String::new();
    for (c, stdin) in cmds.iter().zip(&staged) {
        let left = o.limit.saturating_sub(total);
        if left.is_zero() {
            return Err(Status::Timeout(o.limit.as_secs_f64()));
        }
        match a.exec(ns, c, stdin.as_deref(), left) {
            Ok(r) if r.status.success() => {
                total += r.elapsed;
                calls.push(r.elapsed.as_secs_f64());
                last = r.stdout;
            }
            Ok(r) => return Err(Status::Fail(why(&c.argv, &r.status, &r.stderr))),
            Err(RunError::TimedOut(_)) => return Err(Status::Timeout(o.limit.as_secs_f64())),
            Err(e) => return Err(Status::Fail(e.to_string())),
        }
    }
    if rep == 0 {
        match verify(ns, a, &step.checks, &last, o.setup_limit.min(VERIFY_LIMIT)) {
            Ok(()) => {}
            // A listing of millions of rules (nft, iptables-nft at the
            // largest sizes) can take many minutes by itself: past the cap
            // the step stands unverified, said on stderr, rather than
            // holding the whole run.
            Err(Unverified::TooSlow) => eprintln!(
                "note: {} {}: verification listing took over {} s; step not verified",
                step.name,
                a.name(),
                VERIFY_LIMIT.as_secs()
            ),
            Err(Unverified::Failed(e)) => return Err(Status::Fail(format!("verify: {e}"))),
        }
    }
    if let Some(u) = &step.undo {
        exec_op(ns, a, &u(rep), o.setup_limit).map_err(|e| Status::Fail(format!("undo: {e}")))?;
    }
    Ok(total.as_secs_f64())
}

/// Longest a verification listing may take (see [`measure`]).
const VERIFY_LIMIT: Duration = Duration::from_secs(60);

/// Why a step's effect was not confirmed.
enum Unverified {
    /// The listing itself exceeded [`VERIFY_LIMIT`].
    TooSlow,
    /// The effect is wrong, or the listing failed.
    Failed(String),
}

impl From<String> for Unverified {
    fn from(e: String) -> Self {
        Unverified::Failed(e)
    }
}

/// Checks a step's effect, listing with the adapter's own tool.
fn verify(
    ns: &Netns,
    a: &dyn Adapter,
    checks: &[Check],
    out: &str,
    limit: Duration,
) -> Result<(), Unverified> {
    let list = |t, c: Option<&str>| -> Result<super::Listing, Unverified> {
        let cmd = a.listing(t, c);
        let r = match a.exec(ns, &cmd, None, limit) {
            Ok(r) => r,
            Err(RunError::TimedOut(_)) => return Err(Unverified::TooSlow),
            Err(e) => return Err(Unverified::Failed(e.to_string())),
        };
        if !r.status.success() {
            return Err(why(&cmd.argv, &r.status, &r.stderr).into());
        }
        Ok(a.parse_listing(&r.stdout))
    };
    let expect = |what: &str, got: usize, want: usize| -> Result<(), Unverified> {
        if got == want {
            Ok(())
        } else {
            Err(format!("{what}: {got}, expected {want}").into())
        }
    };
    for c in checks.iter().filter_map(|c| c.for_dialect(a.dialect())) {
        match c {
            Check::Rules(t, ch, n) => {
                let got = list(*t, Some(ch))?.get(ch).map_or(0, |i| i.rules);
                expect(&format!("rules in {} {ch}", t.name()), got, *n)?
            }
            Check::Chain(t, ch, exists) => {
                if list(*t, None)?.get(ch).is_some() != *exists {
                    return Err(format!("chain {} {ch} exists: {}", t.name(), !exists).into());
                }
            }
            Check::UserChains(t, n) => expect("user chains", list(*t, None)?.user_chains(), *n)?,
            Check::TotalRules(t, n) => expect("rules in table", list(*t, None)?.rules(), *n)?,
            Check::Shows(n) => expect("rules shown", a.parse_listing(out).rules(), *n)?,
            Check::Members(set, n) => {
                let cmds = a
                    .commands(&Op::Set(super::sets::SetOp::List { set: set.clone() }))
                    .unwrap_or_default();
                let Some(cmd) = cmds.first() else {
                    return Err(format!("{}: no listing of set {set}", a.name()).into());
                };
                let r = match a.exec(ns, cmd, None, limit) {
                    Ok(r) => r,
                    Err(RunError::TimedOut(_)) => return Err(Unverified::TooSlow),
                    Err(e) => return Err(Unverified::Failed(e.to_string())),
                };
                if !r.status.success() {
                    return Err(why(&cmd.argv, &r.status, &r.stderr).into());
                }
                expect(
                    &format!("members of {set}"),
                    super::sets::count_members(&r.stdout),
                    *n,
                )?
            }
            Check::ShowsAtLeast(n) => {
                let got = a.parse_listing(out).rules();
                if got < *n {
                    return Err(format!("rules shown: {got}, expected at least {n}").into());
                }
            }
            // `for_dialect` unwrapped it (or left it out).
            Check::Only(..) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::model::{Cmd, Listing, Rule, Table};
    use super::*;

    /// A tool made of `sh`: appends fail with exit 3, flushes "succeed"
    /// without an effect, listings show one rule.
    struct Fake;

    impl Adapter for Fake {
        fn name(&self) -> &str {
            "fake"
        }
        fn available(&self) -> Result<String, String> {
            Ok("fake 1".into())
        }
        fn commands(&self, op: &Op) -> Option<Vec<Cmd>> {
            let sh = |s: &str| Cmd::new(["sh", "-c", s]);
            match op {
                Op::Append(..) => Some(vec![sh("echo no such chain >&2; exit 3")]),
                Op::Delete(..) => None,
                Op::ListRule(..) => Some(vec![sh("sleep 5")]),
                _ => Some(vec![sh("true")]),
            }
        }
        fn listing(&self, _: Table, _: Option<&str>) -> Cmd {
            Cmd::new(["echo", "-A X -j ACCEPT"])
        }
        fn parse_listing(&self, out: &str) -> Listing {
            super::super::adapters::parse_iptables_s(out)
        }
    }

    /// A tool made of `sh` whose commands append its name to `log`; a
    /// listener one also has a "daemon" (`alive`) from its first command
    /// until it is quiesced, and every command of any tool logs whether
    /// one is alive.
    struct Logged {
        name: &'static str,
        listens: bool,
        alive: std::sync::Arc<std::sync::atomic::AtomicBool>,
        log: std::path::PathBuf,
    }

    impl Adapter for Logged {
        fn name(&self) -> &str {
            self.name
        }
        fn available(&self) -> Result<String, String> {
            Ok("logged 1".into())
        }
        fn commands(&self, _: &Op) -> Option<Vec<Cmd>> {
            Some(vec![Cmd::new(["true"])])
        }
        fn listing(&self, _: Table, _: Option<&str>) -> Cmd {
            Cmd::new(["true"])
        }
        fn parse_listing(&self, out: &str) -> Listing {
            super::super::adapters::parse_iptables_s(out)
        }
        fn quiesce(&self, _: &Netns) {
            if self.listens {
                self.alive.store(false, std::sync::atomic::Ordering::SeqCst);
            }
        }
        fn exec(
            &self,
            ns: &Netns,
            cmd: &Cmd,
            stdin: Option<&std::path::Path>,
            limit: Duration,
        ) -> Result<crate::netns::Run, RunError> {
            use std::sync::atomic::Ordering::SeqCst;
            if self.listens {
                self.alive.store(true, SeqCst);
            }
            let line = format!("{} {}\n", self.name, self.alive.load(SeqCst));
            use std::io::Write as _;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.log)
                .and_then(|mut f| f.write_all(line.as_bytes()))
                .map_err(RunError::Io)?;
            ns.run(&cmd.argv, stdin, limit)
        }
    }

    #[test]
    fn no_tool_runs_while_a_listener_lives_root() {
        if !crate::netns::is_root() {
            eprintln!("skipped: needs root for network namespaces");
            return;
        }
        let log = std::env::temp_dir().join(format!("nfk-quiesce-{}", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let f = Table::Filter;
        let case = Case {
            suite: "t",
            n: 1,
            setup: vec![Op::Flush(f, None)],
            steps: vec![
                Step::new("a", "one", move |_| Op::Flush(f, None)),
                Step::new("b", "two", move |_| Op::Flush(f, None)),
            ],
            reps: 2,
            warmup: 0,
        };
        let alive = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ads: Vec<Box<dyn Adapter>> = vec![
            Box::new(Logged {
                name: "daemon",
                listens: true,
                alive: alive.clone(),
                log: log.clone(),
            }),
            Box::new(Logged {
                name: "direct",
                listens: false,
                alive,
                log: log.clone(),
            }),
        ];
        let r = run(&[case], &ads, &Opts::quick());
        let order: Vec<(&str, &str)> = r
            .iter()
            .map(|r| (r.case.as_str(), r.adapter.as_str()))
            .collect();
        // Records keep the adapters' order, step by step.
        assert_eq!(
            order,
            [
                ("a", "daemon"),
                ("a", "direct"),
                ("b", "daemon"),
                ("b", "direct")
            ]
        );
        assert!(r.iter().all(|x| x.status == Status::Ok), "{r:?}");
        let ran = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        let lines: Vec<&str> = ran.lines().collect();
        // Setup (reset + one op) of each, then each step's two repetitions
        // taking turns: the plain tool never runs with the listener alive.
        let want: Vec<&str> = ["daemon true", "daemon true", "direct false", "direct false"]
            .into_iter()
            .chain((0..4).flat_map(|_| ["daemon true", "direct false"]))
            .collect();
        assert_eq!(lines, want);
    }

    #[test]
    fn failures_are_never_times_root() {
        if !crate::netns::is_root() {
            eprintln!("skipped: needs root for network namespaces");
            return;
        }
        let f = Table::Filter;
        let case =
            Case {
                suite: "t",
                n: 1,
                setup: vec![],
                steps: vec![
                    Step::new("a", "append", move |_| Op::Append(f, Rule::cf("X", 0))),
                    Step::new("d", "delete", move |_| Op::Delete(f, Rule::cf("X", 0))),
                    Step::new("f", "flush", move |_| Op::Flush(f, Some("X".into())))
                        .check(Check::Rules(f, "X".into(), 0)),
                    Step::new("l", "list", move |_| Op::ListRule(f, "X".into(), 1)),
                    Step::new("n", "new", move |_| Op::NewChain(f, "Y".into()))
                        .check(Check::Rules(f, "X".into(), 1)),
                ],
                reps: 2,
                warmup: 1,
            };
        let o = Opts {
            reps: 2,
            limit: Duration::from_millis(300),
            ..Opts::quick()
        };
        let ads: Vec<Box<dyn Adapter>> = vec![Box::new(Fake)];
        let r = run(&[case], &ads, &o);
        let st: Vec<&Status> = r.iter().map(|r| &r.status).collect();
        assert!(
            matches!(st[0], Status::Fail(m) if m.contains("exit 3: no such chain")),
            "{st:?}"
        );
        assert_eq!(st[1], &Status::NoForm);
        assert!(
            matches!(st[2], Status::Fail(m) if m.contains("verify: rules in filter X: 1, expected 0")),
            "{st:?}"
        );
        assert_eq!(st[3], &Status::Timeout(0.3));
        assert_eq!(st[4], &Status::Ok);
        // The warm-up repetition is not a sample.
        assert_eq!(r[4].samples.len(), 2);
        assert!(r
            .iter()
            .all(|x| x.status == Status::Ok || x.summary().is_none()));
    }
}
