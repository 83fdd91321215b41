//! Target extensions (`-j NAME`), one module each.

pub mod checksum;
pub mod connmark;
pub mod ct;
pub mod dnat;
pub mod log;
pub mod mark;
pub mod masquerade;
pub mod nflog;
pub mod notrack;
pub mod redirect;
pub mod reject;
pub mod snat;
pub mod tcpmss;
pub mod trace;
