//! The command line of the baseline suites (`baseline-bench`, `nfkeeper
//! bench cf|ruleset`): options, the run, and the report files.

use crate::netns;
use crate::suites::{self, Machine, Opts, Pin};
use std::io::IsTerminal;
use std::time::Duration;

/// `--help`: every option, with the defaults of the full and the quick
/// run. The program name is the caller's (`nfkeeper bench` or
/// `baseline-bench`), put in by [`usage`].
const HELP: &str = "\
usage: PROG [cf|ruleset|packet|all] [options]      (without a suite: all)
       PROG --compare DIR1,DIR2                 ratios of two runs side by side

Runs each case in network namespaces of its own (root needed; the host's
firewall is never touched) with every tool side by side: nfkeeper (direct and
through its daemon), iptables-legacy, iptables-nft, nft, ipset where a case
uses it. Missing tools are reported, not fatal. Writes results.csv,
results.json, SVG plots, REPORT.md and report.html to --out.

suites:
  cf        Cloud Foundry: N rules appended one process each; single commands
            (-N -A -D -S -X) on RULES rules + CHAINS chains
  ruleset   the iptables-nft study: restores 1.1-1.3, single operations
            2.1-2.13 with N rules in chain X, flushes 3.1 and 4.1, add-on 5.1
  packet    TCP throughput and 64-byte UDP rate over veth through N rules
            (scenarios a-e; f.* on request with --case f.)

options:                                  full run / --quick
  --quick              sizes and repetitions for a first look (all suites
                       in under 5 minutes on 2 CPUs)
  --sizes N,...        N of every suite        1000,10000,50000 / 100,1000,3000
                       (cf appends: 100,1000,3000 / 100,500;
                       packet: 0 plus 100,1000,10000 / 1000)
  --reps N             timed repetitions of every step   5 / 3
                       (single short commands 7 / 15; packet 5 / 5 of
                       1 s / 0.2 s)
  --warmup N           untimed repetitions before them, per step and tool  0
  --limit SECS         limit of one repetition (reported as >limit)  120 / 10
  --big RULES,CHAINS   cf's single-command ruleset     50000,100000 / 5000,10000
  --max-rules N        run 200-chain cases only up to this many rules
                                                           1000000 / 20000
  --adapters a,b,...   tools to compare (nfkeeper, nfkeeper-daemon,
                       nfkeeper-plain, nfkeeper-daemon-plain, iptables-legacy,
                       iptables-nft, nft)                  all but the -plain
  --case ID,...        only cases whose id starts with one of these
                       (2.1, cf.big, a.addr, f.runs16, ...)
  --pin CPU[,CPU]      run the commands (and their daemons) and the packet
                       client on the first CPU, the packet server on the
                       second          commands float; packet 0,1 with 2+ CPUs
  --no-pin             pin nothing
  --rcu-default        keep the host's RCU setting (default: grace periods
                       expedited for the run, restored at the end)
  --out DIR            where the files go    bench-results/SUITES-UTCSTAMP
  --progress | --quiet progress lines on stderr     on when stderr is a terminal
  -h, --help           this text

Ratios in the report are baseline / nfkeeper of each tool's mean of its
fastest half of repetitions (above 1: nfkeeper faster); cells show median
(min-max).
";

/// The help text under the name the program was called by.
pub fn usage(prog: &str) -> String {
    HELP.replace("PROG", prog)
}

/// The one-line hint a parameter problem ends with.
fn hint(prog: &str) -> String {
    format!("Try `{prog} --help' for more information.")
}

struct Args {
    suites: Vec<String>,
    adapters: Vec<String>,
    out: String,
    o: Opts,
}

fn num(v: Option<&String>, flag: &str) -> Result<usize, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.replace('_', "")
        .parse()
        .map_err(|_| format!("{flag}: not a number: {v}"))
}

fn list(v: Option<&String>, flag: &str) -> Result<Vec<usize>, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.split(',')
        .map(|s| num(Some(&s.to_string()), flag))
        .collect()
}

/// Why the command line was refused: help asked for, or a parameter
/// problem.
enum Refused {
    Help,
    Bad(String),
}

impl From<String> for Refused {
    fn from(e: String) -> Self {
        Refused::Bad(e)
    }
}

impl From<&str> for Refused {
    fn from(e: &str) -> Self {
        Refused::Bad(e.into())
    }
}

/// `--pin`'s value: `C` or `C,S`, each a CPU this process may run on.
fn cpus(v: Option<&String>) -> Result<Pin, String> {
    let l = list(v, "--pin")?;
    let (c, sv) = match l[..] {
        [c] => (c, c),
        [c, sv] => (c, sv),
        _ => return Err("--pin takes CPU or CPU,CPU".into()),
    };
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if c >= n || sv >= n {
        return Err(format!("--pin: this machine has CPUs 0 to {} only", n - 1));
    }
    Ok(Pin::Cpus(c, sv))
}

fn parse(args: &[String]) -> Result<Args, Refused> {
    let mut o = if args.iter().any(|a| a == "--quick") {
        Opts::quick()
    } else {
        Opts::default()
    };
    o.progress = std::io::stderr().is_terminal();
    let (mut suites, mut adapters, mut out) = (Vec::new(), Vec::new(), String::new());
    let mut sizes = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => {}
            "--suite" => {
                let v = it.next().ok_or("--suite needs a value")?;
                suites.extend(v.split(',').map(String::from));
            }
            "--sizes" => sizes = Some(list(it.next(), "--sizes")?),
            "--reps" => {
                o.reps = num(it.next(), "--reps")?.max(1);
                o.fast_reps = o.reps;
            }
            "--warmup" => o.warmup = num(it.next(), "--warmup")?,
            "--pin" => o.pin = cpus(it.next())?,
            "--no-pin" => o.pin = Pin::Off,
            "--limit" => o.limit = Duration::from_secs(num(it.next(), "--limit")?.max(1) as u64),
            "--big" => match list(it.next(), "--big")?[..] {
                [r, c] => o.big = (r, c),
                _ => return Err("--big takes RULES,CHAINS".into()),
            },
            "--max-rules" => o.max_rules = num(it.next(), "--max-rules")?,
            "--adapters" => {
                let v = it.next().ok_or("--adapters needs a value")?;
                adapters.extend(v.split(',').map(String::from));
            }
            "--case" => {
                let v = it.next().ok_or("--case needs a value")?;
                o.cases.extend(v.split(',').map(String::from));
            }
            "--out" => out = it.next().ok_or("--out needs a value")?.clone(),
            "--progress" => o.progress = true,
            "--quiet" => o.progress = false,
            "--rcu-expedited" => o.rcu_expedited = true,
            "--rcu-default" => o.rcu_expedited = false,
            "-h" | "--help" => return Err(Refused::Help),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if suites.is_empty() {
        return Err("--suite is required".into());
    }
    // `all`: every kernel suite, in one run and one report.
    if suites.iter().any(|s| s == "all") {
        suites = ["cf", "ruleset", "packet"].map(String::from).to_vec();
    }
    if out.is_empty() {
        let stamp = suites::machine::utc(suites::machine::now_secs(), true);
        out = format!("bench-results/{}-{stamp}", suites.join("+"));
    }
    if let Some(s) = sizes {
        if s.contains(&0) {
            return Err("--sizes: each size must be at least 1".into());
        }
        o.sizes = s.clone();
        o.cf_sizes = s;
    }
    Ok(Args {
        suites,
        adapters,
        out,
        o,
    })
}

/// Run the baseline suites as the `baseline-bench` program (and `nfkeeper
/// bench cf|ruleset`) does; `argv` without the program name, `prog` the
/// name for help and errors. Returns the exit code: 0, 1 (a run that
/// could not be made or written), 2 (a parameter problem).
pub fn main(prog: &str, argv: &[String]) -> i32 {
    if let Some(i) = argv.iter().position(|a| a == "--compare") {
        return match argv.get(i + 1) {
            Some(d) => suites::compare::main(d),
            None => {
                eprintln!("--compare takes DIR1,DIR2");
                2
            }
        };
    }
    let a = match parse(argv) {
        Ok(a) => a,
        Err(Refused::Help) => {
            print!("{}", usage(prog));
            return 0;
        }
        Err(Refused::Bad(e)) => {
            eprintln!("{prog}: {e}\n{}", hint(prog));
            return 2;
        }
    };
    if !netns::is_root() {
        eprintln!("baseline-bench needs root: every case runs in a network namespace it creates");
        return 1;
    }
    netns::watch_signals();
    let stale = netns::cleanup_stale();
    if stale > 0 {
        eprintln!("removed {stale} namespace(s) left by an earlier run");
    }
    let adapters = match suites::baselines(&a.adapters) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let mut m = Machine::probe(&std::env::args().collect::<Vec<_>>());
    for ad in &adapters {
        let v = ad
            .available()
            .unwrap_or_else(|why| format!("missing: {why}"));
        m.set_tool(ad.name(), v);
    }
    // The packet suite measures traffic, not commands: its own runner.
    let packet = a
        .suites
        .iter()
        .any(|s| s == "packet")
        .then(|| suites::packet::Plan::new(&a.o, argv));
    let _rcu = if a.o.rcu_expedited {
        match crate::rcu::expedite() {
            Ok(g) => {
                eprintln!(
                    "note: /sys/kernel/rcu_expedited is 1 for this run (restored at the end; --rcu-default keeps the host's setting)"
                );
                Some(g)
            }
            Err(e) => {
                eprintln!(
                    "/sys/kernel/rcu_expedited: {e} (run with --rcu-default to keep the host's setting)"
                );
                return 1;
            }
        }
    } else {
        None
    };
    // Commands inherit the harness's CPU mask (fork keeps it), daemons
    // included; the packet suite's threads pin themselves (Plan::pin).
    if let Pin::Cpus(c, _) = a.o.pin {
        if let Err(e) = suites::packet::pin(c) {
            eprintln!("--pin: CPU {c}: {e}");
            return 1;
        }
    }
    let t0 = std::time::Instant::now();
    let mut records = Vec::new();
    for s in a.suites.iter().filter(|s| *s != "packet") {
        match suites::cases(s, &a.o) {
            Ok(c) => records.extend(suites::run(&c, &adapters, &a.o)),
            Err(e) => {
                eprintln!("{e}");
                return 2;
            }
        }
    }
    if let Some(p) = &packet {
        records.extend(suites::packet::run(p, &adapters));
    }
    let names: Vec<String> = adapters.iter().map(|x| x.name().to_string()).collect();
    let md = format!(
        "{}{}\nReps {} ({} for single short commands){}, limit {} s per step, wall time {:.1} s, load average at the end {}{}{}.\n",
        suites::to_markdown(&m, &records, &names),
        packet.map_or(String::new(), |p| suites::packet::appendix(&p, &records)),
        a.o.reps,
        a.o.fast_reps,
        match a.o.warmup {
            0 => String::new(),
            w => format!(" after {w} discarded warm-up repetition(s)"),
        },
        a.o.limit.as_secs(),
        t0.elapsed().as_secs_f64(),
        crate::loadavg(),
        if a.o.rcu_expedited {
            "; RCU grace periods expedited (default; --rcu-default keeps the host's setting)"
        } else {
            ""
        },
        match a.o.pin {
            Pin::Cpus(c, _) => format!("; commands pinned to CPU {c}"),
            _ => String::new(),
        }
    );
    print!("{md}");
    m.run = suites::machine::RunInfo {
        reps: a.o.reps,
        limit: a.o.limit.as_secs_f64(),
        wall: t0.elapsed().as_secs_f64(),
        load_end: crate::loadavg(),
        rcu_expedited: a.o.rcu_expedited,
    };
    let dir = std::path::Path::new(&a.out);
    match suites::report::write_files(dir, &m, &records, &names, &md) {
        Ok(files) => eprintln!(
            "wrote {} files to {d}: open {d}/report.html or {d}/REPORT.md",
            files.len(),
            d = dir.display()
        ),
        Err(e) => {
            eprintln!("writing {}: {e}", dir.display());
            return 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options() {
        let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
        // (command line, warm-up, pin, fast reps) or the error's start.
        let ok: &[(&str, usize, Pin, usize)] = &[
            ("--suite cf", 0, Pin::Default, 7),
            ("--suite cf --quick", 0, Pin::Default, 15),
            ("--suite cf --warmup 2", 2, Pin::Default, 7),
            ("--suite cf --pin 0", 0, Pin::Cpus(0, 0), 7),
            ("--suite cf --pin 0 --no-pin --reps 4", 0, Pin::Off, 4),
        ];
        for (line, warm, pin, fast) in ok {
            let a = parse(&args(line)).unwrap_or_else(|_| panic!("{line}"));
            assert_eq!(
                (a.o.warmup, a.o.pin, a.o.fast_reps),
                (*warm, *pin, *fast),
                "{line}"
            );
        }
        if two {
            let a = parse(&args("--suite packet --pin 1,0")).ok().unwrap();
            assert_eq!(a.o.pin, Pin::Cpus(1, 0));
        }
        let bad: &[(&str, &str)] = &[
            ("--suite cf --warmup", "--warmup needs a value"),
            ("--suite cf --warmup x", "--warmup: not a number: x"),
            ("--suite cf --pin 0,0,0", "--pin takes CPU or CPU,CPU"),
            ("--suite cf --pin 4096", "--pin: this machine has CPUs 0 to"),
            ("--suite cf --frob", "unknown argument --frob"),
            ("--quick", "--suite is required"),
            (
                "--suite cf --sizes 0",
                "--sizes: each size must be at least 1",
            ),
        ];
        for (line, want) in bad {
            match parse(&args(line)) {
                Err(Refused::Bad(e)) => assert!(e.starts_with(want), "{line}: {e}"),
                Err(Refused::Help) => panic!("{line}: help"),
                Ok(_) => panic!("{line}: accepted"),
            }
        }
        assert!(matches!(parse(&args("--suite cf -h")), Err(Refused::Help)));
    }

    /// Every option the parser takes is in the help text, and the help
    /// names no option the parser refuses.
    #[test]
    fn help_lists_every_option() {
        let help = usage("nfkeeper bench");
        let src = include_str!("cli.rs");
        let taken: Vec<&str> = src
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"'))
            .filter_map(|l| l.split('"').next())
            .filter(|o| o.starts_with("--") && o.len() > 2 && !o.contains([' ', ':']))
            .collect();
        assert!(taken.len() >= 15, "{taken:?}");
        for o in &taken {
            // --suite is spelled as the positional SUITE in nfkeeper bench.
            if *o != "--suite" && *o != "--rcu-expedited" {
                assert!(help.contains(o), "help lacks {o}");
            }
        }
        for w in help.split(|c: char| c.is_whitespace() || c == '|' || c == '[' || c == ']') {
            if w.starts_with("--") && w.len() > 2 {
                let w = w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
                // --compare is taken by `main` before parsing.
                let known = taken.contains(&w) || w == "--help" || w == "--compare";
                assert!(known, "help names unknown {w}");
            }
        }
    }
}
