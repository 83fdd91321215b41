//! Planning: each command is applied to the model with iptables' semantics
//! and messages (`iptables::exec`), and what it changed is mirrored into
//! the batch being built as the smallest set of kernel messages — a rule
//! append/insert/replace/delete by handle (or by batch-local id for rules
//! created earlier in the same batch), a chain flush/add/delete/rename, a
//! policy update, a run element. No chain is re-read or re-written to
//! change one rule. Pure: no I/O; what the kernel holds comes in as a
//! [`KernelView`], the messages go out in a [`Pending`].
//!
//! Three lifetimes, three types: [`KernelView`] (what the kernel holds;
//! long-lived in the daemon), [`Pending`] (one batch), [`PlanOpts`] (how
//! the engine writes). A [`Planner`] borrows one of each for one family.
//!
//! One function per command lives in `commands`; kernel messages for rules,
//! chains and tables in `emit`; compiled runs in `runs`; tables a restore
//! replaces, written whole at the end, in `fresh`; chains kept as
//! registry entries until a rule needs them in `registry`.

mod commands;
mod diff;
mod emit;
mod fresh;
mod names;
mod pending;
mod registry;
pub mod replay;
mod rewrite;
pub(crate) mod runs;
mod view;

pub use emit::kernel_resets_set_elems;
pub use pending::{Created, Mark, Pending};
pub use view::{ChainTexts, KernelView, Loc, RunLoc};

use compile::runs::RunOpts;
use iptables::exec::{execute_owned, Apply, Known};
use iptables::parse::{Command, Parsed};
use iptables::{Error, Rule};
use ruleset::{Family, Table, TableKind};

/// How an engine writes; fixed for its lifetime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanOpts {
    /// Ask the kernel to echo created rules, chains and runs so their
    /// handles are learnt at commit (a long-lived model needs them; direct
    /// mode throws its model away).
    pub echo: bool,
    /// Compile runs of similar rules into sets and verdict maps (see
    /// [`runs`]); `None`: every logical rule is its own kernel rule.
    pub compile: Option<RunOpts>,
    /// The model holds whole tables (the daemon): appends find the chain's
    /// end in it instead of reading the kernel.
    pub whole_model: bool,
    /// Appends are plain rules, never run elements (the replay after a run
    /// refused a key).
    pub plain_appends: bool,
}

/// Plans commands of one family into a batch.
pub struct Planner<'a> {
    pub(crate) family: Family,
    pub(crate) view: &'a mut KernelView,
    pub(crate) p: &'a mut Pending,
    pub(crate) opts: PlanOpts,
    /// nfkeeper's ipsets, for rules that name them (see
    /// [`crate::ipset::rules`]); `None`: such rules have no native form.
    pub(crate) ipsets: Option<&'a mut crate::ipset::Sets>,
}

impl<'a> Planner<'a> {
    pub fn new(
        family: Family,
        view: &'a mut KernelView,
        p: &'a mut Pending,
        opts: PlanOpts,
    ) -> Planner<'a> {
        Planner {
            family,
            view,
            p,
            opts,
            ipsets: None,
        }
    }

    /// Plan with nfkeeper's ipsets (read for the writes, see
    /// [`crate::ipset::rules::prepare`]).
    pub fn with_ipsets(mut self, sets: &'a mut crate::ipset::Sets) -> Planner<'a> {
        self.ipsets = Some(sets);
        self
    }

    pub(crate) fn fam(&self) -> nft::Family {
        compile::layout::nft_family(self.family)
    }

    /// Apply one command to the model table `t` (of table `kind`) and
    /// mirror it into the batch. Listing output (-L/-S with -Z) goes to
    /// `out`. On error the model is unchanged by this command only if the
    /// caller took a savepoint (see [`crate::txn`]); the batch may hold
    /// part of it (the caller cuts it back with [`Pending::truncate`]).
    pub fn run(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        out: &mut String,
    ) -> Result<(), Error> {
        let writes = !matches!(
            p.command,
            Command::Check(_)
                | Command::List { zero: false, .. }
                | Command::ListRules { zero: false, .. }
                | Command::Help
                | Command::Version
        );
        if !writes {
            return iptables::exec::execute(t, &p, out);
        }
        if self.p.is_fresh(self.family, kind) {
            return self.fresh_command(kind, t, p, out);
        }
        self.ensure_table(kind);
        self.repair_censuses(kind);
        match p.command.clone() {
            Command::Append(chain) => self.append(kind, t, p, &chain, out),
            Command::Insert(chain, n) => self.insert(kind, t, p, &chain, n, out),
            Command::Replace(chain, n) => self.replace(kind, t, p, &chain, n, out),
            Command::Delete(chain) => self.delete(kind, t, p, &chain, out),
            Command::DeleteNum(chain, n) => self.delete_num(kind, t, p, &chain, n, out),
            Command::Flush(chain) => self.flush(kind, t, p, chain, out),
            Command::Zero { chain, num } => {
                let chains = chains_of(t, chain.as_deref());
                execute_owned(t, p, out)?;
                self.zero(kind, t, &chains, num)
            }
            Command::NewChain(c) => self.new_chain(kind, t, p, c, out),
            Command::DeleteChain(c) => self.delete_chain(kind, t, p, c, out),
            Command::Rename(old, new) => self.rename(kind, t, p, &old, &new, out),
            Command::Policy(chain, ..) => self.policy(kind, t, p, &chain, out),
            Command::List { chain, num, .. } | Command::ListRules { chain, num, .. } => {
                // -L/-S with -Z: list, then zero.
                let chains = chains_of(t, chain.as_deref());
                execute_owned(t, p, out)?;
                self.zero(kind, t, &chains, num)
            }
            Command::Check(_) | Command::Help | Command::Version => Ok(()),
        }
    }
}

/// The chain named, or every chain of `t`.
pub(crate) fn chains_of(t: &Table<Rule>, chain: Option<&str>) -> Vec<String> {
    match chain {
        Some(c) => vec![c.to_string()],
        None => t.chains().iter().map(|c| c.name.to_string()).collect(),
    }
}

impl Apply for Planner<'_> {
    fn fresh_table(&mut self, kind: TableKind, line: usize) -> Result<(), Error> {
        self.p.set_tag(line as nft::Tag);
        self.start_fresh(kind);
        Ok(())
    }

    fn apply(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        p: Parsed,
        line: usize,
    ) -> Result<(), Error> {
        self.p.set_tag(line as nft::Tag);
        self.restore_command(kind, t, p)
    }

    fn known_rule(
        &mut self,
        kind: TableKind,
        t: &mut Table<Rule>,
        chain: &str,
        text: &str,
        counters: Option<ruleset::Counters>,
        line: usize,
    ) -> Known {
        self.known_line(kind, t, chain, text, counters, line)
    }
}
