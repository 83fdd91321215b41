//! ipset commands over the model, with ipset's output, messages and exit
//! codes (0 success, 1 "not in set" and other failures, 2 command-line
//! problems).
//!
//! Every command is atomic: it changes the model completely or not at all
//! (ipset can leave a failed range add half done; here nothing changes).
//! A restore is atomic as a whole. Changes are handed to a [`Mirror`].

mod mirror;

pub use mirror::{entry, Mirror, Named, NoMirror, Recorder};

use crate::error::{Error, Result, PROGRAM, PROTOCOL, VERSION};
use crate::model::{Adt, Changes, Store};
use crate::parse::{self, restore, Command, Env, OutputMode, Parsed};
use crate::print::{self, ListOpts};

/// What a command printed and its exit status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// Where a command runs: the sets, the backend hook, and the current time
/// (milliseconds of the caller's monotonic clock).
pub struct Ctx<'a> {
    pub store: &'a mut Store,
    pub mirror: &'a mut dyn Mirror,
    pub now: u64,
}

fn fail(out: &mut Output, env: &Env, e: &Error, line: Option<usize>) {
    if !env.quiet {
        out.stderr.push_str(&e.render(line));
    }
    out.code = e.exit_code();
}

/// Run one ipset command line (without the program name). `input` is the
/// restore input when the command is `restore` (the caller reads stdin or
/// the `-file`; see [`parse_line`] to learn the command first).
pub fn run(ctx: &mut Ctx, args: &[&str], input: Option<&str>) -> Output {
    let mut out = Output::default();
    let parsed = match parse::parse(args, None, Env::default(), ctx.store) {
        Ok(p) => p,
        Err(e) => {
            let quiet = args
                .iter()
                .any(|a| matches!(*a, "-q" | "-quiet" | "--q" | "--quiet"));
            let env = Env {
                quiet,
                ..Env::default()
            };
            fail(&mut out, &env, &e, None);
            return out;
        }
    };
    execute(ctx, &parsed, input, &mut out);
    out
}

/// Parse a command line against the current sets (to learn, e.g., whether
/// it is a restore and which `-file` it names).
pub fn parse_line(store: &Store, args: &[&str]) -> Result<Parsed> {
    parse::parse(args, None, Env::default(), store)
}

/// Execute a parsed command, appending to `out`.
pub fn execute(ctx: &mut Ctx, p: &Parsed, input: Option<&str>, out: &mut Output) {
    if let Command::Restore = p.cmd {
        restore_input(ctx, input.unwrap_or(""), p.env.clone(), out);
        return;
    }
    let sp = ctx.store.begin();
    match command(ctx, p, out) {
        Ok(()) => {
            ctx.store.commit(sp);
            if !p.env.quiet {
                for w in &p.warnings {
                    out.stderr.push_str(&format!("Warning: {w}\n"));
                }
            }
        }
        Err(e) => {
            ctx.store.rollback(sp);
            fail(out, &p.env, &e, None);
        }
    }
}

/// Apply restore input as a whole: all lines or nothing. Errors carry
/// their input line; the first error stops the restore.
pub fn restore_input(ctx: &mut Ctx, input: &str, env: Env, out: &mut Output) {
    let sp = ctx.store.begin();
    let mut env = env;
    for (n, line) in restore::lines(input) {
        let restore::Line::Command(text) = line else {
            continue;
        };
        let r = restore::words(text).and_then(|w| {
            let words: Vec<&str> = w.iter().map(|x| x.as_ref()).collect();
            parse::parse(&words, Some(n), env.clone(), ctx.store)
        });
        let p = match r {
            Ok(p) => p,
            Err(e) => {
                ctx.store.rollback(sp);
                fail(out, &env, &e, Some(n));
                return;
            }
        };
        env = p.env.clone();
        ctx.mirror.at_line(n);
        if let Err(e) = command(ctx, &p, out) {
            ctx.store.rollback(sp);
            fail(out, &env, &e, Some(n));
            return;
        }
        if !env.quiet {
            for w in &p.warnings {
                out.stderr.push_str(&format!("Warning: {w}\n"));
            }
        }
    }
    ctx.store.commit(sp);
}

fn mirror_changes(ctx: &mut Ctx, name: &str, ch: &Changes) -> Result<()> {
    let Some(set) = ctx.store.get(name) else {
        return Ok(());
    };
    let conv = |v: &[(crate::model::Key, crate::model::Ext)]| {
        v.iter()
            .map(|(k, e)| entry(set, k, e, ctx.now))
            .collect::<Vec<_>>()
    };
    let (removed, added, updated) = (conv(&ch.removed), conv(&ch.added), conv(&ch.updated));
    let h = set.header.clone();
    if !removed.is_empty() {
        ctx.mirror.del(name, &h, &removed)?;
    }
    if !added.is_empty() {
        ctx.mirror.add(name, &h, &added)?;
    }
    if !updated.is_empty() {
        ctx.mirror.update(name, &h, &updated)?;
    }
    Ok(())
}

/// A set that exists, as a mirror sees it.
fn named<'a>(store: &'a Store, name: &'a str) -> Named<'a> {
    Named {
        name,
        slot: store.slot_index(name).expect("set exists"),
        set: store.get(name).expect("set exists"),
    }
}

/// One command (not restore).
fn command(ctx: &mut Ctx, p: &Parsed, out: &mut Output) -> Result<()> {
    let env = &p.env;
    let now = ctx.now;
    match &p.cmd {
        Command::Create { name, ty, data } => {
            if ctx.store.create(name, *ty, data, env.exist)? {
                let h = ctx.store.get(name).expect("just created").header.clone();
                let slot = ctx.store.slot_index(name).expect("just created");
                ctx.mirror.create(name, &h, slot)?;
            }
        }
        Command::Destroy(name) => {
            for n in ctx.store.destroy(name.as_deref(), env.exist, now)? {
                ctx.mirror.destroy(&n)?;
            }
        }
        Command::Flush(name) => {
            for n in ctx.store.flush(name.as_deref())? {
                ctx.mirror.flush(&n)?;
            }
        }
        Command::Rename { from, to } => {
            ctx.store.rename(from, to, now)?;
            ctx.mirror.rename(from, named(ctx.store, to))?;
        }
        Command::Swap { from, to } => {
            ctx.store.swap(from, to)?;
            ctx.mirror
                .swap(named(ctx.store, from), named(ctx.store, to))?;
        }
        Command::Add { name, data } | Command::Del { name, data } => {
            let adt = if matches!(p.cmd, Command::Add { .. }) {
                Adt::Add
            } else {
                Adt::Del
            };
            let ch = ctx.store.adt(name, data, adt, env.exist, now)?;
            mirror_changes(ctx, name, &ch)?;
        }
        Command::Test { name, data } => {
            let ty = ctx.store.get(name).map(|s| s.header.ty);
            let hit = ctx.store.test(name, data, now)?;
            let elem = ty
                .map(|t| print::text::data_text(t, data))
                .unwrap_or_default();
            if hit {
                if !env.quiet {
                    out.stderr
                        .push_str(&format!("Warning: {elem} is in set {name}.\n"));
                }
            } else {
                return Err(Error {
                    kind: crate::error::Kind::Notice,
                    msg: format!("{elem} is NOT in set {name}."),
                });
            }
        }
        Command::List(name) | Command::Save(name) => {
            ctx.store.purge(now);
            let default = if matches!(p.cmd, Command::List(_)) {
                OutputMode::Plain
            } else {
                OutputMode::Save
            };
            let o = ListOpts {
                mode: env.output.unwrap_or(default),
                terse: env.terse,
                names_only: env.names_only,
                sorted: env.sorted,
            };
            out.stdout
                .push_str(&print::listing(ctx.store, name.as_deref(), &o, now)?);
        }
        Command::Version => {
            out.stdout.push_str(&format!(
                "{PROGRAM} v{VERSION}, protocol version: {PROTOCOL}\n"
            ));
        }
        Command::Help(arg) => {
            out.stdout.push_str(&parse::general_help());
            if !env.quiet {
                match arg {
                    Some(t) => out.stdout.push_str(&parse::type_help(t)?),
                    None => out.stdout.push_str(&parse::types_help()),
                }
            }
        }
        Command::Quit | Command::Interactive | Command::Restore => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests;
