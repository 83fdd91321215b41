//! Helpers shared by the `--noflush` rewrite tests (`rewrite.rs`,
//! `rewrite_lazy.rs`, `rewrite_in_place.rs`, `rename_in_batch.rs`, …): a
//! restore through a session, the kernel's filter table checked against
//! what its rules compile to, the comparable lines of a save, and the
//! daemon's model source and writes for groups (`Warm`, `write`), the run
//! sets' sizes. Each test crate includes this module and uses part of it.

use compile::runs::RunOpts;
use iptables::exec::RestoreOpts;
use iptables::parse::{parse, ParseOpts};
use keeper::read::{read_scoped, Scope};
use keeper::txn::{Source, Work, Write};
use keeper::verify::verify_table;
use keeper::{Error, Session, Settings, State};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};

/// `input` restored through `s` as iptables-restore with these options;
/// the error as iptables-restore words it.
#[allow(dead_code)]
pub fn restore(s: &mut Session, input: &str, noflush: bool, counters: bool) -> Result<(), String> {
    let mut o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    o.noflush = noflush;
    o.counters = counters;
    s.restore(input, &o)
        .map(|_| ())
        .map_err(|e| e.render("iptables-restore"))
}

/// `verify` finds nothing to say about the filter table.
pub fn assert_clean(sock: &mut Socket, what: &str) {
    let rep = verify_table(sock, Family::Ipv4, TableKind::Filter)
        .expect("verify")
        .expect("table");
    assert!(
        rep.diffs.is_empty() && rep.notes.is_empty(),
        "{what}: {:#?} {:#?}",
        rep.diffs,
        rep.notes
    );
}

/// The chain declarations (names only) and rule lines of a save: what two
/// tables must agree on, counters and policies aside.
#[allow(dead_code)]
pub fn lines(save: &str) -> Vec<String> {
    save.lines()
        .filter(|l| l.starts_with(':') || l.starts_with("-A "))
        .map(|l| match l.strip_prefix(':') {
            Some(c) => format!(":{}", c.split(' ').next().unwrap_or("")),
            None => l.to_string(),
        })
        .collect()
}

/// Each case with runs off, and with runs of two or more rules compiled.
#[allow(dead_code)]
pub fn compiles() -> [Option<RunOpts>; 2] {
    [
        None,
        Some(RunOpts {
            min_len: 2,
            numgen: false,
        }),
    ]
}

/// The daemon's model source, without its event follower: every table
/// read once, then kept by the commits' echoes (as the daemon's is while
/// no one else writes); a table the engine invalidates read again before
/// the next attempt, everything after a conflict.
#[allow(dead_code)]
#[derive(Default)]
pub struct Warm {
    stale: Vec<(Family, TableKind)>,
}

impl Source for Warm {
    fn prepare(
        &mut self,
        sock: &mut Socket,
        st: &mut State,
        _writes: &[&Write],
        attempt: u32,
    ) -> Result<u32, Error> {
        let genid = sock.gen().map_err(Error::from_nft)?.id;
        let all = st.genid == 0 || attempt > 0;
        let stale: Vec<(Family, TableKind)> = match all {
            true => Family::ALL
                .into_iter()
                .flat_map(|f| TableKind::ALL.map(|k| (f, k)))
                .collect(),
            false => std::mem::take(&mut self.stale),
        };
        for (f, k) in stale {
            let snap = read_scoped(sock, f, k, &Scope::Table).map_err(Error::from_nft)?;
            st.install(f, k, snap);
        }
        st.genid = genid;
        Ok(genid)
    }

    fn invalidate(&mut self, f: Family, k: TableKind) {
        self.stale.push((f, k));
    }

    fn backoff(&mut self, attempt: u32) -> bool {
        attempt < 4
    }
}

/// One write of iptables commands (all or none), each given as its words.
#[allow(dead_code)]
pub fn write(cmds: &[&str]) -> Write {
    let o = ParseOpts::command(Family::Ipv4, "iptables");
    let parsed = cmds
        .iter()
        .map(|c| parse(&c.split(' ').collect::<Vec<_>>(), o).expect("parse"))
        .collect();
    Write {
        family: Family::Ipv4,
        prog: "iptables".into(),
        work: Work::Cmds(parsed),
    }
}

/// What the model makes of the `--noflush` restore `input` after the
/// restore `setup`: the filter table's lines (see [`lines`]).
#[allow(dead_code)]
pub fn model_lines(setup: &str, input: &str) -> Vec<String> {
    let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
    let mut o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
    iptables::exec::restore(&mut rs, setup, &o).expect("setup");
    o.noflush = true;
    iptables::exec::restore(&mut rs, input, &o).expect("model");
    let mut out = String::new();
    iptables::exec::save_table(rs.table(Family::Ipv4, TableKind::Filter), false, &mut out);
    lines(&out)
}

/// The kernel's filter table as a new session reads it.
#[allow(dead_code)]
pub fn kernel_lines(open: &dyn Fn() -> Socket, settings: Settings) -> Vec<String> {
    let mut s = Session::with_socket(open(), Family::Ipv4, settings);
    lines(&s.save_text(false, Some(TableKind::Filter)).expect("save"))
}

/// Element counts of the run sets of our IPv4 filter table, smallest
/// first.
#[allow(dead_code)]
pub fn run_sizes(sock: &mut Socket) -> Vec<usize> {
    let mut sizes: Vec<usize> = sock
        .sets(nft::Family::Ipv4, Some("nfkeeper_filter"))
        .expect("sets")
        .into_iter()
        .filter(|s| s.name.starts_with(compile::runs::SET_PREFIX))
        .map(|s| {
            sock.set_elems(nft::Family::Ipv4, "nfkeeper_filter", &s.name)
                .expect("elements")
                .len()
        })
        .collect();
    sizes.sort_unstable();
    sizes
}

/// A test body given how to open a socket and whether runs compile.
#[allow(dead_code)]
pub type Body = fn(&dyn Fn() -> Socket, Option<RunOpts>);

/// `body` with each of [`compiles`], each on a fresh fake kernel.
#[allow(dead_code)]
pub fn on_fake_kernels(body: Body) {
    for compile in compiles() {
        let k = fakekernel::Kernel::new();
        body(&|| k.socket(), compile);
    }
}

/// `body` with each of [`compiles`] on the real kernel, in a fresh
/// network namespace (skipped, saying so, without root).
#[allow(dead_code)]
pub fn on_the_kernel(body: Body) {
    testkit::in_netns(move || {
        for compile in compiles() {
            body(&|| Socket::open().expect("socket"), compile);
        }
    });
}
