//! `iptables -h`: usage, commands and options in iptables' layout.

use ruleset::Family;

/// The help text for `prog` (e.g. "iptables") of `family`.
pub fn help_text(prog: &str, family: Family) -> String {
    let v = crate::VERSION;
    let (v4, v6) = if family == Family::Ipv4 {
        ("Nothing", "Error")
    } else {
        ("Error", "Nothing")
    };
    let mut s = format!(
        "{prog} v{v}\n\n\
Usage: {prog} -[ACD] chain rule-specification [options]\n\
       {prog} -I chain [rulenum] rule-specification [options]\n\
       {prog} -R chain rulenum rule-specification [options]\n\
       {prog} -D chain rulenum [options]\n\
       {prog} -[LS] [chain [rulenum]] [options]\n\
       {prog} -[FZ] [chain] [options]\n\
       {prog} -[NX] chain\n\
       {prog} -E old-chain-name new-chain-name\n\
       {prog} -P chain target [options]\n\
       {prog} -h (print this help information)\n\n"
    );
    s.push_str(
        "Commands:\n\
Either long or short options are allowed.\n\
  --append  -A chain\t\tAppend to chain\n\
  --check   -C chain\t\tCheck for the existence of a rule\n\
  --delete  -D chain\t\tDelete matching rule from chain\n\
  --delete  -D chain rulenum\n\
\t\t\t\tDelete rule rulenum (1 = first) from chain\n\
  --insert  -I chain [rulenum]\n\
\t\t\t\tInsert in chain as rulenum (default 1=first)\n\
  --replace -R chain rulenum\n\
\t\t\t\tReplace rule rulenum (1 = first) in chain\n\
  --list    -L [chain [rulenum]]\n\
\t\t\t\tList the rules in a chain or all chains\n\
  --list-rules -S [chain [rulenum]]\n\
\t\t\t\tPrint the rules in a chain or all chains\n\
  --flush   -F [chain]\t\tDelete all rules in  chain or all chains\n\
  --zero    -Z [chain [rulenum]]\n\
\t\t\t\tZero counters in chain or all chains\n\
  --new     -N chain\t\tCreate a new user-defined chain\n\
  --delete-chain\n\
            -X [chain]\t\tDelete a user-defined chain\n\
  --policy  -P chain target\n\
\t\t\t\tChange policy on chain to target\n\
  --rename-chain\n\
            -E old-chain new-chain\n\
\t\t\t\tChange chain name, (moving any references)\n\n\
Options:\n",
    );
    s.push_str(&format!(
        "    --ipv4\t-4\t\t{v4} (line is ignored by ip6tables-restore)\n\
    --ipv6\t-6\t\t{v6} (line is ignored by iptables-restore)\n\
[!] --protocol\t-p proto\tprotocol: by number or name, eg. `tcp'\n\
[!] --source\t-s address[/mask][...]\n\
\t\t\t\tsource specification\n\
[!] --destination -d address[/mask][...]\n\
\t\t\t\tdestination specification\n\
[!] --in-interface -i input name[+]\n\
\t\t\t\tnetwork interface name ([+] for wildcard)\n \
--jump\t-j target\n\
\t\t\t\ttarget for rule (may load target extension)\n  \
--goto      -g chain\n\
\t\t\t       jump to chain with no return\n  \
--match\t-m match\n\
\t\t\t\textended match (may load extension)\n  \
--numeric\t-n\t\tnumeric output of addresses and ports\n\
[!] --out-interface -o output name[+]\n\
\t\t\t\tnetwork interface name ([+] for wildcard)\n  \
--table\t-t table\ttable to manipulate (default: `filter')\n  \
--verbose\t-v\t\tverbose mode\n  \
--wait\t-w [seconds]\tmaximum wait to acquire xtables lock before give up\n  \
--line-numbers\t\tprint line numbers when listing\n  \
--exact\t-x\t\texpand numbers (display exact values)\n"
    ));
    if family == Family::Ipv4 {
        s.push_str("[!] --fragment\t-f\t\tmatch second or further fragments only\n");
    }
    s.push_str(
        "  --modprobe=<command>\t\ttry to insert modules using this command\n  \
--set-counters -c PKTS BYTES\tset the counter during insert/append\n\
[!] --version\t-V\t\tprint package version.\n",
    );
    s
}
