//! What the fake kernel costs a test: a direct-mode restore of N rules
//! (one user chain per 400 rules, each rule with a multiport match, i.e.
//! an anonymous set) on `fakekernel::Kernel`, read back, then one small
//! commit on top. Prints wall times.
//!
//! `cargo run --release -p nfk-keeper --example fake_kernel_cost -- [N] [runs]`
//! (`runs`: compile runs of similar rules into sets).

use std::time::Instant;

use iptables::exec::RestoreOpts;
use keeper::read::read_table;
use keeper::{Session, Settings};
use ruleset::{Family, TableKind};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let runs = std::env::args().nth(2).is_some_and(|a| a == "runs");
    let chains = n.div_ceil(400).max(1);
    let mut text =
        String::from("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    for c in 0..chains {
        text.push_str(&format!(":c{c} - [0:0]\n"));
    }
    for i in 0..n {
        text.push_str(&format!(
            "-A c{} -s 10.{}.{}.{}/32 -p tcp -m multiport --dports 22,80,{} -j ACCEPT\n",
            i % chains,
            i / 65536 % 256,
            i / 256 % 256,
            i % 256,
            1000 + i % 1000
        ));
    }
    for c in 0..chains {
        text.push_str(&format!("-A INPUT -j c{c}\n"));
    }
    text.push_str("COMMIT\n");

    let k = fakekernel::Kernel::new();
    let _listener = k.event_socket();
    let settings = Settings {
        compile: runs.then(Default::default),
        ..Settings::default()
    };
    let mut s = Session::with_socket(k.socket(), Family::Ipv4, settings);
    let t = Instant::now();
    s.restore(&text, &RestoreOpts::new(Family::Ipv4, "iptables-restore"))
        .expect("restore");
    let restore = t.elapsed();
    let mut sock = k.socket();
    let t = Instant::now();
    let snap = read_table(&mut sock, Family::Ipv4, TableKind::Filter).expect("read");
    let read = t.elapsed();
    assert_eq!(snap.table.chains().len(), chains + 3);
    let t = Instant::now();
    let mut b = sock.batch(None);
    b.add(
        &nft::Chain::new(nft::Family::Ipv4, "nfkeeper_filter", "x"),
        0,
    );
    assert!(sock.commit(&mut b).expect("commit").outcome.is_ok());
    let small = t.elapsed();
    println!(
        "{n} rules{}: restore (read, plan, commit) {restore:.2?}, read back {read:.2?}, one-chain commit on top {small:.2?}",
        if runs { " (runs)" } else { "" }
    );
}
