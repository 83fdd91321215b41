//! Runs of `-m multiport --dports` rules: a member is an element per port
//! of one set, each carrying the member's id; listings, counters, rule
//! numbers, deletes, joins, `-Z` and `verify` treat the member as one
//! rule. Each step is checked against the model-only result of the same
//! commands (`iptables-save -c` text); on the fake kernel and, as root, in
//! a fresh network namespace. A port element deleted behind nfkeeper's
//! back is reported by `verify`.

use compile::runs::RunOpts;
use iptables::exec::{execute_owned, RestoreOpts};
use iptables::parse::{parse, ParseOpts};
use keeper::{Session, Settings};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};

const SETUP: &str = "*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
[1:10] -A INPUT -p tcp -m multiport --dports 80,443 -j DROP
[2:20] -A INPUT -p tcp -m multiport --dports 22,8080,9 -j DROP
[3:30] -A INPUT -p tcp -m multiport --dports 25 -m comment --comment m -j DROP
[4:40] -A INPUT -p tcp -m multiport --dports 26,27 -j DROP
[5:50] -A INPUT -p udp -m multiport --dports 53,5353 -j ACCEPT
[6:60] -A INPUT -p udp -m multiport --dports 67,68 -j DROP
COMMIT
";

/// (command, the kernel rules of INPUT after it: one per plain rule or
/// run). Each command is applied to the model too and the saves compared.
const STEPS: &[(&str, usize)] = &[
    // Two runs: the tcp set run, the udp verdict map.
    ("-S INPUT", 2),
    ("-D INPUT 2", 2),
    ("-D INPUT -p tcp -m multiport --dports 26,27 -j DROP", 2),
    // Appended after the udp map: a new tcp member starts no run alone.
    ("-A INPUT -p tcp -m multiport --dports 30,31,32 -j DROP", 3),
    ("-A INPUT -p tcp -m multiport --dports 33,34 -j DROP", 3),
    // A port the run has: the rule stays plain.
    ("-A INPUT -p tcp -m multiport --dports 31,35 -j DROP", 4),
    ("-Z INPUT 1", 4),
    // A replaced member leaves its run as a plain rule in its place (the
    // map's other member stays a run of one).
    ("-R INPUT 3 -p udp -m multiport --dports 69,70 -j ACCEPT", 5),
    ("-Z INPUT", 5),
    // Found by a probe of the member's first port.
    ("-C INPUT -p tcp -m multiport --dports 33,34 -j DROP", 5),
    ("-D INPUT 1", 5),
];

fn settings() -> Settings {
    Settings {
        compile: Some(RunOpts {
            min_len: 2,
            numgen: false,
        }),
        ..Default::default()
    }
}

fn save(open: &dyn Fn() -> Socket) -> String {
    Session::with_socket(open(), Family::Ipv4, settings())
        .save_text(true, Some(TableKind::Filter))
        .expect("save")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn model_save(rs: &Ruleset<iptables::Rule>) -> String {
    let mut out = String::new();
    iptables::exec::save_table(rs.table(Family::Ipv4, TableKind::Filter), true, &mut out);
    out.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `open` opens a socket; `kernel_rules` counts INPUT's kernel rules.
fn run(open: &dyn Fn() -> Socket, kernel_rules: &dyn Fn() -> usize) {
    let mut o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    o.counters = true;
    Session::with_socket(open(), Family::Ipv4, settings())
        .restore(SETUP, &o)
        .expect("setup");
    let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
    iptables::exec::restore(&mut rs, SETUP, &o).expect("model setup");
    assert_eq!(save(open), model_save(&rs), "setup");
    for (cmd, rules) in STEPS {
        let words: Vec<&str> = cmd.split(' ').collect();
        let p = parse(&words, ParseOpts::command(Family::Ipv4, "iptables")).expect("parse");
        Session::with_socket(open(), Family::Ipv4, settings())
            .iptables(p.clone())
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
        let t = rs.table_mut(Family::Ipv4, TableKind::Filter);
        execute_owned(t, p, &mut String::new()).expect("model");
        assert_eq!(save(open), model_save(&rs), "after {cmd}");
        assert_eq!(kernel_rules(), *rules, "after {cmd}: kernel rules");
        let rep = keeper::verify::verify_table(&mut open(), Family::Ipv4, TableKind::Filter)
            .expect("verify")
            .expect("the table exists");
        assert!(
            rep.diffs.is_empty(),
            "after {cmd}: {}",
            rep.diffs.join("\n")
        );
    }
}

/// Delete port `port` of the first run set behind nfkeeper's back: verify
/// names the missing port.
fn tamper(open: &dyn Fn() -> Socket, port: u16) {
    let mut sock = open();
    let sets = sock
        .sets(nft::Family::Ipv4, Some("nfkeeper_filter"))
        .expect("sets");
    let key = port.to_be_bytes();
    let set = sets
        .iter()
        .filter(|s| s.name.starts_with(compile::runs::SET_PREFIX))
        .find(|s| {
            sock.set_elems(nft::Family::Ipv4, "nfkeeper_filter", &s.name)
                .expect("elements")
                .iter()
                .any(|e| e.key.as_deref() == Some(&key[..]))
        })
        .expect("the run holding the port");
    let mut b = sock.batch(None);
    let es = nft::SetElems::new(
        nft::Family::Ipv4,
        "nfkeeper_filter",
        &set.name,
        vec![nft::SetElem::key(&key)],
    );
    b.delete(&es, 0);
    assert!(sock.commit(&mut b).expect("commit").outcome.is_ok());
    let rep = keeper::verify::verify_table(&mut open(), Family::Ipv4, TableKind::Filter)
        .expect("verify")
        .expect("the table exists");
    assert!(
        rep.diffs.iter().any(|d| d.contains("port elements")),
        "{:?}",
        rep.diffs
    );
}

#[test]
fn multiport_runs_on_the_fake_kernel() {
    let k = fakekernel::Kernel::new();
    let rules = || k.rules(nft::Family::Ipv4, "nfkeeper_filter", "INPUT").len();
    run(&|| k.socket(), &rules);
    tamper(&|| k.socket(), 34);
}

#[test]
fn multiport_runs_on_the_kernel() {
    let done = testkit::in_netns(|| {
        let open = || Socket::open().expect("socket");
        let rules = || {
            let mut n = 0;
            open()
                .rules(
                    nft::Family::Ipv4,
                    Some("nfkeeper_filter"),
                    Some("INPUT"),
                    |_| {
                        n += 1;
                        Ok(())
                    },
                )
                .expect("dump");
            n
        };
        run(&open, &rules);
        tamper(&open, 34);
    });
    if done.is_none() {
        eprintln!("SKIP: multiport_runs_on_the_kernel needs root");
    }
}
