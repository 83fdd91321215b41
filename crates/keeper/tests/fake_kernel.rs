//! keeper's planning and reading against the fake kernel (crate
//! `nfk-fakekernel`), without root: restores and commands planned by
//! `KernelApply` commit on it, `read_table`/`read_scoped` read them back,
//! `save_table_to` and `verify_table` agree. Needs no namespace: nothing
//! here touches the real kernel.

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

fn ropts(noflush: bool) -> RestoreOpts<'static> {
    RestoreOpts {
        noflush,
        ..RestoreOpts::new(FAM, "iptables-restore")
    }
}

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
    let genid = sock.gen().expect("genid").id;
    let mut ap = KernelApply::new(FAM, sock.batch(Some(genid)));
    ap.compile = compile;
    let snap = read_table(sock, FAM, FILTER).expect("read");
    remember(&mut ap, FILTER, &snap);
    let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
    rs.replace_table(snap.table);
    restore_with(&mut rs, input, &ropts(noflush), &mut ap).expect("restore input");
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
