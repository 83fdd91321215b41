//! The save form of a rule, as `iptables-save` and `iptables -S` print it.
//!
//! Order (iptables 1.8): `-s -d -i -o -p -f`, then each match as `-m NAME
//! opts` in rule order, then ` -c P B` when `-S -v`, then `-j TARGET opts` or
//! `-g CHAIN`. Every piece starts with a space; the caller writes the prefix.

use crate::ext::PrintCtx;
use crate::opt;
use crate::rule::{inv, Addr, Iface, Rule, Target};
use ruleset::{Counters, Family};
use std::fmt::Write;

/// Where counters go in a saved rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterStyle {
    None,
    /// `[P:B] -A ...` (iptables-save -c)
    Prefix,
    /// `... -c P B -j ...` (iptables -S -v)
    Inline,
}

/// Append `[P:B] -A CHAIN ...rule...` (no newline) to `out`.
pub fn save_rule(
    out: &mut String,
    family: Family,
    chain: &str,
    rule: &Rule,
    counters: Counters,
    style: CounterStyle,
) {
    if style == CounterStyle::Prefix {
        let _ = write!(out, "[{}:{}] ", counters.packets, counters.bytes);
    }
    out.push_str("-A ");
    out.push_str(chain);
    save_rule_body(out, family, rule, counters, style);
}

/// The part after `-A CHAIN`.
pub fn save_rule_body(
    out: &mut String,
    family: Family,
    rule: &Rule,
    counters: Counters,
    style: CounterStyle,
) {
    save_addr(out, 's', family, &rule.src, rule.inverted(inv::SRC));
    save_addr(out, 'd', family, &rule.dst, rule.inverted(inv::DST));
    save_iface(out, 'i', &rule.iniface, rule.inverted(inv::IN));
    save_iface(out, 'o', &rule.outiface, rule.inverted(inv::OUT));
    if rule.proto != 0 {
        if rule.inverted(inv::PROTO) {
            out.push_str(" !");
        }
        match opt::proto_name(rule.proto, false) {
            Some(n) => {
                out.push_str(" -p ");
                out.push_str(n);
            }
            None => {
                let _ = write!(out, " -p {}", rule.proto);
            }
        }
    }
    if rule.frag {
        if rule.inverted(inv::FRAG) {
            out.push_str(" !");
        }
        out.push_str(" -f");
    }
    let ctx = PrintCtx {
        family,
        proto: rule.proto,
        numeric: true,
    };
    for m in &rule.matches {
        out.push_str(" -m ");
        out.push_str(m.name());
        m.save(&ctx, out);
    }
    if style == CounterStyle::Inline {
        let _ = write!(out, " -c {} {}", counters.packets, counters.bytes);
    }
    match &rule.target {
        Target::None => {}
        Target::Goto(c) => {
            out.push_str(" -g ");
            out.push_str(c);
        }
        Target::Ext(t) => {
            out.push_str(" -j ");
            out.push_str(t.name());
            t.save(&ctx, out);
        }
        t => {
            out.push_str(" -j ");
            out.push_str(t.name());
        }
    }
}

fn save_addr(out: &mut String, letter: char, family: Family, a: &Addr, invert: bool) {
    match family {
        Family::Ipv4 => {
            if a.mask[..4] == [0; 4] && a.addr[..4] == [0; 4] && !invert {
                return;
            }
            out.push_str(if invert { " ! -" } else { " -" });
            out.push(letter);
            out.push(' ');
            opt::fmt_v4(out, &a.addr);
            out.push('/');
            opt::fmt_v4_mask(out, &a.mask);
        }
        Family::Ipv6 => {
            if a.mask == [0; 16] && !invert {
                return;
            }
            out.push_str(if invert { " ! -" } else { " -" });
            out.push(letter);
            out.push(' ');
            opt::fmt_v6(out, &a.addr);
            out.push('/');
            opt::fmt_v6_mask(out, &a.mask);
        }
    }
}

fn save_iface(out: &mut String, letter: char, i: &Iface, invert: bool) {
    let s = i.as_str();
    if !s.is_empty() && (s != "+" || invert) {
        out.push_str(if invert { " ! -" } else { " -" });
        out.push(letter);
        out.push(' ');
        out.push_str(s);
    }
}
