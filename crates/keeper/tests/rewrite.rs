//! A `--noflush` restore that rewrites a chain (`:CHAIN` then its rules,
//! as kube-proxy does) sends only the difference: rules it repeats keep
//! their kernel handles, and the result is that of a flush and re-add —
//! the input's rules in the input's order, counters from zero (or the
//! input's `[p:b]` with `--counters`), `verify` clean; a failing line
//! leaves everything as it was. Each case runs on the fake kernel (no
//! root) and on the real one in a fresh network namespace.

use compile::runs::RunOpts;
use keeper::{Session, Settings};
use nft::Socket;
use ruleset::{Family, TableKind};
use std::collections::HashSet;
use testkit::in_netns;

mod rewrite_support;
use rewrite_support::{assert_clean, restore};

const TABLE: &str = "nfkeeper_filter";

/// The chain's rules before each case (iptables-save -c form).
const SVC: &[&str] = &[
    "[0:0] -A SVC -s 10.0.0.1/32 -j ACCEPT",
    "[0:0] -A SVC -s 10.0.0.2/32 -j ACCEPT",
    "[0:0] -A SVC -s 10.0.0.3/32 -j ACCEPT",
    "[0:0] -A SVC -p tcp -m tcp --dport 80 -j DROP",
    "[5:500] -A SVC -p udp -m udp --dport 53 -j ACCEPT",
    "[0:0] -A SVC -m comment --comment \"last rule\" -j RETURN",
];

struct Case {
    name: &'static str,
    /// Rules of the rewrite, in order (`[p:b]` used with `counters`).
    rules: &'static [&'static str],
    counters: bool,
    /// Kernel rules of SVC whose handle survives, plain rules only (a rule
    /// replaced by itself to reset its counters keeps its handle).
    kept: usize,
}

const CASES: &[Case] = &[
    Case {
        name: "identical, counters reset",
        rules: SVC,
        counters: false,
        kept: 6,
    },
    Case {
        name: "identical with the kernel's counters",
        rules: SVC,
        counters: true,
        kept: 6,
    },
    Case {
        name: "one rule changed in the middle",
        rules: &[
            "[0:0] -A SVC -s 10.0.0.1/32 -j ACCEPT",
            "[0:0] -A SVC -s 10.0.0.2/32 -j ACCEPT",
            "[0:0] -A SVC -s 10.0.0.9/32 -j ACCEPT",
            "[0:0] -A SVC -p tcp -m tcp --dport 80 -j DROP",
            "[5:500] -A SVC -p udp -m udp --dport 53 -j ACCEPT",
            "[0:0] -A SVC -m comment --comment \"last rule\" -j RETURN",
        ],
        counters: true,
        kept: 5,
    },
    Case {
        name: "reordered",
        rules: &[
            "[0:0] -A SVC -m comment --comment \"last rule\" -j RETURN",
            "[0:0] -A SVC -s 10.0.0.1/32 -j ACCEPT",
            "[0:0] -A SVC -s 10.0.0.2/32 -j ACCEPT",
            "[0:0] -A SVC -s 10.0.0.3/32 -j ACCEPT",
            "[5:500] -A SVC -p udp -m udp --dport 53 -j ACCEPT",
            "[0:0] -A SVC -p tcp -m tcp --dport 80 -j DROP",
        ],
        counters: true,
        kept: 4,
    },
    Case {
        name: "a rule removed, one added at the head",
        rules: &[
            "[1:2] -A SVC -d 10.1.0.1/32 -j DROP",
            "[0:0] -A SVC -s 10.0.0.1/32 -j ACCEPT",
            "[0:0] -A SVC -s 10.0.0.3/32 -j ACCEPT",
            "[0:0] -A SVC -p tcp -m tcp --dport 80 -j DROP",
            "[5:500] -A SVC -p udp -m udp --dport 53 -j ACCEPT",
            "[0:0] -A SVC -m comment --comment \"last rule\" -j RETURN",
        ],
        counters: true,
        kept: 5,
    },
    Case {
        name: "counters set by --counters",
        rules: &[
            "[0:0] -A SVC -s 10.0.0.1/32 -j ACCEPT",
            "[7:700] -A SVC -s 10.0.0.2/32 -j ACCEPT",
            "[0:0] -A SVC -s 10.0.0.3/32 -j ACCEPT",
            "[0:0] -A SVC -p tcp -m tcp --dport 80 -j DROP",
            "[0:0] -A SVC -p udp -m udp --dport 53 -j ACCEPT",
            "[0:0] -A SVC -m comment --comment \"last rule\" -j RETURN",
        ],
        counters: true,
        kept: 6,
    },
    Case {
        name: "emptied",
        rules: &[],
        counters: false,
        kept: 0,
    },
];

fn settings(compile: Option<usize>) -> Settings {
    Settings {
        compile: compile.map(|min_len| RunOpts {
            min_len,
            numgen: false,
        }),
        ..Default::default()
    }
}

fn setup_input() -> String {
    let mut s = String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n");
    s.push_str(":OUTPUT ACCEPT [0:0]\n:SVC - [0:0]\n[0:0] -A INPUT -j SVC\n");
    for r in SVC {
        s.push_str(r);
        s.push('\n');
    }
    s.push_str("COMMIT\n");
    s
}

/// A `--noflush` rewrite of SVC with `rules` (and `extra` lines after).
fn rewrite_input(rules: &[&str], counters: bool, extra: &str) -> String {
    let mut s = String::from("*filter\n:SVC - [0:0]\n");
    for r in rules {
        let r = if counters {
            r
        } else {
            r.split_once("] ").map_or(*r, |x| x.1)
        };
        s.push_str(r);
        s.push('\n');
    }
    s.push_str(extra);
    s.push_str("COMMIT\n");
    s
}

/// SVC's lines of `iptables-save -c`.
fn saved(s: &mut Session) -> Vec<String> {
    s.save_text(true, Some(TableKind::Filter))
        .expect("save")
        .lines()
        .filter(|l| l.contains("-A SVC "))
        .map(str::to_string)
        .collect()
}

/// Handles of SVC's kernel rules.
fn handles(sock: &mut Socket) -> Vec<u64> {
    let mut out = Vec::new();
    sock.rules(nft::Family::Ipv4, Some(TABLE), Some("SVC"), |r| {
        out.push(r.handle.unwrap_or(0));
        Ok(())
    })
    .expect("dump");
    out
}

/// Every case on one kernel; `open` gives a socket to it.
fn run_cases(open: &dyn Fn() -> Socket, compile: Option<usize>) {
    for case in CASES {
        let what = format!("{} (compile {compile:?})", case.name);
        let mut s = Session::with_socket(open(), Family::Ipv4, settings(compile));
        restore(&mut s, &setup_input(), false, true).expect("setup");
        let mut sock = open();
        let before = handles(&mut sock);
        let input = rewrite_input(case.rules, case.counters, "");
        restore(&mut s, &input, true, case.counters).unwrap_or_else(|e| panic!("{what}: {e}"));
        let want: Vec<String> = case
            .rules
            .iter()
            .map(|r| {
                if case.counters {
                    r.to_string()
                } else {
                    format!("[0:0] {}", r.split_once("] ").map_or(*r, |x| x.1))
                }
            })
            .collect();
        assert_eq!(saved(&mut s), want, "{what}");
        assert_clean(&mut sock, &what);
        let after: HashSet<u64> = handles(&mut sock).into_iter().collect();
        let kept = before.iter().filter(|h| after.contains(h)).count();
        if compile.is_none() {
            assert_eq!(kept, case.kept, "{what}: {before:?} -> {after:?}");
        }
        // A failing line: nothing of the rewrite lands.
        let (save0, handles0) = (saved(&mut s), handles(&mut sock));
        let bad = rewrite_input(SVC, false, "-A SVC -j NOSUCHCHAIN\n");
        let err = restore(&mut s, &bad, true, false).expect_err("no such chain");
        assert!(err.contains("line"), "{what}: {err}");
        assert_eq!(saved(&mut s), save0, "{what}: failed rewrite");
        assert_eq!(handles(&mut sock), handles0, "{what}: failed rewrite");
        assert_clean(&mut sock, &what);
    }
}

/// An identical rewrite with the kernel's own counters sends nothing.
fn identical_sends_nothing(open: &dyn Fn() -> Socket, compile: Option<usize>) {
    let mut s = Session::with_socket(open(), Family::Ipv4, settings(compile));
    restore(&mut s, &setup_input(), false, true).expect("setup");
    let mut sock = open();
    let (h0, g0) = (handles(&mut sock), sock.gen().expect("gen").id);
    let input = rewrite_input(SVC, true, "");
    restore(&mut s, &input, true, true).expect("rewrite");
    assert_eq!(handles(&mut sock), h0, "compile {compile:?}");
    assert_eq!(sock.gen().expect("gen").id, g0, "compile {compile:?}");
    assert_clean(&mut sock, "identical");
}

/// Kernel rules of `chain`.
fn kernel_rules(sock: &mut Socket, chain: &str) -> usize {
    let mut n = 0;
    sock.rules(nft::Family::Ipv4, Some(TABLE), Some(chain), |_| {
        n += 1;
        Ok(())
    })
    .expect("dump");
    n
}

/// With runs compiled, what a `--noflush` restore writes anew compiles as
/// a replaced table's chains do: a chain it creates (kube-proxy's first
/// sync), and a stretch of new rules in a chain it rewrites.
fn new_rules_compile(open: &dyn Fn() -> Socket) {
    let mut s = Session::with_socket(open(), Family::Ipv4, settings(Some(2)));
    restore(&mut s, &setup_input(), false, true).expect("setup");
    let mut sock = open();
    // (restore input, chain, kernel rules it holds after)
    let cases: &[(&str, &str, usize)] = &[
        (
            "*filter\n:NEW - [0:0]\n-A NEW -s 10.1.0.1/32 -j ACCEPT\n-A NEW -s 10.1.0.2/32 -j ACCEPT\n-A NEW -s 10.1.0.3/32 -j ACCEPT\n-A NEW -j RETURN\nCOMMIT\n",
            "NEW",
            2,
        ),
        // Three new addresses in front of SVC's kept tail: one run and
        // the three kept plain rules.
        (
            "*filter\n:SVC - [0:0]\n-A SVC -s 10.0.0.7/32 -j ACCEPT\n-A SVC -s 10.0.0.8/32 -j ACCEPT\n-A SVC -s 10.0.0.9/32 -j ACCEPT\n-A SVC -p tcp -m tcp --dport 80 -j DROP\n-A SVC -p udp -m udp --dport 53 -j ACCEPT\n-A SVC -m comment --comment \"last rule\" -j RETURN\nCOMMIT\n",
            "SVC",
            4,
        ),
    ];
    for (input, chain, want) in cases {
        restore(&mut s, input, true, false).expect(input);
        assert_eq!(kernel_rules(&mut sock, chain), *want, "{input}");
        assert_clean(&mut sock, input);
    }
}

#[test]
fn new_rules_compile_on_the_fake_kernel() {
    let k = fakekernel::Kernel::new();
    new_rules_compile(&|| k.socket());
}

#[test]
fn new_rules_compile_on_the_kernel() {
    if in_netns(|| new_rules_compile(&|| Socket::open().expect("socket"))).is_none() {
        eprintln!("SKIP: new_rules_compile_on_the_kernel needs root");
    }
}

#[test]
fn rewrites_on_the_fake_kernel() {
    for compile in [None, Some(2)] {
        let k = fakekernel::Kernel::new();
        run_cases(&|| k.socket(), compile);
        let k = fakekernel::Kernel::new();
        identical_sends_nothing(&|| k.socket(), compile);
    }
}

#[test]
fn rewrites_on_the_kernel() {
    let done = in_netns(|| {
        for compile in [None, Some(2)] {
            let open = || Socket::open().expect("socket");
            run_cases(&open, compile);
            identical_sends_nothing(&open, compile);
        }
    });
    if done.is_none() {
        eprintln!("SKIP: rewrites_on_the_kernel needs root");
    }
}

#[test]
fn a_kernel_refusal_names_the_rules_line_and_changes_nothing() {
    // One rule changed in the middle: the old one is deleted, the new one
    // inserted; the kernel refusing the first rule added names its input
    // line (`*filter`, `:SVC`, then the rules from line 3) and nothing
    // lands. Plain rules: the changed rule (line 5). Runs: the first three
    // rules are one run, which the change breaks: all three are written
    // again, the first (line 3) first.
    let mut rules: Vec<&str> = SVC.to_vec();
    rules[2] = "[0:0] -A SVC -s 10.0.0.9/32 -j ACCEPT";
    for (compile, line) in [(None, 5), (Some(2), 3)] {
        let k = fakekernel::Kernel::new();
        let mut s = Session::with_socket(k.socket(), Family::Ipv4, settings(compile));
        restore(&mut s, &setup_input(), false, true).expect("setup");
        let before = (k.text(), saved(&mut s));
        k.fail_next_commit(fakekernel::FailAt::FirstOf(nft::msg::NEWRULE), libc::ENOMEM);
        let err =
            restore(&mut s, &rewrite_input(&rules, true, ""), true, true).expect_err("refused");
        assert!(
            err.contains(&format!("line {line}: ")),
            "compile {compile:?}: {err}"
        );
        assert_eq!((k.text(), saved(&mut s)), before, "compile {compile:?}");
    }
}
