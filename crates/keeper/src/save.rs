//! `iptables-save` straight from the kernel, without building the model.
//!
//! A rule's userdata already holds its canonical text (what
//! `iptables::print::save` printed when nfkeeper wrote it), so saving is:
//! one chain dump, one rule dump, and per rule its text, the counters of
//! its counter expression, and the target of its verdict (a rename moves
//! the kernel's jump, not our text). Nothing is parsed. When the table has
//! long chains, rules are dumped chain by chain in iptables' order (built-in
//! chains first, then user chains by name) and written as they arrive:
//! memory O(one dump reply + the chain list), independent of the number of
//! rules. Many short chains are read with one table-wide dump instead (see
//! `read::per_chain_dumps`), held per chain until printed: that is chosen
//! only when the rules are few.

use crate::read::{counters_and_target, per_chain_dumps, read_catalog, rule_text, Texts};
use compile::layout;
use nft::{RuleRef, Socket};
use ruleset::{Counters, Family, TableKind};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

/// What to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form<'a> {
    /// iptables-save: `*table`, `:CHAIN POLICY [p:b]` lines, rules (with
    /// `counters`: `[packets:bytes]` before each), `COMMIT`, between
    /// `header` and `footer`. Nothing if the table does not exist.
    Save {
        counters: bool,
        header: &'a str,
        footer: &'a str,
    },
    /// `iptables -S` (no -v): `-P CHAIN POLICY` / `-N CHAIN` lines, then the
    /// rules; a missing table lists its built-in chains with policy ACCEPT.
    Spec,
}

/// Write table `kind` in `form` to `out`. Returns whether the table exists
/// and describes objects that are not ours in `foreign`.
pub fn save_table_to(
    sock: &mut Socket,
    family: Family,
    kind: TableKind,
    form: Form<'_>,
    out: &mut dyn Write,
    foreign: &mut Vec<String>,
) -> Result<bool, SaveError> {
    let fam = layout::nft_family(family);
    let tname = layout::table_name(kind);
    let exists = sock.get(&nft::Table::new(fam, &tname))?.is_some();
    let builtins = kind.builtin_chains();
    // Chain name -> (policy line, rule lines); built-ins in their order.
    // (name, policy counters, policy, kernel use count) per built-in chain,
    // (name, use count) per user chain; a use count of 0: no rules.
    let mut base: Vec<(String, Counters, &str, Option<u32>)> = builtins
        .iter()
        .map(|n| (n.to_string(), Counters::default(), "ACCEPT", Some(0)))
        .collect();
    let mut user: Vec<(String, Option<u32>)> = Vec::new();
    if !exists {
        if form == Form::Spec {
            for b in builtins {
                writeln!(out, "-P {b} ACCEPT")?;
            }
        }
        return Ok(false);
    }
    let chains: Vec<nft::Chain> = sock
        .chains(fam, Some(&tname))?
        .into_iter()
        .filter(|c| c.table == tname)
        .collect();
    for c in &chains {
        if c.hook.is_some() {
            match base.iter_mut().find(|b| b.0 == c.name) {
                Some(b) => {
                    b.3 = c.use_count;
                    if let Some((bytes, packets)) = c.counters {
                        b.1 = Counters { packets, bytes };
                    }
                    if c.policy == Some(nft::chain::POLICY_DROP) {
                        b.2 = "DROP";
                    }
                }
                None => foreign.push(format!(
                    "base chain {} (not an iptables chain of this table)",
                    c.name
                )),
            }
        } else {
            user.push((c.name.clone(), c.use_count));
        }
    }
    user.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut texts = read_catalog(sock, fam, &tname)?;
    let mut head = String::new();
    let counters = match form {
        Form::Save {
            counters, header, ..
        } => {
            head.push_str(header);
            let _ = writeln!(head, "*{}", kind.name());
            for (name, c, pol, _) in &base {
                let _ = writeln!(head, ":{name} {pol} [{}:{}]", c.packets, c.bytes);
            }
            for (name, _) in &user {
                let _ = writeln!(head, ":{name} - [0:0]");
            }
            counters
        }
        Form::Spec => {
            for (name, _, pol, _) in &base {
                let _ = writeln!(head, "-P {name} {pol}");
            }
            for (name, _) in &user {
                let _ = writeln!(head, "-N {name}");
            }
            false
        }
    };
    out.write_all(head.as_bytes())?;
    let order: Vec<(&str, Option<u32>)> = base
        .iter()
        .map(|b| (b.0.as_str(), b.3))
        .chain(user.iter().map(|(n, u)| (n.as_str(), *u)))
        .collect();
    if per_chain_dumps(chains.iter()).is_some() {
        // A few long chains: one dump each, in print order, written as the
        // rules arrive.
        let mut line = String::new();
        for (chain, used) in order {
            if used == Some(0) {
                continue;
            }
            let mut failed: Option<std::io::Error> = None;
            sock.rules(fam, Some(&tname), Some(chain), |r| {
                if r.table != tname || r.chain != chain || failed.is_some() {
                    return Ok(());
                }
                line.clear();
                if rule_line(&r, counters, &mut texts, foreign, &mut line) {
                    if let Err(e) = out.write_all(line.as_bytes()) {
                        failed = Some(e);
                    }
                }
                Ok(())
            })?;
            if let Some(e) = failed {
                return Err(e.into());
            }
        }
    } else {
        // Many short chains: one dump, held per chain (few rules in all,
        // by the choice above) and printed in order.
        let mut lines: HashMap<String, String> = HashMap::new();
        sock.rules(fam, Some(&tname), None, |r| {
            if r.table == tname {
                let buf = lines.entry(r.chain.to_string()).or_default();
                rule_line(&r, counters, &mut texts, foreign, buf);
            }
            Ok(())
        })?;
        for (chain, _) in order {
            if let Some(text) = lines.remove(chain) {
                out.write_all(text.as_bytes())?;
            }
        }
    }
    if let Form::Save { footer, .. } = form {
        out.write_all(b"COMMIT\n")?;
        out.write_all(footer.as_bytes())?;
    }
    Ok(true)
}

/// Append rule `r`'s save line to `buf` (false, and a note in `foreign`,
/// if it is not ours).
fn rule_line(
    r: &RuleRef<'_>,
    counters: bool,
    texts: &mut Texts,
    foreign: &mut Vec<String>,
    buf: &mut String,
) -> bool {
    let (c, target) = counters_and_target(r);
    let Some((_, text, _)) = rule_text(r.userdata, texts) else {
        foreign.push(format!(
            "rule handle {} in chain {} (no nfkeeper userdata)",
            r.handle.unwrap_or(0),
            r.chain
        ));
        return false;
    };
    if counters {
        let _ = write!(buf, "[{}:{}] ", c.packets, c.bytes);
    }
    buf.push_str("-A ");
    buf.push_str(r.chain);
    buf.push_str(&retargeted(&text, target.as_deref()));
    buf.push('\n');
    true
}

/// `text` (a rule body ending in its target) with the jump/goto target
/// replaced by `target` when they differ. Jump targets take no options, so
/// the target is the last word.
fn retargeted<'a>(text: &'a str, target: Option<&str>) -> std::borrow::Cow<'a, str> {
    let Some(t) = target else {
        return text.into();
    };
    let Some(at) = text.rfind(' ') else {
        return text.into();
    };
    let (head, last) = (&text[..at], &text[at + 1..]);
    let is_jump = head.ends_with(" -j") || head.ends_with(" -g");
    if !is_jump || last == t {
        return text.into();
    }
    format!("{head} {t}").into()
}

/// A failure while saving: the kernel or the output.
#[derive(Debug)]
pub enum SaveError {
    Kernel(nft::Error),
    Output(std::io::Error),
}

impl From<nft::Error> for SaveError {
    fn from(e: nft::Error) -> Self {
        SaveError::Kernel(e)
    }
}

impl From<std::io::Error> for SaveError {
    fn from(e: std::io::Error) -> Self {
        SaveError::Output(e)
    }
}

#[cfg(test)]
mod tests {
    use super::retargeted;

    #[test]
    fn retarget_replaces_only_a_differing_jump_target() {
        let cases = [
            (
                " -s 1.2.3.4/32 -j old",
                Some("new"),
                " -s 1.2.3.4/32 -j new",
            ),
            (" -g old", Some("new"), " -g new"),
            (" -j same", Some("same"), " -j same"),
            (" -j ACCEPT", None, " -j ACCEPT"),
            (
                " -m comment --comment \"a -j b\" -j x",
                Some("y"),
                " -m comment --comment \"a -j b\" -j y",
            ),
            (" -p tcp", Some("x"), " -p tcp"),
            ("", Some("x"), ""),
        ];
        for (text, target, want) in cases {
            assert_eq!(retargeted(text, target), want, "{text}");
        }
    }
}
