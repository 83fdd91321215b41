//! A `--noflush` restore that declares many chains (kube-proxy's full
//! sync) reads their rules with one dump per chain on a second socket, in
//! a thread beside the reading (`keeper::read`, from 256 chains on). The
//! read must be the one a single socket makes: an identical sync sends
//! nothing, a changed rule in any chain is the only change, the save text
//! is the input's, `verify` clean. On the fake kernel (no root) and on the
//! real one in a fresh network namespace.

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
