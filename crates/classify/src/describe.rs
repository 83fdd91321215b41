//! A packet described by iptables-style options (`-s`, `-d`, `-p`,
//! `--dport`, `--tcp-flags`, `-i`, `--ctstate`, …), as `nfkeeper trace`
//! takes it on its command line: the options parsed into the packet, the
//! hook it is traced at, and how stateful matches are taken. Pure (no I/O;
//! `--rules FILE` is only named here), so it is fuzzed on its own.

use crate::{CtState, Hook, Packet, L4};
use iptables::rule::Iface;
use ruleset::Family;

/// What the options describe.
#[derive(Clone, Debug)]
pub struct Opts {
    pub family: Family,
    /// `--hook`; [`hook_of`] picks one when absent.
    pub hook: Option<Hook>,
    /// Addresses as given (parsed by [`packet`]).
    pub src: Option<String>,
    pub dst: Option<String>,
    /// `-p` as given: a name or a number.
    pub proto: Option<String>,
    pub sport: u16,
    pub dport: u16,
    /// TCP flags bits (FIN 1, SYN 2, RST 4, PSH 8, ACK 16, URG 32).
    pub flags: u8,
    /// ICMP type and code, and whether `--icmp-type` gave them.
    pub icmp: (u8, u8),
    pub icmp_given: bool,
    pub iif: String,
    pub oif: String,
    pub mark: u32,
    pub ct: CtState,
    /// `--length` in bytes (at least the headers' length).
    pub len: Option<u16>,
    pub ttl: u8,
    pub fragment: bool,
    /// Stateful matches (limit, statistic) are taken to pass, else to fail.
    pub pass: bool,
    /// `--rules FILE`: an iptables-save file instead of the kernel.
    pub rules: Option<String>,
}

fn num<T: std::str::FromStr>(v: &str, what: &str) -> Result<T, String> {
    let parsed = match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16)
            .ok()
            .and_then(|x| x.to_string().parse().ok()),
        None => v.parse().ok(),
    };
    parsed.ok_or_else(|| format!("{what}: invalid value \"{v}\""))
}

fn tcp_flags(v: &str) -> Result<u8, String> {
    let mut f = 0u8;
    for name in v.split(',').filter(|s| !s.is_empty()) {
        f |= match name.to_ascii_uppercase().as_str() {
            "FIN" => 1,
            "SYN" => 2,
            "RST" => 4,
            "PSH" => 8,
            "ACK" => 16,
            "URG" => 32,
            "NONE" => 0,
            _ => return Err(format!("--tcp-flags: unknown flag \"{name}\"")),
        };
    }
    Ok(f)
}

/// Parse the options (every argument is one); the error names the
/// option and value as iptables would.
pub fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        family: Family::Ipv4,
        hook: None,
        src: None,
        dst: None,
        proto: None,
        sport: 40000,
        dport: 80,
        flags: 2,
        icmp: (8, 0),
        icmp_given: false,
        iif: String::new(),
        oif: String::new(),
        mark: 0,
        ct: CtState::New,
        len: None,
        ttl: 64,
        fragment: false,
        pass: true,
        rules: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("option \"{name}\" requires an argument"))
        };
        match a.as_str() {
            "-4" => o.family = Family::Ipv4,
            "-6" => o.family = Family::Ipv6,
            "--hook" => {
                let v = val(a)?;
                o.hook = Some(match v.to_ascii_lowercase().as_str() {
                    "prerouting" => Hook::Prerouting,
                    "input" => Hook::Input,
                    "forward" => Hook::Forward,
                    "output" => Hook::Output,
                    "postrouting" => Hook::Postrouting,
                    _ => return Err(format!("--hook: unknown hook \"{v}\"")),
                });
            }
            "-s" | "--source" => o.src = Some(val(a)?),
            "-d" | "--destination" => o.dst = Some(val(a)?),
            "-p" | "--protocol" => o.proto = Some(val(a)?),
            "--sport" => o.sport = num(&val(a)?, "--sport")?,
            "--dport" => o.dport = num(&val(a)?, "--dport")?,
            "--tcp-flags" => o.flags = tcp_flags(&val(a)?)?,
            "--icmp-type" | "--icmpv6-type" => {
                let v = val(a)?;
                let (t, c) = v.split_once('/').unwrap_or((&v, "0"));
                o.icmp = (num(t, a)?, num(c, a)?);
                o.icmp_given = true;
            }
            "-i" | "--in-interface" => o.iif = val(a)?,
            "-o" | "--out-interface" => o.oif = val(a)?,
            "--mark" => o.mark = num(&val(a)?, "--mark")?,
            "--ctstate" | "--state" => {
                let v = val(a)?;
                o.ct = match v.to_ascii_uppercase().as_str() {
                    "NEW" => CtState::New,
                    "ESTABLISHED" => CtState::Established,
                    "RELATED" => CtState::Related,
                    "INVALID" => CtState::Invalid,
                    "UNTRACKED" => CtState::Untracked,
                    _ => return Err(format!("--ctstate: unknown state \"{v}\"")),
                };
            }
            "--length" => o.len = Some(num(&val(a)?, "--length")?),
            "--ttl" | "--hl" => o.ttl = num(&val(a)?, "--ttl")?,
            "--fragment" | "-f" => o.fragment = true,
            "--stateful" => {
                o.pass = match val(a)?.as_str() {
                    "pass" => true,
                    "fail" => false,
                    v => return Err(format!("--stateful: \"{v}\" is neither pass nor fail")),
                }
            }
            "--rules" => o.rules = Some(val(a)?),
            other => return Err(format!("unknown option \"{other}\"")),
        }
    }
    Ok(o)
}

fn addr(v: Option<&str>, family: Family) -> Result<[u8; 16], String> {
    let mut out = [0u8; 16];
    let Some(v) = v else { return Ok(out) };
    match family {
        Family::Ipv4 => {
            let a: std::net::Ipv4Addr = v
                .parse()
                .map_err(|_| format!("host/network \"{v}\" not found"))?;
            out[..4].copy_from_slice(&a.octets());
        }
        Family::Ipv6 => {
            let a: std::net::Ipv6Addr = v
                .parse()
                .map_err(|_| format!("host/network \"{v}\" not found"))?;
            out = a.octets();
        }
    }
    Ok(out)
}

/// The packet the options describe; its length is at least what its
/// headers take.
pub fn packet(o: &Opts) -> Result<Packet, String> {
    let v6 = o.family == Family::Ipv6;
    let proto = o.proto.clone().unwrap_or_else(|| {
        if o.icmp_given {
            "icmp".into()
        } else {
            "tcp".into()
        }
    });
    let l4 = match proto.to_ascii_lowercase().as_str() {
        "tcp" | "6" => L4::Tcp {
            sport: o.sport,
            dport: o.dport,
            flags: o.flags,
        },
        "udp" | "17" => L4::Udp {
            sport: o.sport,
            dport: o.dport,
        },
        "icmp" | "1" if !v6 => L4::Icmp {
            typ: o.icmp.0,
            code: o.icmp.1,
        },
        "icmpv6" | "ipv6-icmp" | "58" if v6 => L4::Icmp {
            typ: if o.icmp_given { o.icmp.0 } else { 128 },
            code: o.icmp.1,
        },
        p => L4::Other(num(p, "-p").map_err(|_| format!("unknown protocol \"{p}\" specified"))?),
    };
    let iface =
        |s: &str| Iface::new(s).ok_or_else(|| format!("interface name \"{s}\" is too long"));
    let mut p = Packet {
        family: o.family,
        src: addr(o.src.as_deref(), o.family)?,
        dst: addr(o.dst.as_deref(), o.family)?,
        l4,
        frag_off: u16::from(o.fragment && !v6),
        iif: iface(&o.iif)?,
        oif: iface(&o.oif)?,
        mark: o.mark,
        ct: o.ct,
        len: 0,
        ttl: o.ttl,
    };
    p.len = o.len.unwrap_or(0).max(p.min_len());
    Ok(p)
}

/// The hook: `--hook`, else forward with both interfaces, output with
/// only `-o`, else input.
pub fn hook_of(o: &Opts) -> Hook {
    o.hook
        .unwrap_or(match (o.iif.is_empty(), o.oif.is_empty()) {
            (false, false) => Hook::Forward,
            (true, false) => Hook::Output,
            _ => Hook::Input,
        })
}
