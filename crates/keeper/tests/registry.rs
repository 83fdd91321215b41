//! The chain registry (`compile::registry`): a user chain that holds no
//! rule and that no rule jumps to is an element of its table's registry
//! set, not a kernel chain. Every command and restore line that touches
//! such a chain — a rule into it, a jump, goto or verdict-map element to
//! it, a rename, a delete, a flush, a re-creation, in any order within
//! one batch — must give what the model makes of the input, with the
//! registry holding exactly the chains that need no kernel chain yet and
//! no name both a kernel chain and registered (`verify` agrees). The same
//! through the daemon's planner, whose view learns the registry's states
//! at each commit, and a write cut from its group takes its changes back;
//! and by single commands in direct mode (each reading only what it
//! needs), with their output.
//! Each case runs on the fake kernel and on the real one in a fresh
//! network namespace, with and without compiled runs.

use compile::runs::RunOpts;
use iptables::exec::RestoreOpts;
use keeper::plan::PlanOpts;
use keeper::txn::{apply, Stats, Work, Write};
use keeper::{Session, Settings, State};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};
use std::collections::BTreeSet;

mod rewrite_support;
use rewrite_support::{
    assert_clean, kernel_lines, lines, model_lines, on_fake_kernels, on_the_kernel, restore, write,
    Warm,
};

/// E1 and E2 are registered; R (rules) and T (a jump target) are kernel
/// chains. With runs compiled, R's first two rules are a run.
const SETUP: &str = "*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:E1 - [0:0]
:E2 - [0:0]
:R - [0:0]
:T - [0:0]
-A FORWARD -j R
-A R -s 10.0.0.1/32 -j ACCEPT
-A R -s 10.0.0.2/32 -j ACCEPT
-A R -s 10.0.0.3/32 -j T
COMMIT
";

/// (name, the lines of a `--noflush` restore of the filter table, the
/// registered chains after it; `Err`: the restore fails with this message
/// and the kernel keeps what the setup made).
type Case = (
    &'static str,
    &'static str,
    Result<&'static [&'static str], &'static str>,
);

const CASES: &[Case] = &[
    ("a new chain", "-N X", Ok(&["E1", "E2", "X"])),
    (
        "a new chain, then a rule in it",
        "-N X\n-A X -j DROP",
        Ok(&["E1", "E2"]),
    ),
    (
        "a new chain, then a jump to it",
        "-N X\n-A FORWARD -j X",
        Ok(&["E1", "E2"]),
    ),
    ("a rule appended", "-A E1 -j DROP", Ok(&["E2"])),
    (
        "a rule inserted",
        "-I E1 1 -s 10.9.0.1 -j DROP",
        Ok(&["E2"]),
    ),
    ("a goto to it", "-A FORWARD -g E1", Ok(&["E2"])),
    ("renamed", "-E E1 N1", Ok(&["E2", "N1"])),
    (
        "renamed, then a rule in it",
        "-E E1 N1\n-A N1 -j DROP",
        Ok(&["E2"]),
    ),
    (
        "renamed twice, then a jump to it",
        "-E E1 N1\n-E N1 N2\n-A INPUT -j N2",
        Ok(&["E2"]),
    ),
    ("deleted", "-X E1", Ok(&["E2"])),
    ("deleted and made again", "-X E1\n-N E1", Ok(&["E1", "E2"])),
    ("made, then deleted", "-N X\n-X X", Ok(&["E1", "E2"])),
    (
        "made, renamed, jumped to",
        "-N X\n-E X Y\n-A FORWARD -j Y",
        Ok(&["E1", "E2"]),
    ),
    ("flushed and zeroed", "-F E1\n-Z E1", Ok(&["E1", "E2"])),
    ("rewritten", ":E1 - [0:0]\n-A E1 -j ACCEPT", Ok(&["E2"])),
    (
        "declared again, left empty",
        ":E1 - [0:0]",
        Ok(&["E1", "E2"]),
    ),
    (
        "the targets of a verdict map",
        ":D - [0:0]
-A D -s 10.4.0.1/32 -j E1
-A D -s 10.4.0.2/32 -j E2
-A D -s 10.4.0.3/32 -j E1
-A FORWARD -j D",
        Ok(&[]),
    ),
    (
        "jumped to from a run's chain",
        "-A R -s 10.0.0.4/32 -j E2",
        Ok(&["E1"]),
    ),
    ("every chain flushed and deleted", "-F\n-X", Ok(&[])),
    (
        "a new chain in a restore that fails",
        "-N X\n-A E1 -j DROP\n-A NOSUCH -j DROP",
        Err("iptables-restore: line 4 failed: No chain/target/match by that name.\n"),
    ),
    (
        "renamed onto a chain that exists",
        "-E E1 E2",
        Err("iptables-restore: line 2 failed: File exists.\n"),
    ),
];

/// The registered chains of the filter table, checked to name no kernel
/// chain.
fn registered(sock: &mut Socket, what: &str) -> BTreeSet<String> {
    let (fam, t) = (nft::Family::Ipv4, "nfkeeper_filter");
    let names: BTreeSet<String> = sock
        .set_elems(fam, t, compile::registry::SET)
        .expect("registry")
        .iter()
        .map(|e| compile::registry::name(e.key.as_deref().unwrap_or_default()).expect("a name"))
        .collect();
    for c in sock.chains(fam, Some(t)).expect("chains") {
        assert!(!names.contains(&c.name), "{what}: {} is both", c.name);
    }
    names
}

/// The kernel holds what the model `rs` does, with exactly `names`
/// registered, and `verify` agrees.
fn agree(
    open: &dyn Fn() -> Socket,
    settings: Settings,
    rs: &Ruleset<iptables::Rule>,
    names: &[&str],
    what: &str,
) {
    let mut out = String::new();
    iptables::exec::save_table(rs.table(Family::Ipv4, TableKind::Filter), false, &mut out);
    assert_eq!(kernel_lines(open, settings), lines(&out), "{what}");
    assert_eq!(registered(&mut open(), what), set(names), "{what}");
    assert_clean(&mut open(), what);
}

/// The kernel and a model both at [`SETUP`]; the model.
fn set_up(open: &dyn Fn() -> Socket, settings: Settings) -> Ruleset<iptables::Rule> {
    let mut s = Session::with_socket(open(), Family::Ipv4, settings);
    restore(&mut s, SETUP, false, false).expect("setup");
    let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
    let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    iptables::exec::restore(&mut rs, SETUP, &o).expect("setup");
    rs
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn run_cases(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    let settings = Settings {
        compile,
        ..Default::default()
    };
    for (name, body, want) in CASES {
        let what = format!("{name} (compile {compile:?})");
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        restore(&mut s, SETUP, false, false).expect("setup");
        assert_eq!(
            registered(&mut open(), &what),
            set(&["E1", "E2"]),
            "{what}: setup"
        );
        let before = kernel_lines(open, settings);
        let input = format!("*filter\n{body}\nCOMMIT\n");
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        let got = restore(&mut s, &input, true, false);
        match want {
            Ok(names) => {
                assert_eq!(got, Ok(()), "{what}");
                assert_eq!(
                    kernel_lines(open, settings),
                    model_lines(SETUP, &input),
                    "{what}"
                );
                assert_eq!(registered(&mut open(), &what), set(names), "{what}");
            }
            Err(e) => {
                assert_eq!(got, Err(e.to_string()), "{what}");
                assert_eq!(kernel_lines(open, settings), before, "{what}");
                assert_eq!(registered(&mut open(), &what), set(&["E1", "E2"]), "{what}");
            }
        }
        assert_clean(&mut open(), &what);
    }
}

#[test]
fn registered_chains_in_a_restore_on_the_fake_kernel() {
    on_fake_kernels(run_cases);
}

#[test]
fn registered_chains_in_a_restore_on_the_kernel() {
    on_the_kernel(run_cases);
}

/// (command, whether it succeeds, the registered chains after it): one
/// direct-mode session each, as the CLI runs them, in order.
const COMMANDS: &[(&str, bool, &[&str])] = &[
    ("-F E1", true, &["E1", "E2"]),
    ("-Z E1", true, &["E1", "E2"]),
    ("-S E1", true, &["E1", "E2"]),
    ("-L E1 -n", true, &["E1", "E2"]),
    ("-C E1 -j ACCEPT", false, &["E1", "E2"]),
    ("-D E1 -j ACCEPT", false, &["E1", "E2"]),
    ("-N E1", false, &["E1", "E2"]),
    ("-E E1 N1", true, &["E2", "N1"]),
    ("-A N1 -j ACCEPT", true, &["E2"]),
    ("-I E2 1 -s 10.7.0.1 -j DROP", true, &[]),
    ("-N E3", true, &["E3"]),
    ("-A FORWARD -g E3", true, &[]),
    ("-N E4", true, &["E4"]),
    ("-X E4", true, &[]),
    ("-N E5", true, &["E5"]),
    ("-F", true, &["E5"]),
    ("-X", true, &[]),
];

fn run_commands(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    let settings = Settings {
        compile,
        ..Default::default()
    };
    let mut rs = set_up(open, settings);
    for (cmd, ok, names) in COMMANDS {
        let what = format!("{cmd} (compile {compile:?})");
        let words: Vec<&str> = cmd.split(' ').collect();
        let p = iptables::parse::parse(
            &words,
            iptables::parse::ParseOpts::command(Family::Ipv4, "iptables"),
        )
        .expect("parse");
        let mut want = String::new();
        let model = iptables::exec::execute(rs.table_mut(Family::Ipv4, p.table), &p, &mut want);
        let got = Session::with_socket(open(), Family::Ipv4, settings).iptables(p);
        assert_eq!(got.is_ok(), *ok, "{what}: {got:?}");
        assert_eq!(model.is_ok(), *ok, "{what}: model {model:?}");
        if let Ok(out) = got {
            assert_eq!(out, want, "{what}: output");
        }
        agree(open, settings, &rs, names, &what);
    }
}

#[test]
fn registered_chains_by_commands_on_the_fake_kernel() {
    on_fake_kernels(run_commands);
}

#[test]
fn registered_chains_by_commands_on_the_kernel() {
    on_the_kernel(run_commands);
}

/// (the writes of one group, which of them fail, the registered chains
/// after it). Applied in order to one daemon state: each group plans from
/// the view the commits before it left.
type Group = (
    &'static [&'static [&'static str]],
    &'static [usize],
    &'static [&'static str],
);

const GROUPS: &[Group] = &[
    (
        &[
            &["-N X"],
            &["-N Y"],
            &["-A Y -j DROP"],
            &["-N Z", "-A NOSUCH -j ACCEPT"],
        ],
        &[3],
        &["E1", "E2", "X"],
    ),
    (&[&["-N Z"], &["-A FORWARD -j X"]], &[], &["E1", "E2", "Z"]),
    (&[&["-E Z Z2"], &["-X E1"]], &[], &["E2", "Z2"]),
    (
        &[&["-E Z2 Z3", "-A Z3 -j ACCEPT"], &["-F E2"]],
        &[],
        &["E2"],
    ),
    (&[&["-N W", "-X W"], &["-X E2"]], &[], &[]),
];

fn run_groups(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    let opts = PlanOpts {
        echo: true,
        compile,
        whole_model: true,
        plain_appends: false,
    };
    let settings = Settings {
        compile,
        ..Default::default()
    };
    let mut rs = set_up(open, settings);
    let (mut sock, mut st, mut src) = (open(), State::default(), Warm::default());
    for (i, (group, failing, names)) in GROUPS.iter().enumerate() {
        let what = format!("group {i} (compile {compile:?})");
        let writes: Vec<Write> = group.iter().map(|w| write(w)).collect();
        let done = apply(
            &mut sock,
            &mut st,
            &mut src,
            opts,
            &writes,
            &mut Stats::default(),
        );
        for (j, (w, d)) in writes.iter().zip(&done).enumerate() {
            assert_eq!(d.is_ok(), !failing.contains(&j), "{what}: write {j}: {d:?}");
            if let (true, Work::Cmds(cmds)) = (d.is_ok(), &w.work) {
                for p in cmds {
                    let t = rs.table_mut(Family::Ipv4, p.table);
                    iptables::exec::execute(t, p, &mut String::new()).expect("model");
                }
            }
        }
        agree(open, settings, &rs, names, &what);
    }
}

#[test]
fn registered_chains_through_the_daemon_on_the_fake_kernel() {
    on_fake_kernels(run_groups);
}

#[test]
fn registered_chains_through_the_daemon_on_the_kernel() {
    on_the_kernel(run_groups);
}

/// Chain names `F0`.. of `n` chains, with `prefix`.
fn many(prefix: &str, n: u32) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// (what, the commands of the write or, for `None`, a restore of SETUP
/// replacing the table, the registered chains after it)
type DaemonStep = (&'static str, Option<Vec<String>>, &'static [&'static str]);

/// A registry set has a capacity (`compile::registry::capacity`): a batch
/// the kernel refuses as beyond it is planned again with that table's new
/// chains as kernel chains — in a restore, in direct commands, and in the
/// daemon, whose view keeps the registry full until a batch of its own
/// replaces the table.
fn run_full(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    let settings = Settings {
        compile,
        ..Default::default()
    };
    // SETUP registers E1 and E2: the set is made with the least capacity.
    let cap = compile::registry::MIN_CAPACITY;
    let mut rs = set_up(open, settings);
    let what = format!("a restore beyond the capacity (compile {compile:?})");
    let decl: String = many("F", cap)
        .iter()
        .map(|c| format!(":{c} - [0:0]\n"))
        .collect();
    let input = format!("*filter\n{decl}COMMIT\n");
    let mut s = Session::with_socket(open(), Family::Ipv4, settings);
    assert_eq!(restore(&mut s, &input, true, false), Ok(()), "{what}");
    let mut o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    o.noflush = true;
    iptables::exec::restore(&mut rs, &input, &o).expect("model");
    agree(open, settings, &rs, &["E1", "E2"], &what);
    // The next command's batch fits: registered again.
    let what = format!("-N after the full restore (compile {compile:?})");
    let p = iptables::parse::parse(
        &["-N", "G"],
        iptables::parse::ParseOpts::command(Family::Ipv4, "iptables"),
    )
    .expect("parse");
    iptables::exec::execute(rs.table_mut(Family::Ipv4, p.table), &p, &mut String::new())
        .expect("model");
    Session::with_socket(open(), Family::Ipv4, settings)
        .iptables(p)
        .expect(&what);
    agree(open, settings, &rs, &["E1", "E2", "G"], &what);

    // The daemon: one group fills the registry, later ones see it full
    // until a restore of its own replaces the table.
    let opts = PlanOpts {
        echo: true,
        compile,
        whole_model: true,
        plain_appends: false,
    };
    let (mut sock, mut st, mut src) = (open(), State::default(), Warm::default());
    let fill: Vec<String> = many("H", cap).iter().map(|c| format!("-N {c}")).collect();
    let one = |c: &str| vec![c.to_string()];
    let steps: [DaemonStep; 4] = [
        ("the daemon fills it", Some(fill), &["E1", "E2", "G"]),
        (
            "the daemon's next -N",
            Some(one("-N K")),
            &["E1", "E2", "G"],
        ),
        ("the daemon replaces the table", None, &["E1", "E2"]),
        (
            "the daemon's -N after it",
            Some(one("-N L")),
            &["E1", "E2", "L"],
        ),
    ];
    for (step, cmds, names) in steps {
        let what = format!("{step} (compile {compile:?})");
        let w = match &cmds {
            Some(cmds) => write(&cmds.iter().map(String::as_str).collect::<Vec<_>>()),
            None => Write {
                work: Work::Restore(keeper::txn::Restore {
                    input: SETUP.to_string(),
                    noflush: false,
                    counters: false,
                    test: false,
                    table: None,
                }),
                ..write(&[])
            },
        };
        let done = apply(
            &mut sock,
            &mut st,
            &mut src,
            opts,
            &[w],
            &mut Stats::default(),
        );
        assert!(done[0].is_ok(), "{what}: {:?}", done[0]);
        match &cmds {
            Some(cmds) => {
                for c in cmds {
                    let p = iptables::parse::parse(
                        &c.split(' ').collect::<Vec<_>>(),
                        iptables::parse::ParseOpts::command(Family::Ipv4, "iptables"),
                    )
                    .expect("parse");
                    let t = rs.table_mut(Family::Ipv4, p.table);
                    iptables::exec::execute(t, &p, &mut String::new()).expect("model");
                }
            }
            None => {
                rs = Ruleset::new();
                let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
                iptables::exec::restore(&mut rs, SETUP, &o).expect("model");
            }
        }
        agree(open, settings, &rs, names, &what);
    }
}

#[test]
fn a_full_registry_makes_kernel_chains_on_the_fake_kernel() {
    on_fake_kernels(run_full);
}

#[test]
fn a_full_registry_makes_kernel_chains_on_the_kernel() {
    on_the_kernel(run_full);
}
