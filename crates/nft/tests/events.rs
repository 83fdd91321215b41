//! nftables notifications from a real kernel, each test in a fresh network
//! namespace (skipped, with a printed reason, when not root or when
//! unshare fails): who made a change (port id), the NEWGEN that closes
//! every commit, silence for aborted batches, and overrun reporting.

mod common;

use std::time::{Duration, Instant};

use nft::batch::Placement;
use nft::events::more_msg;
use nft::{msg, Chain, Event, EventSocket, Expr, Family, Rule, Socket, Table, Verdict};

const F: Family = Family::Ipv4;
const T: &str = "nfk";

fn rule(chain: &str) -> Rule {
    Rule::new(
        F,
        T,
        chain,
        vec![Expr::counter(), Expr::verdict(Verdict::Accept)],
    )
}

/// Receives until `gens` NEWGEN events (or an overrun) have arrived, for at
/// most 5 s.
fn until_gens(es: &mut EventSocket, gens: usize) -> Vec<Event> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut out: Vec<Event> = Vec::new();
    while out.iter().filter(|e| e.msg == msg::NEWGEN).count() < gens
        && !out.iter().any(|e| e.overrun)
    {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "timed out; got {out:#?}");
        out.extend(es.recv(Some(left)).unwrap());
    }
    out
}

fn commit_ok(s: &mut Socket, b: &mut nft::Batch) -> nft::Outcome {
    let rep = s.commit(b).unwrap();
    assert!(rep.outcome.is_ok() && !rep.overrun, "{rep:?}");
    rep.outcome
}

#[test]
fn notifications_name_objects_and_originator() {
    common::in_netns(|| {
        let mut es = EventSocket::open().unwrap();
        let mut s1 = Socket::open().unwrap();
        let mut s2 = Socket::open().unwrap();
        assert_ne!(s1.portid(), 0);
        assert_ne!(s1.portid(), s2.portid());
        assert!(es.try_recv().unwrap().is_empty());

        // s1: table, chain, rule (echoed to s1, still multicast to us).
        let mut b = s1.batch(None);
        b.add(&Table::new(F, T), 0);
        b.add(&Chain::new(F, T, "c"), 0);
        b.add_rule(&rule("c"), Placement::Append, true, 7);
        let out = commit_ok(&mut s1, &mut b);
        let handle = out.echoes.iter().find(|e| e.tag == 7).unwrap().handle;
        let gen = s1.gen().unwrap();
        let ev = until_gens(&mut es, 1);
        let got: Vec<_> = ev
            .iter()
            .map(|e| (e.msg, e.family, e.table.as_deref(), e.chain.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (msg::NEWTABLE, 2, Some(T), None),
                (msg::NEWCHAIN, 2, Some(T), Some("c")),
                (msg::NEWRULE, 2, Some(T), Some("c")),
                (msg::NEWGEN, 0, None, None),
            ]
        );
        assert!(ev.iter().all(|e| e.portid == s1.portid()), "{ev:#?}");
        assert_eq!(ev[2].handle, handle);
        let g = &ev[3];
        assert_eq!(g.genid, Some(gen.id));
        // The kernel reports the committing task: this thread, not the process.
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        assert_eq!(g.proc_pid, Some(tid));
        assert_eq!(g.proc_name, gen.proc_name);

        // s2: a rule, then (separate commit) the whole table.
        let mut b = s2.batch(None);
        b.add_rule(&rule("c"), Placement::Append, false, 1);
        commit_ok(&mut s2, &mut b);
        let mut b = s2.batch(None);
        b.delete(&Table::new(F, T), 1);
        commit_ok(&mut s2, &mut b);
        let ev = until_gens(&mut es, 2);
        assert!(ev.iter().all(|e| e.portid == s2.portid()), "{ev:#?}");
        assert_eq!((ev[0].msg, ev[1].msg), (msg::NEWRULE, msg::NEWGEN));
        assert_eq!(ev[1].genid, Some(gen.id.wrapping_add(1)));
        let last = ev.last().unwrap();
        assert_eq!(
            (last.msg, last.genid),
            (msg::NEWGEN, Some(gen.id.wrapping_add(2)))
        );
        let deltable = ev.iter().find(|e| e.msg == msg::DELTABLE).unwrap();
        assert!(deltable.is_delete());
        assert_eq!(deltable.table.as_deref(), Some(T));
        assert_eq!(s2.gen().unwrap().id, gen.id.wrapping_add(2));
    });
}

#[test]
fn aborted_batch_and_destroy() {
    common::in_netns(|| {
        let mut es = EventSocket::open().unwrap();
        let mut s = Socket::open().unwrap();
        // A batch the kernel refuses (rule into a missing chain) commits
        // nothing and announces nothing.
        let mut b = s.batch(None);
        b.add(&Table::new(F, T), 0);
        b.add_rule(&rule("missing"), Placement::Append, false, 1);
        let rep = s.commit(&mut b).unwrap();
        assert!(!rep.outcome.committed, "{rep:?}");
        assert!(es
            .recv(Some(Duration::from_millis(200)))
            .unwrap()
            .is_empty());

        // A DESTROY request is announced as the matching DEL (measured on
        // 6.18); parsers still accept DESTROY* types.
        let mut b = s.batch(None);
        b.add(&Table::new(F, T), 0);
        commit_ok(&mut s, &mut b);
        let mut b = s.batch(None);
        b.push(more_msg::DESTROYTABLE, 0, &Table::new(F, T), 0);
        commit_ok(&mut s, &mut b);
        let ev = until_gens(&mut es, 2);
        let kinds: Vec<_> = ev.iter().map(|e| e.msg).collect();
        assert_eq!(
            kinds,
            [msg::NEWTABLE, msg::NEWGEN, msg::DELTABLE, msg::NEWGEN]
        );
        assert!(ev[2].is_delete());
    });
}

#[test]
fn tiny_buffer_reports_overrun_then_recovers() {
    common::in_netns(|| {
        let mut es = EventSocket::with_rcvbuf(1).unwrap();
        let mut s = Socket::open().unwrap();
        let mut b = s.batch(None);
        b.add(&Table::new(F, T), 0);
        b.add(&Chain::new(F, T, "c"), 0);
        for i in 0..500 {
            b.add_rule(&rule("c"), Placement::Append, false, i);
        }
        commit_ok(&mut s, &mut b);
        let ev = es.recv(Some(Duration::from_secs(5))).unwrap();
        assert!(
            ev.iter().any(|e| e.overrun),
            "{} events, no overrun",
            ev.len()
        );
        let marker = ev.iter().find(|e| e.overrun).unwrap();
        assert_eq!(*marker, Event::overrun());
        // Drain what is still queued; then a small commit arrives whole.
        while !es.try_recv().unwrap().is_empty() {}
        let mut b = s.batch(None);
        b.add_rule(&rule("c"), Placement::Append, false, 0);
        commit_ok(&mut s, &mut b);
        let ev = until_gens(&mut es, 1);
        let kinds: Vec<_> = ev.iter().map(|e| (e.msg, e.overrun)).collect();
        assert_eq!(kinds, [(msg::NEWRULE, false), (msg::NEWGEN, false)]);
    });
}
