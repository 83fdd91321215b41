//! Set types and option keywords: what each type is called, which families
//! it supports, how its elements are laid out, and which keywords each
//! command accepts. Data only; the parsers and the model read it.

mod catalog;
pub mod kw;
mod table;

pub use catalog::TYPES;
pub use kw::{Keyword, Opt, PrintKind, ValueKind};
pub use table::{feature, CmdSpec, ElemDim, ElemParse, SetType, TypeFamily, TypeInfo};
