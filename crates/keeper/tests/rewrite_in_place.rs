//! A `--noflush` restore leaves the flush of a chain it rewrites pending
//! while its lines re-add the chain's rules in order (the model keeps the
//! old rules and a cursor: `keeper::plan::rewrite::in_place`). Whatever the
//! input does next — a different rule, a jump the old rules would turn
//! into a loop, a check or delete of a rule past the cursor, a second
//! `:CHAIN`, a rename, a delete, a flush of the table, a failing line — the
//! result and the error are exactly those of the model applying the same
//! input eagerly (`iptables::exec::restore`, flush then re-add), and the
//! kernel agrees with the model (`verify`). Each case runs on the fake
//! kernel (no root) and on the real one in a fresh network namespace.

use compile::runs::RunOpts;
use iptables::exec::RestoreOpts;
use keeper::{Session, Settings};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};
use testkit::in_netns;

mod rewrite_support;
use rewrite_support::{assert_clean, compiles, lines, restore};

/// The filter table before each case.
const SETUP: &str = "*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:A - [0:0]
:B - [0:0]
:SVC - [0:0]
:P - [0:0]
-A INPUT -j A
-A INPUT -j P
-A INPUT -j SVC
-A A -j B
-A B -s 10.9.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.2/32 -j ACCEPT
-A SVC -s 10.0.0.3/32 -j ACCEPT
-A SVC -p tcp -m tcp --dport 80 -j DROP
-A SVC -m comment --comment \"last rule\" -j RETURN
-A P -m statistic --mode random --probability 0.33333333349 -j ACCEPT
-A P -m statistic --mode random --probability 0.50000000000 -j DROP
-A P -j RETURN
COMMIT
";

/// (name, the lines of a `--noflush` restore of the filter table between
/// `*filter` and `COMMIT`, whether it changes nothing in the kernel: no
/// new generation).
const CASES: &[(&str, &str, bool)] = &[
    (
        "identical",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.2/32 -j ACCEPT
-A SVC -s 10.0.0.3/32 -j ACCEPT
-A SVC -p tcp -m tcp --dport 80 -j DROP
-A SVC -m comment --comment \"last rule\" -j RETURN",
        true,
    ),
    (
        "identical, spelt otherwise (as kube-proxy writes probabilities)",
        ":P - [0:0]
-A P -m statistic --mode random --probability 0.3333333333 -j ACCEPT
-A P -m statistic --mode random --probability 0.5 -j DROP
-A P -j RETURN",
        true,
    ),
    (
        "a prefix, then a new rule, then the old tail",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.7/32 -j ACCEPT
-A SVC -s 10.0.0.3/32 -j ACCEPT
-A SVC -p tcp -m tcp --dport 80 -j DROP
-A SVC -m comment --comment \"last rule\" -j RETURN",
        false,
    ),
    (
        "a prefix only",
        ":SVC - [0:0]\n-A SVC -s 10.0.0.1/32 -j ACCEPT",
        false,
    ),
    ("emptied", ":SVC - [0:0]", false),
    (
        "a prefix spelt otherwise (parsed)",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC  -s 10.0.0.2 -j ACCEPT",
        false,
    ),
    (
        "a jump only the old rules would make a loop",
        ":A - [0:0]\n:B - [0:0]\n-A B -j A",
        false,
    ),
    (
        "a loop of the input's own",
        ":A - [0:0]\n:B - [0:0]\n-A B -j A\n-A A -j B",
        false,
    ),
    (
        "a loop through a kept rule",
        ":A - [0:0]\n:B - [0:0]\n-A A -j B\n-A B -j A",
        false,
    ),
    (
        "-C of the kept rule, then of a rule past the cursor",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-C SVC -s 10.0.0.1/32 -j ACCEPT
-C SVC -s 10.0.0.2/32 -j ACCEPT",
        false,
    ),
    (
        "-D of a rule past the cursor",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-D SVC -s 10.0.0.2/32 -j ACCEPT",
        false,
    ),
    (
        "a second :CHAIN restarts it",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.2/32 -j ACCEPT
:SVC - [0:0]
-A SVC -s 10.0.0.2/32 -j ACCEPT",
        false,
    ),
    (
        "renamed after a prefix",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.2/32 -j ACCEPT
-E SVC SVC2",
        false,
    ),
    ("deleted", ":SVC - [0:0]\n-D INPUT -j SVC\n-X SVC", false),
    (
        "the table flushed after a prefix",
        ":SVC - [0:0]\n-A SVC -s 10.0.0.1/32 -j ACCEPT\n-F",
        false,
    ),
    (
        "two chains interleaved",
        ":SVC - [0:0]
:B - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A B -s 10.9.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.2/32 -j ACCEPT
-A B -j SVC
-A SVC -s 10.0.0.3/32 -j ACCEPT
-A SVC -p tcp -m tcp --dport 80 -j DROP
-A SVC -m comment --comment \"last rule\" -j RETURN",
        false,
    ),
    (
        "a failing line after an identical rewrite",
        ":SVC - [0:0]
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.2/32 -j ACCEPT
-A SVC -s 10.0.0.3/32 -j ACCEPT
-A SVC -p tcp -m tcp --dport 80 -j DROP
-A SVC -m comment --comment \"last rule\" -j RETURN
-A B -j NOSUCHCHAIN",
        false,
    ),
];

/// What the model makes of `input` after the setup, applying it eagerly:
/// the table's lines, or the error as iptables-restore words it.
fn eager(input: &str) -> Result<Vec<String>, String> {
    let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
    let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    iptables::exec::restore(&mut rs, SETUP, &o).expect("setup");
    let mut o = o;
    o.noflush = true;
    iptables::exec::restore(&mut rs, input, &o).map_err(|e| e.render("iptables-restore"))?;
    let mut out = String::new();
    iptables::exec::save_table(rs.table(Family::Ipv4, TableKind::Filter), false, &mut out);
    Ok(lines(&out))
}

fn run_cases(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    for (name, body, quiet) in CASES {
        let what = format!("{name} (compile {compile:?})");
        let settings = Settings {
            compile,
            ..Default::default()
        };
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        restore(&mut s, SETUP, false, false).expect("setup");
        let input = format!("*filter\n{body}\nCOMMIT\n");
        let want = eager(&input);
        // A session of its own, as each iptables-restore is: it reads what
        // the command needs.
        let gen0 = open().gen().expect("gen").id;
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        let got = restore(&mut s, &input, true, false).and_then(|()| {
            let mut fresh = Session::with_socket(open(), Family::Ipv4, settings);
            Ok(lines(
                &fresh
                    .save_text(false, Some(TableKind::Filter))
                    .map_err(|e| e.to_string())?,
            ))
        });
        assert_eq!(got, want, "{what}");
        if *quiet {
            assert_eq!(
                open().gen().expect("gen").id,
                gen0,
                "{what}: sent something"
            );
        }
        if got.is_err() {
            let mut fresh = Session::with_socket(open(), Family::Ipv4, Settings::default());
            let now = lines(
                &fresh
                    .save_text(false, Some(TableKind::Filter))
                    .expect("save"),
            );
            assert_eq!(now, eager("*filter\nCOMMIT\n").expect("setup"), "{what}");
        }
        assert_clean(&mut open(), &what);
    }
}

#[test]
fn in_place_rewrites_on_the_fake_kernel() {
    for compile in compiles() {
        let k = fakekernel::Kernel::new();
        run_cases(&|| k.socket(), compile);
    }
}

#[test]
fn in_place_rewrites_on_the_kernel() {
    let done = in_netns(|| {
        for compile in compiles() {
            run_cases(&|| Socket::open().expect("socket"), compile);
        }
    });
    if done.is_none() {
        eprintln!("SKIP: in_place_rewrites_on_the_kernel needs root");
    }
}
