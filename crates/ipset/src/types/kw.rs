//! ipset's option keywords (`hashsize`, `timeout`, `nomatch`, ...) and the
//! data items ("opts") they set. Each set type lists which keywords each
//! command accepts (see `table.rs`); the parser matches words against them.

/// The data items of a parsed command, in ipset's order. The order matters:
/// the "not allowed" check reports the first offending item in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Opt {
    Family = 3,
    Ip = 4,
    IpTo = 5,
    Cidr = 6,
    Mark = 7,
    Port = 8,
    PortTo = 9,
    Timeout = 10,
    Gc = 11,
    Hashsize = 12,
    Maxelem = 13,
    Markmask = 14,
    Netmask = 15,
    Probes = 16,
    Resize = 17,
    Size = 18,
    Forceadd = 19,
    Bitmask = 20,
    Ether = 24,
    Name = 25,
    Nameref = 26,
    Ip2 = 27,
    Cidr2 = 28,
    Ip2To = 29,
    Proto = 30,
    Iface = 31,
    Exist = 33,
    Before = 34,
    Physdev = 35,
    Nomatch = 36,
    Counters = 37,
    Packets = 38,
    Bytes = 39,
    CreateComment = 40,
    AdtComment = 41,
    Skbinfo = 42,
    Skbmark = 43,
    Skbprio = 44,
    Skbqueue = 45,
    IfaceWildcard = 46,
    Bucketsize = 47,
    Initval = 48,
}

/// ipset's IPSET_OPT_FLAGS: the "not allowed" scan stops before it.
pub const OPT_FLAGS_LIMIT: u8 = 49;

impl Opt {
    pub const fn bit(self) -> u64 {
        1u64 << (self as u8)
    }

    /// Every opt in enum order (for scans over a flag mask).
    pub const ALL: [Opt; 42] = [
        Opt::Family,
        Opt::Ip,
        Opt::IpTo,
        Opt::Cidr,
        Opt::Mark,
        Opt::Port,
        Opt::PortTo,
        Opt::Timeout,
        Opt::Gc,
        Opt::Hashsize,
        Opt::Maxelem,
        Opt::Markmask,
        Opt::Netmask,
        Opt::Probes,
        Opt::Resize,
        Opt::Size,
        Opt::Forceadd,
        Opt::Bitmask,
        Opt::Ether,
        Opt::Name,
        Opt::Nameref,
        Opt::Ip2,
        Opt::Cidr2,
        Opt::Ip2To,
        Opt::Proto,
        Opt::Iface,
        Opt::Exist,
        Opt::Before,
        Opt::Physdev,
        Opt::Nomatch,
        Opt::Counters,
        Opt::Packets,
        Opt::Bytes,
        Opt::CreateComment,
        Opt::AdtComment,
        Opt::Skbinfo,
        Opt::Skbmark,
        Opt::Skbprio,
        Opt::Skbqueue,
        Opt::IfaceWildcard,
        Opt::Bucketsize,
        Opt::Initval,
    ];
}

/// Items a create command may carry (ipset's IPSET_CREATE_FLAGS).
pub const CREATE_FLAGS: u64 = Opt::Family.bit()
    | Opt::Ip.bit()
    | Opt::IpTo.bit()
    | Opt::Cidr.bit()
    | Opt::Port.bit()
    | Opt::PortTo.bit()
    | Opt::Timeout.bit()
    | Opt::Gc.bit()
    | Opt::Hashsize.bit()
    | Opt::Maxelem.bit()
    | Opt::Markmask.bit()
    | Opt::Netmask.bit()
    | Opt::Probes.bit()
    | Opt::Resize.bit()
    | Opt::Size.bit()
    | Opt::Counters.bit()
    | Opt::CreateComment.bit()
    | Opt::Forceadd.bit()
    | Opt::Skbinfo.bit()
    | Opt::Bitmask.bit();

/// Items an add/del/test command may carry (ipset's IPSET_ADT_FLAGS).
pub const ADT_FLAGS: u64 = Opt::Ip.bit()
    | Opt::IpTo.bit()
    | Opt::Cidr.bit()
    | Opt::Mark.bit()
    | Opt::Port.bit()
    | Opt::PortTo.bit()
    | Opt::Timeout.bit()
    | Opt::Ether.bit()
    | Opt::Name.bit()
    | Opt::Nameref.bit()
    | Opt::Ip2.bit()
    | Opt::Cidr2.bit()
    | Opt::Proto.bit()
    | Opt::Iface.bit()
    | Opt::Before.bit()
    | Opt::Physdev.bit()
    | Opt::Nomatch.bit()
    | Opt::Packets.bit()
    | Opt::Bytes.bit()
    | Opt::AdtComment.bit()
    | Opt::Skbmark.bit()
    | Opt::Skbprio.bit()
    | Opt::Skbqueue.bit()
    | Opt::IfaceWildcard.bit();

/// How a keyword's value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `family inet|inet6` (and `-4`/`-6`, which carry no value).
    Family,
    U8,
    U16,
    U32,
    U64,
    /// Deprecated option: read and ignored with a warning.
    Ignored,
    /// `range IP/CIDR|FROM-TO` of bitmap:ip(,mac).
    NetRange,
    /// `range [PROTO:]FROM-TO` of bitmap:port.
    PortRange,
    Netmask,
    Bitmask,
    Before,
    After,
    /// `from`/`to` of the old bitmap syntax: a single address.
    SingleIp,
    /// `network` of the old bitmap syntax: IP/CIDR.
    Net,
    /// `from`/`to` port of the old bitmap:port syntax.
    SingleTcpPort,
    /// A flag without value.
    Flag,
    Timeout,
    Comment,
    Skbmark,
    Skbprio,
}

/// How a keyword prints in a listing header or member line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintKind {
    Number,
    Hex,
    Flag,
    Family,
    Ip,
    Port,
    Mark,
    Comment,
    Skbmark,
    Skbprio,
}

/// One keyword: its name, whether it takes a value, the item it sets, how
/// the value is read and printed, and its help line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keyword {
    pub name: &'static str,
    pub has_arg: bool,
    pub opt: Opt,
    pub value: ValueKind,
    pub print: Option<PrintKind>,
    pub help: &'static str,
}

const fn kw(
    name: &'static str,
    has_arg: bool,
    opt: Opt,
    value: ValueKind,
    print: Option<PrintKind>,
    help: &'static str,
) -> Keyword {
    Keyword {
        name,
        has_arg,
        opt,
        value,
        print,
        help,
    }
}

use PrintKind as P;
use ValueKind as V;

pub const FAMILY: Keyword = kw(
    "family",
    true,
    Opt::Family,
    V::Family,
    Some(P::Family),
    "[family inet|inet6]|[-4|-6]",
);
pub const INET: Keyword = kw("-4", false, Opt::Family, V::Family, None, "");
pub const INET6: Keyword = kw("-6", false, Opt::Family, V::Family, None, "");
pub const HASHSIZE: Keyword = kw(
    "hashsize",
    true,
    Opt::Hashsize,
    V::U32,
    Some(P::Number),
    "[hashsize VALUE]",
);
pub const MAXELEM: Keyword = kw(
    "maxelem",
    true,
    Opt::Maxelem,
    V::U32,
    Some(P::Number),
    "[maxelem VALUE]",
);
pub const PROBES: Keyword = kw("probes", true, Opt::Probes, V::Ignored, Some(P::Number), "");
pub const RESIZE: Keyword = kw("resize", true, Opt::Resize, V::Ignored, Some(P::Number), "");
pub const GC: Keyword = kw("gc", true, Opt::Gc, V::Ignored, Some(P::Number), "");
pub const IGNORED_FROM: Keyword = kw("from", true, Opt::Ip, V::Ignored, Some(P::Number), "");
pub const IGNORED_TO: Keyword = kw("to", true, Opt::IpTo, V::Ignored, Some(P::Number), "");
pub const IGNORED_NETWORK: Keyword = kw("network", true, Opt::Ip, V::Ignored, Some(P::Number), "");
pub const SIZE: Keyword = kw(
    "size",
    true,
    Opt::Size,
    V::U32,
    Some(P::Number),
    "[size VALUE]",
);
pub const IPRANGE: Keyword = kw("range", true, Opt::Ip, V::NetRange, Some(P::Ip), "");
pub const NETMASK: Keyword = kw(
    "netmask",
    true,
    Opt::Netmask,
    V::Netmask,
    Some(P::Number),
    "[netmask CIDR]",
);
pub const PORTRANGE: Keyword = kw("range", true, Opt::Port, V::PortRange, Some(P::Port), "");
pub const BEFORE: Keyword = kw(
    "before",
    true,
    Opt::Nameref,
    V::Before,
    None,
    "[before|after NAME]",
);
pub const AFTER: Keyword = kw("after", true, Opt::Nameref, V::After, None, "");
pub const FROM_IP: Keyword = kw("from", true, Opt::Ip, V::SingleIp, None, "");
pub const TO_IP: Keyword = kw("to", true, Opt::IpTo, V::SingleIp, None, "");
pub const NETWORK: Keyword = kw("network", true, Opt::Ip, V::Net, None, "");
pub const FROM_PORT: Keyword = kw("from", true, Opt::Port, V::SingleTcpPort, None, "");
pub const TO_PORT: Keyword = kw("to", true, Opt::PortTo, V::SingleTcpPort, None, "");
pub const FORCEADD: Keyword = kw(
    "forceadd",
    false,
    Opt::Forceadd,
    V::Flag,
    Some(P::Flag),
    "[forceadd]",
);
pub const MARKMASK: Keyword = kw(
    "markmask",
    true,
    Opt::Markmask,
    V::U32,
    Some(P::Mark),
    "markmask VALUE",
);
pub const NOMATCH: Keyword = kw(
    "nomatch",
    false,
    Opt::Nomatch,
    V::Flag,
    Some(P::Flag),
    "[nomatch]",
);
pub const WILDCARD: Keyword = kw(
    "wildcard",
    false,
    Opt::IfaceWildcard,
    V::Flag,
    Some(P::Flag),
    "[wildcard]",
);
pub const TIMEOUT: Keyword = kw(
    "timeout",
    true,
    Opt::Timeout,
    V::Timeout,
    Some(P::Number),
    "[timeout VALUE]",
);
pub const COUNTERS: Keyword = kw(
    "counters",
    false,
    Opt::Counters,
    V::Flag,
    Some(P::Flag),
    "[counters]",
);
pub const PACKETS: Keyword = kw(
    "packets",
    true,
    Opt::Packets,
    V::U64,
    Some(P::Number),
    "[packets VALUE]",
);
pub const BYTES: Keyword = kw(
    "bytes",
    true,
    Opt::Bytes,
    V::U64,
    Some(P::Number),
    "[bytes VALUE]",
);
pub const COMMENT: Keyword = kw(
    "comment",
    false,
    Opt::CreateComment,
    V::Flag,
    Some(P::Flag),
    "[comment]",
);
pub const ADT_COMMENT: Keyword = kw(
    "comment",
    true,
    Opt::AdtComment,
    V::Comment,
    Some(P::Comment),
    "[comment \"string\"]",
);
pub const SKBINFO: Keyword = kw(
    "skbinfo",
    false,
    Opt::Skbinfo,
    V::Flag,
    Some(P::Flag),
    "[skbinfo]",
);
pub const SKBMARK: Keyword = kw(
    "skbmark",
    true,
    Opt::Skbmark,
    V::Skbmark,
    Some(P::Skbmark),
    "[skbmark VALUE]",
);
pub const SKBPRIO: Keyword = kw(
    "skbprio",
    true,
    Opt::Skbprio,
    V::Skbprio,
    Some(P::Skbprio),
    "[skbprio VALUE]",
);
pub const SKBQUEUE: Keyword = kw(
    "skbqueue",
    true,
    Opt::Skbqueue,
    V::U16,
    Some(P::Number),
    "[skbqueue VALUE]",
);
pub const BUCKETSIZE: Keyword = kw(
    "bucketsize",
    true,
    Opt::Bucketsize,
    V::U8,
    Some(P::Number),
    "[bucketsize VALUE]",
);
pub const INITVAL: Keyword = kw(
    "initval",
    true,
    Opt::Initval,
    V::U32,
    Some(P::Hex),
    "[initval VALUE]",
);
pub const BITMASK: Keyword = kw(
    "bitmask",
    true,
    Opt::Bitmask,
    V::Bitmask,
    Some(P::Ip),
    "[bitmask bitmask]",
);

/// The option name ipset uses when it warns about an ignored option: the
/// first keyword (in ipset's keyword table order) that sets `opt`.
pub fn ignored_name(opt: Opt) -> &'static str {
    const ORDER: [Keyword; 10] = [
        FAMILY,
        INET,
        INET6,
        HASHSIZE,
        MAXELEM,
        PROBES,
        RESIZE,
        GC,
        IGNORED_FROM,
        IGNORED_TO,
    ];
    ORDER
        .iter()
        .find(|k| k.opt == opt)
        .map(|k| k.name)
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_bits_are_distinct_and_ordered() {
        let mut last = 0u8;
        for o in Opt::ALL {
            assert!(o as u8 > last, "{o:?}");
            last = o as u8;
        }
        assert_eq!(ignored_name(Opt::Probes), "probes");
        assert_eq!(ignored_name(Opt::Ip), "from");
    }
}
