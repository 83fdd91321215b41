//! Compiled runs in the kernel behave as the logical model: generated
//! rulesets restored with run compilation on, then random commands (-A,
//! -I, -R, -D by number and by spec, -Z, -F) applied both through a kernel
//! session and to a model-only table; after every step the kernel's
//! iptables-save must equal the model's, and a fresh session reading the
//! kernel back must list the same. Runs in a fresh network namespace;
//! skips without root.

mod common;

use classify::gen::{self, Rng};
use compile::runs::RunOpts;
use iptables::exec::{execute_owned, restore, RestoreOpts};
use iptables::parse::{parse, restore::tokenize, ParseOpts};
use keeper::Session;
use ruleset::{Family, Ruleset, TableKind};
use testkit::in_netns;

/// Settings compiling runs of at least `min_len` rules.
fn runs(min_len: usize) -> keeper::Settings {
    keeper::Settings {
        compile: Some(RunOpts {
            min_len,
            numgen: true,
        }),
        ..Default::default()
    }
}

const SEEDS: u64 = 25;
const STEPS: usize = 30;

/// How the tests parse an `iptables` command line.
fn cmd_opts() -> ParseOpts<'static> {
    ParseOpts::command(Family::Ipv4, "iptables")
}

fn ropts() -> RestoreOpts<'static> {
    RestoreOpts::new(Family::Ipv4, "iptables-restore")
}

/// Rule bodies (after `-A CHAIN`) per chain from a generated ruleset.
fn pool(text: &str, chain: &str) -> Vec<String> {
    let head = format!("-A {chain} ");
    text.lines()
        .filter_map(|l| l.strip_prefix(&head).map(|b| format!(" {b}")))
        .collect()
}

/// One random command against the model's current state, as argv.
fn command(
    r: &mut Rng,
    rs: &Ruleset<iptables::Rule>,
    pools: &[(String, Vec<String>)],
) -> Vec<String> {
    let t = rs.table(Family::Ipv4, TableKind::Filter);
    let (chain, bodies) = &pools[r.below(pools.len() as u64) as usize];
    let len = t.chain(chain).map(|c| c.len).unwrap_or(0);
    let body = bodies
        .get(r.below(bodies.len().max(1) as u64) as usize)
        .cloned()
        .unwrap_or_else(|| " -j ACCEPT".to_string());
    let at = |r: &mut Rng, extra: usize| (r.below((len + extra).max(1) as u64) + 1).to_string();
    let mut argv: Vec<String> = match r.below(10) {
        0 | 1 => vec!["-A".into(), chain.clone()],
        2 | 3 => vec!["-I".into(), chain.clone(), at(r, 1)],
        4 => vec!["-R".into(), chain.clone(), at(r, 0)],
        5 | 6 => vec!["-D".into(), chain.clone(), at(r, 0)],
        7 | 8 => {
            // Delete by spec an existing rule when there is one.
            let existing: Vec<String> = t
                .rules(chain)
                .map(|it| {
                    it.map(|x| {
                        let mut s = String::new();
                        iptables::print::save::save_rule_body(
                            &mut s,
                            Family::Ipv4,
                            x.body,
                            Default::default(),
                            iptables::print::save::CounterStyle::None,
                        );
                        s
                    })
                    .collect()
                })
                .unwrap_or_default();
            let b = if existing.is_empty() {
                body.clone()
            } else {
                existing[r.below(existing.len() as u64) as usize].clone()
            };
            let mut v = vec!["-D".into(), chain.clone()];
            v.extend(tokenize(&b).expect("tokens"));
            return v;
        }
        _ => {
            if r.pct(50) {
                vec!["-Z".into(), chain.clone()]
            } else {
                vec!["-F".into(), chain.clone()]
            }
        }
    };
    if matches!(argv[0].as_str(), "-A" | "-I" | "-R") {
        argv.extend(tokenize(&body).expect("tokens"));
    }
    argv
}

#[test]
fn compiled_runs_follow_the_model() {
    let done = in_netns(|| {
        let mut compiled_runs = 0usize;
        for seed in 0..SEEDS {
            let mut r = Rng::new(seed + 100);
            let n = 20 + r.below(60) as usize;
            let text = gen::ruleset(&mut r, n);
            let other = gen::ruleset(&mut r, 200);
            let pools: Vec<(String, Vec<String>)> = ["FORWARD", "INPUT", "U0", "U1", "U2", "U3"]
                .iter()
                .map(|c| (c.to_string(), pool(&other, c)))
                .collect();
            let mut model: Ruleset<iptables::Rule> = Ruleset::new();
            restore(&mut model, &text, &ropts()).expect("model restore");
            let mut s = Session::open(Family::Ipv4, runs(2)).expect("session");
            s.restore(&text, &ropts()).unwrap_or_else(|e| {
                panic!("seed {seed}: {}\n{text}", e.render("iptables-restore"))
            });
            let sets = std::process::Command::new("nft")
                .args(["list", "sets", "ip"])
                .output()
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .matches("__nfk_run")
                        .count()
                })
                .unwrap_or(0);
            compiled_runs += sets;
            assert_eq!(
                common::kernel_save(&mut s, false),
                common::model_save(&model, false),
                "seed {seed} after restore\n{text}"
            );
            no_differences(&format!("seed {seed} after restore\n{text}"));
            let mut log = String::new();
            for step in 0..STEPS {
                let argv = command(&mut r, &model, &pools);
                let words: Vec<&str> = argv.iter().map(String::as_str).collect();
                log.push_str(&format!("{}\n", words.join(" ")));
                let o = cmd_opts();
                let Ok(p) = parse(&words, o) else { continue };
                let want = execute_owned(
                    model.table_mut(Family::Ipv4, TableKind::Filter),
                    p.clone(),
                    &mut String::new(),
                );
                let mut s2 =
                    Session::open(Family::Ipv4, keeper::Settings::default()).expect("session");
                let got = s2.iptables(p);
                assert_eq!(
                    want.is_ok(),
                    got.is_ok(),
                    "seed {seed} step {step}: model {want:?} kernel {got:?}\n{log}\n{text}"
                );
                let (k, m) = (
                    common::kernel_save(&mut s2, false),
                    common::model_save(&model, false),
                );
                assert_eq!(k, m, "seed {seed} step {step}\n{log}\n{text}");
                no_differences(&format!("seed {seed} step {step}\n{log}\n{text}"));
            }
        }
        // The generated rulesets must actually compile runs (counted with
        // nft as the oracle, when it is installed).
        if have_nft() {
            assert!(compiled_runs >= SEEDS as usize, "only {compiled_runs} runs");
        } else {
            eprintln!("SKIP: run count check needs nft (apt-get install nftables)");
        }
    });
    if done.is_none() {
        eprintln!("SKIP: compiled_runs_follow_the_model needs root");
    }
}

/// `verify` finds the kernel's filter table to be exactly what its
/// logical rules compile to.
fn no_differences(context: &str) {
    let mut sock = keeper::verify::socket().expect("socket");
    let rep = keeper::verify::verify_table(&mut sock, Family::Ipv4, TableKind::Filter)
        .expect("verify")
        .expect("the table exists");
    assert!(
        rep.diffs.is_empty(),
        "verify: {}\n{context}",
        rep.diffs.join("\n")
    );
}

/// Whether the `nft` binary (the oracle for run sets) is installed.
fn have_nft() -> bool {
    std::process::Command::new("nft")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Sets named `__nfk_run…` in the namespace and their element counts.
fn run_sets() -> Vec<usize> {
    let out = std::process::Command::new("nft")
        .args(["-j", "list", "sets", "ip"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut v = Vec::new();
    for name in out.split("\"name\": \"").skip(1) {
        if !name.starts_with("__nfk_run") {
            continue;
        }
        let n = name.split_once('"').map(|x| x.0).unwrap_or_default();
        let l = std::process::Command::new("nft")
            .args(["list", "set", "ip", "nfkeeper_filter", n])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        v.push(l.matches("counter packets").count());
    }
    v
}

#[test]
fn appends_join_and_start_runs() {
    let done = in_netns(|| {
        let mut model: Ruleset<iptables::Rule> = Ruleset::new();
        // (command, run sizes expected after it)
        let mut steps: Vec<(String, Vec<usize>)> = Vec::new();
        for i in 1..=3 {
            steps.push((format!("-A FORWARD -s 10.0.0.{i} -j ACCEPT"), vec![]));
        }
        // The fourth compatible rule makes the chain's last four a run.
        steps.push(("-A FORWARD -s 10.0.0.4 -j ACCEPT".into(), vec![4]));
        for i in 5..=9 {
            steps.push((format!("-A FORWARD -s 10.0.0.{i} -j ACCEPT"), vec![i]));
        }
        // A key already in the run: a plain rule after it.
        steps.push(("-A FORWARD -s 10.0.0.2 -j ACCEPT".into(), vec![9]));
        // Another shape: plain; then four of it start a second run.
        for i in 1..=3 {
            steps.push((
                format!("-A FORWARD -d 10.1.0.{i} -p tcp -m tcp --dport 80 -j DROP"),
                vec![9],
            ));
        }
        steps.push((
            "-A FORWARD -d 10.1.0.4 -p tcp -m tcp --dport 80 -j DROP".into(),
            vec![9, 4],
        ));
        // Deleting members and inserting in front keep the model's order.
        steps.push(("-D FORWARD -s 10.0.0.5/32 -j ACCEPT".into(), vec![8, 4]));
        steps.push(("-I FORWARD 1 -s 10.9.9.9 -j ACCEPT".into(), vec![8, 4]));
        steps.push((
            "-A FORWARD -d 10.1.0.5 -p tcp -m tcp --dport 80 -j DROP".into(),
            vec![8, 5],
        ));
        // Flushes read only the chain's name; the run sets of the flushed
        // chain go with its rules, the others stay.
        steps.push(("-N U".into(), vec![8, 5]));
        for i in 1..=4 {
            let want = if i < 4 { vec![8, 5] } else { vec![8, 5, 4] };
            steps.push((format!("-A U -i eth{i} -j RETURN"), want));
        }
        steps.push(("-F U".into(), vec![8, 5]));
        steps.push(("-X U".into(), vec![8, 5]));
        // An inserted rule has a newer id than the rules after it: it can't
        // become a member with them (members list in id order).
        steps.push(("-N V".into(), vec![8, 5]));
        steps.push(("-A V -s 10.5.0.1 -j ACCEPT".into(), vec![8, 5]));
        steps.push(("-I V 1 -s 10.5.0.2 -j ACCEPT".into(), vec![8, 5]));
        steps.push(("-A V -s 10.5.0.3 -j ACCEPT".into(), vec![8, 5]));
        steps.push(("-A V -s 10.5.0.4 -j ACCEPT".into(), vec![8, 5]));
        steps.push(("-A V -s 10.5.0.5 -j ACCEPT".into(), vec![8, 5, 4]));
        // Prefixes (touching, and a /23) become an interval run; a later
        // prefix stays a plain rule; a delete takes a member and its end
        // marker (verify checks the markers).
        steps.push(("-N W".into(), vec![8, 5, 4]));
        for net in ["10.7.0.0/24", "10.7.1.0/24", "10.7.2.0/23"] {
            steps.push((format!("-A W -d {net} -j DROP"), vec![8, 5, 4]));
        }
        steps.push(("-A W -d 10.7.4.0/24 -j DROP".into(), vec![8, 5, 4, 4]));
        steps.push(("-A W -d 10.7.9.0/24 -j DROP".into(), vec![8, 5, 4, 4]));
        steps.push(("-D W -d 10.7.1.0/24 -j DROP".into(), vec![8, 5, 4, 3]));
        steps.push(("-Z W".into(), vec![8, 5, 4, 3]));
        steps.push(("-F".into(), vec![]));
        for (i, (cmd, want)) in steps.iter().enumerate() {
            let words: Vec<&str> = cmd.split(' ').collect();
            let o = cmd_opts();
            let p = parse(&words, o).expect("parse");
            execute_owned(
                model.table_mut(Family::Ipv4, TableKind::Filter),
                p.clone(),
                &mut String::new(),
            )
            .expect("model");
            let mut s = Session::open(Family::Ipv4, runs(4)).expect("session");
            s.iptables(p)
                .unwrap_or_else(|e| panic!("step {i} {cmd}: {e:?}"));
            assert_eq!(
                common::kernel_save(&mut s, false),
                common::model_save(&model, false),
                "step {i} {cmd}"
            );
            no_differences(&format!("step {i} {cmd}"));
            if !have_nft() {
                continue;
            }
            let mut got = run_sets();
            got.sort_unstable();
            let mut want = want.clone();
            want.sort_unstable();
            assert_eq!(got, want, "step {i} {cmd}: run sizes");
        }
    });
    if done.is_none() {
        eprintln!("SKIP: appends_join_and_start_runs needs root");
    }
}

/// `-D` by spec and `-C` read, of a run, only the element with the rule's
/// key: a probed read holds that one member (or none), marked partial.
#[test]
fn probes_read_one_member_of_a_run() {
    let done = in_netns(|| {
        let mut text = String::from(
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n",
        );
        for i in 1..=50 {
            text.push_str(&format!("-A FORWARD -s 10.0.0.{i}/32 -j ACCEPT\n"));
        }
        text.push_str("COMMIT\n");
        let mut s = Session::open(Family::Ipv4, runs(4)).expect("session");
        s.restore(&text, &ropts()).expect("restore");
        let rule = |spec: &str| {
            let line = format!("-D FORWARD {spec}");
            let words: Vec<&str> = line.split(' ').collect();
            let o = cmd_opts();
            parse(&words, o).expect("parse").rules.remove(0)
        };
        let scope = keeper::read::Scope::Part {
            names: vec!["FORWARD".into()],
            rules_of: vec!["FORWARD".into()],
            targets: Vec::new(),
        };
        let mut sock = nft::Socket::open().expect("socket");
        // (probe, members read)
        let cases: [(Option<&str>, usize); 4] = [
            (None, 50),
            (Some("-s 10.0.0.7/32 -j ACCEPT"), 1),
            (Some("-s 10.0.0.99/32 -j ACCEPT"), 0),
            // Another shape: no member can equal it, nothing is read.
            (Some("-s 10.0.0.7/32 -j DROP"), 0),
        ];
        for (probe, want) in cases {
            let p = probe.map(rule);
            let snap = keeper::read::read_scoped_probe(
                &mut sock,
                Family::Ipv4,
                TableKind::Filter,
                &scope,
                p.as_ref(),
            )
            .expect("read");
            assert_eq!(snap.runs.len(), 1, "{probe:?}");
            assert_eq!(snap.runs[0].members.len(), want, "{probe:?}");
            assert_eq!(snap.runs[0].partial, probe.is_some(), "{probe:?}");
            assert_eq!(snap.table.rules("FORWARD").unwrap().count(), want);
        }
        // Through the session: delete one by spec, check the rest.
        let cmd = |s: &mut Session, c: &str| {
            let words: Vec<&str> = c.split(' ').collect();
            let o = cmd_opts();
            s.iptables(parse(&words, o).expect("parse"))
        };
        cmd(&mut s, "-D FORWARD -s 10.0.0.7/32 -j ACCEPT").expect("delete");
        assert!(cmd(&mut s, "-C FORWARD -s 10.0.0.7/32 -j ACCEPT").is_err());
        assert!(cmd(&mut s, "-C FORWARD -s 10.0.0.8/32 -j ACCEPT").is_ok());
        assert!(cmd(&mut s, "-D FORWARD -s 10.0.0.7/32 -j ACCEPT").is_err());
        let save = common::kernel_save(&mut s, false);
        assert_eq!(save.matches("-A FORWARD").count(), 49, "{save}");
        assert!(!save.contains("10.0.0.7/32"), "{save}");
    });
    if done.is_none() {
        eprintln!("SKIP: probes_read_one_member_of_a_run needs root");
    }
}

/// A `--noflush` restore's `:CHAIN` line flushes an existing chain: its
/// run sets go with its rules (the restore reads only the chain's name),
/// other chains' runs stay.
#[test]
fn noflush_restore_flushes_run_sets() {
    let done = in_netns(|| {
        let mut text = String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:U - [0:0]\n");
        for i in 1..=6 {
            text.push_str(&format!("-A U -s 10.0.0.{i}/32 -j ACCEPT\n"));
            text.push_str(&format!("-A FORWARD -d 10.1.0.{i}/32 -j DROP\n"));
        }
        text.push_str("COMMIT\n");
        let mut s = Session::open(Family::Ipv4, runs(4)).expect("session");
        s.restore(&text, &ropts()).expect("restore");
        if !have_nft() {
            eprintln!(
                "SKIP: noflush_restore_flushes_run_sets needs nft (apt-get install nftables)"
            );
            return;
        }
        assert_eq!(run_sets(), vec![6, 6]);
        let o = RestoreOpts {
            noflush: true,
            ..ropts()
        };
        s.restore(
            "*filter\n:U - [0:0]\n-A U -s 10.9.0.1/32 -j ACCEPT\nCOMMIT\n",
            &o,
        )
        .expect("noflush restore");
        assert_eq!(run_sets(), vec![6]);
        let save = common::kernel_save(&mut s, false);
        assert_eq!(save.matches("-A U ").count(), 1, "{save}");
        assert_eq!(save.matches("-A FORWARD ").count(), 6, "{save}");
    });
    if done.is_none() {
        eprintln!("SKIP: noflush_restore_flushes_run_sets needs root");
    }
}
