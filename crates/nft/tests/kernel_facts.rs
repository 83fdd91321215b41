//! Probes of kernel behaviour the socket layer relies on (each in a fresh
//! netns). These document what kernel 6.18 does with ACK flags on batch
//! messages, trailing messages, and batches split across sends.

mod common;

use nft::netlink::{Msgs, NLMSG_ERROR, NLM_F_ACK};
use nft::{Batch, Family, Socket, Table};

/// Drains what is queued: (type, seq, error code or 0).
fn drain(s: &mut Socket) -> Vec<(u16, u32, i32)> {
    let mut v = Vec::new();
    while let Some(n) = s.recv_raw(true).unwrap() {
        for m in Msgs::new(s.received(n)) {
            let m = m.unwrap();
            let code = if m.ty == NLMSG_ERROR {
                m.error().unwrap().code
            } else {
                0
            };
            v.push((m.ty, m.seq, code));
        }
    }
    v
}

fn table_exists(s: &mut Socket, name: &str) -> bool {
    s.tables(Family::Ipv4)
        .unwrap()
        .iter()
        .any(|t| t.name == name)
}

fn set_flags(bytes: &mut [u8], msg_off: usize, flags: u16) {
    let old = u16::from_ne_bytes([bytes[msg_off + 6], bytes[msg_off + 7]]);
    bytes[msg_off + 6..msg_off + 8].copy_from_slice(&(old | flags).to_ne_bytes());
}

#[test]
fn ack_flags_on_batch_begin_and_end() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = Batch::new(100, None);
        b.add(&Table::new(Family::Ipv4, "t1"), 1);
        let mut bytes = b.finish().to_vec();
        let end_off = bytes.len() - 20;
        set_flags(&mut bytes, 0, NLM_F_ACK);
        set_flags(&mut bytes, end_off, NLM_F_ACK);
        s.send_raw(&bytes).unwrap();
        let got = drain(&mut s);
        eprintln!("ACK on begin+end: replies {got:?}");
        assert!(table_exists(&mut s, "t1"));
        // Record the finding: is either begin (seq 100) or end (seq 102) acked?
        let acked: Vec<u32> = got
            .iter()
            .filter(|r| r.0 == NLMSG_ERROR && r.2 == 0)
            .map(|r| r.1)
            .collect();
        eprintln!("acked seqs: {acked:?}");
    });
}

#[test]
fn trailing_message_after_end_in_same_send() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = Batch::new(200, None);
        b.add(&Table::new(Family::Ipv4, "t2"), 1);
        let mut bytes = b.finish().to_vec();
        nft::netlink::request(&mut bytes, nft::msg::GETGEN, 0, 999, 0, |_| {});
        s.send_raw(&bytes).unwrap();
        let got = drain(&mut s);
        eprintln!("trailing GETGEN in same send: replies {got:?}");
        assert!(table_exists(&mut s, "t2"));
        assert!(
            !got.iter().any(|r| r.1 == 999),
            "kernel answered a message after batch end"
        );
    });
}

#[test]
fn batch_split_across_two_sends_is_not_applied() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = Batch::new(300, None);
        b.add(&Table::new(Family::Ipv4, "t3"), 1);
        let bytes = b.finish().to_vec();
        let end_off = bytes.len() - 20;
        s.send_raw(&bytes[..end_off]).unwrap();
        let first = drain(&mut s);
        s.send_raw(&bytes[end_off..]).unwrap();
        let second = drain(&mut s);
        eprintln!("split batch: replies {first:?} then {second:?}");
        assert!(
            !table_exists(&mut s, "t3"),
            "a batch split over two sends was applied"
        );
    });
}

#[test]
fn per_message_ack_and_error_order() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = Batch::new(400, None);
        b.push(
            nft::msg::NEWTABLE,
            NLM_F_ACK | nft::netlink::NLM_F_CREATE,
            &Table::new(Family::Ipv4, "t4"),
            1,
        );
        // Deleting a missing table fails: ENOENT on seq 402.
        b.delete(&Table::new(Family::Ipv4, "nope"), 2);
        b.push(
            nft::msg::NEWTABLE,
            NLM_F_ACK | nft::netlink::NLM_F_CREATE,
            &Table::new(Family::Ipv4, "t5"),
            3,
        );
        s.send_raw(b.finish()).unwrap();
        let got = drain(&mut s);
        eprintln!("acks + error: {got:?}");
        assert!(got.contains(&(NLMSG_ERROR, 402, -libc::ENOENT)));
        assert!(!table_exists(&mut s, "t4"));
    });
}

#[test]
fn end_ack_with_failing_batch_and_genid_mismatch() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = Batch::new(500, None);
        b.add(&Table::new(Family::Ipv4, "t6"), 1);
        b.delete(&Table::new(Family::Ipv4, "nope"), 2);
        b.add(&Table::new(Family::Ipv4, "t7"), 3);
        let mut bytes = b.finish().to_vec();
        let end_off = bytes.len() - 20;
        set_flags(&mut bytes, end_off, NLM_F_ACK);
        s.send_raw(&bytes).unwrap();
        let got = drain(&mut s);
        eprintln!("failing batch + END ACK: {got:?}");

        let gen = s.gen().unwrap().id;
        let mut b = Batch::new(600, Some(gen.wrapping_add(5)));
        b.add(&Table::new(Family::Ipv4, "t8"), 1);
        let mut bytes = b.finish().to_vec();
        let end_off = bytes.len() - 20;
        set_flags(&mut bytes, end_off, NLM_F_ACK);
        s.send_raw(&bytes).unwrap();
        let got = drain(&mut s);
        eprintln!("genid mismatch + END ACK: {got:?}");
        assert!(got.iter().any(|r| r.1 == 600 && r.2 != 0));
        assert!(!table_exists(&mut s, "t8"));
    });
}

#[test]
fn newset_requires_set_id() {
    common::in_netns(|| {
        let mut s = Socket::open().unwrap();
        let mut b = s.batch(None);
        b.add(&Table::new(Family::Ipv4, "t"), 0);
        let base = nft::Set {
            flags: Some(0),
            key_type: Some(7),
            key_len: Some(4),
            ..nft::Set::new(Family::Ipv4, "t", "a")
        };
        b.add(&base, 1);
        b.add(
            &nft::Set {
                name: "b".into(),
                exprs: vec![nft::Expr::counter()],
                ..base.clone()
            },
            2,
        );
        b.add(
            &nft::Set {
                name: "c".into(),
                id: Some(3),
                exprs: vec![nft::Expr::counter()],
                ..base.clone()
            },
            3,
        );
        b.add(
            &nft::Set {
                name: "d".into(),
                size: Some(100),
                exprs: vec![nft::Expr::counter()],
                ..base.clone()
            },
            4,
        );
        let rep = s.commit(&mut b).unwrap();
        // Only the set that carries NFTA_SET_ID is accepted: the kernel
        // requires it on NEWSET (EINVAL otherwise).
        let tags: Vec<_> = rep.outcome.errors.iter().map(|e| (e.tag, e.code)).collect();
        assert_eq!(
            tags,
            [
                (Some(1), -libc::EINVAL),
                (Some(2), -libc::EINVAL),
                (Some(4), -libc::EINVAL)
            ]
        );
    });
}
