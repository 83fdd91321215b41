//! kube-proxy's syncs on a compiled run: a `--noflush` restore that only
//! declares chains and appends reads the declared chains' run members and
//! plain rules ending in a jump unparsed (stand-ins, see
//! `keeper::read::Snapshot::lazy`). Whatever the
//! rewrite keeps, changes or resets, the result must be that of a flush
//! and re-add: the input's rules in order, counters from zero (or the
//! input's `[p:b]` with `--counters`), `verify` clean; an identical
//! rewrite with the kernel's counters sends nothing (no commit); a member
//! removed behind nfkeeper's back (by nft) is put back by the next sync,
//! and the run's census in the catalog follows (`verify` stays clean).
//! Each step runs on the fake kernel (no root) and on the real one in a
//! fresh network namespace.

use compile::runs::RunOpts;
use keeper::{Session, Settings};
use nft::Socket;
use ruleset::{Family, TableKind};
use testkit::in_netns;

mod rewrite_support;
use rewrite_support::{assert_clean, restore};

const TABLE: &str = "nfkeeper_filter";

/// KS before the steps: a verdict map of four members, then a plain rule.
const KS: &[&str] = &[
    "-A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
    "-A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
    "-A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T3",
    "-A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
    "-A KS -j RETURN",
];

struct Step {
    name: &'static str,
    /// Delete the element of KS's map that jumps to this chain with nft
    /// first.
    behind: Option<&'static str>,
    /// The rewrite of KS (`[p:b]` prefixes only with `counters`).
    rules: &'static [&'static str],
    counters: bool,
    /// Whether the kernel may be left alone (no commit at all).
    nothing_sent: bool,
}

/// Applied in order to one kernel (each starts where the one before left).
const STEPS: &[Step] = &[
    Step {
        name: "identical, counters already zero",
        behind: None,
        rules: KS,
        counters: false,
        nothing_sent: true,
    },
    Step {
        name: "a member's counters set by --counters",
        behind: None,
        rules: &[
            "[0:0] -A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "[7:700] -A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
            "[0:0] -A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T3",
            "[0:0] -A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "[0:0] -A KS -j RETURN",
        ],
        counters: true,
        nothing_sent: false,
    },
    Step {
        name: "identical again: its counters start from zero",
        behind: None,
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "identical with the kernel's counters",
        behind: None,
        rules: &[
            "[0:0] -A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "[0:0] -A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
            "[0:0] -A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T3",
            "[0:0] -A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "[0:0] -A KS -j RETURN",
        ],
        counters: true,
        nothing_sent: true,
    },
    Step {
        name: "a member's target changed",
        behind: None,
        rules: &[
            "-A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
            "-A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "-A KS -j RETURN",
        ],
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "a member removed, one added, one moved",
        behind: None,
        rules: &[
            "-A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "-A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -d 10.0.0.5/32 -p tcp -m tcp --dport 80 -j T2",
            "-A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -j RETURN",
        ],
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "back to the start",
        behind: None,
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "plain rules jumping to chains added (read back as stand-ins)",
        behind: None,
        rules: &[
            "-A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
            "-A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T3",
            "-A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "-A KS -m comment --comment one -j T2",
            "-A KS -s 10.9.9.9/32 -g T3",
            "-A KS -j RETURN",
        ],
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "identical with the plain jumps",
        behind: None,
        rules: &[
            "-A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
            "-A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T3",
            "-A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "-A KS -m comment --comment one -j T2",
            "-A KS -s 10.9.9.9/32 -g T3",
            "-A KS -j RETURN",
        ],
        counters: false,
        nothing_sent: true,
    },
    Step {
        // A stand-in is the old rule's jump only: a bare jump line is
        // another rule and must not keep the commented one.
        name: "a plain jump's comment dropped, a goto made a jump",
        behind: None,
        rules: &[
            "-A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
            "-A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T3",
            "-A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "-A KS -j T2",
            "-A KS -s 10.9.9.9/32 -j T3",
            "-A KS -j RETURN",
        ],
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "back to the start again",
        behind: None,
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "the first member deleted by nft behind our back, then an identical sync",
        behind: Some("T1"),
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "a middle member deleted by nft behind our back, then an identical sync",
        behind: Some("T3"),
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "the last member deleted by nft behind our back, then an identical sync",
        behind: Some("T4"),
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "all members plain after a member",
        behind: None,
        rules: &[
            "-A KS -s 10.9.0.1/32 -j RETURN",
            "-A KS -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j T1",
            "-A KS -d 10.0.0.2/32 -p tcp -m tcp --dport 80 -j T2",
            "-A KS -d 10.0.0.3/32 -p tcp -m tcp --dport 80 -j T3",
            "-A KS -d 10.0.0.4/32 -p tcp -m tcp --dport 80 -j T4",
            "-A KS -j RETURN",
        ],
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "emptied",
        behind: None,
        rules: &[],
        counters: false,
        nothing_sent: false,
    },
];

fn settings() -> Settings {
    Settings {
        compile: Some(RunOpts {
            min_len: 2,
            numgen: false,
        }),
        ..Default::default()
    }
}

fn setup_input() -> String {
    let mut s = String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n");
    s.push_str(":OUTPUT ACCEPT [0:0]\n:KS - [0:0]\n");
    for t in ["T1", "T2", "T3", "T4"] {
        s.push_str(&format!(":{t} - [0:0]\n-A {t} -j ACCEPT\n"));
    }
    s.push_str("-A INPUT -j KS\n");
    for r in KS {
        s.push_str(r);
        s.push('\n');
    }
    s.push_str("COMMIT\n");
    s
}

/// kube-proxy's form: the chain declared, then its rules appended.
fn rewrite_input(rules: &[&str]) -> String {
    let mut s = String::from("*filter\n:KS - [0:0]\n");
    for r in rules {
        s.push_str(r);
        s.push('\n');
    }
    s.push_str("COMMIT\n");
    s
}

/// KS's lines of `iptables-save -c`, read by a new session.
fn saved(open: &dyn Fn() -> Socket) -> Vec<String> {
    let mut s = Session::with_socket(open(), Family::Ipv4, settings());
    s.save_text(true, Some(TableKind::Filter))
        .expect("save")
        .lines()
        .filter(|l| l.contains("-A KS "))
        .map(str::to_string)
        .collect()
}

/// Delete the element of KS's run map that jumps to `target`, as `nft
/// delete element` would.
fn delete_a_member(sock: &mut Socket, target: &str) {
    let fam = nft::Family::Ipv4;
    let sets = sock.sets(fam, Some(TABLE)).expect("sets");
    let set = sets
        .iter()
        .find(|s| s.table == TABLE && s.name.starts_with(compile::runs::SET_PREFIX))
        .expect("KS's run map");
    let elems = sock.set_elems(fam, TABLE, &set.name).expect("elements");
    let key = elems
        .iter()
        .find(|e| matches!(&e.data, Some(nft::Data::Verdict(nft::Verdict::Jump(t))) if t == target))
        .and_then(|e| e.key.clone())
        .expect("the member's key");
    let mut b = sock.batch(None);
    let del = nft::SetElems::new(fam, TABLE, &set.name, vec![nft::SetElem::key(&key)]);
    b.delete(&del, 0);
    assert!(sock.commit(&mut b).expect("commit").outcome.is_ok());
}

/// Every step of [`STEPS`] in order.
fn run_steps(open: &dyn Fn() -> Socket) {
    let mut s = Session::with_socket(open(), Family::Ipv4, settings());
    restore(&mut s, &setup_input(), false, true).expect("setup");
    let mut sock = open();
    assert_clean(&mut sock, "setup");
    for step in STEPS {
        let what = step.name;
        if let Some(target) = step.behind {
            delete_a_member(&mut sock, target);
            assert_eq!(saved(open).len(), KS.len() - 1, "{what}: nft's delete");
        }
        // A new session per sync, as one iptables-restore process each.
        let mut s = Session::with_socket(open(), Family::Ipv4, settings());
        let g0 = sock.gen().expect("gen").id;
        let input = rewrite_input(step.rules);
        restore(&mut s, &input, true, step.counters).unwrap_or_else(|e| panic!("{what}: {e}"));
        let want: Vec<String> = step
            .rules
            .iter()
            .map(|r| match r.split_once("] ") {
                Some((c, rest)) if step.counters => format!("{c}] {rest}"),
                Some((_, rest)) => format!("[0:0] {rest}"),
                None => format!("[0:0] {r}"),
            })
            .collect();
        assert_eq!(saved(open), want, "{what}");
        assert_clean(&mut sock, what);
        let sent = sock.gen().expect("gen").id != g0;
        if step.nothing_sent {
            assert!(!sent, "{what}: an identical sync must send nothing");
        } else {
            assert!(sent, "{what}: the kernel must change");
        }
    }
}

#[test]
fn syncs_on_the_fake_kernel() {
    let k = fakekernel::Kernel::new();
    run_steps(&|| k.socket());
}

#[test]
fn syncs_on_the_kernel() {
    if in_netns(|| run_steps(&|| Socket::open().expect("socket"))).is_none() {
        eprintln!("SKIP: syncs_on_the_kernel needs root");
    }
}
