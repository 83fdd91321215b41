//! `nfkeeper trace`: the way a packet described on the command line takes
//! through the tables and chains of one hook, with the logical rule numbers
//! that match and the final verdict (classify's evaluation of the logical
//! ruleset, read from the kernel or from an iptables-save file).

use classify::logical::{trace_hook, Step};
use classify::{describe, Choices, Packet, L4};
use iptables::exec::{restore, RestoreOpts};
use iptables::print::save::{save_rule_body, CounterStyle};
use iptables::rule::Iface;
use iptables::Rule;
use ruleset::{Counters, Family, Ruleset};
use std::fmt::Write;

pub const USAGE: &str = "\
usage: nfkeeper trace [-4|-6] [--hook prerouting|input|forward|output|postrouting]
         [-s ADDR] [-d ADDR] [-p tcp|udp|icmp|icmpv6|NUM] [--sport N] [--dport N]
         [--tcp-flags FLAG,...] [--icmp-type TYPE[/CODE]] [-i IFACE] [-o IFACE]
         [--mark N] [--ctstate NEW|ESTABLISHED|RELATED|INVALID|UNTRACKED]
         [--length N] [--ttl N] [--fragment] [--stateful pass|fail] [--rules FILE]

Prints the rules (table, chain, number, rule) the packet matches at the hook,
in order, the policies it reaches, and its final verdict. Rules come from
nfkeeper's tables in the kernel of this network namespace, or from an
iptables-save FILE (--rules). Defaults: IPv4, tcp 0.0.0.0:40000 -> 0.0.0.0:80
flags SYN, ctstate NEW, mark 0, ttl 64, the smallest length; the hook is
forward with -i and -o, output with only -o, else input. Stateful matches
(limit, statistic) are taken to pass (--stateful fail: to fail).";

fn ruleset_from(
    o: &describe::Opts,
    prog: &str,
    settings: &crate::settings::Settings,
) -> Result<Ruleset<Rule>, String> {
    match &o.rules {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let mut rs = Ruleset::new();
            let ro = RestoreOpts::new(o.family, prog);
            restore(&mut rs, &text, &ro).map_err(|e| format!("{path}: {}", e.render(prog)))?;
            Ok(rs)
        }
        None => {
            let mut s =
                keeper::Session::open(o.family, settings.engine).map_err(|e| e.to_string())?;
            let rs = s.model().map_err(|e| e.to_string())?;
            for w in &s.warnings {
                eprintln!("{w}");
            }
            Ok(rs)
        }
    }
}

fn describe(p: &Packet) -> String {
    let a = |b: &[u8]| match p.family {
        Family::Ipv4 => std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string(),
        Family::Ipv6 => {
            let mut x = [0u8; 16];
            x.copy_from_slice(b);
            std::net::Ipv6Addr::from(x).to_string()
        }
    };
    let (s, d) = (a(p.src()), a(p.dst()));
    let l4 = match p.l4 {
        L4::Tcp {
            sport,
            dport,
            flags,
        } => format!("tcp {s}:{sport} -> {d}:{dport} flags {flags:#04x}"),
        L4::Udp { sport, dport } => format!("udp {s}:{sport} -> {d}:{dport}"),
        L4::Icmp { typ, code } => format!("icmp {s} -> {d} type {typ}/{code}"),
        L4::Other(n) => format!("proto {n} {s} -> {d}"),
    };
    let ifn = |i: &Iface| {
        if i.is_empty() {
            "-".to_string()
        } else {
            i.as_str().to_string()
        }
    };
    format!(
        "{l4}{} in {} out {} mark {:#x} ctstate {:?} length {} ttl {}",
        if p.frag_off != 0 { " fragment" } else { "" },
        ifn(&p.iif),
        ifn(&p.oif),
        p.mark,
        p.ct,
        p.len,
        p.ttl
    )
    .replace("ctstate New", "ctstate NEW")
    .replace("ctstate Established", "ctstate ESTABLISHED")
    .replace("ctstate Related", "ctstate RELATED")
    .replace("ctstate Invalid", "ctstate INVALID")
    .replace("ctstate Untracked", "ctstate UNTRACKED")
}

fn verdict_name(v: &classify::Verdict) -> String {
    match v {
        classify::Verdict::Accept => "ACCEPT".into(),
        classify::Verdict::Drop => "DROP".into(),
        classify::Verdict::Reject => "REJECT".into(),
        classify::Verdict::Other(s) => s.clone(),
    }
}

/// The trace of `args` as text (the whole output), or the exit code and
/// message: 2 for a problem with the arguments, 1 when the rules can't be
/// read or evaluated.
pub fn trace_text(
    args: &[String],
    settings: &crate::settings::Settings,
) -> Result<String, (i32, String)> {
    let o = describe::parse(args).map_err(|e| (2, e))?;
    let prog = if o.family == Family::Ipv6 {
        "ip6tables-restore"
    } else {
        "iptables-restore"
    };
    let p = describe::packet(&o).map_err(|e| (2, e))?;
    let hook = describe::hook_of(&o);
    let rs = ruleset_from(&o, prog, settings).map_err(|e| (1, e))?;
    let ch = Choices {
        seed: 0,
        fixed: Some(o.pass),
    };
    let (out, steps) = trace_hook(&rs, hook, &p, ch).map_err(|e| (1, e.to_string()))?;
    let mut s = String::new();
    let _ = writeln!(s, "packet: {}", describe(&p));
    let _ = writeln!(s, "hook: {}", hook.chain());
    let mut shown = 0;
    for st in &steps {
        match st {
            Step::Rule {
                table, chain, num, ..
            } => {
                let mut text = String::new();
                if let Ok(r) = rs.table(p.family, *table).rule_at(chain, *num) {
                    save_rule_body(
                        &mut text,
                        p.family,
                        r.body,
                        Counters::default(),
                        CounterStyle::None,
                    );
                }
                let _ = writeln!(s, "  {:<8} {chain} #{num}: -A {chain}{text}", table.name());
                shown += 1;
            }
            Step::Policy {
                table,
                chain,
                verdict,
            } => {
                // An empty chain that accepts (every table the file or the
                // kernel lacks) says nothing.
                let empty = rs
                    .table(p.family, *table)
                    .chain(chain)
                    .is_none_or(|c| c.len == 0);
                if empty && *verdict == classify::Verdict::Accept {
                    continue;
                }
                let _ = writeln!(
                    s,
                    "  {:<8} {chain}: policy {}",
                    table.name(),
                    verdict_name(verdict)
                );
                shown += 1;
            }
        }
    }
    if shown == 0 {
        let _ = writeln!(
            s,
            "  (no rule matches; every chain on the way is empty with policy ACCEPT)"
        );
    }
    let _ = writeln!(s, "verdict: {}", verdict_name(&out.verdict));
    if out.mark != p.mark {
        let _ = writeln!(s, "mark: {:#x}", out.mark);
    }
    Ok(s)
}

/// `nfkeeper trace ARGS`: exit 0 with the trace, 2 on a usage error, 1 when
/// the rules can't be read or evaluated.
pub fn trace(args: &[String], settings: &crate::settings::Settings) -> i32 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return 0;
    }
    match trace_text(args, settings) {
        Ok(t) => {
            print!("{t}");
            0
        }
        Err((code, e)) => {
            eprintln!("nfkeeper trace: {e}");
            if code == 2 {
                eprintln!("Try `nfkeeper trace --help' for more information.");
            }
            code
        }
    }
}
