//! The benchmark's own vocabulary: tool-neutral rules, rulesets and
//! operations, which each adapter turns into its commands. Pure data and
//! text generators; nothing here runs a program.

use std::collections::HashMap;
use std::fmt::Write;

/// The tables the suites use, with the iptables chain layout; and
/// kube-proxy's own table of its nftables mode (`ip kube-proxy`, no
/// iptables form; only nft lists it, for the kube suite's checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    Filter,
    Nat,
    KubeProxy,
}

/// The language a tool is driven in: iptables command lines and
/// iptables-restore input, or nftables' own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Iptables,
    Nft,
}

/// A built-in chain: name, nft hook, nft priority.
pub type BaseChain = (&'static str, &'static str, i32);

impl Table {
    pub fn name(self) -> &'static str {
        match self {
            Table::Filter => "filter",
            Table::Nat => "nat",
            Table::KubeProxy => workload::kube_nft::NFT_TABLE,
        }
    }

    /// Built-in chains in iptables' order, with the hook and priority an
    /// nftables base chain needs to stand in for them.
    pub fn builtins(self) -> &'static [BaseChain] {
        match self {
            Table::Filter => &[
                ("INPUT", "input", 0),
                ("FORWARD", "forward", 0),
                ("OUTPUT", "output", 0),
            ],
            Table::Nat => &[
                ("PREROUTING", "prerouting", -100),
                ("INPUT", "input", 100),
                ("OUTPUT", "output", -100),
                ("POSTROUTING", "postrouting", 100),
            ],
            // Its base chains are kube-proxy's own, written by its syncs.
            Table::KubeProxy => &[],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Accept,
    Return,
    Jump(String),
    Dnat([u8; 4], u16),
}

/// A rule of the shapes the studies used: optional source, destination,
/// TCP and destination port, and a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub chain: String,
    pub src: Option<[u8; 4]>,
    pub dst: Option<[u8; 4]>,
    pub tcp: bool,
    pub dport: Option<u16>,
    pub target: Target,
}

fn ip(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

impl Rule {
    /// The Cloud Foundry rule: `-s 10.a.b.c/32 -j ACCEPT` (the i-th address
    /// of `workload::cf_addr`).
    pub fn cf(chain: &str, i: usize) -> Rule {
        Rule {
            chain: chain.to_string(),
            src: Some(workload::cf_addr(i)),
            dst: None,
            tcp: false,
            dport: None,
            target: Target::Accept,
        }
    }

    /// The rule's words after `-A CHAIN`, as `iptables -S` prints them.
    pub fn iptables_args(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(a) = self.src {
            v.extend(["-s".into(), format!("{}/32", ip(a))]);
        }
        if let Some(a) = self.dst {
            v.extend(["-d".into(), format!("{}/32", ip(a))]);
        }
        if self.tcp || self.dport.is_some() {
            v.extend(["-p".into(), "tcp".into()]);
        }
        if let Some(p) = self.dport {
            v.extend(["-m".into(), "tcp".into(), "--dport".into(), p.to_string()]);
        }
        v.push("-j".into());
        match &self.target {
            Target::Accept => v.push("ACCEPT".into()),
            Target::Return => v.push("RETURN".into()),
            Target::Jump(c) => v.push(c.clone()),
            Target::Dnat(a, p) => v.extend([
                "DNAT".into(),
                "--to-destination".into(),
                format!("{}:{p}", ip(*a)),
            ]),
        }
        v
    }

    /// The rule's nftables statement words (after `add rule ip T CHAIN`).
    pub fn nft_args(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        if let Some(a) = self.src {
            v.extend(["ip".into(), "saddr".into(), ip(a)]);
        }
        if let Some(a) = self.dst {
            v.extend(["ip".into(), "daddr".into(), ip(a)]);
        }
        match self.dport {
            Some(p) => v.extend(["tcp".into(), "dport".into(), p.to_string()]),
            None if self.tcp => v.extend(["meta".into(), "l4proto".into(), "tcp".into()]),
            None => {}
        }
        match &self.target {
            Target::Accept => v.push("accept".into()),
            Target::Return => v.push("return".into()),
            Target::Jump(c) => v.extend(["jump".into(), c.clone()]),
            Target::Dnat(a, p) => v.extend(["dnat".into(), "to".into(), format!("{}:{p}", ip(*a))]),
        }
        v
    }
}

/// One table's content: user chains to declare and rules in order.
#[derive(Clone, Debug, PartialEq)]
pub struct TableSpec {
    pub table: Table,
    pub chains: Vec<String>,
    pub rules: Vec<Rule>,
}

impl TableSpec {
    pub fn new(table: Table) -> TableSpec {
        TableSpec {
            table,
            chains: Vec::new(),
            rules: Vec::new(),
        }
    }
}

/// Restore input: whole tables (replacing them) or, with `noflush`,
/// additions to what is there.
#[derive(Clone, Debug, PartialEq)]
pub struct Ruleset {
    pub tables: Vec<TableSpec>,
}

impl Ruleset {
    /// `iptables-restore` input. Without `noflush` every table also states
    /// its built-in chains (policy ACCEPT); with it only new user chains.
    pub fn iptables_text(&self, noflush: bool) -> String {
        let mut s = String::new();
        for t in &self.tables {
            let _ = writeln!(s, "*{}", t.table.name());
            if !noflush {
                for (c, _, _) in t.table.builtins() {
                    let _ = writeln!(s, ":{c} ACCEPT [0:0]");
                }
            }
            for c in &t.chains {
                let _ = writeln!(s, ":{c} - [0:0]");
            }
            for r in &t.rules {
                let _ = writeln!(s, "-A {} {}", r.chain, r.iptables_args().join(" "));
            }
            s.push_str("COMMIT\n");
        }
        s
    }

    /// `nft -f` input. Without `noflush` each table is created, deleted and
    /// written whole (one atomic replace, rules inside their chain blocks);
    /// with it, `add chain` and `add rule` lines.
    pub fn nft_text(&self, noflush: bool) -> String {
        let mut s = String::new();
        for t in &self.tables {
            let tn = t.table.name();
            if noflush {
                for c in &t.chains {
                    let _ = writeln!(s, "add chain ip {tn} {c}");
                }
                for r in &t.rules {
                    let _ = writeln!(s, "add rule ip {tn} {} {}", r.chain, r.nft_args().join(" "));
                }
                continue;
            }
            let _ = writeln!(s, "table ip {tn}\ndelete table ip {tn}\ntable ip {tn} {{");
            let kind = if t.table == Table::Nat {
                "nat"
            } else {
                "filter"
            };
            let mut by_chain: HashMap<&str, Vec<&Rule>> = HashMap::new();
            for r in &t.rules {
                by_chain.entry(r.chain.as_str()).or_default().push(r);
            }
            let mut chain = |s: &mut String, name: &str, head: Option<String>| {
                let _ = writeln!(s, "\tchain {name} {{");
                if let Some(h) = head {
                    let _ = writeln!(s, "\t\t{h}");
                }
                for r in by_chain.remove(name).unwrap_or_default() {
                    let _ = writeln!(s, "\t\t{}", r.nft_args().join(" "));
                }
                s.push_str("\t}\n");
            };
            for (c, hook, prio) in t.table.builtins() {
                let head = format!("type {kind} hook {hook} priority {prio}; policy accept;");
                chain(&mut s, c, Some(head));
            }
            for c in &t.chains {
                chain(&mut s, c, None);
            }
            s.push_str("}\n");
        }
        s
    }
}

/// A tool-neutral operation; adapters map it to commands.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Empty filter and nat tables with their built-in chains.
    Reset,
    Restore {
        rs: Ruleset,
        noflush: bool,
    },
    NewChain(Table, String),
    DeleteChain(Table, String),
    Append(Table, Rule),
    /// Insert at the top of the rule's chain.
    Insert(Table, Rule),
    /// Delete by rule spec.
    Delete(Table, Rule),
    /// One process per rule (the Cloud Foundry pattern).
    AppendEach(Table, Vec<Rule>),
    /// Flush one chain, or every chain of the table.
    Flush(Table, Option<String>),
    /// Print rule number k (1-based) of a chain.
    ListRule(Table, String, usize),
    /// Print one chain, or the whole table.
    List(Table, Option<String>),
    /// iptables-restore input as it is (kube-proxy's), with `--noflush`
    /// and `--counters` as given; for nft, `nft` as `nft -f` input (the
    /// same change as kube-proxy's nftables mode writes it), or no form
    /// when `None`.
    RestoreText {
        text: String,
        noflush: bool,
        counters: bool,
        nft: Option<String>,
    },
    /// An operation on an address set (the ipset suite); only tools that
    /// keep sets have a form for it.
    Set(super::sets::SetOp),
}

/// One process to start: argv and optional stdin text.
#[derive(Clone, Debug, PartialEq)]
pub struct Cmd {
    pub argv: Vec<String>,
    pub stdin: Option<String>,
}

impl Cmd {
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Cmd {
        Cmd {
            argv: argv.into_iter().map(Into::into).collect(),
            stdin: None,
        }
    }

    pub fn with_stdin(mut self, text: String) -> Cmd {
        self.stdin = Some(text);
        self
    }
}

/// A chain as a listing shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainInfo {
    pub name: String,
    pub builtin: bool,
    pub rules: usize,
}

/// What a listing (`-S`, `nft list`) shows, chains in order of appearance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    pub chains: Vec<ChainInfo>,
    index: HashMap<String, usize>,
}

impl Listing {
    /// The chain's entry, created on first sight.
    pub fn chain_mut(&mut self, name: &str) -> &mut ChainInfo {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                self.chains.push(ChainInfo {
                    name: name.to_string(),
                    builtin: false,
                    rules: 0,
                });
                self.index.insert(name.to_string(), self.chains.len() - 1);
                self.chains.len() - 1
            }
        };
        &mut self.chains[i]
    }

    pub fn get(&self, name: &str) -> Option<&ChainInfo> {
        self.index.get(name).map(|&i| &self.chains[i])
    }

    pub fn rules(&self) -> usize {
        self.chains.iter().map(|c| c.rules).sum()
    }

    pub fn user_chains(&self) -> usize {
        self.chains.iter().filter(|c| !c.builtin).count()
    }
}

/// The effect a measured step must have had (checked once, untimed).
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// The chain holds exactly this many rules.
    Rules(Table, String, usize),
    /// The chain exists (true) or not (false).
    Chain(Table, String, bool),
    /// The table has exactly this many user chains.
    UserChains(Table, usize),
    /// The table holds exactly this many rules.
    TotalRules(Table, usize),
    /// The step's own output shows exactly this many rules.
    Shows(usize),
    /// The step's own output shows at least this many rules.
    ShowsAtLeast(usize),
    /// The set holds exactly this many members.
    Members(String, usize),
    /// The inner check, made only for tools of this dialect (where the
    /// two keep different objects, as kube-proxy's two modes do).
    Only(Dialect, Box<Check>),
}

impl Check {
    /// The check a tool of dialect `d` makes: `None` when it is for the
    /// other dialect; never an [`Check::Only`].
    pub fn for_dialect(&self, d: Dialect) -> Option<&Check> {
        match self {
            Check::Only(x, c) if *x == d => c.for_dialect(d),
            Check::Only(..) => None,
            c => Some(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cf_restore_text_matches_the_workload_generator() {
        let mut t = TableSpec::new(Table::Filter);
        t.rules = (0..300).map(|i| Rule::cf("FORWARD", i)).collect();
        let rs = Ruleset { tables: vec![t] };
        assert_eq!(rs.iptables_text(false), workload::cloud_foundry(300));
    }

    #[test]
    fn rule_words() {
        let r = Rule {
            chain: "SEP".into(),
            src: None,
            dst: Some([10, 96, 0, 1]),
            tcp: true,
            dport: Some(80),
            target: Target::Dnat([10, 244, 0, 2], 8080),
        };
        assert_eq!(
            r.iptables_args().join(" "),
            "-d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.244.0.2:8080"
        );
        assert_eq!(
            r.nft_args().join(" "),
            "ip daddr 10.96.0.1 tcp dport 80 dnat to 10.244.0.2:8080"
        );
        let j = Rule {
            tcp: true,
            dport: None,
            target: Target::Jump("X".into()),
            ..r
        };
        assert_eq!(
            j.nft_args().join(" "),
            "ip daddr 10.96.0.1 meta l4proto tcp jump X"
        );
    }

    #[test]
    fn nft_text_whole_and_noflush() {
        let mut t = TableSpec::new(Table::Filter);
        t.chains.push("X".into());
        t.rules.push(Rule::cf("X", 0));
        t.rules.push(Rule::cf("FORWARD", 1));
        let rs = Ruleset { tables: vec![t] };
        let whole = rs.nft_text(false);
        assert!(whole.starts_with("table ip filter\ndelete table ip filter\ntable ip filter {\n"));
        assert!(whole.contains(
            "\tchain FORWARD {\n\t\ttype filter hook forward priority 0; policy accept;\n\t\tip saddr 10.0.0.2 accept\n\t}\n"
        ));
        assert!(whole.contains("\tchain X {\n\t\tip saddr 10.0.0.1 accept\n\t}\n"));
        assert_eq!(
            rs.nft_text(true),
            "add chain ip filter X\nadd rule ip filter X ip saddr 10.0.0.1 accept\nadd rule ip filter FORWARD ip saddr 10.0.0.2 accept\n"
        );
        let it = rs.iptables_text(true);
        assert_eq!(it, "*filter\n:X - [0:0]\n-A X -s 10.0.0.1/32 -j ACCEPT\n-A FORWARD -s 10.0.0.2/32 -j ACCEPT\nCOMMIT\n");
    }

    #[test]
    fn checks_for_a_dialect() {
        let plain = Check::Shows(1);
        let nft = Check::Only(Dialect::Nft, Box::new(Check::Shows(2)));
        let nested = Check::Only(Dialect::Nft, Box::new(nft.clone()));
        let cases = [
            (&plain, Dialect::Iptables, Some(&plain)),
            (&plain, Dialect::Nft, Some(&plain)),
            (&nft, Dialect::Iptables, None),
            (&nft, Dialect::Nft, Some(&Check::Shows(2))),
            (&nested, Dialect::Nft, Some(&Check::Shows(2))),
            (&nested, Dialect::Iptables, None),
        ];
        for (c, d, want) in cases {
            assert_eq!(c.for_dialect(d), want, "{c:?} for {d:?}");
        }
    }

    #[test]
    fn listing_counts() {
        let mut l = Listing::default();
        l.chain_mut("INPUT").builtin = true;
        l.chain_mut("X").rules += 2;
        l.chain_mut("Y");
        l.chain_mut("X").rules += 1;
        assert_eq!((l.rules(), l.user_chains()), (3, 2));
        assert_eq!(l.get("X").unwrap().rules, 3);
    }
}
