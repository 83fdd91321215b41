//! What each invocation must read from the kernel (see [`Scope`]): the
//! less a command reads, the less it depends on the ruleset's size.

use crate::read::Scope;
use iptables::parse::restore::words;
use iptables::parse::{parse, Command, ParseOpts, Parsed};
use ruleset::hash::FxSet;
use ruleset::{Family, TableKind};
use std::borrow::Cow;
use std::collections::HashMap;

/// What a command must read. Commands on the raw table read it whole (see
/// below). `-F` of every chain reads nothing (one rule
/// delete naming no chain flushes the kernel table, and the table's run
/// sets go by one set dump, see `Session::drop_flushed_run_sets`).
/// Appends, head inserts, -N, -P, -X CHAIN,
/// -E and -F CHAIN only need their chains (fetched by name; the kernel
/// refuses what the model can't see: deleting a chain that still has rules
/// or references fails with EBUSY, see [`Session::iptables`]); commands that
/// address rules of one chain (-D, -R, -I N, -C, -S CHAIN, -Z CHAIN) read
/// that chain's rules; the rest (listings of everything, -L with its
/// reference counts, -X/-Z of all chains) read the table. Jump targets of
/// the command's rules are fetched by name.
pub fn scope(p: &Parsed) -> Scope {
    use ruleset::RuleBody;
    if p.table == TableKind::Raw {
        // A change to raw may change the replay of its `-j CT --helper`
        // rules, which is built from the whole table (compile::replay).
        return Scope::Table;
    }
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    };
    let rules_of = match &p.command {
        Command::Append(ch)
        | Command::Insert(ch, 1)
        | Command::NewChain(ch)
        | Command::Policy(ch, ..)
        | Command::DeleteChain(Some(ch))
        | Command::Flush(Some(ch)) => {
            add(ch);
            Vec::new()
        }
        Command::Rename(old, new) => {
            add(old);
            add(new);
            Vec::new()
        }
        Command::Insert(ch, _)
        | Command::Replace(ch, _)
        | Command::Delete(ch)
        | Command::DeleteNum(ch, _)
        | Command::Check(ch)
        | Command::Zero {
            chain: Some(ch), ..
        }
        | Command::ListRules {
            chain: Some(ch), ..
        } => vec![ch.clone()],
        Command::Flush(None) => Vec::new(),
        Command::DeleteChain(None) => return Scope::Chains,
        _ => return Scope::Table,
    };
    let mut targets: Vec<String> = Vec::new();
    for r in &p.rules {
        if let Some(t) = r.jump_target() {
            if !targets.iter().any(|x| x == t) {
                targets.push(t.to_string());
            }
        }
    }
    Scope::Part {
        names,
        rules_of,
        targets,
    }
}

/// What a restore must read, per table it names (in input order). Without
/// `--noflush` each table is replaced, so all of it is read (its existence,
/// and the foreign objects the replacement would remove). With `--noflush`
/// the lines are applied to what is there: each line's command needs what
/// [`scope`] says, and a `:CHAIN` line needs that chain; so adding to a few
/// chains of a big table reads only those chains. A line that does not
/// parse widens its table to [`Scope::Table`] (the restore then reports it).
pub fn restore_scopes(
    input: &str,
    family: Family,
    noflush: bool,
    only: Option<TableKind>,
    prog: &str,
) -> Vec<(TableKind, Scope)> {
    let mut out: Vec<(TableKind, Acc)> = Vec::new();
    let mut cur: Option<usize> = None;
    let mut renamed = Renamed::default();
    // Reused by every line (see `plain_append`).
    let (mut words, mut targets): (Vec<&str>, Vec<usize>) = (Vec::new(), Vec::new());
    for line in input.lines() {
        let line = line.trim_start();
        if let Some(t) = line.strip_prefix('*') {
            cur = TableKind::from_name(t.trim())
                .filter(|k| only.is_none_or(|o| o == *k))
                .map(|k| match out.iter().position(|(x, _)| *x == k) {
                    Some(i) => i,
                    None => {
                        let acc = Acc {
                            // Raw whole: see [`scope`].
                            table: !noflush || k == TableKind::Raw,
                            ..Acc::default()
                        };
                        out.push((k, acc));
                        out.len() - 1
                    }
                });
            continue;
        }
        let Some(i) = cur else { continue };
        if !noflush || out[i].1.table {
            continue;
        }
        if let Some(decl) = line.strip_prefix(':') {
            let name = decl.split_ascii_whitespace().next().unwrap_or("");
            let (kind, acc) = &mut out[i];
            let name = renamed.kernel_cow(*kind, name);
            if !kind.builtin_chains().contains(&name.as_ref()) {
                // An existing user chain is rewritten: the planner sends
                // only the difference from the rules it holds.
                acc.rules(name.clone());
            }
            acc.name(name);
        } else if line.starts_with('-') || line.starts_with('[') {
            let kind = out[i].0;
            if !plain_append(
                &mut out[i].1,
                &renamed,
                kind,
                line,
                &mut words,
                &mut targets,
            ) {
                let need = renamed.scope(kind, line_scope(line, family, kind, prog));
                out[i].1.add(need);
            }
            renamed.line(kind, line);
        }
    }
    out.into_iter().map(|(k, acc)| (k, acc.scope())).collect()
}

/// What `acc.add(renamed.scope(kind, line_scope(line, ..)))` does for a
/// plain append line (no `[p:b]`, no escape, no quoted chain or target),
/// without allocating for names `acc` has seen: nearly every line of a
/// big restore (kube-proxy's KUBE-SERVICES). `false`: not such a line,
/// nothing done. `words` and `targets` are scratch space.
fn plain_append<'a>(
    acc: &mut Acc<'a>,
    renamed: &Renamed,
    kind: TableKind,
    line: &'a str,
    words: &mut Vec<&'a str>,
    targets: &mut Vec<usize>,
) -> bool {
    if line.starts_with('[') || !plain_parts(line, words, targets) {
        return false;
    }
    acc.name(renamed.kernel_cow(kind, words[1]));
    for &i in targets.iter() {
        acc.target(renamed.kernel_cow(kind, words[i]));
    }
    true
}

/// An append line read by splitting at blanks, when no escape can join
/// words and neither the chain nor a target is a quoted word (quotes then
/// only split a quoted word, which can add a target — a superset — but
/// not hide a jump): `words` and the indices of the targets' words in
/// `targets` (see [`append_parts`]). `false`: read it otherwise.
fn plain_parts<'a>(body: &'a str, words: &mut Vec<&'a str>, targets: &mut Vec<usize>) -> bool {
    if body.contains('\\') {
        return false;
    }
    words.clear();
    words.extend(body.split_ascii_whitespace());
    if words.iter().take(2).any(|w| w.contains('"')) {
        return false;
    }
    targets.clear();
    append_parts(words, targets).is_some() && !targets.iter().any(|&i| words[i].contains('"'))
}

/// The chains a restore renamed so far, by table: the whole restore is
/// one transaction, read before it, and the kernel renames at commit (see
/// `crate::plan::names`), so a line naming a chain by its new name needs
/// the kernel chain of the old one.
#[derive(Default)]
struct Renamed(HashMap<(TableKind, String), String>);

impl Renamed {
    /// The kernel's name, before the restore, of chain `name` of `kind`.
    fn kernel<'a>(&'a self, kind: TableKind, name: &'a str) -> &'a str {
        if self.0.is_empty() {
            return name;
        }
        self.0
            .get(&(kind, name.to_string()))
            .map_or(name, String::as_str)
    }

    /// [`Renamed::kernel`] borrowing `name` when it is not renamed.
    fn kernel_cow<'n>(&self, kind: TableKind, name: &'n str) -> Cow<'n, str> {
        match self.kernel(kind, name) {
            k if std::ptr::eq(k, name) => Cow::Borrowed(name),
            k => Cow::Owned(k.to_string()),
        }
    }

    /// Take note of restore line `line` if it renames a chain.
    fn line(&mut self, kind: TableKind, line: &str) {
        let body = match line.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or("", |(_, b)| b).trim_start(),
            None => line,
        };
        if !(body.starts_with("-E ") || body.starts_with("--rename-chain ")) {
            return;
        }
        let mut w = body.split_ascii_whitespace().skip(1);
        if let (Some(old), Some(new)) = (w.next(), w.next()) {
            let k = self.kernel(kind, old).to_string();
            self.0.remove(&(kind, old.to_string()));
            self.0.insert((kind, new.to_string()), k);
        }
    }

    /// Scope `s` of a line of table `kind`, its chains named as the kernel
    /// has them.
    fn scope(&self, kind: TableKind, s: Scope) -> Scope {
        let Scope::Part {
            names,
            rules_of,
            targets,
        } = s
        else {
            return s;
        };
        if self.0.is_empty() {
            return Scope::Part {
                names,
                rules_of,
                targets,
            };
        }
        let map = |v: Vec<String>| -> Vec<String> {
            v.into_iter()
                .map(|n| self.kernel(kind, &n).to_string())
                .collect()
        };
        Scope::Part {
            names: map(names),
            rules_of: map(rules_of),
            targets: map(targets),
        }
    }
}

/// What a restore needs of one table, gathered line by line in O(1) per
/// name (merging [`Scope`]s looks names up in lists: O(n²) over the
/// thousands of chains a kube-proxy sync names). Names borrow the input
/// where they can: a big sync names thousands of chains once each.
#[derive(Clone, Debug, Default, PartialEq)]
struct Acc<'a> {
    table: bool,
    chains: bool,
    names: Vec<Cow<'a, str>>,
    rules_of: Vec<Cow<'a, str>>,
    targets: Vec<Cow<'a, str>>,
    seen_names: FxSet<Cow<'a, str>>,
    seen_rules: FxSet<Cow<'a, str>>,
    seen_targets: FxSet<Cow<'a, str>>,
}

/// Push `n` to `list` unless `seen` has it: one lookup for a borrowed
/// name (copied by pointer), an owned one copied only when new.
fn once<'a>(seen: &mut FxSet<Cow<'a, str>>, list: &mut Vec<Cow<'a, str>>, n: Cow<'a, str>) {
    let new = match &n {
        Cow::Borrowed(b) => seen.insert(Cow::Borrowed(b)),
        Cow::Owned(o) => !seen.contains(o.as_str()) && seen.insert(n.clone()),
    };
    if new {
        list.push(n);
    }
}

impl<'a> Acc<'a> {
    fn name(&mut self, n: Cow<'a, str>) {
        once(&mut self.seen_names, &mut self.names, n);
    }

    fn rules(&mut self, n: Cow<'a, str>) {
        once(&mut self.seen_rules, &mut self.rules_of, n);
    }

    fn target(&mut self, n: Cow<'a, str>) {
        once(&mut self.seen_targets, &mut self.targets, n);
    }

    fn add(&mut self, s: Scope) {
        match s {
            Scope::Table => self.table = true,
            Scope::Chains => self.chains = true,
            Scope::Part {
                names,
                rules_of,
                targets,
            } => {
                for n in names {
                    self.name(Cow::Owned(n));
                }
                for n in rules_of {
                    self.rules(Cow::Owned(n));
                }
                for n in targets {
                    self.target(Cow::Owned(n));
                }
            }
        }
    }

    /// As [`Scope::merge`] would have it: every chain without rules plus
    /// some chains' rules is only covered by the whole table.
    fn scope(self) -> Scope {
        if self.table || (self.chains && !self.rules_of.is_empty()) {
            Scope::Table
        } else if self.chains {
            Scope::Chains
        } else {
            let owned = |v: Vec<Cow<'_, str>>| v.into_iter().map(Cow::into_owned).collect();
            Scope::Part {
                names: owned(self.names),
                rules_of: owned(self.rules_of),
                targets: owned(self.targets),
            }
        }
    }
}

/// The chains command `p` flushes without reading their rules (`None`:
/// every chain of its table): their run sets must be found another way
/// (see `crate::direct`).
pub fn flushed_chains(p: &Parsed) -> Vec<Option<String>> {
    match &p.command {
        Command::Flush(c) => vec![c.clone()],
        _ => Vec::new(),
    }
}

/// The lines of restore input `input` inside a table section (`*TABLE`
/// up to the next one), with their table, start trimmed; sections of
/// tables other than `only` (when given) or unknown skipped. O(input).
pub fn table_lines(
    input: &str,
    only: Option<TableKind>,
) -> impl Iterator<Item = (TableKind, &str)> {
    let mut cur: Option<TableKind> = None;
    input.lines().filter_map(move |line| {
        let line = line.trim_start();
        if let Some(t) = line.strip_prefix('*') {
            cur = TableKind::from_name(t.trim()).filter(|k| only.is_none_or(|o| o == *k));
            return None;
        }
        cur.map(|k| (k, line))
    })
}

/// What a `--noflush` restore flushes without reading the chain's rules,
/// per table: each `-F [CHAIN]` line. (A `:CHAIN` line's chain is read
/// with its rules, see [`restore_scopes`], so its runs are known.)
pub fn restore_flushes(input: &str, only: Option<TableKind>) -> Vec<(TableKind, Option<String>)> {
    let mut out = Vec::new();
    let mut renamed = Renamed::default();
    for (kind, line) in table_lines(input, only) {
        let mut words = line.split_ascii_whitespace();
        if matches!(words.next(), Some("-F" | "--flush")) {
            // The run sets are found by the kernel's name; the planner's
            // rename moves them to the new one (`KernelView::rename_chain`).
            let chain = words.next().filter(|w| !w.starts_with('-'));
            out.push((kind, chain.map(|c| renamed.kernel(kind, c).to_string())));
        }
        renamed.line(kind, line);
    }
    out
}

/// Chains of a `--noflush` restore whose old rules the planner never
/// needs to see parsed, per table: user chains declared (`:CHAIN`) before
/// any command line of a table whose only commands are appends (`-A`, as
/// kube-proxy's syncs are), the table named once. Such a chain is flushed
/// before anything reads it, and a line that repeats an old rule's text
/// takes that rule, so its rules can be read unparsed (see
/// `crate::read::Snapshot::lazy`); anything else reads them as before.
/// O(input).
pub fn restore_lazy_chains(input: &str, only: Option<TableKind>) -> Vec<(TableKind, Vec<String>)> {
    let mut out: Vec<(TableKind, Vec<String>)> = Vec::new();
    let mut bad: Vec<TableKind> = Vec::new();
    let mut cur: Option<(TableKind, bool)> = None;
    for line in input.lines() {
        let line = line.trim_start();
        if let Some(t) = line.strip_prefix('*') {
            cur = TableKind::from_name(t.trim())
                .filter(|k| only.is_none_or(|o| o == *k))
                .map(|k| (k, true));
            if let Some((k, _)) = cur {
                if out.iter().any(|(x, _)| *x == k) {
                    bad.push(k);
                } else {
                    out.push((k, Vec::new()));
                }
            }
            continue;
        }
        let Some((kind, header)) = cur.as_mut() else {
            continue;
        };
        if line.is_empty() || line.starts_with('#') || line.starts_with("COMMIT") {
            continue;
        }
        if let Some(decl) = line.strip_prefix(':') {
            let name = decl.split_ascii_whitespace().next().unwrap_or("");
            if *header && !kind.builtin_chains().contains(&name) {
                if let Some((_, v)) = out.iter_mut().find(|(x, _)| x == kind) {
                    v.push(name.to_string());
                }
            }
            continue;
        }
        *header = false;
        let body = match line.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or("", |(_, b)| b).trim_start(),
            None => line,
        };
        if !(body.starts_with("-A ") || body.starts_with("--append ")) {
            bad.push(*kind);
        }
    }
    out.retain(|(k, v)| !bad.contains(k) && !v.is_empty());
    out
}

/// The tables a restore's input names (`*table` lines), in order, once
/// each; with `only` (`-T`), that one if named. Looks only at the input's
/// `*` characters (a byte search), not at every line: a restore of 10k
/// chains spent 5% of its time splitting lines here.
pub fn restore_tables(input: &str, only: Option<TableKind>) -> Vec<TableKind> {
    let mut out = Vec::new();
    for (i, _) in input.match_indices('*') {
        // A table line: nothing but blanks before the `*` on its line.
        let start = input[..i].rfind('\n').map_or(0, |p| p + 1);
        if !input[start..i].trim_start().is_empty() {
            continue;
        }
        let name = input[i + 1..].split('\n').next().unwrap_or("");
        if let Some(k) = TableKind::from_name(name.trim()) {
            if only.is_none_or(|o| o == k) && !out.contains(&k) {
                out.push(k);
            }
        }
    }
    out
}

/// The scope of one restore rule line (optionally `[p:b]`-prefixed).
fn line_scope(line: &str, family: Family, kind: TableKind, prog: &str) -> Scope {
    let body = match line.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or("", |(_, b)| b),
        None => line,
    };
    let (mut split, mut targets) = (Vec::new(), Vec::new());
    if plain_parts(body, &mut split, &mut targets) {
        return Scope::Part {
            names: vec![split[1].to_string()],
            rules_of: Vec::new(),
            targets: targets.iter().map(|&i| split[i].to_string()).collect(),
        };
    }
    let Ok(words) = words(body) else {
        return Scope::Table;
    };
    if let Some(s) = append_scope(&words) {
        return s;
    }
    let argv: Vec<&str> = words.iter().map(|w| w.as_ref()).collect();
    let o = ParseOpts {
        family,
        restore: true,
        table: Some(kind),
        prog,
    };
    match parse(&argv, o) {
        Ok(p) => scope(&p),
        Err(_) => Scope::Table,
    }
}

/// The scope of an append line (nearly every line of a big restore)
/// without parsing it: its chain, and the word after each `-j`/`-g` that
/// is not a verdict or target extension (a superset of [`scope`]'s). `None` — parse the line — when any word
/// could hide a jump this does not see: an abbreviated or `=` long option
/// (`--ju`, `--goto=X`) or grouped short options (`-fj`). A line that
/// would not parse gets a part scope here where [`scope`] gives the whole
/// table; the restore reports it all the same, with nothing applied.
fn append_scope<S: AsRef<str>>(words: &[S]) -> Option<Scope> {
    let mut targets = Vec::new();
    append_parts(words, &mut targets)?;
    Some(Scope::Part {
        names: vec![words[1].as_ref().to_string()],
        rules_of: Vec::new(),
        targets: targets
            .into_iter()
            .map(|i| words[i].as_ref().to_string())
            .collect(),
    })
}

/// What [`append_scope`] reads from an append line: the chain is word 1,
/// and the indices of its targets' words are pushed to `targets`
/// (deduplicated, in order). `None` as there.
fn append_parts<S: AsRef<str>>(words: &[S], targets: &mut Vec<usize>) -> Option<()> {
    let (cmd, chain) = (words.first()?.as_ref(), words.get(1)?.as_ref());
    if !(cmd == "-A" || cmd == "--append") || chain.starts_with('-') {
        return None;
    }
    // The word after each jump option, that word not skipped: it may be
    // an option's value that reads `-j` (`--comment -j -j X`).
    for (k, w) in words.iter().enumerate().skip(2) {
        let w = w.as_ref();
        match w {
            "-j" | "-g" | "--jump" | "--goto" => {
                let goto = w.contains('g');
                if let Some(t) = words.get(k + 1).map(AsRef::as_ref) {
                    // `-j` of a verdict or target extension names no chain
                    // (a `-g` always does).
                    let ext = !goto && iptables::ext::KNOWN_TARGETS.contains(&t);
                    if !ext && !targets.iter().any(|&i| words[i].as_ref() == t) {
                        targets.push(k + 1);
                    }
                }
            }
            w if w.starts_with("--j") || w.starts_with("--g") => return None,
            w if !w.starts_with("--")
                && w.starts_with('-')
                && w.len() > 2
                && w.contains(['j', 'g']) =>
            {
                return None
            }
            _ => {}
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `plain_append` does to the accumulated scope exactly what the
    /// general path (`line_scope`, then the renames, then `Acc::add`) does,
    /// or declines; renamed chains included.
    #[test]
    fn plain_append_lines_add_what_the_general_path_adds() {
        let lines = [
            "-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment \"ns0/svc0:http cluster IP\" -m tcp --dport 80 -j KUBE-SVC-A",
            "-A KUBE-SERVICES -d 10.96.0.2/32 -p tcp -j KUBE-SVC-A",
            "-A X -j ACCEPT",
            "-A X -g Y",
            "-A X -m comment --comment -j -j Z",
            "--append X --jump Y --goto W",
            "-A X --ju Y",
            "-A X -fj Y",
            "-A X -j \"Y\"",
            "-A \"X\" -j Y",
            "-A X -m comment --comment a\\ b -j Y",
            "[1:2] -A X -j Y",
            "-I X 1 -j Y",
            "-D X -j Y",
            "-A OLD -j NEW",
            "-A NEW -j OLD",
            "-A -j X",
        ];
        let mut renamed = Renamed::default();
        renamed.line(TableKind::Filter, "-E OLD NEW");
        for r in [Renamed::default(), renamed] {
            let (mut fast, mut slow) = (Acc::default(), Acc::default());
            let (mut words, mut targets) = (Vec::new(), Vec::new());
            for line in lines {
                let k = TableKind::Filter;
                let before = fast.clone();
                if !plain_append(&mut fast, &r, k, line, &mut words, &mut targets) {
                    assert_eq!(fast, before, "{line}: declined but changed");
                    fast.add(r.scope(k, line_scope(line, Family::Ipv4, k, "iptables-restore")));
                }
                slow.add(r.scope(k, line_scope(line, Family::Ipv4, k, "iptables-restore")));
                assert_eq!(fast, slow, "{line}");
            }
        }
    }

    /// `restore_tables` against the plain reading of its contract: every
    /// line whose first non-blank character is `*` names a table.
    #[test]
    fn restore_tables_finds_table_lines_only() {
        let plain = |input: &str, only: Option<TableKind>| {
            let mut out = Vec::new();
            for line in input.lines() {
                if let Some(k) = line
                    .trim_start()
                    .strip_prefix('*')
                    .and_then(|t| TableKind::from_name(t.trim()))
                {
                    if only.is_none_or(|o| o == k) && !out.contains(&k) {
                        out.push(k);
                    }
                }
            }
            out
        };
        let cases: &[&str] = &[
            "",
            "*filter\nCOMMIT\n",
            "*nat\r\n:X - [0:0]\r\nCOMMIT\r\n*filter\r\nCOMMIT\r\n",
            "  \t*mangle\nCOMMIT\n*mangle\nCOMMIT\n",
            "-A X -m comment --comment \"*filter\" -j ACCEPT\n*raw",
            "*\n**filter\n* filter \n*nosuch\n*security",
            "#*nat\n x*filter\n",
        ];
        for input in cases {
            for only in [None, Some(TableKind::Filter), Some(TableKind::Nat)] {
                assert_eq!(
                    restore_tables(input, only),
                    plain(input, only),
                    "{input:?} only {only:?}"
                );
            }
        }
    }

    fn part(names: &[&str], rules_of: &[&str], targets: &[&str]) -> Scope {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        Scope::Part {
            names: v(names),
            rules_of: v(rules_of),
            targets: v(targets),
        }
    }

    fn of(argv: &str) -> Scope {
        let words: Vec<&str> = argv.split_whitespace().collect();
        let o = ParseOpts::command(Family::Ipv4, "iptables");
        scope(&parse(&words, o).expect("parses"))
    }

    /// The append fast path reads at least what the parse says; lines it
    /// cannot see through go to the parse.
    #[test]
    fn append_lines_read_at_least_what_they_parse_to() {
        let o = ParseOpts {
            family: Family::Ipv4,
            restore: true,
            table: Some(TableKind::Filter),
            prog: "",
        };
        let cases: &[(&str, bool)] = &[
            ("-A FORWARD -s 10.0.0.1 -j ACCEPT", true),
            ("-A FORWARD -j web", true),
            ("--append FORWARD --jump web", true),
            ("-A FORWARD -g web", true),
            ("-A FORWARD --goto web", true),
            (r#"-A FORWARD -m comment --comment "-j" -j web"#, true),
            (r#"-A FORWARD -m comment --comment -j -j web"#, true),
            ("-A FORWARD --ju web", false),
            ("-A FORWARD --jump=web", false),
            ("-A FORWARD --go web", false),
            ("-A FORWARD -jweb", false),
            ("-A FORWARD -fj web", false),
            ("-I FORWARD -j web", false),
            ("-A -j web", false),
        ];
        for (line, fast) in cases {
            let words = super::words(line).expect("tokens");
            let got = append_scope(&words);
            assert_eq!(got.is_some(), *fast, "{line}");
            let argv: Vec<&str> = words.iter().map(|w| w.as_ref()).collect();
            let (Some(got), Ok(p)) = (got, parse(&argv, o)) else {
                continue;
            };
            let (
                Scope::Part {
                    names,
                    rules_of,
                    targets,
                },
                Scope::Part {
                    names: wn,
                    rules_of: wr,
                    targets: wt,
                },
            ) = (got, scope(&p))
            else {
                panic!("{line}: an append parses to a part scope");
            };
            assert!(rules_of.is_empty() && wr.is_empty(), "{line}");
            assert_eq!(names, wn, "{line}");
            for n in &wt {
                assert!(targets.contains(n), "{line}: {n} not read");
            }
        }
    }

    #[test]
    fn each_command_reads_what_it_needs() {
        let cases: &[(&str, Scope)] = &[
            (
                "-A FORWARD -s 10.0.0.1 -j ACCEPT",
                part(&["FORWARD"], &[], &[]),
            ),
            ("-A FORWARD -j web", part(&["FORWARD"], &[], &["web"])),
            ("-I INPUT -g web", part(&["INPUT"], &[], &["web"])),
            ("-I INPUT 3 -j web", part(&[], &["INPUT"], &["web"])),
            ("-N web", part(&["web"], &[], &[])),
            ("-P INPUT DROP", part(&["INPUT"], &[], &[])),
            ("-X web", part(&["web"], &[], &[])),
            ("-E web www", part(&["web", "www"], &[], &[])),
            ("-F web", part(&["web"], &[], &[])),
            (
                "-D FORWARD -s 10.0.0.1 -j ACCEPT",
                part(&[], &["FORWARD"], &[]),
            ),
            ("-D FORWARD -j web", part(&[], &["FORWARD"], &["web"])),
            ("-D FORWARD 7", part(&[], &["FORWARD"], &[])),
            ("-R FORWARD 2 -j DROP", part(&[], &["FORWARD"], &[])),
            ("-C FORWARD -j DROP", part(&[], &["FORWARD"], &[])),
            ("-S FORWARD", part(&[], &["FORWARD"], &[])),
            ("-Z FORWARD", part(&[], &["FORWARD"], &[])),
            ("-S", Scope::Table),
            ("-L FORWARD", Scope::Table),
            ("-X", Scope::Chains),
            ("-F", part(&[], &[], &[])),
            ("-Z", Scope::Table),
        ];
        for (argv, want) in cases {
            assert_eq!(&of(argv), want, "{argv}");
        }
    }

    #[test]
    fn restore_reads_whole_tables_unless_noflush() {
        let input = "*filter\n:INPUT DROP [0:0]\n:web - [0:0]\n-A INPUT -j web\n\
                     [1:2] -A web -s 10.0.0.1 -j ACCEPT\n-D OUTPUT 1\nCOMMIT\n\
                     *nat\n-A POSTROUTING -j MASQUERADE\nCOMMIT\n";
        let f = Family::Ipv4;
        let whole = restore_scopes(input, f, false, None, "iptables-restore");
        assert_eq!(
            whole,
            vec![
                (TableKind::Filter, Scope::Table),
                (TableKind::Nat, Scope::Table)
            ]
        );
        let nf = restore_scopes(input, f, true, None, "iptables-restore");
        assert_eq!(
            nf,
            vec![
                (
                    TableKind::Filter,
                    part(&["INPUT", "web"], &["web", "OUTPUT"], &["web"])
                ),
                (TableKind::Nat, part(&["POSTROUTING"], &[], &[])),
            ]
        );
        let only_nat = restore_scopes(input, f, true, Some(TableKind::Nat), "x");
        assert_eq!(
            only_nat,
            vec![(TableKind::Nat, part(&["POSTROUTING"], &[], &[]))]
        );
        // A line that does not parse (or needs everything) widens its table.
        for line in ["-I INPUT --bogus", "-L", "-Z"] {
            let input = format!("*filter\n-A INPUT -j ACCEPT\n{line}\nCOMMIT\n");
            let s = restore_scopes(&input, f, true, None, "x");
            assert_eq!(s, vec![(TableKind::Filter, Scope::Table)], "{line}");
        }
    }

    #[test]
    fn lines_after_a_rename_read_the_chain_by_its_old_name() {
        // The kernel renames at commit: in the restore's transaction the
        // chain is still OLD (then MID's rename is of OLD too).
        let input = "*filter\n-E OLD MID\n-E MID NEW\n-D NEW 1\n:NEW - [0:0]\n\
                     -A FORWARD -j NEW\n-F NEW\n-F OTHER\nCOMMIT\n";
        let s = restore_scopes(input, Family::Ipv4, true, None, "x");
        assert_eq!(
            s,
            vec![(
                TableKind::Filter,
                part(
                    &["OLD", "MID", "NEW", "FORWARD", "OTHER"],
                    &["OLD"],
                    &["OLD"]
                )
            )]
        );
        let f = restore_flushes(input, None);
        let want = [Some("OLD"), Some("OTHER")].map(|c| (TableKind::Filter, c.map(String::from)));
        assert_eq!(f, want);
    }

    #[test]
    fn lazy_chains_are_declared_first_in_append_only_tables() {
        type Want = &'static [(TableKind, &'static [&'static str])];
        const F: TableKind = TableKind::Filter;
        const N: TableKind = TableKind::Nat;
        // (input, only, chains whose rules may be read unparsed)
        let cases: &[(&str, Option<TableKind>, Want)] = &[
            // kube-proxy's form: declarations, then appends (with counters).
            (
                "*nat\n:KUBE-SERVICES - [0:0]\n:PREROUTING ACCEPT [0:0]\n:S1 - [0:0]\n-A KUBE-SERVICES -j S1\n[1:2] -A S1 -j RETURN\nCOMMIT\n",
                None,
                &[(N, &["KUBE-SERVICES", "S1"])],
            ),
            // A declaration after a command line: not that chain.
            (
                "*nat\n:A - [0:0]\n-A A -j RETURN\n:B - [0:0]\n-A B -j RETURN\nCOMMIT\n",
                None,
                &[(N, &["A"])],
            ),
            // Any other command in the table: none of its chains.
            (
                "*filter\n:A - [0:0]\n-A A -j RETURN\n-D A -j RETURN\nCOMMIT\n*nat\n:B - [0:0]\nCOMMIT\n",
                None,
                &[(N, &["B"])],
            ),
            (
                "*filter\n:A - [0:0]\n-S A\nCOMMIT\n",
                None,
                &[],
            ),
            // A table named twice: none.
            (
                "*filter\n:A - [0:0]\nCOMMIT\n*filter\n:B - [0:0]\nCOMMIT\n",
                None,
                &[],
            ),
            // -T: only that table.
            (
                "*filter\n:A - [0:0]\nCOMMIT\n*nat\n:B - [0:0]\nCOMMIT\n",
                Some(F),
                &[(F, &["A"])],
            ),
        ];
        for (input, only, want) in cases {
            let got = restore_lazy_chains(input, *only);
            let want: Vec<(TableKind, Vec<String>)> = want
                .iter()
                .map(|(k, cs)| (*k, cs.iter().map(|c| c.to_string()).collect()))
                .collect();
            assert_eq!(got, want, "{input}");
        }
    }
}
