//! The model suite: restore, save and memory for two shapes, then single
//! operations on a Cloud Foundry FORWARD chain, then growth ratios.
//!
//! Methods (each also stated at the code that does it):
//! - restore: `iptables::exec::restore` of generated text into a fresh
//!   `Ruleset` (parse every line + build the model). Generating the text and
//!   dropping the model are not timed. rules/s = rules restored / time.
//! - save: `save_table` of the restored table into an empty `String`
//!   (formatting plus the string's growth). MB/s = output bytes / 1e6 / s.
//! - memory: with an `AllocProbe`, heap bytes allocated after the restore
//!   minus before (the model alive, the input text excluded), divided by the
//!   rules; also the peak during the restore. Without it, and always as a
//!   second line, the model's own estimate `size_of::<Rule>() +
//!   model_overhead_bytes() / rules` (which leaves out what rule bodies
//!   allocate on the heap, e.g. match lists).
//! - single operations: a FORWARD chain of N CF rules. A sample is `batch`
//!   operations of one kind only, run as timed sub-batches of k <= N/10 (so
//!   the chain stays within 10% of N); per-op time = summed timed time /
//!   operations. The inverse operations that bring the chain back to N rules
//!   (and its original contents) run between sub-batches, untimed. One
//!   untimed warm-up sample precedes the timed ones. The notes give the mean
//!   too: it keeps rare O(n) events (and preemption) that the median hides.
//!   Two paths: "op: model" calls the `Table` method with a body parsed
//!   beforehand; "op: command" times what a user's command costs in-process:
//!   parsing the argv words (built beforehand) with `iptables::parse::parse`
//!   and applying them with `iptables::exec::execute`.
//! - growth: median per-op time at the largest N / at the smallest N, next to
//!   ln(N_max)/ln(N_min) (the ratio an O(log n) operation would show).

use crate::{fmt_n, ModelOpts, Result};
use iptables::exec::{execute, restore, save_table, RestoreOpts};
use iptables::parse::{parse, ParseOpts, Parsed};
use iptables::Rule;
use ruleset::{Counters, Family, Ruleset, Table, TableKind};
use std::hint::black_box;
use std::time::Instant;

const CHAIN: &str = "FORWARD";

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    CloudFoundry,
    KubeProxy,
}

impl Shape {
    fn label(self) -> &'static str {
        match self {
            Shape::CloudFoundry => "Cloud Foundry",
            Shape::KubeProxy => "kube-proxy",
        }
    }

    fn table(self) -> TableKind {
        match self {
            Shape::CloudFoundry => TableKind::Filter,
            Shape::KubeProxy => TableKind::Nat,
        }
    }

    fn text(self, n: usize) -> String {
        match self {
            Shape::CloudFoundry => workload::cloud_foundry(n),
            Shape::KubeProxy => workload::kube_proxy(n),
        }
    }
}

/// Run the whole suite; results grouped by section, in a stable order.
pub fn model_suite(opts: &ModelOpts) -> Vec<Result> {
    let mut out = Vec::new();
    let reps = opts.reps.max(1);
    for &n in &opts.sizes {
        for shape in [Shape::CloudFoundry, Shape::KubeProxy] {
            progress(opts, format_args!("{} N={}: restore", shape.label(), n));
            let mut rs = restore_save_memory(opts, shape, n, reps, &mut out);
            if shape == Shape::CloudFoundry {
                progress(opts, format_args!("{} N={}: single ops", shape.label(), n));
                let t = rs.table_mut(Family::Ipv4, TableKind::Filter);
                single_ops(opts, t, n, &mut out);
            }
            // Dropping a large model is not part of any measurement.
            drop(rs);
        }
    }
    growth(opts, &mut out);
    order(out)
}

fn progress(opts: &ModelOpts, msg: std::fmt::Arguments) {
    if opts.progress {
        eprintln!("model-bench: {msg}");
    }
}

/// Sections in reading order; within a section, names in first-seen order.
fn order(mut v: Vec<Result>) -> Vec<Result> {
    const GROUPS: [&str; 6] = [
        "restore",
        "save",
        "memory",
        "op: model",
        "op: command",
        "growth",
    ];
    let mut names: Vec<(&'static str, String)> = Vec::new();
    for r in &v {
        if !names.iter().any(|(g, n)| *g == r.group && *n == r.name) {
            names.push((r.group, r.name.clone()));
        }
    }
    v.sort_by_key(|r| {
        let g = GROUPS.iter().position(|g| *g == r.group).unwrap_or(99);
        let n = names
            .iter()
            .position(|(gg, nn)| *gg == r.group && *nn == r.name)
            .unwrap_or(0);
        (g, n, r.n)
    });
    v
}

fn restore_opts() -> RestoreOpts<'static> {
    RestoreOpts {
        family: Family::Ipv4,
        noflush: false,
        counters: false,
        test: false,
        table: None,
        prog: "nfk-bench",
    }
}

/// Restore `reps` times (rules/s), measure memory on the first restore, save
/// the last model `reps` times (ms, MB/s). Returns the last model.
fn restore_save_memory(
    opts: &ModelOpts,
    shape: Shape,
    n: usize,
    reps: usize,
    out: &mut Vec<Result>,
) -> Ruleset<Rule> {
    // Not timed: the input.
    let text = shape.text(n);
    let ro = restore_opts();
    let mut rates = Vec::with_capacity(reps);
    let mut rules = 0;
    let mut kept = None;
    for rep in 0..reps {
        let probe = opts.alloc.filter(|_| rep == 0);
        let before = probe.map(|p| {
            (p.reset_peak)();
            (p.current)()
        });
        // Timed: parse every line and build the model.
        let t0 = Instant::now();
        let mut rs: Ruleset<Rule> = Ruleset::new();
        let stats = restore(&mut rs, black_box(&text), &ro)
            .unwrap_or_else(|e| panic!("restore failed: {}", e.render("nfk-bench")));
        let dt = t0.elapsed().as_secs_f64();
        black_box(&rs);
        rules = stats.rules;
        rates.push(stats.rules as f64 / dt);
        if let (Some(p), Some(before)) = (probe, before) {
            let held = (p.current)().saturating_sub(before);
            let peak = (p.peak)().saturating_sub(before);
            out.push(Result::single(
                "memory",
                format!("{}: heap held by the model", shape.label()),
                n,
                "B/rule",
                held as f64 / rules.max(1) as f64,
                format!(
                    "counting allocator: {:.1} MB after restore minus before",
                    held as f64 / 1e6
                ),
            ));
            out.push(Result::single(
                "memory",
                format!("{}: peak heap during restore", shape.label()),
                n,
                "B/rule",
                peak as f64 / rules.max(1) as f64,
                format!("{:.1} MB above the start", peak as f64 / 1e6),
            ));
        }
        if rep + 1 == reps {
            kept = Some(rs);
        } // else: `rs` dropped here, after the timer.
    }
    let rs = kept.expect("at least one repetition");
    out.push(Result::from_samples(
        "restore",
        format!("{}: parse + build model", shape.label()),
        n,
        "rules/s",
        &rates,
        format!(
            "{rules} rules, {:.1} MB input; median {:.1} ms",
            text.len() as f64 / 1e6,
            rules as f64 / median(&rates) * 1e3
        ),
    ));
    drop(text);

    let t = rs.table(Family::Ipv4, shape.table());
    let body = std::mem::size_of::<Rule>();
    let overhead = t.model_overhead_bytes() as f64 / t.rule_count().max(1) as f64;
    out.push(Result::single(
        "memory",
        format!("{}: model estimate", shape.label()),
        n,
        "B/rule",
        body as f64 + overhead,
        format!(
            "size_of::<Rule>() {body} + model_overhead_bytes()/rules {overhead:.1}; \
             excludes bodies' own heap"
        ),
    ));

    // Save: into an empty String each time (its growth is part of the cost).
    let mut ms = Vec::with_capacity(reps);
    let mut mbs = Vec::with_capacity(reps);
    let mut bytes = 0;
    for _ in 0..reps {
        let mut s = String::new();
        let t0 = Instant::now();
        save_table(black_box(t), false, &mut s);
        let dt = t0.elapsed().as_secs_f64();
        black_box(&s);
        bytes = s.len();
        ms.push(dt * 1e3);
        mbs.push(bytes as f64 / 1e6 / dt);
    }
    let note = format!("{:.1} MB of save text", bytes as f64 / 1e6);
    let name = format!("{}: save table", shape.label());
    out.push(Result::from_samples("save", &name, n, "ms", &ms, &note));
    out.push(Result::from_samples("save", name, n, "MB/s", &mbs, note));
    rs
}

fn median(v: &[f64]) -> f64 {
    Result::from_samples("", "", 0, "", v, "").median
}

fn cmd_opts() -> ParseOpts<'static> {
    ParseOpts::command(Family::Ipv4, "iptables")
}

fn parse_words(words: &[String]) -> Parsed {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    parse(&w, cmd_opts()).unwrap_or_else(|e| panic!("parse {words:?}: {e:?}"))
}

fn words(w: &[String]) -> Vec<&str> {
    w.iter().map(String::as_str).collect()
}

fn split(cmd: &str) -> Vec<String> {
    cmd.split_whitespace().map(String::from).collect()
}

/// `a.b.c.d/32` for the i-th address of a /16 outside the CF range.
fn addr(base: &str, i: usize) -> String {
    format!("{base}.{}.{}/32", (i / 256) % 256, i % 256)
}

fn cf(pos1: usize) -> String {
    let a = workload::cf_addr(pos1 - 1);
    format!("{}.{}.{}.{}/32", a[0], a[1], a[2], a[3])
}

/// How single operations are timed: `reps` samples, each of `sub` timed
/// sub-batches of `k` operations (k <= N/10, so the chain stays near N; the
/// undo between sub-batches is untimed). Every sample thus covers `sub * k`
/// operations whatever N is.
#[derive(Clone, Copy)]
struct Batching {
    reps: usize,
    k: usize,
    sub: usize,
}

/// One untimed warm-up sample, then `b.reps` samples: `setup` and `undo`
/// untimed, `run` (k operations) timed. Returns µs per operation per sample.
fn batches<S>(
    t: &mut Table<Rule>,
    b: Batching,
    mut setup: impl FnMut(&mut Table<Rule>) -> S,
    mut run: impl FnMut(&mut Table<Rule>, &mut S),
    mut undo: impl FnMut(&mut Table<Rule>, S),
) -> Vec<f64> {
    let n = t.chain(CHAIN).expect("FORWARD").len;
    let mut v = Vec::with_capacity(b.reps);
    for rep in 0..=b.reps {
        let mut timed = 0.0;
        for _ in 0..b.sub {
            let mut s = setup(t);
            let t0 = Instant::now();
            run(t, &mut s);
            timed += t0.elapsed().as_secs_f64();
            undo(t, s);
            assert_eq!(t.chain(CHAIN).expect("FORWARD").len, n, "undo left N");
        }
        if rep > 0 {
            v.push(timed * 1e6 / (b.sub * b.k) as f64);
        }
    }
    v
}

/// Single operations on the FORWARD chain of `n` CF rules; see the module
/// comment for the method.
fn single_ops(opts: &ModelOpts, t: &mut Table<Rule>, n: usize, out: &mut Vec<Result>) {
    let reps = opts.op_reps.max(1);
    let k = opts.batch.min(n / 10).max(1);
    let b = Batching {
        reps,
        k,
        sub: opts.batch.div_ceil(k).max(1),
    };
    // 1-based middle position; positions mid..mid+k-1 are the ones touched.
    let mid = (n / 2).max(1);
    assert!(mid + k - 1 <= n, "chain too short for a batch");
    let z = Counters::default();
    let note = format!("{} ops per sample (timed batches of {k})", b.sub * k);

    // ---- inputs, all untimed ----
    let app_cmd: Vec<Vec<String>> = (0..k)
        .map(|i| split(&format!("-A {CHAIN} -s {} -j ACCEPT", addr("172.16", i))))
        .collect();
    let ins_cmd: Vec<Vec<String>> = (0..k)
        .map(|i| split(&format!("-I {CHAIN} 1 -s {} -j ACCEPT", addr("172.16", i))))
        .collect();
    let rep_cmd: Vec<Vec<String>> = (0..k)
        .map(|i| {
            let cmd = format!("-R {CHAIN} {} -s {} -j ACCEPT", mid + i, addr("172.17", i));
            split(&cmd)
        })
        .collect();
    let delnum_cmd = split(&format!("-D {CHAIN} {mid}"));
    let delspec_cmd: Vec<Vec<String>> = (0..k)
        .map(|i| split(&format!("-D {CHAIN} -s {} -j ACCEPT", cf(mid + i))))
        .collect();
    // Bodies: the new rules (from the -A words) and the rules to delete by
    // spec (from the -D words, as a user's command would give them).
    let fresh: Vec<Rule> = app_cmd
        .iter()
        .map(|w| parse_words(w).rules.remove(0))
        .collect();
    let fresh_r: Vec<Rule> = rep_cmd
        .iter()
        .map(|w| parse_words(w).rules.remove(0))
        .collect();
    let specs: Vec<Rule> = delspec_cmd
        .iter()
        .map(|w| parse_words(w).rules.remove(0))
        .collect();
    // The original middle rules, to put back after deletes and replaces.
    let orig: Vec<Rule> = (0..k)
        .map(|i| t.rule_at(CHAIN, mid + i).expect("rule").body.clone())
        .collect();
    assert!(
        orig == specs,
        "parsed -D specs differ from the restored rules"
    );
    let app_w: Vec<Vec<&str>> = app_cmd.iter().map(|w| words(w)).collect();
    let ins_w: Vec<Vec<&str>> = ins_cmd.iter().map(|w| words(w)).collect();
    let rep_w: Vec<Vec<&str>> = rep_cmd.iter().map(|w| words(w)).collect();
    let delspec_w: Vec<Vec<&str>> = delspec_cmd.iter().map(|w| words(w)).collect();
    let delnum_w = words(&delnum_cmd);
    let mut buf = String::new();
    let po = cmd_opts();
    let mut cmd = |t: &mut Table<Rule>, w: &[&str]| {
        let p = parse(black_box(w), po).expect("parse");
        execute(t, &p, &mut buf).expect("execute");
        black_box(&p);
    };

    // Undo helpers (untimed).
    let undo_tail = |t: &mut Table<Rule>| {
        for _ in 0..k {
            t.delete_at(CHAIN, n + 1).expect("undo append");
        }
    };
    let undo_head = |t: &mut Table<Rule>| {
        for _ in 0..k {
            t.delete_at(CHAIN, 1).expect("undo insert");
        }
    };
    let put_back = |t: &mut Table<Rule>, bodies: &[Rule]| {
        for b in bodies.iter().rev() {
            t.insert(CHAIN, mid, b.clone(), z).expect("undo delete");
        }
    };
    let restore_mid = |t: &mut Table<Rule>| {
        for (i, b) in orig.iter().enumerate() {
            t.replace(CHAIN, mid + i, b.clone(), z)
                .expect("undo replace");
        }
    };

    let mut push = |group: &'static str, name: &str, v: Vec<f64>| {
        // The mean keeps rare O(n) events (hash-index rehash, slab growth)
        // that the median hides.
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let note = format!("{note}; mean {mean:.3}");
        out.push(Result::from_samples(group, name, n, "µs/op", &v, note));
    };
    const M: &str = "op: model";
    const C: &str = "op: command";

    // append (-A): k new rules at the end; undo deletes them.
    let v = batches(
        t,
        b,
        |_| fresh.clone(),
        |t, s| {
            for r in s.drain(..) {
                black_box(t.append(CHAIN, r, z).expect("append"));
            }
        },
        |t, _| undo_tail(t),
    );
    push(M, "append", v);
    let v = batches(
        t,
        b,
        |_| (),
        |t, _| app_w.iter().for_each(|w| cmd(t, w)),
        |t, _| undo_tail(t),
    );
    push(C, "append (-A)", v);

    // insert at 1 (-I chain 1); undo deletes position 1 k times.
    let v = batches(
        t,
        b,
        |_| fresh.clone(),
        |t, s| {
            for r in s.drain(..) {
                black_box(t.insert(CHAIN, 1, r, z).expect("insert"));
            }
        },
        |t, _| undo_head(t),
    );
    push(M, "insert at 1", v);
    let v = batches(
        t,
        b,
        |_| (),
        |t, _| ins_w.iter().for_each(|w| cmd(t, w)),
        |t, _| undo_head(t),
    );
    push(C, "insert at 1 (-I)", v);

    // delete by number in the middle (-D chain N/2), k times; undo inserts
    // the same bodies back at N/2.
    let v = batches(
        t,
        b,
        |_| (),
        |t, _| {
            for _ in 0..k {
                black_box(t.delete_at(CHAIN, mid).expect("delete_at"));
            }
        },
        |t, _| put_back(t, &orig),
    );
    push(M, "delete by number (middle)", v);
    let v = batches(
        t,
        b,
        |_| (),
        |t, _| (0..k).for_each(|_| cmd(t, &delnum_w)),
        |t, _| put_back(t, &orig),
    );
    push(C, "delete by number (-D N/2)", v);

    // delete by spec: k distinct middle rules, bodies parsed beforehand.
    let v = batches(
        t,
        b,
        |_| (),
        |t, _| {
            for b in &specs {
                black_box(t.delete_spec(CHAIN, b).expect("delete_spec"));
            }
        },
        |t, _| put_back(t, &orig),
    );
    push(M, "delete by spec (middle)", v);
    let v = batches(
        t,
        b,
        |_| (),
        |t, _| delspec_w.iter().for_each(|w| cmd(t, w)),
        |t, _| put_back(t, &orig),
    );
    push(C, "delete by spec (-D -s … -j ACCEPT)", v);

    // replace in the middle (-R chain N/2+i); undo replaces the originals back.
    let v = batches(
        t,
        b,
        |_| fresh_r.clone(),
        |t, s| {
            for (i, r) in s.drain(..).enumerate() {
                black_box(t.replace(CHAIN, mid + i, r, z).expect("replace"));
            }
        },
        |t, _| restore_mid(t),
    );
    push(M, "replace (middle)", v);
    let v = batches(
        t,
        b,
        |_| (),
        |t, _| rep_w.iter().for_each(|w| cmd(t, w)),
        |t, _| restore_mid(t),
    );
    push(C, "replace (-R N/2)", v);
}

/// Per-op growth: median at the largest N over median at the smallest N.
fn growth(opts: &ModelOpts, out: &mut Vec<Result>) {
    let (Some(&lo), Some(&hi)) = (opts.sizes.iter().min(), opts.sizes.iter().max()) else {
        return;
    };
    if lo == hi {
        return;
    }
    let log_ratio = (hi as f64).ln() / (lo.max(2) as f64).ln();
    let mut add = Vec::new();
    for r in out
        .iter()
        .filter(|r| r.n == hi && r.group.starts_with("op: "))
    {
        let Some(base) = out
            .iter()
            .find(|b| b.n == lo && b.group == r.group && b.name == r.name)
        else {
            continue;
        };
        let path = if r.group == "op: model" {
            "model"
        } else {
            "command"
        };
        add.push(Result::single(
            "growth",
            format!("{} [{path}]", r.name),
            hi,
            "×",
            r.median / base.median,
            format!(
                "median at N={} / at N={}; ln ratio {log_ratio:.2}",
                fmt_n(hi),
                fmt_n(lo)
            ),
        ));
    }
    out.extend(add);
}
