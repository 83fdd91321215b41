//! Lowering of target extensions, one module each (same names as
//! `iptables::ext::targets`).

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
