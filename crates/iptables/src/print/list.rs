//! The `iptables -L` table: chain headers and rule rows, column for column as
//! iptables 1.8 prints them (`-n`, `-v`, `-x`, `--line-numbers`).
//!
//! Deviation: without `-n`, iptables reverse-resolves addresses through DNS;
//! nfkeeper never depends on DNS and prints the address numerically (it still
//! prints "anywhere", service and protocol names as iptables does).

use crate::ext::PrintCtx;
use crate::opt;
use crate::parse::ListFlags;
use crate::rule::{inv, Addr, Rule, Target};
use ruleset::{ChainView, Counters, Family};
use std::fmt::Write;

/// `xtables_print_num`: a counter column. `table` = aligned (rule rows),
/// otherwise compact (the policy header).
pub fn fmt_num(out: &mut String, n: u64, f: &ListFlags, table: bool) {
    if f.exact {
        if table {
            let _ = write!(out, "{n:8} ");
        } else {
            let _ = write!(out, "{n} ");
        }
        return;
    }
    if n <= 99999 {
        if table {
            let _ = write!(out, "{n:5} ");
        } else {
            let _ = write!(out, "{n} ");
        }
        return;
    }
    let mut v = n;
    for unit in ['K', 'M', 'G'] {
        v = (v + 500) / 1000;
        if v <= 9999 {
            if table {
                let _ = write!(out, "{v:4}{unit} ");
            } else {
                let _ = write!(out, "{v}{unit} ");
            }
            return;
        }
    }
    v = (v + 500) / 1000;
    if table {
        let _ = write!(out, "{v:4}T ");
    } else {
        let _ = write!(out, "{v}T ");
    }
}

/// The chain header line and the column titles.
pub fn header(out: &mut String, chain: &ChainView, f: &ListFlags) {
    out.push_str("Chain ");
    out.push_str(chain.name);
    match chain.policy {
        Some(p) => {
            out.push_str(" (policy ");
            out.push_str(p.name());
            if f.verbose {
                out.push(' ');
                fmt_num(out, chain.counters.packets, f, false);
                out.push_str("packets, ");
                fmt_num(out, chain.counters.bytes, f, false);
                out.push_str("bytes");
            }
            out.push_str(")\n");
        }
        None => {
            let _ = writeln!(out, " ({} references)", chain.references);
        }
    }
    if f.line_numbers {
        out.push_str("num  ");
    }
    if f.verbose {
        if f.exact {
            let _ = write!(out, "{:>8} {:>10} ", "pkts", "bytes");
        } else {
            let _ = write!(out, "{:>5} {:>5} ", "pkts", "bytes");
        }
    }
    out.push_str("target    ");
    out.push_str(" prot ");
    out.push_str("opt");
    if f.verbose {
        out.push_str(" in     out    ");
    }
    out.push_str(" source              ");
    out.push_str(" destination         ");
    out.push('\n');
}

fn addr_text(family: Family, a: &Addr, numeric: bool) -> String {
    let mut s = String::new();
    match family {
        Family::Ipv4 => {
            if a.mask[..4] == [0; 4] && !numeric {
                return "anywhere".into();
            }
            opt::fmt_v4(&mut s, &a.addr);
            match opt::mask_prefix(&a.mask[..4]) {
                Some(32) => {}
                Some(b) => {
                    let _ = write!(s, "/{b}");
                }
                None => {
                    s.push('/');
                    opt::fmt_v4(&mut s, &a.mask);
                }
            }
        }
        Family::Ipv6 => {
            if a.addr == [0; 16] && !numeric {
                return "anywhere".into();
            }
            opt::fmt_v6(&mut s, &a.addr);
            match opt::mask_prefix(&a.mask) {
                Some(128) => {}
                Some(b) => {
                    let _ = write!(s, "/{b}");
                }
                None => {
                    s.push('/');
                    opt::fmt_v6(&mut s, &a.mask);
                }
            }
        }
    }
    s
}

/// One rule row (with trailing newline). `num` is its 1-based position.
pub fn rule_row(
    out: &mut String,
    family: Family,
    num: usize,
    rule: &Rule,
    c: Counters,
    f: &ListFlags,
) {
    if f.line_numbers {
        let _ = write!(out, "{num:<4} ");
    }
    if f.verbose {
        fmt_num(out, c.packets, f, true);
        fmt_num(out, c.bytes, f, true);
    }
    let _ = write!(out, "{:<9} ", rule.target.name());
    out.push(if rule.inverted(inv::PROTO) { '!' } else { ' ' });
    match opt::proto_name(rule.proto, !f.numeric) {
        Some(n) => {
            let _ = write!(out, "{n:<4} ");
        }
        None => {
            let _ = write!(out, "{:<4} ", rule.proto);
        }
    }
    match family {
        Family::Ipv4 => {
            out.push(if rule.inverted(inv::FRAG) { '!' } else { '-' });
            out.push(if rule.frag { 'f' } else { '-' });
        }
        Family::Ipv6 => out.push_str("--"),
    }
    out.push(' ');
    if f.verbose {
        let any = if f.numeric { "*" } else { "any" };
        let iface = |i: &crate::rule::Iface, invert: bool| {
            format!(
                "{}{}",
                if invert { "!" } else { "" },
                if i.is_empty() { any } else { i.as_str() }
            )
        };
        let _ = write!(out, " {:<6} ", iface(&rule.iniface, rule.inverted(inv::IN)));
        let _ = write!(
            out,
            "{:<6} ",
            iface(&rule.outiface, rule.inverted(inv::OUT))
        );
    }
    out.push(if rule.inverted(inv::SRC) { '!' } else { ' ' });
    let _ = write!(out, "{:<19} ", addr_text(family, &rule.src, f.numeric));
    out.push(if rule.inverted(inv::DST) { '!' } else { ' ' });
    let _ = write!(out, "{:<19} ", addr_text(family, &rule.dst, f.numeric));
    if matches!(rule.target, Target::Goto(_)) {
        out.push_str("[goto] ");
    }
    let ctx = PrintCtx {
        family,
        proto: rule.proto,
        numeric: f.numeric,
    };
    for m in &rule.matches {
        m.list(&ctx, out);
    }
    if let Target::Ext(t) = &rule.target {
        t.list(&ctx, out);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_columns() {
        let f = ListFlags {
            verbose: true,
            ..Default::default()
        };
        let fx = ListFlags {
            verbose: true,
            exact: true,
            ..Default::default()
        };
        let cases: &[(u64, &ListFlags, bool, &str)] = &[
            (0, &f, true, "    0 "),
            (99999, &f, true, "99999 "),
            (100000, &f, true, " 100K "),
            (123456789, &f, true, " 123M "),
            (9999499, &f, true, "9999K "),
            (9999500, &f, true, "  10M "),
            (42, &f, false, "42 "),
            (1234567, &f, false, "1235K "),
            (42, &fx, true, "      42 "),
            (42, &fx, false, "42 "),
        ];
        for (n, flags, table, want) in cases {
            let mut s = String::new();
            fmt_num(&mut s, *n, flags, *table);
            assert_eq!(s, *want, "{n}");
        }
    }
}
