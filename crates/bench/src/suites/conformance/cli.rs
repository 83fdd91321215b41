//! `nfkeeper bench conformance [--adapters A,…] [--vectors DIR]
//! [--files PREFIX,…] [--out DIR]`: the options, the run, the files.

use super::run::{Tool, Verdict};
use super::{failure_line, load, regressions, run_tool, summary};
use crate::args::{get_words, value, words};
use crate::netns;
use crate::suites::{adapters::nfkeeper_bin, machine};
use clap::{Arg, ArgMatches};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The vectors' default place, relative to the working directory (the
/// workspace root): the shared conformance data beside the workspace.
pub const DEFAULT_VECTORS: &str = "../shared/conformance/iptables-1.8.11/extensions";

/// The tools it knows, in their default order.
pub const ADAPTERS: [&str; 2] = ["nfkeeper", "iptables-nft"];

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConformanceArgs {
    pub adapters: Vec<String>,
    pub vectors: Option<String>,
    pub files: Vec<String>,
    pub out: Option<String>,
    /// `--jobs`: files run at once (each in its own namespace).
    pub jobs: Option<usize>,
}

impl ConformanceArgs {
    pub fn args() -> Vec<Arg> {
        vec![
            words("adapters", "A,...")
                .value_parser(ADAPTERS)
                .help("Tools to run the vectors through [default: nfkeeper,iptables-nft]"),
            value(
                "vectors",
                "DIR",
                clap::builder::NonEmptyStringValueParser::new(),
            )
            .help(format!(
                "iptables' extensions/ directory of *.t files [default: {DEFAULT_VECTORS}]"
            )),
            words("files", "PREFIX,...")
                .help("Only the files whose name starts with one of these [default: all]"),
            value("jobs", "N", crate::args::count)
                .help("Files run at once, each in its own namespace [default: 1]"),
            value(
                "out",
                "DIR",
                clap::builder::NonEmptyStringValueParser::new(),
            )
            .help(
                "Where summary.md and failures-TOOL.txt go \
                 [default: bench-results/conformance-UTCSTAMP]",
            ),
        ]
    }

    pub fn from_matches(m: &ArgMatches) -> ConformanceArgs {
        ConformanceArgs {
            adapters: get_words(m, "adapters"),
            vectors: m.get_one::<String>("vectors").cloned(),
            files: get_words(m, "files"),
            out: m.get_one::<String>("out").cloned(),
            jobs: m.get_one::<usize>("jobs").copied(),
        }
    }
}

fn tool(name: &str) -> Tool {
    match name {
        "iptables-nft" => Tool::iptables_nft(),
        _ => Tool::nfkeeper(&nfkeeper_bin()),
    }
}

/// `prog --version` on the host (touches no firewall): the tool is there.
fn available(t: &Tool) -> Result<(), String> {
    let argv = &t.iptables;
    let ok = Command::new(&argv[0])
        .args(&argv[1..])
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(format!("{}: `{} --version` failed", t.name, argv.join(" ")))
    }
}

/// Runs the suite; returns the exit code (0, or 1 when it could not run
/// or write its files). Failing vectors are results, not errors.
pub fn main(prog: &str, a: &ConformanceArgs) -> i32 {
    if !netns::is_root() {
        eprintln!(
            "{prog} conformance needs root: every file runs in a network namespace it creates"
        );
        return 1;
    }
    netns::watch_signals();
    netns::cleanup_stale();
    let dir = PathBuf::from(a.vectors.as_deref().unwrap_or(DEFAULT_VECTORS));
    let files = match load(&dir, &a.files) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{prog} conformance: {e}");
            return 1;
        }
    };
    let names: Vec<&str> = if a.adapters.is_empty() {
        ADAPTERS.to_vec()
    } else {
        a.adapters.iter().map(String::as_str).collect()
    };
    let progress = std::io::stderr().is_terminal();
    let mut results: Vec<(String, Vec<Verdict>)> = Vec::new();
    for n in names {
        let t = tool(n);
        if let Err(e) = available(&t) {
            eprintln!("{prog} conformance: {e}; skipped");
            continue;
        }
        let t0 = Instant::now();
        let tick = |f: &str| {
            if progress {
                eprint!("\r\x1b[K{}: {f}", t.name);
            }
        };
        match run_tool(&t, &files, a.jobs.unwrap_or(1), &tick) {
            Ok(v) => {
                if progress {
                    eprint!("\r\x1b[K");
                }
                eprintln!(
                    "{}: {} vectors in {:.1} s",
                    t.name,
                    v.len(),
                    t0.elapsed().as_secs_f64()
                );
                results.push((t.name.clone(), v));
            }
            Err(e) => {
                eprintln!("{prog} conformance: {}: {e}", t.name);
                return 1;
            }
        }
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let stamp = machine::utc(machine::now_secs(), true);
        format!("bench-results/conformance-{stamp}")
    });
    let text = summary(&results);
    print!("{text}");
    match write(Path::new(&out), &text, &results) {
        Ok(()) => {
            println!("\nfailures per tool: {out}/failures-TOOL.txt");
            0
        }
        Err(e) => {
            eprintln!("{prog} conformance: {out}: {e}");
            1
        }
    }
}

/// summary.md; failures-TOOL.txt (every failure); for each other tool
/// beside iptables-nft, regressions-TOOL.txt (its failures of vectors
/// iptables-nft passes).
fn write(out: &Path, text: &str, results: &[(String, Vec<Verdict>)]) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("summary.md"), text)?;
    let base = results.iter().find(|(n, _)| n == "iptables-nft");
    for (name, vs) in results {
        let lines: Vec<String> = vs.iter().filter_map(failure_line).collect();
        std::fs::write(out.join(format!("failures-{name}.txt")), join(&lines))?;
        if let Some((_, b)) = base.filter(|(n, _)| n != name) {
            let r: Vec<String> = regressions(vs, b).into_values().flatten().collect();
            std::fs::write(out.join(format!("regressions-{name}.txt")), join(&r))?;
        }
    }
    Ok(())
}

fn join(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}
