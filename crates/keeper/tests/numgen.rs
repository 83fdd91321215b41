//! kube-proxy's endpoint selection compiled into one `numgen random mod
//! k` verdict map behaves as the logical rules: a scenario of restores
//! (plain and `--noflush` rewrites, as kube-proxy's syncs), appends,
//! inserts, deletes by number and by spec, checks and counter resets, run
//! on a kernel session and on a model-only table; after every step the
//! kernel's iptables-save equals the model's, `verify` finds nothing, and
//! the kernel holds the numgen maps expected (read with `nft`). Runs in a
//! fresh network namespace; skips without root.

mod common;

use compile::runs::RunOpts;
use iptables::exec::{execute_owned, restore, RestoreOpts};
use iptables::parse::{parse, ParseOpts};
use keeper::Session;
use ruleset::{Family, Ruleset, TableKind};
use testkit::in_netns;

fn settings() -> keeper::Settings {
    keeper::Settings {
        compile: Some(RunOpts {
            numgen: true,
            ..RunOpts::default()
        }),
        ..Default::default()
    }
}

fn ropts(noflush: bool) -> RestoreOpts<'static> {
    RestoreOpts {
        noflush,
        counters: true,
        ..RestoreOpts::new(Family::Ipv4, "iptables-restore")
    }
}

/// Whether the `nft` binary (the oracle for the maps) is installed.
fn have_nft() -> bool {
    std::process::Command::new("nft")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The moduli of the numgen maps of the filter table (sorted), as `nft`
/// lists them.
fn numgen_maps() -> Vec<u32> {
    let o = std::process::Command::new("nft")
        .args(["list", "table", "ip", "nfkeeper_filter"])
        .output()
        .expect("nft");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let mut v: Vec<u32> = text
        .split("numgen random mod ")
        .skip(1)
        .filter_map(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

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

/// kube-proxy's service chain SVC over endpoints `eps` (SEP-x chains),
/// probabilities at `decimals` decimals, counters `[1:100]` each.
fn svc(eps: &[&str], decimals: usize) -> String {
    let n = eps.len();
    let mut out = String::from("-A SVC -s 10.0.0.0/8 -j ACCEPT\n");
    for (k, e) in eps.iter().enumerate() {
        if k + 1 < n {
            out.push_str(&format!(
                "[1:100] -A SVC -m comment --comment \"to {e}\" -m statistic --mode random --probability {:.decimals$} -j SEP-{e}\n",
                1.0 / (n - k) as f64
            ));
        } else {
            out.push_str(&format!(
                "[1:100] -A SVC -m comment --comment \"to {e}\" -j SEP-{e}\n"
            ));
        }
    }
    out
}

enum Step {
    Restore(String, bool),
    Cmd(&'static str),
}

#[test]
fn numgen_maps_follow_the_model() {
    let done = in_netns(|| {
        let mut head = String::from(
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:SVC - [0:0]\n",
        );
        for e in ["A", "B", "C", "D"] {
            head.push_str(&format!(":SEP-{e} - [0:0]\n-A SEP-{e} -j ACCEPT\n"));
        }
        head.push_str("-A FORWARD -j SVC\n");
        let partial =
            |eps: &[&str], d: usize| format!("*filter\n:SVC - [0:0]\n{}COMMIT\n", svc(eps, d));
        // (step, numgen moduli expected after it)
        let steps: Vec<(Step, Vec<u32>)> = vec![
            (
                Step::Restore(format!("{head}{}COMMIT\n", svc(&["A", "B", "C"], 10)), false),
                vec![3],
            ),
            (Step::Cmd("-C SVC -m comment --comment \"to B\" -m statistic --mode random --probability 0.50000000000 -j SEP-B"), vec![3]),
            (Step::Cmd("-Z SVC 3"), vec![3]),
            (Step::Cmd("-A SVC -j DROP"), vec![3]),
            (Step::Cmd("-D SVC 5"), vec![3]),
            // In front of the group: before its rule.
            (Step::Cmd("-I SVC 2 -j LOG"), vec![3]),
            // Inside the group, a member deleted: plain rules.
            (Step::Cmd("-I SVC 4 -j LOG"), vec![]),
            (Step::Cmd("-D SVC 4"), vec![]),
            // kube-proxy's partial sync: the chain rewritten.
            (Step::Restore(partial(&["A", "B"], 10), true), vec![2]),
            (Step::Restore(partial(&["A", "B", "C", "D"], 11), true), vec![4]),
            (Step::Restore(partial(&["A", "B", "C", "D"], 11), true), vec![4]),
            (Step::Restore(partial(&["D", "A", "B", "C"], 10), true), vec![4]),
            (Step::Cmd("-D SVC -m comment --comment \"to A\" -m statistic --mode random --probability 0.33333333349 -j SEP-A"), vec![]),
            (Step::Restore(partial(&["A", "B", "C"], 10), true), vec![3]),
            (Step::Cmd("-D SVC 4"), vec![]),
            // Not kube-proxy's exact split: the first rule stays plain.
            (
                Step::Restore(
                    "*filter\n:SVC - [0:0]\n-A SVC -m statistic --mode random --probability 0.33333 -j SEP-A\n-A SVC -m statistic --mode random --probability 0.5 -j SEP-B\n-A SVC -j SEP-C\nCOMMIT\n".into(),
                    true,
                ),
                vec![2],
            ),
            // Appends that complete a group.
            (Step::Cmd("-F SVC"), vec![]),
            (Step::Cmd("-A SVC -m statistic --mode random --probability 0.3333333333 -j SEP-A"), vec![]),
            (Step::Cmd("-A SVC -m statistic --mode random --probability 0.5 -j SEP-B"), vec![]),
            (Step::Cmd("-A SVC -j SEP-C"), vec![3]),
            (Step::Cmd("-A SVC -j SEP-D"), vec![3]),
            (Step::Cmd("-R SVC 2 -m statistic --mode random --probability 0.5 -j SEP-A"), vec![]),
        ];
        let have_nft = have_nft();
        let mut model: Ruleset<iptables::Rule> = Ruleset::new();
        for (i, (step, want)) in steps.iter().enumerate() {
            let mut s = Session::open(Family::Ipv4, settings()).expect("session");
            let what = match step {
                Step::Restore(text, noflush) => {
                    restore(&mut model, text, &ropts(*noflush)).expect("model restore");
                    s.restore(text, &ropts(*noflush))
                        .unwrap_or_else(|e| panic!("step {i}: {}", e.render("iptables-restore")));
                    text.clone()
                }
                Step::Cmd(line) => {
                    let words = iptables::parse::restore::tokenize(line).expect("tokens");
                    let words: Vec<&str> = words.iter().map(String::as_str).collect();
                    let p =
                        parse(&words, ParseOpts::command(Family::Ipv4, "iptables")).expect("parse");
                    let m = execute_owned(
                        model.table_mut(Family::Ipv4, TableKind::Filter),
                        p.clone(),
                        &mut String::new(),
                    );
                    let k = s.iptables(p);
                    assert_eq!(m.is_ok(), k.is_ok(), "step {i} {line}: {m:?} {k:?}");
                    line.to_string()
                }
            };
            assert_eq!(
                common::kernel_save(&mut s, true),
                common::model_save(&model, true),
                "step {i}: {what}"
            );
            no_differences(&format!("step {i}: {what}"));
            if have_nft {
                assert_eq!(numgen_maps(), *want, "step {i}: {what}");
            }
        }
        if !have_nft {
            eprintln!("SKIP: the numgen map checks need nft (apt-get install nftables)");
        }
    });
    if done.is_none() {
        eprintln!("SKIP: numgen_maps_follow_the_model needs root");
    }
}
