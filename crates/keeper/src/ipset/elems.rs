//! Members as nftables set elements and back.
//!
//! A member's key comes from [`compile::ipset::element_key`]. An interval
//! set without concatenation (hash:net, hash:ip with a netmask) holds a
//! member as two elements, its start and an end marker one past its last
//! value (flag `INTERVAL_END`; none when the range reaches the top of the
//! key space); a concatenated interval set holds `key` and an inclusive
//! `key_end` in one element. Values: the timeout (milliseconds; none for a
//! member that never expires), a counter per element in a set with
//! counters, the comment in the element's userdata.

use super::meta;
use compile::ipset::{decode_key, element_key, SetSpec};
use ipset::model::{Entry, Expiry, Ext, Header, Key};
use ipset::types::SetType;
use nft::setelem::F_INTERVAL_END;
use nft::{Expr, SetElem};

/// Whether `spec`'s members are start/end-marker pairs.
pub fn split_interval(spec: &SetSpec) -> bool {
    spec.interval && !spec.is_concat()
}

/// `v + 1` (big-endian), `None` past the top.
fn increment(v: &[u8]) -> Option<Vec<u8>> {
    let mut out = v.to_vec();
    for b in out.iter_mut().rev() {
        if *b == 0xff {
            *b = 0;
        } else {
            *b += 1;
            return Some(out);
        }
    }
    None
}

/// `v - 1` (big-endian; `v` is never zero for an end marker).
fn decrement(v: &[u8]) -> Vec<u8> {
    let mut out = v.to_vec();
    for b in out.iter_mut().rev() {
        if *b == 0 {
            *b = 0xff;
        } else {
            *b -= 1;
            break;
        }
    }
    out
}

/// What an element carries besides its key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Values {
    /// Milliseconds; `None`: never expires.
    pub timeout: Option<u64>,
    /// (packets, bytes) of a set with counters.
    pub counters: Option<(u64, u64)>,
    pub comment: Option<String>,
}

impl Values {
    /// A member's values as an [`Entry`] gives them (`counters` replaced
    /// by the caller where a location keeps its own).
    pub fn of(e: &Entry) -> Values {
        Values {
            timeout: e.timeout.filter(|t| *t > 0).map(|t| u64::from(t) * 1000),
            counters: e.counters,
            comment: e.comment.clone(),
        }
    }
}

/// The elements of member `e` of a set with `spec` (and header `h`); with
/// `values`, carrying them (adds), else keys only (deletes).
pub fn to_elems(
    spec: &SetSpec,
    h: &Header,
    e: &Entry,
    values: Option<&Values>,
) -> Result<Vec<SetElem>, ipset::Error> {
    let k = element_key(spec, h, e)?;
    let with_values = |mut el: SetElem| {
        if let Some(v) = values {
            el.timeout = v.timeout;
            if let Some((packets, bytes)) = v.counters {
                el.exprs = vec![Expr::Counter { bytes, packets }];
            }
            el.userdata = v.comment.as_deref().map(meta::encode_comment);
        }
        el
    };
    if !split_interval(spec) {
        // The key moves into the element (a restore makes one per member).
        return Ok(vec![with_values(SetElem {
            key: Some(k.start),
            key_end: k.end,
            ..SetElem::default()
        })]);
    }
    let mut out = vec![with_values(SetElem::key(&k.start))];
    let end = k.end.as_deref().unwrap_or(&k.start);
    if let Some(next) = increment(end) {
        let mut marker = SetElem::key(&next);
        marker.flags = Some(F_INTERVAL_END);
        out.push(marker);
    }
    Ok(out)
}

/// One element read back: its key bytes (start and inclusive end) and
/// the element carrying the values.
struct Raw {
    start: Vec<u8>,
    end: Option<Vec<u8>>,
    elem: SetElem,
}

/// Pair start elements with their end markers (an rbtree set dumps them
/// as separate elements, in no particular order).
fn pair(spec: &SetSpec, elems: Vec<SetElem>) -> Vec<Raw> {
    if !split_interval(spec) {
        return elems
            .into_iter()
            .filter_map(|e| {
                let start = e.key.clone()?;
                let end = if spec.interval {
                    Some(e.key_end.clone().unwrap_or_else(|| start.clone()))
                } else {
                    None
                };
                Some(Raw {
                    start,
                    end,
                    elem: e,
                })
            })
            .collect();
    }
    let mut all: Vec<(Vec<u8>, bool, SetElem)> = elems
        .into_iter()
        .filter_map(|e| {
            let is_end = e.flags.unwrap_or(0) & F_INTERVAL_END != 0;
            Some((e.key.clone()?, is_end, e))
        })
        .collect();
    // An end marker sorts before a start on the same key (it closes the
    // range before, which ends one below it).
    all.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out = Vec::new();
    let mut it = all.into_iter().peekable();
    while let Some((key, is_end, elem)) = it.next() {
        if is_end {
            continue;
        }
        let end = match it.peek() {
            Some((k, true, _)) => decrement(k),
            _ => vec![0xff; key.len()],
        };
        out.push(Raw {
            start: key,
            end: Some(end),
            elem,
        });
    }
    out
}

/// The counters of an element (zero if it has none).
pub fn counters_of(e: &SetElem) -> (u64, u64) {
    e.exprs
        .iter()
        .find_map(|x| match x {
            Expr::Counter { bytes, packets } => Some((*packets, *bytes)),
            _ => None,
        })
        .unwrap_or((0, 0))
}

/// Members of a set with `spec` and header `h` from its elements, with
/// expiry times on the caller's clock (`now`, milliseconds). Elements
/// that are not ours are skipped.
pub fn from_elems(spec: &SetSpec, h: &Header, elems: Vec<SetElem>, now: u64) -> Vec<(Key, Ext)> {
    let mut out = Vec::with_capacity(elems.len());
    for r in pair(spec, elems) {
        let Some(d) = decode_key(spec, &r.start, r.end.as_deref()) else {
            continue;
        };
        let mut key = d.key;
        let e = &r.elem;
        // An element without its own timeout has the set's default; one
        // with timeout 0 never expires (nor does one with no expiration).
        let expiry = match (h.timeout, e.timeout, e.expiration) {
            (None, ..) => Expiry::None,
            (Some(_), _, Some(left)) => Expiry::At(now + left),
            (Some(_), Some(t), None) if t > 0 => Expiry::At(now + t),
            _ => Expiry::Permanent,
        };
        let (packets, bytes) = counters_of(e);
        let mut ext = Ext {
            expiry,
            packets,
            bytes,
            comment: e.userdata.as_deref().and_then(meta::decode_comment),
            wildcard: d.wildcard,
            ..Ext::default()
        };
        if h.ty == SetType::BitmapIpMac {
            ext.mac = key.mac.take();
        }
        out.push((key, ext));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use compile::ipset::set_spec;
    use ipset::exec::{entry, run, Ctx, NoMirror};
    use ipset::model::{Members, Store};

    /// Elements written for the members of `create` + `adds`, read back,
    /// are the members (also in reverse dump order).
    #[test]
    fn members_round_trip_through_elements() {
        let cases: &[(&str, &[&str])] = &[
            (
                "create s hash:net timeout 100 comment",
                &[
                    "add s 10.0.0.0/24 comment \"one\"",
                    "add s 10.0.1.0/24 timeout 0",
                    "add s 255.255.255.0/24",
                ],
            ),
            (
                "create s hash:ip counters",
                &["add s 1.2.3.4 packets 5 bytes 9"],
            ),
            (
                "create s hash:net,iface",
                &["add s 10.0.0.0/8,eth+", "add s 0.0.0.0/1,lo"],
            ),
            (
                "create s bitmap:ip,mac range 10.0.0.0/24",
                &["add s 10.0.0.1,02:00:00:00:00:01"],
            ),
            (
                "create s hash:ip,port,net family inet6",
                &["add s ::1,tcp:1,::/1"],
            ),
        ];
        for (create, adds) in cases {
            let mut store = Store::new();
            let mut m = NoMirror;
            let mut ctx = Ctx {
                store: &mut store,
                mirror: &mut m,
                now: 1000,
            };
            for line in std::iter::once(*create).chain(adds.iter().copied()) {
                let w = ipset::parse::restore::words(line).unwrap();
                let w: Vec<&str> = w.iter().map(|x| x.as_ref()).collect();
                let o = run(&mut ctx, &w, None);
                assert_eq!(o.code, 0, "{line}: {}", o.stderr);
            }
            let set = store.get("s").unwrap();
            let h = &set.header;
            let spec = set_spec(h).unwrap();
            let Members::Map(mm) = &set.members else {
                unreachable!()
            };
            let mut elems = Vec::new();
            let mut want: Vec<(Key, Ext)> = Vec::new();
            for (k, x) in mm.iter() {
                let en = entry(set, k, x, 1000);
                elems.extend(to_elems(&spec, h, &en, Some(&Values::of(&en))).unwrap());
                want.push((k.clone(), x.clone()));
            }
            elems.reverse();
            let mut got = from_elems(&spec, h, elems, 1000);
            got.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(got, want, "{create}");
        }
    }
}
