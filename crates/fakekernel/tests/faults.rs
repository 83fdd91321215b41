//! Notifications, fault injection and sharing: what a test of the engine
//! or the daemon arms to see its error paths, through nft's sockets.

use std::time::Duration;

use fakekernel::{FailAt, Kernel, Loss};
use nft::batch::Placement;
use nft::{msg, Chain, Expr, Family, Rule, SetElem, SetElems, Socket, Table, Transport, Verdict};

const F: Family = Family::Ipv4;
const T: &str = "t";

fn rule(chain: &str) -> Rule {
    Rule::new(
        F,
        T,
        chain,
        vec![Expr::counter(), Expr::verdict(Verdict::Accept)],
    )
}

fn setup(s: &mut Socket) {
    let mut b = s.batch(None);
    b.add(&Table::new(F, T), 0);
    b.add(&Chain::new(F, T, "c"), 0);
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
}

#[test]
fn notifications_name_objects_and_origin() {
    let k = Kernel::new();
    let mut events = k.event_socket();
    let (mut s1, mut s2) = (k.socket(), k.socket());
    assert_ne!(s1.portid(), s2.portid());
    setup(&mut s1);
    let mut b = s2.batch(None);
    b.add_rule(&rule("c"), Placement::Append, true, 7);
    b.delete(&Rule::key(F, T, "c", None), 8);
    let out = s2.commit(&mut b).unwrap().outcome;
    let got: Vec<_> = events
        .try_recv()
        .unwrap()
        .into_iter()
        .map(|e| (e.msg, e.portid == s1.portid(), e.chain, e.genid))
        .collect();
    let c = Some("c".to_string());
    assert_eq!(
        got,
        [
            (msg::NEWTABLE, true, None, None),
            (msg::NEWCHAIN, true, c.clone(), None),
            (msg::NEWGEN, true, None, Some(2)),
            (msg::NEWRULE, false, c.clone(), None),
            (msg::DELRULE, false, c, None),
            (msg::NEWGEN, false, None, Some(3)),
        ]
    );
    // The echo, and the NEWGEN: as the batch's first message asked for
    // echoes, the kernel echoes the NEWGEN too, with that message's
    // sequence number (so the batch takes it for an echo of it).
    let echoed: Vec<_> = out.echoes.iter().map(|e| (e.tag, e.msg)).collect();
    assert_eq!(echoed, [(7, msg::NEWRULE), (7, msg::NEWGEN)]);
    assert!(events.try_recv().unwrap().is_empty());
}

#[test]
fn armed_commit_failures() {
    // (where, errno, the batch's errors as (tag, errno))
    let cases = [
        (FailAt::Begin, 85, vec![(None, 85)]),
        (FailAt::Commit, 12, vec![(Some(1), 12)]),
        (FailAt::Message(1), 28, vec![(Some(2), 28)]),
        (FailAt::FirstOf(msg::NEWRULE), 22, vec![(Some(3), 22)]),
    ];
    for (at, errno, want) in cases {
        let k = Kernel::new();
        let mut s = k.socket();
        setup(&mut s);
        let before = k.text();
        k.fail_next_commit(at, errno);
        let mut b = s.batch(None);
        b.add(&Chain::new(F, T, "d"), 1);
        b.add(&Chain::new(F, T, "e"), 2);
        b.add_rule(&rule("c"), Placement::Append, false, 3);
        let out = s.commit(&mut b).unwrap().outcome;
        let got: Vec<_> = out.errors.iter().map(|e| (e.tag, -e.code)).collect();
        assert_eq!(got, want, "{at:?}");
        assert_eq!(k.text(), before, "{at:?}");
        // One shot: the next batch commits.
        let mut b = s.batch(None);
        b.add(&Chain::new(F, T, "d"), 1);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok(), "{at:?}");
    }
}

#[test]
fn lost_replies_are_an_overrun() {
    let k = Kernel::new();
    let mut s = k.socket();
    setup(&mut s);
    // Echoes lost: the verdict still arrives.
    k.lose_next_replies(Loss::Echoes);
    let mut b = s.batch(None);
    b.add_rule(&rule("c"), Placement::Append, true, 1);
    let rep = s.commit(&mut b).unwrap();
    assert!(
        rep.overrun && rep.outcome.committed && rep.outcome.echoes.is_empty(),
        "{rep:?}"
    );
    // Everything lost: the batch committed, but the socket cannot know.
    k.lose_next_replies(Loss::Everything);
    let gen = k.genid();
    let mut b = s.batch(None);
    b.add_rule(&rule("c"), Placement::Append, true, 1);
    let rep = s.commit(&mut b).unwrap();
    assert!(rep.overrun && !rep.outcome.committed, "{rep:?}");
    assert_eq!(k.genid(), gen + 1);
    assert_eq!(k.rules(F, T, "c").len(), 2);
}

#[test]
fn lost_events_show_as_an_overrun_marker() {
    let k = Kernel::new();
    let mut events = k.event_socket();
    let mut s = k.socket();
    k.lose_next_events();
    setup(&mut s);
    let got = events.try_recv().unwrap();
    assert!(got.len() == 1 && got[0].overrun, "{got:?}");
    let mut b = s.batch(None);
    b.add(&Chain::new(F, T, "d"), 0);
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    let got = events.try_recv().unwrap();
    assert_eq!(got.len(), 2, "{got:?}");
}

#[test]
fn a_small_receive_buffer_overruns() {
    let k = Kernel::new();
    let mut small = nft::EventSocket::with_transport(Box::new(k.connect()), 1).unwrap();
    let mut big = k.event_socket();
    let mut s = k.socket();
    setup(&mut s);
    for i in 0..20 {
        let mut b = s.batch(None);
        b.add(&Chain::new(F, T, &format!("c{i}")), 0);
        assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    }
    let got = small.try_recv().unwrap();
    assert!(got.iter().any(|e| e.overrun), "{got:?}");
    assert!(got.len() < 44, "{}", got.len());
    let got = big.try_recv().unwrap();
    assert!(!got.iter().any(|e| e.overrun));
    assert_eq!(got.len(), 3 + 2 * 20);
}

#[test]
fn interrupted_dumps_and_big_datagrams() {
    let k = Kernel::new();
    let mut s = k.socket();
    setup(&mut s);
    k.interrupt_next_dump();
    assert!(matches!(
        s.chains(F, Some(T)),
        Err(nft::Error::DumpInterrupted)
    ));
    assert_eq!(s.chains(F, Some(T)).unwrap().len(), 1);
    // Element dumps are read again when interrupted.
    let mut b = s.batch(None);
    b.add(
        &nft::Set {
            key_type: Some(7),
            key_len: Some(4),
            id: Some(1),
            ..nft::Set::new(F, T, "s")
        },
        0,
    );
    b.add(
        &SetElems::new(F, T, "s", vec![SetElem::key(&[1, 2, 3, 4])]),
        0,
    );
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    k.interrupt_next_dump();
    assert_eq!(s.set_elems(F, T, "s").unwrap().len(), 1);
    // A batch over the send buffer is refused whole.
    k.max_datagram(Some(200));
    let mut b = s.batch(None);
    for i in 0..10 {
        b.add(&Chain::new(F, T, &format!("x{i}")), 0);
    }
    match s.commit(&mut b) {
        Err(nft::Error::Io(e)) => assert_eq!(e.raw_os_error(), Some(90)),
        other => panic!("{other:?}"),
    }
    k.max_datagram(None);
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
}

#[test]
fn shared_between_threads() {
    let k = Kernel::new();
    let mut s = k.socket();
    setup(&mut s);
    let mut events = k.event_socket();
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let k = k.clone();
            std::thread::spawn(move || {
                let mut s = k.socket();
                for i in 0..25 {
                    let mut b = s.batch(None);
                    let mut r = rule("c");
                    r.userdata = Some(vec![t, i]);
                    b.add_rule(&r, Placement::Append, false, 0);
                    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
                }
            })
        })
        .collect();
    let mut gens = 0;
    while gens < 100 {
        let got = events.recv(Some(Duration::from_secs(5))).unwrap();
        assert!(!got.is_empty(), "timed out after {gens} generations");
        gens += got.iter().filter(|e| e.msg == msg::NEWGEN).count();
    }
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(k.rules(F, T, "c").len(), 100);
    assert_eq!(k.genid(), 102);
    // A receive timeout with nothing to come.
    assert!(events
        .recv(Some(Duration::from_millis(10)))
        .unwrap()
        .is_empty());
}

#[test]
fn a_blocking_receive_with_nothing_to_come_fails() {
    let k = Kernel::new();
    let mut c = k.connect();
    let mut buf = [0u8; 64];
    let e = c.recv(&mut buf, false).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    assert_eq!(c.recv(&mut buf, true).unwrap(), None);
}
