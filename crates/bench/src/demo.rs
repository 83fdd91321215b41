//! `nfkeeper demo` and `nfkeeper load` (run by nfkeeper-bench): restore a
//! ruleset into the model and save it back, with timings; the demo then
//! does the same through the kernel of a private network namespace and
//! runs the quick cf and ruleset suites.

mod reads;

use crate::suites::cli::SuiteArgs;
use iptables::exec::{restore, save_table, RestoreOpts};
use iptables::Rule;
use ruleset::{Family, Ruleset, TableKind};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The options of `nfkeeper demo`.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoArgs {
    /// Rules in each generated ruleset.
    pub rules: usize,
    /// Print the rulesets saved back from the model.
    pub print: bool,
    /// Skip the quick suites at the end.
    pub no_bench: bool,
    /// Where the suites' reports go (DIR/cf, DIR/ruleset).
    pub out: Option<String>,
}

impl DemoArgs {
    /// The options as clap arguments, with their help.
    pub fn args() -> Vec<clap::Arg> {
        use crate::args::{flag, num, value};
        vec![
            value("rules", "N", num)
                .default_value("100000")
                .help("Rules in each generated ruleset"),
            flag("print").help("Print the rulesets saved back from the model"),
            flag("no-bench").help("Skip the quick cf and ruleset suites at the end"),
            value("out", "DIR", clap::builder::NonEmptyStringValueParser::new()).help(
                "Where the suites' reports go: DIR/cf, DIR/ruleset [default: bench-results/SUITE-UTCSTAMP]",
            ),
        ]
    }

    /// The options from what clap matched with [`DemoArgs::args`].
    pub fn from_matches(m: &clap::ArgMatches) -> DemoArgs {
        DemoArgs {
            rules: m.get_one::<usize>("rules").copied().unwrap_or(100_000),
            print: m.get_flag("print"),
            no_bench: m.get_flag("no-bench"),
            out: m.get_one::<String>("out").cloned(),
        }
    }
}

/// The options of `nfkeeper load`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadArgs {
    /// `-6`: the file is ip6tables-save's.
    pub ipv6: bool,
    /// `-c`: restore the counters too.
    pub counters: bool,
    /// Timings only, without the saved ruleset.
    pub quiet: bool,
    pub file: PathBuf,
}

impl LoadArgs {
    /// The options as clap arguments, with their help.
    pub fn args() -> Vec<clap::Arg> {
        use clap::{Arg, ArgAction};
        vec![
            Arg::new("ipv6")
                .short('6')
                .action(ArgAction::SetTrue)
                .help("The file is IPv6 (ip6tables-save)"),
            Arg::new("counters")
                .short('c')
                .action(ArgAction::SetTrue)
                .help("Restore the counters too"),
            crate::args::flag("quiet").help("Timings only, without the saved ruleset"),
            Arg::new("file")
                .value_name("FILE")
                .required(true)
                .value_parser(clap::value_parser!(PathBuf))
                .help("An iptables-save file"),
        ]
    }

    /// The options from what clap matched with [`LoadArgs::args`].
    pub fn from_matches(m: &clap::ArgMatches) -> LoadArgs {
        LoadArgs {
            ipv6: m.get_flag("ipv6"),
            counters: m.get_flag("counters"),
            quiet: m.get_flag("quiet"),
            file: m.get_one::<PathBuf>("file").cloned().unwrap_or_default(),
        }
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Load `text`, save it back; print the save text (if `print`) and timings.
fn load_and_save(text: &str, family: Family, counters: bool, print: bool, label: &str) -> i32 {
    let rss0 = rss_bytes();
    let mut rs: Ruleset<Rule> = Ruleset::new();
    let o = RestoreOpts {
        family,
        noflush: false,
        counters,
        test: false,
        table: None,
        prog: "nfkeeper",
    };
    let t0 = Instant::now();
    let stats = match restore(&mut rs, text, &o) {
        Ok(s) => s,
        Err(e) => {
            eprint!("{}", e.render("nfkeeper"));
            return e.exit_code();
        }
    };
    let load = t0.elapsed();
    let rss_model = rss_bytes().saturating_sub(rss0);
    let t1 = Instant::now();
    let mut out = String::with_capacity(text.len() + 1024);
    for kind in TableKind::ALL {
        let t = rs.table(family, kind);
        if text.contains(&format!("*{}", kind.name())) {
            save_table(t, counters, &mut out);
        }
    }
    let save = t1.elapsed();
    if print {
        let _ = std::io::stdout().write_all(out.as_bytes());
    }
    let rules = stats.rules.max(1);
    let overhead: usize = TableKind::ALL
        .iter()
        .map(|k| rs.table(family, *k))
        .filter(|t| t.rule_count() > 0)
        .map(|t| t.model_overhead_bytes())
        .sum();
    let per_rule = std::mem::size_of::<Rule>() + overhead / rules;
    eprintln!(
        "{label}: {} lines, {} rules in {} table(s)\n  restore into model: {:>9.3} ms ({:.0} rules/s)\n  save back:          {:>9.3} ms ({} bytes)\n  model memory:       ~{} bytes/rule (rule {} + model {}; matches' heap parts extra); RSS grew {} bytes/rule",
        stats.lines,
        stats.rules,
        stats.tables,
        load.as_secs_f64() * 1e3,
        stats.rules as f64 / load.as_secs_f64().max(1e-9),
        save.as_secs_f64() * 1e3,
        out.len(),
        per_rule,
        std::mem::size_of::<Rule>(),
        overhead / rules,
        rss_model / rules,
    );
    let same = normalise(text) == normalise(&out);
    eprintln!(
        "  round trip:         {}",
        if same {
            "identical"
        } else {
            "differs (input not in canonical form)"
        }
    );
    0
}

/// Lines without comments and blank lines, for the round-trip verdict.
fn normalise(s: &str) -> Vec<&str> {
    s.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

/// `nfkeeper demo`: the model, the kernel round and (as root, unless
/// `--no-bench`) the quick suites. Returns the exit code.
pub fn demo(args: &DemoArgs) -> i32 {
    let n = args.rules;
    let print = args.print;
    eprintln!(
        "nfkeeper demo: the model in memory, then the kernel of a private network namespace\n"
    );
    let t = Instant::now();
    let cf = workload::cloud_foundry(n);
    let kp = workload::kube_proxy(n);
    eprintln!(
        "generated {} + {} bytes of restore input in {:.1} ms\n",
        cf.len(),
        kp.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let a = load_and_save(
        &cf,
        Family::Ipv4,
        false,
        print,
        "Cloud Foundry shape (-A FORWARD -s 10.a.b.c/32 -j ACCEPT)",
    );
    if a != 0 {
        return a;
    }
    let b = load_and_save(
        &kp,
        Family::Ipv4,
        false,
        print,
        "kube-proxy shape (comments, statistic, DNAT, MARK)",
    );
    if b != 0 {
        return b;
    }
    let k = kernel_round(&cf, n);
    if k != 0 || args.no_bench || !is_root() {
        return k;
    }
    // The studies' suites, short: every baseline present, each case in its
    // own private namespaces; the tables on stdout, reports and plots under
    // bench-results/ (or --out DIR). About 80 s here.
    eprintln!("\nthe Cloud Foundry and iptables-nft study suites, quick (--no-bench skips):");
    let mut code = 0;
    for (suite, sizes) in [("cf", None), ("ruleset", Some(vec![1000]))] {
        // The demo changes nothing on the host, the kernel's RCU setting
        // included (as the bench command, unless `--rcu-expedited`);
        // 3 repetitions everywhere keep it under 2 minutes.
        let run = SuiteArgs {
            quick: true,
            reps: Some(3),
            sizes,
            out: args.out.as_ref().map(|dir| format!("{dir}/{suite}")),
            ..SuiteArgs::default()
        };
        code = code.max(crate::suites::cli::main("nfkeeper demo", Some(suite), &run));
    }
    code
}

/// Restore the Cloud Foundry ruleset into the kernel of a fresh network
/// namespace (this process's thread only; checked), append one rule, delete
/// it by spec, and save everything back — each step one transaction.
fn kernel_round(cf: &str, n: usize) -> i32 {
    if !is_root() {
        eprintln!("\nkernel round skipped: needs root (it runs in a private network namespace)");
        return 0;
    }
    let cf = cf.to_string();
    let r = std::thread::spawn(move || -> Result<(), String> {
        let before = std::fs::read_link("/proc/thread-self/ns/net").ok();
        // SAFETY: only the network namespace is unshared (not the file
        // descriptor table, which is what makes unshare unsafe), and only
        // for this thread, which ends with the round.
        unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNET) }
            .map_err(|e| format!("unshare(CLONE_NEWNET): {e}"))?;
        let after = std::fs::read_link("/proc/thread-self/ns/net").ok();
        if before.is_none() || before == after {
            return Err("not in a private network namespace; not touching the kernel".into());
        }
        let mut s = keeper::Session::open(Family::Ipv4, keeper::Settings::default())
            .map_err(|e| e.to_string())?;
        let o = RestoreOpts {
            family: Family::Ipv4,
            noflush: false,
            counters: false,
            test: false,
            table: None,
            prog: "nfkeeper",
        };
        eprintln!("\nkernel (private network namespace, nftables table ip nfkeeper_filter):");
        let t = Instant::now();
        iptables::tool::Backend::restore(&mut s, &cf, &o, None)
            .map_err(|e| e.render("nfkeeper"))?;
        eprintln!(
            "  restore {n} rules, one transaction: {:>9.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        let run = |s: &mut keeper::Session, words: &[&str]| -> Result<f64, String> {
            let po = iptables::parse::ParseOpts::command(Family::Ipv4, "iptables");
            let p = iptables::parse::parse(words, po).map_err(|e| e.to_string())?;
            let t = Instant::now();
            s.iptables(p).map_err(|e| e.to_string())?;
            Ok(t.elapsed().as_secs_f64() * 1e3)
        };
        let rule = ["FORWARD", "-s", "192.0.2.1", "-j", "ACCEPT"];
        let a = run(&mut s, &[&["-A"][..], &rule[..]].concat())?;
        eprintln!("  iptables -A (reads chain names, one transaction):{a:>9.1} ms");
        let d = run(&mut s, &[&["-D"][..], &rule[..]].concat())?;
        eprintln!("  iptables -D by spec:                            {d:>9.1} ms");
        let t = Instant::now();
        let text = s.save_text(false, None).map_err(|e| e.to_string())?;
        eprintln!(
            "  iptables-save (rules rebuilt from kernel userdata): {:>9.1} ms, {} rules, {}",
            t.elapsed().as_secs_f64() * 1e3,
            text.lines().filter(|l| l.starts_with("-A ")).count(),
            if normalise(&text) == normalise(&cf) {
                "identical to the input"
            } else {
                "DIFFERS from the input"
            }
        );
        drop(s);
        reads::direct_and_daemon(&crate::suites::adapters::nfkeeper_bin())
    })
    .join();
    match r {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            eprintln!("kernel round failed: {e}");
            1
        }
        Err(_) => {
            eprintln!("kernel round panicked");
            1
        }
    }
}

/// `nfkeeper load [-6] [-c] [--quiet] FILE`. Returns the exit code.
pub fn load(args: &LoadArgs) -> i32 {
    let family = if args.ipv6 {
        Family::Ipv6
    } else {
        Family::Ipv4
    };
    let path = args.file.display().to_string();
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("nfkeeper: can't read {path}: {e}");
            return 1;
        }
    };
    load_and_save(&text, family, args.counters, !args.quiet, &path)
}

/// Resident set size of this process (Linux /proc), 0 where unknown.
fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<usize>().ok())
        })
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}
