//! Printers: save/`-S` form (`save.rs`) and the `-L` table (`list.rs`).

pub mod ctime;
pub mod list;
pub mod save;

pub use save::{save_rule, CounterStyle};
