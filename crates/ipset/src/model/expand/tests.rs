//! Element expansion per type: which members an element stands for.

use super::*;
use crate::model::Header;
use crate::parse::{self, Command, Env};

/// Members (printed) that `add ELEM` stands for in a set created with
/// `create_args`, or the kernel error.
fn members(create_args: &str, elem: &str) -> Result<Vec<String>, Kernel> {
    let words: Vec<&str> = format!("create s {create_args}")
        .leak()
        .split_whitespace()
        .collect();
    let p = parse::parse(&words, None, Env::default(), &|_: &str| None).expect("create parses");
    let Command::Create { ty, data, .. } = p.cmd else {
        panic!()
    };
    let h = Header::create(ty, &data, 0).expect("header");
    let fam = h.family;
    let lookup = move |_: &str| Some((ty, fam));
    let words: Vec<&str> = format!("add s {elem}").leak().split_whitespace().collect();
    let p = parse::parse(&words, None, Env::default(), &lookup).expect("add parses");
    let Command::Add { data, .. } = p.cmd else {
        panic!()
    };
    let x = expand(&h, &data, Adt::Add)?;
    Ok(x.iter()
        .map(|k| crate::print::text::key_text(ty, &k, &Default::default()))
        .collect())
}

fn ok(v: &[&str]) -> Result<Vec<String>, Kernel> {
    Ok(v.iter().map(|s| s.to_string()).collect())
}

#[test]
fn per_type_expansion() {
    type Case = (&'static str, &'static str, Result<Vec<String>, Kernel>);
    let cases: Vec<Case> = vec![
        (
            "hash:ip",
            "1.1.1.1-1.1.1.3",
            ok(&["1.1.1.1", "1.1.1.2", "1.1.1.3"]),
        ),
        (
            "hash:ip",
            "1.1.1.3-1.1.1.1",
            ok(&["1.1.1.1", "1.1.1.2", "1.1.1.3"]),
        ),
        (
            "hash:ip",
            "10.0.0.0/30",
            ok(&["10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3"]),
        ),
        (
            "hash:ip netmask 24",
            "10.0.0.7-10.0.2.1",
            ok(&["10.0.0.0", "10.0.1.0", "10.0.2.0"]),
        ),
        ("hash:ip", "0.0.0.0", Err(Kernel::HashElem)),
        ("hash:ip", "1.1.1.1/0", Err(Kernel::InvalidCidr)),
        ("hash:ip family inet6", "::", Err(Kernel::HashElem)),
        ("hash:ip family inet6 netmask 64", "2::1", ok(&["2::"])),
        (
            "hash:net",
            "10.2.0.0-10.2.1.12",
            ok(&["10.2.0.0/24", "10.2.1.0/29", "10.2.1.8/30", "10.2.1.12"]),
        ),
        (
            "hash:net",
            "0.0.0.0-255.255.255.255",
            Err(Kernel::HashRange),
        ),
        ("hash:net", "1.2.3.4/0", Err(Kernel::InvalidCidr)),
        ("hash:net,iface", "1.2.3.4/0,eth0", ok(&["0.0.0.0/0,eth0"])),
        (
            "hash:ip,port",
            "1.1.1.1-1.1.1.2,tcp:80-81",
            ok(&[
                "1.1.1.1,tcp:80",
                "1.1.1.1,tcp:81",
                "1.1.1.2,tcp:80",
                "1.1.1.2,tcp:81",
            ]),
        ),
        ("hash:ip,port", "1.1.1.1,gre:0", ok(&["1.1.1.1,gre:0"])),
        (
            "hash:ip,port",
            "1.1.1.1,icmp:ping",
            ok(&["1.1.1.1,icmp:echo-request"]),
        ),
        ("hash:ip,port", "0.0.0.0,80", Err(Kernel::Invalid)),
        (
            "hash:ip,port family inet6",
            "1::1,udp:53-54",
            ok(&["1::1,udp:53", "1::1,udp:54"]),
        ),
        (
            "hash:ip,port,net",
            "1.1.1.1,80,10.0.0.0-10.0.0.5",
            ok(&["1.1.1.1,tcp:80,10.0.0.0/30", "1.1.1.1,tcp:80,10.0.0.4/31"]),
        ),
        (
            "hash:net,net",
            "1.1.1.0/31,2.2.2.0-2.2.2.2",
            ok(&["1.1.1.0/31,2.2.2.0/31", "1.1.1.0/31,2.2.2.2"]),
        ),
        (
            "hash:net,port,net",
            "0.0.0.0/0,80,1.1.1.1",
            ok(&["0.0.0.0/0,tcp:80,1.1.1.1"]),
        ),
        (
            "hash:ip,mark markmask 0xff00",
            "1.1.1.1,0x1234",
            ok(&["1.1.1.1,0x00001200"]),
        ),
        ("hash:ip,mark", "0.0.0.0,0", Err(Kernel::HashElem)),
        ("hash:mac", "00:00:00:00:00:00", Err(Kernel::HashElem)),
        (
            "hash:ip,mac",
            "1.1.1.1,aa:bb:cc:dd:ee:ff",
            ok(&["1.1.1.1,AA:BB:CC:DD:EE:FF"]),
        ),
        (
            "bitmap:ip range 10.0.0.0/16 netmask 24",
            "10.0.0.5-10.0.2.4",
            ok(&["10.0.0.0", "10.0.1.0"]),
        ),
        (
            "bitmap:ip range 10.0.0.0/16",
            "10.1.0.0",
            Err(Kernel::BitmapRange),
        ),
        (
            "bitmap:port range 1-1024",
            "1000-1030",
            Err(Kernel::BitmapRange),
        ),
        ("bitmap:port range 1-1024", "22-23", ok(&["22", "23"])),
    ];
    for (create, elem, want) in cases {
        assert_eq!(members(create, elem), want, "{create} / {elem}");
    }
}

#[test]
fn counting_and_membership_without_iterating() {
    let k = |s: &str| Net {
        addr: s.parse().unwrap(),
        prefix: 32,
    };
    let x = Expansion {
        ip: Some(AddrSeq::Hosts {
            from: 10,
            to: 1 << 30,
            step: 1,
            prefix: 32,
            mask: false,
        }),
        port: Some(PortSeq {
            proto: 6,
            from: 1,
            to: 100,
        }),
        ip2: None,
        base: Key::default(),
        nomatch: false,
        wildcard: false,
    };
    assert_eq!(x.count(), u128::from((1u32 << 30) - 10 + 1) * 100);
    let probe = Key {
        ip: Some(k("0.0.1.0")),
        port: Some(ProtoPort { proto: 6, port: 50 }),
        ..Key::default()
    };
    assert!(x.contains(&probe));
    assert_eq!(
        x.nth(100),
        Key {
            ip: Some(k("0.0.0.11")),
            port: Some(ProtoPort { proto: 6, port: 1 }),
            ..Key::default()
        }
    );
    let wrong_proto = Key {
        port: Some(ProtoPort {
            proto: 17,
            port: 50,
        }),
        ..probe
    };
    assert!(!x.contains(&wrong_proto));
}
