//! The "kernel floor": wall time of single-object transactions through this
//! crate, each scenario in its own fresh network namespace (checked; the
//! example refuses to run otherwise). Prints the median of several runs, µs.
//!
//! `cargo run --release -p nfk-nft --example floor [-- --big] [-- --userdata]`
//!
//! `--userdata`: one rule appended to a 100k-rule chain whose rules carry
//! userdata (an 8-byte id and the rule's iptables text, as nfkeeper writes
//! them) against the same rules without: what the kernel's per-commit chain
//! rebuild pays for the larger rule objects.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use nft::batch::Placement;
use nft::chain::{hook, POLICY_ACCEPT};
use nft::expr::base;
use nft::{Chain, Expr, Family, Rule, Set, SetElem, SetElems, Socket, Table, Verdict};

const F: Family = Family::Ipv4;
const REPS: usize = 21;

/// Runs `f` on a thread inside a fresh netns; exits the process if that
/// cannot be guaranteed.
fn in_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(move || {
        let before = std::fs::read_link("/proc/thread-self/ns/net").ok();
        // SAFETY: unshare only affects this thread's namespaces.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            eprintln!(
                "unshare(CLONE_NEWNET) failed: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(2);
        }
        let after = std::fs::read_link("/proc/thread-self/ns/net").ok();
        if before.is_none() || before == after {
            eprintln!("not in a new network namespace; refusing to run");
            std::process::exit(2);
        }
        f()
    })
    .join()
    .expect("scenario panicked")
}

/// Whether [`rule`] attaches userdata (nfkeeper's shape: id + text).
static USERDATA: AtomicBool = AtomicBool::new(true);

fn rule(chain: &str, i: u32) -> Rule {
    let text = format!(
        "\u{c0}\u{8}12345678 -A {chain} -s 10.{}.{}.{}/32 -j ACCEPT",
        i >> 16,
        (i >> 8) & 255,
        i & 255
    );
    Rule {
        userdata: USERDATA.load(Ordering::Relaxed).then(|| text.into_bytes()),
        ..Rule::new(
            F,
            "t",
            chain,
            vec![
                Expr::load(base::NETWORK, 12, 4),
                Expr::cmp_eq(&(0x0a00_0000 | i).to_be_bytes()),
                Expr::counter(),
                Expr::verdict(Verdict::Accept),
            ],
        )
    }
}

/// A socket with table `t`, base chain `INPUT` and user chain `c`.
fn setup() -> Socket {
    let mut s = Socket::open().expect("netlink socket");
    let mut b = s.batch(None);
    b.add(&Table::new(F, "t"), 0);
    b.add(
        &Chain::base(F, "t", "INPUT", "filter", hook::LOCAL_IN, 0, POLICY_ACCEPT),
        0,
    );
    b.add(&Chain::new(F, "t", "c"), 0);
    assert!(s.commit(&mut b).unwrap().outcome.is_ok());
    s
}

fn commit(s: &mut Socket, b: &mut nft::Batch) -> f64 {
    let t = Instant::now();
    let rep = s.commit(b).unwrap();
    let us = t.elapsed().as_secs_f64() * 1e6;
    assert!(rep.outcome.is_ok(), "{:?}", rep.outcome.errors);
    us
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median µs of adding one rule to chain `c` already holding `n` rules
/// (each added rule is deleted again by handle, untimed).
fn add_rule(n: u32) -> f64 {
    in_netns(move || {
        let mut s = setup();
        if n > 0 {
            let mut b = s.batch(None);
            for i in 0..n {
                b.add_rule(&rule("c", i), Placement::Append, false, i);
            }
            commit(&mut s, &mut b);
        }
        let mut times = Vec::new();
        for _ in 0..REPS {
            let mut b = s.batch(None);
            b.add_rule(&rule("c", n), Placement::Append, true, 0);
            let t = Instant::now();
            let rep = s.commit(&mut b).unwrap();
            times.push(t.elapsed().as_secs_f64() * 1e6);
            let h = rep.outcome.echoes[0].handle.unwrap();
            let mut b = s.batch(None);
            b.delete(&Rule::key(F, "t", "c", Some(h)), 0);
            commit(&mut s, &mut b);
        }
        median(times)
    })
}

/// Median µs of creating one chain in a table holding `n` chains.
fn add_chain(n: u32) -> f64 {
    in_netns(move || {
        let mut s = setup();
        let mut b = s.batch(None);
        for i in 0..n {
            b.add(&Chain::new(F, "t", &format!("c{i}")), i);
        }
        commit(&mut s, &mut b);
        let times = (0..REPS)
            .map(|k| {
                let mut b = s.batch(None);
                b.create(&Chain::new(F, "t", &format!("new{k}")), 0);
                commit(&mut s, &mut b)
            })
            .collect();
        median(times)
    })
}

/// A set of IPv4 addresses with a counter per element in table `t`, as a
/// compiled run's (batch id 1).
fn addr_set(name: &str) -> Set {
    Set {
        id: Some(1),
        flags: Some(0),
        key_type: Some(7),
        key_len: Some(4),
        exprs: vec![Expr::counter()],
        ..Set::new(F, "t", name)
    }
}

/// µs of committing the add (`add`) or delete of `e`, then, untimed, the
/// opposite, so the set is as before.
fn elem_then_undo(s: &mut Socket, add: bool, e: &SetElems) -> f64 {
    let mut us = 0.0;
    for timed in [true, false] {
        let mut b = s.batch(None);
        if add == timed {
            b.create(e, 0);
        } else {
            b.delete(e, 0);
        }
        let t = commit(s, &mut b);
        if timed {
            us = t;
        }
    }
    us
}

/// Median µs of adding one element to a set holding `n` elements.
fn add_elem(n: u32) -> f64 {
    in_netns(move || {
        let mut s = setup();
        let mut b = s.batch(None);
        b.add(&addr_set("s"), 0);
        let elems = (0..n)
            .map(|i| SetElem::key(&(0x0a00_0000 | i).to_be_bytes()))
            .collect();
        b.add(&SetElems::new(F, "t", "s", elems), 1);
        commit(&mut s, &mut b);
        let times = (0..REPS as u32)
            .map(|k| {
                let mut b = s.batch(None);
                b.add(
                    &SetElems::new(
                        F,
                        "t",
                        "s",
                        vec![SetElem::key(&(0x0b00_0000 | k).to_be_bytes())],
                    ),
                    0,
                );
                commit(&mut s, &mut b)
            })
            .collect();
        median(times)
    })
}

/// The 150k-object table of the Cloud Foundry benchmark (50k rules in a
/// base chain `FORWARD`, 100k empty chains), then the kernel work of each
/// single command on it, median µs over `reps` (undone untimed between
/// repetitions). Rules carry ~40 bytes of userdata like ours, so dumps move
/// the same bytes.
fn big_table(reps: usize) -> Vec<(&'static str, f64)> {
    in_netns(move || {
        let mut s = Socket::open().expect("netlink socket");
        let mut b = s.batch(None);
        b.add(&Table::new(F, "t"), 0);
        b.add(
            &Chain::base(F, "t", "FORWARD", "filter", hook::FORWARD, 0, POLICY_ACCEPT),
            0,
        );
        for i in 0..100_000u32 {
            b.add(&Chain::new(F, "t", &format!("c{i}")), i);
        }
        for i in 0..50_000 {
            b.add_rule(&rule("FORWARD", i), Placement::Append, false, i);
        }
        commit(&mut s, &mut b);
        let mut handles = Vec::new();
        s.rules(F, Some("t"), Some("FORWARD"), |r| {
            handles.push(r.handle.unwrap_or(0));
            Ok(())
        })
        .unwrap();
        // Compiled, as nfkeeper writes such a chain by default: the 50k
        // rules are one run, a set of 50k elements; -A and -D by spec are
        // one element add or delete (with its rule's userdata).
        let mut b = s.batch(None);
        b.add(&addr_set("run"), 0);
        let key = |i: u32| (0x0a00_0000 | i).to_be_bytes();
        let elem = |i: u32| {
            let mut e = SetElem::key(&key(i));
            e.userdata = Some(vec![b'x'; 48]);
            e
        };
        for chunk in (0..50_000u32).collect::<Vec<_>>().chunks(1000) {
            let elems = chunk.iter().map(|&i| elem(i)).collect();
            b.add(&SetElems::new(F, "t", "run", elems), 1);
        }
        commit(&mut s, &mut b);
        let mut out = Vec::new();
        let mut time = |name, f: &mut dyn FnMut(&mut Socket) -> f64| {
            let v = (0..reps).map(|_| f(&mut s)).collect();
            out.push((name, median(v)));
        };
        time("-N: create one chain", &mut |s| {
            let mut b = s.batch(None);
            b.create(&Chain::new(F, "t", "new"), 0);
            let us = commit(s, &mut b);
            let mut b = s.batch(None);
            b.delete(&Chain::new(F, "t", "new"), 0);
            commit(s, &mut b);
            us
        });
        time("-A: append one rule to FORWARD", &mut |s| {
            let mut b = s.batch(None);
            b.add_rule(&rule("FORWARD", 99_999), Placement::Append, true, 0);
            let t = Instant::now();
            let rep = s.commit(&mut b).unwrap();
            let us = t.elapsed().as_secs_f64() * 1e6;
            let h = rep.outcome.echoes[0].handle.unwrap();
            let mut b = s.batch(None);
            b.delete(&Rule::key(F, "t", "FORWARD", Some(h)), 0);
            commit(s, &mut b);
            us
        });
        let mid = handles[handles.len() / 2];
        let mut cur = mid;
        time("-D: delete one rule by handle", &mut |s| {
            let mut b = s.batch(None);
            b.delete(&Rule::key(F, "t", "FORWARD", Some(cur)), 0);
            let us = commit(s, &mut b);
            let mut b = s.batch(None);
            let mut r = rule("FORWARD", 25_000);
            r.position = Some(handles[handles.len() / 2 + 1]);
            b.add_rule(&r, Placement::Insert, true, 0);
            let rep = s.commit(&mut b).unwrap();
            cur = rep.outcome.echoes[0].handle.unwrap();
            us
        });
        time("dump the rules of FORWARD (50k)", &mut |s| {
            let t = Instant::now();
            let mut n = 0;
            s.rules(F, Some("t"), Some("FORWARD"), |_| {
                n += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!(n, 50_000);
            t.elapsed().as_secs_f64() * 1e6
        });
        time("-S: dump all chains and rules", &mut |s| {
            let t = Instant::now();
            let chains = s.chains(F, Some("t")).unwrap().len();
            let mut n = 0;
            s.rules(F, Some("t"), None, |_| {
                n += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!((chains, n), (100_001, 50_000));
            t.elapsed().as_secs_f64() * 1e6
        });
        time("-X: delete one empty chain", &mut |s| {
            let mut b = s.batch(None);
            b.delete_nonrec(&Chain::new(F, "t", "c77"), 0);
            let us = commit(s, &mut b);
            let mut b = s.batch(None);
            b.create(&Chain::new(F, "t", "c77"), 0);
            commit(s, &mut b);
            us
        });
        let one = |i: u32| SetElems::new(F, "t", "run", vec![elem(i)]);
        time("-A compiled: add one element (50k set)", &mut |s| {
            elem_then_undo(s, true, &one(60_000))
        });
        time("-D compiled: delete one element (50k set)", &mut |s| {
            elem_then_undo(s, false, &one(25_000))
        });
        out
    })
}

fn main() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("floor: needs root (for a private network namespace)");
        std::process::exit(2);
    }
    println!(
        "add one rule to an empty chain:            {:>10.1} µs",
        add_rule(0)
    );
    println!(
        "add one rule to a chain with 50k rules:    {:>10.1} µs",
        add_rule(50_000)
    );
    println!(
        "create one chain in a table of 100k chains:{:>10.1} µs",
        add_chain(100_000)
    );
    println!(
        "create one chain in a table of 1k chains:  {:>10.1} µs",
        add_chain(1_000)
    );
    println!(
        "add one element to a 10k-element set:      {:>10.1} µs",
        add_elem(10_000)
    );
    if std::env::args().any(|a| a == "--userdata") {
        println!(
            "\none rule appended to a chain of 100k rules, the rules with and without userdata:"
        );
        for with in [true, false, true, false] {
            USERDATA.store(with, Ordering::Relaxed);
            println!(
                "  userdata {:<5}                           {:>10.1} µs",
                with,
                add_rule(100_000)
            );
        }
        USERDATA.store(true, Ordering::Relaxed);
    }
    if std::env::args().any(|a| a == "--big") {
        println!("\n50k rules in FORWARD + 100k chains (the Cloud Foundry table):");
        for (name, us) in big_table(7) {
            println!("{name:<40}{us:>12.1} µs");
        }
    }
}
