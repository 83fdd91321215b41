//! Subcommands run by other programs, not by this binary, which tools
//! start once per rule and so carries neither benchmark code nor an async
//! runtime:
//!
//! - `nfkeeper bench|demo|load`: nfkeeper replaces itself (exec) with the
//!   `nfkeeper-bench` beside its own executable, with the same arguments
//!   (argv[0] included, so messages and the recorded command line read as
//!   typed); `cargo build --release` builds both.
//! - `nfkeeper agent|fleet|controller`: the same with `nfkeeper-agent`
//!   (crates/agent, a Cargo workspace of its own), beside this executable
//!   or else on PATH; its arguments start with the subcommand, which
//!   nfkeeper-agent takes as its own.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// The program these subcommands run, beside this executable.
const PROGRAM: &str = "nfkeeper-bench";

/// The fleet agent's program.
const AGENT: &str = "nfkeeper-agent";

/// Where `program` should be: beside this executable (symlinks resolved,
/// as the kernel names it).
fn beside(program: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join(program))
}

fn beside_self() -> Option<PathBuf> {
    beside(PROGRAM)
}

/// The first `program` on PATH that is a file.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| p.is_file())
}

/// Replaces this process with nfkeeper-agent running `args` (from the
/// subcommand on: `agent`, `fleet` or `controller`). Returns only when it
/// can't: exit code 2 after one line saying why.
pub fn to_agent(args: &[String]) -> i32 {
    let sub = args.first().map_or("agent", String::as_str);
    let Some(path) = beside(AGENT)
        .filter(|p| p.is_file())
        .or_else(|| on_path(AGENT))
    else {
        eprintln!(
            "nfkeeper {sub}: {AGENT} is neither beside nfkeeper nor on PATH; build it in crates/agent (README.md there)"
        );
        return 2;
    };
    let err = Command::new(&path).args(args).exec();
    eprintln!("nfkeeper {sub}: can't run {}: {err}", path.display());
    2
}

/// Replaces this process with nfkeeper-bench running `args` (`args[0]`
/// this program's name, then from the subcommand on). Returns only when
/// it can't: exit code 2 after one line saying why.
pub fn to_bench(argv0: &str, args: &[String]) -> i32 {
    let sub = args.first().map_or("bench", String::as_str);
    let Some(path) = beside_self().filter(|p| p.is_file()) else {
        let dir = beside_self()
            .and_then(|p| p.parent().map(|d| d.display().to_string()))
            .unwrap_or_else(|| "this executable's directory".into());
        eprintln!(
            "nfkeeper {sub}: {PROGRAM} is not in {dir}; build it beside nfkeeper with `cargo build --release -p nfk-bench`"
        );
        return 2;
    };
    let err = Command::new(&path).arg0(argv0).args(args).exec();
    eprintln!("nfkeeper {sub}: can't run {}: {err}", path.display());
    2
}
