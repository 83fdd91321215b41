//! The set types of ipset 7.21 at their newest revision: names, aliases,
//! families, element layout, and the keywords each command accepts.

use super::kw::{self, Keyword, Opt};

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

const fn b(o: Opt) -> u64 {
    o.bit()
}

const IP: ElemDim = ElemDim {
    parse: ElemParse::Ip4Single6,
    opt: Opt::Ip,
};
const NET: ElemDim = ElemDim {
    parse: ElemParse::Ip4Net6,
    opt: Opt::Ip,
};
const NET2: ElemDim = ElemDim {
    parse: ElemParse::Ip4Net6,
    opt: Opt::Ip2,
};
const PORT: ElemDim = ElemDim {
    parse: ElemParse::ProtoPort,
    opt: Opt::Port,
};
const MAC: ElemDim = ElemDim {
    parse: ElemParse::Ether,
    opt: Opt::Ether,
};

use kw::*;

const HASH_CREATE_BASE: &[Keyword] = &[
    FAMILY, INET, INET6, HASHSIZE, MAXELEM, TIMEOUT, COUNTERS, COMMENT, FORCEADD, SKBINFO,
    BUCKETSIZE, INITVAL,
];
const ADD_EXT: &[Keyword] = &[
    TIMEOUT,
    PACKETS,
    BYTES,
    ADT_COMMENT,
    SKBMARK,
    SKBPRIO,
    SKBQUEUE,
];
const ADD_EXT_NOMATCH: &[Keyword] = &[
    TIMEOUT,
    NOMATCH,
    PACKETS,
    BYTES,
    ADT_COMMENT,
    SKBMARK,
    SKBPRIO,
    SKBQUEUE,
];
const NONE: &[Keyword] = &[];
const ONLY_NOMATCH: &[Keyword] = &[NOMATCH];

const fn create(args: &'static [Keyword], need: u64, help: &'static str) -> CmdSpec {
    CmdSpec {
        args,
        need,
        full: need,
        help,
    }
}

const fn adt(args: &'static [Keyword], need: u64, full: u64, help: &'static str) -> CmdSpec {
    CmdSpec {
        args,
        need,
        full,
        help,
    }
}

const IP_RANGE: u64 = b(Opt::Ip) | b(Opt::IpTo);
const IPPORT_NEED: u64 = b(Opt::Ip) | b(Opt::Proto) | b(Opt::Port);

/// The type table, in the order ipset registers (and lists) types.
pub const TYPES: &[TypeInfo] = &[
    TypeInfo {
        ty: SetType::BitmapIp,
        name: "bitmap:ip",
        alias: "ipmap",
        revision: 3,
        family: TypeFamily::Ipv4,
        dims: &[ElemDim {
            parse: ElemParse::Ip,
            opt: Opt::Ip,
        }],
        last_elem_optional: false,
        create: create(
            &[
                IPRANGE, NETMASK, TIMEOUT, COUNTERS, COMMENT, SKBINFO, FROM_IP, TO_IP, NETWORK,
            ],
            IP_RANGE,
            "range IP/CIDR|FROM-TO",
        ),
        add: adt(ADD_EXT, b(Opt::Ip), IP_RANGE, "IP|IP/CIDR|FROM-TO"),
        del: adt(NONE, b(Opt::Ip), IP_RANGE, "IP|IP/CIDR|FROM-TO"),
        test: adt(NONE, b(Opt::Ip), b(Opt::Ip), "IP"),
        features: feature::IP,
        description: "skbinfo support",
    },
    TypeInfo {
        ty: SetType::BitmapIpMac,
        name: "bitmap:ip,mac",
        alias: "macipmap",
        revision: 3,
        family: TypeFamily::Ipv4,
        dims: &[
            ElemDim {
                parse: ElemParse::SingleIp,
                opt: Opt::Ip,
            },
            MAC,
        ],
        last_elem_optional: true,
        create: create(
            &[
                IPRANGE, TIMEOUT, COUNTERS, COMMENT, SKBINFO, FROM_IP, TO_IP, NETWORK,
            ],
            IP_RANGE,
            "range IP/CIDR|FROM-TO",
        ),
        add: adt(ADD_EXT, b(Opt::Ip), b(Opt::Ip) | b(Opt::Ether), "IP[,MAC]"),
        del: adt(NONE, b(Opt::Ip), b(Opt::Ip) | b(Opt::Ether), "IP[,MAC]"),
        test: adt(NONE, b(Opt::Ip), b(Opt::Ip) | b(Opt::Ether), "IP[,MAC]"),
        features: feature::IP | feature::MAC,
        description: "skbinfo support",
    },
    TypeInfo {
        ty: SetType::BitmapPort,
        name: "bitmap:port",
        alias: "portmap",
        revision: 3,
        family: TypeFamily::Unspec,
        dims: &[ElemDim {
            parse: ElemParse::TcpUdpPort,
            opt: Opt::Port,
        }],
        last_elem_optional: false,
        create: create(
            &[
                PORTRANGE, TIMEOUT, COUNTERS, COMMENT, SKBINFO, FROM_PORT, TO_PORT,
            ],
            b(Opt::Port) | b(Opt::PortTo),
            "range [PROTO:]FROM-TO",
        ),
        add: adt(
            ADD_EXT,
            b(Opt::Port),
            b(Opt::Port) | b(Opt::PortTo),
            "[PROTO:]PORT|FROM-TO",
        ),
        del: adt(
            NONE,
            b(Opt::Port),
            b(Opt::Port) | b(Opt::PortTo),
            "[PROTO:]PORT|FROM-TO",
        ),
        test: adt(NONE, b(Opt::Port), b(Opt::Port), "[PROTO:]PORT"),
        features: feature::PORT,
        description: "skbinfo support",
    },
    TypeInfo {
        ty: SetType::HashIp,
        name: "hash:ip",
        alias: "iphash",
        revision: 6,
        family: TypeFamily::Both,
        dims: &[IP],
        last_elem_optional: false,
        create: create(
            &[
                FAMILY, INET, INET6, HASHSIZE, MAXELEM, NETMASK, BITMASK, TIMEOUT, COUNTERS,
                COMMENT, FORCEADD, SKBINFO, BUCKETSIZE, INITVAL, PROBES, RESIZE, GC,
            ],
            0,
            "",
        ),
        add: adt(ADD_EXT, b(Opt::Ip), IP_RANGE, "IP"),
        del: adt(NONE, b(Opt::Ip), IP_RANGE, "IP"),
        test: adt(NONE, b(Opt::Ip), IP_RANGE, "IP"),
        features: feature::IP,
        description: "bitmask support",
    },
    TypeInfo {
        ty: SetType::HashIpMac,
        name: "hash:ip,mac",
        alias: "ipmachash",
        revision: 1,
        family: TypeFamily::Both,
        dims: &[IP, MAC],
        last_elem_optional: false,
        create: create(HASH_CREATE_BASE, 0, ""),
        add: adt(
            ADD_EXT,
            b(Opt::Ip) | b(Opt::Ether),
            b(Opt::Ip) | b(Opt::Ether),
            "IP,MAC",
        ),
        del: adt(
            NONE,
            b(Opt::Ip) | b(Opt::Ether),
            b(Opt::Ip) | b(Opt::Ether),
            "IP,MAC",
        ),
        test: adt(
            NONE,
            b(Opt::Ip) | b(Opt::Ether),
            b(Opt::Ip) | b(Opt::Ether),
            "IP,MAC",
        ),
        features: feature::IP | feature::MAC,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashIpMark,
        name: "hash:ip,mark",
        alias: "ipmarkhash",
        revision: 3,
        family: TypeFamily::Both,
        dims: &[
            IP,
            ElemDim {
                parse: ElemParse::Mark,
                opt: Opt::Mark,
            },
        ],
        last_elem_optional: false,
        create: create(
            &[
                FAMILY,
                INET,
                INET6,
                MARKMASK,
                HASHSIZE,
                MAXELEM,
                TIMEOUT,
                COUNTERS,
                COMMENT,
                FORCEADD,
                SKBINFO,
                BUCKETSIZE,
                INITVAL,
                PROBES,
                RESIZE,
                IGNORED_FROM,
                IGNORED_TO,
                IGNORED_NETWORK,
            ],
            0,
            "",
        ),
        add: adt(
            ADD_EXT,
            b(Opt::Ip) | b(Opt::Mark),
            IP_RANGE | b(Opt::Mark),
            "IP,MARK",
        ),
        del: adt(
            NONE,
            b(Opt::Ip) | b(Opt::Mark),
            IP_RANGE | b(Opt::Mark),
            "IP,MARK",
        ),
        test: adt(
            NONE,
            b(Opt::Ip) | b(Opt::Mark),
            IP_RANGE | b(Opt::Mark),
            "IP,MARK",
        ),
        features: feature::IP | feature::MARK,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashIpPort,
        name: "hash:ip,port",
        alias: "ipporthash",
        revision: 7,
        family: TypeFamily::Both,
        dims: &[IP, PORT],
        last_elem_optional: false,
        create: create(
            &[
                FAMILY,
                INET,
                INET6,
                HASHSIZE,
                MAXELEM,
                TIMEOUT,
                COUNTERS,
                COMMENT,
                FORCEADD,
                SKBINFO,
                BUCKETSIZE,
                INITVAL,
                NETMASK,
                BITMASK,
                PROBES,
                RESIZE,
                IGNORED_FROM,
                IGNORED_TO,
                IGNORED_NETWORK,
            ],
            0,
            "",
        ),
        add: adt(
            ADD_EXT,
            IPPORT_NEED,
            IPPORT_NEED | b(Opt::IpTo) | b(Opt::PortTo),
            "IP,[PROTO:]PORT",
        ),
        del: adt(
            NONE,
            IPPORT_NEED,
            IPPORT_NEED | b(Opt::IpTo) | b(Opt::PortTo),
            "IP,[PROTO:]PORT",
        ),
        test: adt(NONE, IPPORT_NEED, IPPORT_NEED, "IP,[PROTO:]PORT"),
        features: feature::IP | feature::PORT,
        description: "netmask and bitmask support",
    },
    TypeInfo {
        ty: SetType::HashIpPortIp,
        name: "hash:ip,port,ip",
        alias: "ipportiphash",
        revision: 6,
        family: TypeFamily::Both,
        dims: &[
            IP,
            PORT,
            ElemDim {
                parse: ElemParse::SingleIp,
                opt: Opt::Ip2,
            },
        ],
        last_elem_optional: false,
        create: create(
            &[
                FAMILY,
                INET,
                INET6,
                HASHSIZE,
                MAXELEM,
                TIMEOUT,
                COUNTERS,
                COMMENT,
                FORCEADD,
                SKBINFO,
                BUCKETSIZE,
                INITVAL,
                PROBES,
                RESIZE,
                IGNORED_FROM,
                IGNORED_TO,
                IGNORED_NETWORK,
            ],
            0,
            "",
        ),
        add: adt(
            ADD_EXT,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED | b(Opt::IpTo) | b(Opt::PortTo) | b(Opt::Ip2),
            "IP,[PROTO:]PORT,IP",
        ),
        del: adt(
            NONE,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED | b(Opt::IpTo) | b(Opt::PortTo) | b(Opt::Ip2),
            "IP,[PROTO:]PORT,IP",
        ),
        test: adt(
            NONE,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED | b(Opt::Ip2),
            "IP,[PROTO:]PORT,IP",
        ),
        features: feature::IP | feature::PORT | feature::IP2,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashIpPortNet,
        name: "hash:ip,port,net",
        alias: "ipportnethash",
        revision: 8,
        family: TypeFamily::Both,
        dims: &[IP, PORT, NET2],
        last_elem_optional: false,
        create: create(
            &[
                FAMILY,
                INET,
                INET6,
                HASHSIZE,
                MAXELEM,
                TIMEOUT,
                COUNTERS,
                COMMENT,
                FORCEADD,
                SKBINFO,
                BUCKETSIZE,
                INITVAL,
                PROBES,
                RESIZE,
                IGNORED_FROM,
                IGNORED_TO,
                IGNORED_NETWORK,
            ],
            0,
            "",
        ),
        add: adt(
            ADD_EXT_NOMATCH,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED
                | b(Opt::IpTo)
                | b(Opt::PortTo)
                | b(Opt::Ip2)
                | b(Opt::Cidr2)
                | b(Opt::Ip2To),
            "IP,[PROTO:]PORT,IP[/CIDR]",
        ),
        del: adt(
            NONE,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED
                | b(Opt::IpTo)
                | b(Opt::PortTo)
                | b(Opt::Ip2)
                | b(Opt::Cidr2)
                | b(Opt::Ip2To),
            "IP,[PROTO:]PORT,IP[/CIDR]",
        ),
        test: adt(
            ONLY_NOMATCH,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED | b(Opt::Ip2) | b(Opt::Cidr2),
            "IP,[PROTO:]PORT,IP[/CIDR]",
        ),
        features: feature::IP | feature::PORT | feature::IP2 | feature::NOMATCH,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashMac,
        name: "hash:mac",
        alias: "machash",
        revision: 1,
        family: TypeFamily::Unspec,
        dims: &[MAC],
        last_elem_optional: false,
        create: create(
            &[
                HASHSIZE, MAXELEM, TIMEOUT, COUNTERS, COMMENT, FORCEADD, SKBINFO, BUCKETSIZE,
                INITVAL,
            ],
            0,
            "",
        ),
        add: adt(ADD_EXT, b(Opt::Ether), b(Opt::Ether), "MAC"),
        del: adt(NONE, b(Opt::Ether), b(Opt::Ether), "MAC"),
        test: adt(NONE, b(Opt::Ether), b(Opt::Ether), "MAC"),
        features: feature::MAC,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashNet,
        name: "hash:net",
        alias: "nethash",
        revision: 7,
        family: TypeFamily::Both,
        dims: &[NET],
        last_elem_optional: false,
        create: create(
            &[
                FAMILY, INET, INET6, HASHSIZE, MAXELEM, TIMEOUT, COUNTERS, COMMENT, FORCEADD,
                SKBINFO, BUCKETSIZE, INITVAL, PROBES, RESIZE,
            ],
            0,
            "",
        ),
        add: adt(
            ADD_EXT_NOMATCH,
            b(Opt::Ip),
            IP_RANGE | b(Opt::Cidr),
            "IP[/CIDR]",
        ),
        del: adt(NONE, b(Opt::Ip), IP_RANGE | b(Opt::Cidr), "IP[/CIDR]"),
        test: adt(
            ONLY_NOMATCH,
            b(Opt::Ip),
            b(Opt::Ip) | b(Opt::Cidr),
            "IP[/CIDR]",
        ),
        features: feature::IP | feature::NOMATCH,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashNetIface,
        name: "hash:net,iface",
        alias: "netifacehash",
        revision: 8,
        family: TypeFamily::Both,
        dims: &[
            NET,
            ElemDim {
                parse: ElemParse::Iface,
                opt: Opt::Iface,
            },
        ],
        last_elem_optional: false,
        create: create(HASH_CREATE_BASE, 0, ""),
        add: adt(
            &[
                TIMEOUT,
                NOMATCH,
                WILDCARD,
                PACKETS,
                BYTES,
                ADT_COMMENT,
                SKBMARK,
                SKBPRIO,
                SKBQUEUE,
            ],
            b(Opt::Ip) | b(Opt::Iface),
            IP_RANGE | b(Opt::Cidr) | b(Opt::Iface) | b(Opt::Physdev),
            "IP[/CIDR]|FROM-TO,[physdev:]IFACE",
        ),
        del: adt(
            NONE,
            b(Opt::Ip) | b(Opt::Iface),
            IP_RANGE | b(Opt::Cidr) | b(Opt::Iface) | b(Opt::Physdev),
            "IP[/CIDR]|FROM-TO,[physdev:]IFACE",
        ),
        test: adt(
            ONLY_NOMATCH,
            b(Opt::Ip) | b(Opt::Iface),
            b(Opt::Ip) | b(Opt::Cidr) | b(Opt::Iface) | b(Opt::Physdev),
            "IP[/CIDR],[physdev:]IFACE",
        ),
        features: feature::IP | feature::IFACE | feature::NOMATCH,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashNetNet,
        name: "hash:net,net",
        alias: "netnethash",
        revision: 4,
        family: TypeFamily::Both,
        dims: &[NET, NET2],
        last_elem_optional: false,
        create: create(
            &[
                FAMILY, INET, INET6, HASHSIZE, MAXELEM, TIMEOUT, COUNTERS, COMMENT, FORCEADD,
                SKBINFO, BUCKETSIZE, INITVAL, BITMASK, NETMASK,
            ],
            0,
            "",
        ),
        add: adt(
            ADD_EXT_NOMATCH,
            b(Opt::Ip) | b(Opt::Ip2),
            IP_RANGE | b(Opt::Cidr) | b(Opt::Ip2) | b(Opt::Cidr2) | b(Opt::Ip2To),
            "IP[/CIDR]|FROM-TO,IP[/CIDR]|FROM-TO",
        ),
        del: adt(
            NONE,
            b(Opt::Ip) | b(Opt::Ip2),
            IP_RANGE | b(Opt::Cidr) | b(Opt::Ip2) | b(Opt::Cidr2) | b(Opt::Ip2To),
            "IP[/CIDR]|FROM-TO,IP[/CIDR]|FROM-TO",
        ),
        test: adt(
            ONLY_NOMATCH,
            b(Opt::Ip) | b(Opt::Ip2),
            b(Opt::Ip) | b(Opt::Cidr) | b(Opt::Ip2) | b(Opt::Cidr2),
            "IP[/CIDR],IP[/CIDR]",
        ),
        features: feature::IP | feature::IP2 | feature::NOMATCH,
        description: "netmask and bitmask support",
    },
    TypeInfo {
        ty: SetType::HashNetPort,
        name: "hash:net,port",
        alias: "netporthash",
        revision: 8,
        family: TypeFamily::Both,
        dims: &[NET, PORT],
        last_elem_optional: false,
        create: create(HASH_CREATE_BASE, 0, ""),
        add: adt(
            ADD_EXT_NOMATCH,
            IPPORT_NEED,
            IPPORT_NEED | b(Opt::PortTo) | b(Opt::Cidr) | b(Opt::IpTo),
            "IP[/CIDR]|FROM-TO,[PROTO:]PORT",
        ),
        del: adt(
            NONE,
            IPPORT_NEED,
            IPPORT_NEED | b(Opt::PortTo) | b(Opt::Cidr) | b(Opt::IpTo),
            "IP[/CIDR]|FROM-TO,[PROTO:]PORT",
        ),
        test: adt(
            ONLY_NOMATCH,
            IPPORT_NEED,
            IPPORT_NEED | b(Opt::Cidr),
            "IP[/CIDR],[PROTO:]PORT",
        ),
        features: feature::IP | feature::PORT | feature::NOMATCH,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::HashNetPortNet,
        name: "hash:net,port,net",
        alias: "netportnethash",
        revision: 3,
        family: TypeFamily::Both,
        dims: &[NET, PORT, NET2],
        last_elem_optional: false,
        create: create(HASH_CREATE_BASE, 0, ""),
        add: adt(
            ADD_EXT_NOMATCH,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED
                | b(Opt::PortTo)
                | b(Opt::Cidr)
                | b(Opt::IpTo)
                | b(Opt::Ip2)
                | b(Opt::Cidr2)
                | b(Opt::Ip2To),
            "IP[/CIDR],[PROTO:]PORT,IP[/CIDR]",
        ),
        del: adt(
            NONE,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED
                | b(Opt::PortTo)
                | b(Opt::Cidr)
                | b(Opt::IpTo)
                | b(Opt::Ip2)
                | b(Opt::Cidr2)
                | b(Opt::Ip2To),
            "IP[/CIDR],[PROTO:]PORT,IP[/CIDR]",
        ),
        test: adt(
            ONLY_NOMATCH,
            IPPORT_NEED | b(Opt::Ip2),
            IPPORT_NEED | b(Opt::Cidr) | b(Opt::Ip2) | b(Opt::Cidr2),
            "IP[/CIDR],[PROTO:]PORT,IP[/CIDR]",
        ),
        features: feature::IP | feature::PORT | feature::IP2 | feature::NOMATCH,
        description: "bucketsize, initval support",
    },
    TypeInfo {
        ty: SetType::ListSet,
        name: "list:set",
        alias: "setlist",
        revision: 3,
        family: TypeFamily::Unspec,
        dims: &[ElemDim {
            parse: ElemParse::Setname,
            opt: Opt::Name,
        }],
        last_elem_optional: false,
        create: create(&[SIZE, TIMEOUT, COUNTERS, COMMENT, SKBINFO], 0, ""),
        add: adt(
            &[
                TIMEOUT,
                BEFORE,
                AFTER,
                PACKETS,
                BYTES,
                ADT_COMMENT,
                SKBMARK,
                SKBPRIO,
                SKBQUEUE,
            ],
            b(Opt::Name),
            b(Opt::Name) | b(Opt::Before) | b(Opt::Nameref),
            "NAME[,before|after,NAME]",
        ),
        del: adt(
            &[BEFORE, AFTER],
            b(Opt::Name),
            b(Opt::Name) | b(Opt::Before) | b(Opt::Nameref),
            "NAME[,before|after,NAME]",
        ),
        test: adt(
            &[BEFORE, AFTER],
            b(Opt::Name),
            b(Opt::Name) | b(Opt::Before) | b(Opt::Nameref),
            "NAME[,before|after,NAME]",
        ),
        features: feature::NAME | feature::DUMP_LAST,
        description: "skbinfo support",
    },
];

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
