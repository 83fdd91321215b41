//! Many chains are read with one dump per chain on a second socket, in a
//! thread beside the reading (from 256 chains on): a `--noflush` restore
//! that declares them all (kube-proxy's full sync, `keeper::read`) and
//! `iptables-save -c` of many long chains (`keeper::save`). The result
//! must be the one a single socket gives: an identical sync sends nothing,
//! a changed rule in any chain is the only change, the save text is the
//! input's (a compiled run's members in their place), `verify` clean. On
//! the fake kernel (no root) and on the real one in a fresh network
//! namespace.

use keeper::{Session, Settings};
use nft::Socket;
use ruleset::{Family, TableKind};
use testkit::in_netns;

mod rewrite_support;
use rewrite_support::{assert_clean, restore};

/// Chains declared: above the threshold of the dumping thread.
const CHAINS: usize = 300;

/// Every chain `Cn` with two rules (one a jump to the next chain, so the
/// reading follows references), `changed` with another address.
fn input(changed: Option<usize>) -> String {
    let mut s = String::from("*filter\n");
    for i in 0..CHAINS {
        s.push_str(&format!(":C{i} - [0:0]\n"));
    }
    for i in 0..CHAINS {
        let last = if changed == Some(i) { 200 } else { 1 };
        s.push_str(&format!(
            "-A C{i} -s 10.{}.{}.{last}/32 -m comment --comment \"chain {i}\" -j ACCEPT\n",
            i / 256,
            i % 256
        ));
        if i + 1 < CHAINS {
            s.push_str(&format!("-A C{i} -p tcp -j C{}\n", i + 1));
        }
    }
    s.push_str("COMMIT\n");
    s
}

/// The rules of the chains as iptables-save prints them, sorted (it
/// prints user chains by name).
fn saved(open: &dyn Fn() -> Socket) -> Vec<String> {
    let mut s = Session::with_socket(open(), Family::Ipv4, Settings::default());
    let mut v: Vec<String> = s
        .save_text(false, Some(TableKind::Filter))
        .expect("save")
        .lines()
        .filter(|l| l.starts_with("-A C"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn run(open: &dyn Fn() -> Socket) {
    let want = |changed| -> Vec<String> {
        let mut v: Vec<String> = input(changed)
            .lines()
            .filter(|l| l.starts_with("-A "))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    let mut sock = open();
    let sync = |text: &str| {
        let mut s = Session::with_socket(open(), Family::Ipv4, Settings::default());
        restore(&mut s, text, true, false).expect("sync");
    };
    sync(&input(None));
    assert_eq!(saved(open), want(None), "first sync");
    assert_clean(&mut sock, "first sync");
    // (input, whether the kernel changes)
    let steps = [
        (None, false),
        (Some(0), true),
        (Some(150), true),
        (Some(299), true),
        (None, true),
        (None, false),
    ];
    for (changed, sends) in steps {
        let g0 = sock.gen().expect("gen").id;
        sync(&input(changed));
        assert_eq!(saved(open), want(changed), "sync changing {changed:?}");
        assert_clean(&mut sock, "sync");
        let sent = sock.gen().expect("gen").id != g0;
        assert_eq!(sent, sends, "sync changing {changed:?}: kernel changed");
    }
}

/// Chains of [`save_input`]: above the threshold, and long enough that
/// the save dumps them one by one.
const LONG_CHAINS: usize = 260;
const LONG: usize = 40;

/// `LONG_CHAINS` chains of `LONG` rules each (`[p:b]` counters); chain L7
/// starts with rules that compile into a run.
fn save_input() -> String {
    let mut s =
        String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for c in 0..LONG_CHAINS {
        s.push_str(&format!(":L{c} - [0:0]\n"));
    }
    for c in 0..LONG_CHAINS {
        for r in 0..LONG {
            let body = if c == 7 && r < 10 {
                format!("-s 10.7.0.{r}/32 -j ACCEPT")
            } else {
                format!(
                    "-s 10.{}.{}.{r}/32 -j LOG --log-prefix \"L{c} r{r} \"",
                    c / 256,
                    c % 256
                )
            };
            s.push_str(&format!("[{r}:{}] -A L{c} {body}\n", r * 100));
        }
    }
    s.push_str("COMMIT\n");
    s
}

fn save_many_long_chains(open: &dyn Fn() -> Socket) {
    let settings = || Settings {
        snapshots: false,
        ..Settings::default()
    };
    let input = save_input();
    let mut s = Session::with_socket(open(), Family::Ipv4, settings());
    restore(&mut s, &input, false, true).expect("restore");
    let mut s = Session::with_socket(open(), Family::Ipv4, settings());
    let text = s.save_text(true, Some(TableKind::Filter)).expect("save");
    // iptables-save prints user chains by name: the input's chains in
    // that order, each chain's rules in its order.
    let mut want: Vec<(String, usize, &str)> = input
        .lines()
        .filter(|l| l.contains("] -A L"))
        .enumerate()
        .map(|(i, l)| {
            let chain = l.split(' ').nth(2).unwrap_or_default().to_string();
            (chain, i, l)
        })
        .collect();
    want.sort();
    let want: Vec<&str> = want.into_iter().map(|w| w.2).collect();
    let got: Vec<&str> = text.lines().filter(|l| l.contains("] -A L")).collect();
    assert_eq!(got.len(), want.len(), "rules saved");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    let mut sock = open();
    assert_clean(&mut sock, "many long chains");
}

#[test]
fn save_of_many_long_chains_on_the_fake_kernel() {
    let k = fakekernel::Kernel::new();
    save_many_long_chains(&|| k.socket());
}

#[test]
fn save_of_many_long_chains_on_the_kernel() {
    if in_netns(|| save_many_long_chains(&|| Socket::open().expect("socket"))).is_none() {
        eprintln!("SKIP: save_of_many_long_chains_on_the_kernel needs root");
    }
}

#[test]
fn syncs_of_many_chains_on_the_fake_kernel() {
    let k = fakekernel::Kernel::new();
    run(&|| k.socket());
}

#[test]
fn syncs_of_many_chains_on_the_kernel() {
    if in_netns(|| run(&|| Socket::open().expect("socket"))).is_none() {
        eprintln!("SKIP: syncs_of_many_chains_on_the_kernel needs root");
    }
}
