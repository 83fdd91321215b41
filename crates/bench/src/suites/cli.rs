//! The command line of the kernel suites (`nfkeeper bench
//! [cf|ruleset|packet|all]`, run by nfkeeper-bench): options (clap), the
//! run, and the report files.

use crate::args::{self, flag, get_words, value, words, Sizes};
use crate::netns;
use crate::suites::packet::Given;
use crate::suites::{self, Machine, Opts, Pin};
use clap::{Arg, ArgMatches};
use std::io::IsTerminal;
use std::time::Duration;

/// `--help`: every option, with the defaults of the full and the quick
/// run side by side (which clap's generated help cannot show, so it is
/// written here; `help_lists_every_option` keeps it and [`SuiteArgs`] in
/// step). The program name is the caller's (`nfkeeper bench`), put in by
/// [`usage`].
const HELP: &str = "\
usage: PROG [cf|ruleset|kube|ipset|packet|all] [options] (without a suite: all)
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
  kube      kube-proxy's syncs (iptables-restore, no flush, with counters;
            nft: nft -f of its nftables mode's shape) at N services of 3
            endpoints: first load, full sync, partial sync, an endpoint
            added or removed (not in all)
  ipset     a hash:ip set of N members: restore, list, one process per add,
            test, list -name; nfkeeper ipset against the ipset tool and nft
            (their default adapters; not in all)
  packet    TCP throughput and 64-byte UDP rate over veth through N rules
            (scenarios a-e, g.compat, h.set (not in --quick);
            f.* on request with --case f.); k.kube: new connections and
            one connection to a service through kube-proxy's nat table of
            N services (not in --quick)

options:                                  full run / --quick
  --quick              sizes and repetitions for a first look (all suites
                       in under 5 minutes on 2 CPUs)
  --sizes N,...        N of every suite        1000,10000,50000 / 100,1000,3000
                       (cf appends: 100,1000,3000 / 100,500;
                       kube: 1000,5000 / 1000;
                       ipset: 100000,1000000 / 10000,100000;
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
                       iptables-nft, nft, ipset; nfkeeper-old,
                       nfkeeper-daemon-old: the build in $NFKEEPER_OLD_BIN)
                                             all but the -plain and -old
  --case ID,...        only cases whose id starts with one of these
                       (2.1, cf.big, a.addr, f.runs16, ...)
  --pin CPU[,CPU]      run the commands (and their daemons) and the packet
                       client on the first CPU, the packet server on the
                       second          commands float; packet 0,1 with 2+ CPUs
  --no-pin             pin nothing
  --rcu-expedited      expedite RCU grace periods for the run (restored at
                       the end)               the host's setting
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

/// The options of the kernel suites, as [`HELP`] describes them (clap
/// parses them, see [`SuiteArgs::args`]; `--help` prints [`HELP`]).
/// Absent options take the full run's defaults, or the quick run's with
/// `--quick`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuiteArgs {
    pub quick: bool,
    /// More suites for the same run and report (`--suite cf,packet`,
    /// hidden: the subcommand names one).
    pub suite: Vec<String>,
    pub sizes: Option<Sizes>,
    pub reps: Option<usize>,
    pub warmup: Option<usize>,
    /// `--limit`, seconds.
    pub limit: Option<usize>,
    pub big: Option<(usize, usize)>,
    pub max_rules: Option<usize>,
    pub adapters: Vec<String>,
    /// `--case`.
    pub cases: Vec<String>,
    pub pin: Option<Pin>,
    pub no_pin: bool,
    pub rcu_expedited: bool,
    pub out: Option<String>,
    pub progress: bool,
    pub quiet: bool,
    pub compare: Option<String>,
}

impl SuiteArgs {
    /// The options as clap arguments. Of two that undo each other
    /// (`--pin`/`--no-pin`, `--progress`/`--quiet`, `--rcu-expedited`/
    /// `--rcu-default`, the default, hidden) the last one given counts.
    pub fn args() -> Vec<Arg> {
        vec![
            flag("quick"),
            words("suite", "SUITE,...")
                .value_parser(["cf", "ruleset", "kube", "ipset", "packet", "all"])
                .hide(true),
            value("sizes", "N,...", args::sizes),
            value("reps", "N", args::num),
            value("warmup", "N", args::num),
            value("limit", "SECS", args::num),
            value("big", "RULES,CHAINS", big),
            value("max-rules", "N", args::num),
            words("adapters", "A,..."),
            words("case", "ID,..."),
            value("pin", "CPU[,CPU]", cpus).overrides_with("no-pin"),
            flag("no-pin").overrides_with("pin"),
            flag("rcu-expedited").overrides_with("rcu-default"),
            flag("rcu-default")
                .overrides_with("rcu-expedited")
                .hide(true),
            value(
                "out",
                "DIR",
                clap::builder::NonEmptyStringValueParser::new(),
            ),
            flag("progress").overrides_with("quiet"),
            flag("quiet").overrides_with("progress"),
            value(
                "compare",
                "DIR1,DIR2",
                clap::builder::NonEmptyStringValueParser::new(),
            ),
        ]
    }

    /// The options from what clap matched with [`SuiteArgs::args`].
    pub fn from_matches(m: &ArgMatches) -> SuiteArgs {
        let n = |name: &str| m.get_one::<usize>(name).copied();
        let text = |name: &str| m.get_one::<String>(name).cloned();
        SuiteArgs {
            quick: m.get_flag("quick"),
            suite: get_words(m, "suite"),
            sizes: m.get_one::<Sizes>("sizes").cloned(),
            reps: n("reps"),
            warmup: n("warmup"),
            limit: n("limit"),
            big: m.get_one::<(usize, usize)>("big").copied(),
            max_rules: n("max-rules"),
            adapters: get_words(m, "adapters"),
            cases: get_words(m, "case"),
            pin: m.get_one::<Pin>("pin").copied(),
            no_pin: m.get_flag("no-pin"),
            rcu_expedited: m.get_flag("rcu-expedited"),
            out: text("out"),
            progress: m.get_flag("progress"),
            quiet: m.get_flag("quiet"),
            compare: text("compare"),
        }
    }
}

/// `--big`'s value: exactly two counts.
fn big(v: &str) -> Result<(usize, usize), String> {
    match args::list(v)?[..] {
        [r, c] => Ok((r, c)),
        _ => Err("takes RULES,CHAINS".into()),
    }
}

/// `--pin`'s value: `C` or `C,S`, each a CPU this process may run on.
fn cpus(v: &str) -> Result<Pin, String> {
    let (c, sv) = match args::list(v)?[..] {
        [c] => (c, c),
        [c, sv] => (c, sv),
        _ => return Err("takes CPU or CPU,CPU".into()),
    };
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if c >= n || sv >= n {
        return Err(format!("this machine has CPUs 0 to {} only", n - 1));
    }
    Ok(Pin::Cpus(c, sv))
}

/// What a command line asks for, defaults filled in.
#[derive(Debug)]
struct Run {
    suites: Vec<String>,
    adapters: Vec<String>,
    out: String,
    o: Opts,
    given: Given,
}

impl SuiteArgs {
    /// The run: `suite` (the subcommand; none: `all`) and `--suite`'s, on
    /// the full or quick defaults with the options given on top.
    fn resolve(&self, suite: Option<&str>) -> Run {
        let mut o = if self.quick {
            Opts::quick()
        } else {
            Opts::default()
        };
        o.progress = if self.progress || self.quiet {
            self.progress
        } else {
            std::io::stderr().is_terminal()
        };
        if let Some(r) = self.reps {
            o.reps = r.max(1);
            o.fast_reps = o.reps;
        }
        if let Some(w) = self.warmup {
            o.warmup = w;
        }
        if let Some(p) = self.pin {
            o.pin = p;
        }
        if self.no_pin {
            o.pin = Pin::Off;
        }
        if let Some(l) = self.limit {
            o.limit = Duration::from_secs(l.max(1) as u64);
        }
        if let Some(b) = self.big {
            o.big = b;
        }
        if let Some(m) = self.max_rules {
            o.max_rules = m;
        }
        o.cases = self.cases.clone();
        o.rcu_expedited = self.rcu_expedited;
        if let Some(s) = &self.sizes {
            o.sizes = s.clone();
            o.cf_sizes = s.clone();
            o.kube_sizes = s.clone();
            o.ipset_sizes = s.clone();
        }
        let mut suites: Vec<String> = suite.into_iter().map(String::from).collect();
        suites.extend(self.suite.iter().cloned());
        // None named, or `all`: every kernel suite, in one run and one
        // report.
        if suites.is_empty() || suites.iter().any(|s| s == "all") {
            suites = ["cf", "ruleset", "packet"].map(String::from).to_vec();
        }
        let out = self.out.clone().unwrap_or_else(|| {
            let stamp = suites::machine::utc(suites::machine::now_secs(), true);
            format!("bench-results/{}-{stamp}", suites.join("+"))
        });
        // The ipset suite alone: the tools that keep sets.
        let adapters = if self.adapters.is_empty() && suites == ["ipset"] {
            ["nfkeeper", "ipset", "nft"].map(String::from).to_vec()
        } else {
            self.adapters.clone()
        };
        Run {
            suites,
            adapters,
            out,
            o,
            given: Given {
                quick: self.quick,
                sizes: self.sizes.is_some(),
                reps: self.reps.is_some(),
            },
        }
    }
}

/// Runs the kernel suites: `suite` as the subcommand named it (none:
/// every one, or `--suite`'s), `prog` the name for messages. Returns the
/// exit code: 0, 1 (a run that could not be made or written), 2 (a
/// parameter problem).
pub fn main(prog: &str, suite: Option<&str>, args: &SuiteArgs) -> i32 {
    if let Some(dirs) = &args.compare {
        return suites::compare::main(dirs);
    }
    let a = args.resolve(suite);
    if !netns::is_root() {
        eprintln!("{prog} needs root: every case runs in a network namespace it creates");
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
            eprintln!("{prog}: {e}");
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
        .then(|| suites::packet::Plan::new(&a.o, a.given));
    let _rcu = if a.o.rcu_expedited {
        match crate::rcu::expedite() {
            Ok(g) => {
                eprintln!(
                    "note: /sys/kernel/rcu_expedited is 1 for this run (--rcu-expedited; restored at the end)"
                );
                Some(g)
            }
            Err(e) => {
                eprintln!(
                    "/sys/kernel/rcu_expedited: {e} (run without --rcu-expedited to keep the host's setting)"
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
            "; RCU grace periods expedited (--rcu-expedited)"
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

    /// The suite options alone, as `nfkeeper bench cf` takes them.
    fn command() -> clap::Command {
        clap::Command::new("bench").args(SuiteArgs::args())
    }

    fn matches(argv: &[&str]) -> Result<SuiteArgs, clap::Error> {
        let argv = std::iter::once("bench").chain(argv.iter().copied());
        command()
            .try_get_matches_from(argv)
            .map(|m| SuiteArgs::from_matches(&m))
    }

    fn parse(line: &str) -> Result<Run, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        matches(&words)
            .map(|a| a.resolve(Some("cf")))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn options() {
        let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
        // (command line, warm-up, pin, fast reps, progress).
        let ok: &[(&str, usize, Pin, usize, Option<bool>)] = &[
            ("", 0, Pin::Default, 7, None),
            ("--quick", 0, Pin::Default, 15, None),
            ("--warmup 2 --quiet", 2, Pin::Default, 7, Some(false)),
            ("--pin 0 --progress", 0, Pin::Cpus(0, 0), 7, Some(true)),
            ("--pin 0 --no-pin --reps 4", 0, Pin::Off, 4, None),
            (
                "--no-pin --pin 0 --quiet --progress",
                0,
                Pin::Cpus(0, 0),
                7,
                Some(true),
            ),
        ];
        for (line, warm, pin, fast, progress) in ok {
            let a = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(
                (a.o.warmup, a.o.pin, a.o.fast_reps),
                (*warm, *pin, *fast),
                "{line}"
            );
            if let Some(p) = progress {
                assert_eq!(a.o.progress, *p, "{line}");
            }
        }
        if two {
            assert_eq!(parse("--pin 1,0").unwrap().o.pin, Pin::Cpus(1, 0));
        }
        let bad: &[(&str, &str)] = &[
            ("--warmup", "a value is required for '--warmup <N>'"),
            (
                "--warmup x",
                "invalid value 'x' for '--warmup <N>': not a number: x",
            ),
            ("--pin 0,0,0", "takes CPU or CPU,CPU"),
            ("--pin 4096", "this machine has CPUs 0 to"),
            ("--big 1", "takes RULES,CHAINS"),
            ("--frob", "unexpected argument '--frob'"),
            (
                "--suite frob",
                "invalid value 'frob' for '--suite <SUITE,...>'",
            ),
            ("--sizes 0", "each size must be at least 1"),
        ];
        for (line, want) in bad {
            let e = parse(line).expect_err(line);
            assert!(e.contains(want), "{line}: {e}");
        }
        let help = matches(&["--quick", "-h"]).unwrap_err();
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
    }

    /// What the options set, beyond the checks above: defaults, sizes for
    /// every suite, suites and the output folder.
    #[test]
    fn resolved_run() {
        let a = parse("--quick --sizes 10,20 --big 5,6 --limit 0 --rcu-expedited --out d").unwrap();
        assert_eq!(
            (a.o.sizes.clone(), a.o.cf_sizes.clone()),
            (vec![10, 20], vec![10, 20])
        );
        assert_eq!(
            (a.o.big, a.o.limit, a.o.rcu_expedited),
            ((5, 6), Duration::from_secs(1), true)
        );
        assert_eq!((a.suites, a.out), (vec!["cf".to_string()], "d".to_string()));
        let g = a.given;
        assert_eq!((g.quick, g.sizes, g.reps), (true, true, false));
        let a = parse("--rcu-expedited --rcu-default --suite packet").unwrap();
        assert!(!a.o.rcu_expedited);
        assert_eq!(a.suites, ["cf", "packet"]);
        assert!(a.out.starts_with("bench-results/cf+packet-"), "{}", a.out);
        let all = matches(&["--suite", "cf,all"]).unwrap().resolve(None);
        assert_eq!(all.suites, ["cf", "ruleset", "packet"]);
        let none = matches(&[]).unwrap().resolve(None);
        assert_eq!(none.suites, ["cf", "ruleset", "packet"]);
        assert_eq!(none.o.sizes, Opts::default().sizes);
    }

    /// Every option the parser takes is in the help text, and the help
    /// names no option the parser refuses.
    #[test]
    fn help_lists_every_option() {
        let help = usage("nfkeeper bench");
        let taken: Vec<String> = SuiteArgs::args()
            .iter()
            .filter_map(|a| Some((a.get_long()?, a.is_hide_set())))
            .map(|(l, hidden)| {
                let o = format!("--{l}");
                // Hidden ones (--suite, spelled as the subcommand;
                // --rcu-default, the default) are not in the text.
                assert_eq!(!hidden, help.contains(&o), "{o} hidden {hidden}");
                o
            })
            .collect();
        assert!(taken.len() >= 18, "{taken:?}");
        for w in help.split(|c: char| c.is_whitespace() || c == '|' || c == '[' || c == ']') {
            if w.starts_with("--") && w.len() > 2 {
                let w = w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
                assert!(
                    taken.iter().any(|t| t == w) || w == "--help",
                    "help names unknown {w}"
                );
            }
        }
    }
}
