//! The in-memory model: sets with ipset's semantics, no I/O, no kernel.
//!
//! `store` holds the sets of a namespace (create/destroy/rename/swap,
//! references, list:set), `set` one set's member operations, `expand` the
//! per-type element handling that turns a parsed element into members,
//! `header` what create fixes, `entry` the members themselves.
//!
//! Time is the caller's: operations take `now` in milliseconds of any
//! monotonic clock, and member timeouts are stored as expiry times on it.

pub mod entry;
pub mod expand;
pub mod header;
mod members;
pub mod set;
pub mod store;

pub use entry::{Entry, Expiry, Ext, Iface, Key, ProtoPort};
pub use expand::Adt;
pub use header::{Header, Params};
pub use members::MapMembers;
pub use set::{Changes, Members, Set};
pub use store::{Savepoint, Slot, Store};
