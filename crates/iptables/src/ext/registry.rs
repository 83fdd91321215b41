//! The registry: which extension types exist, and enum dispatch over them.
//! Adding an extension = one module file under `matches/` or `targets/` plus
//! one line here.

use super::{Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::error::Result;

use super::matches as m;
use super::targets as t;

macro_rules! registry {
    (
        matches { $($mv:ident => $mty:ty),* $(,)? }
        targets { $($tv:ident => $tty:ty),* $(,)? }
    ) => {
        /// A match extension instance (`-m NAME ...`).
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Match { $($mv($mty)),* }

        impl Match {
            pub fn name(&self) -> &'static str {
                match self { $(Match::$mv(_) => <$mty as Ext>::NAME),* }
            }
            pub fn opts(&self) -> &'static [OptDef] {
                match self { $(Match::$mv(_) => <$mty as Ext>::OPTS),* }
            }
            pub fn parse(&mut self, c: &mut Call) -> Result<()> {
                match self { $(Match::$mv(x) => x.parse(c)),* }
            }
            pub fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
                match self { $(Match::$mv(x) => x.finish(seen, ctx)),* }
            }
            pub fn save(&self, ctx: &PrintCtx, out: &mut String) {
                match self { $(Match::$mv(x) => x.save(ctx, out)),* }
            }
            pub fn list(&self, ctx: &PrintCtx, out: &mut String) {
                match self { $(Match::$mv(x) => x.list(ctx, out)),* }
            }
        }

        /// A new match instance for `-m name` in this family, if supported.
        pub fn new_match(name: &str, ctx: &ParseCtx) -> Option<Match> {
            $(
                if (<$mty as Ext>::NAME == name || <$mty as Ext>::ALIASES.contains(&name))
                    && <$mty as Ext>::SUPPORTED
                    && <$mty as Ext>::FAMILY.has(ctx.family)
                {
                    return Some(Match::$mv(<$mty as Ext>::new(ctx)));
                }
            )*
            None
        }

        /// Names of all supported matches (for help and the conformance report).
        pub fn match_names() -> Vec<&'static str> {
            let mut v = Vec::new();
            $( if <$mty as Ext>::SUPPORTED { v.push(<$mty as Ext>::NAME); } )*
            v
        }

        /// A target extension instance (`-j NAME ...`), boxed inside the rule.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum TargetExt { $($tv($tty)),* }

        impl TargetExt {
            pub fn name(&self) -> &'static str {
                match self { $(TargetExt::$tv(_) => <$tty as Ext>::NAME),* }
            }
            pub fn opts(&self) -> &'static [OptDef] {
                match self { $(TargetExt::$tv(_) => <$tty as Ext>::OPTS),* }
            }
            pub fn parse(&mut self, c: &mut Call) -> Result<()> {
                match self { $(TargetExt::$tv(x) => x.parse(c)),* }
            }
            pub fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
                match self { $(TargetExt::$tv(x) => x.finish(seen, ctx)),* }
            }
            pub fn save(&self, ctx: &PrintCtx, out: &mut String) {
                match self { $(TargetExt::$tv(x) => x.save(ctx, out)),* }
            }
            pub fn list(&self, ctx: &PrintCtx, out: &mut String) {
                match self { $(TargetExt::$tv(x) => x.list(ctx, out)),* }
            }
        }

        /// A new target instance for `-j NAME` in this family, if supported.
        pub fn new_target(name: &str, ctx: &ParseCtx) -> Option<TargetExt> {
            $(
                if (<$tty as Ext>::NAME == name || <$tty as Ext>::ALIASES.contains(&name))
                    && <$tty as Ext>::SUPPORTED
                    && <$tty as Ext>::FAMILY.has(ctx.family)
                {
                    return Some(TargetExt::$tv(<$tty as Ext>::new(ctx)));
                }
            )*
            None
        }

        /// Names of all supported targets.
        pub fn target_names() -> Vec<&'static str> {
            let mut v = Vec::new();
            $( if <$tty as Ext>::SUPPORTED { v.push(<$tty as Ext>::NAME); } )*
            v
        }
    };
}

registry! {
    matches {
        Tcp => m::tcp::Tcp,
        Udp => m::udp::Udp,
        Icmp => m::icmp::Icmp,
        Icmp6 => m::icmp6::Icmp6,
        Sctp => m::sctp::Sctp,
        Multiport => m::multiport::Multiport,
        Conntrack => m::conntrack::Conntrack,
        State => m::state::State,
        Comment => m::comment::Comment,
        Limit => m::limit::Limit,
        Recent => m::recent::Recent,
        Addrtype => m::addrtype::Addrtype,
        Iprange => m::iprange::Iprange,
        Mac => m::mac::Mac,
        Mark => m::mark::Mark,
        Connmark => m::connmark::Connmark,
        Set => m::set::Set,
        Statistic => m::statistic::Statistic,
        Nfacct => m::nfacct::Nfacct,
        Rpfilter => m::rpfilter::Rpfilter,
        Ttl => m::ttl::Ttl,
        Hl => m::hl::Hl,
        Length => m::length::Length,
        Pkttype => m::pkttype::Pkttype,
        Owner => m::owner::Owner,
        Physdev => m::physdev::Physdev,
        Tos => m::tos::Tos,
        Dscp => m::dscp::Dscp,
        Ah => m::ah::Ah,
        Esp => m::esp::Esp,
        Frag => m::frag::Frag,
        Cpu => m::cpu::Cpu,
        Helper => m::helper::Helper,
        Quota => m::quota::Quota,
        Realm => m::realm::Realm,
        Devgroup => m::devgroup::Devgroup,
        Eui64 => m::eui64::Eui64,
        Ipcomp => m::ipcomp::Ipcomp,
        Tcpmss => m::tcpmss::Tcpmss,
        Ecn => m::ecn::Ecn,
        Cgroup => m::cgroup::Cgroup,
        Socket => m::socket::Socket,
        Osf => m::osf::Osf,
        Bpf => m::bpf::Bpf,
        Cluster => m::cluster::Cluster,
        Connlabel => m::connlabel::Connlabel,
        Connbytes => m::connbytes::Connbytes,
        Connlimit => m::connlimit::Connlimit,
        Hbh => m::hbh::Hbh,
        Dst => m::dst::Dst,
        Rt => m::rt::Rt,
        Mh => m::mh::Mh,
        Ipv6header => m::ipv6header::Ipv6header,
        Srh => m::srh::Srh,
        Policy => m::policy::Policy,
        String => m::string::StringMatch,
        Time => m::time::Time,
        U32 => m::u32::U32,
        Dccp => m::dccp::Dccp,
        Hashlimit => m::hashlimit::Hashlimit,
        Rateest => m::rateest::Rateest,
        Ipvs => m::ipvs::Ipvs,
    }
    targets {
        Trace => t::trace::Trace,
        Reject => t::reject::Reject,
        Log => t::log::Log,
        Nflog => t::nflog::Nflog,
        Masquerade => t::masquerade::Masquerade,
        Snat => t::snat::Snat,
        Dnat => t::dnat::Dnat,
        Redirect => t::redirect::Redirect,
        Mark => t::mark::Mark,
        Connmark => t::connmark::Connmark,
        Ct => t::ct::Ct,
        Notrack => t::notrack::Notrack,
        Tcpmss => t::tcpmss::Tcpmss,
        Checksum => t::checksum::Checksum,
        Audit => t::audit::Audit,
        Classify => t::classify::Classify,
        Connsecmark => t::connsecmark::Connsecmark,
        Dscp => t::dscp::Dscp,
        Tos => t::tos::Tos,
        Ecn => t::ecn::Ecn,
        Ttl => t::ttl::Ttl,
        Hl => t::ttl::Hl,
        Hmark => t::hmark::Hmark,
        Idletimer => t::idletimer::Idletimer,
        Led => t::led::Led,
        Netmap => t::netmap::Netmap,
        Nfqueue => t::nfqueue::Nfqueue,
        Rateest => t::rateest::Rateest,
        Secmark => t::secmark::Secmark,
        Set => t::set::SetTarget,
        Synproxy => t::synproxy::Synproxy,
        Tcpoptstrip => t::tcpoptstrip::Tcpoptstrip,
        Tee => t::tee::Tee,
        Tproxy => t::tproxy::Tproxy,
        Snpt => t::npt::Snpt,
        Dnpt => t::npt::Dnpt,
    }
}

/// Target names iptables knows (supported or not). A chain may not be named
/// like one, and `-j` of an unsupported one fails as an unknown target rather
/// than being taken for a chain.
pub const KNOWN_TARGETS: &[&str] = &[
    "ACCEPT",
    "DROP",
    "RETURN",
    "QUEUE",
    "CONTINUE",
    "AUDIT",
    "CHECKSUM",
    "CLASSIFY",
    "CLUSTERIP",
    "CONNMARK",
    "CONNSECMARK",
    "CT",
    "DNAT",
    "DNPT",
    "DSCP",
    "ECN",
    "HL",
    "HMARK",
    "IDLETIMER",
    "LED",
    "LOG",
    "MARK",
    "MASQUERADE",
    "NETMAP",
    "NFLOG",
    "NFQUEUE",
    "NOTRACK",
    "RATEEST",
    "REDIRECT",
    "REJECT",
    "SECMARK",
    "SET",
    "SNAT",
    "SNPT",
    "SYNPROXY",
    "TCPMSS",
    "TCPOPTSTRIP",
    "TEE",
    "TOS",
    "TPROXY",
    "TRACE",
    "TTL",
    "ULOG",
];
