//! The rulesets of the packet suite, as restore text in each tool's dialect.
//!
//! Every variant puts N rules (or N set elements) that the measured traffic
//! does not match in front of an accepting rule, on a hook in the server's
//! namespace; the hook's policy is DROP, so traffic passes only when the
//! evaluation reaches the accepting rule at the end. The generated objects
//! are deterministic: rule k matches source address [`addr`]`(k)` and/or
//! destination port [`port`]`(k)`, never the traffic's own source
//! (198.18.0.1) or port ([`TRAFFIC_PORT`]). The last object matches the
//! [`Blocked`] probe, which must be dropped: that proves the rules sit in the
//! packet path.

/// Which text a tool reads: iptables-restore input, or an `nft -f` file
/// (the suites' one notion of it).
pub use crate::suites::model::Dialect;
use std::fmt::Write;
use std::net::Ipv4Addr;

/// The server's port for the measured traffic; outside the generated ports.
pub const TRAFFIC_PORT: u16 = 900;
/// Ports of one multiport rule (multiport's maximum).
pub const PORTS_PER_RULE: usize = 15;
/// The named set (nft) or ipset of the set variants.
pub const SET: &str = "pktbench";
/// The nfacct object the g) rules count into (made before the restore).
pub const NFACCT: &str = "pktbench";
/// The device of the nft ingress hook: the server's end of the veth pair.
pub const SERVER_DEV: &str = "vs";

/// Upper length bound of the first block of an f) row (above any packet
/// the suite sends; block b has this + b).
const RUN_BLOCK_BASE: usize = 1500;

/// First generated port; generated ports cycle through 1024..65024.
const PORT_BASE: usize = 1024;
const PORT_SPAN: usize = 64_000;

/// The transport of the measured traffic (port rules match it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proto {
    Tcp,
    Udp,
}

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
        }
    }
}

/// One row family of the suite: scenario (a–e) and the form of its rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// a) N rules `-s ADDR -j DROP`.
    Addr,
    /// b) N rules of 15 ports each (`-m multiport`; nft: anonymous sets).
    Multiport,
    /// b) one nft set of the same ports.
    PortSet,
    /// c) N rules `-s ADDR -p P --dport PORT -j DROP`.
    AddrPort,
    /// c) one nft set of `ipv4_addr . inet_service`.
    Concat,
    /// c) one ipset `hash:ip,port` and one `-m set` rule (iptables tools).
    Ipset,
    /// d) N rules `-s ADDR -j Jk`, each chain Jk dropping.
    Jumps,
    /// d) one nft verdict map of the same jumps.
    Vmap,
    /// e) blocklist in raw PREROUTING (iptables: N rules; nft: a set).
    BlockRaw,
    /// e) blocklist in filter INPUT (iptables: N rules; nft: a set).
    BlockInput,
    /// e) blocklist at nft netdev ingress (a set; nft only).
    BlockIngress,
    /// g) N rules whose match has no native nftables form, so nfkeeper and
    /// iptables-nft run the kernel's xtables module per rule (nft_compat):
    /// in turn ufw's limit (`-m recent --update`), kube-proxy's counter
    /// (`-m nfacct`) and a schedule (`-m time`), each before a `--dport`
    /// the traffic does not have. The traffic satisfies every compat match
    /// (one `-m recent --set` rule in front, ufw's other half, puts its
    /// source on the list), so each rule runs its module and fails only on
    /// the port. Iptables dialect only (nft has no such form).
    Compat,
    /// h) one ipset `hash:ip` of N members and one `-m set --match-set
    /// … src` rule (iptables tools); the nft form is e.input's native set.
    /// Unlike c.ipset, nfkeeper makes the set with its own ipset (see
    /// [`Install::own_set`]), so its rule is a native lookup of its own
    /// set while iptables-nft runs the kernel's ipset through xt `set`.
    Set,
    /// f) N rules `-s ADDR -m length --length 0:L -j DROP` in blocks of k
    /// that differ only in the address (L differs between blocks, so each
    /// block is one run of k when runs are compiled): what a run of k costs
    /// a packet as one set lookup against as k rules. Iptables dialect
    /// only; run on request (`--case f.`), not in the default plan.
    Runs(u8),
}

/// Run lengths of the f) rows.
pub const RUN_LENGTHS: [u8; 5] = [8, 16, 24, 32, 64];

/// Every variant, in report order.
pub const VARIANTS: [Variant; 18] = [
    Variant::Addr,
    Variant::Multiport,
    Variant::PortSet,
    Variant::AddrPort,
    Variant::Concat,
    Variant::Ipset,
    Variant::Jumps,
    Variant::Vmap,
    Variant::BlockRaw,
    Variant::BlockInput,
    Variant::BlockIngress,
    Variant::Compat,
    Variant::Set,
    Variant::Runs(RUN_LENGTHS[0]),
    Variant::Runs(RUN_LENGTHS[1]),
    Variant::Runs(RUN_LENGTHS[2]),
    Variant::Runs(RUN_LENGTHS[3]),
    Variant::Runs(RUN_LENGTHS[4]),
];

/// A probe the rules must drop: from `src` (through the server's probe
/// address) when the rules match sources, else from the client's own
/// address; to `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Blocked {
    pub src: Option<Ipv4Addr>,
    pub port: u16,
}

/// What to load into the server's namespace: an `ipset restore` input
/// first when the rules refer to a set, the nfacct object (`nfacct add`)
/// when they count into one, then the tool's ruleset.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Install {
    pub ipset: Option<String>,
    /// Who restores `ipset`: the tool under test's own ipset when it has
    /// one (nfkeeper's, whose sets its rules look up natively), else the
    /// ipset tool (`false`: always the ipset tool, the kernel's sets).
    pub own_set: bool,
    pub nfacct: Option<&'static str>,
    pub rules: String,
}

/// Source address of generated object `k`: 10.0.0.1, 10.0.0.2, …
pub fn addr(k: usize) -> Ipv4Addr {
    Ipv4Addr::from(0x0a00_0001 + k as u32)
}

/// Generated port `k`: 1024, 1025, … cycling below 65024.
pub fn port(k: usize) -> u16 {
    (PORT_BASE + k % PORT_SPAN) as u16
}

impl Variant {
    /// Stable id: scenario letter and form.
    pub fn id(self) -> &'static str {
        match self {
            Variant::Addr => "a.addr",
            Variant::Multiport => "b.multiport",
            Variant::PortSet => "b.set",
            Variant::AddrPort => "c.rules",
            Variant::Concat => "c.concat",
            Variant::Ipset => "c.ipset",
            Variant::Jumps => "d.jumps",
            Variant::Vmap => "d.vmap",
            Variant::BlockRaw => "e.raw",
            Variant::BlockInput => "e.input",
            Variant::BlockIngress => "e.ingress",
            Variant::Compat => "g.compat",
            Variant::Set => "h.set",
            Variant::Runs(8) => "f.runs8",
            Variant::Runs(24) => "f.runs24",
            Variant::Runs(16) => "f.runs16",
            Variant::Runs(32) => "f.runs32",
            Variant::Runs(_) => "f.runs64",
        }
    }

    /// Rows that run only when `--case` names them.
    pub fn on_request(self) -> bool {
        matches!(self, Variant::Runs(_))
    }

    /// Rows of the default plan that `--quick` keeps: all but h.set (the
    /// quick run has a `-m set` rule in c.ipset already, and h.set's dozen
    /// more set-ups would eat the 5-minute budget); `--case h.` still runs
    /// it quickly.
    pub fn in_quick(self) -> bool {
        self != Variant::Set
    }

    pub fn title(self) -> &'static str {
        match self {
            Variant::Addr => "N × -s ADDR -j DROP (INPUT)",
            Variant::Multiport => "N × 15-port multiport (INPUT)",
            Variant::PortSet => "one nft set of the N×15 ports (INPUT)",
            Variant::AddrPort => "N × -s ADDR --dport PORT (INPUT)",
            Variant::Concat => "nft set ip saddr . dport, N elements (INPUT)",
            Variant::Ipset => "ipset hash:ip,port, N elements (INPUT)",
            Variant::Jumps => "N × -s ADDR -j CHAIN (INPUT)",
            Variant::Vmap => "nft verdict map, N jumps (INPUT)",
            Variant::BlockRaw => "blocklist of N at raw PREROUTING (nft: set)",
            Variant::BlockInput => "blocklist of N at INPUT (nft: set)",
            Variant::BlockIngress => "blocklist of N at netdev ingress (nft set)",
            Variant::Compat => "N × recent / nfacct / time + --dport (INPUT)",
            Variant::Set => "ipset hash:ip of N members, one -m set rule (INPUT)",
            Variant::Runs(8) => "N rules in runs of 8 (INPUT)",
            Variant::Runs(24) => "N rules in runs of 24 (INPUT)",
            Variant::Runs(16) => "N rules in runs of 16 (INPUT)",
            Variant::Runs(32) => "N rules in runs of 32 (INPUT)",
            Variant::Runs(_) => "N rules in runs of 64 (INPUT)",
        }
    }

    /// Whether a tool of this dialect has the form.
    pub fn applies(self, d: Dialect) -> bool {
        match self {
            Variant::PortSet | Variant::Concat | Variant::Vmap | Variant::BlockIngress => {
                d == Dialect::Nft
            }
            Variant::Ipset | Variant::Compat | Variant::Runs(_) => d == Dialect::Iptables,
            _ => true,
        }
    }

    /// The probe the N rules must drop (none without rules).
    pub fn blocked(self, n: usize) -> Option<Blocked> {
        let last = n.checked_sub(1)?;
        Some(match self {
            Variant::Multiport | Variant::PortSet => Blocked {
                src: None,
                port: port(last * PORTS_PER_RULE),
            },
            Variant::Compat => Blocked {
                src: None,
                port: port(last),
            },
            Variant::AddrPort | Variant::Concat | Variant::Ipset => Blocked {
                src: Some(addr(last)),
                port: port(last),
            },
            _ => Blocked {
                src: Some(addr(last)),
                port: TRAFFIC_PORT,
            },
        })
    }

    /// The ruleset of N objects for traffic of `p`, or `None` when the
    /// dialect has no form of this variant.
    pub fn install(self, d: Dialect, p: Proto, n: usize) -> Option<Install> {
        if !self.applies(d) {
            return None;
        }
        Some(match d {
            Dialect::Iptables => iptables(self, p, n),
            Dialect::Nft => Install {
                ipset: None,
                own_set: false,
                nfacct: None,
                rules: nft(self, p, n),
            },
        })
    }
}

/// The 15 ports of multiport rule `k`.
fn rule_ports(k: usize) -> impl Iterator<Item = u16> {
    (0..PORTS_PER_RULE).map(move |j| port(k * PORTS_PER_RULE + j))
}

/// The distinct ports of N multiport rules, ascending.
fn all_ports(n: usize) -> Vec<u16> {
    let mut v: Vec<u16> = (0..n).flat_map(rule_ports).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn join<T: ToString>(it: impl Iterator<Item = T>, sep: &str) -> String {
    it.map(|x| x.to_string()).collect::<Vec<_>>().join(sep)
}

fn iptables(v: Variant, p: Proto, n: usize) -> Install {
    let proto = p.name();
    let (table, chain) = match v {
        Variant::BlockRaw => ("raw", "PREROUTING"),
        _ => ("filter", "INPUT"),
    };
    let mut s = format!("*{table}\n");
    if table == "raw" {
        s.push_str(":PREROUTING DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    } else {
        s.push_str(":INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
    }
    if v == Variant::Jumps {
        for k in 0..n {
            let _ = writeln!(s, ":J{k} - [0:0]");
        }
        for k in 0..n {
            let _ = writeln!(s, "-A J{k} -j DROP");
        }
    }
    let mut ipset = None;
    if v == Variant::Compat && n > 0 {
        let _ = writeln!(s, "-A {chain} -m recent --set {RECENT}");
    }
    for k in 0..n {
        let a = addr(k);
        let _ = match v {
            Variant::Multiport => writeln!(
                s,
                "-A {chain} -p {proto} -m multiport --dports {} -j DROP",
                join(rule_ports(k), ",")
            ),
            Variant::AddrPort => writeln!(
                s,
                "-A {chain} -s {a}/32 -p {proto} -m {proto} --dport {} -j DROP",
                port(k)
            ),
            Variant::Jumps => writeln!(s, "-A {chain} -s {a}/32 -j J{k}"),
            // Every length up to L matches the traffic; L names the block.
            Variant::Runs(len) => writeln!(
                s,
                "-A {chain} -s {a}/32 -m length --length 0:{} -j DROP",
                RUN_BLOCK_BASE + k / usize::from(len)
            ),
            Variant::Compat => writeln!(
                s,
                "-A {chain} -p {proto} {} -m {proto} --dport {} -j DROP",
                compat_match(k),
                port(k)
            ),
            Variant::Ipset | Variant::Set => Ok(()),
            _ => writeln!(s, "-A {chain} -s {a}/32 -j DROP"),
        };
    }
    if v == Variant::Ipset {
        let mut set = format!(
            "create {SET} hash:ip,port family inet hashsize 1024 maxelem {}\n",
            n.max(65_536)
        );
        for k in 0..n {
            let _ = writeln!(set, "add {SET} {},{proto}:{}", addr(k), port(k));
        }
        ipset = Some(set);
        let _ = writeln!(s, "-A {chain} -m set --match-set {SET} src,dst -j DROP");
    }
    if v == Variant::Set {
        let mut set = format!(
            "create {SET} hash:ip family inet hashsize 1024 maxelem {}\n",
            n.max(65_536)
        );
        for k in 0..n {
            let _ = writeln!(set, "add {SET} {}", addr(k));
        }
        ipset = Some(set);
        let _ = writeln!(s, "-A {chain} -m set --match-set {SET} src -j DROP");
    }
    let _ = writeln!(s, "-A {chain} -j ACCEPT\nCOMMIT");
    let nfacct = (v == Variant::Compat && n > 1).then_some(NFACCT);
    Install {
        ipset,
        own_set: v == Variant::Set,
        nfacct,
        rules: s,
    }
}

/// ufw's recent list options (its `limit` rules), shared by the `--set`
/// rule and the `--update` rules of g).
const RECENT: &str = "--name DEFAULT --mask 255.255.255.255 --rsource";

/// The compat match of g) rule `k`; every one matches the traffic: its
/// source is on the recent list (the `--set` rule in front), nfacct only
/// counts, and the schedule names every weekday.
fn compat_match(k: usize) -> String {
    match k % 3 {
        0 => format!("-m recent --update --seconds 30 {RECENT}"),
        1 => format!("-m nfacct --nfacct-name {NFACCT}"),
        _ => "-m time --weekdays Mon,Tue,Wed,Thu,Fri,Sat,Sun".into(),
    }
}

/// A named nft set (or map) block; elements only when there are some (an
/// empty `elements` list is a syntax error).
fn nft_set(kind: &str, name: &str, ty: &str, elems: &[String]) -> String {
    let mut s = format!("\t{kind} {name} {{\n\t\ttype {ty}\n");
    if !elems.is_empty() {
        let _ = writeln!(s, "\t\telements = {{ {} }}", elems.join(", "));
    }
    s.push_str("\t}\n");
    s
}

fn nft(v: Variant, p: Proto, n: usize) -> String {
    let proto = p.name();
    let addrs = || (0..n).map(|k| addr(k).to_string()).collect::<Vec<_>>();
    let (family, table, chain, hook) = match v {
        Variant::BlockRaw => ("ip", "raw", "PREROUTING", "prerouting priority -300".into()),
        Variant::BlockIngress => (
            "netdev",
            "blk",
            "INGRESS",
            format!("ingress device \"{SERVER_DEV}\" priority 0"),
        ),
        _ => ("ip", "filter", "INPUT", "input priority 0".into()),
    };
    let mut decls = String::new();
    let mut body: Vec<String> = Vec::new();
    match v {
        Variant::Addr => body.extend(addrs().into_iter().map(|a| format!("ip saddr {a} drop"))),
        Variant::Multiport => body.extend(
            (0..n).map(|k| format!("{proto} dport {{ {} }} drop", join(rule_ports(k), ", "))),
        ),
        Variant::PortSet => {
            let ports: Vec<String> = all_ports(n).iter().map(u16::to_string).collect();
            decls.push_str(&nft_set("set", SET, "inet_service", &ports));
            body.push(format!("{proto} dport @{SET} drop"));
        }
        Variant::AddrPort => body
            .extend((0..n).map(|k| format!("ip saddr {} {proto} dport {} drop", addr(k), port(k)))),
        Variant::Concat => {
            let e: Vec<String> = (0..n)
                .map(|k| format!("{} . {}", addr(k), port(k)))
                .collect();
            decls.push_str(&nft_set("set", SET, "ipv4_addr . inet_service", &e));
            body.push(format!("ip saddr . {proto} dport @{SET} drop"));
        }
        Variant::Jumps | Variant::Vmap => {
            // Jump targets are declared before the chain that refers to them.
            for k in 0..n {
                let _ = writeln!(decls, "\tchain J{k} {{\n\t\tdrop\n\t}}");
            }
            if v == Variant::Jumps {
                body.extend(
                    addrs()
                        .iter()
                        .enumerate()
                        .map(|(k, a)| format!("ip saddr {a} jump J{k}")),
                );
            } else {
                let e: Vec<String> = addrs()
                    .iter()
                    .enumerate()
                    .map(|(k, a)| format!("{a} : jump J{k}"))
                    .collect();
                decls.push_str(&nft_set("map", SET, "ipv4_addr : verdict", &e));
                body.push(format!("ip saddr vmap @{SET}"));
            }
        }
        // h) in nft is e.input's set: nft's own sets are the reference.
        Variant::BlockRaw | Variant::BlockInput | Variant::BlockIngress | Variant::Set => {
            decls.push_str(&nft_set("set", SET, "ipv4_addr", &addrs()));
            body.push(format!("ip saddr @{SET} drop"));
        }
        Variant::Ipset | Variant::Compat | Variant::Runs(_) => {
            unreachable!("no nft form (checked by applies)")
        }
    }
    body.push("accept".into());
    let mut s = format!("table {family} {table} {{\n{decls}");
    let _ = writeln!(
        s,
        "\tchain {chain} {{\n\t\ttype filter hook {hook}; policy drop;"
    );
    for r in body {
        let _ = writeln!(s, "\t\t{r}");
    }
    s.push_str("\t}\n}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every applicable (variant, dialect) at N = 3 against
    /// `testdata/packet/rules-n3.txt`; `NFK_BLESS=1` rewrites the file.
    #[test]
    fn golden_rulesets() {
        let mut got = String::new();
        for v in VARIANTS {
            for d in [Dialect::Iptables, Dialect::Nft] {
                let Some(i) = v.install(d, Proto::Tcp, 3) else {
                    continue;
                };
                let _ = writeln!(got, "## {} {d:?} tcp", v.id());
                if let Some(set) = &i.ipset {
                    let by = if i.own_set { "own" } else { "tool" };
                    let _ = write!(got, "# ipset ({by})\n{set}");
                }
                if let Some(acct) = i.nfacct {
                    let _ = writeln!(got, "# nfacct add {acct}");
                }
                got.push_str(&i.rules);
            }
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/packet/rules-n3.txt");
        if std::env::var_os("NFK_BLESS").is_some() {
            std::fs::write(path, &got).unwrap();
        }
        let want = std::fs::read_to_string(path).expect("golden file (NFK_BLESS=1 writes it)");
        assert_eq!(
            got, want,
            "regenerate with NFK_BLESS=1 after checking the diff"
        );
    }

    #[test]
    fn applicability() {
        let nft_only = [
            Variant::PortSet,
            Variant::Concat,
            Variant::Vmap,
            Variant::BlockIngress,
        ];
        for v in VARIANTS {
            let (ipt, nft) = (v.applies(Dialect::Iptables), v.applies(Dialect::Nft));
            let want = if nft_only.contains(&v) {
                (false, true)
            } else if matches!(v, Variant::Ipset | Variant::Compat | Variant::Runs(_)) {
                (true, false)
            } else {
                (true, true)
            };
            assert_eq!((ipt, nft), want, "{v:?}");
            assert_eq!(v.install(Dialect::Iptables, Proto::Udp, 1).is_some(), ipt);
            assert_eq!(v.install(Dialect::Nft, Proto::Udp, 1).is_some(), nft);
        }
    }

    /// (variant, N, expected probe) for the three probe shapes.
    #[test]
    fn blocked_probe_hits_the_last_object() {
        let cases = [
            (Variant::Addr, 0, None),
            (
                Variant::Addr,
                1000,
                Some(Blocked {
                    src: Some(Ipv4Addr::new(10, 0, 3, 232)),
                    port: TRAFFIC_PORT,
                }),
            ),
            (
                Variant::Multiport,
                2,
                Some(Blocked {
                    src: None,
                    port: 1039,
                }),
            ),
            (
                Variant::Ipset,
                10,
                Some(Blocked {
                    src: Some(Ipv4Addr::new(10, 0, 0, 10)),
                    port: 1033,
                }),
            ),
            // The last member: the traffic never matches, every packet
            // looks its source up.
            (
                Variant::Set,
                100_000,
                Some(Blocked {
                    src: Some(Ipv4Addr::new(10, 1, 134, 160)),
                    port: TRAFFIC_PORT,
                }),
            ),
        ];
        for (v, n, want) in cases {
            assert_eq!(v.blocked(n), want, "{v:?} N={n}");
        }
    }

    /// Every g) rule between the `--set` rule and the accepting one runs
    /// one compat match before its port, and the nfacct object is made
    /// exactly when a rule counts into it.
    #[test]
    fn compat_rules_run_a_module_before_the_port() {
        let mods = ["-m recent --update", "-m nfacct", "-m time"];
        for n in [0, 1, 2, 7] {
            let i = Variant::Compat
                .install(Dialect::Iptables, Proto::Udp, n)
                .unwrap();
            assert_eq!(i.nfacct.is_some(), n > 1, "N={n}");
            let rules: Vec<&str> = i.rules.lines().filter(|l| l.starts_with("-A")).collect();
            assert_eq!(rules.len(), n + 1 + usize::from(n > 0), "N={n}");
            if n > 0 {
                assert!(rules[0].contains("-m recent --set"), "{}", rules[0]);
            }
            assert_eq!(*rules.last().unwrap(), "-A INPUT -j ACCEPT");
            let body = if n > 0 { &rules[1..=n] } else { &[] };
            for (k, r) in body.iter().enumerate() {
                let m = r.find(mods[k % 3]).unwrap_or_else(|| panic!("{r}"));
                let dport = format!("-m udp --dport {} -j DROP", port(k));
                assert!(r[m..].ends_with(&dport), "{r}");
            }
        }
    }

    /// The traffic's port and source are never generated, at any size.
    #[test]
    fn generated_objects_never_match_the_traffic() {
        for k in (0..200_000).step_by(7) {
            assert_ne!(port(k), TRAFFIC_PORT);
            assert!((1024..65_024).contains(&port(k)), "{k}");
            assert_eq!(addr(k).octets()[0], 10, "{k}");
        }
        assert_eq!(port(PORT_SPAN), port(0), "ports cycle");
    }

    /// Sizes: rules (or elements) per variant, in both protocols.
    #[test]
    fn sizes_scale_with_n() {
        let n = 1000;
        let count = |text: &str, needle: &str| text.matches(needle).count();
        let cases: [(Variant, Dialect, &str, usize); 13] = [
            (Variant::Addr, Dialect::Iptables, "-j DROP", n),
            (Variant::Addr, Dialect::Nft, " drop\n", n),
            (Variant::Multiport, Dialect::Iptables, "--dports", n),
            (Variant::Jumps, Dialect::Iptables, "-A INPUT -s", n),
            (Variant::Jumps, Dialect::Nft, "\tchain J", n),
            (Variant::Vmap, Dialect::Nft, ": jump J", n),
            // Elements, plus the set's type and the rule.
            (Variant::Concat, Dialect::Nft, " . ", n + 2),
            (Variant::BlockIngress, Dialect::Nft, "10.0.", n),
            // N rules with a port, one of them a third of the time each.
            (Variant::Compat, Dialect::Iptables, "--dport", n),
            (Variant::Compat, Dialect::Iptables, "-m nfacct", n / 3),
            // The `--set` rule and a third of the N.
            (Variant::Compat, Dialect::Iptables, "-m recent", n / 3 + 2),
            // One set rule however many members; nft's set holds them.
            (
                Variant::Set,
                Dialect::Iptables,
                "--match-set pktbench src ",
                1,
            ),
            (Variant::Set, Dialect::Nft, "10.", n),
        ];
        for p in [Proto::Tcp, Proto::Udp] {
            for (v, d, needle, want) in cases {
                let i = v.install(d, p, n).unwrap();
                assert_eq!(count(&i.rules, needle), want, "{v:?} {d:?} {p:?}");
            }
            let set = Variant::Ipset.install(Dialect::Iptables, p, n).unwrap();
            assert!(!set.own_set, "c.ipset stays on the ipset tool");
            let text = set.ipset.unwrap();
            assert_eq!(count(&text, "\nadd "), n);
            assert!(
                text.contains(&format!(",{}:1024\n", p.name())),
                "{text:.200}"
            );
            let set = Variant::Set.install(Dialect::Iptables, p, n).unwrap();
            assert!(set.own_set, "h.set: the tool's own ipset");
            let text = set.ipset.unwrap();
            assert!(text.starts_with("create pktbench hash:ip "), "{text:.80}");
            assert_eq!(count(&text, "\nadd "), n);
            assert!(text.ends_with(&format!("add pktbench {}\n", addr(n - 1))));
        }
        // 10k multiport rules name more ports than exist: the set holds each
        // generated port once.
        let big = Variant::PortSet
            .install(Dialect::Nft, Proto::Tcp, 10_000)
            .unwrap();
        assert_eq!(count(&big.rules, ", ") + 1, PORT_SPAN);
        assert_eq!(all_ports(2).len(), 2 * PORTS_PER_RULE);
    }
}
