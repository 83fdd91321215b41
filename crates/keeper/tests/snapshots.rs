//! Reads from snapshots never hide the kernel: for every kind of read that
//! may be answered from a snapshot (save, `-S`, `-S CHAIN`, `-S CHAIN N`,
//! `-L -n`, `-C`), a change made between two reads — by another nfkeeper
//! process or by `nft` behind nfkeeper's back — shows in the second read.
//! Kernel test in a fresh network namespace; skips without root.

use iptables::exec::RestoreOpts;
use iptables::parse::{parse, ParseOpts};
use keeper::{Session, Settings};
use ruleset::{Family, TableKind};

const BASE: &str = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n:pad - [0:0]\n:web - [0:0]\n-A FORWARD -j web\n-A web -s 10.0.0.1/32 -j ACCEPT\n-A web -s 10.0.0.2/32 -j ACCEPT\n";

/// The ruleset every case starts from: [`BASE`] and a chain nothing jumps
/// to, large enough that the table gets a snapshot
/// (`keeper::snapshot::MIN_BYTES`).
fn base() -> String {
    let pad: String = (0..200)
        .map(|i| format!("-A pad -s 10.1.{}.{}/32 -j ACCEPT\n", i / 256, i % 256))
        .collect();
    format!("{BASE}{pad}COMMIT\n")
}

/// The snapshot file of this namespace's `ip filter` table.
fn snapshot_path() -> std::path::PathBuf {
    let cookie = nft::Socket::open()
        .expect("socket")
        .netns_cookie()
        .expect("netns cookie");
    std::path::Path::new(keeper::settings::SNAPSHOT_DIR).join(format!("{cookie:016x}-ip-filter"))
}

fn session() -> Session {
    Session::open(Family::Ipv4, Settings::default()).expect("netlink")
}

fn command(s: &mut Session, line: &str) -> Result<String, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let p = parse(&words, ParseOpts::command(Family::Ipv4, "iptables")).map_err(|e| e.msg)?;
    s.iptables(p).map_err(|e| e.to_string())
}

/// A read, as the user sees it: output and warnings.
fn read(s: &mut Session, what: &str) -> String {
    let out = match what {
        "save" => s.save_text(false, Some(TableKind::Filter)).expect("save"),
        cmd => command(s, cmd).unwrap_or_else(|e| format!("error: {e}")),
    };
    let warn = std::mem::take(&mut s.warnings).join("\n");
    format!("{out}{warn}")
}

#[test]
fn changes_between_reads_always_show() {
    let reads = [
        "save",
        "-S",
        "-S web",
        "-S web 3",
        "-L web 3 -n",
        "-L -n",
        "-C web -s 10.0.0.3 -j ACCEPT",
    ];
    testkit::in_netns(move || {
        for what in reads {
            for by_nft in [false, true] {
                let mut s = session();
                let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
                s.restore(&base(), &o).expect("restore");
                // Every read below may be answered from this snapshot.
                assert!(snapshot_path().exists(), "no snapshot after the restore");
                let first = read(&mut s, what);
                let again = read(&mut s, what);
                assert_eq!(first, again, "{what}: two reads of the same generation");
                if by_nft {
                    // A rule nfkeeper did not write, by another netlink port.
                    let mut sock = nft::Socket::open().expect("socket");
                    let mut b = sock.batch(None);
                    let r = nft::Rule::new(
                        nft::Family::Ipv4,
                        "nfkeeper_filter",
                        "web",
                        vec![nft::Expr::counter()],
                    );
                    b.add_rule(&r, nft::batch::Placement::Append, false, 0);
                    assert!(sock.commit(&mut b).expect("commit").outcome.is_ok());
                } else {
                    // Another nfkeeper process appends.
                    command(&mut session(), "-A web -s 10.0.0.3 -j ACCEPT").expect("append");
                }
                let second = read(&mut s, what);
                assert_ne!(
                    first, second,
                    "{what} (by nft: {by_nft}): the change must show"
                );
                if by_nft {
                    assert!(
                        second.contains("was not written by nfkeeper"),
                        "{what}: {second}"
                    );
                } else if what != "-C web -s 10.0.0.3 -j ACCEPT" {
                    assert!(
                        second.contains("10.0.0.3"),
                        "{what} after another process appended: {second}"
                    );
                }
                // Back to nothing for the next case.
                command(&mut s, "-F").expect("-F");
                command(&mut s, "-X").expect("-X");
            }
        }
    });
}

/// What a snapshot answers (by its chain index) is what the kernel read
/// gives: the same reads with snapshots on and off.
#[test]
fn reads_from_a_snapshot_equal_reads_from_the_kernel() {
    // (read, whether it succeeds: the others must fail alike; an index
    // past the end lists nothing, as in iptables.)
    let reads = [
        ("-L web -n", true),
        ("-L FORWARD -n", true),
        ("-L pad -n", true),
        ("-S web", true),
        ("-S web 2", true),
        ("-S pad 200", true),
        ("-S web 9", true),
        ("-L web 2 -n", true),
        ("-L pad 200 -n --line-numbers", true),
        ("-L pad 7 --line-numbers", true),
        ("-L web 9 -n", true),
        ("-C web -s 10.0.0.2 -j ACCEPT", true),
        ("-C pad -s 10.1.0.7 -j ACCEPT", true),
        ("-C web -s 10.9.9.9 -j ACCEPT", false),
    ];
    testkit::in_netns(move || {
        let mut s = session();
        let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
        s.restore(&base(), &o).expect("restore");
        assert!(snapshot_path().exists(), "no snapshot after the restore");
        let mut plain = Session::open(
            Family::Ipv4,
            Settings {
                snapshots: false,
                ..Settings::default()
            },
        )
        .expect("netlink");
        for (what, ok) in reads {
            let from_snapshot = read(&mut s, what);
            let from_kernel = read(&mut plain, what);
            assert_eq!(from_snapshot, from_kernel, "{what}");
            assert_eq!(
                !from_kernel.starts_with("error"),
                ok,
                "{what}: {from_kernel}"
            );
        }
    });
}

/// A chain registered (`compile::registry`) or unregistered behind
/// nfkeeper's back, by `nft` adding or deleting its element, shows in
/// every read that covers it, and a name both registered and a kernel
/// chain is warned of.
#[test]
fn registry_changes_between_reads_always_show() {
    let whole = ["save", "-S", "-L -n"];
    // (element to delete, to add, chain to create, by nft; the reads of
    // that chain besides the whole table's).
    type Change = (
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
    );
    let changes: [(Change, &[&str]); 3] = [
        (
            (Some("idle"), None, None),
            &["-S idle", "-L idle -n", "-N idle"],
        ),
        (
            (None, Some("extra"), None),
            &["-S extra", "-L extra -n", "-X extra"],
        ),
        ((None, None, Some("idle")), &[]),
    ];
    testkit::in_netns(move || {
        for ((del, add, chain), own) in changes {
            for what in whole.iter().chain(own) {
                let mut s = session();
                let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
                s.restore(&base(), &o).expect("restore");
                command(&mut s, "-N idle").expect("-N idle");
                let first = read(&mut s, what);
                let mut sock = nft::Socket::open().expect("socket");
                let mut b = sock.batch(None);
                let (fam, t) = (nft::Family::Ipv4, "nfkeeper_filter");
                if let Some(n) = del {
                    b.delete(&compile::registry::elems(fam, t, [n]), 0);
                }
                if let Some(n) = add {
                    b.add(&compile::registry::elems(fam, t, [n]), 0);
                }
                if let Some(n) = chain {
                    b.add(&nft::Chain::new(fam, t, n), 0);
                }
                assert!(sock.commit(&mut b).expect("commit").outcome.is_ok());
                let second = read(&mut s, what);
                let case = format!("{what} after {del:?} {add:?} {chain:?}");
                assert_ne!(first, second, "{case}: the change must show");
                if chain.is_some() {
                    assert!(second.contains("also a kernel chain"), "{case}: {second}");
                }
            }
        }
    });
}
