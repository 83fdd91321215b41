//! Other iptables backends in the namespace: nfkeeper's listings and saves
//! show only its own tables, so they warn when legacy xtables or
//! iptables-nft tables hold rules too — for legacy tables with
//! iptables-nft's own words (checked against iptables-nft in a twin
//! namespace), for iptables-nft's tables in the same form. Skips without
//! root, `ip`, iptables-legacy or iptables-nft.

mod common;

use common::{prerequisites, Ns};
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `# Warning` lines of a command's stderr.
fn warnings(o: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("# Warning"))
        .map(str::to_string)
        .collect()
}

struct Case {
    what: &'static str,
    /// Commands of other tools run first (argv words).
    setup: &'static [&'static str],
    /// nfkeeper's command (personality first).
    nfk: &'static str,
    /// The `# Warning` lines it must print on stderr.
    want: &'static [&'static str],
    /// iptables-nft's command printing the same legacy warning, if any.
    oracle: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        what: "nothing else: no warning",
        setup: &[],
        nfk: "iptables -S",
        want: &[],
        oracle: None,
    },
    Case {
        what: "legacy tables, listing",
        setup: &["iptables-legacy -A INPUT -j ACCEPT"],
        nfk: "iptables -S",
        want: &["# Warning: iptables-legacy tables present, use iptables-legacy to see them"],
        oracle: Some("iptables-nft -S"),
    },
    Case {
        what: "legacy tables, -L",
        setup: &["iptables-legacy -t nat -A OUTPUT -j ACCEPT"],
        nfk: "iptables -L -n",
        want: &["# Warning: iptables-legacy tables present, use iptables-legacy to see them"],
        oracle: Some("iptables-nft -L -n"),
    },
    Case {
        what: "legacy tables, save",
        setup: &["iptables-legacy -A INPUT -j ACCEPT"],
        nfk: "iptables-save",
        want: &["# Warning: iptables-legacy tables present, use iptables-legacy-save to see them"],
        oracle: Some("iptables-nft-save"),
    },
    Case {
        what: "IPv6 legacy tables: only ip6tables warns",
        setup: &["ip6tables-legacy -A INPUT -j ACCEPT"],
        nfk: "ip6tables -S",
        want: &["# Warning: ip6tables-legacy tables present, use ip6tables-legacy to see them"],
        oracle: Some("ip6tables-nft -S"),
    },
    Case {
        what: "IPv6 legacy tables, IPv4 listing: no warning",
        setup: &["ip6tables-legacy -A INPUT -j ACCEPT"],
        nfk: "iptables -S",
        want: &[],
        oracle: None,
    },
    Case {
        what: "iptables-nft tables, listing",
        setup: &["iptables-nft -A INPUT -j ACCEPT"],
        nfk: "iptables -L -n",
        want: &["# Warning: iptables-nft tables present, use iptables-nft to see them"],
        oracle: None,
    },
    Case {
        what: "both, save",
        setup: &[
            "iptables-nft -A INPUT -j ACCEPT",
            "iptables-legacy -A INPUT -j ACCEPT",
        ],
        nfk: "iptables-save",
        want: &[
            "# Warning: iptables-legacy tables present, use iptables-legacy-save to see them",
            "# Warning: iptables-nft tables present, use iptables-nft-save to see them",
        ],
        oracle: None,
    },
    Case {
        what: "a write does not warn",
        setup: &["iptables-legacy -A INPUT -j ACCEPT"],
        nfk: "iptables -A INPUT -j ACCEPT",
        want: &[],
        oracle: None,
    },
];

#[test]
fn other_backends_are_warned_about() {
    if !prerequisites() {
        return;
    }
    for tool in ["iptables-legacy", "iptables-nft"] {
        if !have(tool) {
            eprintln!("SKIP: {tool} (the other backend) is not installed");
            return;
        }
    }
    for (i, c) in CASES.iter().enumerate() {
        let ns = Ns::new(&format!("coex{i}"));
        for s in c.setup {
            let o = ns.exec(&s.split_whitespace().collect::<Vec<_>>());
            assert!(o.status.success(), "{}: {s}: {:?}", c.what, o);
        }
        // nfkeeper's own table exists, so listings read it.
        ns.nfk("iptables -N NFK");
        let o = ns.nfk_output(c.nfk);
        assert!(o.status.success(), "{}: {:?}", c.what, o);
        assert_eq!(warnings(&o), c.want, "{}", c.what);
        if let Some(oracle) = c.oracle {
            let twin = Ns::new(&format!("coexo{i}"));
            for s in c.setup {
                twin.exec(&s.split_whitespace().collect::<Vec<_>>());
            }
            let o = twin.exec(&oracle.split_whitespace().collect::<Vec<_>>());
            assert_eq!(warnings(&o), c.want, "{}: iptables-nft says", c.what);
        }
    }
}
