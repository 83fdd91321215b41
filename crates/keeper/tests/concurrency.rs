//! Direct-mode writers in parallel (each with its own netlink socket, as
//! separate `iptables` processes would be): every one of them succeeds —
//! a commit that finds the ruleset changed since its read is read again
//! and replayed, as iptables-nft does — and the result is exactly the sum
//! of their work. Kernel test in a fresh network namespace.

use iptables::parse::{parse, ParseOpts};
use keeper::{Session, Settings};
use ruleset::Family;

const WRITERS: usize = 8;
const EACH: usize = 40;

fn command(s: &mut Session, line: &str) -> Result<String, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let p = parse(&words, ParseOpts::command(Family::Ipv4, "iptables")).map_err(|e| e.msg)?;
    s.iptables(p).map_err(|e| e.to_string())
}

/// (command per writer and step, what must be left in chain X after).
type Case = (fn(usize, usize) -> String, usize);

#[test]
fn parallel_direct_writers_all_succeed() {
    let cases: &[(&str, Case)] = &[
        (
            "appends",
            (
                |w, i| format!("-A X -s 10.{w}.0.{i} -j ACCEPT"),
                WRITERS * EACH,
            ),
        ),
        (
            "deletes by spec",
            (|w, i| format!("-D X -s 10.{w}.0.{i} -j ACCEPT"), 0),
        ),
        (
            "head inserts",
            (
                |w, i| format!("-I X -s 10.{w}.1.{i} -j DROP"),
                WRITERS * EACH,
            ),
        ),
    ];
    testkit::in_netns(move || {
        let mut s = Session::open(Family::Ipv4, Settings::default()).expect("netlink");
        command(&mut s, "-N X").expect("-N X");
        for (name, (cmd, left)) in cases {
            let threads: Vec<_> = (0..WRITERS)
                .map(|w| {
                    let cmd = *cmd;
                    std::thread::spawn(move || {
                        let mut s =
                            Session::open(Family::Ipv4, Settings::default()).expect("netlink");
                        (0..EACH)
                            .filter_map(|i| command(&mut s, &cmd(w, i)).err())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let errors: Vec<String> = threads
                .into_iter()
                .flat_map(|t| t.join().expect("writer"))
                .collect();
            assert!(
                errors.is_empty(),
                "{name}: {} failed: {:?}",
                errors.len(),
                &errors[..errors.len().min(3)]
            );
            let listed = command(&mut s, "-S X").expect("-S X");
            assert_eq!(listed.lines().count() - 1, *left, "{name}");
        }
    });
}
