//! Restores at the edges, on the fake kernel (no root): what the kernel
//! refuses is reported at the input line that asked for it, with
//! iptables-nft's words and exit code; many sections of one table cost
//! one table write; nfkeeper's own objects (interval end markers) raise no
//! warning.

use fakekernel::Kernel;
use iptables::exec::RestoreOpts;
use keeper::{Session, Settings};
use ruleset::{Family, TableKind};

fn session(k: &Kernel) -> Session {
    Session::with_socket(k.socket(), Family::Ipv4, Settings::default())
}

fn restore(s: &mut Session, input: &str, noflush: bool) -> Result<(), (String, i32)> {
    let mut o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    o.noflush = noflush;
    s.restore(input, &o)
        .map(|_| ())
        .map_err(|e| (e.render("iptables-restore"), e.exit_code()))
}

/// `n` chains each jumping to the next, the first from INPUT.
fn chain_of_jumps(n: usize) -> String {
    let mut t = String::from("*filter\n");
    for i in 0..n {
        t.push_str(&format!(":C{i} - [0:0]\n"));
    }
    t.push_str("-A INPUT -j C0\n");
    for i in 0..n - 1 {
        t.push_str(&format!("-A C{i} -j C{}\n", i + 1));
    }
    t.push_str("COMMIT\n");
    t
}

#[test]
fn kernel_refusals_name_their_line() {
    // A jump chain deeper than the kernel allows (16 levels): the model
    // takes it, the kernel refuses one of the rules that make it too deep;
    // the error names that rule's input line and chain, as iptables-nft
    // does, with its exit code. Nothing is half-applied.
    let input = chain_of_jumps(20);
    for noflush in [false, true] {
        let k = Kernel::new();
        let mut s = session(&k);
        let (text, code) = restore(&mut s, &input, noflush).expect_err("too deep");
        assert_eq!(code, 4, "{text}");
        let rest = text
            .strip_prefix("iptables-restore v1.8.11 (nfkeeper): \nline ")
            .unwrap_or_else(|| panic!("{text}"));
        let (line, rest) = rest.split_once(": ").expect("line number");
        let line: usize = line.parse().expect("number");
        let chain = rest
            .strip_prefix("RULE_APPEND failed (Too many links): rule in chain ")
            .unwrap_or_else(|| panic!("{text}"))
            .trim_end();
        let asked = input.lines().nth(line - 1).expect("a line of the input");
        assert!(
            asked.starts_with(&format!("-A {chain} -j C")),
            "line {line} is {asked:?}, the error names chain {chain}"
        );
        assert!(k.tables().is_empty(), "{}", k.text());
    }
}

#[test]
fn many_sections_of_one_table_are_one_table_write() {
    let k = Kernel::new();
    let mut s = session(&k);
    let mut input = String::new();
    for i in 0..2000 {
        input.push_str(&format!(
            "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s 10.0.{}.{} -j ACCEPT\nCOMMIT\n",
            i / 250,
            i % 250
        ));
    }
    restore(&mut s, &input, false).expect("restore");
    // The last section wins, as in iptables; one commit.
    let saved = s.save_text(false, Some(TableKind::Filter)).unwrap();
    assert!(
        saved.contains("-A INPUT -s 10.0.7.249/32 -j ACCEPT\n"),
        "{saved}"
    );
    assert_eq!(saved.matches("-A INPUT").count(), 1, "{saved}");
    assert_eq!(k.stats().commits, 1);
}

#[test]
fn own_interval_runs_raise_no_warning() {
    let k = Kernel::new();
    let mut s = session(&k);
    let mut input = String::from("*filter\n");
    for i in 0..40 {
        input.push_str(&format!("-A INPUT -s 10.{i}.0.0/16 -j DROP\n"));
    }
    input.push_str("COMMIT\n");
    restore(&mut s, &input, false).expect("restore");
    let saved = s.save_text(false, Some(TableKind::Filter)).unwrap();
    assert_eq!(saved.matches("-A INPUT -s").count(), 40, "{saved}");
    assert!(
        k.sets(nft::Family::Ipv4, "nfkeeper_filter")
            .iter()
            .any(|x| x.name.starts_with("__nfk_run")),
        "compiled into an interval run:\n{}",
        k.text()
    );
    assert_eq!(s.warnings, Vec::<String>::new());
}

#[test]
fn only_what_frees_something_leaves_the_kernel_a_deferred_destruction() {
    // A command whose batch leaves the kernel objects to free after a grace
    // period makes its exit wait for one (or start a closer): creating
    // tables and chains into a namespace without them must not; replacing
    // or deleting anything must (a registered chain's element too). Each step in a session of its own, as the
    // CLI runs it.
    let k = Kernel::new();
    let fresh = "*filter\n:X - [0:0]\n:Y - [0:0]\n-A X -j ACCEPT\nCOMMIT\n";
    let steps: &[(&str, bool, bool)] = &[
        // (input, noflush, defers)
        (fresh, false, false),
        ("*nat\n:N - [0:0]\nCOMMIT\n", true, false),
        ("*filter\n-N Z\n-A Z -j DROP\nCOMMIT\n", true, false),
        ("*filter\n-A X -s 10.0.0.1 -j DROP\nCOMMIT\n", true, false),
        // Y is a registry element (`compile::registry`): its first rule
        // makes it a kernel chain and deletes the element.
        ("*filter\n-A Y -s 10.0.0.1 -j DROP\nCOMMIT\n", true, true),
        // The whole filter table replaced: the old one is freed.
        (fresh, false, true),
        ("*filter\n-D X -j ACCEPT\nCOMMIT\n", true, true),
        ("*filter\n-X Y\nCOMMIT\n", true, true),
    ];
    for (input, noflush, defers) in steps {
        let mut s = session(&k);
        restore(&mut s, input, *noflush).unwrap_or_else(|e| panic!("{input}: {e:?}"));
        assert_eq!(
            s.defers_destruction(),
            *defers,
            "{input} (noflush {noflush})"
        );
    }
}
