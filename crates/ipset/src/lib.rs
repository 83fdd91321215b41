//! ipset for nfkeeper: the syntax and semantics of ipset 7.21 without I/O or
//! a kernel, so that `nfkeeper ipset` can keep ipset's sets as native
//! nftables sets.
//!
//! - `types`: set types, families and keywords (data).
//! - `value`, `parse`: values, command lines and restore input as ipset
//!   reads them.
//! - `model`: the sets in memory with ipset's (and the kernel's) semantics.
//! - `exec`: commands over the model with ipset's messages and exit codes;
//!   every change is also handed to a [`exec::Mirror`] (a kernel backend).
//! - `print`: listings (plain, terse, names, save, xml, json, sorted).
//!
//! Not modelled: name resolution (host names are refused, `-resolve` prints
//! numbers), hash resizing (the hash size stays as created), kernel-side
//! packet matching.

pub mod addr;
pub mod data;
pub mod error;
pub mod exec;
pub mod model;
pub mod num;
pub mod parse;
pub mod print;
pub mod types;
pub mod value;

pub use error::{Error, Kind, Result};
