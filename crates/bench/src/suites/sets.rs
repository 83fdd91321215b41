//! Tool-neutral operations on one address set (the `ipset` suite) and
//! their forms for each tool: the `ipset` command line (the ipset tool and
//! `nfkeeper ipset` take the same words) and `nft` (a set in table
//! `inet bench`).
//!
//! Members are IPv4 addresses numbered from 0 ([`addr`]); a set is
//! `hash:ip` (`type ipv4_addr` in nft).

use super::model::Cmd;
use std::fmt::Write;

/// The nft table the nft adapter keeps its sets in.
pub const NFT_TABLE: &str = "bench";
/// Members per `add element` line of an nft restore file (one transaction
/// for the whole file either way; shorter lines parse faster).
const NFT_CHUNK: usize = 10_000;

/// One set operation.
#[derive(Clone, Debug, PartialEq)]
pub enum SetOp {
    /// Create `set` with members `0..n` in one restore (`ipset restore`,
    /// `nft -f`).
    Restore { set: String, n: usize },
    /// Remove `set`.
    Destroy { set: String },
    /// One process per member added (fail2ban's pattern).
    AddEach { set: String, members: Vec<usize> },
    /// One process per member removed.
    DelEach { set: String, members: Vec<usize> },
    /// Whether member `m` is in `set` (exit status 0 when it is).
    Test { set: String, m: usize },
    /// The whole set, members included.
    List { set: String },
    /// The names of the sets only.
    ListNames,
}

/// Member `i` as an address: 10.0.0.0 + i (i < 2^24).
pub fn addr(i: usize) -> String {
    format!("10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255)
}

/// `maxelem` for a set of `n` members with room for the suite's adds.
fn maxelem(n: usize) -> usize {
    (n * 2).max(65_536)
}

/// The commands of `op` for a tool with ipset's command line, `prog`
/// being its argv prefix (`["ipset"]`, `["nfkeeper", "ipset"]`).
pub fn ipset(prog: &[String], op: &SetOp) -> Vec<Cmd> {
    let cmd = |words: &[&str]| {
        let mut v = prog.to_vec();
        v.extend(words.iter().map(|w| w.to_string()));
        Cmd::new(v)
    };
    match op {
        SetOp::Restore { set, n } => {
            let mut text = format!("create {set} hash:ip family inet maxelem {}\n", maxelem(*n));
            for i in 0..*n {
                let _ = writeln!(text, "add {set} {}", addr(i));
            }
            vec![cmd(&["restore"]).with_stdin(text)]
        }
        SetOp::Destroy { set } => vec![cmd(&["destroy", set])],
        SetOp::AddEach { set, members } => members
            .iter()
            .map(|&m| cmd(&["add", set, &addr(m)]))
            .collect(),
        SetOp::DelEach { set, members } => members
            .iter()
            .map(|&m| cmd(&["del", set, &addr(m)]))
            .collect(),
        SetOp::Test { set, m } => vec![cmd(&["test", set, &addr(*m)])],
        SetOp::List { set } => vec![cmd(&["list", set])],
        SetOp::ListNames => vec![cmd(&["list", "-name"])],
    }
}

/// The commands of `op` for `nft`.
pub fn nft(op: &SetOp) -> Vec<Cmd> {
    let words = |w: &[&str]| {
        let mut v = vec!["nft".to_string()];
        v.extend(w.iter().map(|s| s.to_string()));
        Cmd::new(v)
    };
    let elem = |set: &str, verb: &str, m: usize| {
        words(&[
            verb,
            "element",
            "inet",
            NFT_TABLE,
            set,
            &format!("{{ {} }}", addr(m)),
        ])
    };
    match op {
        SetOp::Restore { set, n } => {
            let mut text = format!(
                "add table inet {NFT_TABLE}\nadd set inet {NFT_TABLE} {set} {{ type ipv4_addr; size {}; }}\n",
                maxelem(*n)
            );
            for start in (0..*n).step_by(NFT_CHUNK) {
                let _ = write!(text, "add element inet {NFT_TABLE} {set} {{ ");
                for i in start..(start + NFT_CHUNK).min(*n) {
                    if i > start {
                        text.push_str(", ");
                    }
                    text.push_str(&addr(i));
                }
                text.push_str(" }\n");
            }
            vec![words(&["-f", "/dev/stdin"]).with_stdin(text)]
        }
        SetOp::Destroy { .. } => vec![words(&["delete", "table", "inet", NFT_TABLE])],
        SetOp::AddEach { set, members } => members.iter().map(|&m| elem(set, "add", m)).collect(),
        SetOp::DelEach { set, members } => {
            members.iter().map(|&m| elem(set, "delete", m)).collect()
        }
        SetOp::Test { set, m } => vec![elem(set, "get", *m)],
        SetOp::List { set } => vec![words(&["list", "set", "inet", NFT_TABLE, set])],
        SetOp::ListNames => vec![words(&["-t", "list", "sets"])],
    }
}

/// The member count a listing shows: ipset's `Number of entries:` line,
/// else the elements of an `nft list set` (comma-separated, possibly over
/// several lines).
pub fn count_members(out: &str) -> usize {
    if let Some(n) = out
        .lines()
        .find_map(|l| l.strip_prefix("Number of entries:"))
        .and_then(|v| v.trim().parse().ok())
    {
        return n;
    }
    let Some(start) = out.find("elements = {") else {
        return 0;
    };
    let body = &out[start + "elements = {".len()..];
    let body = &body[..body.find('}').unwrap_or(body.len())];
    body.split(',').filter(|e| !e.trim().is_empty()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_each_tool() {
        let set = "s".to_string();
        let prog = vec!["ipset".to_string()];
        let cases: Vec<(SetOp, &str, &str)> = vec![
            (
                SetOp::Restore {
                    set: set.clone(),
                    n: 2,
                },
                "ipset restore",
                "nft -f /dev/stdin",
            ),
            (
                SetOp::AddEach {
                    set: set.clone(),
                    members: vec![258],
                },
                "ipset add s 10.0.1.2",
                "nft add element inet bench s { 10.0.1.2 }",
            ),
            (
                SetOp::Test {
                    set: set.clone(),
                    m: 1,
                },
                "ipset test s 10.0.0.1",
                "nft get element inet bench s { 10.0.0.1 }",
            ),
            (SetOp::ListNames, "ipset list -name", "nft -t list sets"),
        ];
        for (op, want_ipset, want_nft) in cases {
            assert_eq!(ipset(&prog, &op)[0].argv.join(" "), want_ipset, "{op:?}");
            assert_eq!(nft(&op)[0].argv.join(" "), want_nft, "{op:?}");
        }
        let r = ipset(
            &prog,
            &SetOp::Restore {
                set: set.clone(),
                n: 2,
            },
        );
        assert_eq!(
            r[0].stdin.as_deref(),
            Some("create s hash:ip family inet maxelem 65536\nadd s 10.0.0.0\nadd s 10.0.0.1\n")
        );
        let r = nft(&SetOp::Restore { set, n: 3 });
        assert!(r[0]
            .stdin
            .as_deref()
            .unwrap()
            .ends_with("add element inet bench s { 10.0.0.0, 10.0.0.1, 10.0.0.2 }\n"));
    }

    #[test]
    fn member_counts_from_listings() {
        let cases = [
            ("Name: s\nType: hash:ip\nNumber of entries: 3\nMembers:\n10.0.0.1\n", 3),
            (
                "table inet bench {\n\tset s {\n\t\ttype ipv4_addr\n\t\telements = { 10.0.0.0, 10.0.0.1,\n\t\t\t     10.0.0.2 }\n\t}\n}\n",
                3,
            ),
            ("table inet bench {\n\tset s {\n\t\ttype ipv4_addr\n\t}\n}\n", 0),
        ];
        for (out, want) in cases {
            assert_eq!(count_members(out), want, "{out}");
        }
    }
}
