//! keeper's planning and reading against the fake kernel (crate
//! `nfk-fakekernel`), without root: restores and commands planned by
//! `KernelApply` commit on it, `read_table`/`read_scoped` read them back,
//! `save_table_to` and `verify_table` agree. Only the last test touches
//! the real kernel (in a fresh namespace, skipped without root): the same
//! keeper batches on both kernels must leave the same state.

use compile::runs::RunOpts;
use fakekernel::{FailAt, Kernel, Loss};
use iptables::exec::{restore_with, save_table, RestoreOpts};
use iptables::parse::{parse, ParseOpts};
use keeper::plan::{KernelApply, Loc};
use keeper::read::{read_scoped, read_table, Scope, Snapshot};
use keeper::save::{save_table_to, Form};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};

const FAM: Family = Family::Ipv4;
const FILTER: TableKind = TableKind::Filter;

/// What a session learns from a snapshot before planning on it.
fn remember(ap: &mut KernelApply, kind: TableKind, s: &Snapshot) {
    if s.exists {
        ap.present.insert(kind);
    }
    for (id, h) in &s.handles {
        ap.locs.insert((kind, *id), Loc::Handle(*h));
    }
    for (name, h) in &s.chain_handles {
        ap.chain_handles.insert((kind, name.clone()), *h);
    }
    for (id, n) in &s.overflow {
        ap.overflow.insert((kind, *id), *n);
    }
    ap.remember_runs(kind, &s.runs);
}

/// iptables-restore of `input` into the filter table, as a session does
/// it: read, apply to the model, plan, one batch with the generation.
/// Returns the commit's outcome.
fn restore(
    sock: &mut Socket,
    input: &str,
    noflush: bool,
    compile: Option<RunOpts>,
) -> nft::Outcome {
    restore_in(sock, FAM, FILTER, input, noflush, compile)
}

/// [`restore`] into any family and table.
fn restore_in(
    sock: &mut Socket,
    fam: Family,
    kind: TableKind,
    input: &str,
    noflush: bool,
    compile: Option<RunOpts>,
) -> nft::Outcome {
    let genid = sock.gen().expect("genid").id;
    let mut ap = KernelApply::new(fam, sock.batch(Some(genid)));
    ap.compile = compile;
    let snap = read_table(sock, fam, kind).expect("read");
    remember(&mut ap, kind, &snap);
    let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
    rs.replace_table(snap.table);
    let o = RestoreOpts {
        noflush,
        ..RestoreOpts::new(fam, "iptables-restore")
    };
    restore_with(&mut rs, input, &o, &mut ap).expect("restore input");
    ap.finish(&rs).expect("finish");
    sock.commit(&mut ap.batch).expect("commit").outcome
}

/// One iptables command planned on what the session would read for it
/// (its scope), committed.
fn command(sock: &mut Socket, words: &[&str]) -> nft::Outcome {
    let p = parse(words, ParseOpts::command(FAM, "iptables")).expect("parse");
    let genid = sock.gen().expect("genid").id;
    let scope = keeper::scope::scope(&p);
    let mut snap = read_scoped(sock, FAM, FILTER, &scope).expect("read");
    let mut ap = KernelApply::new(FAM, sock.batch(Some(genid)));
    remember(&mut ap, FILTER, &snap);
    let mut out = String::new();
    ap.run(FILTER, &mut snap.table, p, &mut out).expect("plan");
    sock.commit(&mut ap.batch).expect("commit").outcome
}

/// The filter table as the model read back from the kernel saves it.
fn model_save(sock: &mut Socket) -> String {
    let snap = read_table(sock, FAM, FILTER).expect("read");
    assert!(snap.foreign.is_empty(), "{:?}", snap.foreign);
    let mut out = String::new();
    save_table(&snap.table, false, &mut out);
    strip(&out)
}

/// The filter table as iptables-save prints it straight from userdata.
fn kernel_save(sock: &mut Socket) -> String {
    let mut out = Vec::new();
    let mut foreign = Vec::new();
    let form = Form::Save {
        counters: false,
        header: "",
        footer: "",
    };
    save_table_to(sock, FAM, FILTER, form, &mut out, &mut foreign).expect("save");
    strip(&String::from_utf8(out).unwrap())
}

fn strip(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

const BASE: &str = "*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:logdrop - [0:0]
:web - [0:0]
-A INPUT -i lo -j ACCEPT
-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
-A INPUT -p tcp -j web
-A INPUT -j logdrop
-A logdrop -j DROP
-A web -p tcp -m tcp --dport 80 -j ACCEPT
-A web -p tcp -m tcp --dport 443 -j ACCEPT
COMMIT
";

#[test]
fn restore_read_save_verify() {
    let k = Kernel::new();
    let mut sock = k.socket();
    let out = restore(&mut sock, BASE, false, None);
    assert!(out.is_ok(), "{out:?}");
    assert_eq!(model_save(&mut sock), strip(BASE));
    assert_eq!(kernel_save(&mut sock), strip(BASE));
    let report = keeper::verify::verify_table(&mut sock, FAM, FILTER)
        .expect("verify")
        .expect("table exists");
    assert!(report.diffs.is_empty(), "{:?}", report.diffs);
    // The kernel counts the jumps to a chain with its rules.
    let snap = read_table(&mut sock, FAM, FILTER).unwrap();
    assert_eq!(
        snap.chain_uses.get("web"),
        Some(&3),
        "{:?}",
        snap.chain_uses
    );
    // One batch, read back by dumps and gets only.
    let s = k.stats();
    assert_eq!((s.batches, s.commits), (1, 1), "{s:?}");
    let text = k.text();
    assert!(text.contains("chain web handle"), "{text}");
}

#[test]
fn partial_reads_see_only_their_chains() {
    let k = Kernel::new();
    let mut sock = k.socket();
    assert!(restore(&mut sock, BASE, false, None).is_ok());
    let before = k.stats();
    let scope = Scope::Part {
        names: vec!["web".into()],
        rules_of: vec!["web".into()],
    };
    let snap = read_scoped(&mut sock, FAM, FILTER, &scope).unwrap();
    assert!(snap.exists);
    assert_eq!(snap.table.rules("web").unwrap().count(), 2);
    assert!(snap.table.rules("logdrop").is_err(), "not read");
    let read = k.stats();
    // A chain read by name: a handful of requests, independent of the
    // table's size.
    assert!(
        read.dumps + read.gets - before.dumps - before.gets <= 6,
        "{read:?}"
    );
}

#[test]
fn commands_mirror_into_minimal_batches() {
    let k = Kernel::new();
    let mut sock = k.socket();
    assert!(restore(&mut sock, BASE, false, None).is_ok());
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["-A", "web", "-p", "tcp", "--dport", "8080", "-j", "ACCEPT"],
            "-A web -p tcp -m tcp --dport 8080 -j ACCEPT",
            "",
        ),
        (
            &["-D", "web", "1"],
            "",
            "-A web -p tcp -m tcp --dport 80 -j ACCEPT",
        ),
        (
            &["-I", "INPUT", "1", "-s", "10.0.0.1", "-j", "DROP"],
            "-A INPUT -s 10.0.0.1/32 -j DROP",
            "",
        ),
        (
            &["-P", "FORWARD", "DROP"],
            ":FORWARD DROP [0:0]",
            ":FORWARD ACCEPT [0:0]",
        ),
        (&["-N", "extra"], ":extra - [0:0]", ""),
        (
            &["-E", "extra", "spare"],
            ":spare - [0:0]",
            ":extra - [0:0]",
        ),
    ];
    for (words, added, gone) in cases {
        let gen = k.genid();
        let out = command(&mut sock, words);
        assert!(out.is_ok(), "{words:?}: {out:?}");
        assert_eq!(k.genid(), gen + 1, "{words:?}: one commit");
        let saved = kernel_save(&mut sock);
        assert_eq!(model_save(&mut sock), saved, "{words:?}");
        if !added.is_empty() {
            assert!(saved.contains(added), "{words:?}:\n{saved}");
        }
        if !gone.is_empty() {
            assert!(!saved.contains(gone), "{words:?}:\n{saved}");
        }
    }
}

#[test]
fn kernel_refusals_come_back_per_message() {
    let k = Kernel::new();
    let mut sock = k.socket();
    assert!(restore(&mut sock, BASE, false, None).is_ok());
    assert!(restore(
        &mut sock,
        "*filter\n-A web -j logdrop\nCOMMIT\n",
        true,
        None
    )
    .is_ok());
    // A jump cycle reachable from INPUT that the command's partial read
    // cannot see (the session's scope of `-A logdrop -j web`): the kernel
    // refuses it (EMLINK on the rule that closes it), and nothing changes.
    let before = k.text();
    let p = parse(
        &["-A", "logdrop", "-j", "web"],
        ParseOpts::command(FAM, "iptables"),
    )
    .unwrap();
    let scope = keeper::scope::scope(&p);
    assert!(scope != Scope::Table, "{scope:?}");
    let mut snap = read_scoped(&mut sock, FAM, FILTER, &scope).unwrap();
    let genid = sock.gen().unwrap().id;
    let mut ap = KernelApply::new(FAM, sock.batch(Some(genid)));
    remember(&mut ap, FILTER, &snap);
    ap.run(FILTER, &mut snap.table, p, &mut String::new())
        .expect("the partial model sees no loop");
    let out = sock.commit(&mut ap.batch).unwrap().outcome;
    assert!(!out.committed);
    assert_eq!(out.errors.first().map(|e| e.code), Some(-31), "{out:?}");
    assert_eq!(k.text(), before);
    // A chain still referenced cannot go: `-X` reads the chain by name
    // only, so the kernel's EBUSY is what refuses it.
    let out = command(&mut sock, &["-X", "web"]);
    assert_eq!(out.errors.first().map(|e| e.code), Some(-16), "{out:?}");
    // An injected commit failure aborts the batch as the kernel would.
    k.fail_next_commit(FailAt::Commit, 12);
    let out = command(&mut sock, &["-A", "web", "-j", "RETURN"]);
    assert_eq!(out.errors.first().map(|e| e.code), Some(-12), "{out:?}");
    assert_eq!(k.text(), before);
}

#[test]
fn compiled_runs_round_trip() {
    let mut text = String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:blocked - [0:0]\n");
    for i in 0..40 {
        text.push_str(&format!(
            "-A INPUT -s 10.1.{}.{}/32 -j DROP\n",
            i / 250,
            i % 250 + 1
        ));
    }
    for i in 0..20 {
        text.push_str(&format!("-A INPUT -s 10.2.0.{}/32 -j blocked\n", i + 1));
    }
    for p in [22, 25, 80, 443, 8080] {
        text.push_str(&format!("-A INPUT -p tcp -m tcp --dport {p} -j ACCEPT\n"));
    }
    text.push_str("-A blocked -j DROP\nCOMMIT\n");
    let k = Kernel::new();
    let mut sock = k.socket();
    let out = restore(&mut sock, &text, false, Some(RunOpts::default()));
    assert!(out.is_ok(), "{out:?}");
    let dump = k.text();
    assert!(dump.contains("  set "), "runs should be sets:\n{dump}");
    assert_eq!(model_save(&mut sock), strip(&text));
    assert_eq!(kernel_save(&mut sock), strip(&text));
    let report = keeper::verify::verify_table(&mut sock, FAM, FILTER)
        .unwrap()
        .unwrap();
    assert!(report.diffs.is_empty(), "{:?}", report.diffs);
    // A delete by spec reads one element of the run, not all of them.
    let out = command(&mut sock, &["-D", "INPUT", "-s", "10.1.0.7", "-j", "DROP"]);
    assert!(out.is_ok(), "{out:?}");
    assert!(!kernel_save(&mut sock).contains("-s 10.1.0.7/32 -j DROP"));
    assert_eq!(model_save(&mut sock), kernel_save(&mut sock));
}

#[test]
fn echoes_and_events() {
    let k = Kernel::new();
    let mut sock = k.socket();
    let mut events = k.event_socket();
    // A long-lived apply (as the daemon's) learns handles from echoes.
    let mut snap = read_table(&mut sock, FAM, FILTER).unwrap();
    let mut ap = KernelApply::new(FAM, sock.batch(None));
    ap.echo = true;
    let p = parse(
        &["-A", "INPUT", "-j", "ACCEPT"],
        ParseOpts::command(FAM, "iptables"),
    )
    .unwrap();
    ap.run(FILTER, &mut snap.table, p, &mut String::new())
        .unwrap();
    let rep = sock.commit(&mut ap.batch).unwrap();
    assert!(rep.outcome.is_ok() && !rep.overrun);
    assert_eq!(ap.learn(&rep.outcome.echoes), 0, "every handle learnt");
    let evs = events.try_recv().unwrap();
    assert!(evs.iter().all(|e| e.portid == sock.portid()), "{evs:?}");
    assert_eq!(evs.last().map(|e| e.msg), Some(nft::msg::NEWGEN));
    assert_eq!(evs.last().and_then(|e| e.genid), Some(k.genid()));
    // Echoes lost to a receive overrun: the commit still reports its
    // verdict, and the apply knows what it did not learn.
    k.lose_next_replies(Loss::Echoes);
    ap.rebatch(sock.batch(None));
    let p = parse(
        &["-A", "INPUT", "-j", "DROP"],
        ParseOpts::command(FAM, "iptables"),
    )
    .unwrap();
    ap.run(FILTER, &mut snap.table, p, &mut String::new())
        .unwrap();
    let rep = sock.commit(&mut ap.batch).unwrap();
    assert!(rep.overrun && rep.outcome.committed, "{rep:?}");
    assert_eq!(ap.learn(&rep.outcome.echoes), 1);
}

/// Everything the kernel holds, read through dumps, in a comparable form
/// (table handles are kernel-wide counters: left out; elements sorted).
fn kernel_state(sock: &mut Socket) -> Vec<String> {
    kernel_state_of(sock, true)
}

/// [`kernel_state`], without rule and element userdata when
/// `!userdata` (rule ids from partial reads start at a random base).
fn kernel_state_of(sock: &mut Socket, userdata: bool) -> Vec<String> {
    let mut out = Vec::new();
    for mut t in sock.tables(nft::Family::Unspec).expect("tables") {
        t.handle = None;
        let (fam, name) = (t.family, t.name.clone());
        out.push(format!("{t:?}"));
        for c in sock.chains(fam, Some(&name)).expect("chains") {
            if c.table == name {
                out.push(format!("{c:?}"));
            }
        }
        sock.rules(fam, Some(&name), None, |r| {
            let mut r = r.to_rule()?;
            if !userdata {
                r.userdata = None;
            }
            out.push(format!("{r:?}"));
            Ok(())
        })
        .expect("rules");
        for set in sock.sets(fam, Some(&name)).expect("sets") {
            let mut elems: Vec<String> = sock
                .set_elems(fam, &name, &set.name)
                .expect("elements")
                .into_iter()
                .map(|mut e| {
                    if !userdata {
                        e.userdata = None;
                    }
                    format!("{e:?}")
                })
                .collect();
            elems.sort();
            out.push(format!("{set:?}"));
            out.extend(elems);
        }
    }
    out
}

/// What keeper writes for generated rulesets (both families, runs compiled
/// or not), kube-proxy's nat table and a Cloud Foundry filter table, on the
/// real kernel and on the fake: the same errors, the same state.
type Input = (Family, TableKind, String, Option<RunOpts>);

/// Generated rulesets (both families, runs compiled or not), kube-proxy's
/// nat table, a Cloud Foundry filter table.
fn inputs() -> Vec<Input> {
    let mut v: Vec<Input> = Vec::new();
    for seed in 1..=6u64 {
        let fam = if seed % 2 == 0 {
            Family::Ipv6
        } else {
            Family::Ipv4
        };
        let mut r = classify::gen::Rng::new(seed);
        let text = classify::gen::ruleset_of(&mut r, 300, fam);
        let compile = (seed % 3 != 0).then(RunOpts::default);
        v.push((fam, FILTER, text, compile));
    }
    v.push((FAM, TableKind::Nat, workload::kube_proxy(400), None));
    v.push((
        FAM,
        FILTER,
        workload::cloud_foundry(700),
        Some(RunOpts::default()),
    ));
    v
}

/// Every input restored in turn; the outcomes and the state after each.
fn restore_all(sock: &mut Socket) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (fam, kind, text, compile)) in inputs().into_iter().enumerate() {
        let o = restore_in(sock, fam, kind, &text, false, compile);
        out.push(format!("restore {i}: {}", outcome(&o)));
        out.extend(kernel_state(sock));
    }
    renumber_anonymous_sets(out)
}

/// A commit's outcome with what both kernels share (sequence numbers
/// start from the clock).
fn outcome(o: &nft::Outcome) -> String {
    let errors: Vec<_> = o.errors.iter().map(|e| (e.tag, e.code)).collect();
    format!("committed {} errors (tag, code) {errors:?}", o.committed)
}

/// keeper numbers its anonymous sets (`__nfk_set<N>`) from a random base:
/// number them by first appearance instead.
fn renumber_anonymous_sets(lines: Vec<String>) -> Vec<String> {
    const P: &str = "__nfk_set";
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    lines
        .into_iter()
        .map(|l| {
            let mut out = String::new();
            let mut rest = l.as_str();
            while let Some(at) = rest.find(P) {
                out.push_str(&rest[..at + P.len()]);
                rest = &rest[at + P.len()..];
                let digits = rest.chars().take_while(char::is_ascii_digit).count();
                let n = seen.len();
                let k = *seen.entry(rest[..digits].to_string()).or_insert(n);
                out.push_str(&format!("#{k}"));
                rest = &rest[digits..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// What keeper writes for [`inputs`] leaves the same errors and the same
/// state on the real kernel and on the fake.
#[test]
fn same_state_as_the_real_kernel() {
    let Some(real) = testkit::in_netns(|| restore_all(&mut Socket::open().expect("netlink")))
    else {
        return;
    };
    let fake = restore_all(&mut Kernel::new().socket());
    for (a, b) in real.iter().zip(&fake) {
        assert_eq!(a, b, "kernel (left) and fake (right) differ");
    }
    assert_eq!(real.len(), fake.len(), "number of objects");
}

/// Random commands (append, insert, replace, delete by number and by spec,
/// flush) on generated rulesets with compiled runs, each planned on the
/// command's partial read as a session does: the same outcomes and state
/// on both kernels.
#[test]
fn command_streams_leave_the_same_state() {
    let streams = |sock: &mut Socket| -> Vec<String> {
        let mut out = Vec::new();
        for seed in 1..=3u64 {
            let mut r = classify::gen::Rng::new(seed);
            let text = classify::gen::ruleset(&mut r, 200);
            // Clear what an earlier seed left, then restore.
            let o = restore(sock, &text, false, Some(RunOpts::default()));
            out.push(format!("seed {seed}: restore {}", outcome(&o)));
            let bodies: Vec<String> = text
                .lines()
                .filter_map(|l| l.strip_prefix("-A ").and_then(|l| l.split_once(' ')))
                .map(|(_, b)| b.to_string())
                .collect();
            for step in 0..40 {
                let chain = ["INPUT", "FORWARD", "U0", "U1"][r.below(4) as usize];
                let body = &bodies[r.below(bodies.len() as u64) as usize];
                let words = match r.below(6) {
                    0 => format!("-A {chain} {body}"),
                    1 => format!("-I {chain} 1 {body}"),
                    2 => format!("-R {chain} 1 {body}"),
                    3 => format!("-D {chain} 1"),
                    4 => format!("-D {chain} {body}"),
                    _ => format!("-F {chain}"),
                };
                let argv = iptables::parse::restore::tokenize(&words).unwrap();
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                out.push(format!("{step}: {words}: {}", try_command(sock, &argv)));
                if step % 10 == 9 {
                    out.extend(kernel_state_of(sock, false));
                }
            }
        }
        renumber_anonymous_sets(out)
    };
    let Some(real) = testkit::in_netns(move || streams(&mut Socket::open().expect("netlink")))
    else {
        return;
    };
    let fake = streams(&mut Kernel::new().socket());
    for (a, b) in real.iter().zip(&fake) {
        assert_eq!(a, b, "kernel (left) and fake (right) differ");
    }
    assert_eq!(real.len(), fake.len(), "number of lines");
}

/// [`command`], with the model's refusal as text instead of a panic.
fn try_command(sock: &mut Socket, words: &[&str]) -> String {
    let Ok(p) = parse(words, ParseOpts::command(FAM, "iptables")) else {
        return "unparsable".into();
    };
    let genid = sock.gen().expect("genid").id;
    let scope = keeper::scope::scope(&p);
    let mut snap = read_scoped(sock, FAM, FILTER, &scope).expect("read");
    let mut ap = KernelApply::new(FAM, sock.batch(Some(genid)));
    remember(&mut ap, FILTER, &snap);
    if let Err(e) = ap.run(FILTER, &mut snap.table, p, &mut String::new()) {
        return format!("model: {}", e.msg);
    }
    let first = ap.batch.first_seq();
    let o = sock.commit(&mut ap.batch).expect("commit").outcome;
    let errors: Vec<_> = o
        .errors
        .iter()
        .map(|e| (e.tag, e.seq.wrapping_sub(first), e.code))
        .collect();
    format!(
        "committed {} errors (tag, seq, code) {errors:?}",
        o.committed
    )
}

/// The iptables conformance vectors (`../shared/conformance`) that keeper
/// lowers, one restore per file, family and table: the same errors and
/// state on both kernels (what the kernel keeps of every expression kind
/// nfkeeper writes). Skips without the vectors.
#[test]
fn conformance_vectors_leave_the_same_state() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/iptables-1.8.11/extensions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIP: conformance vectors not found at {}", dir.display());
        return;
    };
    let mut files: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "t"))
        .collect();
    files.sort();
    let mut restores: Vec<(Family, TableKind, String)> = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        let fams: &[Family] = if name.starts_with("libxt_") {
            &[Family::Ipv4, Family::Ipv6]
        } else if name.starts_with("libip6t_") {
            &[Family::Ipv6]
        } else {
            &[Family::Ipv4]
        };
        for &fam in fams {
            restores.extend(vector_restores(fam, &text));
        }
    }
    assert!(restores.len() > 50, "{} restores", restores.len());
    let run = move |sock: &mut Socket| -> Vec<String> {
        let mut out = Vec::new();
        for (i, (fam, kind, text)) in restores.iter().enumerate() {
            let o = restore_in(sock, *fam, *kind, text, false, None);
            out.push(format!("restore {i}: {}", outcome(&o)));
            out.extend(kernel_state(sock));
        }
        renumber_anonymous_sets(out)
    };
    let run2 = run.clone();
    let Some(real) = testkit::in_netns(move || run(&mut Socket::open().expect("netlink"))) else {
        return;
    };
    let fake = run2(&mut Kernel::new().socket());
    for (a, b) in real.iter().zip(&fake) {
        assert_eq!(a, b, "kernel (left) and fake (right) differ");
    }
    assert_eq!(real.len(), fake.len(), "number of objects");
}

/// The restores of one vector file for `fam`: per table section, every OK
/// vector the model takes and keeper lowers, appended to the section's
/// first chain.
fn vector_restores(fam: Family, text: &str) -> Vec<(Family, TableKind, String)> {
    let mut out = Vec::new();
    let (mut kind, mut chain) = (FILTER, "INPUT".to_string());
    let mut lines: Vec<String> = Vec::new();
    let mut flush = |kind: TableKind, lines: &mut Vec<String>| {
        if !lines.is_empty() {
            let body: String = lines.drain(..).map(|l| l + "\n").collect();
            out.push((fam, kind, format!("*{}\n{body}COMMIT\n", kind.name())));
        }
    };
    for line in text.lines() {
        if let Some(t) = line.strip_prefix('*') {
            flush(kind, &mut lines);
            kind = TableKind::from_name(t.trim()).unwrap_or(FILTER);
            continue;
        }
        if let Some(c) = line.strip_prefix(':') {
            chain = c.split(',').next().unwrap_or("INPUT").to_string();
            continue;
        }
        let item: Vec<&str> = line.split(';').collect();
        if line.starts_with('#') || item.len() != 3 || item[2] != "OK" {
            continue;
        }
        let Ok(words) = iptables::parse::restore::tokenize(item[0]) else {
            continue;
        };
        let mut argv: Vec<&str> = vec!["-A", &chain];
        argv.extend(words.iter().map(String::as_str));
        let o = ParseOpts {
            family: fam,
            restore: true,
            table: Some(kind),
            prog: "iptables",
        };
        let Ok(p) = parse(&argv, o) else { continue };
        // Keep what the model takes and keeper lowers.
        let mut t = ruleset::Table::new(fam, kind);
        let mut ap = KernelApply::new(fam, nft::Batch::new(0, None));
        if ap.run(kind, &mut t, p, &mut String::new()).is_ok() {
            lines.push(format!("-A {chain} {}", item[0]));
        }
    }
    flush(kind, &mut lines);
    out
}
