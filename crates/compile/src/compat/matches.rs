//! Match extensions lowered through nft_compat (see [`super`]): one module
//! per extension, each giving the info of the revision iptables-nft loads
//! on this kernel (the highest revision both iptables 1.8 and the kernel
//! know), with the C layout (offsets) documented next to its encoder.
//!
//! Every match nfkeeper parses has an encoder except tcp, udp, icmp,
//! icmp6, comment, state, mark, connmark, iprange, mac, pkttype, length,
//! ttl, hl, tos, dscp, esp and frag, which always lower natively. Two
//! need what only the kernel knows: `-m set` names its set by index
//! ([`set::info`]), and a pinned `-m bpf` object is a file descriptor of
//! the loading process ([`bpf::info`] gives `None` for it).

use super::info::Info;
use super::CompatInfo;
use iptables::ext::Match;
use ruleset::Family;

pub mod addrtype;
pub mod ah;
pub mod bpf;
pub mod cgroup;
pub mod cluster;
pub mod connbytes;
pub mod connlabel;
pub mod connlimit;
pub mod conntrack;
pub mod cpu;
pub mod dccp;
pub mod devgroup;
pub mod ecn;
pub mod eui64;
pub mod hashlimit;
pub mod hbh;
pub mod helper;
pub mod ipcomp;
pub mod ipv6header;
pub mod ipvs;
pub mod limit;
pub mod mh;
pub mod multiport;
pub mod nfacct;
pub mod osf;
pub mod owner;
pub mod physdev;
pub mod policy;
pub mod quota;
pub mod rateest;
pub mod realm;
pub mod recent;
pub mod rpfilter;
pub mod rt;
pub mod sctp;
pub mod set;
pub mod socket;
pub mod srh;
pub mod statistic;
pub mod string;
pub mod tcpmss;
pub mod time;
pub mod u32;

/// A finished info.
pub(crate) fn compat(name: &'static str, rev: u32, i: Info) -> CompatInfo {
    CompatInfo {
        name,
        rev,
        info: i.into_vec(),
    }
}

/// The compat form of match `m` in `family`, if it has one (see the
/// module documentation for the ones that have none here).
pub fn info(m: &Match, family: Family) -> Option<CompatInfo> {
    Some(match m {
        Match::Addrtype(x) => addrtype::info(x),
        Match::Ah(x) => ah::info(x, family),
        Match::Bpf(x) => return bpf::info(x),
        Match::Cgroup(x) => cgroup::info(x),
        Match::Cluster(x) => cluster::info(x),
        Match::Connbytes(x) => connbytes::info(x),
        Match::Connlabel(x) => connlabel::info(x),
        Match::Connlimit(x) => connlimit::info(x),
        Match::Conntrack(x) => conntrack::info(x),
        Match::Cpu(x) => cpu::info(x),
        Match::Dccp(x) => dccp::info(x),
        Match::Devgroup(x) => devgroup::info(x),
        Match::Dst(x) => hbh::info("dst", &x.0),
        Match::Ecn(x) => ecn::info(x),
        Match::Eui64(_) => eui64::info(),
        Match::Hashlimit(x) => hashlimit::info(x),
        Match::Hbh(x) => hbh::info("hbh", &x.0),
        Match::Helper(x) => helper::info(x),
        Match::Ipcomp(x) => ipcomp::info(x),
        Match::Ipv6header(x) => ipv6header::info(x),
        Match::Ipvs(x) => ipvs::info(x),
        Match::Limit(x) => limit::info(x),
        Match::Mh(x) => mh::info(x),
        Match::Multiport(x) => multiport::info(x),
        Match::Nfacct(x) => nfacct::info(x),
        Match::Osf(x) => osf::info(x),
        Match::Owner(x) => owner::info(x),
        Match::Physdev(x) => physdev::info(x),
        Match::Policy(x) => policy::info(x),
        Match::Quota(x) => quota::info(x),
        Match::Rateest(x) => rateest::info(x),
        Match::Realm(x) => realm::info(x),
        Match::Recent(x) => recent::info(x),
        Match::Rpfilter(x) => rpfilter::info(x),
        Match::Rt(x) => rt::info(x),
        Match::Sctp(x) => sctp::info(x),
        Match::Socket(x) => socket::info(x),
        Match::Srh(x) => srh::info(x),
        Match::Statistic(x) => statistic::info(x),
        Match::String(x) => string::info(x),
        Match::Tcpmss(x) => tcpmss::info(x),
        Match::Time(x) => time::info(x),
        Match::U32(x) => u32::info(x),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::info;
    use iptables::ext::match_names;
    use iptables::parse::{parse, ParseOpts};
    use ruleset::{Family, TableKind};

    /// Matches that always lower natively and have no encoder.
    const NATIVE_ONLY: &[&str] = &[
        "tcp", "udp", "icmp", "icmp6", "comment", "state", "mark", "connmark", "iprange", "mac",
        "pkttype", "length", "ttl", "hl", "tos", "dscp", "esp", "frag",
    ];

    /// One rule per match with an encoder: (family, rule, kernel name,
    /// revision, info size before alignment). The kernel test compares the
    /// bytes; this table makes a new match without an encoder decision
    /// fail here.
    const SAMPLES: &[(Family, &str, &str, u32, usize)] = &[
        (
            Family::Ipv4,
            "-m addrtype --src-type LOCAL",
            "addrtype",
            1,
            8,
        ),
        (Family::Ipv4, "-p ah -m ah --ahspi 1", "ah", 0, 9),
        (Family::Ipv6, "-m ah --ahspi 1", "ah", 0, 14),
        (
            Family::Ipv4,
            "-m bpf --bytecode \"1,6 0 0 0\"",
            "bpf",
            1,
            528,
        ),
        (Family::Ipv4, "-m cgroup --cgroup 1", "cgroup", 2, 528),
        (
            Family::Ipv4,
            "-m cluster --cluster-total-nodes 2 --cluster-local-node 1 --cluster-hash-seed 1",
            "cluster",
            0,
            16,
        ),
        (
            Family::Ipv4,
            "-m connbytes --connbytes 1 --connbytes-dir both --connbytes-mode bytes",
            "connbytes",
            0,
            18,
        ),
        (Family::Ipv4, "-m connlabel --label 1", "connlabel", 0, 4),
        (
            Family::Ipv4,
            "-m connlimit --connlimit-above 1",
            "connlimit",
            1,
            32,
        ),
        (
            Family::Ipv4,
            "-m conntrack --ctstate NEW",
            "conntrack",
            3,
            162,
        ),
        (Family::Ipv4, "-m cpu --cpu 1", "cpu", 0, 8),
        (Family::Ipv4, "-p dccp -m dccp --sport 1", "dccp", 0, 15),
        (Family::Ipv4, "-m devgroup --src-group 1", "devgroup", 0, 20),
        (Family::Ipv6, "-m dst --dst-len 1", "dst", 0, 39),
        (Family::Ipv4, "-m ecn --ecn-ip-ect 1", "ecn", 0, 8),
        (Family::Ipv6, "-m eui64", "eui64", 0, 4),
        (
            Family::Ipv4,
            "-m hashlimit --hashlimit-upto 1/s --hashlimit-name a",
            "hashlimit",
            3,
            312,
        ),
        (Family::Ipv6, "-m hbh --hbh-len 1", "hbh", 0, 39),
        (Family::Ipv4, "-m helper --helper ftp", "helper", 0, 36),
        (Family::Ipv4, "-p ipcomp -m ipcomp", "ipcomp", 0, 12),
        (
            Family::Ipv6,
            "-m ipv6header --header hop",
            "ipv6header",
            0,
            3,
        ),
        (Family::Ipv4, "-m ipvs --ipvs", "ipvs", 0, 40),
        (Family::Ipv4, "-m limit --limit 1/s", "limit", 0, 40),
        (Family::Ipv6, "-p mh -m mh", "mh", 0, 3),
        (
            Family::Ipv4,
            "-p tcp -m multiport --ports 1",
            "multiport",
            1,
            48,
        ),
        (Family::Ipv4, "-m nfacct --nfacct-name a", "nfacct", 1, 40),
        (Family::Ipv4, "-p tcp -m osf --genre a", "osf", 0, 48),
        (Family::Ipv4, "-m owner --socket-exists", "owner", 1, 18),
        (Family::Ipv4, "-m physdev --physdev-is-in", "physdev", 0, 66),
        (
            Family::Ipv4,
            "-m policy --dir in --pol none",
            "policy",
            0,
            308,
        ),
        (Family::Ipv4, "-m quota --quota 1", "quota", 0, 24),
        (
            Family::Ipv4,
            "-m rateest --rateest a --rateest-lt --rateest-pps 1",
            "rateest",
            0,
            72,
        ),
        (Family::Ipv4, "-m realm --realm 1", "realm", 0, 12),
        (Family::Ipv4, "-m recent --set", "recent", 1, 228),
        (Family::Ipv4, "-m rpfilter", "rpfilter", 0, 1),
        (Family::Ipv6, "-m rt", "rt", 0, 277),
        (Family::Ipv4, "-p sctp -m sctp --sport 1", "sctp", 0, 292),
        (Family::Ipv4, "-m socket", "socket", 3, 2),
        (Family::Ipv6, "-m srh", "srh", 1, 108),
        (
            Family::Ipv4,
            "-m statistic --mode nth --every 2 --packet 0",
            "statistic",
            0,
            24,
        ),
        (
            Family::Ipv4,
            "-m string --string a --algo bm",
            "string",
            1,
            160,
        ),
        (Family::Ipv4, "-p tcp -m tcpmss --mss 1", "tcpmss", 0, 6),
        (Family::Ipv4, "-m time --timestart 1:00", "time", 0, 22),
        (Family::Ipv4, "-m u32 --u32 0=0", "u32", 0, 1982),
    ];

    #[test]
    fn every_match_has_an_encoder_or_lowers_natively() {
        let sampled: Vec<&str> = SAMPLES.iter().map(|s| s.2).collect();
        for name in match_names() {
            let has = sampled.contains(&name) || name == "set";
            assert!(
                has ^ NATIVE_ONLY.contains(&name),
                "-m {name}: an encoder (with a sample here) or native only, not both or neither"
            );
        }
        for &(family, rule, name, rev, size) in SAMPLES {
            // A user chain of mangle: no hook or table restrictions.
            let mut argv = vec!["-A", "user"];
            let words = iptables::parse::restore::tokenize(rule).unwrap();
            argv.extend(words.iter().map(String::as_str));
            let o = ParseOpts {
                family,
                restore: true,
                table: Some(TableKind::Mangle),
                prog: "iptables",
            };
            let r = parse(&argv, o).unwrap_or_else(|e| panic!("{rule}: {e:?}"));
            let m = r.rules[0].matches.last().expect("a match");
            let c = info(m, family).unwrap_or_else(|| panic!("{rule}: no info"));
            assert_eq!((c.name, c.rev), (name, rev), "{rule}");
            assert_eq!(c.info.len(), super::super::xt_align(size), "{rule}");
        }
    }

    #[test]
    fn set_and_pinned_bpf_need_the_kernel() {
        let o = ParseOpts {
            family: Family::Ipv4,
            restore: true,
            table: Some(TableKind::Filter),
            prog: "iptables",
        };
        for rule in [
            ["-A", "INPUT", "-m", "set", "--match-set", "a", "src"],
            ["-A", "INPUT", "-m", "bpf", "--object-pinned", "/", ""],
        ] {
            let argv: Vec<&str> = rule.iter().copied().filter(|w| !w.is_empty()).collect();
            let r = parse(&argv, o).unwrap();
            assert_eq!(info(&r.rules[0].matches[0], Family::Ipv4), None, "{argv:?}");
        }
    }
}
