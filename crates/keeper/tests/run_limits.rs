//! Runs are at most `compile::runs::MAX_LEN` members long, however they
//! grow: a restore cuts a long sequence into consecutive runs, and direct
//! mode's appends do not join a full run (they start the next one). Every
//! step leaves `verify` clean and the save equal to the input's rules.

use compile::runs::{RunOpts, MAX_LEN};
use iptables::exec::RestoreOpts;
use iptables::parse::{parse, ParseOpts};
use keeper::verify::socket;
use keeper::Session;
use ruleset::{Family, TableKind};
use testkit::in_netns;

mod rewrite_support;
use rewrite_support::{assert_clean, run_sizes};

fn rule(i: usize) -> String {
    format!(
        "-A X -s 10.{}.{}.{}/32 -j ACCEPT",
        i >> 16,
        (i >> 8) & 255,
        i & 255
    )
}

#[test]
fn runs_stop_at_max_len() {
    // (rules restored, rules appended one command each, run sizes after).
    const CASES: &[(usize, usize, &[usize])] = &[
        (MAX_LEN, 1, &[MAX_LEN]),
        (MAX_LEN, 16, &[16, MAX_LEN]),
        (MAX_LEN + 20, 0, &[20, MAX_LEN]),
        (MAX_LEN + 20, 3, &[23, MAX_LEN]),
    ];
    let done = in_netns(|| {
        for &(restored, appended, want) in CASES {
            let settings = keeper::Settings {
                compile: Some(RunOpts::default()),
                ..Default::default()
            };
            let mut s = Session::open(Family::Ipv4, settings).expect("session");
            let mut input = String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:X - [0:0]\n");
            for i in 0..restored {
                input.push_str(&rule(i));
                input.push('\n');
            }
            input.push_str("COMMIT\n");
            s.restore(&input, &RestoreOpts::new(Family::Ipv4, "iptables-restore"))
                .unwrap_or_else(|e| panic!("{}", e.render("iptables-restore")));
            for i in restored..restored + appended {
                let line = rule(i);
                let words: Vec<&str> = line.split(' ').collect();
                let p = parse(&words, ParseOpts::command(Family::Ipv4, "iptables")).expect("parse");
                s.iptables(p).unwrap_or_else(|e| panic!("{line}: {e}"));
            }
            let what = format!("{restored} restored + {appended} appended");
            assert_eq!(run_sizes(&mut socket().expect("socket")), want, "{what}");
            assert_clean(&mut socket().expect("socket"), &what);
            let saved = s.save_text(false, Some(TableKind::Filter)).expect("save");
            let rules: Vec<&str> = saved.lines().filter(|l| l.starts_with("-A X ")).collect();
            assert_eq!(rules.len(), restored + appended, "{what}");
            for (i, l) in rules.iter().enumerate() {
                assert_eq!(*l, rule(i), "{what}: rule {}", i + 1);
            }
        }
    });
    if done.is_none() {
        eprintln!("SKIP: runs_stop_at_max_len needs root");
    }
}
