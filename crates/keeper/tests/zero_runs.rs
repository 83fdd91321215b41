//! `-Z` of chains holding compiled runs: every member's counter is zeroed
//! (by one reset dump of each run's set, where the kernel has it), `-Z
//! CHAIN N` zeroes that rule alone, other chains keep theirs — on the fake
//! kernel and, as root, in a fresh network namespace. On the fake kernel,
//! `-Z` of whole chains reads no run's members (the reset needs only the
//! set's name).

use compile::runs::RunOpts;
use iptables::exec::RestoreOpts;
use iptables::parse::{parse, ParseOpts};
use keeper::{Session, Settings};
use nft::Socket;
use ruleset::{Family, TableKind};

const SETUP: &str = "*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:A - [0:0]
:B - [0:0]
[5:500] -A A -s 10.0.0.1/32 -j ACCEPT
[6:600] -A A -s 10.0.0.2/32 -j ACCEPT
[7:700] -A A -s 10.0.0.3/32 -j ACCEPT
[8:800] -A A -p tcp -j DROP
[9:900] -A A -d 10.9.0.0/24 -j DROP
[9:900] -A A -d 10.9.1.0/24 -j DROP
[1:100] -A B -s 10.1.0.1/32 -j ACCEPT
[2:200] -A B -s 10.1.0.2/32 -j ACCEPT
[3:300] -A B -s 10.1.0.3/32 -j ACCEPT
COMMIT
";

/// (command, the packet counts of A's and B's rules after it, the element
/// dumps it makes where the kernel resets by dump: one of the catalog (and
/// for every chain one of the chain registry, `compile::registry`), and
/// `-Z CHAIN N`, which numbers the chain's rules, one of each of its runs;
/// whole chains read no run's members).
const STEPS: &[(&str, [u64; 6], [u64; 3], u64)] = &[
    ("-Z A 2", [5, 0, 7, 8, 9, 9], [1, 2, 3], 3),
    ("-Z A", [0; 6], [1, 2, 3], 1),
    ("-Z", [0; 6], [0; 3], 2),
];

/// Packet counts of `chain`'s rules, in order, as `iptables-save -c` shows.
fn packets(save: &str, chain: &str) -> Vec<u64> {
    let prefix = format!("-A {chain} ");
    save.lines()
        .filter_map(|l| {
            let (c, rule) = l.strip_prefix('[')?.split_once("] ")?;
            rule.starts_with(&prefix)
                .then(|| c.split(':').next()?.parse().ok())?
        })
        .collect()
}

/// `open` opens a socket; `elem_dumps` counts the kernel's element dumps
/// so far, where it can.
fn run(open: &dyn Fn() -> Socket, elem_dumps: &dyn Fn() -> Option<u64>) {
    let settings = Settings {
        compile: Some(RunOpts {
            min_len: 2,
            numgen: false,
        }),
        ..Default::default()
    };
    let mut s = Session::with_socket(open(), Family::Ipv4, settings);
    let mut o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    o.counters = true;
    s.restore(SETUP, &o).expect("setup");
    for (cmd, a, b, dumps) in STEPS {
        let words: Vec<&str> = cmd.split(' ').collect();
        let p = parse(&words, ParseOpts::command(Family::Ipv4, "iptables")).expect("parse");
        let before = elem_dumps();
        Session::with_socket(open(), Family::Ipv4, settings)
            .iptables(p)
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
        if let (Some(x), Some(y)) = (before, elem_dumps()) {
            if keeper::plan::kernel_resets_set_elems() {
                assert_eq!(y - x, *dumps, "{cmd}: element dumps");
            }
        }
        let save = Session::with_socket(open(), Family::Ipv4, settings)
            .save_text(true, Some(TableKind::Filter))
            .expect("save");
        assert_eq!(packets(&save, "A"), a, "{cmd}: chain A\n{save}");
        assert_eq!(packets(&save, "B"), b, "{cmd}: chain B\n{save}");
    }
}

#[test]
fn zeroing_runs_on_the_fake_kernel() {
    let k = fakekernel::Kernel::new();
    run(&|| k.socket(), &|| Some(k.stats().elem_dumps));
}

#[test]
fn zeroing_runs_on_the_kernel() {
    let done = testkit::in_netns(|| run(&|| Socket::open().expect("socket"), &|| None));
    if done.is_none() {
        eprintln!("SKIP: zeroing_runs_on_the_kernel needs root");
    }
}
