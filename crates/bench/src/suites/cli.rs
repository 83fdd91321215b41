//! The command line of the baseline suites (`baseline-bench`, `nfkeeper
//! bench cf|ruleset`): options, the run, and the report files.

use crate::netns;
use crate::suites::{self, Machine, Opts};
use std::io::IsTerminal;
use std::time::Duration;

const USAGE: &str = "usage: baseline-bench --suite cf|ruleset|packet|all[,...] [--quick] [--sizes N,...] [--reps N] \
[--limit SECS] [--big RULES,CHAINS] [--max-rules N] [--adapters a,b,...] [--case ID,...] [--out DIR] [--progress|--quiet] [--rcu-default]\n       baseline-bench --compare DIR1,DIR2   (ratios of two runs side by side)";

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

fn parse(args: &[String]) -> Result<Args, String> {
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
        "{}{}\nReps {} ({} for single short commands), limit {} s per step, wall time {:.1} s, load average at the end {}{}.\n",
        suites::to_markdown(&m, &records, &names),
        packet.map_or(String::new(), |p| suites::packet::appendix(&p, &records)),
        a.o.reps,
        a.o.fast_reps,
        a.o.limit.as_secs(),
        t0.elapsed().as_secs_f64(),
        crate::loadavg(),
        if a.o.rcu_expedited {
            "; RCU grace periods expedited (default; --rcu-default keeps the host's setting)"
        } else {
            ""
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
