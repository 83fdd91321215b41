//! Lowering of match extensions, one module each (same names as
//! `iptables::ext::matches`).

pub mod addrtype;
pub mod ah;
pub mod comment;
pub mod connmark;
pub mod conntrack;
pub mod dscp;
pub mod esp;
pub mod frag;
pub mod hl;
pub mod icmp;
pub mod icmp6;
pub mod iprange;
pub mod length;
pub mod limit;
pub mod mac;
pub mod mark;
pub mod multiport;
pub mod nfacct;
pub mod owner;
pub mod physdev;
pub mod pkttype;
pub mod recent;
pub mod rpfilter;
pub mod sctp;
pub mod set;
pub mod set_key;
pub mod state;
pub mod statistic;
pub mod tcp;
pub mod tos;
pub mod ttl;
pub mod udp;
