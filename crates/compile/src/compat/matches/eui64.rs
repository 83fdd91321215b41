//! `-m eui64` through nft_compat.

use super::compat;
use crate::compat::info::Info;
use crate::compat::CompatInfo;

/// eui64 (rev 0): an unused int.
pub fn info() -> CompatInfo {
    compat("eui64", 0, Info::new(4))
}
