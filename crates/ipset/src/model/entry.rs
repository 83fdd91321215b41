//! Set members: the typed key a member is found by, and the values it
//! carries (timeout, counters, comment, skb info, flags).
//!
//! Keys hold typed values (addresses with prefix lengths, protocol and port,
//! mark, MAC, interface), never text, so a backend can build nftables set
//! keys from them directly.

use crate::addr::Net;

/// Protocol number and port; for ICMP/ICMPv6 the port is `type << 8 | code`;
/// for protocols without ports it is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtoPort {
    pub proto: u8,
    pub port: u16,
}

/// An interface name, optionally a bridge port (`physdev:`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Iface {
    pub name: String,
    pub physdev: bool,
}

/// What identifies a member. Which fields are present depends on the set
/// type: e.g. hash:ip,port has `ip` and `port`, hash:net,iface has `ip`
/// (a network) and `iface`, bitmap:port has `port` (protocol 0), list:set
/// has `set`.
///
/// For hash:ip and bitmap:ip with a netmask, `ip.prefix` is the netmask: the
/// member stands for that block. Field order is listing order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub ip: Option<Net>,
    pub port: Option<ProtoPort>,
    pub ip2: Option<Net>,
    pub mark: Option<u32>,
    pub mac: Option<[u8; 6]>,
    pub iface: Option<Iface>,
    /// list:set: the member set's name.
    pub set: Option<String>,
}

/// When a member expires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expiry {
    /// The set has no timeout support.
    #[default]
    None,
    /// Timeout support, but this member never expires (`timeout 0`).
    Permanent,
    /// Expires after this time (milliseconds of the store's clock).
    At(u64),
    /// bitmap:ip,mac member without a MAC yet: the timeout (seconds) is kept
    /// and starts when the MAC is filled in.
    Pending(u32),
}

impl Expiry {
    /// Whether the member is gone at `now` (it is, strictly after its time).
    pub fn expired(&self, now: u64) -> bool {
        matches!(*self, Expiry::At(t) if now > t)
    }

    /// `timeout N` of a listing: remaining whole seconds (at least 1 while
    /// alive), 0 for permanent, the stored value for a pending one.
    pub fn shown(&self, now: u64) -> Option<u32> {
        match *self {
            Expiry::None => None,
            Expiry::Permanent => Some(0),
            Expiry::Pending(s) => Some(s),
            Expiry::At(t) => {
                let left = t.saturating_sub(now) / 1000;
                Some(left.clamp(1, u64::from(u32::MAX)) as u32)
            }
        }
    }

    /// The expiry for a timeout of `secs` seconds set at `now` (0 means
    /// permanent).
    pub fn after(secs: u32, now: u64) -> Expiry {
        if secs == 0 {
            Expiry::Permanent
        } else {
            Expiry::At(now + u64::from(secs) * 1000)
        }
    }
}

/// The values a member carries besides its key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ext {
    pub expiry: Expiry,
    /// Packet and byte counters (sets with `counters`).
    pub packets: u64,
    pub bytes: u64,
    pub comment: Option<String>,
    /// `mark << 32 | mask` (sets with `skbinfo`); 0 when unset.
    pub skbmark: u64,
    pub skbprio: u32,
    pub skbqueue: u16,
    /// Net types: a `nomatch` entry (matches as a hole).
    pub nomatch: bool,
    /// hash:net,iface: the interface name is a prefix.
    pub wildcard: bool,
    /// bitmap:ip,mac: the MAC, once known.
    pub mac: Option<[u8; 6]>,
}

/// A member as handed to a backend: key, values, and the timeout in seconds
/// (`None` for sets without timeout support, `Some(0)` for permanent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: Key,
    pub timeout: Option<u32>,
    /// `(packets, bytes)` for sets with counters.
    pub counters: Option<(u64, u64)>,
    pub comment: Option<String>,
    pub skbmark: Option<(u32, u32)>,
    pub skbprio: Option<u32>,
    pub skbqueue: Option<u16>,
    pub nomatch: bool,
    pub wildcard: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_rules() {
        let e = Expiry::after(4, 1000);
        assert_eq!(e, Expiry::At(5000));
        assert!(!e.expired(5000));
        assert!(e.expired(5001));
        assert_eq!(e.shown(1000), Some(4));
        assert_eq!(e.shown(4900), Some(1));
        assert_eq!(Expiry::after(0, 7), Expiry::Permanent);
        assert_eq!(Expiry::Permanent.shown(9), Some(0));
        assert_eq!(Expiry::Pending(3).shown(99_999), Some(3));
        assert!(!Expiry::Pending(3).expired(u64::MAX));
    }
}
