//! The whole state as text, for golden files and failure messages. One
//! object per line, indented by containment, in the kernel's list order
//! (tables, then each table's chains with their rules, then its sets with
//! their elements in key order):
//!
//! ```text
//! table ip nfk handle 1 use 3
//!   chain INPUT handle 1 use 2 hook input priority 0 type filter policy accept packets 0 bytes 0
//!     userdata "builtin"
//!     rule handle 4 userdata "A"
//!       [ payload load 4b @ network header + 12 => reg 1 ]
//!       [ cmp eq reg 1 0x0100000a ]
//!   set s handle 3 flags interval key 7/4 use 1
//!     elem 0x0100000a
//!     elem 0x0200000a flags 1
//! ```
//!
//! Userdata prints as a quoted string with
//! bytes outside printable ASCII as `\xNN`; expressions as
//! [`crate::expr_text`].

use std::fmt::Write;

use nft::set::DATA_TYPE_VERDICT;

use crate::exprtext::{data, expr_text, words};
use crate::model::{family_name, hook_name, Elem, Ruleset, Set, Table};

pub fn ruleset(rs: &Ruleset) -> String {
    let mut s = String::new();
    for t in &rs.tables {
        table(&mut s, t);
    }
    s
}

/// Userdata (or any bytes) as a quoted, escaped string.
pub fn quoted(b: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in b {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => {
                let _ = write!(s, "\\x{c:02x}");
            }
        }
    }
    s.push('"');
    s
}

fn table(s: &mut String, t: &Table) {
    let _ = write!(
        s,
        "table {} {} handle {} use {}",
        family_name(t.family),
        t.name,
        t.handle,
        t.table_use()
    );
    if t.flags != 0 {
        let _ = write!(s, " flags {}", t.flags);
    }
    s.push('\n');
    if let Some(u) = &t.userdata {
        let _ = writeln!(s, "  userdata {}", quoted(u));
    }
    let uses = t.uses();
    for c in &t.chains {
        let _ = write!(
            s,
            "  chain {} handle {} use {}",
            c.name,
            c.handle,
            uses.get(c.name.as_str()).copied().unwrap_or(0)
        );
        if let Some(b) = &c.base {
            let _ = write!(
                s,
                " hook {} priority {} type {} policy {}",
                hook_name(t.family, b.hooknum),
                b.priority,
                b.ty,
                if b.policy == 0 { "drop" } else { "accept" }
            );
            if let Some(dev) = &b.dev {
                let _ = write!(s, " device {dev}");
            }
            if let Some((bytes, packets)) = b.counters {
                let _ = write!(s, " packets {packets} bytes {bytes}");
            }
        }
        s.push('\n');
        if let Some(u) = &c.userdata {
            let _ = writeln!(s, "    userdata {}", quoted(u));
        }
        for slot in c.rules.iter().filter(|x| !x.gone) {
            let r = &slot.rule;
            let _ = write!(s, "    rule handle {}", r.handle);
            if let Some(u) = &r.userdata {
                let _ = write!(s, " userdata {}", quoted(u));
            }
            s.push('\n');
            for e in &r.exprs {
                let _ = writeln!(s, "      {}", expr_text(e));
            }
        }
    }
    for set in &t.sets {
        set_text(s, t, set);
    }
}

const SET_FLAGS: &[(u32, &str)] = &[
    (0x1, "anonymous"),
    (0x2, "constant"),
    (0x4, "interval"),
    (0x8, "map"),
    (0x10, "timeout"),
    (0x20, "eval"),
    (0x40, "object"),
    (0x80, "concat"),
    (0x100, "expr"),
];

fn set_text(s: &mut String, t: &Table, set: &Set) {
    let _ = write!(s, "  set {} handle {}", set.name, set.handle);
    if set.flags != 0 {
        let names: Vec<&str> = SET_FLAGS
            .iter()
            .filter(|(b, _)| set.flags & b != 0)
            .map(|(_, n)| *n)
            .collect();
        let _ = write!(s, " flags {}", names.join(","));
    }
    let _ = write!(s, " key {}/{}", set.key_type, set.key_len);
    if set.is_map() {
        if set.data_type == DATA_TYPE_VERDICT {
            s.push_str(" data verdict");
        } else {
            let _ = write!(s, " data {}/{}", set.data_type, set.data_len);
        }
    }
    if !set.concat.is_empty() {
        let f: Vec<String> = set.concat.iter().map(u32::to_string).collect();
        let _ = write!(s, " concat {}", f.join(","));
    }
    if set.size != 0 {
        let _ = write!(s, " size {}", set.size);
    }
    if set.policy != 0 {
        let _ = write!(s, " policy {}", set.policy);
    }
    if set.timeout != 0 {
        let _ = write!(s, " timeout {}", set.timeout);
    }
    let _ = writeln!(s, " use {}", t.set_use(&set.name));
    if let Some(u) = &set.userdata {
        let _ = writeln!(s, "    userdata {}", quoted(u));
    }
    for e in &set.exprs {
        let _ = writeln!(s, "    expr {}", expr_text(e));
    }
    for e in set.elems.values() {
        elem(s, e);
    }
}

fn elem(s: &mut String, e: &Elem) {
    s.push_str("    elem");
    match &e.key {
        Some(k) => {
            let _ = write!(s, " {}", words(k));
        }
        None => s.push_str(" *"),
    }
    if let Some(k) = &e.key_end {
        let _ = write!(s, " - {}", words(k));
    }
    if e.flags != 0 {
        let _ = write!(s, " flags {}", e.flags);
    }
    if let Some(d) = &e.data {
        let _ = write!(s, " : {}", data(d));
    }
    if let Some(t) = e.timeout {
        let _ = write!(s, " timeout {t}");
    }
    if let Some(u) = &e.userdata {
        let _ = write!(s, " userdata {}", quoted(u));
    }
    for x in &e.exprs {
        let _ = write!(s, " {}", expr_text(x));
    }
    s.push('\n');
}
