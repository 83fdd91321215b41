//! The differential harness: the same datagrams sent to the real kernel
//! (in a fresh network namespace) and to the fake one, and a transcript of
//! each side — every reply and notification, message by message, and the
//! whole state after each step — that must come out equal.
//!
//! Normalised so that equal behaviour reads equal: sequence numbers are
//! relative to the step's first one, port ids are `self` (the sender) or
//! `other`, table handles (kernel-wide counters in the kernel) are left
//! out, set elements are sorted (the kernel dumps hash sets in hash order).
#![allow(dead_code)]

use std::fmt::Write;

use nft::netlink::{Msg, Msgs, NFNL_SUBSYS_NFTABLES, NLMSG_DONE, NLMSG_ERROR};
use nft::{msg, Chain, Family, Gen, Object, Rule, Set, SetElems, Socket, Table, Transport};

/// One step: the datagram to send, built from the step's first sequence
/// number and the current generation id.
pub struct Step {
    pub what: &'static str,
    pub build: Box<dyn Fn(u32, u32) -> Vec<u8>>,
}

pub fn step(what: &'static str, build: impl Fn(u32, u32) -> Vec<u8> + 'static) -> Step {
    Step {
        what,
        build: Box::new(build),
    }
}

/// One side: a request connection, a subscribed one, and a way to read
/// the state.
pub struct Side {
    pub req: Box<dyn Transport>,
    pub events: Box<dyn Transport>,
    pub reader: Socket,
}

fn drain(t: &mut dyn Transport) -> Vec<Vec<u8>> {
    let mut buf = vec![0u8; 1 << 20];
    let mut out = Vec::new();
    loop {
        match t.recv(&mut buf, true) {
            Ok(Some(n)) => out.push(buf[..n].to_vec()),
            Ok(None) => return out,
            Err(e) => {
                out.push(format!("recv error {e}").into_bytes());
                return out;
            }
        }
    }
}

fn rel(seq: u32, base: u32) -> String {
    let d = seq.wrapping_sub(base) as i32;
    if (0..10_000).contains(&d) {
        format!("s+{d}")
    } else {
        format!("s?{seq}")
    }
}

fn pid(p: u32, me: u32) -> &'static str {
    if p == me {
        "self"
    } else if p == 0 {
        "kernel"
    } else {
        "other"
    }
}

/// One message, normalised.
pub fn describe(m: &Msg, base: u32, me: u32) -> String {
    if m.ty == NLMSG_ERROR {
        let e = m.error().map(|e| (e.code, e.seq)).unwrap_or((1, 0));
        return format!("error {} for {}", e.0, rel(e.1, base));
    }
    if m.ty == NLMSG_DONE {
        return format!("done {} flags {:#x}", rel(m.seq, base), m.flags);
    }
    if m.ty >> 8 != NFNL_SUBSYS_NFTABLES {
        return format!("type {:#x}", m.ty);
    }
    let head = format!(
        "{} {} flags {:#x} pid {}",
        name(m.ty & 0xff),
        rel(m.seq, base),
        m.flags,
        pid(m.pid, me)
    );
    let body = match m.ty & 0xff {
        msg::NEWTABLE | msg::DELTABLE => Table::parse_msg(m).map(|mut t| {
            t.handle = None;
            format!("{t:?}")
        }),
        msg::NEWCHAIN | msg::DELCHAIN => Chain::parse_msg(m).map(|c| format!("{c:?}")),
        msg::NEWRULE | msg::DELRULE => Rule::parse_msg(m).map(|r| format!("{r:?}")),
        msg::NEWSET | msg::DELSET => Set::parse_msg(m).map(|s| format!("{s:?}")),
        msg::NEWSETELEM | msg::DELSETELEM => SetElems::parse_msg(m).map(|mut l| {
            l.elems
                .sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            format!("{l:?}")
        }),
        msg::NEWGEN => Gen::parse_msg(m).map(|g| format!("{g:?}")),
        _ => Ok(String::new()),
    };
    match body {
        Ok(b) => format!("{head} {b}"),
        Err(e) => format!("{head} unparsable: {e}"),
    }
}

fn name(ty: u16) -> String {
    match ty {
        msg::NEWTABLE => "NEWTABLE".into(),
        msg::DELTABLE => "DELTABLE".into(),
        msg::NEWCHAIN => "NEWCHAIN".into(),
        msg::DELCHAIN => "DELCHAIN".into(),
        msg::NEWRULE => "NEWRULE".into(),
        msg::DELRULE => "DELRULE".into(),
        msg::NEWSET => "NEWSET".into(),
        msg::DELSET => "DELSET".into(),
        msg::NEWSETELEM => "NEWSETELEM".into(),
        msg::DELSETELEM => "DELSETELEM".into(),
        msg::NEWGEN => "NEWGEN".into(),
        t => format!("msg{t}"),
    }
}

/// Datagrams as lines; `|` starts each datagram.
fn datagrams(out: &mut String, dgs: &[Vec<u8>], base: u32, me: u32) {
    for d in dgs {
        let mut first = true;
        for m in Msgs::new(d) {
            let line = match m {
                Ok(m) => describe(&m, base, me),
                Err(e) => format!("malformed {e}"),
            };
            let _ = writeln!(out, "  {} {line}", if first { "|" } else { " " });
            first = false;
        }
        if first {
            let _ = writeln!(out, "  | {}", String::from_utf8_lossy(d));
        }
    }
}

/// The state, read through the request API.
pub fn state(s: &mut Socket) -> String {
    let mut out = String::new();
    let tables = match s.tables(Family::Unspec) {
        Ok(t) => t,
        Err(e) => return format!("tables: {e}\n"),
    };
    let gen = s.gen().map(|g| g.id).unwrap_or(0);
    let _ = writeln!(out, "gen {gen}");
    for mut t in tables {
        t.handle = None;
        let (fam, name) = (t.family, t.name.clone());
        let _ = writeln!(out, "{t:?}");
        for c in s.chains(fam, Some(&name)).unwrap_or_default() {
            if c.table == name {
                let _ = writeln!(out, "  {c:?}");
            }
        }
        let mut rules = Vec::new();
        let _ = s.rules(fam, Some(&name), None, |r| {
            rules.push(r.to_rule()?);
            Ok(())
        });
        for r in rules {
            let _ = writeln!(out, "  {r:?}");
        }
        for set in s.sets(fam, Some(&name)).unwrap_or_default() {
            let _ = writeln!(out, "  {set:?}");
            let mut elems = s.set_elems(fam, &name, &set.name).unwrap_or_default();
            elems.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            for e in elems {
                let _ = writeln!(out, "    {e:?}");
            }
        }
    }
    out
}

/// Runs the steps on one side; returns its transcript.
pub fn run(side: &mut Side, steps: &[Step]) -> String {
    let me = side.req.portid();
    let mut out = String::new();
    // Whatever setting up the side produced is not part of the story.
    drain(side.events.as_mut());
    for (i, st) in steps.iter().enumerate() {
        let base = 1000 * (i as u32 + 1);
        let genid = side.reader.gen().map(|g| g.id).unwrap_or(0);
        let bytes = (st.build)(base, genid);
        let _ = writeln!(out, "step {i}: {}", st.what);
        if let Err(e) = side.req.send(&bytes) {
            let _ = writeln!(out, "  send error {e}");
        }
        datagrams(&mut out, &drain(side.req.as_mut()), base, me);
        let _ = writeln!(out, " events:");
        datagrams(&mut out, &drain(side.events.as_mut()), base, me);
        let _ = writeln!(out, " state:");
        for l in state(&mut side.reader).lines() {
            let _ = writeln!(out, "  {l}");
        }
        // The reader's own requests produce no events.
        drain(side.events.as_mut());
    }
    out
}

/// Line diff of two transcripts (first differing region with context).
pub fn diff(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let first = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let from = first.saturating_sub(8);
    let mut out = String::new();
    for (tag, lines) in [("kernel", &la), ("fake", &lb)] {
        let _ = writeln!(out, "--- {tag} (from line {from})");
        for l in lines.iter().skip(from).take(30) {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}

/// A batch's bytes with extra netlink flags on its begin and end messages.
pub fn with_flags(mut bytes: Vec<u8>, begin: u16, end: u16) -> Vec<u8> {
    let or = |b: &mut [u8], at: usize, f: u16| {
        let old = u16::from_ne_bytes([b[at + 6], b[at + 7]]);
        b[at + 6..at + 8].copy_from_slice(&(old | f).to_ne_bytes());
    };
    or(&mut bytes, 0, begin);
    let end_at = bytes.len() - 20;
    or(&mut bytes, end_at, end);
    bytes
}
