//! `verify` finds what was changed behind nfkeeper's back: a ruleset with a
//! compiled run, a plain rule with an anonymous set and a NAT rule is
//! restored in a fresh network namespace, checked clean, then each case
//! changes one thing with raw netlink messages and must be reported.

use compile::runs::RunOpts;
use compile::userdata;
use iptables::exec::RestoreOpts;
use keeper::verify::{socket, verify_table, Report};
use keeper::Session;
use nft::batch::Placement;
use nft::{Data, Expr, SetElem, SetElems, Socket, Verdict};
use ruleset::{Family, RuleId, TableKind};
use testkit::in_netns;

/// Settings compiling runs of at least `min_len` rules.
fn runs(min_len: usize) -> keeper::Settings {
    keeper::Settings {
        compile: Some(RunOpts {
            min_len,
            numgen: true,
        }),
        ..Default::default()
    }
}

const RULES: &str = "\
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -p tcp -m multiport --dports 22,80,443 -j ACCEPT
-A INPUT -s 10.0.0.1/32 -p tcp -m tcp --dport 8080 -j ACCEPT
-A INPUT -s 10.0.0.2/32 -p tcp -m tcp --dport 8080 -j ACCEPT
-A INPUT -s 10.0.0.3/32 -p tcp -m tcp --dport 8080 -j ACCEPT
-A INPUT -s 10.0.0.4/32 -p tcp -m tcp --dport 8080 -j ACCEPT
-A FORWARD -d 10.96.0.1/32 -p tcp -m comment --comment a -m tcp --dport 443 -j ACCEPT
-A FORWARD -d 10.96.0.2/32 -p tcp -m comment --comment b -m tcp --dport 53 -j DROP
-A OUTPUT -o eth0 -j DROP
COMMIT
";

fn restore() {
    let mut s = Session::open(Family::Ipv4, runs(2)).expect("session");
    s.restore(RULES, &RestoreOpts::new(Family::Ipv4, "iptables-restore"))
        .unwrap_or_else(|e| panic!("{}", e.render("iptables-restore")));
}

fn check() -> Report {
    verify_table(
        &mut socket().expect("socket"),
        Family::Ipv4,
        TableKind::Filter,
    )
    .expect("verify")
    .expect("table exists")
}

/// Our filter table (compile::layout::table_name).
const TABLE: &str = "nfkeeper_filter";

/// Kernel rules of our filter table: (chain, handle, userdata, exprs).
fn rules(sock: &mut Socket) -> Vec<(String, u64, Vec<u8>, Vec<Expr>)> {
    let mut out = Vec::new();
    sock.rules(nft::Family::Ipv4, Some(TABLE), None, |r| {
        out.push((
            r.chain.to_string(),
            r.handle.unwrap_or(0),
            r.userdata.map(<[u8]>::to_vec).unwrap_or_default(),
            r.exprs().collect::<Result<Vec<_>, _>>()?,
        ));
        Ok(())
    })
    .expect("dump");
    out
}

/// Replace the first rule of `chain` whose expressions `pick` selects with
/// the same userdata and `edit`ed expressions.
fn rewrite(sock: &mut Socket, chain: &str, pick: fn(&[Expr]) -> bool, edit: fn(&mut Vec<Expr>)) {
    let (_, handle, ud, mut exprs) = rules(sock)
        .into_iter()
        .find(|(c, _, _, e)| c == chain && pick(e))
        .expect("a rule to rewrite");
    edit(&mut exprs);
    let mut r = nft::Rule::new(nft::Family::Ipv4, TABLE, chain, exprs);
    r.handle = Some(handle);
    r.userdata = Some(ud);
    let mut b = sock.batch(None);
    b.add_rule(&r, Placement::Replace, false, 0);
    commit(sock, b);
}

fn commit(sock: &mut Socket, mut b: nft::batch::Batch) {
    let rep = sock.commit(&mut b).expect("commit");
    assert!(rep.outcome.is_ok(), "{:?}", rep.outcome.errors);
}

fn run_set(sock: &mut Socket, chain: &str) -> String {
    rules(sock)
        .into_iter()
        .filter(|(c, ..)| c == chain)
        .find_map(|(_, _, _, e)| {
            e.iter().find_map(|x| match x {
                Expr::Lookup { set, .. } if set.starts_with("__nfk_run") => Some(set.clone()),
                _ => None,
            })
        })
        .expect("a run in the chain")
}

fn is_run(e: &[Expr]) -> bool {
    e.iter()
        .any(|x| matches!(x, Expr::Lookup { set, .. } if set.starts_with("__nfk_run")))
}

#[test]
fn verify_reports_what_changed_behind_our_back() {
    let done = in_netns(|| {
        restore();
        // Another table's objects are not ours to report (the kernel may
        // answer a set dump for the whole family).
        {
            let mut s = socket().expect("socket");
            let mut b = s.batch(None);
            b.add(&nft::Table::new(nft::Family::Ipv4, "other"), 0);
            let mut set = nft::Set::new(nft::Family::Ipv4, "other", "x");
            set.key_type = Some(7);
            set.key_len = Some(4);
            set.flags = Some(0);
            set.id = Some(1);
            b.add(&set, 0);
            commit(&mut s, b);
        }
        let clean = check();
        assert!(clean.diffs.is_empty(), "{:?}", clean.diffs);
        // Two plain rules (one with an anonymous set) and two runs (INPUT
        // on -s, FORWARD's map on -d + --dport), 4 + 2 elements.
        assert_eq!((clean.rules, clean.runs, clean.elems), (4, 2, 6));

        type Tamper = fn(&mut Socket);
        let cases: &[(&str, Tamper, &str)] = &[
            (
                "a rule without our userdata",
                |s| {
                    let mut b = s.batch(None);
                    let r =
                        nft::Rule::new(nft::Family::Ipv4, TABLE, "INPUT", vec![Expr::counter()]);
                    b.add_rule(&r, Placement::Append, false, 0);
                    commit(s, b);
                },
                "(no nfkeeper userdata): not written by nfkeeper",
            ),
            (
                "a plain rule's verdict changed",
                |s| {
                    rewrite(
                        s,
                        "OUTPUT",
                        |_| true,
                        |e| {
                            *e.last_mut().unwrap() = Expr::verdict(Verdict::Accept);
                        },
                    )
                },
                "kernel expressions differ from what the rule compiles to",
            ),
            (
                "a run rule's verdict changed",
                |s| {
                    rewrite(s, "INPUT", is_run, |e| {
                        *e.last_mut().unwrap() = Expr::verdict(Verdict::Drop);
                    })
                },
                "kernel expressions differ from what the run compiles to",
            ),
            (
                "an element whose key is not its rule's",
                |s| {
                    let set = run_set(s, "INPUT");
                    let text = " -s 10.0.0.77/32 -p tcp -m tcp --dport 8080 -j ACCEPT";
                    let mut el = SetElem::key(&[10, 9, 9, 9]);
                    el.userdata = Some(userdata::encode(RuleId(1 << 40), text, None).bytes);
                    let mut b = s.batch(None);
                    b.add(&SetElems::new(nft::Family::Ipv4, TABLE, &set, vec![el]), 0);
                    commit(s, b);
                },
                "element 0a090909 is rule",
            ),
            (
                "a map element's verdict changed",
                |s| {
                    let set = run_set(s, "FORWARD");
                    let key = [10, 96, 0, 2, 0, 53, 0, 0];
                    let el = s
                        .set_elems(nft::Family::Ipv4, TABLE, &set)
                        .expect("elements")
                        .into_iter()
                        .find(|e| e.key.as_deref() == Some(&key[..]))
                        .expect("the element");
                    let mut b = s.batch(None);
                    b.delete(
                        &SetElems::new(nft::Family::Ipv4, TABLE, &set, vec![SetElem::key(&key)]),
                        0,
                    );
                    let mut changed = el.clone();
                    changed.data = Some(Data::Verdict(Verdict::Accept));
                    changed.exprs.clear();
                    b.add(
                        &SetElems::new(nft::Family::Ipv4, TABLE, &set, vec![changed]),
                        0,
                    );
                    commit(s, b);
                },
                "is element 0a600002",
            ),
            (
                "a set run's element removed",
                |s| {
                    let set = run_set(s, "INPUT");
                    let mut b = s.batch(None);
                    let gone = SetElems::new(
                        nft::Family::Ipv4,
                        TABLE,
                        &set,
                        vec![SetElem::key(&[10, 0, 0, 2])],
                    );
                    b.delete(&gone, 0);
                    commit(s, b);
                },
                "3 member elements where nfkeeper wrote 4 (an element was removed",
            ),
            (
                "a map run's element removed",
                |s| {
                    let set = run_set(s, "FORWARD");
                    let key = [10, 96, 0, 1, 1, 187, 0, 0];
                    let mut b = s.batch(None);
                    b.delete(
                        &SetElems::new(nft::Family::Ipv4, TABLE, &set, vec![SetElem::key(&key)]),
                        0,
                    );
                    commit(s, b);
                },
                "1 member elements where nfkeeper wrote 2 (an element was removed",
            ),
            (
                "a run's census removed",
                |s| {
                    let set = run_set(s, "INPUT");
                    let id: u64 = set["__nfk_run".len()..].parse().expect("run id");
                    let key = userdata::catalog::census_key(id);
                    let mut b = s.batch(None);
                    b.delete(
                        &SetElems::new(
                            nft::Family::Ipv4,
                            TABLE,
                            userdata::catalog::SET,
                            vec![SetElem::key(&key)],
                        ),
                        0,
                    );
                    commit(s, b);
                },
                "no census in the catalog",
            ),
            (
                "a set of someone else's",
                |s| {
                    let mut set = nft::Set::new(nft::Family::Ipv4, TABLE, "blocklist");
                    set.key_type = Some(7);
                    set.key_len = Some(4);
                    set.flags = Some(0);
                    set.id = Some(1);
                    let mut b = s.batch(None);
                    b.add(&set, 0);
                    commit(s, b);
                },
                "set blocklist: not written by nfkeeper",
            ),
            (
                "a base chain deleted",
                |s| {
                    let mut b = s.batch(None);
                    b.delete(&nft::Rule::key(nft::Family::Ipv4, TABLE, "OUTPUT", None), 0);
                    b.delete(&nft::Chain::new(nft::Family::Ipv4, TABLE, "OUTPUT"), 0);
                    commit(s, b);
                },
                "chain OUTPUT: missing",
            ),
        ];
        for (what, tamper, want) in cases {
            restore();
            assert!(check().diffs.is_empty(), "{what}: not clean before");
            tamper(&mut socket().expect("socket"));
            let rep = check();
            assert!(
                rep.diffs.iter().chain(&rep.notes).any(|d| d.contains(want)),
                "{what}: want a difference with \"{want}\", got {:#?} {:#?}",
                rep.diffs,
                rep.notes
            );
        }
    });
    if done.is_none() {
        eprintln!("SKIP: verify_reports_what_changed_behind_our_back needs root");
    }
}

/// Run `line` (an iptables command) through a direct-mode session.
fn command(s: &mut Session, line: &str) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let p = iptables::parse::parse(
        &words,
        iptables::parse::ParseOpts::command(Family::Ipv4, "iptables"),
    )
    .unwrap_or_else(|e| panic!("{line}: {}", e.msg));
    s.iptables(p).unwrap_or_else(|e| panic!("{line}: {e}"));
}

#[test]
fn census_follows_every_membership_change() {
    // Each step changes a run's members through direct mode (reads of
    // every scope: a probe for -D by spec, the chain's tail for -A, the
    // whole table for -D by number) and must leave verify clean, census
    // included; then removing one element behind nfkeeper's back shows.
    const STEPS: &[&str] = &[
        "-D INPUT -s 10.0.0.2/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
        "-D INPUT 2",
        "-Z INPUT",
        "-I INPUT 3 -s 10.0.0.11/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
        "-A INPUT -s 10.0.0.9/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
        "-A INPUT -s 10.0.0.10/32 -p tcp -m tcp --dport 8080 -j ACCEPT",
        "-D FORWARD -d 10.96.0.2/32 -p tcp -m comment --comment b -m tcp --dport 53 -j DROP",
    ];
    let done = in_netns(|| {
        restore();
        let mut s = Session::open(Family::Ipv4, runs(2)).expect("session");
        for step in STEPS {
            command(&mut s, step);
            let rep = check();
            assert!(
                rep.diffs.is_empty() && rep.notes.is_empty(),
                "after {step}: {:#?} {:#?}",
                rep.diffs,
                rep.notes
            );
        }
        // The appends made a new run and joined it; its census counts.
        let mut sock = socket().expect("socket");
        let set = run_set(&mut sock, "INPUT");
        let elems = sock
            .set_elems(nft::Family::Ipv4, TABLE, &set)
            .expect("elements");
        let first = elems[0].key.clone().expect("key");
        let mut b = sock.batch(None);
        b.delete(
            &SetElems::new(nft::Family::Ipv4, TABLE, &set, vec![SetElem::key(&first)]),
            0,
        );
        commit(&mut sock, b);
        let rep = check();
        assert!(
            rep.diffs
                .iter()
                .any(|d| d.contains("an element was removed")),
            "{:#?}",
            rep.diffs
        );
    });
    if done.is_none() {
        eprintln!("SKIP: census_follows_every_membership_change needs root");
    }
}

/// A kube-proxy service chain compiled into a numgen map: verify accepts
/// the kernel's form, and reports each change to it made behind our back
/// (each case starts again from a fresh restore).
#[test]
fn verify_checks_numgen_maps() {
    const KUBE: &str = "\
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:SVC - [0:0]
:SEP-A - [0:0]
:SEP-B - [0:0]
:SEP-C - [0:0]
-A FORWARD -j SVC
-A SVC -m comment --comment a -m statistic --mode random --probability 0.3333333333 -j SEP-A
-A SVC -m comment --comment b -m statistic --mode random --probability 0.5000000000 -j SEP-B
-A SVC -m comment --comment c -j SEP-C
-A SEP-A -j ACCEPT
-A SEP-B -j ACCEPT
-A SEP-C -j DROP
COMMIT
";
    fn numgen(e: &[Expr]) -> bool {
        e.iter().any(|x| matches!(x, Expr::Numgen { .. }))
    }
    type Tamper = fn(&mut Socket);
    // (what is changed, tampering, words the report must contain)
    let cases: [(&str, Tamper, &str); 4] = [
        (
            "the modulus",
            |sock| {
                rewrite(sock, "SVC", numgen, |e| {
                    for x in e.iter_mut() {
                        if let Expr::Numgen { modulus, .. } = x {
                            *modulus = 2;
                        }
                    }
                })
            },
            "kernel expressions differ",
        ),
        (
            "an element removed",
            |sock| {
                let set = run_set(sock, "SVC");
                let mut b = sock.batch(None);
                b.delete(
                    &SetElems::new(
                        nft::Family::Ipv4,
                        TABLE,
                        &set,
                        vec![SetElem::key(&2u32.to_ne_bytes())],
                    ),
                    0,
                );
                commit(sock, b);
            },
            "an element was removed",
        ),
        (
            "an element's key (one no draw gives)",
            |sock| {
                let set = run_set(sock, "SVC");
                let old = sock
                    .set_elems(nft::Family::Ipv4, TABLE, &set)
                    .expect("elements")
                    .into_iter()
                    .find(|e| e.key.as_deref() == Some(&1u32.to_ne_bytes()[..]))
                    .expect("element 1");
                let mut moved = SetElem::key(&7u32.to_ne_bytes());
                moved.userdata = old.userdata;
                moved.data = old.data;
                let mut b = sock.batch(None);
                b.delete(
                    &SetElems::new(
                        nft::Family::Ipv4,
                        TABLE,
                        &set,
                        vec![SetElem::key(&1u32.to_ne_bytes())],
                    ),
                    0,
                );
                b.add(
                    &SetElems::new(nft::Family::Ipv4, TABLE, &set, vec![moved]),
                    0,
                );
                commit(sock, b);
            },
            "is element 01000000",
        ),
        (
            "the draw (random to incremental)",
            |sock| {
                rewrite(sock, "SVC", numgen, |e| {
                    for x in e.iter_mut() {
                        if let Expr::Numgen { ty, .. } = x {
                            *ty = 0;
                        }
                    }
                })
            },
            "kernel expressions differ",
        ),
    ];
    let done = in_netns(move || {
        for (what, tamper, want) in cases {
            let mut sock = socket().expect("socket");
            let mut b = sock.batch(None);
            b.delete(&nft::Table::new(nft::Family::Ipv4, TABLE), 0);
            let _ = sock.commit(&mut b);
            let mut s = Session::open(Family::Ipv4, runs(16)).expect("session");
            s.restore(KUBE, &RestoreOpts::new(Family::Ipv4, "iptables-restore"))
                .unwrap_or_else(|e| panic!("{}", e.render("iptables-restore")));
            assert!(
                rules(&mut sock)
                    .iter()
                    .any(|(c, _, _, e)| c == "SVC" && numgen(e)),
                "the service chain is one numgen map"
            );
            let rep = check();
            assert!(
                rep.diffs.is_empty() && rep.notes.is_empty(),
                "before {what}: {:#?} {:#?}",
                rep.diffs,
                rep.notes
            );
            tamper(&mut sock);
            let rep = check();
            assert!(
                rep.diffs.iter().any(|d| d.contains(want)),
                "{what}: want {want:?} in {:#?}",
                rep.diffs
            );
        }
    });
    if done.is_none() {
        eprintln!("SKIP: verify_checks_numgen_maps needs root");
    }
}
