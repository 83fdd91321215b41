//! One client connection: read requests (bounded in size and time), run
//! them through the same iptables front-end as direct mode
//! (`iptables::tool`) over the daemon's backend — reads from the warm
//! model under a shared lock, writes through the writer — and stream the
//! answers back.

use crate::frame::{Budget, FrameError, FrameReader};
use crate::listen::{peer, refuse};
use crate::writer::{exit_code, Write};
use crate::Shared;
use iptables::exec::{RestoreError, RestoreOpts, RestoreStats};
use iptables::parse::{parse, Command, ParseOpts, Parsed};
use iptables::tool::{self, completed_line, generated_line, Backend};
use keeper::txn::{Done, Restore, Work};
use proto::{Fam, Reply, Request};
use ruleset::{Family, TableKind};
use std::io::{self, Read, Write as _};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Request bytes held by all connections together: beyond this a request
/// is refused ("server busy") instead of growing memory.
static BUDGET: Budget = Budget::new(1 << 30);

/// Output is sent in frames of at most this many bytes.
const CHUNK: usize = 1 << 20;

/// Send one protocol-level error, then read (and drop) what the peer
/// still sends, for up to `linger`, so that a client that writes its whole
/// request before reading gets the error instead of a broken pipe.
pub fn refuse_and_close(mut s: UnixStream, code: i32, message: &str, linger: Duration) {
    let _ = proto::write_reply(
        &mut s,
        &Reply::Error {
            code,
            message: message.to_string(),
        },
    );
    let _ = s.shutdown(std::net::Shutdown::Write);
    let deadline = Instant::now() + linger;
    let mut sink = [0u8; 16 << 10];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match s.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn family(f: Fam) -> Family {
    match f {
        Fam::V4 => Family::Ipv4,
        Fam::V6 => Family::Ipv6,
    }
}

pub fn serve_client(sh: &Shared, mut s: UnixStream) {
    let _ = s.set_write_timeout(Some(sh.cfg.idle_timeout));
    let linger = sh.cfg.idle_timeout.min(Duration::from_secs(2));
    let who = match peer(&s) {
        Ok(p) => {
            if let Some(why) = refuse(sh, &p) {
                sh.metrics.refused_peers.inc();
                crate::log::line(&format!("event=refused {} why={why:?}", p.describe()));
                return refuse_and_close(s, 1, &why, linger);
            }
            p.describe()
        }
        Err(e) => return refuse_and_close(s, 1, &format!("peer credentials: {e}"), linger),
    };
    let mut frames = FrameReader::default();
    loop {
        let t = sh.cfg.idle_timeout;
        let body = match frames.read(&mut s, sh.cfg.max_request, t, t, &BUDGET) {
            Ok(b) => b,
            // Clean close, idle timeout, or a client gone: nothing to answer.
            Err(FrameError::Closed) => return,
            Err(e) => {
                sh.metrics.bad_requests.inc();
                frames.release(&BUDGET);
                let (code, msg) = match e {
                    FrameError::TooLarge(n) => (4, format!(
                        "request of {n} bytes exceeds the limit of {} bytes (nfkeeper serve --max-request)",
                        sh.cfg.max_request
                    )),
                    FrameError::Busy => (4, "server busy: too much request data in flight; retry".into()),
                    _ => (2, "incomplete request (timed out or closed mid-frame)".into()),
                };
                return refuse_and_close(s, code, &msg, linger);
            }
        };
        let req = proto::decode_request(body);
        frames.release(&BUDGET);
        frames.shrink();
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
                return refuse_and_close(s, 2, &msg, linger);
            }
        };
        if !sh.begin_request() {
            let msg = crate::stop::STOPPING_MESSAGE;
            return refuse_and_close(s, proto::STOPPING, msg, linger);
        }
        let r = handle(sh, &mut s, &who, req);
        sh.end_request();
        if r.is_err() {
            return;
        }
    }
}

/// An io::Write that sends what it gets as Stdout frames of up to CHUNK.
struct FrameWriter<'a> {
    s: &'a mut UnixStream,
    buf: Vec<u8>,
    failed: Option<io::Error>,
}

impl<'a> FrameWriter<'a> {
    fn new(s: &'a mut UnixStream) -> Self {
        FrameWriter {
            s,
            buf: Vec::new(),
            failed: None,
        }
    }

    fn flush_frame(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            proto::write_stdout(self.s, &self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Send what is buffered, then `err` as Stderr frames and the exit code,
    /// in one write: a client waiting for the end of its reply is woken
    /// once, not once per frame.
    fn end(mut self, err: &[u8], code: i32) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            proto::encode_reply(&Reply::Stdout(std::mem::take(&mut self.buf)), &mut out);
        }
        for chunk in err.chunks(CHUNK) {
            proto::encode_reply(&Reply::Stderr(chunk.to_vec()), &mut out);
        }
        proto::encode_reply(&Reply::Exit(code), &mut out);
        self.s.write_all(&out)
    }
}

impl io::Write for FrameWriter<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        // A large write goes out as its own frame, uncopied (a saved table
        // of a million rules is one write of its kept text).
        let r = if b.len() >= CHUNK {
            self.flush_frame()
                .and_then(|()| proto::write_stdout(self.s, b))
        } else {
            self.buf.extend_from_slice(b);
            if self.buf.len() >= CHUNK {
                self.flush_frame()
            } else {
                Ok(())
            }
        };
        if let Err(e) = r {
            let kind = e.kind();
            self.failed = Some(e);
            return Err(io::Error::from(kind));
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The lock of snapshot writing: one snapshot written at a time (a slot's
/// temporary file is named by process), none while the daemon stops.
pub(crate) fn snapshot_writing() -> std::sync::MutexGuard<'static, ()> {
    static WRITING: Mutex<()> = Mutex::new(());
    WRITING.lock().unwrap_or_else(|e| e.into_inner())
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
    rx.recv().unwrap_or_else(|_| {
        Done::Sync(Err(keeper::Error::Netlink(
            "the daemon's writer stopped".into(),
        )))
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

/// Listings whose output needs the kernel's live counters.
fn needs_counters(p: &Parsed) -> bool {
    match p.command {
        Command::List { zero, .. } | Command::ListRules { zero, .. } => zero || p.flags.verbose,
        _ => false,
    }
}

/// The daemon as the iptables programs' backend.
struct Front<'a> {
    sh: &'a Shared,
    who: &'a str,
    family: Family,
    prog: &'a str,
    warnings: Vec<String>,
}

impl Front<'_> {
    /// The save text of table `kind` (no counters) of the model `st`: kept
    /// per table with the generation it was printed at, since the model
    /// of a table changes only with the generation (a commit of ours or a
    /// re-read after someone else's). O(rules) on the first save at a
    /// generation, a copy after.
    fn table_text(&self, st: &keeper::State, kind: TableKind) -> Arc<String> {
        let key = (self.family, kind);
        let kept = self
            .sh
            .save_texts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        if let Some((g, text)) = kept {
            if g == st.genid {
                return text;
            }
        }
        // Direct mode's snapshot at the model's generation is this text
        // (the generation covers every change): reading a file costs a
        // fraction of printing every rule (a first `-S` of 50k rules and
        // 100k chains after the daemon starts: 35 ms printed).
        // Printed here, it becomes that snapshot: the next daemon (or a
        // `--direct` read) at this generation reads it instead.
        let slot = self.sh.snap_cookie.map(|cookie| {
            keeper::snapshot::Slot::new(
                std::path::Path::new(keeper::settings::SNAPSHOT_DIR),
                cookie,
                self.family,
                kind,
            )
        });
        let (text, printed) = match slot.as_ref().and_then(|s| s.load(st.genid)) {
            Some((_, text)) => (Arc::new(text), false),
            None => {
                let mut table = String::new();
                iptables::exec::save_table(st.model.table(self.family, kind), false, &mut table);
                (Arc::new(table), true)
            }
        };
        // Written off the reply's path (a file of ~50 MB at 1M rules), one
        // writer at a time: a slot's temporary file is named by process.
        if let (true, Some(slot)) = (printed, slot) {
            let (text, genid) = (text.clone(), st.genid);
            let foreign = st.foreign.get(&key).cloned().unwrap_or_default();
            let _ = std::thread::Builder::new()
                .name("snapshot".into())
                .spawn(move || {
                    let _one = snapshot_writing();
                    if let Some(mut w) = slot.writer(genid) {
                        w.feed(text.as_bytes());
                        w.finish(true, &foreign);
                    }
                });
        }
        self.sh
            .save_texts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (st.genid, text.clone()));
        text
    }

    /// Live counters are the kernel's: a direct session reads them.
    fn direct(&mut self) -> Result<keeper::Session, iptables::Error> {
        keeper::Session::open(self.family, self.sh.cfg.settings).map_err(|e| e.to_iptables())
    }

    fn foreign(&mut self, kind: TableKind) {
        let st = self.sh.read_lock();
        self.warnings.extend(st.foreign_warnings(self.family, kind));
    }
}

impl Backend for Front<'_> {
    fn command(&mut self, p: Parsed) -> Result<String, iptables::Error> {
        let kind = p.table;
        if needs_counters(&p) {
            let mut k = self.direct()?;
            let r = k.iptables(p).map_err(|e| e.to_iptables());
            self.warnings.append(&mut k.warnings);
            return r;
        }
        fresh(self.sh, self.who, self.family, self.prog);
        if let Command::ListRules {
            chain: None,
            num: None,
            ..
        } = &p.command
        {
            // The whole table: from its kept save text, as direct mode
            // answers from its snapshot. One chain or one rule: the model
            // prints just those (O(chain), O(1)), not a scan of the table.
            let st = self.sh.read_lock();
            let text = self.table_text(&st, kind);
            if let Some(o) = keeper::snapshot::spec_text(&text, None, None) {
                drop(st);
                self.foreign(kind);
                return Ok(o);
            }
        }
        let mut out = String::new();
        let queried = {
            let st = self.sh.read_lock();
            iptables::exec::query(st.model.table(self.family, kind), &p, &mut out)
        };
        let r = match queried {
            Some(r) => r.map(|()| out),
            None => {
                let what = describe(&p);
                let work = Work::Cmds(vec![p]);
                match submit(self.sh, self.who, self.family, self.prog, what, work) {
                    Done::Cmds(r) => r.map_err(|e| e.to_iptables()),
                    d => Err(iptables::Error::other(format!("unexpected answer {d:?}"))),
                }
            }
        };
        self.foreign(kind);
        r
    }

    fn save(
        &mut self,
        counters: bool,
        only: Option<TableKind>,
        prog: &str,
        out: &mut dyn io::Write,
    ) -> Result<(), iptables::Error> {
        if counters {
            let mut k = self.direct()?;
            let r = k
                .save_to(true, only, Some(prog), out)
                .map_err(|e| e.to_iptables());
            self.warnings.append(&mut k.warnings);
            return r;
        }
        fresh(self.sh, self.who, self.family, prog);
        // Policy counters change with every packet and no event: the
        // model's are stale, so a save takes the kernel's (as direct mode).
        let mut live = self.direct()?;
        let st = self.sh.read_lock();
        for kind in crate::warm::KINDS {
            if only.is_some_and(|o| o != kind) || (only.is_none() && !st.exists(self.family, kind))
            {
                continue;
            }
            let counters = live.policy_counters(kind).map_err(|e| e.to_iptables())?;
            let table = self.table_text(&st, kind);
            let written = out
                .write_all(generated_line(prog).as_bytes())
                .and_then(|()| keeper::snapshot::write_save_text(&table, &counters, out))
                .and_then(|()| out.write_all(completed_line().as_bytes()));
            written.map_err(|e| iptables::Error::other(format!("writing the output: {e}")))?;
            self.warnings.extend(st.foreign_warnings(self.family, kind));
        }
        Ok(())
    }

    fn restore(
        &mut self,
        input: &str,
        o: &RestoreOpts,
        _wait: Option<Option<u32>>,
    ) -> Result<RestoreStats, RestoreError> {
        let job = Restore {
            input: input.to_string(),
            noflush: o.noflush,
            counters: o.counters,
            test: o.test,
            table: o.table,
        };
        let what = format!(
            "restore {} bytes{}",
            input.len(),
            if o.noflush { " --noflush" } else { "" }
        );
        match submit(
            self.sh,
            self.who,
            self.family,
            o.prog,
            what,
            Work::Restore(job),
        ) {
            Done::Restore(r) => r.map_err(|f| f.to_restore_error()),
            d => Err(RestoreError {
                line: 0,
                err: iptables::Error::other(format!("unexpected answer {d:?}")),
            }),
        }
    }

    fn warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Asked of the daemon's own kernel (the namespace it manages, whose
    /// /proc it sees too; or the fake kernel it was started with).
    fn others(&mut self, family: Family) -> iptables::tool::Others {
        keeper::others::others(&mut self.sh.kernel_socket(), family)
    }
}

/// A command in one line, for the log.
fn describe(p: &Parsed) -> String {
    format!("{:?} {}", p.command, p.table.name())
}

fn handle(sh: &Shared, s: &mut UnixStream, who: &str, req: Request) -> io::Result<()> {
    match req {
        Request::Iptables {
            family: f,
            prog,
            args,
        } => {
            let mut b = Front {
                sh,
                who,
                family: family(f),
                prog: &prog,
                warnings: Vec::new(),
            };
            let mut out = FrameWriter::new(s);
            let mut err = Vec::new();
            let words = tool::words(&args);
            let code = tool::iptables(family(f), &prog, &words, &mut b, &mut out, &mut err);
            out.end(&err, code)
        }
        Request::Save {
            family: f,
            prog,
            counters,
            table,
        } => {
            let mut err = Vec::new();
            let only = match table.as_deref().map(TableKind::from_name) {
                Some(None) => {
                    let name = table.unwrap_or_default();
                    let msg = format!("Table `{name}' does not exist\n");
                    return FrameWriter::new(s).end(msg.as_bytes(), 1);
                }
                Some(k) => k,
                None => None,
            };
            let a = tool::SaveArgs {
                counters,
                table: only,
                file: None,
            };
            let mut b = Front {
                sh,
                who,
                family: family(f),
                prog: &prog,
                warnings: Vec::new(),
            };
            let mut out = FrameWriter::new(s);
            let code = tool::save(&prog, family(f), &a, &mut b, &mut out, &mut err);
            out.end(&err, code)
        }
        Request::Restore {
            family: f,
            prog,
            noflush,
            counters,
            test,
            table,
            payload,
        } => {
            let a = tool::RestoreArgs {
                counters,
                noflush,
                test,
                table,
                ..Default::default()
            };
            let input = iptables::bytes::decode(&payload);
            let mut b = Front {
                sh,
                who,
                family: family(f),
                prog: &prog,
                warnings: Vec::new(),
            };
            let mut err = Vec::new();
            let code = tool::restore(family(f), &prog, &a, &input, &mut b, &mut err);
            FrameWriter::new(s).end(&err, code)
        }
        Request::Status => FrameWriter::new(s).end_with_stdout(&sh.status()),
        Request::Ops { family: f, ops } => typed_ops(sh, s, who, family(f), &ops),
        Request::Ipset { args, input } => {
            let what = args.join(" ");
            let job = keeper::ipset::Job {
                args,
                input: input.map(|b| String::from_utf8_lossy(&b).into_owned()),
            };
            // Every ipset command goes through the writer, reads too: the
            // sets are not kept warm (see `warm::Warm::prepare`), so a
            // listing reads the kernel like a write does, in turn with
            // them.
            let o = match submit(sh, who, Family::Ipv4, "ipset", what, Work::Ipset(job)) {
                Done::Ipset(o) => o,
                other => keeper::ipset::txn::failure(
                    &match other {
                        Done::Sync(Err(e)) => e,
                        _ => keeper::Error::Busy,
                    },
                    false,
                ),
            };
            let mut out = FrameWriter::new(s);
            let _ = out.write_all(o.stdout.as_bytes());
            out.end(o.stderr.as_bytes(), o.code)
        }
    }
}

impl FrameWriter<'_> {
    fn end_with_stdout(mut self, text: &str) -> io::Result<()> {
        let _ = self.write_all(text.as_bytes());
        self.end(&[], 0)
    }
}

/// Typed operations: all applied as one unit, each with its own result.
fn typed_ops(
    sh: &Shared,
    s: &mut UnixStream,
    who: &str,
    fam: Family,
    ops: &[proto::Op],
) -> io::Result<()> {
    let mut cmds = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let args = op.to_args();
        let words = tool::words(&args);
        match parse(&words, ParseOpts::command(fam, "nfkeeper")) {
            Ok(p) => cmds.push(p),
            Err(e) => {
                let failed = proto::OpResult {
                    code: e.exit_code(),
                    message: e.render("nfkeeper", None).trim_end().to_string(),
                };
                let res = not_applied_but(ops.len(), i, failed);
                return end_ops(s, res, e.exit_code());
            }
        }
    }
    let n = cmds.len();
    let what = format!("{n} typed op(s)");
    let d = submit(sh, who, fam, "nfkeeper", what, Work::Cmds(cmds));
    let code = exit_code(&d);
    let (stdout, message, at) = match d {
        Done::Cmds(Ok(out)) => (out, String::new(), None),
        Done::Cmds(Err(e)) => {
            let at = match e {
                keeper::Error::CommandAt { index, .. } if index < n => Some(index),
                _ => None,
            };
            let text = e.to_iptables().render("nfkeeper", None);
            (String::new(), text.trim_end().to_string(), at)
        }
        other => (String::new(), format!("unexpected answer {other:?}"), None),
    };
    // The operation that failed carries the error, the others "not
    // applied" (as for a parse error); a failure no single operation is
    // known to have caused is every operation's.
    let res = match at {
        Some(i) => not_applied_but(n, i, proto::OpResult { code, message }),
        None => vec![proto::OpResult { code, message }; n],
    };
    let mut out = FrameWriter::new(s);
    let _ = out.write_all(stdout.as_bytes());
    out.flush_frame()?;
    end_ops(out.s, res, code)
}

/// The end of a typed operations reply, OpResults and Exit, in one write
/// (the client is woken once).
fn end_ops(s: &mut UnixStream, res: Vec<proto::OpResult>, code: i32) -> io::Result<()> {
    let mut out = Vec::new();
    proto::encode_reply(&Reply::OpResults(res), &mut out);
    proto::encode_reply(&Reply::Exit(code), &mut out);
    s.write_all(&out)
}

/// Results of a failed transaction of `n` operations where operation `i`
/// failed with `failed`: the others are "not applied" (code 0).
fn not_applied_but(n: usize, i: usize, failed: proto::OpResult) -> Vec<proto::OpResult> {
    let mut res = vec![
        proto::OpResult {
            code: 0,
            message: "not applied".into()
        };
        n
    ];
    res[i] = failed;
    res
}
