//! The nfkeeper binary: dispatch on the program name (argv[0]) or the first
//! argument, then hand over to the library crates. Wiring only.
//!
//! Start-up contract: no async runtime, no lazy statics, no allocation-heavy
//! set-up before the command is known; `iptables -A ...` goes straight from
//! argv to the parser. The entry point is C's `main`, not std's runtime
//! (see [`main`]).

// The unit tests keep the test harness's own `main` (and so leave the
// dispatch below unused).
#![cfg_attr(not(test), no_main)]
#![cfg_attr(test, allow(dead_code, unused_imports))]

mod forward;
mod ipset;
mod migrate;
mod migrate_nft;
mod offline;
mod personality;
mod settings;
mod trace;
mod verify;
mod via_daemon;

use std::io::Write;

/// The iptables-compatible personalities nfkeeper answers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Personality {
    Iptables,
    Ip6tables,
    Save,
    Save6,
    Restore,
    Restore6,
}

impl Personality {
    fn from_name(name: &str) -> Option<Personality> {
        Some(match name {
            "iptables" => Personality::Iptables,
            "ip6tables" => Personality::Ip6tables,
            "iptables-save" => Personality::Save,
            "ip6tables-save" => Personality::Save6,
            "iptables-restore" => Personality::Restore,
            "ip6tables-restore" => Personality::Restore6,
            _ => return None,
        })
    }
}

const USAGE: &str = "\
nfkeeper: an iptables-compatible firewall ruleset manager

Usage:
  nfkeeper demo [--rules N] [--no-bench] [--out DIR]
                                   generated rulesets through the model and, as root, the kernel of a
                                   private network namespace; then the cf and ruleset suites, quick,
                                   against the baselines present (report and plots in DIR)
  nfkeeper load [-6] [-c] FILE     load an iptables-save file into the model, print it back with timings
  nfkeeper bench model [--quick] [--sizes N,N] [--reps N]
                                   model benchmarks (restore, single operations, save) as Markdown
  nfkeeper bench daemon [--quick] [--case C,...] [--procs N] [--cmds M] [--out DIR]
                                   nfkeeper serve: concurrent API appends, single-operation latency,
                                   one process per rule, memory, against iptables-nft; parallel
                                   scripts (N processes x M -A then -D, every tool); hostile peers
                                   (cases: concurrent,single,process,parallel,memory,hostile)
  nfkeeper bench [cf|ruleset|kube|ipset|packet|all] [--quick] [--adapters nfkeeper,iptables-nft,...] [--out DIR]
                [--reps N] [--sizes N,...] [--rcu-expedited] [--compare DIR1,DIR2]
                                   the studies' suites (cf, ruleset, packet by default; kube and
                                   ipset on request) against iptables-legacy, iptables-nft, nft,
                                   ipset, and nfkeeper through its daemon (nfkeeper-daemon), each case in a private network
                                   namespace (root), at the host's RCU setting; --rcu-expedited
                                   expedites the kernel's grace periods for the run (steadier
                                   times; restored after)
  nfkeeper serve [--netns NAME] [--socket PATH] [--group G] [--metrics ADDR:PORT] ...
                                   the daemon: a warm model of this namespace's tables behind a unix
                                   socket; the iptables personalities use it when it answers
                                   (`nfkeeper serve --help` for all options)
  nfkeeper status                  the daemon's state (tables, commits, clients)
  nfkeeper trace [-4|-6] [--hook H] [-s A] [-d A] [-p P] [--dport N] [-i IF] ...
                                   the rules a described packet matches at a hook, in order, and
                                   its verdict (`nfkeeper trace --help` for all options)
  nfkeeper verify [-4|-6] [-t TABLE] [-q]
                                   check that nfkeeper's tables in the kernel are what the logical
                                   rules they record compile to; one line per difference
  nfkeeper migrate --from legacy|nft [-4|-6] [--dry-run] [--replace]
                                   move this namespace's iptables-legacy or iptables-nft ruleset
                                   into nfkeeper's tables (one transaction per family), then empty
                                   the legacy tables or delete iptables-nft's
                                   (`nfkeeper migrate --help`)
  nfkeeper agent [OPTIONS]         the fleet agent: this host's ruleset from etcd (docs/fleet.md)
  nfkeeper fleet COMMAND ...       the fleet's operator commands (status, rollout, pause, resume,
                                   history, ...; `nfkeeper fleet --help`)
  nfkeeper [--direct|--daemon] iptables ARGS...
                                   force direct mode or the daemon (default: the daemon if it answers;
                                   also NFKEEPER_MODE=direct|daemon|auto)
  nfkeeper --no-compile-runs iptables-restore|iptables|serve ...
                                   every rule its own kernel rule; by default runs of 16 or more
                                   similar rules become one nftables set or verdict map lookup
                                   (listings, counters and rule numbers unchanged);
                                   --compile-runs=N: runs of N or more; N+numgen:
                                   also kube-proxy's endpoint choices as numgen maps
                                   (also NFKEEPER_COMPILE=off|runs|runs:N[+numgen])
  nfkeeper ipset ARGS...           ipset 7.21 command line over native nftables sets (also through
                                     a symlink named ipset)
  nfkeeper iptables ARGS...        iptables command line (also: ip6tables, iptables-save,
  nfkeeper iptables-restore ...      iptables-restore, ip6tables-save, ip6tables-restore;
                                     or invoke nfkeeper through a symlink of that name)
  nfkeeper --version | --help

demo, load and bench run the nfkeeper-bench program beside nfkeeper (cargo build
--release builds both; `nfkeeper bench --help` for all the suites' options).
agent, fleet and controller run nfkeeper-agent, beside nfkeeper or on PATH
(crates/agent builds it).

The iptables personalities change the kernel of the current network namespace
(nfkeeper's own nftables tables: ip nfkeeper_filter, ip6 nfkeeper_nat, ...).
With NFKEEPER_OFFLINE_STATE=PATH set they work offline instead, on a model kept
in an iptables-save file (PATH.4 / PATH.6), and never touch the kernel.
";

/// The process entry point, called by the C library like a C program's.
///
/// std's runtime set-up is skipped on purpose: it ignores SIGPIPE, probes
/// the main thread's guard page (which reads /proc/self/maps) and installs
/// an alternate signal stack with SIGSEGV/SIGBUS handlers — a dozen system
/// calls on every start, and tools start this binary once per rule. So a
/// broken pipe ends an iptables personality as it ends iptables (SIGPIPE;
/// the long-running subcommands ignore it, see [`ignore_sigpipe`]), and a
/// stack overflow is a plain SIGSEGV. Arguments are taken from `argv`
/// here, not from `std::env::args` (which only glibc fills before `main`;
/// musl's start-up does not); the environment comes from std as usual.
/// stdout is flushed here because no std runtime does it at exit.
///
/// # Safety
///
/// Called by the C library only: `argv` holds `argc` valid NUL-terminated
/// strings, alive for the whole process.
#[cfg(not(test))]
#[no_mangle]
pub unsafe extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: see the function's contract.
    let raw = (0..usize::try_from(argc).unwrap_or(0))
        .map(|i| unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) }.to_bytes());
    // Arguments as iptables takes them: any bytes (see iptables::bytes).
    let args = raw
        .map(|a| iptables::bytes::decode(a).into_owned())
        .collect();
    let code = run(args);
    let _ = std::io::stdout().flush();
    code.clamp(0, 255)
}

/// For subcommands that run long and write to sockets and pipes whose
/// reader may go away (the daemon): a write to a closed pipe is an error
/// to handle, not the end of the process.
fn ignore_sigpipe() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no handler to
    // race with.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

fn run(args: Vec<String>) -> i32 {
    let argv0 = args.first().map(String::as_str).unwrap_or("nfkeeper");
    let base = argv0.rsplit('/').next().unwrap_or(argv0);
    let env = settings::Env::read();
    if base == "ipset" {
        return match settings::Settings::from(&env, &[]) {
            Ok((s, _)) => ipset::run(&args[1..], &s),
            Err(e) => {
                eprintln!("{e}");
                2
            }
        };
    }
    if let Some(p) = Personality::from_name(base) {
        let (s, _) = match settings::Settings::from(&env, &[]) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return 2;
            }
        };
        return personality::run(p, base, &args[1..], &s);
    }
    // `nfkeeper --direct|--daemon|--[no-]compile-runs[=N] SUBCOMMAND ...`.
    let (s, used) = match settings::Settings::from(&env, &args[1..]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let first = 1 + used;
    let Some(sub) = args.get(first) else {
        eprint!("{USAGE}");
        return 2;
    };
    if let Some(p) = Personality::from_name(sub) {
        return personality::run(p, sub, &args[first + 1..], &s);
    }
    let rest = &args[first + 1..];
    match sub.as_str() {
        "ipset" => ipset::run(rest, &s),
        "serve" => {
            ignore_sigpipe();
            serve(rest, &s)
        }
        "status" => status(&s),
        "trace" => trace::trace(rest, &s),
        "verify" => verify::verify(rest, &s),
        "migrate" => migrate::migrate(rest, &s),
        "bench" | "demo" | "load" => forward::to_bench(argv0, &args[first..]),
        "agent" | "fleet" | "controller" => forward::to_agent(&args[first..]),
        "--version" | "-V" | "version" => {
            println!(
                "nfkeeper {} (iptables {})",
                env!("CARGO_PKG_VERSION"),
                iptables::VERSION
            );
            0
        }
        "--help" | "-h" | "help" => {
            print!("{USAGE}");
            0
        }
        other => {
            eprintln!("nfkeeper: unknown command `{other}'");
            eprint!("{USAGE}");
            2
        }
    }
}

/// `nfkeeper serve ...`: runs until killed.
fn serve(args: &[String], s: &settings::Settings) -> i32 {
    match daemon::parse_args(args) {
        Ok(mut cfg) => match daemon::serve({
            cfg.settings = s.engine;
            cfg.socket = cfg.socket.or_else(|| s.socket_env.clone());
            cfg
        }) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("nfkeeper serve: {e}");
                1
            }
        },
        Err(e) if e.is_empty() => {
            print!("{}", daemon::USAGE);
            0
        }
        Err(e) => {
            eprintln!("nfkeeper {e}");
            eprint!("{}", daemon::USAGE);
            2
        }
    }
}

/// `nfkeeper status`: the daemon's state, or why there is none.
fn status(s: &settings::Settings) -> i32 {
    let path = &s.socket;
    match proto::client::Client::connect(path).and_then(|mut c| c.status()) {
        Ok(text) => {
            print!("{text}");
            0
        }
        // A daemon answered, and said no (e.g. to a user that is not root).
        Err(proto::client::ClientError::Refused { code, message }) => {
            eprintln!(
                "nfkeeper status: the daemon at {} refused: {message}",
                path.display()
            );
            code.max(1)
        }
        Err(e) => {
            eprintln!(
                "nfkeeper status: no daemon answers at {} ({e}); commands run in direct mode",
                path.display()
            );
            3
        }
    }
}
