//! ipset's translation vectors (`../shared/conformance/ipset-7.21/tests/
//! xlate/xlate.t` and `xlate.t.nft`): the restore input runs through the
//! ipset model, and for every set the nftables set nfkeeper derives must
//! match the declaration ipset-translate gives (key types, interval,
//! timeout, counter, size), and every member's key bytes, timeout, counters
//! and comment must match the translated element. Compared field by field
//! (the nft text is parsed here independently of the mapping under test).

use compile::ipset::{element_key, set_spec, Field};
use ipset::exec::{entry, run, Ctx, NoMirror};
use ipset::model::{Members, Store};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

fn xlate_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/ipset-7.21/tests/xlate");
    d.is_dir().then_some(d)
}

#[derive(Debug, Default)]
struct NftSet {
    types: Vec<String>,
    counter: bool,
    timeout: Option<u32>,
    size: Option<u32>,
    interval: bool,
}

/// One translated element: key fields as text, and its values.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct NftElem {
    start: Vec<u8>,
    end: Vec<u8>,
    timeout: Option<u32>,
    counters: Option<(u64, u64)>,
    comment: Option<String>,
}

/// The part between `{` and the last `}`.
fn braces(l: &str) -> &str {
    let a = l.find('{').expect("{");
    let b = l.rfind('}').expect("}");
    l[a + 1..b].trim()
}

fn parse_set(body: &str) -> NftSet {
    let mut s = NftSet::default();
    for stmt in body.split(';').map(str::trim).filter(|x| !x.is_empty()) {
        if let Some(t) = stmt.strip_prefix("type ") {
            s.types = t.split(" . ").map(str::to_string).collect();
        } else if stmt == "counter" {
            s.counter = true;
        } else if let Some(t) = stmt.strip_prefix("timeout ") {
            s.timeout = Some(t.trim_end_matches('s').parse().unwrap());
        } else if let Some(n) = stmt.strip_prefix("size ") {
            s.size = Some(n.parse().unwrap());
        } else if stmt == "flags interval" {
            s.interval = true;
        } else {
            panic!("unknown set statement {stmt:?}");
        }
    }
    s
}

/// Bytes of one field's text for nft type `ty`: (first, last).
fn field_bytes(ty: &str, v: &str) -> (Vec<u8>, Vec<u8>) {
    match ty {
        "ipv4_addr" | "ipv6_addr" => {
            let (a, p) = v.split_once('/').unwrap_or((v, ""));
            let a: IpAddr = a.parse().unwrap();
            let (bits, val) = match a {
                IpAddr::V4(x) => (32u32, u128::from(u32::from(x))),
                IpAddr::V6(x) => (128, u128::from(x)),
            };
            let p: u32 = if p.is_empty() {
                bits
            } else {
                p.parse().unwrap()
            };
            let host = (1u128 << (bits - p)).wrapping_sub(1) & (u128::MAX >> (128 - bits));
            let n = (bits / 8) as usize;
            let (lo, hi) = (val & !host, val | host);
            (
                lo.to_be_bytes()[16 - n..].to_vec(),
                hi.to_be_bytes()[16 - n..].to_vec(),
            )
        }
        "inet_proto" => {
            let p = ruleset::names::proto_by_name(v).unwrap_or_else(|| v.parse().unwrap());
            (vec![p], vec![p])
        }
        "inet_service" => {
            let b = v.parse::<u16>().unwrap().to_be_bytes().to_vec();
            (b.clone(), b)
        }
        "ether_addr" => {
            let b: Vec<u8> = v
                .split(':')
                .map(|x| u8::from_str_radix(x, 16).unwrap())
                .collect();
            (b.clone(), b)
        }
        "mark" => {
            let m = u32::from_str_radix(v.trim_start_matches("0x"), 16).unwrap();
            let b = m.to_ne_bytes().to_vec();
            (b.clone(), b)
        }
        "ifname" => {
            let mut b = vec![0u8; 16];
            b[..v.len()].copy_from_slice(v.as_bytes());
            (b.clone(), b)
        }
        t => panic!("unknown nft type {t}"),
    }
}

fn type_len(ty: &str) -> usize {
    match ty {
        "ipv4_addr" | "mark" => 4,
        "ipv6_addr" | "ifname" => 16,
        "ether_addr" => 6,
        "inet_proto" => 1,
        "inet_service" => 2,
        t => panic!("unknown nft type {t}"),
    }
}

fn parse_elem(set: &NftSet, body: &str) -> NftElem {
    let mut e = NftElem {
        start: Vec::new(),
        end: Vec::new(),
        timeout: None,
        counters: None,
        comment: None,
    };
    let (key, rest) = match body
        .find(" timeout ")
        .or(body.find(" counter "))
        .or(body.find(" comment "))
    {
        Some(i) => (&body[..i], &body[i..]),
        None => (body, ""),
    };
    let concat = set.types.len() > 1;
    for (ty, v) in set.types.iter().zip(key.split(" . ")) {
        let (lo, hi) = field_bytes(ty, v.trim());
        let w = if concat {
            type_len(ty).div_ceil(4) * 4
        } else {
            type_len(ty)
        };
        for (dst, src) in [(&mut e.start, lo), (&mut e.end, hi)] {
            let at = dst.len();
            dst.extend_from_slice(&src);
            dst.resize(at + w, 0);
        }
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "timeout" => {
                e.timeout = Some(words[i + 1].trim_end_matches('s').parse().unwrap());
                i += 2;
            }
            "counter" => {
                e.counters = Some((words[i + 2].parse().unwrap(), words[i + 4].parse().unwrap()));
                i += 5;
            }
            "comment" => {
                let c = rest.split('"').nth(1).unwrap();
                e.comment = Some(c.to_string());
                break;
            }
            w => panic!("unknown element word {w}"),
        }
    }
    e
}

#[test]
fn ipset_translations() {
    let Some(dir) = xlate_dir() else {
        eprintln!("SKIP: ipset translation vectors not found (../shared/conformance/ipset-7.21/tests/xlate)");
        return;
    };
    let input = std::fs::read_to_string(dir.join("xlate.t")).unwrap();
    let nft = std::fs::read_to_string(dir.join("xlate.t.nft")).unwrap();
    let mut store = Store::new();
    let mut m = NoMirror;
    let mut ctx = Ctx {
        store: &mut store,
        mirror: &mut m,
        now: 0,
    };
    let o = run(&mut ctx, &["restore"], Some(&input));
    assert_eq!(o.code, 0, "restore: {}", o.stderr);

    let mut sets: BTreeMap<String, NftSet> = BTreeMap::new();
    let mut elems: BTreeMap<String, Vec<NftElem>> = BTreeMap::new();
    for l in nft.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.get(..2) {
            Some(["add", "set"]) => {
                sets.insert(w[4].to_string(), parse_set(braces(l)));
            }
            Some(["add", "element"]) => {
                let s = &sets[w[4]];
                elems
                    .entry(w[4].to_string())
                    .or_default()
                    .push(parse_elem(s, braces(l)));
            }
            _ => {}
        }
    }
    let mut checked = 0;
    for (name, want) in &sets {
        let set = store
            .get(name)
            .unwrap_or_else(|| panic!("set {name} not restored"));
        let spec = set_spec(&set.header).unwrap_or_else(|e| panic!("{name}: {}", e.msg));
        let types: Vec<&str> = spec.fields.iter().map(|f: &Field| f.name()).collect();
        assert_eq!(types, want.types, "{name}: key types");
        assert_eq!(spec.interval, want.interval, "{name}: interval");
        assert_eq!(spec.timeout, want.timeout, "{name}: timeout");
        assert_eq!(spec.counter, want.counter, "{name}: counter");
        assert_eq!(spec.size, want.size, "{name}: size");
        let Members::Map(members) = &set.members else {
            panic!("{name}: not a map set")
        };
        let mut got: Vec<NftElem> = members
            .iter()
            .map(|(k, e)| {
                let en = entry(set, k, e, 0);
                let key = element_key(&spec, &set.header, &en).unwrap();
                NftElem {
                    end: key.end.clone().unwrap_or_else(|| key.start.clone()),
                    start: key.start,
                    timeout: en.timeout,
                    counters: en.counters,
                    comment: en.comment,
                }
            })
            .collect();
        let mut want_elems = elems.get(name).cloned().unwrap_or_default();
        for w in want_elems.iter_mut() {
            // Untranslated per-element values come from the set.
            w.timeout = w.timeout.or(spec.timeout);
            if spec.counter && w.counters.is_none() {
                w.counters = Some((0, 0));
            }
        }
        got.sort();
        want_elems.sort();
        assert_eq!(got, want_elems, "{name}: elements");
        checked += 1;
    }
    assert_eq!(
        checked,
        store.slots().count(),
        "every restored set has a translation"
    );
    eprintln!("ipset translations: {checked} sets checked");
}
