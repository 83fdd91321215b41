//! Generated filter rulesets (iptables-restore text) and the probe packets
//! that exercise them, from a seed: the same seed gives the same ruleset
//! and probes on every machine (our own PRNG, no crate).
//!
//! Shape: OUTPUT and INPUT plus 3–6 user chains; each chain is a sequence
//! of blocks — a long run of one key kind nfkeeper compiles (address,
//! port, address+port, address+address, prefix, port range, input
//! interface), with one target (a set) or mixed verdicts (a map), or a
//! few odd rules (no target, protocol only, negations, wildcards,
//! RETURN) — and jumps and gotos to higher-numbered user chains only (no
//! loops). Keys come from small pools, so runs overlap and touch.
//!
//! Address plan (see `Netns` in main.rs): destinations are local (10/8 is
//! a local route on lo), sources are forged from 172.16/12, which has no
//! route: whatever the kernel would answer (RST, port unreachable, echo
//! reply) cannot be routed and never reaches OUTPUT.

use std::fmt::Write as _;

/// splitmix64: small, fast, and fully determined by the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x005e_ed0f_d1ff)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.range(0, v.len() as u64 - 1) as usize]
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.range(0, 99) < percent
    }
}

/// Source pool: 172.16.0.0/12 hosts `172.16.X.Y`, X in 0..4, Y in 0..=255.
fn src(rng: &mut Rng) -> u32 {
    u32::from_be_bytes([172, 16, rng.range(0, 3) as u8, rng.range(0, 40) as u8 * 6])
}

/// Destination pool: local addresses `10.0.X.Y`.
fn dst(rng: &mut Rng) -> u32 {
    u32::from_be_bytes([10, 0, rng.range(0, 3) as u8, rng.range(0, 40) as u8 * 6])
}

fn port(rng: &mut Rng) -> u16 {
    *rng.pick(&[
        0, 1, 22, 53, 79, 80, 81, 443, 1023, 1024, 8080, 65534, 65535,
    ]) + if rng.chance(50) {
        rng.range(0, 40) as u16 * 3
    } else {
        0
    }
}

fn ip(a: u32) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

/// A prefix around a pool address: `(network, length)`.
fn net(rng: &mut Rng, base: u32) -> (u32, u32) {
    let len = *rng.pick(&[16, 20, 22, 24, 26, 28, 29, 30, 31, 32]) as u32;
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    (base & mask, len)
}

/// Interface names: `lo` is where every probe goes; the rest never match.
const IFACES: &[&str] = &[
    "lo", "eth0", "eth1", "veth7", "wg0", "br-lan", "lo0", "dummy3",
];

/// The key kinds nfkeeper compiles into sets and maps.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Src,
    Dst,
    Dport,
    Iif,
    SrcDport,
    DstDport,
    SrcDst,
    SrcNet,
    DstNet,
    DportRange,
}

const KINDS: &[Kind] = &[
    Kind::Src,
    Kind::Dst,
    Kind::Dport,
    Kind::Iif,
    Kind::SrcDport,
    Kind::DstDport,
    Kind::SrcDst,
    Kind::SrcNet,
    Kind::DstNet,
    Kind::DportRange,
];

/// Everything probes should hit: each key value, and the values just
/// around each prefix and range edge.
#[derive(Default)]
pub struct Keys {
    pub srcs: Vec<u32>,
    pub dsts: Vec<u32>,
    pub ports: Vec<u16>,
}

impl Keys {
    fn edges(&mut self, is_src: bool, net: u32, len: u32) {
        let last = net | (u32::MAX.checked_shr(len).unwrap_or(0));
        let v = if is_src {
            &mut self.srcs
        } else {
            &mut self.dsts
        };
        v.extend([net.wrapping_sub(1), net, last, last.wrapping_add(1)]);
    }
}

/// One generated ruleset.
pub struct Ruleset {
    /// iptables-restore input (`*filter` … `COMMIT`).
    pub restore: String,
    pub rules: usize,
    pub keys: Keys,
}

/// The verdict part of a run's rule; `mixed`: vary it (a map run).
/// `later`: the user chains this chain may jump to.
fn verdict(rng: &mut Rng, mixed: bool, fixed: &str, later: &[String]) -> String {
    if !mixed {
        return fixed.to_string();
    }
    let mut v = vec!["-j ACCEPT".to_string(), "-j DROP".to_string()];
    v.extend(later.iter().map(|c| format!("-j {c}")));
    v.extend(later.iter().map(|c| format!("-j {c}")));
    rng.pick(&v).clone()
}

/// A block of odd rules between runs.
fn odd(rng: &mut Rng, chain: &str, later: &[String], keys: &mut Keys, out: &mut String) {
    // Built-in chains mostly hand packets on to the user chains, so that
    // those see traffic too.
    let builtin = chain.chars().all(|c| c.is_ascii_uppercase());
    if builtin && rng.chance(70) {
        let _ = writeln!(out, "-A {chain} -j {}", rng.pick(later));
    }
    for _ in 0..rng.range(1, 4) {
        let s = src(rng);
        let d = dst(rng);
        let p = port(rng);
        keys.srcs.push(s);
        keys.dsts.push(d);
        keys.ports.push(p);
        let iface = if chain == "OUTPUT" { "-o" } else { "-i" };
        let line = match rng.range(0, 12) {
            0 => format!("-s {}", ip(s)),
            1 => "-p icmp -j ACCEPT".to_string(),
            2 => format!("-p udp ! --dport {p} -j DROP"),
            3 => format!("! -s 172.16.{}.0/24 -p tcp -j ACCEPT", rng.range(0, 3)),
            // An unconditional RETURN ends a built-in chain's traversal.
            4 if !builtin => "-j RETURN".to_string(),
            5 => format!("-d {} -j RETURN", ip(d)),
            6 => format!("{iface} {} -j DROP", rng.pick(&["lo+", "eth+", "l+"])),
            7 => format!("-p tcp --tcp-flags SYN,ACK SYN --dport {p} -j DROP"),
            8 => format!("-p tcp --sport {p} -j ACCEPT"),
            9 if !later.is_empty() => format!("-s {} -g {}", ip(s), rng.pick(later)),
            10 if !later.is_empty() => format!("-p udp -j {}", rng.pick(later)),
            11 if !later.is_empty() => format!("-g {}", rng.pick(later)),
            _ => format!("-d {}/30", ip(d & !3)),
        };
        let _ = writeln!(out, "-A {chain} {line}");
    }
}

/// A run of `n` rules of one key kind.
fn run(
    rng: &mut Rng,
    chain: &str,
    later: &[String],
    kind: Kind,
    n: u64,
    keys: &mut Keys,
    out: &mut String,
) -> usize {
    let mixed = rng.chance(50);
    // Mostly rules that only count, so packets go on to the rest.
    let fixed = rng.pick(&["-j ACCEPT", "-j DROP", "", "", ""]).to_string();
    let proto = *rng.pick(&["tcp", "udp"]);
    let mut lo_port = rng.range(0, 400) as u32 * 100;
    let mut written = 0;
    for _ in 0..n {
        let v = verdict(rng, mixed, &fixed, later);
        let (s, d, p) = (src(rng), dst(rng), port(rng));
        let body = match kind {
            Kind::Src => format!("-s {}", ip(s)),
            Kind::Dst => format!("-d {}", ip(d)),
            Kind::Dport => format!("-p {proto} --dport {p}"),
            Kind::Iif => {
                let name = rng.pick(IFACES);
                // -i has no value in OUTPUT (iptables refuses it there).
                if chain == "OUTPUT" {
                    format!("-o {name}")
                } else {
                    format!("-i {name}")
                }
            }
            Kind::SrcDport => format!("-s {} -p {proto} --dport {p}", ip(s)),
            Kind::DstDport => format!("-d {} -p {proto} --dport {p}", ip(d)),
            Kind::SrcDst => format!("-s {} -d {}", ip(s), ip(d)),
            Kind::SrcNet | Kind::DstNet => {
                let is_src = matches!(kind, Kind::SrcNet);
                let (base, flag) = if is_src { (s, "-s") } else { (d, "-d") };
                let (net, len) = net(rng, base);
                keys.edges(is_src, net, len);
                format!("{flag} {}/{len}", ip(net))
            }
            Kind::DportRange => {
                // Touching, overlapping or apart from the previous range.
                let width = rng.range(0, 300) as u32;
                let lo = lo_port.min(65535);
                let hi = (lo + width).min(65535);
                lo_port = match rng.range(0, 2) {
                    0 => hi + 1,
                    1 => lo + width / 2,
                    _ => hi + 1 + rng.range(1, 50) as u32,
                };
                keys.ports
                    .extend([lo.saturating_sub(1), lo, hi, (hi + 1).min(65535)].map(|x| x as u16));
                format!("-p {proto} --dport {lo}:{hi}")
            }
        };
        keys.srcs.push(s);
        keys.dsts.push(d);
        keys.ports.push(p);
        let _ = writeln!(out, "-A {chain} {body} {v}");
        written += 1;
    }
    written
}

/// The ruleset for `seed`.
pub fn ruleset(seed: u64) -> Ruleset {
    let mut rng = Rng::new(seed);
    let users = rng.range(3, 6) as usize;
    // Chain order for jumps: OUTPUT and INPUT first, then U0..; a chain
    // only jumps to chains after it, so there are no loops.
    let mut chains: Vec<String> = vec!["OUTPUT".into(), "INPUT".into()];
    chains.extend((0..users).map(|i| format!("U{i}")));
    let mut out = String::from("*filter\n");
    for c in ["INPUT", "FORWARD", "OUTPUT"] {
        let p = if c != "FORWARD" && rng.chance(30) {
            "DROP"
        } else {
            "ACCEPT"
        };
        let _ = writeln!(out, ":{c} {p} [0:0]");
    }
    for c in &chains[2..] {
        let _ = writeln!(out, ":{c} - [0:0]");
    }
    let mut keys = Keys::default();
    let mut rules = 0;
    for (me, chain) in chains.iter().enumerate() {
        // OUTPUT and INPUT may jump to every user chain, U<i> only to
        // U<j>, j > i.
        let later = &chains[(me + 1).max(2)..];
        let blocks = if me < 2 {
            rng.range(3, 6)
        } else {
            rng.range(1, 4)
        };
        for _ in 0..blocks {
            let kind = *rng.pick(KINDS);
            let n = rng.range(4, 40);
            rules += run(&mut rng, chain, later, kind, n, &mut keys, &mut out);
            let before = out.len();
            odd(&mut rng, chain, later, &mut keys, &mut out);
            rules += out[before..].lines().count();
        }
    }
    out.push_str("COMMIT\n");
    Ruleset {
        restore: out,
        rules,
        keys,
    }
}

/// One probe packet.
#[derive(Clone, Debug)]
pub struct Probe {
    /// 6 (TCP), 17 (UDP) or 1 (ICMP).
    pub proto: u8,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    /// TCP flags, or the ICMP type.
    pub flags: u8,
    /// Payload bytes after the transport header (besides the probe id).
    pub pad: usize,
}

/// `n` probes over the ruleset's keys and their edges, plus a few random
/// ones.
pub fn probes(seed: u64, keys: &Keys, n: usize) -> Vec<Probe> {
    let mut rng = Rng::new(seed.wrapping_mul(31).wrapping_add(7));
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let proto = *rng.pick(&[6u8, 6, 17, 17, 1]);
        let src_ = if rng.chance(85) {
            *rng.pick(&keys.srcs)
        } else {
            src(&mut rng)
        };
        // Destinations stay local (10/8): an edge outside it is moved in.
        let mut dst_ = if rng.chance(85) {
            *rng.pick(&keys.dsts)
        } else {
            dst(&mut rng)
        };
        if dst_ >> 24 != 10 {
            dst_ = (10 << 24) | (dst_ & 0x00ff_ffff);
        }
        let sport = if rng.chance(30) {
            *rng.pick(&keys.ports)
        } else {
            rng.range(1024, 65535) as u16
        };
        let dport = if rng.chance(85) {
            *rng.pick(&keys.ports)
        } else {
            port(&mut rng)
        };
        let flags = match proto {
            6 => *rng.pick(&[0x02u8, 0x12, 0x10, 0x04, 0x11]),
            1 => *rng.pick(&[8u8, 0, 3, 11]),
            _ => 0,
        };
        // Sources outside the forged range would be routable (answers
        // would come back through OUTPUT): keep them in 172.16/12.
        let src_ = if src_ >> 20 == (172 << 4) | 1 {
            src_
        } else {
            (172 << 24) | (16 << 16) | (src_ & 0xffff)
        };
        v.push(Probe {
            proto,
            src: src_,
            dst: dst_,
            sport,
            dport,
            flags,
            pad: rng.range(0, 64) as usize,
        });
    }
    v
}
