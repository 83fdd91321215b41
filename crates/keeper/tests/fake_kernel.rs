//! keeper on the fake kernel (crate `nfk-fakekernel`), without root:
//! direct-mode sessions (`Session::with_socket`) restore, run commands and
//! save on it; `read_table`/`read_scoped` read it back; `verify_table`
//! agrees; armed faults show how the engine takes refusals, conflicts and
//! lost replies. The last three tests also run on the real kernel (in a
//! fresh namespace, skipped without root): the same sessions on both
//! kernels must answer the same and leave the same state.

use fakekernel::{FailAt, Kernel, Loss};
use iptables::exec::{save_table, RestoreOpts};
use iptables::parse::{parse, restore::tokenize, ParseOpts};
use keeper::read::{read_scoped, read_table, Scope};
use keeper::{Session, Settings};
use nft::Socket;
use ruleset::{Family, TableKind};

const FAM: Family = Family::Ipv4;
const FILTER: TableKind = TableKind::Filter;

/// Settings without run compilation (`runs`: with).
fn settings(runs: bool) -> Settings {
    Settings {
        compile: runs.then(Default::default),
        ..Settings::default()
    }
}

fn session(k: &Kernel, runs: bool) -> Session {
    Session::with_socket(k.socket(), FAM, settings(runs))
}

fn ropts(fam: Family) -> RestoreOpts<'static> {
    RestoreOpts::new(fam, "iptables-restore")
}

/// One iptables command; its output or iptables' error text.
fn command(s: &mut Session, words: &[&str]) -> Result<String, String> {
    let p = parse(words, ParseOpts::command(s.family, "iptables")).map_err(|e| e.msg)?;
    s.iptables(p).map_err(|e| e.to_iptables().msg)
}

/// The filter table as the model read back from the kernel saves it.
fn model_save(sock: &mut Socket) -> String {
    let snap = read_table(sock, FAM, FILTER).expect("read");
    assert!(snap.foreign.is_empty(), "{:?}", snap.foreign);
    let mut out = String::new();
    save_table(&snap.table, false, &mut out);
    strip(&out)
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
    let mut s = session(&k, false);
    s.restore(BASE, &ropts(FAM)).expect("restore");
    assert_eq!(
        strip(&s.save_text(false, Some(FILTER)).unwrap()),
        strip(BASE)
    );
    let mut sock = k.socket();
    assert_eq!(model_save(&mut sock), strip(BASE));
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
    assert_eq!(k.stats().commits, 1);
    assert!(k.text().contains("chain web handle"), "{}", k.text());
}

#[test]
fn partial_reads_see_only_their_chains() {
    let k = Kernel::new();
    session(&k, false).restore(BASE, &ropts(FAM)).unwrap();
    let mut sock = k.socket();
    let before = k.stats();
    let scope = Scope::Part {
        names: vec!["web".into()],
        rules_of: vec!["web".into()],
        targets: Vec::new(),
    };
    let snap = read_scoped(&mut sock, FAM, FILTER, &scope).unwrap();
    assert!(snap.exists);
    assert_eq!(snap.table.rules("web").unwrap().count(), 2);
    assert!(snap.table.rules("logdrop").is_err(), "not read");
    // A chain read by name: a handful of requests, whatever the table's
    // size.
    let read = k.stats();
    assert!(
        read.dumps + read.gets - before.dumps - before.gets <= 6,
        "{read:?}"
    );
}

#[test]
fn commands_commit_one_batch_each() {
    let k = Kernel::new();
    let mut s = session(&k, false);
    s.restore(BASE, &ropts(FAM)).unwrap();
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
    let mut sock = k.socket();
    for (words, added, gone) in cases {
        let (gen, batches) = (k.genid(), k.stats().batches);
        command(&mut s, words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
        assert_eq!(
            (k.genid(), k.stats().batches),
            (gen + 1, batches + 1),
            "{words:?}"
        );
        let saved = strip(&s.save_text(false, Some(FILTER)).unwrap());
        assert_eq!(model_save(&mut sock), saved, "{words:?}");
        assert!(
            added.is_empty() || saved.contains(added),
            "{words:?}:\n{saved}"
        );
        assert!(
            gone.is_empty() || !saved.contains(gone),
            "{words:?}:\n{saved}"
        );
    }
}

#[test]
fn refusals_conflicts_and_faults() {
    let k = Kernel::new();
    let mut s = session(&k, false);
    s.restore(BASE, &ropts(FAM)).unwrap();
    command(&mut s, &["-A", "web", "-j", "logdrop"]).unwrap();
    let before = k.text();
    let aborts = k.stats().aborts;
    // A loop the command's partial read cannot see: the kernel refuses it
    // (EMLINK), the session reads more and words it; nothing changes.
    let e = command(&mut s, &["-A", "logdrop", "-j", "web"]).unwrap_err();
    assert!(!e.is_empty());
    assert!(k.stats().aborts > aborts);
    assert_eq!(k.text(), before);
    // A chain still referenced: -X reads it by name only; the kernel's
    // EBUSY refuses the delete.
    assert!(command(&mut s, &["-X", "web"]).is_err());
    assert_eq!(k.text(), before);
    // A failing commit fails the command with its errno's words.
    k.fail_next_commit(FailAt::Commit, 12);
    let e = command(&mut s, &["-A", "web", "-j", "RETURN"]).unwrap_err();
    assert!(e.contains("Cannot allocate memory"), "{e}");
    assert_eq!(k.text(), before);
    // A generation conflict (another writer): read again and commit.
    k.fail_next_commit(FailAt::Begin, 85);
    command(&mut s, &["-A", "web", "-j", "RETURN"]).expect("retried");
    assert!(strip(&s.save_text(false, Some(FILTER)).unwrap()).contains("-A web -j RETURN"));
    // An interrupted dump during the read: read again.
    k.interrupt_next_dump();
    command(&mut s, &["-A", "web", "-j", "ACCEPT"]).expect("read again");
}

#[test]
fn compiled_runs_round_trip() {
    let mut text = String::from(
        "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:blocked - [0:0]\n",
    );
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
    let mut s = session(&k, true);
    s.restore(&text, &ropts(FAM)).expect("restore");
    assert!(
        k.text().contains("  set "),
        "runs should be sets:\n{}",
        k.text()
    );
    assert_eq!(
        strip(&s.save_text(false, Some(FILTER)).unwrap()),
        strip(&text)
    );
    let mut sock = k.socket();
    assert_eq!(model_save(&mut sock), strip(&text));
    let report = keeper::verify::verify_table(&mut sock, FAM, FILTER)
        .unwrap()
        .unwrap();
    assert!(report.diffs.is_empty(), "{:?}", report.diffs);
    // A delete by spec of a run member.
    command(&mut s, &["-D", "INPUT", "-s", "10.1.0.7", "-j", "DROP"]).unwrap();
    let saved = strip(&s.save_text(false, Some(FILTER)).unwrap());
    assert!(!saved.contains("-s 10.1.0.7/32 -j DROP"), "{saved}");
    assert_eq!(model_save(&mut sock), saved);
}

#[test]
fn notifications_of_a_session() {
    let k = Kernel::new();
    let mut events = k.event_socket();
    let mut s = session(&k, false);
    s.restore(BASE, &ropts(FAM)).unwrap();
    let evs = events.try_recv().unwrap();
    let last = evs.last().expect("events");
    assert_eq!((last.msg, last.genid), (nft::msg::NEWGEN, Some(k.genid())));
    assert!(evs.iter().all(|e| e.portid == last.portid && e.portid != 0));
    assert!(evs
        .iter()
        .any(|e| e.msg == nft::msg::NEWRULE && e.chain.as_deref() == Some("web")));
}

/// When every reply of a commit is lost (a receive overrun), the batch
/// may have committed: a retry must not apply the command twice.
#[test]
fn lost_replies_do_not_apply_twice() {
    let k = Kernel::new();
    let mut s = session(&k, false);
    s.restore(BASE, &ropts(FAM)).unwrap();
    k.lose_next_replies(Loss::Everything);
    let r = command(&mut s, &["-A", "web", "-j", "RETURN"]);
    let saved = strip(&s.save_text(false, Some(FILTER)).unwrap());
    assert_eq!(
        saved.matches("-A web -j RETURN").count(),
        1,
        "{r:?}\n{saved}"
    );
}

/// The same for ipset: an `ipset add` whose commit lost every reply is
/// answered as unknown (ipset's kernel error, exit 1), not replayed, and
/// the member is in the kernel once.
#[test]
fn lost_replies_do_not_apply_an_ipset_twice() {
    let k = Kernel::new();
    let mut s = session(&k, false);
    let job = |args: &[&str]| keeper::ipset::Job {
        args: args.iter().map(|a| a.to_string()).collect(),
        input: None,
    };
    let o = s.ipset(job(&["create", "s", "hash:ip", "counters"]));
    assert_eq!(o.code, 0, "{o:?}");
    k.lose_next_replies(Loss::Everything);
    let o = s.ipset(job(&["add", "s", "192.0.2.1"]));
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stderr.contains("was lost"), "{o:?}");
    let o = s.ipset(job(&["save", "s"]));
    assert_eq!(o.stdout.matches("add s 192.0.2.1").count(), 1, "{o:?}");
}

#[path = "fake_kernel/differential.rs"]
mod differential;

/// `--noflush` rewrites of a chain whose lines repeat the kernel's rule
/// texts: an unchanged chain keeps its kernel rules (same handles), a
/// changed line is written, and after a rename in the same restore an old
/// text means what it says (the jump to the old name), not the renamed
/// rule the model holds under that text's id.
#[test]
fn noflush_rewrites_reuse_rules_by_their_text() {
    const START: &str = "*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:front - [0:0]
:web - [0:0]
:logdrop - [0:0]
-A front -s 10.0.0.1/32 -j web
-A front -p tcp -m tcp --dport 22 -m comment --comment \"ssh in\" -j ACCEPT
-A web -j logdrop
COMMIT
";
    // (restore input, expected save of front after it, or None: refused)
    let cases: &[(&str, Option<&str>)] = &[
        (
            "*filter\n:front - [0:0]\n-A front -s 10.0.0.1/32 -j web\n-A front -p tcp -m tcp --dport 22 -m comment --comment \"ssh in\" -j ACCEPT\nCOMMIT\n",
            Some("-A front -s 10.0.0.1/32 -j web\n-A front -p tcp -m tcp --dport 22 -m comment --comment \"ssh in\" -j ACCEPT\n"),
        ),
        (
            "*filter\n:front - [0:0]\n-A front -s 10.0.0.1/32 -j web\n-A front -p tcp -m tcp --dport 23 -j ACCEPT\nCOMMIT\n",
            Some("-A front -s 10.0.0.1/32 -j web\n-A front -p tcp -m tcp --dport 23 -j ACCEPT\n"),
        ),
        (
            "*filter\n-E web www\n:front - [0:0]\n-A front -s 10.0.0.1/32 -j web\nCOMMIT\n",
            None,
        ),
        (
            "*filter\n-E web www\n:front - [0:0]\n-A front -s 10.0.0.1/32 -j www\nCOMMIT\n",
            Some("-A front -s 10.0.0.1/32 -j www\n"),
        ),
    ];
    let front = |save: &str| -> String {
        save.lines()
            .filter(|l| l.starts_with("-A front "))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    for (input, want) in cases {
        let k = Kernel::new();
        let mut s = session(&k, false);
        s.restore(START, &ropts(FAM)).expect("restore");
        let mut sock = k.socket();
        let before = read_table(&mut sock, FAM, FILTER).unwrap();
        let start_save = model_save(&mut sock);
        let mut o = ropts(FAM);
        o.noflush = true;
        let got = s.restore(input, &o);
        let after_save = model_save(&mut sock);
        match want {
            None => {
                assert!(got.is_err(), "{input}: accepted");
                assert_eq!(after_save, start_save, "{input}: half applied");
            }
            Some(w) => {
                assert!(got.is_ok(), "{input}: {:?}", got.as_ref().err());
                assert_eq!(front(&after_save), *w, "{input}");
            }
        }
        if input == &cases[0].0 {
            // Nothing changed: the kernel holds the same rules.
            let after = read_table(&mut sock, FAM, FILTER).unwrap();
            let handles = |s: &keeper::read::Snapshot| {
                let mut v: Vec<u64> = s.handles.values().copied().collect();
                v.sort_unstable();
                v
            };
            assert_eq!(handles(&before), handles(&after), "{input}");
        }
    }
}
