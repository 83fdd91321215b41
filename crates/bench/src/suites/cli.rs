//! The command line of the baseline suites (`baseline-bench`, `nfkeeper
//! bench cf|ruleset`): options, the run, and the report files.

use crate::netns;
use crate::suites::{self, Machine, Opts};
use std::io::IsTerminal;
use std::time::Duration;

const USAGE: &str = "usage: baseline-bench --suite cf|ruleset|packet|all[,...] [--quick] [--sizes N,...] [--reps N] \
[--limit SECS] [--big RULES,CHAINS] [--max-rules N] [--adapters a,b,...] [--out DIR] [--progress|--quiet]\n       baseline-bench --compare DIR1,DIR2   (ratios of two runs side by side)";

/// Repetitions of the ruleset suite's steps unless `--reps` is given.
const RULESET_MIN_REPS: usize = 7;

struct Args {
    /// `--reps` was given (it then applies to every suite as is).
    reps_given: bool,
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

fn parse(args: &[String]) -> Result<Args, String> {
    let mut o = if args.iter().any(|a| a == "--quick") {
        Opts::quick()
    } else {
        Opts::default()
    };
    o.progress = std::io::stderr().is_terminal();
    let (mut suites, mut adapters, mut out) = (Vec::new(), Vec::new(), String::new());
    let mut sizes = None;
    let mut reps_given = false;
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
                reps_given = true;
            }
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
            "--out" => out = it.next().ok_or("--out needs a value")?.clone(),
            "--progress" => o.progress = true,
            "--quiet" => o.progress = false,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if suites.is_empty() {
        return Err(format!("--suite is required\n{USAGE}"));
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
        reps_given,
        suites,
        adapters,
        out,
        o,
    })
}

/// Run the baseline suites as the `baseline-bench` program (and `nfkeeper
/// bench cf|ruleset`) does; `argv` without the program name. Returns the
/// exit code.
pub fn main(argv: &[String]) -> i32 {
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
        Err(e) => {
            eprintln!("{e}");
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
    let t0 = std::time::Instant::now();
    let mut records = Vec::new();
    for s in a.suites.iter().filter(|s| *s != "packet") {
        // The ruleset matrix's steps are single processes of a few ms,
        // where 3 repetitions leave ratios ±30% apart between runs; its
        // setup, not its steps, is what costs, so it gets 7 unless --reps
        // says otherwise.
        let mut o = a.o.clone();
        if s == "ruleset" && !a.reps_given {
            o.reps = o.reps.max(RULESET_MIN_REPS);
        }
        match suites::cases(s, &o) {
            Ok(c) => records.extend(suites::run(&c, &adapters, &o)),
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
        "{}{}\nReps {}{}, limit {} s per step, wall time {:.1} s, load average at the end {}.\n",
        suites::to_markdown(&m, &records, &names),
        packet.map_or(String::new(), |p| suites::packet::appendix(&p, &records)),
        a.o.reps,
        if a.reps_given || !a.suites.iter().any(|s| s == "ruleset") {
            String::new()
        } else {
            format!(" (ruleset suite {})", a.o.reps.max(RULESET_MIN_REPS))
        },
        a.o.limit.as_secs(),
        t0.elapsed().as_secs_f64(),
        crate::loadavg()
    );
    print!("{md}");
    m.run = suites::machine::RunInfo {
        reps: a.o.reps,
        limit: a.o.limit.as_secs_f64(),
        wall: t0.elapsed().as_secs_f64(),
        load_end: crate::loadavg(),
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
