//! The set types of ipset 7.21 at their newest revision: names, aliases,
//! families, element layout, and the keywords each command accepts.

use super::catalog::TYPES;
use super::kw::{Keyword, Opt};

/// Every set type ipset 7.21 knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SetType {
    BitmapIp,
    BitmapIpMac,
    BitmapPort,
    HashIp,
    HashIpMac,
    HashIpMark,
    HashIpPort,
    HashIpPortIp,
    HashIpPortNet,
    HashMac,
    HashNet,
    HashNetIface,
    HashNetNet,
    HashNetPort,
    HashNetPortNet,
    ListSet,
}

/// Which families a type supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeFamily {
    /// inet only (bitmap:ip, bitmap:ip,mac).
    Ipv4,
    /// inet and inet6.
    Both,
    /// Family neutral (bitmap:port, hash:mac, list:set).
    Unspec,
}

/// How one element component is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemParse {
    /// IPv4 address, range or CIDR; IPv6 plain address.
    Ip4Single6,
    /// A plain address.
    SingleIp,
    /// Address, range or CIDR (bitmap:ip).
    Ip,
    /// IPv4 address, range or CIDR; IPv6 address or CIDR.
    Ip4Net6,
    Ether,
    Mark,
    /// `[proto:]port[-port]` or `icmp:type`.
    ProtoPort,
    /// `[tcp|udp:]port[-port]` (bitmap:port).
    TcpUdpPort,
    Iface,
    Setname,
}

/// One element component: its parser and the item it fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElemDim {
    pub parse: ElemParse,
    pub opt: Opt,
}

/// What one command (create, add, del, test) accepts.
#[derive(Clone, Copy, Debug)]
pub struct CmdSpec {
    pub args: &'static [Keyword],
    /// Items that must be present.
    pub need: u64,
    /// Items that may be present (the keyword items are added on top).
    pub full: u64,
    pub help: &'static str,
}

impl CmdSpec {
    /// `full` with every keyword's item added, as ipset registers types.
    pub fn allowed(&self) -> u64 {
        self.args.iter().fold(self.full, |m, k| m | k.opt.bit())
    }
}

/// Type feature bits (what the kernel compares before a swap).
pub mod feature {
    pub const IP: u32 = 1 << 0;
    pub const PORT: u32 = 1 << 1;
    pub const MAC: u32 = 1 << 2;
    pub const IP2: u32 = 1 << 3;
    pub const IFACE: u32 = 1 << 5;
    pub const MARK: u32 = 1 << 6;
    pub const NOMATCH: u32 = 1 << 7;
    pub const NAME: u32 = 1 << 9;
    pub const DUMP_LAST: u32 = 1 << 10;
}

/// A set type at its newest revision.
#[derive(Clone, Copy, Debug)]
pub struct TypeInfo {
    pub ty: SetType,
    pub name: &'static str,
    pub alias: &'static str,
    pub revision: u8,
    pub family: TypeFamily,
    pub dims: &'static [ElemDim],
    /// The last component may be omitted (bitmap:ip,mac).
    pub last_elem_optional: bool,
    pub create: CmdSpec,
    pub add: CmdSpec,
    pub del: CmdSpec,
    pub test: CmdSpec,
    pub features: u32,
    pub description: &'static str,
}

impl SetType {
    pub fn info(self) -> &'static TypeInfo {
        TYPES
            .iter()
            .find(|t| t.ty == self)
            .expect("every SetType has a table entry")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The type a name or alias refers to (`hash:ip`, `iphash`, ...).
    pub fn by_name(name: &str) -> Option<SetType> {
        TYPES
            .iter()
            .find(|t| t.name == name || t.alias == name)
            .map(|t| t.ty)
    }

    pub fn is_hash(self) -> bool {
        self.name().starts_with("hash:")
    }

    pub fn is_bitmap(self) -> bool {
        self.name().starts_with("bitmap:")
    }

    pub fn is_list(self) -> bool {
        self == SetType::ListSet
    }

    /// Types whose first IP component is a network (with per-prefix lookup).
    pub fn net_dims(self) -> (bool, bool) {
        use SetType::*;
        match self {
            HashNet | HashNetIface | HashNetPort => (true, false),
            HashNetNet | HashNetPortNet => (true, true),
            HashIpPortNet => (false, true),
            _ => (false, false),
        }
    }

    /// Whether elements can carry `nomatch`.
    pub fn has_nomatch(self) -> bool {
        self.info().features & feature::NOMATCH != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_resolve() {
        for t in TYPES {
            assert_eq!(SetType::by_name(t.name), Some(t.ty));
            assert_eq!(SetType::by_name(t.alias), Some(t.ty));
            assert!(!t.dims.is_empty() && t.dims.len() <= 3);
        }
        assert_eq!(SetType::by_name("hash:foo"), None);
        assert_eq!(TYPES.len(), 16);
    }

    #[test]
    fn allowed_items_include_keyword_items() {
        let t = SetType::HashNet.info();
        assert_ne!(t.add.allowed() & Opt::Timeout.bit(), 0);
        assert_ne!(t.test.allowed() & Opt::Nomatch.bit(), 0);
        assert_eq!(t.test.allowed() & Opt::IpTo.bit(), 0);
    }
}
