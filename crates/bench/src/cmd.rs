//! The command line of nfkeeper-bench: `bench`, `demo` and `load`, as
//! `nfkeeper bench|demo|load` forwards them (nfkeeper replaces itself with
//! this program, same arguments, argv[0] included), parsed by clap.
//!
//! Messages name the program as it was invoked: `nfkeeper bench ...` when
//! forwarded, `nfkeeper-bench bench ...` when run directly.

use crate::demo::{DemoArgs, LoadArgs};
use crate::suites::cli::{self, SuiteArgs};
use crate::suites::conformance::cli::{self as conformance, ConformanceArgs};
use crate::suites::serve::{self, DaemonArgs};
use crate::ModelArgs;
use clap::{ArgMatches, Command};
use std::ffi::OsString;

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Cmd {
    /// `bench [cf|ruleset|kube|ipset|packet|all]`: the kernel suites; `None` for all
    /// of them (or `--suite`'s).
    Suites(Option<&'static str>, SuiteArgs),
    /// `bench model`.
    Model(ModelArgs),
    /// `bench daemon`.
    Daemon(DaemonArgs),
    /// `bench conformance`.
    Conformance(ConformanceArgs),
    Demo(DemoArgs),
    Load(LoadArgs),
}

/// The kernel suites' subcommands of `bench`.
const SUITES: [&str; 6] = ["cf", "ruleset", "kube", "ipset", "packet", "all"];

/// The suites `bench --help` lists after the kernel suites' text.
const BENCH_OTHER: &str = "
also:
  PROG model [--quick] [--sizes N,...] [--reps N] [--op-reps N] [--batch K]
                       the in-memory model alone (no kernel, no root)
  PROG daemon [--quick] [--case C,...] [--procs N] [--cmds M] [--rcu-expedited]
              [--out DIR]
                       nfkeeper serve against direct mode and iptables-nft;
                       parallel scripts; hostile peers (daemon --help)
  PROG conformance [--adapters A,...] [--vectors DIR] [--files P,...] [--jobs N]
                   [--out DIR]
                       iptables 1.8.11's extension test vectors through each
                       tool's command line, as iptables-test.py runs them
";

/// The command line under the name `prog`. `bench` and its kernel suites
/// print the suites' own help text (`suites::cli::HELP`).
fn command(prog: &str) -> Command {
    let bench = format!("{prog} bench");
    let help = cli::usage(&bench);
    let with_others = format!("{help}{}", BENCH_OTHER.replace("PROG", &bench));
    let suite = |name: &'static str| {
        Command::new(name)
            .args(SuiteArgs::args())
            .override_help(help.clone())
    };
    Command::new("nfkeeper-bench")
        .bin_name(prog)
        .about(
            "nfkeeper's benchmark suites, its demo and `load`, outside the nfkeeper \
             binary (`nfkeeper bench|demo|load` run this program)",
        )
        .subcommand_required(true)
        .disable_help_subcommand(true)
        .subcommand(
            Command::new("bench")
                .about("The benchmark suites (`bench --help`)")
                .args(SuiteArgs::args())
                .args_conflicts_with_subcommands(true)
                .disable_help_subcommand(true)
                .override_help(with_others)
                .subcommands(SUITES.map(suite))
                .subcommand(
                    Command::new("model")
                        .about(
                            "The in-memory model alone (no kernel, no root): restore, \
                             single operations, save, memory, as Markdown",
                        )
                        .args(ModelArgs::args()),
                )
                .subcommand(
                    Command::new("daemon")
                        .about(
                            "nfkeeper serve against direct mode and iptables-nft, in \
                             network namespaces of its own (root needed): one-process \
                             appends onto N rules, API operations, concurrent clients, \
                             parallel scripts (N processes × M commands, every tool), \
                             memory, hostile peers (stalls, floods, trickles, descriptors \
                             exhausted). With $NFKEEPER_OLD_BIN, parallel and hostile \
                             also measure that build",
                        )
                        .args(DaemonArgs::args()),
                )
                .subcommand(
                    Command::new("conformance")
                        .about(
                            "iptables 1.8.11's extension test vectors (extensions/*.t) \
                             through each tool's command line into the kernel of fresh \
                             network namespaces, checked with the tool's own save, as \
                             iptables-test.py runs them (root needed): passes per file \
                             and tool, failures per tool in --out",
                        )
                        .args(ConformanceArgs::args()),
                ),
        )
        .subcommand(
            Command::new("demo")
                .about(
                    "Generated rulesets through the model and, as root, the kernel of a \
                     private network namespace; then the cf and ruleset suites, quick, \
                     against the baselines present",
                )
                .args(DemoArgs::args()),
        )
        .subcommand(
            Command::new("load")
                .about("Load an iptables-save file into the model, print it back with timings")
                .args(LoadArgs::args()),
        )
}

/// The program name for messages: argv[0]'s last component.
fn prog_name(argv0: Option<&OsString>) -> String {
    argv0
        .map(|a| {
            a.to_string_lossy()
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "nfkeeper-bench".into())
}

/// The command clap matched.
fn cmd(m: &ArgMatches) -> Cmd {
    match m.subcommand() {
        Some(("demo", m)) => Cmd::Demo(DemoArgs::from_matches(m)),
        Some(("load", m)) => Cmd::Load(LoadArgs::from_matches(m)),
        Some((_, b)) => match b.subcommand() {
            Some(("model", m)) => Cmd::Model(ModelArgs::from_matches(m)),
            Some(("daemon", m)) => Cmd::Daemon(DaemonArgs::from_matches(m)),
            Some(("conformance", m)) => Cmd::Conformance(ConformanceArgs::from_matches(m)),
            Some((name, m)) => {
                let suite = SUITES.into_iter().find(|s| *s == name && *s != "all");
                Cmd::Suites(suite, SuiteArgs::from_matches(m))
            }
            None => Cmd::Suites(None, SuiteArgs::from_matches(b)),
        },
        // `subcommand_required`: clap refused the line already.
        None => Cmd::Suites(None, SuiteArgs::default()),
    }
}

/// Parses `argv` (argv[0] first) into the program's name and the command.
/// `Err` carries what to print and the exit code: 0 for `--help`, 2 for a
/// parameter problem.
pub fn parse(argv: Vec<OsString>) -> Result<(String, Cmd), clap::Error> {
    let prog = prog_name(argv.first());
    let m = command(&prog).try_get_matches_from(argv)?;
    Ok((prog, cmd(&m)))
}

/// Runs nfkeeper-bench; returns the exit code.
pub fn main(argv: Vec<OsString>) -> i32 {
    let (prog, cmd) = match parse(argv) {
        Ok(p) => p,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    match cmd {
        Cmd::Suites(suite, a) => cli::main(&format!("{prog} bench"), suite, &a),
        Cmd::Model(a) => model(&a),
        Cmd::Daemon(a) => serve::main(&a),
        Cmd::Conformance(a) => conformance::main(&format!("{prog} bench"), &a),
        Cmd::Demo(a) => crate::demo::demo(&a),
        Cmd::Load(a) => crate::demo::load(&a),
    }
}

/// `bench model`: the model suite as Markdown on stdout.
fn model(args: &ModelArgs) -> i32 {
    let mut opts = args.opts();
    opts.progress = true;
    let load0 = crate::loadavg();
    let results = crate::model_suite(&opts);
    println!(
        "Model benchmarks (sizes {:?}, reps {}; load average {} at start, {} at end)\n",
        opts.sizes,
        opts.reps,
        load0,
        crate::loadavg()
    );
    print!("{}", crate::print_markdown(&results));
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn argv(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    /// Each command line reaches the right command with its options.
    #[test]
    fn dispatch() {
        let quick = SuiteArgs {
            quick: true,
            ..SuiteArgs::default()
        };
        let cases: [(&str, Cmd); 11] = [
            ("nfkeeper bench", Cmd::Suites(None, SuiteArgs::default())),
            ("nfkeeper bench --quick", Cmd::Suites(None, quick.clone())),
            (
                "/x/nfkeeper bench cf --quick",
                Cmd::Suites(Some("cf"), quick.clone()),
            ),
            ("nfkeeper bench all --quick", Cmd::Suites(None, quick)),
            (
                "nfkeeper bench packet --sizes 1",
                Cmd::Suites(
                    Some("packet"),
                    SuiteArgs {
                        sizes: Some(vec![1]),
                        ..SuiteArgs::default()
                    },
                ),
            ),
            (
                "nfkeeper bench model --quick",
                Cmd::Model(ModelArgs {
                    quick: true,
                    ..ModelArgs::default()
                }),
            ),
            (
                "nfkeeper bench daemon --case single,memory",
                Cmd::Daemon(DaemonArgs {
                    cases: vec!["single".into(), "memory".into()],
                    ..DaemonArgs::default()
                }),
            ),
            (
                "nfkeeper bench daemon --case parallel --procs 16 --cmds 1_000 --quick",
                Cmd::Daemon(DaemonArgs {
                    quick: true,
                    cases: vec!["parallel".into()],
                    procs: Some(16),
                    cmds: Some(1000),
                    rcu_expedited: false,
                    out: None,
                }),
            ),
            (
                "nfkeeper bench conformance --adapters nfkeeper --files libxt_tcp,libipt_ --out o --jobs 2",
                Cmd::Conformance(ConformanceArgs {
                    adapters: vec!["nfkeeper".into()],
                    vectors: None,
                    files: vec!["libxt_tcp".into(), "libipt_".into()],
                    out: Some("o".into()),
                    jobs: Some(2),
                }),
            ),
            (
                "nfkeeper demo --no-bench --rules 1_000",
                Cmd::Demo(DemoArgs {
                    rules: 1000,
                    print: false,
                    no_bench: true,
                    out: None,
                }),
            ),
            (
                "nfkeeper load -6 -c f.v6",
                Cmd::Load(LoadArgs {
                    ipv6: true,
                    counters: true,
                    quiet: false,
                    file: "f.v6".into(),
                }),
            ),
        ];
        for (line, want) in cases {
            let (prog, got) = parse(argv(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(prog, "nfkeeper");
            assert_eq!(got, want, "{line}");
        }
        let (prog, demo) = parse(argv("/usr/bin/nfkeeper-bench demo")).unwrap();
        assert_eq!(prog, "nfkeeper-bench");
        assert!(matches!(demo, Cmd::Demo(DemoArgs { rules: 100_000, .. })));
    }

    /// `--help` anywhere is help (exit 0, on stdout), with the suites'
    /// own text under the program's name; a parameter problem is exit 2
    /// with a hint.
    #[test]
    fn help_and_errors() {
        let help = |line: &str| {
            let e = parse(argv(line)).expect_err(line);
            assert_eq!(
                (e.kind(), e.exit_code()),
                (ErrorKind::DisplayHelp, 0),
                "{line}"
            );
            e.render().to_string()
        };
        let h = help("nfkeeper bench --help");
        assert!(
            h.starts_with("usage: nfkeeper bench [cf|ruleset|kube|ipset|packet|all] [options]"),
            "{h}"
        );
        assert!(h.contains("  nfkeeper bench model [--quick]"), "{h}");
        let h = help("nfkeeper-bench bench cf -h");
        assert!(h.starts_with("usage: nfkeeper-bench bench [cf|"), "{h}");
        assert!(!h.contains("also:"), "{h}");
        for line in ["nfkeeper bench model --help", "nfkeeper bench daemon -h"] {
            let h = help(line);
            assert!(
                h.contains("--quick") && h.contains("Usage: nfkeeper bench"),
                "{h}"
            );
        }
        let h = help("nfkeeper bench daemon --help");
        assert!(
            h.contains("[possible values: concurrent, single, process, parallel, memory, hostile]")
                && h.contains("--procs <N>")
                && h.contains("--cmds <M>")
                && h.contains("[default: 200; 50 with --quick]"),
            "{h}"
        );
        let h = help("nfkeeper demo --help");
        assert!(
            h.contains("--no-bench") && h.contains("[default: 100000]"),
            "{h}"
        );
        let h = help("nfkeeper load --help");
        assert!(h.contains("Usage: nfkeeper load [OPTIONS] <FILE>"), "{h}");
        let bad = [
            ("nfkeeper", "Usage: nfkeeper <COMMAND>"),
            ("nfkeeper bench frob", "unrecognized subcommand 'frob'"),
            (
                "nfkeeper bench --quick cf",
                "the subcommand 'cf' cannot be used with '--quick'",
            ),
            (
                "nfkeeper bench daemon --case nope",
                "invalid value 'nope' for '--case <C,...>'",
            ),
            (
                "nfkeeper bench daemon --procs 0",
                "invalid value '0' for '--procs <N>': must be at least 1",
            ),
            (
                "nfkeeper bench model --sizes 5",
                "each size must be at least 10",
            ),
            ("nfkeeper demo --rules many", "not a number: many"),
            (
                "nfkeeper bench conformance --adapters nft",
                "invalid value 'nft' for '--adapters <A,...>'",
            ),
            (
                "nfkeeper load",
                "the following required arguments were not provided",
            ),
            ("nfkeeper frob", "unrecognized subcommand 'frob'"),
        ];
        for (line, want) in bad {
            let e = parse(argv(line)).expect_err(line);
            let text = e.render().to_string();
            assert_eq!(e.exit_code(), 2, "{line}: {text}");
            assert!(text.contains(want), "{line}: {text}");
            assert!(
                text.contains("For more information, try '--help'."),
                "{line}: {text}"
            );
        }
    }
}
