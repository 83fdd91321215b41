//! Frame encoding and decoding, and reading/writing whole frames.
//!
//! Frame: `u32 len (BE, bytes after itself) | u8 version | u8 type | body`.
//! Body items: u8; u32/i32 BE; bool = u8 0|1; string/bytes = u32 len +
//! bytes (strings UTF-8); list = u32 count + items; Option<string> = u8 0 |
//! u8 1 + string.

use crate::{Fam, Op, OpKind, OpResult, ProtoError, Reply, Request, VERSION};
use std::io::{ErrorKind, Read, Write};

const T_IPTABLES: u8 = 0x01;
const T_RESTORE: u8 = 0x02;
const T_SAVE: u8 = 0x03;
const T_STATUS: u8 = 0x04;
const T_OPS: u8 = 0x05;
const T_IPSET: u8 = 0x06;
const T_STDOUT: u8 = 0x81;
const T_STDERR: u8 = 0x82;
const T_EXIT: u8 = 0x83;
const T_OPRESULTS: u8 = 0x84;
const T_ERROR: u8 = 0x85;

/// Smallest encodings of list items: a count claiming more items than the
/// bytes left could hold is refused, so a count never sizes an allocation
/// beyond the input.
const MIN_STRING: usize = 4;
const MIN_OP: usize = 1 + 4 + 4 + 4 + 4;
const MIN_OPRESULT: usize = 4 + 4;

/// Appends to a frame under construction.
struct Enc<'a>(&'a mut Vec<u8>);

impl Enc<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).expect("a protocol length must fit in 32 bits"));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.0.extend_from_slice(b);
    }
    fn string(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_string(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.string(s);
            }
        }
    }
    fn strings(&mut self, l: &[String]) {
        self.len(l.len());
        for s in l {
            self.string(s);
        }
    }
    fn fam(&mut self, f: Fam) {
        self.u8(match f {
            Fam::V4 => 4,
            Fam::V6 => 6,
        });
    }
}

/// Appends one frame of type `ty` whose body `body` writes; patches the
/// length in afterwards.
///
/// # Panics
/// When the frame or one of its items is 4 GiB or more (not expressible).
fn frame(out: &mut Vec<u8>, ty: u8, body: impl FnOnce(&mut Enc)) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(VERSION);
    out.push(ty);
    body(&mut Enc(out));
    let len =
        u32::try_from(out.len() - start - 4).expect("a protocol frame must be smaller than 4 GiB");
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Appends one whole request frame (length prefix included) to `out`.
///
/// # Panics
/// When the frame would be 4 GiB or more.
pub fn encode_request(r: &Request, out: &mut Vec<u8>) {
    match r {
        Request::Iptables { family, prog, args } => frame(out, T_IPTABLES, |e| {
            e.fam(*family);
            e.string(prog);
            e.strings(args);
        }),
        Request::Restore {
            family,
            prog,
            noflush,
            counters,
            test,
            table,
            payload,
        } => frame(out, T_RESTORE, |e| {
            e.fam(*family);
            e.string(prog);
            e.bool(*noflush);
            e.bool(*counters);
            e.bool(*test);
            e.opt_string(table.as_deref());
            e.bytes(payload);
        }),
        Request::Save {
            family,
            prog,
            counters,
            table,
        } => frame(out, T_SAVE, |e| {
            e.fam(*family);
            e.string(prog);
            e.bool(*counters);
            e.opt_string(table.as_deref());
        }),
        Request::Status => frame(out, T_STATUS, |_| {}),
        Request::Ops { family, ops } => frame(out, T_OPS, |e| {
            e.fam(*family);
            e.len(ops.len());
            for op in ops {
                e.u8(op_kind_code(op.kind));
                e.string(&op.table);
                e.string(&op.chain);
                e.u32(op.pos);
                e.strings(&op.rule);
            }
        }),
        Request::Ipset { args, input } => frame(out, T_IPSET, |e| {
            e.strings(args);
            match input {
                None => e.u8(0),
                Some(b) => {
                    e.u8(1);
                    e.bytes(b);
                }
            }
        }),
    }
}

/// Appends one whole reply frame (length prefix included) to `out`.
///
/// # Panics
/// When the frame would be 4 GiB or more.
pub fn encode_reply(r: &Reply, out: &mut Vec<u8>) {
    match r {
        Reply::Stdout(b) => frame(out, T_STDOUT, |e| e.bytes(b)),
        Reply::Stderr(b) => frame(out, T_STDERR, |e| e.bytes(b)),
        Reply::Exit(c) => frame(out, T_EXIT, |e| e.i32(*c)),
        Reply::OpResults(rs) => frame(out, T_OPRESULTS, |e| {
            e.len(rs.len());
            for r in rs {
                e.i32(r.code);
                e.string(&r.message);
            }
        }),
        Reply::Error { code, message } => frame(out, T_ERROR, |e| {
            e.i32(*code);
            e.string(message);
        }),
    }
}

/// Wire value of a kind: its position in `OpKind::ALL` plus one (the enum
/// is declared in that order).
fn op_kind_code(k: OpKind) -> u8 {
    k as u8 + 1
}

fn malformed(why: String) -> ProtoError {
    ProtoError::Malformed(why)
}

/// Reads a frame body; every read names the field it is for, so that a
/// malformed frame is reported with the field and offset at fault.
struct Dec<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Dec<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ProtoError> {
        let left = self.b.len() - self.at;
        if n > left {
            return Err(malformed(format!(
                "truncated: {what} needs {n} bytes at offset {}, {left} left",
                self.at
            )));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, ProtoError> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &str) -> Result<u32, ProtoError> {
        let s = self.take(4, what)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn i32(&mut self, what: &str) -> Result<i32, ProtoError> {
        Ok(self.u32(what)? as i32)
    }
    fn bool(&mut self, what: &str) -> Result<bool, ProtoError> {
        let at = self.at;
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(malformed(format!(
                "{what} at offset {at} is {v}, not a bool (0 or 1)"
            ))),
        }
    }
    fn bytes(&mut self, what: &str) -> Result<&'a [u8], ProtoError> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }
    fn string(&mut self, what: &str) -> Result<String, ProtoError> {
        let at = self.at;
        let b = self.bytes(what)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(malformed(format!("{what} at offset {at} is not UTF-8"))),
        }
    }
    fn opt_string(&mut self, what: &str) -> Result<Option<String>, ProtoError> {
        let at = self.at;
        match self.u8(what)? {
            0 => Ok(None),
            1 => Ok(Some(self.string(what)?)),
            v => Err(malformed(format!(
                "{what} at offset {at} has option tag {v}, not 0 or 1"
            ))),
        }
    }
    /// A list count, refused when the bytes left cannot hold that many
    /// items of at least `min_item` bytes (so it may size an allocation).
    fn count(&mut self, what: &str, min_item: usize) -> Result<usize, ProtoError> {
        let n = self.u32(what)? as usize;
        let left = self.b.len() - self.at;
        if n > left / min_item {
            return Err(malformed(format!(
                "{what} of {n} items cannot fit in the {left} bytes left"
            )));
        }
        Ok(n)
    }
    fn strings(&mut self, what: &str) -> Result<Vec<String>, ProtoError> {
        let n = self.count(what, MIN_STRING)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.string(what)?);
        }
        Ok(v)
    }
    fn fam(&mut self) -> Result<Fam, ProtoError> {
        let at = self.at;
        match self.u8("family")? {
            4 => Ok(Fam::V4),
            6 => Ok(Fam::V6),
            v => Err(malformed(format!(
                "family at offset {at} is {v}, not 4 or 6"
            ))),
        }
    }
    fn op(&mut self) -> Result<Op, ProtoError> {
        let at = self.at;
        let code = self.u8("op kind")?;
        let kind = match code
            .checked_sub(1)
            .and_then(|i| OpKind::ALL.get(i as usize))
        {
            Some(&k) => k,
            None => {
                return Err(malformed(format!(
                    "op kind at offset {at} is {code}, not 1..=10"
                )))
            }
        };
        Ok(Op {
            kind,
            table: self.string("op table")?,
            chain: self.string("op chain")?,
            pos: self.u32("op pos")?,
            rule: self.strings("op rule")?,
        })
    }
    /// Checks the version, returns the type byte.
    fn header(&mut self) -> Result<u8, ProtoError> {
        let v = self.u8("version")?;
        if v != VERSION {
            return Err(ProtoError::BadVersion(v));
        }
        self.u8("type")
    }
    fn end<T>(&self, v: T) -> Result<T, ProtoError> {
        if self.at != self.b.len() {
            return Err(malformed(format!(
                "{} trailing bytes after the body, at offset {}",
                self.b.len() - self.at,
                self.at
            )));
        }
        Ok(v)
    }
}

/// Decodes a request from a frame body (the bytes after the length prefix:
/// version, type, body). The whole body must be consumed.
pub fn decode_request(frame_body: &[u8]) -> Result<Request, ProtoError> {
    let mut d = Dec {
        b: frame_body,
        at: 0,
    };
    let r = match d.header()? {
        T_IPTABLES => Request::Iptables {
            family: d.fam()?,
            prog: d.string("prog")?,
            args: d.strings("args")?,
        },
        T_RESTORE => Request::Restore {
            family: d.fam()?,
            prog: d.string("prog")?,
            noflush: d.bool("noflush")?,
            counters: d.bool("counters")?,
            test: d.bool("test")?,
            table: d.opt_string("table")?,
            payload: d.bytes("payload")?.to_vec(),
        },
        T_SAVE => Request::Save {
            family: d.fam()?,
            prog: d.string("prog")?,
            counters: d.bool("counters")?,
            table: d.opt_string("table")?,
        },
        T_STATUS => Request::Status,
        T_OPS => {
            let family = d.fam()?;
            let n = d.count("ops", MIN_OP)?;
            let mut ops = Vec::with_capacity(n);
            for _ in 0..n {
                ops.push(d.op()?);
            }
            Request::Ops { family, ops }
        }
        T_IPSET => {
            let args = d.strings("args")?;
            let at = d.at;
            let input = match d.u8("input")? {
                0 => None,
                1 => Some(d.bytes("input")?.to_vec()),
                v => {
                    return Err(malformed(format!(
                        "input at offset {at} has option tag {v}, not 0 or 1"
                    )))
                }
            };
            Request::Ipset { args, input }
        }
        t => return Err(malformed(format!("unknown request type 0x{t:02x}"))),
    };
    d.end(r)
}

/// Decodes a reply from a frame body (the bytes after the length prefix).
pub fn decode_reply(frame_body: &[u8]) -> Result<Reply, ProtoError> {
    let mut d = Dec {
        b: frame_body,
        at: 0,
    };
    let r = match d.header()? {
        T_STDOUT => Reply::Stdout(d.bytes("stdout data")?.to_vec()),
        T_STDERR => Reply::Stderr(d.bytes("stderr data")?.to_vec()),
        T_EXIT => Reply::Exit(d.i32("exit code")?),
        T_OPRESULTS => {
            let n = d.count("op results", MIN_OPRESULT)?;
            let mut rs = Vec::with_capacity(n);
            for _ in 0..n {
                rs.push(OpResult {
                    code: d.i32("op result code")?,
                    message: d.string("op result message")?,
                });
            }
            Reply::OpResults(rs)
        }
        T_ERROR => Reply::Error {
            code: d.i32("error code")?,
            message: d.string("error message")?,
        },
        t => return Err(malformed(format!("unknown reply type 0x{t:02x}"))),
    };
    d.end(r)
}

/// Reads one frame and leaves its body (after the length prefix) in `buf`.
///
/// A clean close before the first byte is [`ProtoError::Eof`]; a close
/// inside the frame is `Io(UnexpectedEof)`. A length above `max` fails
/// with `TooLarge` before any body byte is read or allocated; a length
/// below 2 (no room for version and type) is `Malformed`. `buf` grows with
/// the bytes actually received, so a peer announcing a large frame and
/// then stalling costs no more memory than it sent.
pub fn read_frame(r: &mut impl Read, max: usize, buf: &mut Vec<u8>) -> Result<(), ProtoError> {
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut head[got..]) {
            Ok(0) if got == 0 => return Err(ProtoError::Eof),
            Ok(0) => return Err(ProtoError::Io(ErrorKind::UnexpectedEof.into())),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(ProtoError::Io(e)),
        }
    }
    let len = u32::from_be_bytes(head) as usize;
    if len > max {
        return Err(ProtoError::TooLarge { len, max });
    }
    if len < 2 {
        return Err(malformed(format!(
            "frame length {len} leaves no room for the version and type bytes"
        )));
    }
    buf.clear();
    let n = r.take(len as u64).read_to_end(buf)?;
    if n != len {
        return Err(ProtoError::Io(ErrorKind::UnexpectedEof.into()));
    }
    Ok(())
}

/// Reads and decodes one request frame of at most `max` bytes.
pub fn read_request(r: &mut impl Read, max: usize) -> Result<Request, ProtoError> {
    let mut buf = Vec::new();
    read_frame(r, max, &mut buf)?;
    decode_request(&buf)
}

/// Reads and decodes one reply frame of at most `max` bytes.
pub fn read_reply(r: &mut impl Read, max: usize) -> Result<Reply, ProtoError> {
    let mut buf = Vec::new();
    read_frame(r, max, &mut buf)?;
    decode_reply(&buf)
}

/// Writes one request frame with a single `write_all` (the caller flushes
/// a buffered writer).
pub fn write_request(w: &mut impl Write, r: &Request) -> std::io::Result<()> {
    let mut out = Vec::new();
    encode_request(r, &mut out);
    w.write_all(&out)
}

/// Writes one reply frame with a single `write_all` (the caller flushes a
/// buffered writer).
/// Writes a [`Reply::Stdout`] frame of `data` without copying it: the
/// frame's head, then `data` (the same bytes as [`write_reply`]). For
/// large outputs (a save of a million rules) that are already in memory.
pub fn write_stdout(w: &mut impl Write, data: &[u8]) -> std::io::Result<()> {
    let body = u32::try_from(data.len())
        .ok()
        .and_then(|n| n.checked_add(2 + 4))
        .ok_or_else(|| std::io::Error::other("a protocol frame must be smaller than 4 GiB"))?;
    let mut head = [0u8; 10];
    head[..4].copy_from_slice(&body.to_be_bytes());
    head[4] = VERSION;
    head[5] = T_STDOUT;
    head[6..].copy_from_slice(&(data.len() as u32).to_be_bytes());
    w.write_all(&head)?;
    w.write_all(data)
}

pub fn write_reply(w: &mut impl Write, r: &Reply) -> std::io::Result<()> {
    let mut out = Vec::new();
    encode_reply(r, &mut out);
    w.write_all(&out)
}
