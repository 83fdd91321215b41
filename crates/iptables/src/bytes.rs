//! Bytes that are not UTF-8, carried through. iptables handles its input
//! as C strings: a comment or log prefix of `caf\xe9` (Latin-1) is taken
//! and printed back byte for byte. nfkeeper works on `str`, so each byte
//! of input that is not part of valid UTF-8 becomes one character of a
//! private-use block ([`decode`]), and turns back into that byte wherever
//! text leaves nfkeeper: on output ([`Unmap`]) and in what goes to the
//! kernel as bytes ([`encode`]). Valid UTF-8 is untouched, so the common
//! case costs one validation pass.

use std::borrow::Cow;
use std::io::{self, Write};

/// Byte `b` (0x80..=0xFF) of invalid input is char `BASE + b`.
const BASE: u32 = 0x10_FE00;

/// The character standing for raw byte `b`.
fn stand_in(b: u8) -> char {
    char::from_u32(BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The raw byte a character stands for, if it is a stand-in.
fn raw_byte(c: char) -> Option<u8> {
    let v = u32::from(c);
    (BASE + 0x80..=BASE + 0xFF)
        .contains(&v)
        .then(|| (v - BASE) as u8)
}

/// Input bytes as text: valid UTF-8 as it is, every other byte as its
/// stand-in. O(n); no copy when the input is valid UTF-8.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 16);
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                out.extend(chunk.invalid().iter().map(|&b| stand_in(b)));
            }
            Cow::Owned(out)
        }
    }
}

/// Text as the bytes it came from: stand-ins become their raw bytes.
/// No copy when there are none.
pub fn encode(s: &str) -> Cow<'_, [u8]> {
    if !s.chars().any(|c| raw_byte(c).is_some()) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for c in s.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
    Cow::Owned(out)
}

/// A writer that turns stand-ins back into raw bytes on the way out.
/// Stand-ins are 4-byte UTF-8 sequences starting with 0xF4; a write that
/// ends inside a sequence keeps its start until the next write.
pub struct Unmap<W: Write> {
    inner: W,
    carry: Vec<u8>,
}

impl<W: Write> Unmap<W> {
    pub fn new(inner: W) -> Unmap<W> {
        Unmap {
            inner,
            carry: Vec::new(),
        }
    }

    fn emit(&mut self, b: &[u8]) -> io::Result<()> {
        if !b.contains(&0xF4) {
            return self.inner.write_all(b);
        }
        match std::str::from_utf8(b) {
            Ok(s) => self.inner.write_all(&encode(s)),
            Err(e) => {
                let (ok, rest) = b.split_at(e.valid_up_to());
                let ok = std::str::from_utf8(ok).unwrap_or_default();
                self.inner.write_all(&encode(ok))?;
                if e.error_len().is_none() {
                    // A sequence cut by the end of this write.
                    self.carry.extend_from_slice(rest);
                    Ok(())
                } else {
                    self.inner.write_all(rest)
                }
            }
        }
    }
}

impl<W: Write> Write for Unmap<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.carry.is_empty() {
            self.emit(b)?;
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(b);
            self.emit(&joined)?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut self.carry);
        self.inner.write_all(&rest)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Unmap<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_any_bytes() {
        let cases: &[&[u8]] = &[
            b"plain",
            b"caf\xe9",
            b"\xff\xfe mixed \xc3\xa9 ok",
            "naïve ✓".as_bytes(),
            b"\xf4\x8f\xb8\x80",
        ];
        for &b in cases {
            let s = decode(b);
            assert_eq!(&*encode(&s), b, "{b:?}");
            // Through the writer, split at every point.
            for at in 0..=s.len() {
                let mut out = Vec::new();
                {
                    let mut w = Unmap::new(&mut out);
                    w.write_all(&s.as_bytes()[..at]).unwrap();
                    w.write_all(&s.as_bytes()[at..]).unwrap();
                }
                assert_eq!(out, b, "{b:?} split at {at}");
            }
        }
        assert!(matches!(decode(b"ok"), Cow::Borrowed(_)));
    }
}
