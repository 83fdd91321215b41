//! `nfkeeper bench|demo|load`: run by the `nfkeeper-bench` program, not
//! by this binary, which tools start once per rule and so carries no
//! benchmark code. nfkeeper replaces itself (exec) with the
//! `nfkeeper-bench` beside its own executable, with the same arguments
//! (argv[0] included, so messages and the recorded command line read as
//! typed); `cargo build --release` builds both.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// The program these subcommands run, beside this executable.
const PROGRAM: &str = "nfkeeper-bench";

/// Where nfkeeper-bench should be: beside this executable (symlinks
/// resolved, as the kernel names it).
fn beside_self() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join(PROGRAM))
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
