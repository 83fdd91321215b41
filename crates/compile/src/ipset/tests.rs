//! Set specs and key bytes for representative ipset sets.

use super::*;
use ipset::exec::{run, Ctx, NoMirror};
use ipset::model::Store;

/// Create `create` (a full ipset command line) and add `adds`; the spec and
/// every member's key (or the first refusal).
fn build(create: &str, adds: &[&str]) -> Result<(SetSpec, Vec<ElemKey>), String> {
    let mut store = Store::new();
    let mut m = NoMirror;
    let mut ctx = Ctx {
        store: &mut store,
        mirror: &mut m,
        now: 0,
    };
    for line in std::iter::once(create).chain(adds.iter().copied()) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let o = run(&mut ctx, &w, None);
        assert_eq!(o.code, 0, "{line}: {}", o.stderr);
    }
    let set = store.get("s").expect("set s");
    let spec = set_spec(&set.header).map_err(|e| e.msg)?;
    let mut keys = Vec::new();
    if let ipset::model::Members::Map(mm) = &set.members {
        for (k, e) in mm.iter() {
            let entry = ipset::exec::entry(set, k, e, 0);
            keys.push(element_key(&spec, &set.header, &entry).map_err(|e| e.msg)?);
        }
    }
    Ok((spec, keys))
}

#[test]
fn concatenated_key_layout() {
    let (spec, keys) = build(
        "create s hash:ip,port,net",
        &["add s 1.2.3.4,udp:53,10.0.0.0/8"],
    )
    .unwrap();
    assert_eq!(spec.key_type(), (((7 << 6 | 12) << 6 | 13) << 6) | 7);
    assert_eq!(spec.key_len(), 16);
    assert_eq!(spec.field_lens(), [4, 1, 2, 4]);
    assert!(spec.interval);
    assert_eq!(
        keys,
        [ElemKey {
            start: vec![1, 2, 3, 4, 17, 0, 0, 0, 0, 53, 0, 0, 10, 0, 0, 0],
            end: Some(vec![
                1, 2, 3, 4, 17, 0, 0, 0, 0, 53, 0, 0, 10, 255, 255, 255
            ]),
        }]
    );
    let (spec, keys) = build("create s hash:ip family inet6", &["add s 2001:db8::1"]).unwrap();
    assert_eq!(
        (spec.key_type(), spec.key_len(), spec.interval),
        (8, 16, false)
    );
    assert_eq!(keys[0].start[..4], [0x20, 0x01, 0x0d, 0xb8]);
}

#[test]
fn options_map_to_set_properties() {
    let (spec, keys) = build(
        "create s hash:ip netmask 24 timeout 60 counters maxelem 100",
        &["add s 10.1.2.3"],
    )
    .unwrap();
    assert_eq!(
        spec,
        SetSpec {
            fields: vec![Field::Ipv4Addr],
            interval: true,
            timeout: Some(60),
            counter: true,
            size: Some(100),
        }
    );
    assert_eq!(keys[0].start, [10, 1, 2, 0]);
    assert_eq!(keys[0].end.as_deref(), Some(&[10, 1, 2, 255][..]));
    let n = spec.to_nft(nft::Family::Inet, "t", "s");
    assert_eq!(n.timeout, Some(60_000));
    assert_eq!(
        n.flags,
        Some(nft::set::flags::INTERVAL | nft::set::flags::TIMEOUT)
    );
    let (_, keys) = build(
        "create s hash:net,iface",
        &["add s 10.0.0.0/8,eth wildcard"],
    )
    .unwrap();
    let end = keys[0].end.clone().unwrap();
    assert_eq!(&end[4..7], b"eth");
    assert!(end[7..].iter().all(|&b| b == 0xff));
}

#[test]
fn refusals() {
    let cases = [
        (
            "create s list:set",
            vec![],
            "Set type list:set is not supported",
        ),
        (
            "create s hash:ip forceadd",
            vec![],
            "Option forceadd is not supported",
        ),
        (
            "create s hash:ip skbinfo",
            vec![],
            "Option skbinfo is not supported",
        ),
        (
            "create s hash:ip,mark markmask 0xff",
            vec![],
            "Option markmask is not supported",
        ),
        (
            "create s hash:ip bitmask 255.0.255.0",
            vec![],
            "Option bitmask is not supported",
        ),
        (
            "create s hash:net",
            vec!["add s 10.0.0.0/8 nomatch"],
            "Element option nomatch is not supported",
        ),
        (
            "create s bitmap:ip,mac range 10.0.0.0/24",
            vec!["add s 10.0.0.1"],
            "Element without MAC",
        ),
    ];
    for (create, adds, want) in cases {
        let err = build(create, &adds).unwrap_err();
        assert!(err.starts_with(want), "{create}: {err}");
    }
    assert!(
        build("create s hash:ip bitmask 255.255.0.0", &[])
            .unwrap()
            .0
            .interval
    );
}

/// Every member's key bytes decode back to the member (the kernel
/// backend reads sets back this way).
#[test]
fn keys_decode_back_to_members() {
    let cases: &[(&str, &[&str])] = &[
        ("create s hash:ip", &["add s 1.2.3.4", "add s 10.0.0.0/30"]),
        ("create s hash:ip netmask 24", &["add s 10.1.2.3"]),
        ("create s hash:ip family inet6", &["add s 2001:db8::1"]),
        (
            "create s hash:net",
            &["add s 10.0.0.0/8", "add s 192.168.1.1"],
        ),
        ("create s hash:net family inet6", &["add s 2001:db8::/32"]),
        (
            "create s hash:ip,port",
            &["add s 1.2.3.4,udp:53", "add s 1.2.3.4,icmp:ping"],
        ),
        (
            "create s hash:ip,port,ip",
            &["add s 1.2.3.4,tcp:80,5.6.7.8"],
        ),
        (
            "create s hash:ip,port,net",
            &["add s 1.2.3.4,tcp:80,10.0.0.0/8"],
        ),
        (
            "create s hash:net,port,net",
            &["add s 1.0.0.0/8,sctp:9,10.0.0.0/24"],
        ),
        ("create s hash:net,port", &["add s 10.0.0.0/16,tcp:22"]),
        (
            "create s hash:net,net",
            &["add s 10.0.0.0/16,192.168.0.0/24"],
        ),
        (
            "create s hash:net,iface",
            &["add s 10.0.0.0/16,eth0", "add s 10.1.0.0/16,veth+"],
        ),
        ("create s hash:ip,mark", &["add s 1.2.3.4,0x10"]),
        ("create s hash:ip,mac", &["add s 1.2.3.4,02:00:00:00:00:01"]),
        ("create s hash:mac", &["add s 02:00:00:00:00:01"]),
        ("create s bitmap:port range 0-1024", &["add s 80"]),
        ("create s bitmap:ip range 10.0.0.0/16", &["add s 10.0.1.1"]),
        (
            "create s bitmap:ip range 10.0.0.0/16 netmask 24",
            &["add s 10.0.1.1"],
        ),
    ];
    for (create, adds) in cases {
        let mut store = Store::new();
        let mut m = NoMirror;
        let mut ctx = Ctx {
            store: &mut store,
            mirror: &mut m,
            now: 0,
        };
        for line in std::iter::once(*create).chain(adds.iter().copied()) {
            let w: Vec<&str> = line.split_whitespace().collect();
            let o = run(&mut ctx, &w, None);
            assert_eq!(o.code, 0, "{line}: {}", o.stderr);
        }
        let set = store.get("s").expect("set s");
        let spec = set_spec(&set.header).unwrap();
        let ipset::model::Members::Map(mm) = &set.members else {
            unreachable!()
        };
        assert!(!mm.is_empty(), "{create}");
        for (k, e) in mm.iter() {
            let entry = ipset::exec::entry(set, k, e, 0);
            let ek = element_key(&spec, &set.header, &entry).unwrap();
            let d = decode_key(&spec, &ek.start, ek.end.as_deref())
                .unwrap_or_else(|| panic!("{create}: {k:?} does not decode"));
            assert_eq!(d.key, entry.key, "{create}");
            assert_eq!(d.wildcard, entry.wildcard, "{create}");
        }
    }
}
