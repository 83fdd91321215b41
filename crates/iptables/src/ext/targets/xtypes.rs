//! xtables option value types several targets share and the older modules
//! did not need: strings stored in fixed-size `char` arrays, address and
//! prefix pairs (XTTYPE_HOSTMASK, XTTYPE_PLENMASK), C's `strtod` with an
//! end, and the kernel refusals that come without a message of their own.

use crate::error::{Error, Result};
use crate::ext::Call;
use crate::opt;

/// XTTYPE_STRING's length bounds (the option entry's min/max; 0 = none),
/// with xtables' messages.
pub fn check_len(arg: &str, min: usize, max: usize) -> Result<()> {
    if min != 0 && arg.len() < min {
        return Err(Error::param(format!(
            "Argument must have a minimum length of {min} characters\n"
        )));
    }
    if max != 0 && arg.len() > max {
        return Err(Error::param(format!(
            "Argument must have a maximum length of {max} characters\n"
        )));
    }
    Ok(())
}

/// XTTYPE_STRING stored (XTOPT_PUT) into `char[size]`: xtables keeps at
/// most `size - 1` bytes and drops the rest silently. A cut inside a UTF-8
/// sequence moves back to the character boundary (the kernel sees bytes;
/// we keep text).
pub fn put_string(arg: &str, size: usize) -> String {
    let mut end = arg.len().min(size - 1);
    while !arg.is_char_boundary(end) {
        end -= 1;
    }
    arg[..end].to_string()
}

/// XTTYPE_HOST: one address of the family (IPv4 in the first 4 bytes), as
/// getaddrinfo reads a numeric host, with its message for an address of the
/// other family. Names are not resolved (as `-s`/`-d`).
pub fn parse_host(s: &str, v6: bool) -> Result<[u8; 16]> {
    opt::parse_gai_host(s, v6).map_err(|e| {
        let other = if v6 {
            opt::parse_inet_aton(s).is_some()
        } else {
            s.parse::<std::net::Ipv6Addr>().is_ok()
        };
        if other {
            Error::param("getaddrinfo: Address family for hostname not supported\n")
        } else {
            e
        }
    })
}

/// A prefix length read as XTTYPE_PLENMASK does: a number `0..=32`
/// (`0..=128` for IPv6) in any base, or a mask in address form. Returns the
/// mask (IPv4 in the first 4 bytes, the rest zero) and the prefix length,
/// 255 for a mask with holes (xtables' `(uint8_t)-1`).
pub fn parse_plen(c: &Call, s: &str, v6: bool) -> Result<([u8; 16], u8)> {
    let max = if v6 { 128 } else { 32 };
    if let Some(bits) = opt::parse_uint(s, 0, max) {
        let mut m = opt::prefix_to_mask16(bits as u32);
        if !v6 {
            m[4..].fill(0);
        }
        return Ok((m, bits as u8));
    }
    let mask = if v6 {
        s.parse::<std::net::Ipv6Addr>().ok().map(|a| a.octets())
    } else {
        opt::parse_inet_aton(s).map(|a| {
            let mut m = [0u8; 16];
            m[..4].copy_from_slice(&a);
            m
        })
    };
    let mask = mask.ok_or_else(|| {
        Error::param(format!(
            "{}: bad value for option \"--{}\", neither a valid network mask nor valid CIDR (0-{max}).\n",
            c.ext, c.opt.name
        ))
    })?;
    let n = if v6 { 16 } else { 4 };
    let hlen = opt::mask_prefix(&mask[..n]).map_or(255, |b| b as u8);
    Ok((mask, hlen))
}

/// XTTYPE_HOSTMASK: `addr[/prefix-or-mask]` as (address, mask, prefix
/// length); the address is not masked. Without a mask the prefix is the
/// whole address. Names are not resolved (as `-s`/`-d`).
pub fn parse_hostmask(c: &Call, v6: bool) -> Result<([u8; 16], [u8; 16], u8)> {
    let (host, mask) = match c.arg.split_once('/') {
        Some((h, m)) => (h, Some(m)),
        None => (c.arg, None),
    };
    let addr = parse_host(host, v6)?;
    match mask {
        Some(m) => {
            let (mask, hlen) = parse_plen(c, m, v6)?;
            Ok((addr, mask, hlen))
        }
        None if v6 => Ok((addr, [0xff; 16], 128)),
        None => {
            let mut m = [0u8; 16];
            m[..4].fill(0xff);
            Ok((addr, m, 32))
        }
    }
}

/// An address as inet_ntop prints it (IPv4: the first 4 bytes).
pub fn fmt_addr(out: &mut String, a: &[u8; 16], v6: bool) {
    if v6 {
        opt::fmt_v6(out, a);
    } else {
        opt::fmt_v4(out, a);
    }
}

/// C's `strtod(s, &end)`: leading white space, a sign, then a decimal
/// number with optional fraction and exponent, "inf"/"infinity" or "nan"
/// (any case). Returns the value and the rest, or `None` when nothing was
/// converted (`end == s`). Hexadecimal floats are not read (no option here
/// documents them).
pub fn strtod_prefix(s: &str) -> Option<(f64, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let word =
        |w: &str| b.len() >= i + w.len() && b[i..i + w.len()].eq_ignore_ascii_case(w.as_bytes());
    for w in ["infinity", "inf", "nan"] {
        if word(w) {
            let v: f64 = if w == "nan" { f64::NAN } else { f64::INFINITY };
            let v = if b[0] == b'-' { -v } else { v };
            return Some((v, &t[i + w.len()..]));
        }
    }
    let digits = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_end = digits(i);
    let mut end = int_end;
    if b.get(end) == Some(&b'.') {
        end = digits(end + 1);
    }
    // At least one digit in the mantissa.
    if end == i || (int_end == i && end == i + 1) {
        return None;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let k = digits(j);
        if k > j {
            end = k;
        }
    }
    let v: f64 = t[..end].parse().ok()?;
    Some((v, &t[end..]))
}

/// Refuse a rule whose save form would not read back as the same rule.
/// nfkeeper keeps each rule as its save text (in the kernel's rule userdata,
/// or in the offline state file), so such a rule would be lost; iptables
/// itself cannot restore what it saves for these either. `shown` is what
/// iptables would print.
pub fn unsaveable(ext: &str, opt: &str, shown: &str) -> Error {
    Error::param(format!(
        "{ext}: \"--{opt} {shown}\" would not read back from the saved rule; nfkeeper cannot keep this rule"
    ))
}

/// A string option iptables prints as it is (no quoting): it reads back
/// only if it is one non-empty word without double quotes.
pub fn check_plain_word(ext: &str, opt: &str, value: &str) -> Result<()> {
    if value.is_empty() || value.contains(|c: char| c.is_ascii_whitespace() || c == '"') {
        return Err(unsaveable(ext, opt, value));
    }
    Ok(())
}

/// A kernel refusal (`checkentry` returning -EINVAL) that the kernel does
/// not explain; `detail` says what it checked.
pub fn einval(target: &str, detail: &str) -> Error {
    Error::op(format!("Invalid argument: {target} target: {detail}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_forms() {
        let cases: &[(&str, Option<(f64, &str)>)] = &[
            ("250.0ms", Some((250.0, "ms"))),
            (" 1s", Some((1.0, "s"))),
            ("+.5", Some((0.5, ""))),
            ("5.", Some((5.0, ""))),
            ("1e3us", Some((1000.0, "us"))),
            ("1e", Some((1.0, "e"))),
            ("-2", Some((-2.0, ""))),
            ("INFs", Some((f64::INFINITY, "s"))),
            (".", None),
            ("ms", None),
            ("", None),
            ("-", None),
        ];
        for (s, want) in cases {
            assert_eq!(strtod_prefix(s), *want, "{s:?}");
        }
    }

    #[test]
    fn put_string_cuts() {
        assert_eq!(put_string("abcdef", 4), "abc");
        assert_eq!(put_string("ab", 4), "ab");
        assert_eq!(put_string("aé", 3), "a");
    }
}
