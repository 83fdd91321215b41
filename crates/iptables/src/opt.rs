//! Value parsers and formatters shared by the command line and the extensions,
//! with xtables' acceptance rules (base-0 numbers, service names, masks) and
//! its error wording.

use crate::error::{Error, Result};
use crate::names;
use std::fmt::Write;
use std::net::{Ipv4Addr, Ipv6Addr};

/// `strtoumax(s, &end, base)` as C does it: leading white space, optional '+',
/// base 0 auto-detects 0x (hex) and 0 (octal). Returns the value and the rest of
/// the string, or `None` when no digit was read or the value overflows u64.
pub fn strtoul(s: &str, base: u32) -> Option<(u64, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let t = t.strip_prefix('+').unwrap_or(t);
    let (base, digits) = match base {
        0 => {
            if let Some(r) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                if r.chars().next().is_some_and(|c| c.is_ascii_hexdigit()) {
                    (16, r)
                } else {
                    // "0x" alone parses as 0 with "x..." left over.
                    return Some((0, &t[1..]));
                }
            } else if t.starts_with('0') {
                (8, t)
            } else {
                (10, t)
            }
        }
        16 => (
            16,
            t.strip_prefix("0x")
                .or_else(|| t.strip_prefix("0X"))
                .unwrap_or(t),
        ),
        b => (b, t),
    };
    let end = digits
        .find(|c: char| !c.is_digit(base))
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let v = u64::from_str_radix(&digits[..end], base).ok()?;
    Some((v, &digits[end..]))
}

/// C's `strtoul(s, &end, base)` with its sign handling: white space, one
/// optional `+` or `-` (a minus negates modulo 2^64), then digits. Returns
/// the value, whether it overflowed (ERANGE; the value is then u64::MAX
/// whatever the sign) and the rest; `None` when no digit was read (C's
/// `end == s`).
pub fn c_strtoul(s: &str, base: u32) -> Option<(u64, bool, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if !body.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    match strtoul(body, base) {
        Some((v, rest)) => Some((if neg { v.wrapping_neg() } else { v }, false, rest)),
        None => {
            let radix = match base {
                0 if body.starts_with("0x") || body.starts_with("0X") => 16,
                0 => 10,
                b => b,
            };
            let digits = body
                .strip_prefix("0x")
                .or_else(|| body.strip_prefix("0X"))
                .filter(|_| radix == 16)
                .unwrap_or(body);
            let end = digits
                .find(|c: char| !c.is_digit(radix))
                .unwrap_or(digits.len());
            Some((u64::MAX, true, &digits[end..]))
        }
    }
}

/// xtables_strtoul_base with a required full match: no leading '-', value in
/// `min..=max`. Base 0 unless given.
pub fn parse_uint_base(s: &str, min: u64, max: u64, base: u32) -> Option<u64> {
    if s.trim_start().starts_with('-') {
        return None;
    }
    let (v, rest) = strtoul(s, base)?;
    (rest.is_empty() && v >= min && v <= max).then_some(v)
}

pub fn parse_uint(s: &str, min: u64, max: u64) -> Option<u64> {
    parse_uint_base(s, min, max, 0)
}

/// A port number or a service name for `proto` (e.g. "tcp").
pub fn parse_port(s: &str, proto: &str) -> Result<u16> {
    if let Some(v) = parse_uint(s, 0, 65535) {
        return Ok(v as u16);
    }
    names::service_port(s, proto)
        .ok_or_else(|| Error::param(format!("invalid port/service `{s}' specified")))
}

/// Protocol name or number as `-p` takes it; `None` is "unknown protocol".
pub fn parse_protocol(s: &str) -> Result<u8> {
    if let Some(v) = parse_uint(s, 0, 255) {
        return Ok(v as u8);
    }
    if let Some(p) = CHAIN_PROTOS.iter().find(|p| p.0 == s) {
        return Ok(p.1);
    }
    names::proto_by_name(s)
        .ok_or_else(|| Error::param(format!("unknown protocol \"{s}\" specified")))
}

/// iptables' built-in protocol names, tried before /etc/protocols.
pub const CHAIN_PROTOS: &[(&str, u8)] = &[
    ("tcp", 6),
    ("sctp", 132),
    ("udp", 17),
    ("udplite", 136),
    ("icmp", 1),
    ("ipv6-icmp", 58),
    ("icmpv6", 58),
    ("esp", 50),
    ("ah", 51),
    ("mobility-header", 135),
    ("ipv6-mh", 135),
    ("mh", 135),
    ("dccp", 33),
    ("ipcomp", 108),
    ("all", 0),
];

/// Name of a protocol number for printing. `lookup` also consults the
/// protocols database (what `-L` without `-n` does); save never does.
pub fn proto_name(num: u8, lookup: bool) -> Option<&'static str> {
    if let Some(p) = CHAIN_PROTOS.iter().find(|p| p.1 == num) {
        return Some(p.0);
    }
    if num != 0 && lookup {
        return names::proto_by_number(num);
    }
    None
}

// ---------------------------------------------------------------- addresses

/// An IPv4 dotted quad as xtables reads it: 1 to 4 parts, missing trailing
/// parts are zero for addresses ("10" is 10.0.0.0); masks need all four.
pub fn parse_v4_numeric(s: &str, is_mask: bool) -> Option<[u8; 4]> {
    if let Some(a) = fast_v4(s) {
        return Some(a);
    }
    let mut out = [0u8; 4];
    let mut parts = s.split('.');
    for (i, slot) in out.iter_mut().enumerate() {
        match parts.next() {
            Some(p) => *slot = parse_uint(p, 0, 255)? as u8,
            None => {
                if is_mask || i == 0 {
                    return None;
                }
                break;
            }
        }
    }
    if parts.next().is_some() {
        return None;
    }
    Some(out)
}

/// The common case of `parse_v4_numeric`: four plain decimal parts without
/// leading zeros (which strtoul would read as octal). `None` means "use the
/// general parser", not "invalid". Restore of large files spends most of its
/// parsing time on addresses, so this avoids the generic number parser.
fn fast_v4(s: &str) -> Option<[u8; 4]> {
    let b = s.as_bytes();
    let mut out = [0u8; 4];
    let mut part = 0usize;
    let mut val: u32 = 0;
    let mut digits = 0u32;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                if digits == 1 && val == 0 {
                    return None;
                }
                val = val * 10 + u32::from(c - b'0');
                digits += 1;
                if digits > 3 || val > 255 {
                    return None;
                }
            }
            b'.' if digits > 0 && part < 3 && i + 1 < b.len() => {
                out[part] = val as u8;
                part += 1;
                val = 0;
                digits = 0;
            }
            _ => return None,
        }
    }
    if part != 3 || digits == 0 {
        return None;
    }
    out[3] = val as u8;
    Some(out)
}

/// Parse an IPv4 mask: dotted quad or a prefix length 0..=32.
pub fn parse_v4_mask(s: &str) -> Result<[u8; 4]> {
    if s.contains('.') {
        if let Some(m) = parse_v4_numeric(s, true) {
            return Ok(m);
        }
    }
    // Plain decimal prefix lengths (the usual "/32") skip the generic parser.
    let fast = match s.as_bytes() {
        [d @ b'0'..=b'9'] => Some(u64::from(d - b'0')),
        [a @ b'1'..=b'9', d @ b'0'..=b'9'] => Some(u64::from(a - b'0') * 10 + u64::from(d - b'0')),
        _ => None,
    };
    let bits = fast
        .filter(|b| *b <= 32)
        .or_else(|| parse_uint(s, 0, 32))
        .ok_or_else(|| Error::param(format!("invalid mask `{s}' specified")))?;
    let m: u32 = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    Ok(m.to_be_bytes())
}

/// Parse an IPv6 mask: an address or a prefix length 0..=128.
pub fn parse_v6_mask(s: &str) -> Result<[u8; 16]> {
    if let Ok(a) = s.parse::<Ipv6Addr>() {
        return Ok(a.octets());
    }
    let bits = parse_uint(s, 0, 128)
        .ok_or_else(|| Error::param(format!("invalid mask `{s}' specified")))?;
    Ok(prefix_to_mask16(bits as u32))
}

pub fn prefix_to_mask16(bits: u32) -> [u8; 16] {
    let m: u128 = if bits == 0 {
        0
    } else {
        u128::MAX << (128 - bits)
    };
    m.to_be_bytes()
}

/// One `addr[/mask]` element of `-s`/`-d` (after splitting at commas), as
/// (address, mask) in the low bytes (v4: first 4 bytes). Hostnames are not
/// resolved: nfkeeper never depends on DNS; they fail as iptables fails for
/// an unknown host.
pub fn parse_host_mask(s: &str, v6: bool) -> Result<([u8; 16], [u8; 16])> {
    let s = s.trim_start();
    let (host, mask) = match s.as_bytes().iter().rposition(|&b| b == b'/') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut a = [0u8; 16];
    let mut m = [0u8; 16];
    if v6 {
        m = match mask {
            Some(mk) => parse_v6_mask(mk)?,
            None => [0xff; 16],
        };
        let host = if m == [0; 16] { "::" } else { host };
        let addr: Ipv6Addr = host
            .parse()
            .map_err(|_| Error::param(format!("host/network `{host}' not found")))?;
        a = addr.octets();
        for i in 0..16 {
            a[i] &= m[i];
        }
    } else {
        let m4 = match mask {
            Some(mk) => parse_v4_mask(mk)?,
            None => [0xff; 4],
        };
        let host = if m4 == [0; 4] { "0.0.0.0" } else { host };
        let a4 = parse_v4_numeric(host, false)
            .ok_or_else(|| Error::param(format!("host/network `{host}' not found")))?;
        for i in 0..4 {
            a[i] = a4[i] & m4[i];
            m[i] = m4[i];
        }
    }
    Ok((a, m))
}

/// Prefix length of a contiguous mask, `None` for a non-contiguous one.
pub fn mask_prefix(mask: &[u8]) -> Option<u32> {
    let mut bits = 0u32;
    let mut ended = false;
    for &b in mask {
        if ended {
            if b != 0 {
                return None;
            }
            continue;
        }
        let ones = b.leading_ones();
        if b != 0xffu8.checked_shl(8 - ones).unwrap_or(0) && ones != 8 {
            return None;
        }
        bits += ones;
        if ones < 8 {
            ended = true;
        }
    }
    Some(bits)
}

/// IPv4 address text (inet_ntop).
pub fn fmt_v4(out: &mut String, a: &[u8]) {
    // By hand, not `write!`: every saved rule prints one or two addresses,
    // and the formatting machinery was a visible share of a large restore.
    push_u8(out, a[0]);
    for b in &a[1..4] {
        out.push('.');
        push_u8(out, *b);
    }
}

/// `b` in decimal.
fn push_u8(out: &mut String, b: u8) {
    if b >= 100 {
        out.push(char::from(b'0' + b / 100));
    }
    if b >= 10 {
        out.push(char::from(b'0' + b / 10 % 10));
    }
    out.push(char::from(b'0' + b % 10));
}

/// IPv4 mask as iptables prints it after '/': prefix length or dotted quad.
pub fn fmt_v4_mask(out: &mut String, m: &[u8]) {
    match mask_prefix(&m[..4]) {
        Some(b) => push_u8(out, b as u8),
        None => fmt_v4(out, m),
    }
}

/// IPv6 address text exactly as glibc's inet_ntop prints it: the longest run
/// (of at least two) zero groups becomes "::", and ::a.b.c.d / ::ffff:a.b.c.d
/// keep the dotted tail.
pub fn fmt_v6(out: &mut String, a: &[u8; 16]) {
    let w: Vec<u16> = (0..8)
        .map(|i| u16::from_be_bytes([a[2 * i], a[2 * i + 1]]))
        .collect();
    let (mut best, mut best_len) = (usize::MAX, 0usize);
    let mut i = 0;
    while i < 8 {
        if w[i] == 0 {
            let start = i;
            while i < 8 && w[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                best = start;
                best_len = i - start;
            }
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best = usize::MAX;
    }
    let mut i = 0;
    while i < 8 {
        if i == best {
            if i == 0 {
                out.push(':');
            }
            out.push(':');
            i += best_len;
            continue;
        }
        if i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
            fmt_v4(out, &a[12..16]);
            return;
        }
        let _ = write!(out, "{:x}", w[i]);
        if i < 7 {
            out.push(':');
        }
        i += 1;
    }
}

/// IPv6 mask after '/': prefix length or full address.
pub fn fmt_v6_mask(out: &mut String, m: &[u8; 16]) {
    match mask_prefix(m) {
        Some(b) => {
            let _ = write!(out, "{b}");
        }
        None => fmt_v6(out, m),
    }
}

pub fn v4(a: &[u8]) -> Ipv4Addr {
    Ipv4Addr::new(a[0], a[1], a[2], a[3])
}

// ---------------------------------------------------------------- marks

/// `value[/mask]` with 32-bit values in any base (xtables' XTTYPE_MARKMASK32).
/// Without a mask the mask is 0xffffffff. Returns `None` on a bad value.
pub fn parse_mark_mask(s: &str) -> Option<(u32, u32)> {
    let (v, rest) = strtoul(s, 0)?;
    if s.trim_start().starts_with('-') || v > u32::MAX as u64 {
        return None;
    }
    if rest.is_empty() {
        return Some((v as u32, u32::MAX));
    }
    let m = rest.strip_prefix('/')?;
    let m = parse_uint(m, 0, u32::MAX as u64)?;
    Some((v as u32, m as u32))
}

/// Port range `a`, `a:b`, `a:`, `:b`, `:` for a protocol; returns (lo, hi).
/// Errors use iptables' wording.
pub fn parse_port_range(s: &str, proto: &str) -> Result<(u16, u16)> {
    match s.split_once(':') {
        None => {
            let p = parse_port(s, proto)?;
            Ok((p, p))
        }
        Some((a, b)) => {
            let lo = if a.is_empty() {
                0
            } else {
                parse_port(a, proto)?
            };
            let hi = if b.is_empty() {
                65535
            } else {
                parse_port(b, proto)?
            };
            if lo > hi {
                return Err(Error::param(format!("invalid portrange ({s}) specified")));
            }
            Ok((lo, hi))
        }
    }
}

/// A string option value as iptables saves it (xtables_save_string): bare if
/// it is only `[A-Za-z0-9_-]` (and non-empty), else double-quoted with `"`,
/// `\\` and `'` escaped by a backslash. Writes the leading space.
pub fn save_string(out: &mut String, value: &str) {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    out.push(' ');
    if plain {
        out.push_str(value);
        return;
    }
    out.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\' | '\'') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

// ------------------------------------------------ ranges (ah, esp, frag, length)

/// xtables' two-component integer range option (XTTYPE_UINT16RC/UINT32RC):
/// `a`, `a:b`, `a:`, `:b`, `:` (an empty component is the minimum first and
/// `max` second; a second value may not be below the first). Returns the
/// values read: the second is `None` when only one component was given.
/// Errors carry xtables' wording for extension `ext`, option `--opt`.
pub fn parse_uint_range(ext: &str, opt: &str, arg: &str, max: u64) -> Result<(u64, Option<u64>)> {
    let mut vals: Vec<u64> = Vec::with_capacity(2);
    let mut lmin = 0u64;
    let mut rest = arg;
    loop {
        if vals.len() == 2 {
            return Err(Error::param(format!(
                "{ext}: Too many components for option \"--{opt}\" (max: 2)\n"
            )));
        }
        let (value, end) = if rest.is_empty() || rest.starts_with(':') {
            (if vals.len() == 1 { max } else { lmin }, rest)
        } else {
            let parsed = if rest.trim_start().starts_with('-') {
                None
            } else {
                strtoul(rest, 0).filter(|(v, _)| *v >= lmin && *v <= max)
            };
            let Some((v, end)) = parsed else {
                return Err(Error::param(format!(
                    "{ext}: bad value for option \"--{opt}\" near \"{rest}\", or out of range ({lmin}-{max}).\n"
                )));
            };
            if !end.is_empty() && !end.starts_with(':') {
                return Err(Error::param(format!(
                    "{ext}: Argument to \"--{opt}\" has unexpected characters near \"{end}\".\n"
                )));
            }
            lmin = v;
            (v, end)
        };
        vals.push(value);
        match end.strip_prefix(':') {
            Some(r) => rest = r,
            None => break,
        }
    }
    Ok((vals[0], vals.get(1).copied()))
}

// ------------------------------------------------------------------------
// Helpers of the modules (addrtype, mac, owner, rpfilter, physdev and
// mark/connmark): the kernel's per-hook checks and xtables' mark/mask parser.

/// A failed kernel check (`checkentry` returning -EINVAL): legacy iptables
/// prints "Invalid argument" and leaves the detail in the kernel log; we
/// put the detail into the message.
pub fn einval(detail: &str) -> Error {
    Error::op(format!("Invalid argument: {detail}."))
}

/// The hook a rule is added to when `chain` is a built-in chain of `table`;
/// `None` for a user-defined (or unknown) chain, whose hooks the kernel only
/// learns when the chain is reached from a built-in one.
pub fn builtin_hook(table: ruleset::TableKind, chain: &str) -> Option<&'static str> {
    table.builtin_chains().iter().copied().find(|c| *c == chain)
}

/// x_tables' hook restriction of a match or target: "used from hooks X, but
/// only valid from Y". `what` is e.g. "mac match".
pub fn check_hooks(
    what: &str,
    table: ruleset::TableKind,
    chain: &str,
    allowed: &[&str],
) -> Result<()> {
    match builtin_hook(table, chain) {
        Some(h) if !allowed.contains(&h) => Err(einval(&format!(
            "{what}: used from hooks {h}, but only valid from {}",
            allowed.join("/")
        ))),
        _ => Ok(()),
    }
}

/// xtables' `value[/mask]` parser (xtables_parse_val_mask without a name
/// map) with its messages for extension `ext`, option `--opt`. The mask is
/// 0xffffffff when absent.
pub fn parse_val_mask(ext: &str, opt: &str, arg: &str) -> Result<(u32, u32)> {
    let bad = || {
        Error::param(format!(
            "{ext}: bad integer value for option \"--{opt}\", or out of range.\n"
        ))
    };
    let garbage = || {
        Error::param(format!(
            "{ext}: trailing garbage after value for option \"--{opt}\".\n"
        ))
    };
    let num = |s: &str| -> Option<(u32, usize)> {
        if s.trim_start().starts_with('-') {
            return None;
        }
        let (v, rest) = strtoul(s, 0)?;
        let v = u32::try_from(v).ok()?;
        Some((v, s.len() - rest.len()))
    };
    let (val, used) = num(arg).ok_or_else(bad)?;
    let rest = &arg[used..];
    if rest.is_empty() {
        return Ok((val, u32::MAX));
    }
    let m = rest.strip_prefix('/').ok_or_else(garbage)?;
    let (mask, used) = num(m).ok_or_else(bad)?;
    if used != m.len() {
        return Err(garbage());
    }
    Ok((val, mask))
}

// ------------------------------------------------------------------------
// Helpers of the modules (conntrack, recent): addresses as
// getaddrinfo() reads them (XTTYPE_HOST), without DNS.

/// An IPv4 address in any form `inet_aton` takes, whole string only: 1 to 4
/// parts of decimal, octal (leading 0) or hex (0x) numbers, the last part
/// filling the remaining bytes ("10.1" is 10.0.0.1, "10" is 0.0.0.10).
pub fn parse_inet_aton(s: &str) -> Option<[u8; 4]> {
    let mut parts: Vec<u64> = Vec::with_capacity(4);
    for p in s.split('.') {
        if parts.len() == 4 || !p.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let (digits, base) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X"))
        {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (p, 10)
        };
        if digits.is_empty() && base == 16 {
            return None;
        }
        let v = if digits.is_empty() {
            0
        } else {
            if !digits.chars().all(|c| c.is_digit(base)) {
                return None;
            }
            u64::from_str_radix(digits, base).ok()?
        };
        if v > u32::MAX as u64 {
            return None;
        }
        parts.push(v);
    }
    let n = parts.len();
    let (head, last) = parts.split_at(n - 1);
    if head.iter().any(|&v| v > 0xff) || last[0] > (u32::MAX as u64) >> (8 * (n - 1)) {
        return None;
    }
    let mut v = last[0] as u32;
    for (i, &b) in head.iter().enumerate() {
        v |= (b as u32) << (24 - 8 * i);
    }
    Some(v.to_be_bytes())
}

/// XTTYPE_HOST: one address of the family (v4 in the first 4 bytes), read as
/// getaddrinfo would for a numeric host. Names are not resolved: they fail
/// as iptables fails for a name that does not resolve.
pub fn parse_gai_host(s: &str, v6: bool) -> Result<[u8; 16]> {
    let mut a = [0u8; 16];
    if v6 {
        if let Ok(x) = s.parse::<Ipv6Addr>() {
            return Ok(x.octets());
        }
    } else if let Some(x) = parse_inet_aton(s) {
        a[..4].copy_from_slice(&x);
        return Ok(a);
    }
    Err(Error::param("getaddrinfo: Name or service not known\n"))
}

#[cfg(test)]
mod address_tests {
    use super::*;

    #[test]
    fn inet_aton_forms() {
        let cases: &[(&str, Option<[u8; 4]>)] = &[
            ("1.2.3.4", Some([1, 2, 3, 4])),
            ("10", Some([0, 0, 0, 10])),
            ("10.1", Some([10, 0, 0, 1])),
            ("10.1.2", Some([10, 1, 0, 2])),
            ("0x7f.1", Some([127, 0, 0, 1])),
            ("010.0.0.1", Some([8, 0, 0, 1])),
            ("4294967295", Some([255, 255, 255, 255])),
            ("4294967296", None),
            ("1.2.3.256", None),
            ("1.256.3", None),
            ("1.2.300", Some([1, 2, 1, 44])),
            ("1.2.65536", None),
            ("08", None),
            ("1.2.3.4.5", None),
            ("1..2", None),
            ("", None),
            ("a.b.c.d", None),
            ("1.2.3.4 ", None),
        ];
        for (s, want) in cases {
            assert_eq!(parse_inet_aton(s), *want, "{s}");
        }
    }

    #[test]
    fn gai_host() {
        let a = parse_gai_host("2001:db8::1", true).unwrap();
        assert_eq!(a[0..2], [0x20, 0x01]);
        assert!(parse_gai_host("2001:db8::1", false).is_err());
        assert_eq!(
            parse_gai_host("example.org", false).unwrap_err().msg,
            "getaddrinfo: Name or service not known\n"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoul_bases() {
        let cases: &[(&str, Option<u64>)] = &[
            ("10", Some(10)),
            ("0x10", Some(16)),
            ("010", Some(8)),
            ("0", Some(0)),
            ("", None),
            ("-1", None),
            ("4294967296", Some(4294967296)),
            ("18446744073709551616", None),
            ("12a", None),
        ];
        for (s, want) in cases {
            assert_eq!(parse_uint(s, 0, u64::MAX), *want, "{s}");
        }
    }

    #[test]
    fn v4_text_and_masks_as_inet_ntoa() {
        for b in 0..=255u8 {
            let a = [b, 255 - b, b / 2, 7];
            let mut s = String::new();
            fmt_v4(&mut s, &a);
            assert_eq!(s, std::net::Ipv4Addr::from(a).to_string());
        }
        let cases: &[([u8; 4], &str)] = &[
            ([255, 255, 255, 255], "32"),
            ([255, 255, 255, 0], "24"),
            ([255, 128, 0, 0], "9"),
            ([0, 0, 0, 0], "0"),
            ([255, 0, 255, 0], "255.0.255.0"),
        ];
        for (m, want) in cases {
            let mut s = String::new();
            fmt_v4_mask(&mut s, m);
            assert_eq!(s, *want, "{m:?}");
        }
    }

    #[test]
    fn v6_text_matches_inet_ntop() {
        let cases = [
            ("::", "::"),
            ("::1", "::1"),
            ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
            ("1:0:0:2::3", "1:0:0:2::3"),
            ("1:0:0:2:3:0:0:4", "1::2:3:0:0:4"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::1.2.3.4", "::1.2.3.4"),
            ("fe80::", "fe80::"),
            ("2001:db8::1:0:0:1", "2001:db8::1:0:0:1"),
        ];
        for (inp, want) in cases {
            let a: Ipv6Addr = inp.parse().unwrap();
            let mut s = String::new();
            fmt_v6(&mut s, &a.octets());
            assert_eq!(s, want, "{inp}");
        }
    }

    #[test]
    fn v4_fast_path_agrees_with_the_general_parser() {
        let cases = [
            "1.2.3.4",
            "10.0.0.1",
            "255.255.255.255",
            "0.0.0.0",
            "010.1.1.1",
            "1.2.3",
            "1.2.3.4.5",
            "256.1.1.1",
            "1..2.3",
            "1.2.3.",
            ".1.2.3",
            "0x1.2.3.4",
            "00.1.2.3",
            "1.2.3.04",
            "1.2.3.1000",
            "",
        ];
        for c in cases {
            // The general rule: 1..=4 parts, each strtoul base 0 in 0..=255.
            let general = {
                let parts: Vec<&str> = c.split('.').collect();
                let vals: Option<Vec<u8>> = parts
                    .iter()
                    .map(|p| parse_uint(p, 0, 255).map(|v| v as u8))
                    .collect();
                match vals {
                    Some(v) if !v.is_empty() && v.len() <= 4 => {
                        let mut out = [0u8; 4];
                        out[..v.len()].copy_from_slice(&v);
                        Some(out)
                    }
                    _ => None,
                }
            };
            if let Some(fast) = fast_v4(c) {
                assert_eq!(Some(fast), general, "{c}");
            }
            assert_eq!(parse_v4_numeric(c, false), general, "{c}");
        }
        let masks = [
            ("32", Some(32)),
            ("0", Some(0)),
            ("8", Some(8)),
            ("33", None),
            ("032", Some(26)),
            ("0x10", Some(16)),
        ];
        for (m, want) in masks {
            let got = parse_v4_mask(m)
                .ok()
                .map(|a| u32::from_be_bytes(a).leading_ones());
            assert_eq!(got, want, "{m}");
        }
    }

    #[test]
    fn masks() {
        assert_eq!(mask_prefix(&[255, 255, 255, 0]), Some(24));
        assert_eq!(mask_prefix(&[255, 0, 255, 0]), None);
        assert_eq!(mask_prefix(&[0, 0, 0, 0]), Some(0));
        assert_eq!(mask_prefix(&[255, 254, 0, 0]), Some(15));
    }
}

#[cfg(test)]
mod strtoul_tests {
    use super::c_strtoul;

    #[test]
    fn c_forms() {
        type Want = Option<(u64, bool, &'static str)>;
        let cases: &[(&str, Want)] = &[
            ("12", Some((12, false, ""))),
            (" +0x1fz", Some((31, false, "z"))),
            ("-1", Some((u64::MAX, false, ""))),
            ("-0x10", Some((u64::MAX - 15, false, ""))),
            ("010", Some((8, false, ""))),
            ("99999999999999999999x", Some((u64::MAX, true, "x"))),
            ("-99999999999999999999", Some((u64::MAX, true, ""))),
            ("", None),
            ("x", None),
            ("+-1", None),
            ("- 1", None),
        ];
        for (s, want) in cases {
            assert_eq!(c_strtoul(s, 0), *want, "{s:?}");
        }
    }
}
