//! The client against a scripted fake daemon on a socket pair: the fake
//! reads one request, checks it, and sends canned frames (or raw bytes).

use proto::client::{Client, ClientError, Output};
use proto::{
    encode_reply, read_request, Fam, Op, OpResult, ProtoError, Reply, Request, DEFAULT_MAX_REQUEST,
};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::thread;

/// Starts a fake daemon that expects `want` and then writes `answer`
/// (whole frames, or a cut stream) and closes. Returns the client end.
fn fake(want: Request, answer: Vec<u8>) -> (Client, thread::JoinHandle<()>) {
    let (c, mut s) = UnixStream::pair().unwrap();
    let h = thread::spawn(move || {
        let got = read_request(&mut s, DEFAULT_MAX_REQUEST).expect("a request");
        assert_eq!(got, want);
        s.write_all(&answer).unwrap();
    });
    (Client::from_stream(c), h)
}

fn frames(rs: &[Reply]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in rs {
        encode_reply(r, &mut out);
    }
    out
}

fn iptables(args: &[&str]) -> Request {
    Request::Iptables {
        family: Fam::V4,
        prog: "iptables".into(),
        args: args.iter().map(|a| a.to_string()).collect(),
    }
}

fn res(code: i32, message: &str) -> OpResult {
    OpResult {
        code,
        message: message.into(),
    }
}

#[test]
fn call_streams_chunks_in_order() {
    let sent = [
        Reply::Stdout(b"-P INPUT ".to_vec()),
        Reply::Stderr(b"warn\n".to_vec()),
        Reply::Stdout(b"ACCEPT\n".to_vec()),
        Reply::Exit(0),
    ];
    let (mut c, h) = fake(iptables(&["-S"]), frames(&sent));
    let mut seen = Vec::new();
    let (code, results) = c
        .call(&iptables(&["-S"]), &mut |r| seen.push(r.clone()))
        .unwrap();
    h.join().unwrap();
    assert_eq!((code, results), (0, vec![]));
    assert_eq!(seen, sent[..3]);
}

#[test]
fn run_collects_and_the_connection_carries_many_requests() {
    let (c, mut s) = UnixStream::pair().unwrap();
    let h = thread::spawn(move || {
        for i in 0..3 {
            let r = read_request(&mut s, 1 << 20).unwrap();
            assert_eq!(r, iptables(&["-L", &i.to_string()]));
            s.write_all(&frames(&[
                Reply::Stdout(format!("out{i}").into_bytes()),
                Reply::Stderr(b"err".to_vec()),
                Reply::Exit(i),
            ]))
            .unwrap();
        }
    });
    let mut c = Client::from_stream(c);
    for i in 0..3 {
        let o = c.run(&iptables(&["-L", &i.to_string()])).unwrap();
        assert_eq!(
            o,
            Output {
                stdout: format!("out{i}").into_bytes(),
                stderr: b"err".to_vec(),
                code: i
            }
        );
    }
    h.join().unwrap();
}

/// What a call ended with, as comparable text.
fn outcome<T: std::fmt::Debug>(r: Result<T, ClientError>) -> String {
    match r {
        Ok(v) => format!("Ok {v:?}"),
        Err(ClientError::Refused { code, message }) => format!("Refused {code} {message}"),
        Err(ClientError::Proto(ProtoError::Eof)) => "Proto Eof".into(),
        Err(ClientError::Proto(ProtoError::Io(e))) => format!("Proto Io {:?}", e.kind()),
        Err(ClientError::Proto(ProtoError::Malformed(m))) => format!("Proto Malformed {m}"),
        Err(e) => format!("{e:?}"),
    }
}

#[test]
fn call_outcomes() {
    let mut cut = frames(&[
        Reply::Stdout(b"*filter\n".to_vec()),
        Reply::Stdout(vec![b'x'; 100]),
    ]);
    cut.truncate(cut.len() - 10);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "op results then exit",
            frames(&[Reply::OpResults(vec![res(0, ""), res(1, "Bad rule")]), Reply::Exit(1)]),
            "Ok (1, [OpResult { code: 0, message: \"\" }, OpResult { code: 1, message: \"Bad rule\" }])",
        ),
        (
            "error frame",
            frames(&[Reply::Error {
                code: 4,
                message: "server busy".into(),
            }]),
            "Refused 4 server busy",
        ),
        ("closed before answering", vec![], "Proto Eof"),
        (
            "closed between frames",
            frames(&[Reply::Stdout(b"*filter\n".to_vec())]),
            "Proto Eof",
        ),
        ("closed inside a frame", cut, "Proto Io UnexpectedEof"),
        ("garbage", vec![0, 0, 0, 2, 1, 0x01], "Proto Malformed unknown reply type 0x01"),
        (
            "two op results",
            frames(&[Reply::OpResults(vec![]), Reply::OpResults(vec![]), Reply::Exit(0)]),
            "Proto Malformed two OpResults frames in one reply",
        ),
    ];
    for (name, answer, want) in cases {
        let req = iptables(&["-S"]);
        let (mut c, h) = fake(req.clone(), answer);
        let got = outcome(c.call(&req, &mut |_| {}));
        h.join().unwrap();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn typed_calls() {
    let one = |op: Op| Request::Ops {
        family: Fam::V6,
        ops: vec![op],
    };
    const RULE: [&str; 4] = ["-s", "::1", "-j", "ACCEPT"];
    let append = one(Op::append("filter", "INPUT", &RULE));
    let bad = "iptables: No chain/target/match by that name.";
    type Case = (
        &'static str,
        Request,
        Vec<Reply>,
        Box<dyn FnOnce(&mut Client) -> String>,
    );
    let cases: Vec<(Case, &str)> = vec![
        (
            (
                "append ok",
                append.clone(),
                vec![Reply::OpResults(vec![res(0, "")]), Reply::Exit(0)],
                Box::new(|c: &mut Client| outcome(c.append(Fam::V6, "filter", "INPUT", &RULE))),
            ),
            "Ok ()",
        ),
        (
            (
                "append refused with the iptables text",
                append.clone(),
                vec![Reply::OpResults(vec![res(1, bad)]), Reply::Exit(1)],
                Box::new(|c: &mut Client| outcome(c.append(Fam::V6, "filter", "INPUT", &RULE))),
            ),
            "Refused 1 iptables: No chain/target/match by that name.",
        ),
        (
            (
                "apply without results",
                append.clone(),
                vec![
                    Reply::Stderr(b"nfkeeper: writer stopped\n".to_vec()),
                    Reply::Exit(1),
                ],
                Box::new(|c: &mut Client| {
                    outcome(c.apply(Fam::V6, &[Op::append("filter", "INPUT", &RULE)]))
                }),
            ),
            "Refused 1 nfkeeper: writer stopped",
        ),
        (
            (
                "apply with too few results",
                Request::Ops {
                    family: Fam::V4,
                    ops: vec![Op::flush("filter", ""), Op::delete_chain("filter", "")],
                },
                vec![Reply::OpResults(vec![res(0, "")]), Reply::Exit(0)],
                Box::new(|c: &mut Client| {
                    outcome(c.apply(
                        Fam::V4,
                        &[Op::flush("filter", ""), Op::delete_chain("filter", "")],
                    ))
                }),
            ),
            "Proto Malformed 1 results for 2 operations",
        ),
        (
            (
                "status",
                Request::Status,
                vec![
                    Reply::Stdout(b"serving net:[4026531840]\n".to_vec()),
                    Reply::Exit(0),
                ],
                Box::new(|c: &mut Client| outcome(c.status())),
            ),
            "Ok \"serving net:[4026531840]\\n\"",
        ),
    ];
    for ((name, want_req, answer, call), want) in cases {
        let (mut c, h) = fake(want_req, frames(&answer));
        let got = call(&mut c);
        h.join().unwrap();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn refused_before_the_request_is_read() {
    // The daemon refuses a peer and closes without reading: the client's
    // write may fail, and the Error frame still explains why.
    let (c, mut s) = UnixStream::pair().unwrap();
    s.write_all(&frames(&[Reply::Error {
        code: 1,
        message: "permission denied: uid 65534 is not root".into(),
    }]))
    .unwrap();
    drop(s);
    let mut c = Client::from_stream(c);
    let big = Request::Restore {
        family: Fam::V4,
        prog: "iptables-restore".into(),
        noflush: false,
        counters: false,
        test: false,
        table: None,
        payload: vec![b'#'; 1 << 20],
    };
    let got = outcome(c.call(&big, &mut |_| {}));
    assert_eq!(got, "Refused 1 permission denied: uid 65534 is not root");
}

#[test]
fn connect_failure_and_display() {
    let dir = std::env::temp_dir().join(format!("nfk-proto-test-{}", std::process::id()));
    let e = Client::connect(&dir.join("none.sock"))
        .err()
        .expect("nobody listens");
    assert!(matches!(e, ClientError::Connect(_)), "{e:?}");
    let cases: Vec<(ClientError, &str)> = vec![
        (
            ClientError::Proto(ProtoError::Eof),
            "nfkeeper: the daemon closed the connection before answering; the change may or may not have been applied",
        ),
        (
            ClientError::Proto(ProtoError::Io(std::io::ErrorKind::WouldBlock.into())),
            "nfkeeper: the daemon did not answer in time; the change may or may not have been applied",
        ),
        (
            ClientError::Refused {
                code: 4,
                message: "server busy".into(),
            },
            "nfkeeper: server busy",
        ),
    ];
    for (e, want) in cases {
        assert_eq!(e.to_string(), want);
    }
}

#[test]
fn default_path_follows_the_namespace() {
    // Run in a child process so that the environment variable of one case
    // does not leak into tests running in parallel threads.
    if std::env::var_os("NFK_PROTO_CHILD").is_some() {
        println!("PATH={}", proto::client::default_path().display());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let run = |sock: Option<&str>| {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args([
            "--exact",
            "default_path_follows_the_namespace",
            "--nocapture",
        ])
        .env("NFK_PROTO_CHILD", "1")
        .env_remove("NFKEEPER_SOCKET");
        if let Some(s) = sock {
            cmd.env("NFKEEPER_SOCKET", s);
        }
        let o = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix("PATH=").map(str::to_string))
            .unwrap_or_else(|| panic!("child printed no path: {text}"))
    };
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata("/proc/self/ns/net").unwrap().ino();
    assert_eq!(run(None), format!("/run/nfkeeper/net-{ino}.sock"));
    assert_eq!(run(Some("/tmp/x.sock")), "/tmp/x.sock");
}
