//! nft_compat against the kernel (each test in a fresh netns; iptables-nft
//! is the oracle): rules iptables-nft loads with x_tables extensions,
//! dumped with this crate's socket, parse into `Expr::Match` /
//! `Expr::Target` and re-emit byte for byte; loaded back with this crate's
//! own batch they dump the same; and `NFTA_RULE_COMPAT` is what the kernel
//! checks an extension's protocol against.

mod common;

use std::collections::HashSet;
use std::process::Command;

use nft::batch::Placement;
use nft::netlink::{Attrs, Writer, NLA_F_NESTED};
use nft::rule::COMPAT_F_INV;
use nft::{msg, Expr, Family, Object, Rule, RuleCompat, RuleRef, Socket};

const F: Family = Family::Ipv4;
const IPPROTO_SCTP: u32 = 132;

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

/// Runs `tool args` and fails the test on a non-zero exit.
fn run(tool: &str, args: &[&str]) {
    let out = Command::new(tool).args(args).output().expect("spawn");
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A process spawned from this thread must be in this thread's network
/// namespace (not the host's) before any firewall tool runs.
fn assert_children_share_this_netns() {
    let here = std::fs::read_link("/proc/thread-self/ns/net").unwrap();
    let out = Command::new("readlink")
        .arg("/proc/self/ns/net")
        .output()
        .expect("readlink");
    let child = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(
        child,
        here.to_string_lossy(),
        "child not in the test's netns; aborting"
    );
}

/// One attribute of a canonical form: type (flags cleared) and payload
/// or, for a nest, its attributes sorted by type.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Node {
    Leaf(u16, Vec<u8>),
    Nest(u16, Vec<Node>),
}

/// The attributes of one level as (offset, length, raw type with flags),
/// in order; stops at the first malformed header.
fn headers(b: &[u8]) -> Vec<(usize, usize, u16)> {
    let mut v = Vec::new();
    let mut i = 0;
    while i + 4 <= b.len() {
        let len = u16::from_ne_bytes([b[i], b[i + 1]]) as usize;
        if len < 4 || i + len > b.len() {
            break;
        }
        v.push((i, len, u16::from_ne_bytes([b[i + 2], b[i + 3]])));
        i += (len + 3) & !3;
    }
    v
}

/// The type paths that `ours` marks `NLA_F_NESTED`: the kernel dumps
/// nests without the flag, so nesting is learnt from our emission.
fn nest_paths(ours: &[u8], path: &mut Vec<u16>, out: &mut HashSet<Vec<u16>>) {
    for (i, len, ty) in headers(ours) {
        if ty & NLA_F_NESTED != 0 {
            path.push(ty & !NLA_F_NESTED);
            out.insert(path.clone());
            nest_paths(&ours[i + 4..i + len], path, out);
            path.pop();
        }
    }
}

/// `b` with the flag bits of attribute types cleared and every level
/// sorted by type: equal for two emissions that differ only in attribute
/// order and nest flags.
fn canon(b: &[u8], nested: &HashSet<Vec<u16>>, path: &mut Vec<u16>) -> Vec<Node> {
    let mut v: Vec<Node> = Attrs::new(b)
        .map(|a| {
            let a = a.expect("well-formed attributes");
            path.push(a.ty);
            let n = if nested.contains(path) {
                Node::Nest(a.ty, canon(a.payload, nested, path))
            } else {
                Node::Leaf(a.ty, a.payload.to_vec())
            };
            path.pop();
            n
        })
        .collect();
    v.sort();
    v
}

/// `b` with `NLA_F_NESTED` cleared on the headers of the attributes at
/// `nested` paths, so that two emissions can be compared byte for byte
/// apart from that flag.
fn strip_nest_flags(b: &[u8], nested: &HashSet<Vec<u16>>) -> Vec<u8> {
    fn walk(out: &mut [u8], nested: &HashSet<Vec<u16>>, path: &mut Vec<u16>) {
        for (i, len, ty) in headers(out) {
            let ty = ty & !NLA_F_NESTED;
            out[i + 2..i + 4].copy_from_slice(&ty.to_ne_bytes());
            path.push(ty);
            if nested.contains(path) {
                walk(&mut out[i + 4..i + len], nested, path);
            }
            path.pop();
        }
    }
    let mut out = b.to_vec();
    walk(&mut out, nested, &mut Vec::new());
    out
}

/// Parses every expression of `rr` and re-emits it. The compat kinds
/// must come back as the kernel's bytes exactly (nest flags aside); every
/// kind must come back with the same attributes (the kernel dumps some
/// native kinds, e.g. `meta`, in another attribute order than we emit
/// them). Returns the expressions.
fn reemit_identically(rr: &RuleRef) -> Vec<Expr> {
    let raw = rr.exprs_raw;
    let mut exprs = Vec::new();
    let mut off = 0;
    while off < raw.len() {
        let len = u16::from_ne_bytes([raw[off], raw[off + 1]]) as usize;
        let theirs = &raw[off..(off + ((len + 3) & !3)).min(raw.len())];
        let a = Attrs::new(theirs).next().unwrap().unwrap();
        let e = Expr::parse(&a).unwrap_or_else(|err| panic!("parse: {err}"));
        let mut ours = Vec::new();
        e.emit(&mut Writer::new(&mut ours));
        let mut nested = HashSet::new();
        nest_paths(&ours, &mut Vec::new(), &mut nested);
        let ctx = || format!("{e:?}\nkernel {theirs:02x?}\nours   {ours:02x?}");
        if matches!(e, Expr::Match { .. } | Expr::Target { .. }) {
            assert_eq!(
                strip_nest_flags(theirs, &nested),
                strip_nest_flags(&ours, &nested),
                "not byte-identical: {}",
                ctx()
            );
        }
        assert_eq!(
            canon(theirs, &nested, &mut Vec::new()),
            canon(&ours, &nested, &mut Vec::new()),
            "other attributes: {}",
            ctx()
        );
        off += theirs.len();
        exprs.push(e);
    }
    exprs
}

fn dump(s: &mut Socket, table: &str, chain: &str) -> Vec<Vec<Expr>> {
    let mut v = Vec::new();
    s.rules(F, Some(table), Some(chain), |rr| {
        v.push(reemit_identically(&rr));
        Ok(())
    })
    .unwrap();
    v
}

/// The nft_compat expressions of a rule, as (kind, extension name).
fn compat_exprs(exprs: &[Expr]) -> Vec<(&str, &str)> {
    exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Match { name, .. } => Some(("match", name.as_str())),
            Expr::Target { name, .. } => Some(("target", name.as_str())),
            _ => None,
        })
        .collect()
}

struct Case {
    table: &'static str,
    chain: &'static str,
    rule: &'static [&'static str],
    /// The compat expressions the kernel must dump for it.
    want: &'static [(&'static str, &'static str)],
    /// What the rule needs as `NFTA_RULE_COMPAT` to be loaded again.
    compat: Option<RuleCompat>,
    needs: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        table: "filter",
        chain: "INPUT",
        rule: &["-m", "recent", "--name", "x", "--set"],
        want: &[("match", "recent")],
        compat: None,
        needs: None,
    },
    Case {
        table: "filter",
        chain: "INPUT",
        rule: &["!", "-p", "tcp", "-m", "recent", "--name", "y", "--rcheck"],
        want: &[("match", "recent")],
        compat: None,
        needs: None,
    },
    Case {
        table: "filter",
        chain: "INPUT",
        rule: &["-m", "nfacct", "--nfacct-name", "n"],
        want: &[("match", "nfacct")],
        compat: None,
        needs: Some("nfacct"),
    },
    Case {
        table: "filter",
        chain: "INPUT",
        rule: &["-p", "sctp", "-m", "sctp", "--chunk-types", "any", "INIT"],
        want: &[("match", "sctp")],
        compat: Some(RuleCompat {
            proto: IPPROTO_SCTP,
            flags: 0,
        }),
        needs: None,
    },
    Case {
        table: "filter",
        chain: "FORWARD",
        rule: &["-m", "physdev", "--physdev-in", "eth0"],
        want: &[("match", "physdev")],
        compat: None,
        needs: None,
    },
    Case {
        table: "mangle",
        chain: "POSTROUTING",
        rule: &["-p", "udp", "-j", "CHECKSUM", "--checksum-fill"],
        want: &[("target", "CHECKSUM")],
        compat: None,
        needs: None,
    },
];

#[test]
fn iptables_nft_compat_rules_parse_and_reemit_identically() {
    if !have("iptables-nft") {
        eprintln!("SKIP: needs iptables-nft (apt-get install iptables)");
        return;
    }
    common::in_netns(|| {
        assert_children_share_this_netns();
        let nfacct = have("nfacct");
        if nfacct {
            run("nfacct", &["add", "n"]);
        } else {
            eprintln!("SKIP (one case): the nfacct match needs nfacct (apt-get install nfacct)");
        }
        let cases: Vec<&Case> = CASES
            .iter()
            .filter(|c| c.needs != Some("nfacct") || nfacct)
            .collect();
        for c in &cases {
            let mut args = vec!["-t", c.table, "-A", c.chain];
            args.extend_from_slice(c.rule);
            run("iptables-nft", &args);
        }
        let mut s = Socket::open().unwrap();
        let mut loaded = Vec::new();
        for c in &cases {
            let rules = dump(&mut s, c.table, c.chain);
            let seen = loaded
                .iter()
                .filter(|(t, ch, _)| (t, ch) == (&c.table, &c.chain))
                .count();
            let exprs = rules[seen].clone();
            assert_eq!(compat_exprs(&exprs), c.want, "{:?}: {exprs:?}", c.rule);
            loaded.push((c.table, c.chain, exprs));
        }
        // Loaded back with our own codec (and the case's NFTA_RULE_COMPAT),
        // each rule dumps again as it was.
        let mut b = s.batch(None);
        for (i, (table, chain, exprs)) in loaded.iter().enumerate() {
            let r = Rule {
                compat: cases[i].compat,
                ..Rule::new(F, table, chain, exprs.clone())
            };
            b.add_rule(&r, Placement::Append, false, i as u32);
        }
        let rep = s.commit(&mut b).unwrap();
        assert!(rep.outcome.is_ok(), "{rep:?}");
        for (table, chain) in [
            ("filter", "INPUT"),
            ("filter", "FORWARD"),
            ("mangle", "POSTROUTING"),
        ] {
            let rules = dump(&mut s, table, chain);
            let (first, again) = rules.split_at(rules.len() / 2);
            assert_eq!(first, again, "{table} {chain}");
        }
    });
}

/// An extension that declares a protocol (the `sctp` match) is accepted
/// only with `NFTA_RULE_COMPAT` naming that protocol, not inverted; the
/// kernel refuses flags other than `NFT_RULE_COMPAT_F_INV`.
#[test]
fn rule_compat_is_what_the_kernel_checks() {
    if !have("iptables-nft") {
        eprintln!("SKIP: needs iptables-nft (apt-get install iptables)");
        return;
    }
    common::in_netns(|| {
        assert_children_share_this_netns();
        run(
            "iptables-nft",
            &[
                "-A",
                "INPUT",
                "-p",
                "sctp",
                "-m",
                "sctp",
                "--chunk-types",
                "any",
                "INIT",
            ],
        );
        let mut s = Socket::open().unwrap();
        let exprs = dump(&mut s, "filter", "INPUT").remove(0);
        let compat = |proto, flags| Some(RuleCompat { proto, flags });
        let cases = [
            (None, false),
            (compat(IPPROTO_SCTP, 0), true),
            (Some(RuleCompat::new(IPPROTO_SCTP, false)), true),
            (compat(IPPROTO_SCTP, COMPAT_F_INV), false),
            (compat(6, 0), false),
            (compat(IPPROTO_SCTP, 1), false),
        ];
        for (compat, ok) in cases {
            let mut b = s.batch(None);
            let r = Rule {
                compat,
                ..Rule::new(F, "filter", "INPUT", exprs.clone())
            };
            b.add_rule(&r, Placement::Append, false, 1);
            let rep = s.commit(&mut b).unwrap();
            assert_eq!(rep.outcome.is_ok(), ok, "{compat:?}: {rep:?}");
            if !ok {
                assert_eq!(rep.outcome.errors[0].code, -libc::EINVAL, "{compat:?}");
            }
        }
        // The two accepted copies are there; the kernel dumps no
        // NFTA_RULE_COMPAT (it only reads it when creating the extensions).
        let mut rules = Vec::new();
        let key = Rule::key(F, "filter", "INPUT", None);
        s.dump_raw(
            msg::GETRULE,
            F,
            |w| key.emit(w),
            |m| {
                rules.push(Rule::parse_msg(m)?);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(rules.len(), 3);
        assert!(rules.iter().all(|r| r.compat.is_none()), "{rules:?}");
    });
}
