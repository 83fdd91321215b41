//! Target extensions (`-j NAME`), one module each.

pub mod audit;
pub mod checksum;
pub mod classify;
pub mod connmark;
pub mod connsecmark;
pub mod ct;
pub mod dnat;
pub mod dscp;
pub mod ecn;
pub mod log;
pub mod mark;
pub mod masquerade;
pub mod nflog;
pub mod notrack;
pub mod redirect;
pub mod reject;
pub mod snat;
pub mod tcpmss;
pub mod tos;
pub mod trace;
pub mod ttl;
pub mod xtypes;
