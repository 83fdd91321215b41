//! The runner: cases × adapters, each in a fresh namespace.

use super::model::{Check, Op};
use super::report::{fmt_secs, Record, Status};
use super::{Adapter, Case, Opts, Step};
use crate::netns::{Netns, RunError};
use std::time::{Duration, Instant};

/// Runs every case with every adapter (adapters interleaved per case, so
/// they see similar machine load) and returns the records in that order.
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
        for (a, av) in adapters.iter().zip(&avail) {
            run_case(case, a.as_ref(), av, o, &mut out, &mut p);
        }
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
        eprintln!(
            "[{}/{} ~{:.0}s left] {} {} N={} {}: {}",
            self.done, self.total, left, r.suite, r.case, r.n, r.adapter, what
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

fn run_case(
    case: &Case,
    a: &dyn Adapter,
    avail: &Result<String, String>,
    o: &Opts,
    out: &mut Vec<Record>,
    p: &mut Progress,
) {
    let mut all = |status: &dyn Fn(&Step) -> Status, out: &mut Vec<Record>| {
        for s in &case.steps {
            let r = record(case, s, a, status(s), Vec::new());
            p.step(&r);
            out.push(r);
        }
    };
    if let Err(why) = avail {
        return all(&|_| Status::Unavailable(why.clone()), out);
    }
    let has_form = |s: &Step| a.commands(&(s.op)(0)).is_some();
    if !case.steps.iter().any(has_form) {
        return all(&|_| Status::NoForm, out);
    }
    let ns = match Netns::new() {
        Ok(ns) => ns,
        Err(e) => return all(&|_| Status::Fail(format!("namespace: {e}")), out),
    };
    for op in std::iter::once(&Op::Reset).chain(&case.setup) {
        if let Err(e) = exec_op(&ns, a, op, o.setup_limit) {
            return all(&|_| Status::Fail(format!("setup: {e}")), out);
        }
    }
    for step in &case.steps {
        let (status, samples, calls) = if has_form(step) {
            measure(&ns, a, step, o)
        } else {
            (Status::NoForm, Vec::new(), Vec::new())
        };
        let ok = status == Status::Ok;
        let r = record(case, step, a, status, samples);
        p.step(&r);
        out.push(r);
        if step.per_call && ok {
            let mut r = record(case, step, a, Status::Ok, calls);
            r.case = format!("{}.call", step.id);
            r.name = format!("{}, per call", step.name);
            out.push(r);
        }
    }
}

/// The first line of a command's complaint.
fn why(argv: &[String], code: Option<i32>, stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let prog = argv.iter().take(6).cloned().collect::<Vec<_>>().join(" ");
    format!(
        "`{prog}` exit {}: {line}",
        code.map_or("signal".into(), |c| c.to_string())
    )
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
            return Err(why(&c.argv, r.status.code(), &r.stderr));
        }
        last = r.stdout;
    }
    Ok(last)
}

/// Repetitions of one step: (status, per-repetition seconds, per-process
/// seconds).
fn measure(ns: &Netns, a: &dyn Adapter, step: &Step, o: &Opts) -> (Status, Vec<f64>, Vec<f64>) {
    let (mut samples, mut calls) = (Vec::new(), Vec::new());
    for rep in 0..o.reps.max(1) {
        let Some(cmds) = a.commands(&(step.op)(rep)) else {
            return (Status::NoForm, samples, calls);
        };
        let mut staged = Vec::with_capacity(cmds.len());
        for (i, c) in cmds.iter().enumerate() {
            staged.push(match &c.stdin {
                Some(t) => match ns.stage(&i.to_string(), t.as_bytes()) {
                    Ok(p) => Some(p),
                    Err(e) => return (Status::Fail(format!("staging: {e}")), samples, calls),
                },
                None => None,
            });
        }
        let mut total = Duration::ZERO;
        let mut last = String::new();
        for (c, stdin) in cmds.iter().zip(&staged) {
            let left = o.limit.saturating_sub(total);
            if left.is_zero() {
                return (Status::Timeout(o.limit.as_secs_f64()), samples, calls);
            }
            match a.exec(ns, c, stdin.as_deref(), left) {
                Ok(r) if r.status.success() => {
                    total += r.elapsed;
                    calls.push(r.elapsed.as_secs_f64());
                    last = r.stdout;
                }
                Ok(r) => {
                    return (
                        Status::Fail(why(&c.argv, r.status.code(), &r.stderr)),
                        samples,
                        calls,
                    )
                }
                Err(RunError::TimedOut(_)) => {
                    return (Status::Timeout(o.limit.as_secs_f64()), samples, calls)
                }
                Err(e) => return (Status::Fail(e.to_string()), samples, calls),
            }
        }
        samples.push(total.as_secs_f64());
        if rep == 0 {
            match verify(ns, a, &step.checks, &last, o.setup_limit.min(VERIFY_LIMIT)) {
                Ok(()) => {}
                // A listing of millions of rules (nft, iptables-nft at the
                // largest sizes) can take many minutes by itself: past the
                // cap the step stands unverified, said on stderr, rather
                // than holding the whole run.
                Err(Unverified::TooSlow) => eprintln!(
                    "note: {} {}: verification listing took over {} s; step not verified",
                    step.name,
                    a.name(),
                    VERIFY_LIMIT.as_secs()
                ),
                Err(Unverified::Failed(e)) => {
                    return (Status::Fail(format!("verify: {e}")), samples, calls)
                }
            }
        }
        if let Some(u) = &step.undo {
            if let Err(e) = exec_op(ns, a, &u(rep), o.setup_limit) {
                return (Status::Fail(format!("undo: {e}")), samples, calls);
            }
        }
    }
    (Status::Ok, samples, calls)
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
            return Err(why(&cmd.argv, r.status.code(), &r.stderr).into());
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
    for c in checks {
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
            Check::ShowsAtLeast(n) => {
                let got = a.parse_listing(out).rules();
                if got < *n {
                    return Err(format!("rules shown: {got}, expected at least {n}").into());
                }
            }
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
        assert_eq!(r[4].samples.len(), 2);
        assert!(r
            .iter()
            .all(|x| x.status == Status::Ok || x.summary().is_none()));
    }
}
