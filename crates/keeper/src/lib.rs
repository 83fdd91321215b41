//! The engine shared by direct mode (and, later, the daemon): it reads
//! nfkeeper's tables back from the kernel into the logical model
//! ([`read`]), mirrors every command into one nftables transaction
//! ([`plan`]), and runs whole iptables, iptables-save and iptables-restore
//! invocations against the kernel ([`session`]).
//!
//! The kernel is the source of truth: every rule carries its id and canonical
//! text in its userdata, so nothing is kept between processes. Objects in our
//! tables that nfkeeper did not write are reported, never rewritten.

pub mod plan;
pub mod read;
pub mod runs;
pub mod save;
pub mod scope;
pub mod session;
pub mod verify;

pub use session::Session;
