//! Shared test vectors: frames this crate encodes (and malformed frames
//! with the error this crate reports) written to `testdata/protocol/` at
//! the workspace root, so that other implementations (the Go client in
//! `clients/go`) are held to the same bytes and the same error texts.
//!
//! The test checks the files against the encoder and decoder; with
//! `NFK_UPDATE_GOLDEN` set it rewrites them. `index.txt` lists every
//! vector, one per line, tab-separated: `kind name text`, where kind is
//! `request` or `reply` (text: the value, for readers), `bad-request` or
//! `bad-reply` (a frame the decoder refuses; text: the error), or
//! `bad-frame` (refused by `read_frame` with limit `max=N`; text:
//! `N<TAB>error`). Each vector's bytes are in `NAME.bin`: a whole frame,
//! length prefix included.

use proto::{
    decode_reply, decode_request, encode_reply, encode_request, read_frame, Fam, Op, OpResult,
    Reply, Request, VERSION,
};
use std::path::{Path, PathBuf};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|w| w.to_string()).collect()
}

fn requests() -> Vec<(&'static str, Request)> {
    vec![
        (
            "req-iptables-append",
            Request::Iptables {
                family: Fam::V4,
                prog: "iptables".into(),
                args: s(&["-A", "INPUT", "-s", "10.0.0.1", "-j", "ACCEPT"]),
            },
        ),
        (
            "req-iptables-empty-v6",
            Request::Iptables {
                family: Fam::V6,
                prog: String::new(),
                args: vec![],
            },
        ),
        (
            "req-restore-noflush-test-table",
            Request::Restore {
                family: Fam::V6,
                prog: "ip6tables-restore".into(),
                noflush: true,
                counters: false,
                test: true,
                table: Some("filter".into()),
                payload: b"*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n\xff".to_vec(),
            },
        ),
        (
            "req-restore-counters-empty",
            Request::Restore {
                family: Fam::V4,
                prog: "iptables-restore".into(),
                noflush: false,
                counters: true,
                test: false,
                table: None,
                payload: vec![],
            },
        ),
        (
            "req-restore-empty-table-name",
            Request::Restore {
                family: Fam::V4,
                prog: "iptables-restore".into(),
                noflush: false,
                counters: false,
                test: false,
                table: Some(String::new()),
                payload: b"#".to_vec(),
            },
        ),
        (
            "req-save-counters",
            Request::Save {
                family: Fam::V4,
                prog: "iptables-save".into(),
                counters: true,
                table: None,
            },
        ),
        (
            "req-save-table-v6",
            Request::Save {
                family: Fam::V6,
                prog: "ip6tables-save".into(),
                counters: false,
                table: Some("nat".into()),
            },
        ),
        ("req-status", Request::Status),
        (
            "req-ops-every-kind",
            Request::Ops {
                family: Fam::V4,
                ops: vec![
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
                ],
            },
        ),
        (
            "req-ops-empty-v6",
            Request::Ops {
                family: Fam::V6,
                ops: vec![],
            },
        ),
        (
            "req-ops-max-pos",
            Request::Ops {
                family: Fam::V6,
                ops: vec![Op::delete_num("filter", "INPUT", u32::MAX)],
            },
        ),
        (
            "req-ipset-add",
            Request::Ipset {
                args: s(&["add", "ban", "10.0.0.1"]),
                input: None,
            },
        ),
        (
            "req-ipset-restore",
            Request::Ipset {
                args: s(&["-exist", "restore"]),
                input: Some(b"create ban hash:ip\nadd ban 10.0.0.1\n\xff".to_vec()),
            },
        ),
        (
            "req-ipset-restore-empty-input",
            Request::Ipset {
                args: s(&["restore"]),
                input: Some(vec![]),
            },
        ),
    ]
}

fn res(code: i32, message: &str) -> OpResult {
    OpResult {
        code,
        message: message.into(),
    }
}

fn replies() -> Vec<(&'static str, Reply)> {
    vec![
        ("rep-stdout", Reply::Stdout(b"-P INPUT ACCEPT\n".to_vec())),
        ("rep-stdout-empty", Reply::Stdout(vec![])),
        (
            "rep-stderr-binary",
            Reply::Stderr(b"iptables: Bad rule.\n\0\xff".to_vec()),
        ),
        ("rep-exit-0", Reply::Exit(0)),
        ("rep-exit-1", Reply::Exit(1)),
        ("rep-exit-negative", Reply::Exit(-1)),
        ("rep-exit-max", Reply::Exit(i32::MAX)),
        ("rep-exit-min", Reply::Exit(i32::MIN)),
        ("rep-opresults-empty", Reply::OpResults(vec![])),
        (
            "rep-opresults",
            Reply::OpResults(vec![res(0, ""), res(1, "iptables: Chain already exists.")]),
        ),
        (
            "rep-error-busy",
            Reply::Error {
                code: 4,
                message: "server busy".into(),
            },
        ),
        (
            "rep-error-version",
            Reply::Error {
                code: 2,
                message: "unsupported protocol version 9; this daemon speaks version 1".into(),
            },
        ),
    ]
}

/// A whole frame around `body` (version and type included in `body`).
fn framed(body: &[u8]) -> Vec<u8> {
    let mut v = (body.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

/// A body: version 1, `ty`, then `rest`.
fn b(ty: u8, rest: &[u8]) -> Vec<u8> {
    let mut v = vec![VERSION, ty];
    v.extend_from_slice(rest);
    v
}

fn bad_requests() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("badreq-version-9", vec![9, 1]),
        ("badreq-no-type", vec![VERSION]),
        ("badreq-unknown-type", b(0x7e, &[])),
        ("badreq-reply-type", b(0x83, &[0, 0, 0, 0])),
        ("badreq-family-5", b(1, &[5])),
        (
            "badreq-truncated-string",
            b(1, &[4, 0, 0, 0, 9, b'i', b'p']),
        ),
        ("badreq-truncated-length", b(1, &[4, 0, 0])),
        ("badreq-not-utf8", b(1, &[4, 0, 0, 0, 1, 0xff, 0, 0, 0, 0])),
        (
            "badreq-huge-count",
            b(1, &[4, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
        ),
        ("badreq-huge-op-count", b(5, &[4, 0x7f, 0xff, 0xff, 0xff])),
        ("badreq-bool-2", b(3, &[4, 0, 0, 0, 0, 2, 0])),
        ("badreq-option-tag-7", b(3, &[4, 0, 0, 0, 0, 1, 7])),
        (
            "badreq-op-kind-11",
            b(
                5,
                &[
                    4, 0, 0, 0, 1, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
        ),
        (
            "badreq-op-kind-0",
            b(
                5,
                &[
                    4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
        ),
        ("badreq-trailing-status", b(4, &[0])),
        (
            "badreq-trailing-save",
            b(3, &[4, 0, 0, 0, 0, 0, 0, 0xee, 0xee]),
        ),
        (
            "badreq-truncated-payload",
            b(2, &[4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, b'x']),
        ),
        ("badreq-ipset-input-tag-2", b(6, &[0, 0, 0, 0, 2])),
        ("badreq-ipset-no-input-tag", b(6, &[0, 0, 0, 0])),
        (
            "badreq-surrogate",
            b(1, &[4, 0, 0, 0, 3, 0xed, 0xa0, 0x80, 0, 0, 0, 0]),
        ),
    ]
}

fn bad_replies() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("badrep-version-0", vec![0, 0x83, 0, 0, 0, 0]),
        ("badrep-unknown-type", b(0x86, &[])),
        ("badrep-request-type", b(0x04, &[])),
        ("badrep-short-exit", b(0x83, &[0, 0])),
        ("badrep-exit-trailing", b(0x83, &[0, 0, 0, 0, 0])),
        ("badrep-stdout-truncated", b(0x81, &[0, 0, 1, 0, b'x'])),
        (
            "badrep-huge-result-count",
            b(0x84, &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
        ),
        (
            "badrep-error-not-utf8",
            b(0x85, &[0, 0, 0, 1, 0, 0, 0, 1, 0xc3]),
        ),
    ]
}

/// Raw streams `read_frame` refuses with `max`: (name, bytes, max).
fn bad_frames() -> Vec<(&'static str, Vec<u8>, usize)> {
    vec![
        ("badframe-too-large", vec![0, 0, 0, 11], 10),
        ("badframe-huge", vec![0xff, 0xff, 0xff, 0xff], 1 << 30),
        ("badframe-length-0", vec![0, 0, 0, 0], 10),
        ("badframe-length-1", vec![0, 0, 0, 1, 1], 10),
        ("badframe-cut-head", vec![0, 0], 10),
        ("badframe-cut-body", vec![0, 0, 0, 6, 1, 0x83, 0], 10),
        ("badframe-empty", vec![], 10),
    ]
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/protocol")
}

fn frame_of(enc: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    enc(&mut out);
    out
}

/// Every vector as (file name, bytes) and the index text.
fn vectors() -> (Vec<(String, Vec<u8>)>, String) {
    let mut files = Vec::new();
    let mut index = String::new();
    for (name, r) in requests() {
        let f = frame_of(|o| encode_request(&r, o));
        assert_eq!(decode_request(&f[4..]).unwrap(), r, "{name} round trip");
        index.push_str(&format!("request\t{name}\t{r:?}\n"));
        files.push((format!("{name}.bin"), f));
    }
    for (name, r) in replies() {
        let f = frame_of(|o| encode_reply(&r, o));
        assert_eq!(decode_reply(&f[4..]).unwrap(), r, "{name} round trip");
        index.push_str(&format!("reply\t{name}\t{r:?}\n"));
        files.push((format!("{name}.bin"), f));
    }
    for (name, body) in bad_requests() {
        let e = decode_request(&body).expect_err(name);
        index.push_str(&format!("bad-request\t{name}\t{e}\n"));
        files.push((format!("{name}.bin"), framed(&body)));
    }
    for (name, body) in bad_replies() {
        let e = decode_reply(&body).expect_err(name);
        index.push_str(&format!("bad-reply\t{name}\t{e}\n"));
        files.push((format!("{name}.bin"), framed(&body)));
    }
    for (name, raw, max) in bad_frames() {
        let mut buf = Vec::new();
        let e = read_frame(&mut &raw[..], max, &mut buf).expect_err(name);
        index.push_str(&format!("bad-frame\t{name}\t{max}\t{e}\n"));
        files.push((format!("{name}.bin"), raw));
    }
    files.push(("index.txt".into(), index.clone().into_bytes()));
    (files, index)
}

#[test]
fn shared_vectors_match_the_encoder_and_decoder() {
    let (files, _) = vectors();
    let d = dir();
    if std::env::var_os("NFK_UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for (name, bytes) in &files {
            std::fs::write(d.join(name), bytes).unwrap();
        }
        return;
    }
    for (name, bytes) in &files {
        let got = std::fs::read(d.join(name)).unwrap_or_else(|e| {
            panic!("{name}: {e}; regenerate with NFK_UPDATE_GOLDEN=1 cargo test -p nfk-proto --test vectors")
        });
        assert!(
            &got == bytes,
            "{name} differs from the encoder; regenerate with NFK_UPDATE_GOLDEN=1 cargo test -p nfk-proto --test vectors"
        );
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut want: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    want.sort();
    assert_eq!(on_disk, want, "stale or missing files in {}", d.display());
}

/// The index names each vector once and every kind is covered.
#[test]
fn index_is_well_formed() {
    let (_, index) = vectors();
    let mut names = std::collections::HashSet::new();
    let mut kinds = std::collections::HashSet::new();
    for line in index.lines() {
        let mut f = line.split('\t');
        let kind = f.next().unwrap();
        let name = f.next().unwrap();
        assert!(names.insert(name.to_string()), "{name} twice");
        kinds.insert(kind.to_string());
        assert!(!line.contains('\n'));
    }
    for k in ["request", "reply", "bad-request", "bad-reply", "bad-frame"] {
        assert!(kinds.contains(k), "no {k} vector");
    }
}
