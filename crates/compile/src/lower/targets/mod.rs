//! Lowering of target extensions, one module each (same names as
//! `iptables::ext::targets`).

pub mod checksum;
pub mod connmark;
pub mod connsecmark;
pub mod ct;
pub mod dnat;
pub mod dscp;
pub mod ecn;
pub mod log;
pub mod mark;
pub mod masquerade;
pub mod netmap;
pub mod nflog;
pub mod notrack;
pub mod npt;
pub mod redirect;
pub mod reject;
pub(crate) mod rewrite;
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
