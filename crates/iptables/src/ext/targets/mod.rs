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
pub mod hmark;
pub mod idletimer;
pub mod led;
pub mod log;
pub mod mark;
pub mod masquerade;
pub mod netmap;
pub mod nflog;
pub mod nfqueue;
pub mod notrack;
pub mod npt;
pub mod rateest;
pub mod redirect;
pub mod reject;
#[cfg(test)]
mod roundtrip_tests;
pub mod secmark;
pub mod set;
pub mod snat;
pub mod synproxy;
pub mod tcpmss;
pub mod tcpoptstrip;
pub mod tee;
pub mod tos;
pub mod tproxy;
pub mod trace;
pub mod ttl;
pub mod xtypes;
