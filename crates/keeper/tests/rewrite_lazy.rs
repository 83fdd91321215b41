//! kube-proxy's syncs on a compiled run: a `--noflush` restore that only
//! declares chains and appends reads the declared chains' run members
//! unparsed (stand-ins, see `keeper::read::Snapshot::lazy`). Whatever the
//! rewrite keeps, changes or resets, the result must be that of a flush
//! and re-add: the input's rules in order, counters from zero (or the
//! input's `[p:b]` with `--counters`), `verify` clean; an identical
//! rewrite with the kernel's counters sends nothing (no commit); a member
//! removed behind nfkeeper's back (by nft) is put back by the next sync.
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
    /// Delete the second element of KS's map with nft first.
    behind: bool,
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
        behind: false,
        rules: KS,
        counters: false,
        nothing_sent: true,
    },
    Step {
        name: "a member's counters set by --counters",
        behind: false,
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
        behind: false,
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "identical with the kernel's counters",
        behind: false,
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
        behind: false,
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
        behind: false,
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
        behind: false,
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "a member deleted by nft behind our back, then an identical sync",
        behind: true,
        rules: KS,
        counters: false,
        nothing_sent: false,
    },
    Step {
        name: "all members plain after a member",
        behind: false,
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
        behind: false,
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

/// Delete the second element of KS's run map, as `nft delete element`
/// would.
fn delete_a_member(sock: &mut Socket) {
    let fam = nft::Family::Ipv4;
    let sets = sock.sets(fam, Some(TABLE)).expect("sets");
    let set = sets
        .iter()
        .find(|s| s.table == TABLE && s.name.starts_with(compile::runs::SET_PREFIX))
        .expect("KS's run map");
    let elems = sock.set_elems(fam, TABLE, &set.name).expect("elements");
    let key = elems[1].key.clone().expect("key");
    let mut b = sock.batch(None);
    let del = nft::SetElems::new(fam, TABLE, &set.name, vec![nft::SetElem::key(&key)]);
    b.delete(&del, 0);
    assert!(sock.commit(&mut b).expect("commit").outcome.is_ok());
}

/// Every step of [`STEPS`] in order; with `behind` false, those that
/// delete a member behind nfkeeper's back are left out.
fn run_steps(open: &dyn Fn() -> Socket, behind: bool) {
    let mut s = Session::with_socket(open(), Family::Ipv4, settings());
    restore(&mut s, &setup_input(), false, true).expect("setup");
    let mut sock = open();
    assert_clean(&mut sock, "setup");
    for step in STEPS.iter().filter(|st| behind || !st.behind) {
        let what = step.name;
        if step.behind {
            delete_a_member(&mut sock);
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
    run_steps(&|| k.socket(), true);
}

#[test]
fn syncs_on_the_kernel() {
    if in_netns(|| run_steps(&|| Socket::open().expect("socket"), false)).is_none() {
        eprintln!("SKIP: syncs_on_the_kernel needs root");
    }
}

/// The steps with a member deleted by nft, on the kernel. Known defect
/// (issue "reads at scale": a change behind nfkeeper's back is never
/// hidden from a read): for some members of a compiled run — which one
/// is deleted follows the kernel set's hash order, so about 4 runs in 10 —
/// the read still shows the deleted member, so the identical sync sends
/// nothing and `verify` reports the missing element. Run it with
/// `cargo test --profile ci -p nfk-keeper --test rewrite_lazy -- --ignored`.
#[test]
#[ignore = "known defect (issue reads at scale): a run member deleted behind nfkeeper's back can be read as present"]
fn syncs_after_a_member_deleted_behind_our_back_on_the_kernel() {
    if in_netns(|| run_steps(&|| Socket::open().expect("socket"), true)).is_none() {
        eprintln!("SKIP: needs root");
    }
}
