//! Numbers as ipset reads them: C `strtoull`/`strtol` semantics (leading
//! blanks, sign, `0x` hex, leading-`0` octal) with ipset's range messages.

use crate::error::{Error, Result};

/// C `strtoull(s, &end, base)`: the value, how many bytes were consumed
/// (0 when no digits were read) and whether it overflowed (ERANGE, value
/// saturated). A leading `-` negates modulo 2^64, as C does.
pub fn strtoull(s: &str, base: u32) -> (u64, usize, bool) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let mut base = base;
    let hex_prefix = i + 1 < b.len() && b[i] == b'0' && (b[i + 1] == b'x' || b[i + 1] == b'X');
    if (base == 0 || base == 16) && hex_prefix && i + 2 < b.len() && b[i + 2].is_ascii_hexdigit() {
        base = 16;
        i += 2;
    } else if base == 0 {
        base = if i < b.len() && b[i] == b'0' { 8 } else { 10 };
    }
    let start = i;
    let mut v: u64 = 0;
    let mut overflow = false;
    while i < b.len() {
        let d = match b[i] {
            c @ b'0'..=b'9' => u32::from(c - b'0'),
            c @ b'a'..=b'z' => u32::from(c - b'a') + 10,
            c @ b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => break,
        };
        if d >= base {
            break;
        }
        match v
            .checked_mul(u64::from(base))
            .and_then(|x| x.checked_add(u64::from(d)))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        // "0x" with no hex digit after it parses as the single "0".
        if hex_prefix && (base == 16 || base == 0) {
            return (0, start - 1, false);
        }
        return (0, 0, false);
    }
    if overflow {
        return (u64::MAX, i, true);
    }
    (if neg { v.wrapping_neg() } else { v }, i, false)
}

/// ipset's `string_to_number_ll`: a whole-string number in `min..=max`
/// (`max == 0` means no upper bound), with its error texts.
pub fn number(s: &str, min: u64, max: u64) -> Result<u64> {
    let (v, end, overflow) = strtoull(s, 0);
    let whole = end == s.len() && end != 0;
    if whole && !overflow {
        if min <= v && (max == 0 || v <= max) {
            return Ok(v);
        }
        return Err(range_err(s, min, max));
    }
    if whole && overflow {
        return Err(range_err(s, min, max));
    }
    Err(Error::syntax(format!("'{s}' is invalid as number")))
}

fn range_err(s: &str, min: u64, max: u64) -> Error {
    let max = if max == 0 { u64::MAX } else { max };
    Error::syntax(format!("'{s}' is out of range {min}-{max}"))
}

pub fn u8_(s: &str) -> Result<u8> {
    number(s, 0, 255).map(|v| v as u8)
}

pub fn u16_(s: &str) -> Result<u16> {
    number(s, 0, u64::from(u16::MAX)).map(|v| v as u16)
}

pub fn u32_(s: &str) -> Result<u32> {
    number(s, 0, u64::from(u32::MAX)).map(|v| v as u32)
}

/// C `strtol(s, &end, 16)` restricted to what MAC parsing needs: the value
/// (None when out of `long` range) and the bytes consumed.
pub fn strtol16(s: &str) -> (Option<i64>, usize) {
    let (v, end, overflow) = strtoull(s, 16);
    if end == 0 {
        return (Some(0), 0);
    }
    let neg = s.trim_start().starts_with('-');
    if overflow {
        return (None, end);
    }
    let signed = v as i64;
    // A value that does not fit in a long saturates (ERANGE); treat as out
    // of any byte range.
    if (!neg && signed < 0) || (neg && signed > 0) {
        return (None, end);
    }
    (Some(signed), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoull_cases() {
        let cases = [
            ("123", (123, 3, false)),
            ("0x1f", (31, 4, false)),
            ("017", (15, 3, false)),
            ("08", (0, 1, false)),
            ("  +5", (5, 4, false)),
            ("-1", (u64::MAX, 2, false)),
            ("0x", (0, 1, false)),
            ("abc", (0, 0, false)),
            ("18446744073709551616", (u64::MAX, 20, true)),
        ];
        for (s, want) in cases {
            assert_eq!(strtoull(s, 0), want, "{s}");
        }
    }

    #[test]
    fn number_messages() {
        assert_eq!(number("600", 0, 2147483).unwrap(), 600);
        assert_eq!(
            number("3000000", 0, 2147483).unwrap_err().msg,
            "Syntax error: '3000000' is out of range 0-2147483"
        );
        assert_eq!(
            number("-1", 0, 255).unwrap_err().msg,
            "Syntax error: '-1' is out of range 0-255"
        );
        assert_eq!(
            number("1x", 0, 255).unwrap_err().msg,
            "Syntax error: '1x' is invalid as number"
        );
        assert_eq!(
            number("", 0, 255).unwrap_err().msg,
            "Syntax error: '' is invalid as number"
        );
    }
}
