//! Printers: save/`-S` form (`save.rs`) and the `-L` table (`list.rs`).

pub mod save;

pub use save::{save_rule, CounterStyle};
