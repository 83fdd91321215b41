//! ipset on native nftables sets: `nfkeeper ipset` commands against the
//! kernel, one nftables transaction each (a restore: one for all of it).
//!
//! Where sets live: every ipset is an nftables set of the same name in the
//! table `inet nfkeeper_ipset` (its *home*, written by every command, never
//! looked up by rules; its userdata holds the type and every create option,
//! see [`meta`]). A rule table whose rules use the set (`-m set`, `-j SET`)
//! gets a *copy* of the same name — nftables lookups only reach sets of
//! their own table — created in the transaction of the first such rule
//! with all current members; from then on every command writes home and
//! copies in one transaction, and `ipset destroy` removes them all (the
//! kernel refuses while a rule is bound to a copy, which is ipset's "in
//! use" rule). Counters: a copy counts the packets of its table's rules,
//! the home holds the values given with `add`; a member's counters are
//! their sum.
//!
//! How a command runs: [`read`] brings the sets it needs from the kernel
//! into an [`ipset::model::Store`] (only the probed members for add, del
//! and test of a few elements: O(1) kernel requests however large the
//! set), `ipset::exec` runs it there with ipset's semantics and messages,
//! and [`mirror`] turns every change into nftables messages; [`txn`]
//! commits them with the generation id the reads saw, replaying after a
//! concurrent change.

pub mod elems;
pub mod kept;
pub mod meta;
pub mod mirror;
pub mod read;
pub mod refs;
pub mod rules;
pub mod txn;

use compile::ipset::SetSpec;
use ipset::model::{Key, Store};
use ruleset::{Family, TableKind};
use std::collections::HashMap;

/// The table holding every set's home.
pub const TABLE: &str = "nfkeeper_ipset";
/// Its family: one table for sets of both families.
pub const FAMILY: nft::Family = nft::Family::Inet;

/// One ipset invocation: the command line (without the program name) and,
/// for `restore`, its input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Job {
    pub args: Vec<String>,
    pub input: Option<String>,
}

/// Where one set is in the kernel, beyond its home.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// Rule tables holding a copy, with the header the copy was made for
    /// (its nftables form).
    pub copies: Vec<(Family, TableKind, SetSpec)>,
    /// Whether every member was read (else only those probed).
    pub full: bool,
    /// Members' counters as the copies hold them (summed over copies);
    /// `Store` has the total.
    pub copy_counters: HashMap<Key, (u64, u64)>,
}

/// The engine's picture of the ipsets: the model of the sets read (all of
/// them in the daemon, what the invocation needs in direct mode) and
/// where each is in the kernel.
pub struct Sets {
    pub store: Store,
    pub places: HashMap<String, Place>,
    /// Whether the home table exists.
    pub table: bool,
    /// Whether `store` holds every set (their headers at least).
    pub all: bool,
    /// Whether the sets the rules being written name were read (see
    /// [`rules::prepare`]); if not, the lowering knows no ipsets.
    pub for_rules: bool,
    /// Sets of the kernel's own ipset module that rules name, by their
    /// kernel index (see [`rules::prepare`]).
    pub kernel: HashMap<String, u16>,
    /// The generation this picture describes when a long-lived process
    /// keeps it for later reads (see [`kept`]): set by whoever read it,
    /// after a group that committed nothing, when every set is static.
    pub kept_at: Option<u32>,
}

impl Default for Sets {
    fn default() -> Self {
        Sets {
            store: Store::with_seed(seed()),
            places: HashMap::new(),
            table: false,
            all: false,
            for_rules: false,
            kernel: HashMap::new(),
            kept_at: None,
        }
    }
}

/// A per-process seed for the initvals of new sets (the kernel draws them
/// at random).
fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// Milliseconds on the clock ipset's model runs on: monotonic, from an
/// arbitrary origin of this process.
pub fn now() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let o = *ORIGIN.get_or_init(Instant::now);
    1_000_000 + o.elapsed().as_millis() as u64
}
