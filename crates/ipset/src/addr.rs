//! Addresses as ipset reads and prints them: numeric IPv4/IPv6 text the way
//! the C library resolves and prints it, prefix masks, and the range-to-CIDR
//! walk the kernel uses to cut a range into blocks.
//!
//! No name resolution: ipset resolves host names, nfkeeper refuses them with
//! ipset's "resolving failed" message (it does no I/O).

use std::fmt::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Protocol family of a set (ipset's `family inet|inet6`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    #[default]
    Inet,
    Inet6,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Inet => "inet",
            Family::Inet6 => "inet6",
        }
    }

    /// Address width in bits (32 or 128).
    pub fn bits(self) -> u8 {
        match self {
            Family::Inet => 32,
            Family::Inet6 => 128,
        }
    }

    pub fn of(a: IpAddr) -> Family {
        match a {
            IpAddr::V4(_) => Family::Inet,
            IpAddr::V6(_) => Family::Inet6,
        }
    }
}

/// An address with a prefix length: a network block (prefix < width) or a
/// host (prefix == width). The address is stored masked by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Net {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl Net {
    pub fn host(addr: IpAddr) -> Net {
        Net {
            addr,
            prefix: Family::of(addr).bits(),
        }
    }

    pub fn is_host(&self) -> bool {
        self.prefix == Family::of(self.addr).bits()
    }
}

/// IPv4 netmask of `cidr` bits (0..=32) as a host-order word.
pub fn mask4(cidr: u8) -> u32 {
    if cidr == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(cidr.min(32)))
    }
}

/// IPv6 netmask of `cidr` bits (0..=128).
pub fn mask6(cidr: u8) -> u128 {
    if cidr == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(cidr.min(128)))
    }
}

/// `addr` with its host bits cleared for a `cidr`-bit prefix.
pub fn mask(addr: IpAddr, cidr: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask4(cidr))),
        IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask6(cidr))),
    }
}

/// `addr & bits` (ipset's bitmask option).
pub fn and(addr: IpAddr, bits: IpAddr) -> IpAddr {
    match (addr, bits) {
        (IpAddr::V4(a), IpAddr::V4(m)) => IpAddr::V4(Ipv4Addr::from(u32::from(a) & u32::from(m))),
        (IpAddr::V6(a), IpAddr::V6(m)) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & u128::from(m))),
        _ => addr,
    }
}

pub fn is_zero(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => u32::from(a) == 0,
        IpAddr::V6(a) => u128::from(a) == 0,
    }
}

/// The first and last address of the `cidr` block around `ip` (the kernel's
/// `ip_set_mask_from_to`).
pub fn block4(ip: u32, cidr: u8) -> (u32, u32) {
    let m = mask4(cidr);
    (ip & m, (ip & m) | !m)
}

/// The largest CIDR block starting at `from` that ends at or before `to`:
/// (prefix length, last address). The kernel walks a range with this
/// (`ip_set_range_to_cidr`); prefix 0 is never produced.
pub fn range_to_cidr(from: u32, to: u32) -> (u8, u32) {
    for i in 1..32u8 {
        let m = mask4(i);
        if from & m != from {
            continue;
        }
        let last = from | !m;
        if last <= to {
            return (i, last);
        }
    }
    (32, from)
}

/// The same walk allowing a /0 block (types that store 0.0.0.0/0).
pub fn range_to_cidr0(from: u32, to: u32) -> (u8, u32) {
    if from == 0 && to == u32::MAX {
        return (0, to);
    }
    range_to_cidr(from, to)
}

/// A netmask with `cidr` bits for `family`, as an address.
pub fn netmask_addr(family: Family, cidr: u8) -> IpAddr {
    match family {
        Family::Inet => IpAddr::V4(Ipv4Addr::from(mask4(cidr))),
        Family::Inet6 => IpAddr::V6(Ipv6Addr::from(mask6(cidr))),
    }
}

/// The prefix length of a contiguous netmask address, if it is one.
pub fn mask_len(m: IpAddr) -> Option<u8> {
    let (bits, v) = match m {
        IpAddr::V4(a) => (32u32, u128::from(u32::from(a)) << 96),
        IpAddr::V6(a) => (128, u128::from(a)),
    };
    let ones = v.leading_ones();
    let rest = if ones >= 128 { 0 } else { v << ones };
    (rest == 0 && ones <= bits).then_some(ones as u8)
}

/// Parse numeric address text for `family` the way ipset's resolver call
/// (gethostbyname2) treats numeric input: IPv4 accepts the classic
/// `inet_aton` forms made of digits and dots (1 to 4 parts, leading 0 is
/// octal), IPv6 accepts `inet_pton` text. Anything else would be a host name.
pub fn parse_numeric(s: &str, family: Family) -> Option<IpAddr> {
    match family {
        Family::Inet => parse_aton(s).map(|a| IpAddr::V4(Ipv4Addr::from(a))),
        Family::Inet6 => {
            if s.contains(':') {
                s.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
            } else {
                None
            }
        }
    }
}

fn parse_aton(s: &str) -> Option<u32> {
    if s.is_empty()
        || !s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || !s.as_bytes()[0].is_ascii_digit()
        || s.ends_with('.')
    {
        return None;
    }
    let mut parts = Vec::with_capacity(4);
    for p in s.split('.') {
        if p.is_empty() {
            return None;
        }
        let v = if p.len() > 1 && p.starts_with('0') {
            if !p.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return None;
            }
            u64::from_str_radix(&p[1..], 8).ok()?
        } else {
            p.parse::<u64>().ok()?
        };
        parts.push(v);
    }
    let n = parts.len();
    if n > 4 {
        return None;
    }
    let last = parts[n - 1];
    let last_max = match n {
        1 => u64::from(u32::MAX),
        2 => 0xff_ffff,
        3 => 0xffff,
        _ => 0xff,
    };
    if last > last_max || parts[..n - 1].iter().any(|&p| p > 0xff) {
        return None;
    }
    let mut v = 0u64;
    for (i, p) in parts[..n - 1].iter().enumerate() {
        v |= p << (24 - 8 * i);
    }
    Some((v | last) as u32)
}

/// Print an address as ipset prints numeric addresses (glibc `inet_ntop`:
/// IPv6 compresses the longest run of zero words, the first of equal runs,
/// and prints IPv4-mapped and IPv4-compatible addresses with a dotted tail).
pub fn ntop(a: IpAddr) -> String {
    match a {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => ntop6(a),
    }
}

fn ntop6(a: Ipv6Addr) -> String {
    let w = a.segments();
    // Longest run of zero words of length >= 2 (first wins on ties).
    let (mut best, mut best_len) = (None, 0usize);
    let mut i = 0;
    while i < 8 {
        if w[i] == 0 {
            let start = i;
            while i < 8 && w[i] == 0 {
                i += 1;
            }
            let len = i - start;
            if len > best_len {
                best = Some(start);
                best_len = len;
            }
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best = None;
    }
    let mut s = String::new();
    let mut i = 0;
    while i < 8 {
        if Some(i) == best {
            if i == 0 {
                s.push(':');
            }
            s.push(':');
            i += best_len;
            continue;
        }
        if i == 6 && best == Some(0) && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
            let o = a.octets();
            let _ = write!(s, "{}.{}.{}.{}", o[12], o[13], o[14], o[15]);
            return s;
        }
        let _ = write!(s, "{:x}", w[i]);
        if i < 7 {
            s.push(':');
        }
        i += 1;
    }
    s
}

/// Print `net` as ipset does: the address, then `/prefix` unless it is a
/// host.
pub fn net_text(n: &Net) -> String {
    if n.is_host() {
        ntop(n.addr)
    } else {
        format!("{}/{}", ntop(n.addr), n.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_ipv4_follows_inet_aton() {
        let cases = [
            ("1.2.3.4", Some("1.2.3.4")),
            ("10", Some("0.0.0.10")),
            ("1.2", Some("1.0.0.2")),
            ("1.2.3", Some("1.2.0.3")),
            ("010.0.0.1", Some("8.0.0.1")),
            ("0/0", None),
            ("1.2.3.", None),
            ("256.1.1.1", None),
            ("1.2.3.4.5", None),
            ("0x1.2.3.4", None),
            ("09.1.1.1", None),
            ("host", None),
        ];
        for (s, want) in cases {
            let got = parse_numeric(s, Family::Inet).map(ntop);
            assert_eq!(got.as_deref(), want, "{s}");
        }
    }

    #[test]
    fn ipv6_prints_like_inet_ntop() {
        let cases = [
            ("::", "::"),
            ("::1", "::1"),
            ("1::", "1::"),
            ("192:168::162:33", "192:168::162:33"),
            ("1:0:0:1:0:0:0:1", "1:0:0:1::1"),
            ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::2:3", "::0.2.0.3"),
            ("fe80::", "fe80::"),
            ("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"),
        ];
        for (s, want) in cases {
            let a = parse_numeric(s, Family::Inet6).unwrap();
            assert_eq!(ntop(a), want, "{s}");
        }
    }

    #[test]
    fn range_walk_cuts_cidr_blocks() {
        let a = |s: &str| u32::from(s.parse::<Ipv4Addr>().unwrap());
        let mut got = Vec::new();
        let (mut ip, to) = (a("10.2.0.0"), a("10.2.1.12"));
        loop {
            let (c, last) = range_to_cidr(ip, to);
            got.push(format!("{}/{}", Ipv4Addr::from(ip), c));
            if last >= to {
                break;
            }
            ip = last + 1;
        }
        assert_eq!(
            got,
            ["10.2.0.0/24", "10.2.1.0/29", "10.2.1.8/30", "10.2.1.12/32"]
        );
        assert_eq!(range_to_cidr(0, u32::MAX), (1, 0x7fff_ffff));
        assert_eq!(range_to_cidr0(0, u32::MAX), (0, u32::MAX));
    }

    #[test]
    fn masks() {
        assert_eq!(mask4(0), 0);
        assert_eq!(mask4(24), 0xffff_ff00);
        assert_eq!(mask4(32), u32::MAX);
        let m = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(mask_len(m("255.255.255.0")), Some(24));
        assert_eq!(mask_len(m("255.255.0.255")), None);
        assert_eq!(mask_len(m("ffff:ffff::")), Some(32));
        assert_eq!(mask(m("192.168.68.69"), 27), m("192.168.68.64"));
    }
}
