//! Generators of rulesets (as iptables-restore text) and packets for the
//! differential checks: Cloud Foundry-shaped runs, kube-proxy-like service
//! dispatch, blocklists, and random mixes with prefixes, negations, port
//! ranges, jumps and returns; packets drawn from the same small value pools
//! (so they hit rules) plus the boundaries (prefix edges, range ends, ports
//! 0 and 65535, fragments).
//!
//! Deterministic: the same seed gives the same ruleset and packets.

use crate::{CtState, Packet, L4};
use iptables::rule::Iface;
use ruleset::Family;
use std::fmt::Write;

/// xorshift64*: small, deterministic, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// True with probability `pct` percent.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// The value pools rules and packets share.
const NETS: [[u8; 3]; 3] = [[10, 0, 0], [10, 0, 1], [192, 168, 7]];
const PORTS: [u16; 10] = [0, 1, 22, 53, 80, 443, 1024, 8080, 65534, 65535];
const IFACES: [&str; 4] = ["eth0", "eth1", "veth0", "veth12"];
const MARKS: [u32; 4] = [0, 1, 0x4000, 0x4001];
const USER_CHAINS: usize = 4;

/// An address from the pools, in the first 4 (IPv4) or 16 bytes: IPv4
/// `NET.H`, IPv6 `2001:db8:I::H` for the I-th net.
fn addr(r: &mut Rng, fam: Family) -> [u8; 16] {
    let i = r.below(NETS.len() as u64) as usize;
    let a = addr4(r, i);
    let mut out = [0u8; 16];
    match fam {
        Family::Ipv4 => out[..4].copy_from_slice(&a),
        Family::Ipv6 => {
            out[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
            out[5] = i as u8;
            out[15] = a[3];
        }
    }
    out
}

fn fmt(a: [u8; 16], fam: Family) -> String {
    match fam {
        Family::Ipv4 => format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]),
        Family::Ipv6 => std::net::Ipv6Addr::from(a).to_string(),
    }
}

/// A prefix length of the IPv4 pools (8..=32) for the family.
fn plen(p: u8, fam: Family) -> u8 {
    match fam {
        Family::Ipv4 => p,
        Family::Ipv6 => p + 96,
    }
}

fn addr4(r: &mut Rng, i: usize) -> [u8; 4] {
    let n = &NETS[i];
    // Host numbers cluster low so runs and packets collide often; 0 and 255
    // are prefix edges.
    let h = match r.below(10) {
        0 => 0,
        1 => 255,
        _ => r.below(16) as u8 + 1,
    };
    [n[0], n[1], n[2], h]
}

/// A random ruleset for the filter table (chains FORWARD and INPUT, user
/// chains U0..U3 that only jump forward, so there are no loops), in
/// ip6tables syntax for IPv6.
pub fn ruleset(r: &mut Rng, rules: usize) -> String {
    ruleset_of(r, rules, Family::Ipv4)
}

/// [`ruleset`] for either family.
pub fn ruleset_of(r: &mut Rng, rules: usize, fam: Family) -> String {
    let mut s = String::from("*filter\n");
    let pol = |r: &mut Rng| if r.pct(30) { "DROP" } else { "ACCEPT" };
    let _ = writeln!(s, ":INPUT {} [0:0]", pol(r));
    let _ = writeln!(s, ":FORWARD {} [0:0]", pol(r));
    s.push_str(":OUTPUT ACCEPT [0:0]\n");
    for i in 0..USER_CHAINS {
        let _ = writeln!(s, ":U{i} - [0:0]");
    }
    let mut left = rules;
    while left > 0 {
        // Chain index: 0 FORWARD, 1 INPUT, 2.. user chains.
        let c = r.below(2 + USER_CHAINS as u64) as usize;
        let chain = match c {
            0 => "FORWARD".to_string(),
            1 => "INPUT".to_string(),
            n => format!("U{}", n - 2),
        };
        let n = if r.pct(35) {
            (r.below(12) + 2) as usize
        } else {
            1
        };
        let n = n.min(left);
        left -= n;
        if n > 1 {
            run(r, &mut s, &chain, c, n, fam);
        } else {
            let body = random_rule(r, c, fam);
            let _ = writeln!(s, "-A {chain}{body}");
        }
    }
    s.push_str("COMMIT\n");
    s
}

/// A target a rule in chain index `c` may use (jumps only go forward).
fn target(r: &mut Rng, c: usize, verdict_only: bool) -> String {
    let user = c >= 2;
    let first_user = if user { c - 1 } else { 0 };
    let mut opts: Vec<String> = vec![" -j ACCEPT".into(), " -j DROP".into()];
    if user {
        opts.push(" -j RETURN".into());
    }
    if first_user < USER_CHAINS {
        let to = first_user + r.below((USER_CHAINS - first_user) as u64) as usize;
        opts.push(format!(" -j U{to}"));
        opts.push(format!(" -g U{to}"));
    }
    if !verdict_only {
        opts.push(String::new());
        opts.push(" -j LOG --log-prefix x".into());
        opts.push(format!(" -j MARK --set-xmark {:#x}/0xffff", r.pick(&MARKS)));
        opts.push(" -j REJECT".into());
    }
    r.pick(&opts).clone()
}

/// A run of `n` rules in one shape differing in one key (sometimes with a
/// repeated key, or with the verdict varying, to exercise splits and maps).
fn run(r: &mut Rng, s: &mut String, chain: &str, c: usize, n: usize, fam: Family) {
    let shape = r.below(10);
    let vary_verdict = r.pct(30);
    let fixed_target = target(r, c, vary_verdict);
    let proto = if r.pct(50) { "tcp" } else { "udp" };
    let other = fmt(addr(r, fam), fam);
    let (full, net) = (plen(32, fam), plen(24, fam));
    let port = *r.pick(&PORTS);
    for _ in 0..n {
        let t = if vary_verdict {
            target(r, c, true)
        } else {
            fixed_target.clone()
        };
        let a = fmt(addr(r, fam), fam);
        let p = *r.pick(&PORTS);
        let i = *r.pick(&IFACES);
        let body = match shape {
            0 => format!(" -s {a}/{full}{t}"),
            1 => format!(" -d {a}/{full} -p {proto} -m {proto} --dport {port}{t}"),
            2 => format!(" -s {other}/{full} -p {proto} -m {proto} --dport {p}{t}"),
            3 => format!(" -i {i} -d {other}/{net}{t}"),
            // Tuples: kube-proxy's dispatch (own comment per rule), then
            // address and port, then two addresses.
            4 => format!(
                " -d {a}/{full} -p {proto} -m comment --comment \"svc {p}\" -m {proto} --dport {p}{t}"
            ),
            5 => format!(" -s {a}/{full} -p {proto} -m {proto} --dport {p}{t}"),
            6 => format!(" -s {a}/{full} -d {}/{full}{t}", fmt(addr(r, fam), fam)),
            // Ranges: prefixes of the pools (nested, touching and apart),
            // port ranges from the pool's ports.
            7 => {
                let len = plen(*r.pick(&[8u8, 16, 23, 24, 25, 31, 32]), fam);
                format!(" -d {a}/{len}{t}")
            }
            8 => {
                let (x, y) = (*r.pick(&PORTS), *r.pick(&PORTS));
                let (lo, hi) = (x.min(y), x.max(y));
                format!(" -p {proto} -m {proto} --dport {lo}:{hi}{t}")
            }
            // Multiport lists (an element per port; ports shared between
            // rules split the run).
            _ => {
                let list: Vec<String> = (0..1 + r.below(4))
                    .map(|_| r.pick(&PORTS).to_string())
                    .collect();
                format!(" -p {proto} -m multiport --dports {}{t}", list.join(","))
            }
        };
        let _ = writeln!(s, "-A {chain}{body}");
    }
}

fn neg(r: &mut Rng, pct: u64) -> &'static str {
    if r.pct(pct) {
        " !"
    } else {
        ""
    }
}

fn random_rule(r: &mut Rng, c: usize, fam: Family) -> String {
    let mut s = String::new();
    let v6 = fam == Family::Ipv6;
    if r.pct(30) {
        let prefix = plen(*r.pick(&[8u8, 16, 23, 24, 31, 32]), fam);
        let _ = write!(s, "{} -s {}/{prefix}", neg(r, 20), fmt(addr(r, fam), fam));
    }
    if r.pct(30) {
        let prefix = plen(*r.pick(&[16u8, 24, 30, 32]), fam);
        let _ = write!(s, "{} -d {}/{prefix}", neg(r, 20), fmt(addr(r, fam), fam));
    }
    if r.pct(20) {
        let i = *r.pick(&IFACES);
        let i = if r.pct(30) { "veth+" } else { i };
        let _ = write!(s, "{} -i {i}", neg(r, 20));
    }
    if !v6 && r.pct(5) {
        let _ = write!(s, "{} -f", neg(r, 30));
    }
    let proto = match r.below(5) {
        0 | 1 => Some("tcp"),
        2 => Some("udp"),
        3 if v6 => Some("ipv6-icmp"),
        3 => Some("icmp"),
        _ => None,
    };
    if let Some(p) = proto {
        let inv = neg(r, 10);
        let _ = write!(s, "{inv} -p {p}");
        if inv.is_empty() {
            match p {
                "icmp" if r.pct(60) => {
                    let t = *r.pick(&[
                        "echo-request",
                        "echo-reply",
                        "3/1",
                        "destination-unreachable",
                        "any",
                    ]);
                    let _ = write!(s, " -m icmp{} --icmp-type {t}", neg(r, 20));
                }
                "ipv6-icmp" if r.pct(60) => {
                    let t = *r.pick(&[
                        "echo-request",
                        "echo-reply",
                        "1/3",
                        "destination-unreachable",
                    ]);
                    let _ = write!(s, " -m icmp6{} --icmpv6-type {t}", neg(r, 20));
                }
                "tcp" | "udp" => {
                    let mut m = String::new();
                    if r.pct(40) {
                        let _ = write!(m, "{} --dport {}", neg(r, 15), ports(r));
                    }
                    if r.pct(25) {
                        let _ = write!(m, "{} --sport {}", neg(r, 15), ports(r));
                    }
                    if p == "tcp" && r.pct(20) {
                        let _ = write!(m, "{} --tcp-flags SYN,ACK,RST SYN", neg(r, 20));
                    }
                    if !m.is_empty() {
                        let _ = write!(s, " -m {p}{m}");
                    }
                    if r.pct(15) {
                        let kind = *r.pick(&["--dports", "--sports"]);
                        let _ = write!(
                            s,
                            " -m multiport{} {kind} {},{}:{},{}",
                            neg(r, 20),
                            r.pick(&PORTS),
                            r.pick(&[10u16, 100, 1000]),
                            r.pick(&[2000u16, 8080, 65535]),
                            r.pick(&PORTS)
                        );
                    }
                }
                _ => {}
            }
        }
    }
    if r.pct(15) {
        let st = *r.pick(&[
            "NEW",
            "ESTABLISHED,RELATED",
            "INVALID",
            "UNTRACKED",
            "NEW,ESTABLISHED",
        ]);
        if r.pct(50) {
            let _ = write!(s, " -m state{} --state {st}", neg(r, 20));
        } else {
            let _ = write!(s, " -m conntrack{} --ctstate {st}", neg(r, 20));
        }
    }
    if r.pct(15) {
        let _ = write!(
            s,
            " -m mark{} --mark {:#x}/0xffff",
            neg(r, 20),
            r.pick(&MARKS)
        );
    }
    if r.pct(8) {
        let lo = r.below(100) as u16 + 20;
        let _ = write!(
            s,
            " -m length{} --length {lo}:{}",
            neg(r, 20),
            lo + r.below(200) as u16
        );
    }
    if r.pct(6) {
        let (m, op) = match (v6, r.below(3)) {
            (false, 0) => ("ttl", "--ttl-eq"),
            (false, 1) => ("ttl", "--ttl-lt"),
            (false, _) => ("ttl", "--ttl-gt"),
            (true, 0) => ("hl", "--hl-eq"),
            (true, 1) => ("hl", "--hl-lt"),
            (true, _) => ("hl", "--hl-gt"),
        };
        let _ = write!(s, " -m {m} {op} {}", r.pick(&[1u8, 64, 128]));
    }
    if r.pct(5) {
        s.push_str(" -m limit --limit 3/sec");
    }
    if r.pct(4) {
        s.push_str(" -m statistic --mode random --probability 0.5");
    }
    if r.pct(10) {
        s.push_str(" -m comment --comment gen");
    }
    s.push_str(&target(r, c, false));
    s
}

fn ports(r: &mut Rng) -> String {
    if r.pct(30) {
        let lo = *r.pick(&PORTS);
        let hi = lo.saturating_add(r.below(2000) as u16);
        format!("{lo}:{hi}")
    } else {
        r.pick(&PORTS).to_string()
    }
}

/// A random IPv4 packet as FORWARD sees it (both interfaces set).
pub fn packet(r: &mut Rng) -> Packet {
    packet_of(r, Family::Ipv4)
}

/// [`packet`] for either family (IPv6 packets are never fragments here).
pub fn packet_of(r: &mut Rng, fam: Family) -> Packet {
    let src = addr(r, fam);
    let dst = addr(r, fam);
    let port = |r: &mut Rng| {
        if r.pct(70) {
            *r.pick(&PORTS)
        } else {
            r.next_u64() as u16
        }
    };
    let l4 = match r.below(10) {
        0..=3 => L4::Tcp {
            sport: port(r),
            dport: port(r),
            flags: r.next_u64() as u8 & 0x3f,
        },
        4..=6 => L4::Udp {
            sport: port(r),
            dport: port(r),
        },
        7 | 8 => L4::Icmp {
            typ: match fam {
                Family::Ipv4 => *r.pick(&[0u8, 3, 8, 11]),
                Family::Ipv6 => *r.pick(&[1u8, 3, 128, 129]),
            },
            code: r.below(4) as u8,
        },
        _ => L4::Other(47),
    };
    let mut p = Packet {
        family: fam,
        src,
        dst,
        l4,
        frag_off: if fam == Family::Ipv4 && r.pct(5) {
            r.below(100) as u16 + 1
        } else {
            0
        },
        iif: Iface::new(r.pick::<&str>(&IFACES)).expect("short name"),
        oif: Iface::new(r.pick::<&str>(&IFACES)).expect("short name"),
        mark: if r.pct(80) {
            *r.pick(&MARKS)
        } else {
            r.next_u64() as u32
        },
        ct: *r.pick(&CtState::ALL),
        len: 0,
        ttl: *r.pick(&[0u8, 1, 2, 63, 64, 65, 127, 128, 129, 255]),
    };
    p.len = p.min_len() + r.below(300) as u16;
    p
}
