//! The header part of a rule: `-i -o -f -p -s -d`, in the order
//! iptables-translate writes them (so listings compare with its vectors).

use super::Cx;
use iptables::rule::{inv, Addr, Iface};
use nft::expr::{base, meta};

/// `meta iifname`/`oifname`: an exact name compares the name and its NUL; a
/// `+` wildcard compares only the prefix before it.
fn iface(cx: &mut Cx, key: u32, i: &Iface, invert: bool) {
    let name = i.as_str();
    if name.is_empty() {
        return;
    }
    cx.meta(key);
    match name.strip_suffix('+') {
        Some("") => {
            // `! -i +` matches no interface name at all: compare an empty
            // prefix is not expressible, so test the first byte against NUL
            // (every name has at least one byte).
            cx.eq(&[0], !invert);
        }
        Some(prefix) => cx.eq(prefix.as_bytes(), invert),
        None => {
            let mut v = name.as_bytes().to_vec();
            v.push(0);
            cx.eq(&v, invert);
        }
    }
}

/// Source or destination address with mask (v4: 4 bytes at 12/16; v6: 16
/// bytes at 8/24).
fn addr(cx: &mut Cx, a: &Addr, dst: bool, invert: bool) {
    let (off, len) = match (cx.is_v6(), dst) {
        (false, false) => (12, 4),
        (false, true) => (16, 4),
        (true, false) => (8, 16),
        (true, true) => (24, 16),
    };
    let mask = &a.mask[..len as usize];
    if mask.iter().all(|&b| b == 0) && !invert {
        return;
    }
    // Load only the bytes the mask covers (a /24 loads 3 bytes), as
    // iptables-nft does, then mask the last partial byte if any.
    let used = mask
        .iter()
        .rposition(|&b| b != 0)
        .map(|i| i + 1)
        .unwrap_or(0);
    if used == 0 {
        // `! -s 0.0.0.0/0`: never matches.
        cx.nh(off, 1);
        cx.mask(&[0]);
        cx.eq(&[0], true);
        return;
    }
    cx.nh(off, used as u32);
    cx.masked_eq(&a.addr[..used], &mask[..used], invert);
}

/// `-s A -d B`, both whole IPv4 addresses, neither negated: the two
/// fields are adjacent in the header, so one 8-byte load and one compare
/// (as nft writes it) instead of two of each — the kernel's cost of a new
/// rule grows with its expression count (each expression's type is looked
/// up by name). False, emitting nothing, otherwise.
fn both_exact_v4(cx: &mut Cx, r: &iptables::Rule) -> bool {
    let full = |a: &Addr| a.mask[..4] == [0xff; 4];
    if cx.is_v6() || r.inverted(inv::SRC) || r.inverted(inv::DST) || !full(&r.src) || !full(&r.dst)
    {
        return false;
    }
    let mut v = r.src.addr[..4].to_vec();
    v.extend_from_slice(&r.dst.addr[..4]);
    cx.nh(12, 8);
    cx.eq(&v, false);
    true
}

pub(super) fn lower(cx: &mut Cx) {
    let r = cx.rule;
    iface(cx, meta::IIFNAME, &r.iniface, r.inverted(inv::IN));
    iface(cx, meta::OIFNAME, &r.outiface, r.inverted(inv::OUT));
    if r.frag {
        // Second and further fragments: fragment offset != 0.
        cx.payload(base::NETWORK, 6, 2);
        cx.mask(&[0x1f, 0xff]);
        cx.eq(&[0, 0], !r.inverted(inv::FRAG));
    }
    // Addresses before the protocol: most packets a long list of rules sees
    // differ in address, so the first comparison rejects them (as nft
    // orders it); the protocol still guards every transport-header match
    // that follows.
    if !both_exact_v4(cx, r) {
        addr(cx, &r.src, false, r.inverted(inv::SRC));
        addr(cx, &r.dst, true, r.inverted(inv::DST));
    }
    if r.proto != 0 {
        // IPv4: the header's protocol field (what iptables compares); IPv6:
        // the protocol after extension headers, as ip6tables does.
        if cx.is_v6() {
            cx.meta(meta::L4PROTO);
        } else {
            cx.nh(9, 1);
        }
        cx.eq(&[r.proto], r.inverted(inv::PROTO));
    }
}
