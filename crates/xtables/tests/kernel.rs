//! The getsockopt interface against the kernel, in a fresh network
//! namespace (`testkit::in_netns`), iptables-legacy the oracle: tables are
//! listed without being created, read and decoded, found changed when a
//! rule is replaced in place (same entry count), and emptied. Skips
//! without root or iptables-legacy.

use ruleset::Family;
use std::process::Command;
use xtables::kernel::{table_names, Socket};

fn legacy(args: &[&str]) {
    let o = Command::new("iptables-legacy")
        .args(args)
        .output()
        .expect("iptables-legacy");
    assert!(
        o.status.success(),
        "iptables-legacy {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn read_change_and_empty_a_table() {
    if Command::new("iptables-legacy")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIP: iptables-legacy (the oracle) is not installed");
        return;
    }
    let res = testkit::in_netns(|| {
        // Nothing listed, nothing created by asking for the list.
        assert_eq!(table_names(Family::Ipv4).unwrap(), Vec::<String>::new());
        assert_eq!(table_names(Family::Ipv4).unwrap(), Vec::<String>::new());
        legacy(&["-N", "c"]);
        legacy(&["-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "c"]);
        legacy(&["-A", "c", "-j", "ACCEPT"]);
        legacy(&["-P", "FORWARD", "DROP"]);
        assert_eq!(table_names(Family::Ipv4).unwrap(), ["filter"]);
        assert_eq!(table_names(Family::Ipv6).unwrap(), Vec::<String>::new());

        let sock = Socket::open(Family::Ipv4).unwrap();
        let r = xtables::read_table(&sock, Family::Ipv4, "filter").unwrap();
        let mut text = String::new();
        r.table.save(Family::Ipv4, &mut text);
        assert_eq!(
            text,
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n:c - [0:0]\n\
             [0:0] -A INPUT -p tcp -m tcp --dport 22 -j c\n[0:0] -A c -j ACCEPT\nCOMMIT\n"
        );
        assert!(xtables::unchanged(&sock, Family::Ipv4, "filter", &r.entries).unwrap());
        // Same number of entries, another rule: found changed.
        legacy(&["-R", "c", "1", "-j", "DROP"]);
        assert!(!xtables::unchanged(&sock, Family::Ipv4, "filter", &r.entries).unwrap());

        let now = xtables::read_table(&sock, Family::Ipv4, "filter").unwrap();
        let (info, blob) = xtables::table::empty(Family::Ipv4, now.info.valid_hooks);
        // The kernel wants the current entry count.
        let stale = sock.replace("filter", &info, &blob, now.info.num_entries + 1);
        assert_eq!(stale.unwrap_err().raw_os_error(), Some(libc::EAGAIN));
        sock.replace("filter", &info, &blob, now.info.num_entries)
            .unwrap();
        let after = xtables::read_table(&sock, Family::Ipv4, "filter").unwrap();
        assert!(after.table.is_empty());
        let o = Command::new("iptables-legacy-save").output().unwrap();
        let saved: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(String::from)
            .collect();
        assert_eq!(
            saved,
            [
                "*filter",
                ":INPUT ACCEPT [0:0]",
                ":FORWARD ACCEPT [0:0]",
                ":OUTPUT ACCEPT [0:0]",
                "COMMIT"
            ]
        );
    });
    if res.is_none() {
        eprintln!("SKIP: no network namespace");
    }
}
