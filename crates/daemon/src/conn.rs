//! One client connection: read requests (bounded in size and time), serve
//! reads from the warm model under a shared lock, hand writes to the
//! writer and wait for their commit, stream the answers back.

use crate::listen::{peer, refuse};
use crate::writer::{Done, Work, Write};
use crate::Shared;
use iptables::parse::{parse, Command, ParseOpts, Parsed};
use proto::{Fam, Reply, Request};
use ruleset::{Family, TableKind};
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// Request bytes buffered by all connections together: beyond this a new
/// request is refused ("server busy") instead of growing memory.
const MAX_IN_FLIGHT: usize = 1 << 30;
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Output is sent in frames of at most this many bytes.
const CHUNK: usize = 1 << 20;

/// Send one protocol-level error and close.
pub fn refuse_and_close(mut s: UnixStream, code: i32, message: &str) {
    let _ = proto::write_reply(
        &mut s,
        &Reply::Error {
            code,
            message: message.to_string(),
        },
    );
}

fn family(f: Fam) -> Family {
    match f {
        Fam::V4 => Family::Ipv4,
        Fam::V6 => Family::Ipv6,
    }
}

/// Releases a reservation of request bytes.
struct Reserved(usize);

impl Drop for Reserved {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.0, Ordering::SeqCst);
    }
}

pub fn serve_client(sh: &Shared, mut s: UnixStream) {
    let _ = s.set_read_timeout(Some(sh.cfg.idle_timeout));
    let _ = s.set_write_timeout(Some(sh.cfg.idle_timeout));
    let who = match peer(&s) {
        Ok(p) => {
            if let Some(why) = refuse(sh, &p) {
                sh.metrics.refused_peers.inc();
                crate::log::line(&format!("event=refused {} why={why:?}", p.describe()));
                return refuse_and_close(s, 1, &why);
            }
            p.describe()
        }
        Err(e) => return refuse_and_close(s, 1, &format!("peer credentials: {e}")),
    };
    let mut body = Vec::new();
    loop {
        let mut len = [0u8; 4];
        match s.read_exact(&mut len) {
            Ok(()) => {}
            // Clean close, idle timeout, or a client gone: nothing to answer.
            Err(_) => return,
        }
        let n = u32::from_be_bytes(len) as usize;
        if n > sh.cfg.max_request {
            sh.metrics.bad_requests.inc();
            return refuse_and_close(
                s,
                4,
                &format!(
                    "request of {n} bytes exceeds the limit of {} bytes (nfkeeper serve --max-request)",
                    sh.cfg.max_request
                ),
            );
        }
        if IN_FLIGHT.fetch_add(n, Ordering::SeqCst) + n > MAX_IN_FLIGHT {
            IN_FLIGHT.fetch_sub(n, Ordering::SeqCst);
            return refuse_and_close(s, 4, "server busy: too much request data in flight; retry");
        }
        let reserved = Reserved(n);
        body.clear();
        body.resize(n, 0);
        if s.read_exact(&mut body).is_err() {
            // A client that stalls mid-request loses its connection at the
            // idle timeout; nobody else waits for it.
            sh.metrics.bad_requests.inc();
            return refuse_and_close(s, 2, "incomplete request (timed out or closed mid-frame)");
        }
        let req = proto::decode_request(&body);
        drop(reserved);
        let req = match req {
            Ok(r) => r,
            Err(e) => {
                sh.metrics.bad_requests.inc();
                let msg = match e {
                    proto::ProtoError::BadVersion(v) => format!(
                        "unsupported protocol version {v}; this daemon speaks version {}",
                        proto::VERSION
                    ),
                    other => format!("bad request: {other}"),
                };
                return refuse_and_close(s, 2, &msg);
            }
        };
        if handle(sh, &mut s, &who, req).is_err() {
            return;
        }
    }
}

/// Streams `text` as Stdout or Stderr frames.
fn send_text(s: &mut UnixStream, text: &str, err: bool) -> io::Result<()> {
    for chunk in text.as_bytes().chunks(CHUNK) {
        let r = if err {
            Reply::Stderr(chunk.to_vec())
        } else {
            Reply::Stdout(chunk.to_vec())
        };
        proto::write_reply(s, &r)?;
    }
    Ok(())
}

fn reply(s: &mut UnixStream, out: &str, err: &str, code: i32) -> io::Result<()> {
    send_text(s, out, false)?;
    send_text(s, err, true)?;
    proto::write_reply(s, &Reply::Exit(code))
}

/// Queue a write and wait for the writer's answer.
fn submit(sh: &Shared, who: &str, fam: Family, prog: &str, what: String, work: Work) -> Done {
    let (tx, rx) = mpsc::channel();
    let w = Write {
        family: fam,
        prog: prog.to_string(),
        work,
        who: who.to_string(),
        what,
        reply: tx,
        queued: Instant::now(),
    };
    if let Some(w) = crate::writer::try_inline(sh, w) {
        sh.queue.push(w);
    }
    rx.recv().unwrap_or_else(|_| Done {
        stderr: format!("{prog}: the daemon's writer stopped\n"),
        code: 1,
        ..Done::default()
    })
}

/// Before a read from the model: take in the change events queued so far,
/// then bring tables changed by someone else up to date (through the
/// writer, which owns the kernel socket).
fn fresh(sh: &Shared, who: &str, fam: Family, prog: &str) {
    sh.coherence.drain(&sh.metrics);
    if sh.coherence.has_stale() {
        submit(sh, who, fam, prog, String::new(), Work::Sync);
    }
}

/// Warnings about objects in `kind` that nfkeeper did not write.
fn foreign_warnings(sh: &Shared, fam: Family, kind: TableKind) -> String {
    let w = sh.read_lock();
    let mut out = String::new();
    for f in w.fam(fam).foreign.get(&kind).into_iter().flatten() {
        out.push_str(&format!(
            "Warning: table {}: {f} was not written by nfkeeper; left as is\n",
            compile::layout::table_name(kind)
        ));
    }
    out
}

/// Listings whose output needs the kernel's live counters.
fn needs_counters(p: &Parsed) -> bool {
    match p.command {
        Command::List { zero, .. } | Command::ListRules { zero, .. } => zero || p.flags.verbose,
        _ => false,
    }
}

fn handle(sh: &Shared, s: &mut UnixStream, who: &str, req: Request) -> io::Result<()> {
    match req {
        Request::Iptables {
            family: f,
            prog,
            args,
        } => iptables(sh, s, who, family(f), &prog, &args),
        Request::Save {
            family: f,
            prog,
            counters,
            table,
        } => save(sh, s, who, family(f), &prog, counters, table.as_deref()),
        Request::Restore {
            family: f,
            prog,
            noflush,
            counters,
            test,
            table,
            payload,
        } => {
            let table = match table.as_deref().map(TableKind::from_name) {
                Some(None) => {
                    return reply(
                        s,
                        "",
                        &format!("Try `{prog} -h' for more information.\n"),
                        1,
                    )
                }
                Some(k) => k,
                None => None,
            };
            let input = String::from_utf8_lossy(&payload).into_owned();
            let what = format!(
                "restore {} bytes{}",
                payload.len(),
                if noflush { " --noflush" } else { "" }
            );
            let d = submit(
                sh,
                who,
                family(f),
                &prog,
                what,
                Work::Restore {
                    input,
                    noflush,
                    counters,
                    test,
                    table,
                },
            );
            reply(s, &d.stdout, &d.stderr, d.code)
        }
        Request::Status => reply(s, &sh.status(), "", 0),
        Request::Ops { family: f, ops } => {
            let fam = family(f);
            let mut cmds = Vec::with_capacity(ops.len());
            for (i, op) in ops.iter().enumerate() {
                let args = op.to_args();
                let words: Vec<&str> = args.iter().map(String::as_str).collect();
                let po = ParseOpts::command(fam, "nfkeeper");
                match parse(&words, po) {
                    Ok(p) => cmds.push(p),
                    Err(e) => {
                        let mut res = vec![
                            proto::OpResult {
                                code: 0,
                                message: "not applied".into()
                            };
                            ops.len()
                        ];
                        res[i] = proto::OpResult {
                            code: e.exit_code(),
                            message: e.render("nfkeeper", None).trim_end().to_string(),
                        };
                        proto::write_reply(s, &Reply::OpResults(res))?;
                        return proto::write_reply(s, &Reply::Exit(e.exit_code()));
                    }
                }
            }
            let what = format!("{} typed op(s)", cmds.len());
            let d = submit(sh, who, fam, "nfkeeper", what, Work::Cmds(cmds));
            let res = d
                .results
                .into_iter()
                .map(|(code, message)| proto::OpResult { code, message })
                .collect();
            send_text(s, &d.stdout, false)?;
            proto::write_reply(s, &Reply::OpResults(res))?;
            proto::write_reply(s, &Reply::Exit(d.code))
        }
    }
}

fn iptables(
    sh: &Shared,
    s: &mut UnixStream,
    who: &str,
    fam: Family,
    prog: &str,
    args: &[String],
) -> io::Result<()> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let po = ParseOpts {
        family: fam,
        restore: false,
        table: None,
        prog,
    };
    let p = match parse(&words, po) {
        Ok(p) => p,
        Err(e) => return reply(s, "", &e.render(prog, None), e.exit_code()),
    };
    let mut err: String = p.warnings.iter().map(|w| format!("{w}\n")).collect();
    match p.command {
        Command::Help => return reply(s, &iptables::parse::help::help_text(prog, fam), &err, 0),
        Command::Version => return reply(s, &format!("{prog} v{}\n", iptables::VERSION), &err, 0),
        _ => {}
    }
    let kind = p.table;
    if needs_counters(&p) {
        // Live counters are the kernel's: read them as direct mode does.
        let r = keeper::Session::open(fam).and_then(|mut k| {
            let r = k.iptables(p);
            for w in std::mem::take(&mut k.warnings) {
                err.push_str(&w);
                err.push('\n');
            }
            r
        });
        return match r {
            Ok(out) => reply(s, &out, &err, 0),
            Err(e) => reply(s, "", &(e.render(prog, None) + &err), e.exit_code()),
        };
    }
    let mut out = String::new();
    fresh(sh, who, fam, prog);
    let queried = {
        let w = sh.read_lock();
        let fs = w.fam(fam);
        let empty;
        let t = match fs.tables.get(&kind) {
            Some(t) => t,
            None => {
                empty = ruleset::Table::new(fam, kind);
                &empty
            }
        };
        iptables::exec::query(t, &p, &mut out)
    };
    let (out, mut e2, code) = match queried {
        Some(Ok(())) => (out, String::new(), 0),
        Some(Err(e)) => (String::new(), e.render(prog, None), e.exit_code()),
        None => {
            let what = args.join(" ");
            let d = submit(sh, who, fam, prog, what, Work::Cmds(vec![p]));
            (d.stdout, d.stderr, d.code)
        }
    };
    e2.push_str(&err);
    e2.push_str(&foreign_warnings(sh, fam, kind));
    reply(s, &out, &e2, code)
}

fn save(
    sh: &Shared,
    s: &mut UnixStream,
    who: &str,
    fam: Family,
    prog: &str,
    counters: bool,
    table: Option<&str>,
) -> io::Result<()> {
    let only = match table.map(TableKind::from_name) {
        Some(None) => {
            return reply(
                s,
                "",
                &format!("{prog}: table name required or invalid\n"),
                1,
            )
        }
        Some(k) => k,
        None => None,
    };
    if counters {
        // Counters are live kernel state: stream them as direct mode does.
        let mut k = match keeper::Session::open(fam) {
            Ok(k) => k,
            Err(e) => return reply(s, "", &e.render(prog, None), e.exit_code()),
        };
        let header = || {
            format!(
                "# Generated by {prog} v{} on {}\n",
                iptables::VERSION,
                iptables::print::ctime::ctime_now()
            )
        };
        let footer = || format!("# Completed on {}\n", iptables::print::ctime::ctime_now());
        let mut w = FrameWriter {
            s,
            buf: Vec::with_capacity(CHUNK),
        };
        let r = k.save_to(true, only, header, footer, &mut w);
        w.flush_frame()?;
        let warnings: String = k.warnings.iter().map(|w| format!("{w}\n")).collect();
        return match r {
            Ok(()) => reply(s, "", &warnings, 0),
            Err(e) => reply(s, "", &(e.render(prog, None) + &warnings), e.exit_code()),
        };
    }
    fresh(sh, who, fam, prog);
    let mut out = String::new();
    let mut warnings = String::new();
    {
        let w = sh.read_lock();
        let fs = w.fam(fam);
        for kind in crate::warm::KINDS {
            if only.is_some_and(|o| o != kind) || !fs.exists(kind) {
                continue;
            }
            let Some(t) = fs.tables.get(&kind) else {
                continue;
            };
            out.push_str(&format!(
                "# Generated by {prog} v{} on {}\n",
                iptables::VERSION,
                iptables::print::ctime::ctime_now()
            ));
            iptables::exec::save_table(t, false, &mut out);
            out.push_str(&format!(
                "# Completed on {}\n",
                iptables::print::ctime::ctime_now()
            ));
            for f in fs.foreign.get(&kind).into_iter().flatten() {
                warnings.push_str(&format!(
                    "Warning: table {}: {f} was not written by nfkeeper; left as is\n",
                    compile::layout::table_name(kind)
                ));
            }
        }
    }
    reply(s, &out, &warnings, 0)
}

/// An io::Write that sends what it gets as Stdout frames of up to CHUNK.
struct FrameWriter<'a> {
    s: &'a mut UnixStream,
    buf: Vec<u8>,
}

impl FrameWriter<'_> {
    fn flush_frame(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            proto::write_reply(self.s, &Reply::Stdout(std::mem::take(&mut self.buf)))?;
        }
        Ok(())
    }
}

impl io::Write for FrameWriter<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.flush_frame()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
