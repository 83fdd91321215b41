//! The nft_compat target infos checked against the kernel and iptables-nft:
//! every OK line of the iptables 1.8.11 conformance vectors
//! (`../shared/conformance/.../*.t`) of a target with a compat encoder is
//! loaded with `iptables-nft`/`ip6tables-nft` in a fresh network namespace,
//! the rule is dumped with nfkeeper's netlink socket, and the `target`
//! expression's name, revision and info must equal what
//! `compat::targets::layout` gives for the same rule parsed by nfkeeper. A
//! few SET rules (no vector loads one: the sets must exist) are checked the
//! same way, with their sets created first.
//!
//! A second test loads the same cases, as nfkeeper encodes them, into
//! nfkeeper's own tables (`nfkeeper_<table>`): the kernel must refuse
//! exactly the targets `compat::tables` lists as bound to tables of other
//! names, and take every other one.
//!
//! iptables-nft is given the rule as iptables 1.8.11 prints it (the
//! vector's expected text): the same rule, in the form an older local
//! iptables-nft reads as 1.8.11 does (1.8.9 reads `--queue-balance 4:` as
//! ending at 65535, 1.8.11 at 65534).
//!
//! Bytes past the part user space controls (iptables' userspacesize: the
//! kernel-private pointer or checksum at the end of some infos) are not
//! compared. Prints a per-module table; every case must match, except where
//! this kernel cannot load the target at all (listed in UNAVAILABLE).
//!
//! Needs root and iptables-nft (as an oracle only); skips with a reason
//! otherwise.

use compile::compat::tables::{required_tables, Kind};
use compile::compat::targets::{self, set};
use compile::compat::CompatInfo;
use compile::layout;
use iptables::parse::{parse, restore::tokenize, Command, ParseOpts};
use iptables::Target;
use nft::netlink::{Msgs, Writer};
use nft::{Expr, Socket};
use ruleset::{Family, TableKind};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command as Proc;
use testkit::in_netns;

/// Vector modules (file name minus prefix and ".t") whose targets have a
/// compat encoder.
const MODULES: &[&str] = &[
    "AUDIT",
    "CHECKSUM",
    "CLASSIFY",
    "CONNMARK",
    "CONNSECMARK",
    "CT",
    "DNAT",
    "DNPT",
    "DSCP",
    "ECN",
    "HL",
    "HMARK",
    "IDLETIMER",
    "LED",
    "MASQUERADE",
    "NETMAP",
    "NFQUEUE",
    "RATEEST",
    "REDIRECT",
    "REJECT",
    "SECMARK",
    "SET",
    "SNAT",
    "SNPT",
    "SYNPROXY",
    "TCPMSS",
    "TCPOPTSTRIP",
    "TEE",
    "TOS",
    "TPROXY",
    "TTL",
];

/// Targets this kernel cannot load, and why.
const UNAVAILABLE: &[(&str, &str)] = &[
    ("LED", "the kernel has no xt_LED"),
    (
        "SECMARK",
        "no security module here maps the vectors' SELinux context",
    ),
];

/// (target name, the length of the info user space controls) where the
/// kernel keeps private data after it.
const USER_SIZE: &[(&str, usize)] = &[
    ("CT", 64),
    ("IDLETIMER", 40),
    ("LED", 32),
    ("RATEEST", 24),
    ("TEE", 32),
    ("SNPT", 34),
    ("DNPT", 34),
    ("SECMARK", 260),
];

/// Rules beyond the vectors, for fields no vector sets: (family, table,
/// chain, rule). For SET the sets `a`, `b` and `m` are created first, in
/// that order, in the fresh namespace, so their kernel indexes are 0, 1
/// and 2 (no vector loads a SET rule: its sets must exist). For
/// `CT --timeout t1` the timeout policy `t1` is created first.
const EXTRA: &[(Family, TableKind, &str, &str)] = &[
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j SET --add-set a src,dst"),
    (
        Family::Ipv6,
        TableKind::Filter,
        "OUTPUT",
        "-j SET --add-set a src --exist --timeout 10 --del-set b dst,src",
    ),
    (
        Family::Ipv4,
        TableKind::Mangle,
        "FORWARD",
        "-j SET --map-set m src --map-mark --map-prio --map-queue",
    ),
    (
        Family::Ipv4,
        TableKind::Mangle,
        "FORWARD",
        "-p tcp -j ECN --ecn-tcp-cwr 1 --ecn-tcp-ece 0 --ecn-ip-ect 2",
    ),
    (Family::Ipv4, TableKind::Mangle, "FORWARD", "-p tcp -j ECN --ecn-tcp-ece 1"),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-p udp -j ECN --ecn-ip-ect 3"),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-j TTL --ttl-dec 5"),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j TEE --gateway 10.0.0.1 --oif eth0"),
    (Family::Ipv6, TableKind::Filter, "INPUT", "-j TEE --gateway 2001:db8::1 --oif lo"),
    (Family::Ipv4, TableKind::Mangle, "PREROUTING", "-p tcp -j TPROXY --on-port 80"),
    (
        Family::Ipv6,
        TableKind::Mangle,
        "PREROUTING",
        "-p udp -j TPROXY --on-port 53 --tproxy-mark 0x1",
    ),
    // In IPv4 rules iptables fills all 16 bytes of a mask for the tuple
    // words src and dst, but its save form (--hmark-src-prefix 32) reloads
    // with 4; nfkeeper writes the latter (the kernel reads 4 for IPv4).
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-tuple sport,dport,proto --hmark-rnd 0x1234 --hmark-mod 10 --hmark-offset 100",
    ),
    (
        Family::Ipv6,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-tuple src,dst,sport,dport,proto --hmark-rnd 0x1234 --hmark-mod 10",
    ),
    (
        Family::Ipv6,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-tuple src,dst,spi --hmark-spi 0x55 --hmark-rnd 1 --hmark-mod 2",
    ),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-src-prefix 24 --hmark-dst-prefix 255.255.0.0 --hmark-sport 0x1234 --hmark-dport 5 --hmark-rnd 1 --hmark-mod 2",
    ),
    (
        Family::Ipv6,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-src-prefix 64 --hmark-dst-prefix ffff:ffff:: --hmark-rnd 1 --hmark-mod 2",
    ),
    (Family::Ipv4, TableKind::Raw, "PREROUTING", "-p tcp -j CT --helper ftp"),
    (Family::Ipv4, TableKind::Raw, "PREROUTING", "-j CT --zone-orig 5"),
    (
        Family::Ipv6,
        TableKind::Raw,
        "OUTPUT",
        "-p tcp -j CT --zone-reply mark --helper ftp --ctevents new,secmark",
    ),
    (
        Family::Ipv4,
        TableKind::Raw,
        "PREROUTING",
        "-p tcp -j CT --timeout t1 --expevents new",
    ),
    (Family::Ipv6, TableKind::Raw, "OUTPUT", "-j CT --zone-reply mark"),
    (Family::Ipv4, TableKind::Raw, "OUTPUT", "-j CT --zone mark --ctevents mark,secmark"),
    (Family::Ipv4, TableKind::Mangle, "FORWARD", "-j CONNMARK --set-xmark 0x5/0xff"),
    (
        Family::Ipv6,
        TableKind::Mangle,
        "FORWARD",
        "-j CONNMARK --save-mark --nfmask 0xff --ctmask 0xf0 --left-shift-mark 4",
    ),
    (
        Family::Ipv4,
        TableKind::Mangle,
        "FORWARD",
        "-j CONNMARK --restore-mark --mask 0xff00 --right-shift-mark 8",
    ),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j RATEEST --rateest-name x --rateest-interval 1s --rateest-ewmalog 8s",
    ),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-p tcp -j SYNPROXY --ecn --mss 1400"),
    (
        Family::Ipv6,
        TableKind::Mangle,
        "INPUT",
        "-p tcp -j TCPOPTSTRIP --strip-options md5,timestamp,255",
    ),
    (
        Family::Ipv6,
        TableKind::Mangle,
        "POSTROUTING",
        "-j SNPT --src-pfx 2001:db8::/48 --dst-pfx 2001:db9::/48",
    ),
    (Family::Ipv4, TableKind::Mangle, "POSTROUTING", "-j CLASSIFY --set-class 1:10"),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-j NFQUEUE --queue-num 3 --queue-bypass"),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j NFQUEUE --queue-balance 4:6 --queue-cpu-fanout",
    ),
    (
        Family::Ipv4,
        TableKind::Filter,
        "INPUT",
        "-j HMARK --hmark-src-prefix 24 --hmark-sport 0x1234 --hmark-dport 5 --hmark-rnd 1 --hmark-mod 2 --hmark-offset 3",
    ),
    (
        Family::Ipv4,
        TableKind::Mangle,
        "FORWARD",
        "-j SET --map-set m src --map-mark --add-set a src,dst --timeout 10",
    ),
    (
        Family::Ipv4,
        TableKind::Mangle,
        "FORWARD",
        "-j CONNMARK --save-mark --nfmask 0xff --ctmask 0xf0 --right-shift-mark 4",
    ),
    (Family::Ipv6, TableKind::Nat, "POSTROUTING", "-j NETMAP --to 2001:db8::/32"),
    (
        Family::Ipv4,
        TableKind::Nat,
        "POSTROUTING",
        "-p udp -j SNAT --to-source 1.2.3.4-1.2.3.9:100-200 --random-fully --persistent",
    ),
    (Family::Ipv4, TableKind::Mangle, "OUTPUT", "-p tcp -j TCPMSS --set-mss 1400"),
    (Family::Ipv4, TableKind::Filter, "INPUT", "-p tcp -j REJECT --reject-with tcp-reset"),
    (Family::Ipv6, TableKind::Filter, "INPUT", "-p tcp -j REJECT --reject-with tcp-reset"),
];

struct Case {
    module: String,
    origin: String,
    family: Family,
    table: TableKind,
    chain: String,
    /// The rule as the vector gives it (what nfkeeper parses).
    words: Vec<String>,
    /// The rule as iptables 1.8.11 prints it (what iptables-nft loads).
    load: Vec<String>,
}

fn vectors_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions");
    d.is_dir().then_some(d)
}

/// The OK lines (as the NFT variant expects them) of the modules' files,
/// each in the first chain its section names.
fn cases(dir: &PathBuf) -> Vec<Case> {
    let mut out = Vec::new();
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("read vectors")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".t"))
        .collect();
    files.sort();
    for file in files {
        let stem = file.trim_end_matches(".t");
        let (module, families) = if let Some(m) = stem.strip_prefix("libxt_") {
            (m, vec![Family::Ipv4, Family::Ipv6])
        } else if let Some(m) = stem.strip_prefix("libipt_") {
            (m, vec![Family::Ipv4])
        } else if let Some(m) = stem.strip_prefix("libip6t_") {
            (m, vec![Family::Ipv6])
        } else {
            continue;
        };
        if !MODULES.contains(&module) {
            continue;
        }
        let text = std::fs::read_to_string(dir.join(&file)).expect("read .t");
        for family in families {
            let mut chain = String::new();
            let mut table = TableKind::Filter;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim_end();
                if line.is_empty() || line.starts_with(['#', '@', '%']) {
                    continue;
                }
                if let Some(c) = line.strip_prefix(':') {
                    chain = c.split(',').next().unwrap_or("").to_string();
                    continue;
                }
                if let Some(t) = line.strip_prefix('*') {
                    table = TableKind::from_name(t).expect("table name");
                    continue;
                }
                let item: Vec<&str> = line.split(';').collect();
                if item.len() < 3 {
                    continue;
                }
                let nft_ok = match item.get(3) {
                    Some(&"LEGACY") => match item.get(4) {
                        Some(r) => *r == "OK",
                        None => item[2] != "OK",
                    },
                    _ => item[2] == "OK",
                };
                if !nft_ok {
                    continue;
                }
                out.push(Case {
                    module: module.to_string(),
                    origin: format!("{file}:{}", n + 1),
                    family,
                    table,
                    chain: chain.clone(),
                    words: tokenize(item[0]).expect("tokenize"),
                    load: tokenize(if item[1] == "=" { item[0] } else { item[1] })
                        .expect("tokenize"),
                });
            }
        }
    }
    for (i, (family, table, chain, rule)) in EXTRA.iter().enumerate() {
        let module = rule.split(" -j ").nth(1).or(rule.strip_prefix("-j "));
        let module = module.and_then(|m| m.split(' ').next()).expect("a target");
        out.push(Case {
            module: module.into(),
            origin: format!("EXTRA[{i}]"),
            family: *family,
            table: *table,
            chain: chain.to_string(),
            words: tokenize(rule).expect("tokenize"),
            load: tokenize(rule).expect("tokenize"),
        });
    }
    out
}

/// nfkeeper's compat info for the case's rule.
fn expected(c: &Case) -> Result<CompatInfo, String> {
    let mut argv: Vec<&str> = vec!["-A", &c.chain];
    argv.extend(c.words.iter().map(String::as_str));
    let o = ParseOpts {
        family: c.family,
        restore: true,
        table: Some(c.table),
        prog: "iptables",
    };
    let parsed = parse(&argv, o).map_err(|e| format!("nfkeeper refused it: {}", e.msg))?;
    if !matches!(parsed.command, Command::Append(_)) {
        return Err("not an append".into());
    }
    let Target::Ext(t) = &parsed.rules[0].target else {
        return Err("no target extension".into());
    };
    if let iptables::ext::TargetExt::Set(s) = &**t {
        let index = |n: &str| {
            ["a", "b", "m"]
                .iter()
                .position(|x| *x == n)
                .map(|i| i as u16)
        };
        return set::info(s, index).ok_or_else(|| "unknown set".into());
    }
    targets::layout(t, c.family).ok_or_else(|| "no compat encoder".into())
}

/// The first `target` expression of the chain's rules: (name, rev, info).
fn dumped_target(c: &Case) -> Result<(String, u32, Vec<u8>), String> {
    let fam = match c.family {
        Family::Ipv4 => nft::Family::Ipv4,
        Family::Ipv6 => nft::Family::Ipv6,
    };
    let mut sock = Socket::open().map_err(|e| format!("socket: {e:?}"))?;
    let mut found = None;
    sock.rules(fam, Some(c.table.name()), Some(&c.chain), |r| {
        for e in r.exprs() {
            if let Expr::Target { name, rev, info } = e? {
                found.get_or_insert((name, rev, info));
            }
        }
        Ok(())
    })
    .map_err(|e| format!("dump: {e:?}"))?;
    found.ok_or_else(|| "no target expression (translated natively?)".into())
}

/// Create the conntrack timeout policy `name` for TCP in `family` (what
/// `nfct timeout add NAME inet|inet6 tcp` does), through nfnetlink's
/// cttimeout subsystem.
fn add_cttimeout(name: &str, family: Family) -> Result<(), String> {
    const SUBSYS_CTNETLINK_TIMEOUT: u16 = 8;
    const MSG_TIMEOUT_NEW: u16 = 0;
    const F_REQUEST_ACK_CREATE: u16 = 0x1 | 0x4 | 0x400;
    let l3 = if family == Family::Ipv6 { 10 } else { 2 };
    let mut buf = Vec::new();
    let mut w = Writer::new(&mut buf);
    let m = w.begin_msg(
        SUBSYS_CTNETLINK_TIMEOUT << 8 | MSG_TIMEOUT_NEW,
        F_REQUEST_ACK_CREATE,
        1,
        0,
        0,
    );
    w.put_str(1, name); // CTA_TIMEOUT_NAME
    w.put_be16(2, l3); // CTA_TIMEOUT_L3PROTO
    w.put_u8(3, 6); // CTA_TIMEOUT_L4PROTO: tcp
    let n = w.begin_nest(4); // CTA_TIMEOUT_DATA: the protocol's defaults
    w.end_nest(n);
    w.end_msg(m);
    let mut sock = Socket::open().map_err(|e| format!("socket: {e:?}"))?;
    sock.send_raw(&buf).map_err(|e| format!("send: {e:?}"))?;
    let n = sock
        .recv_raw(false)
        .map_err(|e| format!("recv: {e:?}"))?
        .unwrap_or(0);
    for msg in Msgs::new(sock.received(n)) {
        let msg = msg.map_err(|e| format!("{e:?}"))?;
        let code = msg.error().map_err(|e| format!("{e:?}"))?.code;
        if code != 0 {
            return Err(format!("cttimeout {name}: errno {}", -code));
        }
    }
    Ok(())
}

/// Load the case with iptables-nft in this (fresh) namespace and dump it.
fn load_and_dump(c: &Case) -> Result<(String, u32, Vec<u8>), String> {
    let ipt = match c.family {
        Family::Ipv4 => "iptables-nft",
        Family::Ipv6 => "ip6tables-nft",
    };
    let run = |prog: &str, args: &[&str]| -> Result<(), String> {
        let out = Proc::new(prog)
            .args(args)
            .output()
            .map_err(|e| format!("{prog}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{prog} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    if c.module == "SET" {
        let fam = if c.family == Family::Ipv6 {
            "inet6"
        } else {
            "inet"
        };
        for (name, ty) in [("a", "hash:ip"), ("b", "hash:ip,port"), ("m", "hash:ip")] {
            let mut args = vec!["create", name, ty, "family", fam];
            if name == "m" {
                args.push("skbinfo");
            }
            run("ipset", &args)?;
        }
    }
    if c.module == "CT" && c.words.iter().any(|w| w == "--timeout") {
        add_cttimeout("t1", c.family)?;
    }
    let table = c.table.name();
    if !c.table.builtin_chains().contains(&c.chain.as_str()) {
        run(ipt, &["-t", table, "-N", &c.chain])?;
    }
    let mut args = vec!["-t", table, "-A", &c.chain];
    args.extend(c.load.iter().map(String::as_str));
    run(ipt, &args)?;
    dumped_target(c)
}

#[derive(Default)]
struct Tally {
    cases: usize,
    equal: usize,
    unavailable: usize,
}

#[test]
fn compat_target_infos_match_iptables_nft() {
    let Some(dir) = vectors_dir() else {
        eprintln!("SKIP: conformance vectors not found (../shared/conformance)");
        return;
    };
    if Proc::new("iptables-nft").arg("--version").output().is_err() {
        eprintln!("SKIP: iptables-nft (the test oracle) is not installed");
        return;
    }
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    for c in cases(&dir) {
        let t = tally.entry(c.module.clone()).or_default();
        t.cases += 1;
        let line = format!(
            "{} [{:?} {} {}] {}",
            c.origin,
            c.family,
            c.table.name(),
            c.chain,
            c.words.join(" ")
        );
        let want = match expected(&c) {
            Ok(w) => w,
            Err(e) => {
                failures.push(format!("{line}: {e}"));
                continue;
            }
        };
        let unavailable = UNAVAILABLE.iter().find(|u| u.0 == c.module);
        let Some(got) = in_netns(move || load_and_dump(&c)) else {
            return;
        };
        let (name, rev, info) = match got {
            Ok(g) => g,
            Err(e) => {
                if let Some((_, why)) = unavailable {
                    t.unavailable += 1;
                    notes.push(format!("{line}: not loadable here ({why}): {e}"));
                } else {
                    failures.push(format!("{line}: {e}"));
                }
                continue;
            }
        };
        let user = USER_SIZE
            .iter()
            .find(|u| u.0 == name)
            .map_or(info.len(), |u| u.1);
        let same = name == want.name
            && rev == want.rev
            && info.len() == want.info.len()
            && info.len() >= user
            && info[..user] == want.info[..user];
        if same {
            t.equal += 1;
        } else {
            failures.push(format!(
                "{line}\n    kernel:   {name} rev {rev} {info:02x?}\n    nfkeeper: {} rev {} {:02x?}",
                want.name, want.rev, want.info
            ));
        }
    }
    println!(
        "\n{:<14} {:>6} {:>6} {:>12}",
        "module", "cases", "equal", "unavailable"
    );
    for (m, t) in &tally {
        println!(
            "{:<14} {:>6} {:>6} {:>12}",
            m, t.cases, t.equal, t.unavailable
        );
    }
    for n in &notes {
        println!("note: {n}");
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// errno values the kernel answers with.
const EINVAL: i32 = 22;
const ENOENT: i32 = 2;

/// The case's rule as nfkeeper parses it and its target's compat layout;
/// `None` for SET (its info needs the kernel's set indexes).
fn parsed_layout(c: &Case) -> Result<Option<(iptables::Rule, CompatInfo)>, String> {
    let mut argv: Vec<&str> = vec!["-A", &c.chain];
    argv.extend(c.words.iter().map(String::as_str));
    let o = ParseOpts {
        family: c.family,
        restore: true,
        table: Some(c.table),
        prog: "iptables",
    };
    let parsed = parse(&argv, o).map_err(|e| format!("nfkeeper refused it: {}", e.msg))?;
    let rule = parsed.rules.into_iter().next().ok_or("no rule")?;
    let Target::Ext(t) = &rule.target else {
        return Err("no target extension".into());
    };
    if matches!(&**t, iptables::ext::TargetExt::Set(_)) {
        return Ok(None);
    }
    let info = targets::layout(t, c.family).ok_or("no compat encoder")?;
    Ok(Some((rule, info)))
}

/// Load `info` as the only expression of a rule (with the rule's protocol
/// in NFTA_RULE_COMPAT) into nfkeeper's table for the case, in this
/// (fresh) namespace; the kernel's error codes.
fn load_in_nfkeeper_table(c: &Case, rule: &iptables::Rule, info: &CompatInfo) -> Vec<i32> {
    let fam = layout::nft_family(c.family);
    let tname = layout::table_name(c.table);
    let mut sock = Socket::open().expect("netlink socket");
    if c.module == "CT" && c.words.iter().any(|w| w == "--timeout") {
        add_cttimeout("t1", c.family).expect("cttimeout policy");
    }
    let mut b = sock.batch(None);
    b.add(&nft::Table::new(fam, &tname), 1);
    match layout::base_chain(c.table, &c.chain) {
        Some(bc) => b.add(
            &nft::Chain::base(fam, &tname, bc.name, bc.chain_type, bc.hook, bc.priority, 1),
            1,
        ),
        None => b.add(&nft::Chain::new(fam, &tname, &c.chain), 1),
    };
    let mut r = nft::Rule::new(
        fam,
        &tname,
        &c.chain,
        vec![Expr::Target {
            name: info.name.to_string(),
            rev: info.rev,
            info: info.info.clone(),
        }],
    );
    r.compat = Some(nft::RuleCompat::new(
        u32::from(rule.proto),
        rule.inverted(iptables::rule::inv::PROTO),
    ));
    b.add_rule(&r, nft::batch::Placement::Append, false, 2);
    let rep = sock.commit(&mut b).expect("commit");
    rep.outcome.errors.iter().map(|e| e.code).collect()
}

#[test]
fn table_bound_targets_are_refused_in_nfkeepers_tables() {
    let Some(dir) = vectors_dir() else {
        eprintln!("SKIP: conformance vectors not found (../shared/conformance)");
        return;
    };
    let mut failures = Vec::new();
    let mut seen: BTreeMap<&'static str, (bool, usize)> = BTreeMap::new();
    for c in cases(&dir) {
        let line = format!(
            "{} [{:?} {} {}] {}",
            c.origin,
            c.family,
            c.table.name(),
            c.chain,
            c.words.join(" ")
        );
        let (rule, info) = match parsed_layout(&c) {
            Ok(Some(x)) => x,
            Ok(None) => continue,
            Err(e) => {
                failures.push(format!("{line}: {e}"));
                continue;
            }
        };
        let bound = required_tables(Kind::Target, info.name).is_some();
        let unavailable = UNAVAILABLE.iter().find(|u| u.0 == c.module);
        let name = info.name;
        let Some(codes) = in_netns(move || load_in_nfkeeper_table(&c, &rule, &info)) else {
            return;
        };
        let entry = seen.entry(name).or_insert((bound, 0));
        entry.1 += 1;
        match (bound, codes.as_slice()) {
            (true, [code]) if *code == -EINVAL => {}
            (false, []) => {}
            // Not here at all (LED): nft_compat cannot find it.
            (false, [code]) if *code == -ENOENT && unavailable.is_some() => {}
            (_, codes) => failures.push(format!(
                "{line}: {} in nfkeeper's table, kernel errors {codes:?}",
                if bound {
                    "must be refused (EINVAL)"
                } else {
                    "must load"
                }
            )),
        }
    }
    println!("\n{:<14} {:>6} {:>6}", "target", "bound", "cases");
    for (n, (bound, cases)) in &seen {
        println!("{n:<14} {bound:>6} {cases:>6}");
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The match side: `rpfilter` (`struct xt_rpfilter_info { __u8 flags; }`,
/// revision 0, padded to 8) is refused in nfkeeper's raw and mangle
/// tables, while a match without a table restriction (`comment`,
/// `struct xt_comment_info { char comment[256]; }`) loads.
#[test]
fn table_bound_matches_are_refused_in_nfkeepers_tables() {
    let cases = [
        ("rpfilter", 0, vec![0u8; 8], true),
        ("comment", 0, vec![0u8; 256], false),
    ];
    for (name, rev, info, bound) in cases {
        assert_eq!(
            required_tables(Kind::Match, name).is_some(),
            bound,
            "{name}"
        );
        for table in [TableKind::Raw, TableKind::Mangle] {
            let m = Expr::Match {
                name: name.into(),
                rev,
                info: info.clone(),
            };
            let Some(codes) = in_netns(move || {
                let fam = nft::Family::Ipv4;
                let tname = layout::table_name(table);
                let bc = layout::base_chain(table, "PREROUTING").expect("PREROUTING");
                let mut sock = Socket::open().expect("netlink socket");
                let mut b = sock.batch(None);
                b.add(&nft::Table::new(fam, &tname), 1);
                b.add(
                    &nft::Chain::base(fam, &tname, bc.name, bc.chain_type, bc.hook, bc.priority, 1),
                    1,
                );
                let mut r = nft::Rule::new(fam, &tname, bc.name, vec![m]);
                r.compat = Some(nft::RuleCompat::new(0, false));
                b.add_rule(&r, nft::batch::Placement::Append, false, 2);
                let rep = sock.commit(&mut b).expect("commit");
                rep.outcome
                    .errors
                    .iter()
                    .map(|e| e.code)
                    .collect::<Vec<_>>()
            }) else {
                return;
            };
            let want: &[i32] = if bound { &[-EINVAL] } else { &[] };
            assert_eq!(codes, want, "{name} in {table:?}");
        }
    }
}
