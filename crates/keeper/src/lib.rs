//! The engine shared by direct mode and the daemon: it reads nfkeeper's
//! tables back from the kernel into the logical model ([`read`]), plans
//! every command as the smallest set of kernel messages ([`plan`]), and
//! commits groups of writes as one transaction each ([`txn`]) — with
//! savepoints, the generation id, replays around refused writes and
//! conflicts — over a model that is either read for each invocation
//! ([`direct`]) or kept warm by the daemon.
//!
//! The kernel is the source of truth: every rule carries its id and canonical
//! text in its userdata, so nothing is kept between processes. Objects in our
//! tables that nfkeeper did not write are reported, never rewritten.

pub mod direct;
pub mod error;
pub mod ipset;
pub mod others;
pub mod plan;
pub mod read;
pub mod save;
pub mod scope;
pub mod settings;
pub mod snapshot;
pub mod state;
pub mod txn;
pub mod verify;

pub use direct::Session;
pub use error::{Error, Failure, Refusal};
pub use settings::Settings;
pub use state::State;
