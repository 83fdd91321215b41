//! `iptables -h`: usage, commands and options in iptables' layout.
//! `{p}`, `{v4}` and `{v6}` in the lines are replaced when printed.

use ruleset::Family;

const USAGE: &[&str] = &[
    "Usage: {p} -[ACD] chain rule-specification [options]",
    "       {p} -I chain [rulenum] rule-specification [options]",
    "       {p} -R chain rulenum rule-specification [options]",
    "       {p} -D chain rulenum [options]",
    "       {p} -[LS] [chain [rulenum]] [options]",
    "       {p} -[FZ] [chain] [options]",
    "       {p} -[NX] chain",
    "       {p} -E old-chain-name new-chain-name",
    "       {p} -P chain target [options]",
    "       {p} -h (print this help information)",
];

const COMMANDS: &[&str] = &[
    "Commands:",
    "Either long or short options are allowed.",
    "  --append  -A chain\t\tAppend to chain",
    "  --check   -C chain\t\tCheck for the existence of a rule",
    "  --delete  -D chain\t\tDelete matching rule from chain",
    "  --delete  -D chain rulenum",
    "\t\t\t\tDelete rule rulenum (1 = first) from chain",
    "  --insert  -I chain [rulenum]",
    "\t\t\t\tInsert in chain as rulenum (default 1=first)",
    "  --replace -R chain rulenum",
    "\t\t\t\tReplace rule rulenum (1 = first) in chain",
    "  --list    -L [chain [rulenum]]",
    "\t\t\t\tList the rules in a chain or all chains",
    "  --list-rules -S [chain [rulenum]]",
    "\t\t\t\tPrint the rules in a chain or all chains",
    "  --flush   -F [chain]\t\tDelete all rules in  chain or all chains",
    "  --zero    -Z [chain [rulenum]]",
    "\t\t\t\tZero counters in chain or all chains",
    "  --new     -N chain\t\tCreate a new user-defined chain",
    "  --delete-chain",
    "            -X [chain]\t\tDelete a user-defined chain",
    "  --policy  -P chain target",
    "\t\t\t\tChange policy on chain to target",
    "  --rename-chain",
    "            -E old-chain new-chain",
    "\t\t\t\tChange chain name, (moving any references)",
    "",
    "Options:",
];

const OPTIONS: &[&str] = &[
    "    --ipv4\t-4\t\t{v4} (line is ignored by ip6tables-restore)",
    "    --ipv6\t-6\t\t{v6} (line is ignored by iptables-restore)",
    "[!] --protocol\t-p proto\tprotocol: by number or name, eg. `tcp'",
    "[!] --source\t-s address[/mask][...]",
    "\t\t\t\tsource specification",
    "[!] --destination -d address[/mask][...]",
    "\t\t\t\tdestination specification",
    "[!] --in-interface -i input name[+]",
    "\t\t\t\tnetwork interface name ([+] for wildcard)",
    " --jump\t-j target",
    "\t\t\t\ttarget for rule (may load target extension)",
    "  --goto      -g chain",
    "\t\t\t       jump to chain with no return",
    "  --match\t-m match",
    "\t\t\t\textended match (may load extension)",
    "  --numeric\t-n\t\tnumeric output of addresses and ports",
    "[!] --out-interface -o output name[+]",
    "\t\t\t\tnetwork interface name ([+] for wildcard)",
    "  --table\t-t table\ttable to manipulate (default: `filter')",
    "  --verbose\t-v\t\tverbose mode",
    "  --wait\t-w [seconds]\tmaximum wait to acquire xtables lock before give up",
    "  --line-numbers\t\tprint line numbers when listing",
    "  --exact\t-x\t\texpand numbers (display exact values)",
];

const V4_ONLY: &[&str] = &["[!] --fragment\t-f\t\tmatch second or further fragments only"];

const TAIL: &[&str] = &[
    "  --modprobe=<command>\t\ttry to insert modules using this command",
    "  --set-counters -c PKTS BYTES\tset the counter during insert/append",
    "[!] --version\t-V\t\tprint package version.",
];

/// The help text for `prog` (e.g. "iptables") of `family`.
pub fn help_text(prog: &str, family: Family) -> String {
    let (v4, v6) = if family == Family::Ipv4 {
        ("Nothing", "Error")
    } else {
        ("Error", "Nothing")
    };
    let mut s = format!("{prog} v{}\n\n", crate::VERSION);
    let v4_only: &[&str] = if family == Family::Ipv4 { V4_ONLY } else { &[] };
    let sections: [&[&str]; 5] = [USAGE, &[""], COMMANDS, OPTIONS, v4_only];
    for line in sections.iter().flat_map(|s| s.iter()).chain(TAIL) {
        s.push_str(
            &line
                .replace("{p}", prog)
                .replace("{v4}", v4)
                .replace("{v6}", v6),
        );
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_layout() {
        let h = help_text("ip6tables", Family::Ipv6);
        assert!(h.starts_with("ip6tables v1.8.11 (nfkeeper)\n\nUsage: ip6tables -[ACD] chain"));
        assert!(h.contains("\n       ip6tables -I chain [rulenum] rule-specification [options]\n"));
        assert!(h.contains("    --ipv4\t-4\t\tError (line is ignored by ip6tables-restore)\n"));
        assert!(!h.contains("--fragment"));
        assert!(help_text("iptables", Family::Ipv4).contains("[!] --fragment\t-f"));
    }
}
