use super::*;
use std::io::{self, Read};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|w| w.to_string()).collect()
}

fn requests() -> Vec<Request> {
    let every_kind = vec![
        Op::append("filter", "INPUT", &["-s", "10.0.0.1", "-j", "ACCEPT"]),
        Op::insert("filter", "INPUT", 3, &["-j", "DROP"]),
        Op::delete("nat", "POSTROUTING", &["-j", "MASQUERADE"]),
        Op::delete_num("filter", "FORWARD", 7),
        Op::replace(
            "mangle",
            "PREROUTING",
            2,
            &["-j", "MARK", "--set-mark", "1"],
        ),
        Op::new_chain("filter", "é-chain"),
        Op::delete_chain("filter", ""),
        Op::flush("raw", "OUTPUT"),
        Op::policy("filter", "INPUT", "DROP"),
        Op::check("filter", "INPUT", &[]),
    ];
    vec![
        Request::Iptables {
            family: Fam::V4,
            prog: "iptables".into(),
            args: s(&["-A", "INPUT", "-s", "10.0.0.1", "-j", "ACCEPT"]),
        },
        Request::Iptables {
            family: Fam::V6,
            prog: String::new(),
            args: vec![],
        },
        Request::Restore {
            family: Fam::V6,
            prog: "ip6tables-restore".into(),
            noflush: true,
            counters: false,
            test: true,
            table: Some("filter".into()),
            payload: b"*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n\xff".to_vec(),
        },
        Request::Restore {
            family: Fam::V4,
            prog: "iptables-restore".into(),
            noflush: false,
            counters: true,
            test: false,
            table: None,
            payload: vec![],
        },
        Request::Save {
            family: Fam::V4,
            prog: "iptables-save".into(),
            counters: true,
            table: None,
        },
        Request::Save {
            family: Fam::V6,
            prog: "ip6tables-save".into(),
            counters: false,
            table: Some("nat".into()),
        },
        Request::Status,
        Request::Ops {
            family: Fam::V4,
            ops: every_kind,
        },
        Request::Ops {
            family: Fam::V6,
            ops: vec![],
        },
        Request::Ipset {
            args: s(&["add", "x", "10.0.0.1", "timeout", "30"]),
            input: None,
        },
        Request::Ipset {
            args: s(&["restore", "-exist"]),
            input: Some(b"create x hash:ip\nadd x 1.2.3.4\n\xff".to_vec()),
        },
        Request::Ipset {
            args: vec![],
            input: Some(vec![]),
        },
    ]
}

fn replies() -> Vec<Reply> {
    vec![
        Reply::Stdout(b"-P INPUT ACCEPT\n".to_vec()),
        Reply::Stdout(vec![]),
        Reply::Stderr(b"iptables: Bad rule.\n\0\xff".to_vec()),
        Reply::Exit(0),
        Reply::Exit(-1),
        Reply::Exit(i32::MAX),
        Reply::OpResults(vec![]),
        Reply::OpResults(vec![
            OpResult {
                code: 0,
                message: String::new(),
            },
            OpResult {
                code: 1,
                message: "iptables: Chain already exists.".into(),
            },
        ]),
        Reply::Error {
            code: 4,
            message: "server busy".into(),
        },
    ]
}

/// Splits a whole encoded frame into its length and body, checking the
/// length prefix on the way.
fn body(frame: &[u8]) -> &[u8] {
    let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(
        len,
        frame.len() - 4,
        "length prefix counts the bytes after it"
    );
    assert_eq!(frame[4], VERSION);
    &frame[4..]
}

#[test]
fn every_request_round_trips() {
    for r in requests() {
        let mut out = vec![0xaa];
        encode_request(&r, &mut out);
        assert_eq!(out[0], 0xaa, "encode appends");
        assert_eq!(decode_request(body(&out[1..])).unwrap(), r);
        assert_eq!(read_request(&mut &out[1..], out.len()).unwrap(), r);
        let mut w = Vec::new();
        write_request(&mut w, &r).unwrap();
        assert_eq!(w, out[1..]);
        assert!(
            matches!(decode_reply(body(&w)), Err(ProtoError::Malformed(_))),
            "a request is no reply: {r:?}"
        );
    }
}

#[test]
fn every_reply_round_trips() {
    for r in replies() {
        let mut out = Vec::new();
        encode_reply(&r, &mut out);
        assert_eq!(decode_reply(body(&out)).unwrap(), r);
        let mut w = Vec::new();
        write_reply(&mut w, &r).unwrap();
        assert_eq!(w, out);
        assert_eq!(read_reply(&mut &w[..], w.len()).unwrap(), r);
        assert!(
            matches!(decode_request(body(&w)), Err(ProtoError::Malformed(_))),
            "a reply is no request: {r:?}"
        );
    }
}

#[test]
fn frames_in_sequence_then_eof() {
    let mut stream = Vec::new();
    for r in replies() {
        encode_reply(&r, &mut stream);
    }
    let mut rd = &stream[..];
    for r in replies() {
        assert_eq!(read_reply(&mut rd, 1 << 20).unwrap(), r);
    }
    assert!(matches!(read_reply(&mut rd, 1 << 20), Err(ProtoError::Eof)));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// The worked examples of docs/protocol.md, checked against the encoder:
/// each frame's hex must appear in the document, where annotated lines
/// count up to their first double space, without spaces.
#[test]
fn the_documented_examples() {
    let doc = include_str!("../../../docs/protocol.md");
    let doc: String = doc
        .lines()
        .map(|l| l.split("  ").next().unwrap_or("").replace(' ', ""))
        .collect();
    let append = Request::Iptables {
        family: Fam::V4,
        prog: "iptables".into(),
        args: s(&["-A", "INPUT", "-s", "10.0.0.1", "-j", "ACCEPT"]),
    };
    let no_chain = Reply::Stderr(b"iptables: No chain/target/match by that name.\n".to_vec());
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "example 1 request",
            frame_of(|o| encode_request(&append, o)),
            "000000440101040000000869707461626c6573",
        ),
        (
            "example 1 reply",
            frame_of(|o| encode_reply(&Reply::Exit(0), o)),
            "00000006018300000000",
        ),
        (
            "example 2 stderr",
            frame_of(|o| encode_reply(&no_chain, o)),
            "0000003401820000002e",
        ),
        (
            "example 2 exit",
            frame_of(|o| encode_reply(&Reply::Exit(1), o)),
            "00000006018300000001",
        ),
    ];
    for (name, frame, start) in cases {
        let h = hex(&frame);
        assert!(h.starts_with(start), "{name}: {h}");
        assert!(doc.contains(&h), "{name}: {h} is not in docs/protocol.md");
    }
}

fn frame_of(enc: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    enc(&mut out);
    out
}

/// A body: version 1, `ty`, then `rest`.
fn b(ty: u8, rest: &[u8]) -> Vec<u8> {
    let mut v = vec![VERSION, ty];
    v.extend_from_slice(rest);
    v
}

#[test]
fn malformed_requests_are_refused() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "version"),
        ("no type", vec![VERSION], "type"),
        ("unknown type", b(0x7e, &[]), "unknown request type 0x7e"),
        (
            "reply type",
            b(0x83, &[0, 0, 0, 0]),
            "unknown request type 0x83",
        ),
        ("bad family", b(1, &[5]), "family at offset 2 is 5"),
        (
            "truncated string",
            b(1, &[4, 0, 0, 0, 9, b'i', b'p']),
            "prog needs 9 bytes at offset 7, 2 left",
        ),
        ("truncated length", b(1, &[4, 0, 0]), "prog needs 4 bytes"),
        (
            "bad utf-8",
            b(1, &[4, 0, 0, 0, 1, 0xff, 0, 0, 0, 0]),
            "prog at offset 3 is not UTF-8",
        ),
        (
            "huge count, few bytes",
            b(1, &[4, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
            "args of 4294967295 items cannot fit in the 4 bytes left",
        ),
        (
            "huge op count",
            b(5, &[4, 0x7f, 0xff, 0xff, 0xff]),
            "ops of 2147483647 items",
        ),
        (
            "bad bool",
            b(3, &[4, 0, 0, 0, 0, 2, 0]),
            "counters at offset 7 is 2, not a bool",
        ),
        (
            "bad option tag",
            b(3, &[4, 0, 0, 0, 0, 1, 7]),
            "table at offset 8 has option tag 7",
        ),
        (
            "bad op kind",
            b(
                5,
                &[
                    4, 0, 0, 0, 1, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
            "op kind at offset 7 is 11",
        ),
        (
            "op kind zero",
            b(
                5,
                &[
                    4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
            "op kind at offset 7 is 0",
        ),
        (
            "trailing bytes",
            b(4, &[0]),
            "1 trailing bytes after the body, at offset 2",
        ),
        (
            "trailing after save",
            b(3, &[4, 0, 0, 0, 0, 0, 0, 0xee, 0xee]),
            "2 trailing bytes",
        ),
        (
            "truncated payload",
            b(2, &[4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, b'x']),
            "payload needs 3 bytes",
        ),
    ];
    for (name, body, want) in cases {
        match decode_request(&body) {
            Err(ProtoError::Malformed(m)) => {
                assert!(m.contains(want), "{name}: {m:?} lacks {want:?}")
            }
            other => panic!("{name}: want Malformed, got {other:?}"),
        }
    }
}

#[test]
fn malformed_replies_are_refused() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("unknown type", b(0x86, &[]), "unknown reply type 0x86"),
        ("request type", b(0x04, &[]), "unknown reply type 0x04"),
        ("short exit", b(0x83, &[0, 0]), "exit code needs 4 bytes"),
        (
            "exit trailing",
            b(0x83, &[0, 0, 0, 0, 0]),
            "1 trailing bytes",
        ),
        (
            "stdout truncated",
            b(0x81, &[0, 0, 1, 0, b'x']),
            "stdout data needs 256 bytes",
        ),
        (
            "huge result count",
            b(0x84, &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
            "op results of 4294967295 items",
        ),
        (
            "error message not utf-8",
            b(0x85, &[0, 0, 0, 1, 0, 0, 0, 1, 0xc3]),
            "error message at offset 6 is not UTF-8",
        ),
    ];
    for (name, body, want) in cases {
        match decode_reply(&body) {
            Err(ProtoError::Malformed(m)) => {
                assert!(m.contains(want), "{name}: {m:?} lacks {want:?}")
            }
            other => panic!("{name}: want Malformed, got {other:?}"),
        }
    }
}

#[test]
fn other_versions_are_named() {
    for v in [0u8, 2, 9, 0xff] {
        assert!(matches!(decode_request(&[v, 1]), Err(ProtoError::BadVersion(x)) if x == v));
        assert!(
            matches!(decode_reply(&[v, 0x83, 0, 0, 0, 0]), Err(ProtoError::BadVersion(x)) if x == v)
        );
    }
}

/// Every prefix of every valid frame body fails cleanly (no panic, never
/// decodes to something).
#[test]
fn every_truncation_is_an_error() {
    for r in requests() {
        let mut out = Vec::new();
        encode_request(&r, &mut out);
        let full = body(&out);
        for n in 0..full.len() {
            assert!(decode_request(&full[..n]).is_err(), "{r:?} cut at {n}");
        }
    }
    for r in replies() {
        let mut out = Vec::new();
        encode_reply(&r, &mut out);
        let full = body(&out);
        for n in 0..full.len() {
            assert!(decode_reply(&full[..n]).is_err(), "{r:?} cut at {n}");
        }
    }
}

/// Yields `data`, then panics if asked for more: proves a reader stopped
/// where it should.
struct Fuse<'a> {
    data: &'a [u8],
}

impl Read for Fuse<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        assert!(!self.data.is_empty(), "read beyond the allowed bytes");
        let n = buf.len().min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn read_frame_limits() {
    let cases: [(&[u8], usize, &str); 5] = [
        (
            &[0x7f, 0xff, 0xff, 0xff],
            DEFAULT_MAX_REQUEST,
            "TooLarge 2147483647 67108864",
        ),
        (&[0, 0, 0, 11], 10, "TooLarge 11 10"),
        (
            &[0xff, 0xff, 0xff, 0xff],
            DEFAULT_MAX_REPLY,
            "TooLarge 4294967295 1073741824",
        ),
        (&[0, 0, 0, 0], 10, "Malformed"),
        (&[0, 0, 0, 1], 10, "Malformed"),
    ];
    for (head, max, want) in cases {
        let mut buf = Vec::new();
        let got = match read_frame(&mut Fuse { data: head }, max, &mut buf) {
            Err(ProtoError::TooLarge { len, max }) => format!("TooLarge {len} {max}"),
            Err(ProtoError::Malformed(_)) => "Malformed".into(),
            Err(ProtoError::Io(e)) => format!("{:?}", e.kind()),
            other => format!("{other:?}"),
        };
        assert_eq!(got, want, "{head:?} max {max}");
        assert!(buf.capacity() < 64, "no allocation for a refused body");
    }
}

#[test]
fn read_frame_eof_and_truncated_body() {
    let mut buf = Vec::new();
    assert!(matches!(
        read_frame(&mut &[][..], 10, &mut buf),
        Err(ProtoError::Eof)
    ));
    let cut: [&[u8]; 2] = [&[0, 0], &[0, 0, 0, 6, 1, 0x83, 0]];
    for short in cut {
        match read_frame(&mut &short[..], 10, &mut buf) {
            Err(ProtoError::Io(e)) => {
                assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{short:?}")
            }
            other => panic!("{short:?}: want UnexpectedEof, got {other:?}"),
        }
    }
    // Exactly at the limit is allowed, and the frame ends where it says.
    let two: &[u8] = &[0, 0, 0, 6, 1, 0x83, 0, 0, 0, 3, 0xde, 0xad];
    let mut rd = two;
    read_frame(&mut rd, 6, &mut buf).unwrap();
    assert_eq!(buf, [1, 0x83, 0, 0, 0, 3]);
    assert_eq!(rd, [0xde, 0xad]);
}

#[test]
fn op_to_args() {
    let cases: Vec<(Op, &str)> = vec![
        (
            Op::append("filter", "INPUT", &["-s", "10.0.0.1", "-j", "ACCEPT"]),
            "-t filter -A INPUT -s 10.0.0.1 -j ACCEPT",
        ),
        (
            Op::insert("nat", "PREROUTING", 2, &["-j", "RETURN"]),
            "-t nat -I PREROUTING 2 -j RETURN",
        ),
        (
            Op::delete("filter", "INPUT", &["-j", "DROP"]),
            "-t filter -D INPUT -j DROP",
        ),
        (Op::delete_num("filter", "INPUT", 4), "-t filter -D INPUT 4"),
        (
            Op::replace("filter", "OUTPUT", 1, &["-j", "ACCEPT"]),
            "-t filter -R OUTPUT 1 -j ACCEPT",
        ),
        (Op::new_chain("filter", "MINE"), "-t filter -N MINE"),
        (Op::delete_chain("filter", "MINE"), "-t filter -X MINE"),
        (Op::delete_chain("filter", ""), "-t filter -X"),
        (Op::flush("mangle", "FORWARD"), "-t mangle -F FORWARD"),
        (Op::flush("mangle", ""), "-t mangle -F"),
        (
            Op::policy("filter", "FORWARD", "DROP"),
            "-t filter -P FORWARD DROP",
        ),
        (
            Op::check("filter", "INPUT", &["-p", "tcp"]),
            "-t filter -C INPUT -p tcp",
        ),
    ];
    for (op, want) in cases {
        assert_eq!(op.to_args().join(" "), want, "{op:?}");
    }
}

#[test]
fn op_constructors_set_kind_and_pos() {
    let cases: [(Op, OpKind, u32); 10] = [
        (Op::append("t", "c", &[]), OpKind::Append, 0),
        (Op::insert("t", "c", 5, &[]), OpKind::Insert, 5),
        (Op::delete("t", "c", &[]), OpKind::Delete, 0),
        (Op::delete_num("t", "c", 6), OpKind::DeleteNum, 6),
        (Op::replace("t", "c", 7, &[]), OpKind::Replace, 7),
        (Op::new_chain("t", "c"), OpKind::NewChain, 0),
        (Op::delete_chain("t", "c"), OpKind::DeleteChain, 0),
        (Op::flush("t", "c"), OpKind::Flush, 0),
        (Op::policy("t", "c", "ACCEPT"), OpKind::Policy, 0),
        (Op::check("t", "c", &[]), OpKind::Check, 0),
    ];
    for (i, (op, kind, pos)) in cases.into_iter().enumerate() {
        assert_eq!((op.kind, op.pos), (kind, pos));
        assert_eq!(OpKind::ALL[i], kind, "ALL is in wire order");
        let mut out = Vec::new();
        encode_request(
            &Request::Ops {
                family: Fam::V4,
                ops: vec![op],
            },
            &mut out,
        );
        assert_eq!(out[11] as usize, i + 1, "wire value of {kind:?}");
    }
}

#[test]
fn error_texts() {
    let cases: Vec<(ProtoError, &str)> = vec![
        (
            ProtoError::TooLarge {
                len: 80000000,
                max: DEFAULT_MAX_REQUEST,
            },
            "message of 80000000 bytes exceeds the limit of 67108864 bytes",
        ),
        (
            ProtoError::BadVersion(2),
            "unsupported protocol version 2 (this side speaks version 1)",
        ),
        (ProtoError::Eof, "the connection was closed"),
        (
            ProtoError::Io(io::ErrorKind::UnexpectedEof.into()),
            "the connection was closed in the middle of a message",
        ),
        (ProtoError::Malformed("x".into()), "malformed message: x"),
    ];
    for (e, want) in cases {
        assert_eq!(e.to_string(), want);
    }
}

/// `write_stdout` writes exactly the frame `write_reply` writes for the
/// same bytes, at every size around the head.
#[test]
fn stdout_frames_written_without_a_copy_equal_encoded_ones() {
    for n in [0usize, 1, 3, 4, 5, 1000, 1 << 16] {
        let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
        let mut a = Vec::new();
        write_stdout(&mut a, &data).unwrap();
        let mut b = Vec::new();
        write_reply(&mut b, &Reply::Stdout(data)).unwrap();
        assert_eq!(a, b, "{n} bytes");
    }
}
