//! The extension test files of iptables (`extensions/*.t`), read as
//! iptables' own `iptables-test.py` reads them (non-fast mode, the
//! nf_tables variant):
//!
//! - `#…` and blank lines are skipped; `:A,B` sets the chains of the lines
//!   that follow; `*table` sets their table (`-t table` after the chain);
//!   `@cmd` / `%cmd` is an external command run as is (`iptables …` through
//!   the tool under test), its result ignored.
//! - Any other line is `rule;save;result[;variant[;alt]]`: `rule` is
//!   appended (`-A CHAIN [-t T] rule`) and, when `result` is `OK`, the
//!   save output must hold the line `-A CHAIN save` (`=`: the rule
//!   itself). `FAIL`: the append must fail. `NOMATCH`: it succeeds but the
//!   rule does not save as given.
//! - A `variant` (`NFT`, `LEGACY`) scopes the result to that backend. For
//!   the other one (both tools here are nf_tables ones, so for `LEGACY`):
//!   `alt` is a result word (that result), or another save form (`=`: the
//!   rule itself; the result stays `OK`); without `alt`, the result is
//!   inverted (`OK`↔`FAIL`, `NOMATCH`→`OK`).
//!
//! Families by file name: `libipt_` IPv4, `libip6t_` IPv6, `libxt_` both,
//! `libarpt_` / `libebt_` none (not iptables' families), others IPv4.
//!
//! A vector is one (file, line, family, chain): iptables-test.py counts a
//! line once per family (its "unit tests") and passes it when every chain
//! passes; [`Vector::line`] and [`Vector::family`] group them back.

/// IPv4 (`iptables`) or IPv6 (`ip6tables`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::V4 => "ipv4",
            Family::V6 => "ipv6",
        }
    }
}

/// What the append of a vector must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Succeed, and save as [`Vector::save`].
    Ok,
    /// Fail.
    Fail,
    /// Succeed, and not save as [`Vector::save`].
    NoMatch,
}

/// One rule of a test file in one chain and family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    /// File name (`libxt_tcp.t`) and 1-based line.
    pub file: String,
    pub line: usize,
    pub family: Family,
    pub chain: String,
    /// The table line in force (`None`: no `-t`, the filter table).
    pub table: Option<String>,
    /// The rule's words after `-A CHAIN [-t T]`, as the file has them
    /// (shell quoting included; see [`shell_words`]).
    pub rule: String,
    /// The save line to find, without `-A ` (`CHAIN …`).
    pub save: String,
    pub expect: Expect,
}

impl Vector {
    /// `CHAIN [-t T] rule`, the words after `-A` / `-D`.
    pub fn spec(&self) -> String {
        match &self.table {
            Some(t) => format!("{} -t {t} {}", self.chain, self.rule),
            None => format!("{} {}", self.chain, self.rule),
        }
    }
}

/// A step of a test file's run in one family, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `@…` / `%…` without the marker.
    External(String),
    Vector(Vector),
}

/// The families a file runs in, by its name.
pub fn families(file: &str) -> &'static [Family] {
    if file.starts_with("libipt_") {
        &[Family::V4]
    } else if file.starts_with("libip6t_") {
        &[Family::V6]
    } else if file.starts_with("libxt_") {
        &[Family::V4, Family::V6]
    } else if file.starts_with("libarpt_") || file.starts_with("libebt_") {
        &[]
    } else {
        &[Family::V4]
    }
}

/// The steps of `text` (the file `file`) in `family`. Malformed lines (no
/// chain yet, fewer than three fields, an unknown result) are errors.
pub fn parse(file: &str, text: &str, family: Family) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut chains: Vec<String> = Vec::new();
    let mut table: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |m: &str| format!("{file}:{line}: {m}");
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let body = raw.trim_end();
        if let Some(c) = body.strip_prefix(':') {
            chains = c.split(',').map(String::from).collect();
            continue;
        }
        if let Some(cmd) = body.strip_prefix('@').or_else(|| body.strip_prefix('%')) {
            steps.push(Step::External(cmd.to_string()));
            continue;
        }
        if let Some(t) = body.strip_prefix('*') {
            table = Some(t.to_string());
            continue;
        }
        if chains.is_empty() {
            return Err(err("rule before any chain line"));
        }
        let item: Vec<&str> = raw.split(';').collect();
        if item.len() < 3 {
            return Err(err("fewer than three fields"));
        }
        let mut expect = result(item[2].trim_end()).ok_or_else(|| err("unknown result"))?;
        let mut save = if item[1] == "=" { item[0] } else { item[1] };
        if let Some(variant) = item.get(3).map(|v| v.trim_end()) {
            if variant != "NFT" {
                match item.get(4).map(|a| a.trim_end()) {
                    Some(alt) => match result(alt) {
                        Some(r) => expect = r,
                        None if alt == "=" => save = item[0],
                        None => save = alt,
                    },
                    None => {
                        expect = match expect {
                            Expect::Ok => Expect::Fail,
                            Expect::Fail | Expect::NoMatch => Expect::Ok,
                        }
                    }
                }
            }
        }
        for chain in &chains {
            steps.push(Step::Vector(Vector {
                file: file.to_string(),
                line,
                family,
                chain: chain.clone(),
                table: table.clone(),
                rule: item[0].to_string(),
                save: format!("{chain} {save}"),
                expect,
            }));
        }
    }
    Ok(steps)
}

fn result(word: &str) -> Option<Expect> {
    match word {
        "OK" => Some(Expect::Ok),
        "FAIL" => Some(Expect::Fail),
        "NOMATCH" => Some(Expect::NoMatch),
        _ => None,
    }
}

/// `spec` as iptables-test.py deletes it: the words split on white space,
/// `-c` / `--set-counters` and its value(s) removed (`-D` refuses them),
/// joined again.
pub fn delete_spec(spec: &str) -> String {
    let mut w: Vec<&str> = spec.split_whitespace().collect();
    if let Some(i) = w.iter().position(|t| *t == "-c" || *t == "--set-counters") {
        w.remove(i);
        if i < w.len() {
            let v = w.remove(i);
            if !v.contains(',') && i < w.len() && w[i].bytes().all(|b| b.is_ascii_digit()) {
                w.remove(i);
            }
        }
    }
    w.join(" ")
}

/// The words the shell makes of `line` (the test script hands command
/// lines to `sh -c`): white space separates, `"…"` and `'…'` quote,
/// `\` escapes outside single quotes. Enough for the vector files, which
/// use double quotes only; no expansions.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                if !matches!(e, '"' | '\\' | '$' | '`') {
                                    cur.push('\\');
                                }
                                cur.push(e);
                            }
                        }
                        _ => cur.push(q),
                    }
                }
            }
            '\'' => {
                word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '\\' => {
                word = true;
                if let Some(e) = chars.next() {
                    cur.push(e);
                }
            }
            c if c.is_whitespace() => {
                if word {
                    out.push(std::mem::take(&mut cur));
                    word = false;
                }
            }
            c => {
                word = true;
                cur.push(c);
            }
        }
    }
    if word {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_quote_like_sh() {
        let table: [(&str, &[&str]); 5] = [
            ("-A INPUT -j ACCEPT", &["-A", "INPUT", "-j", "ACCEPT"]),
            (
                "-j LOG --log-prefix \"test: \" --log-uid",
                &["-j", "LOG", "--log-prefix", "test: ", "--log-uid"],
            ),
            ("-c \"\"", &["-c", ""]),
            ("a'b c'd  e", &["ab cd", "e"]),
            ("x\\ y \"q\\\"\\n\"", &["x y", "q\"\\n"]),
        ];
        for (line, want) in table {
            assert_eq!(shell_words(line), want, "{line}");
        }
    }

    #[test]
    fn delete_spec_drops_counters() {
        let table = [
            ("INPUT -c 2,3 -j ACCEPT", "INPUT -j ACCEPT"),
            ("INPUT -c 2 3 -j ACCEPT", "INPUT -j ACCEPT"),
            ("INPUT --set-counters 2 x", "INPUT x"),
            ("INPUT  -p tcp", "INPUT -p tcp"),
        ];
        for (spec, want) in table {
            assert_eq!(delete_spec(spec), want, "{spec}");
        }
    }

    /// Chains, tables, externals, results and variants, as the test
    /// script reads them.
    #[test]
    fn parse_reads_the_script_format() {
        let text = "\
:INPUT,OUTPUT
# comment
-p tcp;=;OK
*nat
@nfacct add test
-j X;-j Y;FAIL
:FORWARD
-j N --r 1;=;OK;LEGACY;NOMATCH
-j N --p xx;-j N --p x;OK;LEGACY;=
-j T;=;FAIL;LEGACY
-j U;=;OK;NFT
";
        let steps = parse("libxt_x.t", text, Family::V6).unwrap();
        let got: Vec<String> = steps
            .iter()
            .map(|s| match s {
                Step::External(c) => format!("ext {c}"),
                Step::Vector(v) => format!(
                    "{} {} {:?} [{}] [{}]",
                    v.line,
                    v.family.as_str(),
                    v.expect,
                    v.spec(),
                    v.save
                ),
            })
            .collect();
        let want = [
            "3 ipv6 Ok [INPUT -p tcp] [INPUT -p tcp]",
            "3 ipv6 Ok [OUTPUT -p tcp] [OUTPUT -p tcp]",
            "ext nfacct add test",
            "6 ipv6 Fail [INPUT -t nat -j X] [INPUT -j Y]",
            "6 ipv6 Fail [OUTPUT -t nat -j X] [OUTPUT -j Y]",
            "8 ipv6 NoMatch [FORWARD -t nat -j N --r 1] [FORWARD -j N --r 1]",
            "9 ipv6 Ok [FORWARD -t nat -j N --p xx] [FORWARD -j N --p xx]",
            "10 ipv6 Ok [FORWARD -t nat -j T] [FORWARD -j T]",
            "11 ipv6 Ok [FORWARD -t nat -j U] [FORWARD -j U]",
        ];
        assert_eq!(got, want);
        assert!(parse("f.t", "-p tcp;=;OK\n", Family::V4).is_err());
        assert!(parse("f.t", ":INPUT\n-p tcp;=\n", Family::V4).is_err());
        assert_eq!(families("libxt_a.t"), &[Family::V4, Family::V6]);
        assert_eq!(families("libip6t_a.t"), &[Family::V6]);
        assert!(families("libebt_a.t").is_empty());
        assert_eq!(families("iptables.t"), &[Family::V4]);
    }
}
