//! `xtables::from_nft` against the kernel, in a fresh network namespace
//! (`testkit::in_netns`), iptables-nft the oracle: only iptables-nft's
//! table names are listed, tables read and decoded, and deleted only when
//! unchanged since read. Skips without root or iptables-nft.

use ruleset::Family;
use std::process::Command;
use xtables::from_nft;

fn ipt(args: &[&str]) {
    let o = Command::new("iptables-nft")
        .args(args)
        .output()
        .expect("iptables-nft");
    assert!(
        o.status.success(),
        "iptables-nft {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn read_and_delete_unchanged_tables() {
    if Command::new("iptables-nft")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIP: iptables-nft (the oracle) is not installed");
        return;
    }
    let res = testkit::in_netns(|| {
        let mut sock = nft::Socket::open().unwrap();
        assert!(from_nft::table_names(&mut sock, Family::Ipv4)
            .unwrap()
            .is_empty());
        ipt(&["-N", "c"]);
        ipt(&["-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "c"]);
        ipt(&["-A", "c", "-j", "ACCEPT"]);
        ipt(&["-P", "FORWARD", "DROP"]);
        ipt(&[
            "-t",
            "nat",
            "-A",
            "POSTROUTING",
            "-o",
            "eth0",
            "-j",
            "MASQUERADE",
        ]);
        let o = Command::new("nft")
            .args(["add", "table", "ip", "foreign"])
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_eq!(
            from_nft::table_names(&mut sock, Family::Ipv4).unwrap(),
            ["filter", "nat"]
        );

        // iptables-nft creates the built-in chains it uses only (no OUTPUT).
        let filter = from_nft::read(&mut sock, Family::Ipv4, "filter").unwrap();
        let mut text = String::new();
        filter.table.save(Family::Ipv4, &mut text);
        assert_eq!(
            text,
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:c - [0:0]\n\
             [0:0] -A INPUT -p tcp -m tcp --dport 22 -j c\n[0:0] -A c -j ACCEPT\nCOMMIT\n"
        );
        let nat = from_nft::read(&mut sock, Family::Ipv4, "nat").unwrap();
        // Another rule in place of one: filter changed, nat did not.
        ipt(&["-R", "c", "1", "-j", "DROP"]);
        let (gone, left) = from_nft::delete_unchanged(
            &mut sock,
            Family::Ipv4,
            &[("filter", &filter.print), ("nat", &nat.print)],
        )
        .unwrap();
        assert_eq!(gone, ["nat"]);
        assert_eq!(
            left,
            [(
                "filter".to_string(),
                "it changed since it was read".to_string()
            )]
        );
        assert_eq!(
            from_nft::table_names(&mut sock, Family::Ipv4).unwrap(),
            ["filter"]
        );
        // Read again, it goes; the foreign table stays.
        let filter = from_nft::read(&mut sock, Family::Ipv4, "filter").unwrap();
        let (gone, left) =
            from_nft::delete_unchanged(&mut sock, Family::Ipv4, &[("filter", &filter.print)])
                .unwrap();
        assert_eq!((gone.len(), left.len()), (1, 0));
        let tables = sock.tables(nft::Family::Ipv4).unwrap();
        let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["foreign"]);
    });
    if res.is_none() {
        eprintln!("SKIP: needs root for a network namespace");
    }
}
