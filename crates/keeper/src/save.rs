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
        /// Print the table (its built-in chains, ACCEPT) even if it does
        /// not exist (`iptables-save -t TABLE`).
        even_missing: bool,
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
        match form {
            Form::Spec => {
                for b in builtins {
                    writeln!(out, "-P {b} ACCEPT")?;
                }
            }
            Form::Save {
                header,
                footer,
                even_missing: true,
                ..
            } => {
                let mut t = String::from(header);
                let _ = writeln!(t, "*{}", kind.name());
                for b in builtins {
                    let _ = writeln!(t, ":{b} ACCEPT [0:0]");
                }
                t.push_str("COMMIT\n");
                t.push_str(footer);
                out.write_all(t.as_bytes())?;
            }
            Form::Save { .. } => {}
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
    // Registered chains (see `compile::registry`): no kernel chain, no
    // rules.
    if let Some(names) = crate::read::registry::dump(sock, fam, &tname, foreign)? {
        let kernel: std::collections::HashSet<&str> =
            chains.iter().map(|c| c.name.as_str()).collect();
        let (fresh, dup): (Vec<String>, Vec<String>) = names
            .into_iter()
            .partition(|n| !kernel.contains(n.as_str()));
        foreign.extend(dup.iter().map(|n| crate::read::registry::also_kernel(n)));
        user.extend(fresh.into_iter().map(|n| (n, Some(0))));
    }
    user.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let (mut texts, _) = read_catalog(sock, fam, &tname)?;
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
        // rules arrive; many chains with the dumps on another thread.
        let list: Vec<&str> = order
            .iter()
            .filter(|(_, used)| *used != Some(0))
            .map(|(c, _)| *c)
            .collect();
        let other = (list.len() >= PARALLEL_CHAINS)
            .then(|| sock.sibling())
            .flatten();
        if let Some(other) = other {
            let mut w = ChainOut::default();
            nft::prefetch::rules_of_chains(
                other,
                fam,
                &tname,
                &list,
                |r| ahead(r, counters),
                |i, a| {
                    let r = match a {
                        Some(Ahead::Line(l)) => w.line(out, &l),
                        Some(Ahead::Run(p)) => {
                            w.held.push(p);
                            Ok(())
                        }
                        Some(Ahead::Chunked(k)) => {
                            let mut line = String::new();
                            match text_line(&k, counters, &mut texts, foreign, &mut line) {
                                Line::Text => w.line(out, &line),
                                _ => Ok(()),
                            }
                        }
                        None => {
                            return w.end(
                                sock, fam, &tname, list[i], counters, &mut texts, foreign, out,
                            )
                        }
                    };
                    r.map_err(|e| {
                        w.failed = Some(e);
                        nft::Error::Truncated
                    })
                },
            )
            .map_err(|e| match w.failed.take() {
                Some(io) => SaveError::Output(io),
                None => SaveError::Kernel(e),
            })?;
        } else {
            let mut line = String::new();
            for chain in list {
                let mut w = ChainOut::default();
                sock.rules(fam, Some(&tname), Some(chain), |r| {
                    if r.table != tname || r.chain != chain || w.failed.is_some() {
                        return Ok(());
                    }
                    line.clear();
                    let res = match rule_line(&r, counters, &mut texts, foreign, &mut line) {
                        Line::Text => w.line(out, &line),
                        Line::Run(run) => {
                            w.held.push(run);
                            Ok(())
                        }
                        Line::Foreign => Ok(()),
                    };
                    if let Err(e) = res {
                        w.failed = Some(e);
                    }
                    Ok(())
                })?;
                if let Some(e) = w.failed.take() {
                    return Err(e.into());
                }
                let ended = w.end(sock, fam, &tname, chain, counters, &mut texts, foreign, out);
                // An output failure is the output's error, not the kernel's.
                if let Some(e) = w.failed.take() {
                    return Err(e.into());
                }
                ended?;
            }
        }
    } else {
        // Many short chains: one dump, held per chain (few rules in all,
        // by the choice above) and printed in order.
        let mut pieces: HashMap<String, Vec<Piece>> = HashMap::new();
        sock.rules(fam, Some(&tname), None, |r| {
            if r.table == tname {
                let mut line = String::new();
                let piece = match rule_line(&r, counters, &mut texts, foreign, &mut line) {
                    Line::Text => Piece::Text(line),
                    Line::Run(run) => run,
                    Line::Foreign => return Ok(()),
                };
                pieces.entry(r.chain.to_string()).or_default().push(piece);
            }
            Ok(())
        })?;
        for (chain, _) in order {
            let mut buf = String::new();
            for p in pieces.remove(chain).unwrap_or_default() {
                write_piece(
                    sock, fam, &tname, chain, p, counters, &mut texts, foreign, &mut buf,
                )?;
            }
            out.write_all(buf.as_bytes())?;
        }
    }
    if let Form::Save { footer, .. } = form {
        out.write_all(b"COMMIT\n")?;
        out.write_all(footer.as_bytes())?;
    }
    Ok(true)
}

/// What a kernel rule prints as.
enum Line {
    /// Its line is in the buffer.
    Text,
    /// A compiled run: its members' lines come from its set's elements.
    Run(Piece),
    /// Not ours (noted in `foreign`).
    Foreign,
}

/// Output of one chain, in order.
enum Piece {
    Text(String),
    Run { set: String, target: Option<String> },
}

/// Chains printed with their dumps on another thread from this many on
/// (see [`nft::prefetch::rules_of_chains`]).
const PARALLEL_CHAINS: usize = 256;

/// One chain's output while its rules arrive: lines are written at once
/// until its first run, whose members (read from its set at the chain's
/// end) come before the lines after it.
#[derive(Default)]
struct ChainOut {
    held: Vec<Piece>,
    /// The output failed (the dump is drained, then this is returned).
    failed: Option<std::io::Error>,
}

impl ChainOut {
    fn line(&mut self, out: &mut dyn Write, line: &str) -> std::io::Result<()> {
        if self.held.is_empty() {
            out.write_all(line.as_bytes())
        } else {
            self.held.push(Piece::Text(line.to_string()));
            Ok(())
        }
    }

    /// The chain's dump is complete: write what was held.
    #[allow(clippy::too_many_arguments)]
    fn end(
        &mut self,
        sock: &mut Socket,
        fam: nft::Family,
        tname: &str,
        chain: &str,
        counters: bool,
        texts: &mut Texts,
        foreign: &mut Vec<String>,
        out: &mut dyn Write,
    ) -> Result<(), nft::Error> {
        if self.held.is_empty() {
            return Ok(());
        }
        let mut buf = String::new();
        for p in std::mem::take(&mut self.held) {
            write_piece(
                sock, fam, tname, chain, p, counters, texts, foreign, &mut buf,
            )?;
        }
        out.write_all(buf.as_bytes()).map_err(|e| {
            self.failed = Some(e);
            nft::Error::Truncated
        })
    }
}

/// A rule as the dumping thread keeps it for printing.
enum Ahead {
    /// Its whole line.
    Line(String),
    Run(Piece),
    /// Its text continues in catalog chunks (or is not ours): finished by
    /// the printing thread, which holds the catalog.
    Chunked(Parts),
}

/// What printing a plain rule needs of it.
struct Parts {
    handle: u64,
    chain: String,
    userdata: Option<Vec<u8>>,
    c: Counters,
    target: Option<String>,
}

/// [`rule_line`] on the dumping thread: the line, unless it needs the
/// catalog.
fn ahead(r: &RuleRef<'_>, counters: bool) -> Ahead {
    let d = r.userdata.and_then(|u| compile::userdata::decode(u).ok());
    if d.as_ref()
        .is_some_and(|d| d.run.is_none() && d.continued.is_none())
    {
        let mut line = String::new();
        if let Line::Text = rule_line(r, counters, &mut Texts::new(), &mut Vec::new(), &mut line) {
            return Ahead::Line(line);
        }
    }
    let (c, target) = counters_and_target(r);
    if let Some((_, set)) = d.and_then(|d| d.run) {
        return Ahead::Run(Piece::Run { set, target });
    }
    Ahead::Chunked(Parts {
        handle: r.handle.unwrap_or(0),
        chain: r.chain.to_string(),
        userdata: r.userdata.map(<[u8]>::to_vec),
        c,
        target,
    })
}

/// Append rule `r`'s save line to `buf`, or say it is a run or foreign.
fn rule_line(
    r: &RuleRef<'_>,
    counters: bool,
    texts: &mut Texts,
    foreign: &mut Vec<String>,
    buf: &mut String,
) -> Line {
    let (c, target) = counters_and_target(r);
    if let Some((_, set)) = r
        .userdata
        .and_then(|u| compile::userdata::decode(u).ok())
        .and_then(|d| d.run)
    {
        return Line::Run(Piece::Run { set, target });
    }
    let p = (
        r.handle.unwrap_or(0),
        r.chain,
        r.userdata,
        c,
        target.as_deref(),
    );
    text_line_of(p, counters, texts, foreign, buf)
}

/// [`rule_line`] of a plain rule's parts.
fn text_line(
    p: &Parts,
    counters: bool,
    texts: &mut Texts,
    foreign: &mut Vec<String>,
    buf: &mut String,
) -> Line {
    let parts = (
        p.handle,
        p.chain.as_str(),
        p.userdata.as_deref(),
        p.c,
        p.target.as_deref(),
    );
    text_line_of(parts, counters, texts, foreign, buf)
}

/// A plain rule's line from (handle, chain, userdata, counters, target).
fn text_line_of(
    (handle, chain, userdata, c, target): (u64, &str, Option<&[u8]>, Counters, Option<&str>),
    counters: bool,
    texts: &mut Texts,
    foreign: &mut Vec<String>,
    buf: &mut String,
) -> Line {
    let Some((_, text, _)) = rule_text(userdata, texts) else {
        foreign.push(format!(
            "rule handle {handle} in chain {chain} (no nfkeeper userdata)"
        ));
        return Line::Foreign;
    };
    write_line(buf, counters.then_some(c), chain, &text, target);
    Line::Text
}

fn write_line(
    buf: &mut String,
    c: Option<Counters>,
    chain: &str,
    text: &str,
    target: Option<&str>,
) {
    if let Some(c) = c {
        let _ = write!(buf, "[{}:{}] ", c.packets, c.bytes);
    }
    buf.push_str("-A ");
    buf.push_str(chain);
    buf.push_str(&retargeted(text, target));
    buf.push('\n');
}

/// Append a piece's lines to `buf`: a run's members in id order, each with
/// its element's counter and verdict.
#[allow(clippy::too_many_arguments)]
fn write_piece(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
    chain: &str,
    p: Piece,
    counters: bool,
    texts: &mut Texts,
    foreign: &mut Vec<String>,
    buf: &mut String,
) -> Result<(), nft::Error> {
    let (set, target) = match p {
        Piece::Text(t) => {
            buf.push_str(&t);
            return Ok(());
        }
        Piece::Run { set, target } => (set, target),
    };
    let mut lines: Vec<(ruleset::RuleId, String, Counters, Option<String>)> = Vec::new();
    for e in sock.set_elems(fam, tname, &set)? {
        // An interval member's end marker belongs to the element before it
        // (written by nfkeeper, without userdata).
        if e.flags
            .is_some_and(|f| f & nft::setelem::F_INTERVAL_END != 0)
        {
            continue;
        }
        let Some((id, text, _)) = rule_text(e.userdata.as_deref(), texts) else {
            foreign.push(format!("element of set {set} (no nfkeeper userdata)"));
            continue;
        };
        let mut c = Counters::default();
        for x in &e.exprs {
            if let nft::Expr::Counter { bytes, packets } = x {
                c = Counters {
                    packets: *packets,
                    bytes: *bytes,
                };
            }
        }
        let t = match &e.data {
            Some(nft::Data::Verdict(nft::Verdict::Jump(t) | nft::Verdict::Goto(t))) => {
                Some(t.clone())
            }
            _ => target.clone(),
        };
        lines.push((id, text, c, t));
    }
    lines.sort_unstable_by_key(|l| l.0);
    // A multiport member is an element per port: one line, the sum of
    // their counters.
    crate::read::fold_members(&mut lines, |l| (l.0, &mut l.2));
    for (_, text, c, t) in lines {
        write_line(buf, counters.then_some(c), chain, &text, t.as_deref());
    }
    Ok(())
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
