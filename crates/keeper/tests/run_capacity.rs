//! A run's set made with many elements has a capacity
//! (`compile::runs::capacity`), which the kernel enforces: a member
//! appended beyond it is refused (`ENFILE`) and the write is planned again
//! with plain appends. Whatever appends to the run — single commands in
//! direct mode, a `--noflush` restore, the daemon's group of writes — the
//! table ends with every rule in order and `verify` clean, and the appends
//! after the full run are compiled again where the planner can (a new run
//! from the plain rule that follows it). On the fake kernel and on the
//! real one.

use compile::runs::{capacity, RunOpts};
use keeper::plan::PlanOpts;
use keeper::txn::{apply, Stats, Write};
use keeper::{Session, Settings, State};
use nft::Socket;
use ruleset::Family;

mod rewrite_support;
use rewrite_support::{
    assert_clean, kernel_lines, on_fake_kernels, on_the_kernel, restore, run_sizes, write, Warm,
};

/// Rules in the run the setup makes: its set gets the least capacity.
const SETUP_RULES: usize = compile::runs::SIZED_FROM;
/// Rules appended after the setup: beyond the set's capacity.
const APPENDED: usize = 300;

fn rule(i: usize) -> String {
    format!("-A X -s 10.0.{}.{}/32 -j ACCEPT", i >> 8, i & 255)
}

fn table(rules: std::ops::Range<usize>) -> String {
    let mut s = String::from(":X - [0:0]\n");
    for i in rules {
        s.push_str(&rule(i));
        s.push('\n');
    }
    s
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    /// One direct-mode command per rule.
    Commands,
    /// One `--noflush` restore of all the rules.
    Restore,
    /// One write per rule, all in one daemon group.
    Group,
}

fn run(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    let settings = Settings {
        compile,
        ..Default::default()
    };
    let full = capacity(SETUP_RULES).expect("sized") as usize;
    assert!(
        SETUP_RULES + APPENDED > full,
        "the appends must fill the set"
    );
    // Run sizes after each mode (with runs of 2 compiled). The commands
    // and the group: the run fills, the next rule is plain, the ones
    // after it form a new run (unsized: made by appends) with it. The
    // restore is one write: planned again with plain appends as a whole.
    let after_full = SETUP_RULES + APPENDED - full;
    let cases: [(Mode, Vec<usize>); 3] = [
        (Mode::Commands, vec![after_full, full]),
        (Mode::Restore, vec![SETUP_RULES]),
        (Mode::Group, vec![after_full, full]),
    ];
    for (mode, want) in cases {
        let what = format!("{mode:?} (compile {compile:?})");
        let setup = format!("*filter\n{}COMMIT\n", table(0..SETUP_RULES));
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        assert_eq!(restore(&mut s, &setup, false, false), Ok(()), "{what}");
        let appended = SETUP_RULES..SETUP_RULES + APPENDED;
        match mode {
            Mode::Commands => {
                for i in appended {
                    let mut s = Session::with_socket(open(), Family::Ipv4, settings);
                    let line = rule(i);
                    let w: Vec<&str> = line.split(' ').collect();
                    let p = iptables::parse::parse(
                        &w,
                        iptables::parse::ParseOpts::command(Family::Ipv4, "iptables"),
                    )
                    .expect("parse");
                    s.iptables(p)
                        .unwrap_or_else(|e| panic!("{what}: {line}: {e}"));
                }
            }
            Mode::Restore => {
                let input: String = appended.map(|i| rule(i) + "\n").collect();
                let input = format!("*filter\n{input}COMMIT\n");
                assert_eq!(restore(&mut s, &input, true, false), Ok(()), "{what}");
            }
            Mode::Group => {
                let opts = PlanOpts {
                    echo: true,
                    compile,
                    whole_model: true,
                    plain_appends: false,
                };
                let texts: Vec<String> = appended.map(rule).collect();
                let writes: Vec<Write> = texts.iter().map(|t| write(&[t.as_str()])).collect();
                let (mut sock, mut st, mut src) = (open(), State::default(), Warm::default());
                let done = apply(
                    &mut sock,
                    &mut st,
                    &mut src,
                    opts,
                    &writes,
                    &mut Stats::default(),
                );
                for (i, d) in done.iter().enumerate() {
                    assert!(d.is_ok(), "{what}: write {i}: {d:?}");
                }
            }
        }
        let want_rules: Vec<String> = (0..SETUP_RULES + APPENDED).map(rule).collect();
        let got = kernel_lines(open, settings);
        let got_rules: Vec<&String> = got.iter().filter(|l| l.starts_with("-A X ")).collect();
        assert_eq!(got_rules, want_rules.iter().collect::<Vec<_>>(), "{what}");
        let mut sock = open();
        assert_clean(&mut sock, &what);
        let sizes = run_sizes(&mut sock);
        match compile {
            Some(_) => assert_eq!(sizes, want, "{what}"),
            None => assert!(sizes.is_empty(), "{what}: {sizes:?}"),
        }
    }
}

#[test]
fn a_full_run_set_takes_no_more_members_on_the_fake_kernel() {
    on_fake_kernels(run);
}

#[test]
fn a_full_run_set_takes_no_more_members_on_the_kernel() {
    on_the_kernel(run);
}
