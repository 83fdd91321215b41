//! The catalog of set types: each type at its newest revision with its
//! element layout and the keywords its commands accept (ipset 7.21).

use super::kw::{self, Keyword, Opt};
use super::table::{feature, CmdSpec, ElemDim, ElemParse, SetType, TypeFamily, TypeInfo};

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
