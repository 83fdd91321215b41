//! Printing: listings in every format (`list`), and the element and value
//! texts ipset uses in listings and messages (`text`).

pub mod list;
pub mod sort;
pub mod text;

pub use list::{listing, ListOpts};
