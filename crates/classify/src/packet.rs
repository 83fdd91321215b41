//! The packet both evaluators see: the fields iptables matches read, and
//! the header bytes the kernel's `payload` expressions read, built from the
//! same fields so the two views cannot disagree.

use iptables::rule::Iface;
use ruleset::Family;

/// The connection-tracking state of a packet (one of them, as the kernel
/// attaches exactly one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CtState {
    #[default]
    New,
    Established,
    Related,
    Invalid,
    Untracked,
}

impl CtState {
    pub const ALL: [CtState; 5] = [
        CtState::New,
        CtState::Established,
        CtState::Related,
        CtState::Invalid,
        CtState::Untracked,
    ];

    /// The state bit xt_conntrack tests (`XT_CONNTRACK_STATE_*`).
    pub fn xt_bit(self) -> u32 {
        use iptables::ext::matches::conntrack::*;
        match self {
            CtState::Invalid => ST_INVALID,
            CtState::Established => ST_ESTABLISHED,
            CtState::Related => ST_RELATED,
            CtState::New => ST_NEW,
            CtState::Untracked => ST_UNTRACKED,
        }
    }

    /// The value of nftables' `ct state` (a host-order bit mask; untracked
    /// is bit 6).
    pub fn nft_bits(self) -> u32 {
        match self {
            CtState::Invalid => 1,
            CtState::Established => 2,
            CtState::Related => 4,
            CtState::New => 8,
            CtState::Untracked => 64,
        }
    }
}

/// The transport part of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum L4 {
    Tcp {
        sport: u16,
        dport: u16,
        flags: u8,
    },
    Udp {
        sport: u16,
        dport: u16,
    },
    /// ICMP (IPv4) or ICMPv6 by the family of the packet.
    Icmp {
        typ: u8,
        code: u8,
    },
    /// Any other protocol number; no transport header is modelled.
    Other(u8),
}

impl L4 {
    /// The protocol number (ICMPv6 is 58 in IPv6 packets).
    pub fn proto(&self, family: Family) -> u8 {
        match (self, family) {
            (L4::Tcp { .. }, _) => 6,
            (L4::Udp { .. }, _) => 17,
            (L4::Icmp { .. }, Family::Ipv4) => 1,
            (L4::Icmp { .. }, Family::Ipv6) => 58,
            (L4::Other(p), _) => *p,
        }
    }

    /// (source, destination) port of TCP and UDP.
    pub fn ports(&self) -> Option<(u16, u16)> {
        match *self {
            L4::Tcp { sport, dport, .. } | L4::Udp { sport, dport } => Some((sport, dport)),
            _ => None,
        }
    }
}

/// A packet at one hook. Addresses are network byte order in the first 4
/// (IPv4) or 16 bytes. `len` is the whole IP packet in bytes and is kept at
/// least the size of the headers modelled.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Packet {
    pub family: Family,
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub l4: L4,
    /// IPv4 fragment offset (8-byte units); non-zero means a non-first
    /// fragment, which carries no transport header. Always 0 for IPv6.
    pub frag_off: u16,
    /// Input and output interface names; empty where the hook has none.
    pub iif: Iface,
    pub oif: Iface,
    pub mark: u32,
    pub ct: CtState,
    pub len: u16,
    /// TTL (IPv4) or hop limit (IPv6).
    pub ttl: u8,
}

/// Bytes of the network header the packet's `payload` loads read.
pub const IPV4_HDR: usize = 20;
pub const IPV6_HDR: usize = 40;

impl Packet {
    pub fn proto(&self) -> u8 {
        self.l4.proto(self.family)
    }

    /// Whether the transport header is present (not a non-first fragment).
    pub fn has_transport(&self) -> bool {
        self.frag_off == 0 && !matches!(self.l4, L4::Other(_))
    }

    fn addr_len(&self) -> usize {
        match self.family {
            Family::Ipv4 => 4,
            Family::Ipv6 => 16,
        }
    }

    pub fn src(&self) -> &[u8] {
        &self.src[..self.addr_len()]
    }

    pub fn dst(&self) -> &[u8] {
        &self.dst[..self.addr_len()]
    }

    /// The network header as on the wire (checksums left zero: nothing
    /// modelled reads them).
    pub fn network_header(&self) -> Vec<u8> {
        match self.family {
            Family::Ipv4 => {
                let mut h = vec![0u8; IPV4_HDR];
                h[0] = 0x45;
                h[2..4].copy_from_slice(&self.len.to_be_bytes());
                h[6..8].copy_from_slice(&(self.frag_off & 0x1fff).to_be_bytes());
                h[8] = self.ttl;
                h[9] = self.proto();
                h[12..16].copy_from_slice(self.src());
                h[16..20].copy_from_slice(self.dst());
                h
            }
            Family::Ipv6 => {
                let mut h = vec![0u8; IPV6_HDR];
                h[0] = 0x60;
                let payload = self.len.saturating_sub(IPV6_HDR as u16);
                h[4..6].copy_from_slice(&payload.to_be_bytes());
                h[6] = self.proto();
                h[7] = self.ttl;
                h[8..24].copy_from_slice(self.src());
                h[24..40].copy_from_slice(self.dst());
                h
            }
        }
    }

    /// The transport header, or `None` where the kernel has none to read
    /// (non-first fragments, protocols not modelled).
    pub fn transport_header(&self) -> Option<Vec<u8>> {
        if !self.has_transport() {
            return None;
        }
        Some(match self.l4 {
            L4::Tcp {
                sport,
                dport,
                flags,
            } => {
                let mut h = vec![0u8; 20];
                h[0..2].copy_from_slice(&sport.to_be_bytes());
                h[2..4].copy_from_slice(&dport.to_be_bytes());
                h[12] = 5 << 4;
                h[13] = flags;
                h
            }
            L4::Udp { sport, dport } => {
                let mut h = vec![0u8; 8];
                h[0..2].copy_from_slice(&sport.to_be_bytes());
                h[2..4].copy_from_slice(&dport.to_be_bytes());
                h
            }
            L4::Icmp { typ, code } => vec![typ, code, 0, 0, 0, 0, 0, 0],
            L4::Other(_) => return None,
        })
    }

    /// Smallest `len` that holds the modelled headers.
    pub fn min_len(&self) -> u16 {
        let net = match self.family {
            Family::Ipv4 => IPV4_HDR,
            Family::Ipv6 => IPV6_HDR,
        };
        let l4 = self.transport_header().map_or(0, |h| h.len());
        (net + l4) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp4() -> Packet {
        Packet {
            family: Family::Ipv4,
            src: [10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            dst: [10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            l4: L4::Tcp {
                sport: 1234,
                dport: 80,
                flags: 0x02,
            },
            frag_off: 0,
            iif: Iface::new("eth0").unwrap(),
            oif: Iface::default(),
            mark: 0,
            ct: CtState::New,
            len: 60,
            ttl: 64,
        }
    }

    #[test]
    fn headers_carry_the_fields_where_the_kernel_reads_them() {
        let p = tcp4();
        let n = p.network_header();
        assert_eq!(&n[12..16], &[10, 0, 0, 1]);
        assert_eq!(&n[16..20], &[10, 0, 0, 2]);
        assert_eq!(n[9], 6);
        assert_eq!(&n[2..4], &60u16.to_be_bytes());
        let t = p.transport_header().unwrap();
        assert_eq!(&t[2..4], &80u16.to_be_bytes());
        assert_eq!(t[13], 0x02);
        let mut f = p.clone();
        f.frag_off = 3;
        assert_eq!(f.transport_header(), None);
        assert_eq!(&f.network_header()[6..8], &[0, 3]);
        let mut v6 = p;
        v6.family = Family::Ipv6;
        v6.l4 = L4::Icmp { typ: 128, code: 0 };
        let n = v6.network_header();
        assert_eq!(n[6], 58);
        assert_eq!(&n[4..6], &20u16.to_be_bytes());
    }
}
