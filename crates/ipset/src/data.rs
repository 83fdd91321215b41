//! The parsed values of one command (ipset's "data blob"): every item a
//! create or add/del/test may carry, plus which items were given.
//!
//! Which items were given matters beyond their values: ipset refuses an item
//! given twice, checks mandatory and allowed items per type and command, and
//! flag-like items (counters, nomatch, ...) are recorded as one combined
//! "flags" item, so repeating them is not an error.

use crate::addr::Family;
use crate::types::Opt;
use std::net::IpAddr;

/// Values of one command. `None`/`false` means "not given".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Data {
    /// Bits of the items given (see [`Opt::bit`]); flag items set no bit.
    pub flags: u64,
    /// Items whose repetition is tolerated (the family a type defaulted).
    pub ignored: u64,
    pub family: Option<Family>,
    pub ip: Option<IpAddr>,
    pub ip_to: Option<IpAddr>,
    pub cidr: Option<u8>,
    pub ip2: Option<IpAddr>,
    pub ip2_to: Option<IpAddr>,
    pub cidr2: Option<u8>,
    pub port: Option<u16>,
    pub port_to: Option<u16>,
    pub proto: Option<u8>,
    pub mark: Option<u32>,
    pub ether: Option<[u8; 6]>,
    pub iface: Option<String>,
    pub physdev: bool,
    pub name: Option<String>,
    pub nameref: Option<String>,
    pub before: bool,
    pub timeout: Option<u32>,
    pub hashsize: Option<u32>,
    pub maxelem: Option<u32>,
    pub markmask: Option<u32>,
    pub netmask: Option<u8>,
    pub bitmask: Option<IpAddr>,
    pub size: Option<u32>,
    pub bucketsize: Option<u8>,
    pub initval: Option<u32>,
    pub counters: bool,
    pub create_comment: bool,
    pub forceadd: bool,
    pub skbinfo: bool,
    pub nomatch: bool,
    pub wildcard: bool,
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
    pub comment: Option<String>,
    pub skbmark: Option<u64>,
    pub skbprio: Option<u32>,
    pub skbqueue: Option<u16>,
}

impl Data {
    pub fn has(&self, o: Opt) -> bool {
        self.flags & o.bit() != 0
    }

    /// Record that `o` was given. Flag items are folded into the combined
    /// flags item, as ipset does, and set no bit of their own.
    pub fn mark(&mut self, o: Opt) {
        match o {
            Opt::Counters
            | Opt::CreateComment
            | Opt::Forceadd
            | Opt::Skbinfo
            | Opt::Before
            | Opt::Physdev
            | Opt::Nomatch
            | Opt::IfaceWildcard => {}
            _ => self.flags |= o.bit(),
        }
    }

    /// The family, defaulting to inet (and recording it) as ipset's address
    /// parsers do.
    pub fn family_or_inet(&mut self) -> Family {
        match self.family {
            Some(f) => f,
            None => {
                self.family = Some(Family::Inet);
                self.mark(Opt::Family);
                Family::Inet
            }
        }
    }

    /// Set an address item.
    pub fn set_ip(&mut self, o: Opt, a: IpAddr) {
        match o {
            Opt::Ip => self.ip = Some(a),
            Opt::IpTo => self.ip_to = Some(a),
            Opt::Ip2 => self.ip2 = Some(a),
            Opt::Ip2To => self.ip2_to = Some(a),
            Opt::Bitmask => self.bitmask = Some(a),
            _ => return,
        }
        self.mark(o);
    }

    /// Set the prefix length that goes with address item `o` (CIDR for the
    /// first address, CIDR2 otherwise, as ipset pairs them).
    pub fn set_cidr_for(&mut self, o: Opt, c: u8) {
        if o == Opt::Ip {
            self.cidr = Some(c);
            self.mark(Opt::Cidr);
        } else {
            self.cidr2 = Some(c);
            self.mark(Opt::Cidr2);
        }
    }

    /// The "to" item that goes with address item `o`.
    pub fn to_opt(o: Opt) -> Opt {
        if o == Opt::Ip {
            Opt::IpTo
        } else {
            Opt::Ip2To
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_items_set_no_bit() {
        let mut d = Data::default();
        d.mark(Opt::Nomatch);
        d.mark(Opt::Timeout);
        assert!(!d.has(Opt::Nomatch));
        assert!(d.has(Opt::Timeout));
        assert_eq!(d.family_or_inet(), Family::Inet);
        assert!(d.has(Opt::Family));
        d.set_cidr_for(Opt::Ip2, 24);
        assert_eq!(d.cidr2, Some(24));
        assert!(d.has(Opt::Cidr2));
    }
}
