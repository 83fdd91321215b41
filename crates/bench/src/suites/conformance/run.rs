//! One tool through the vectors, the way iptables-test.py runs them: per
//! vector `TOOL -A spec`, then the tool's own save, then `TOOL -D spec`.
//!
//! - The append's exit status decides `FAIL` vectors (a refusal passes, an
//!   acceptance fails and the rule is deleted again).
//! - Otherwise the save output must hold the line `-A SAVE` (`OK`) or must
//!   not (`NOMATCH`), searched as the script does: `\n-A SAVE\n` anywhere
//!   in the output of `iptables-save` (all tables).
//! - An `OK` vector passes only when `-D` with the same words (counters
//!   dropped) then succeeds: it tests delete-by-specification too.
//! - Where the script would leave a rule behind (a `NOMATCH` pass, a
//!   failed delete), one more `-D` is tried, its result ignored, so that
//!   one failure does not cascade into the next vectors of the chain.
//!
//! Each file runs in each family in a namespace of its own (the caller's
//! [`Exec`] per file), so no state crosses files. Cost: three processes
//! per vector, linear in the number of vectors.

use super::vectors::{delete_spec, shell_words, Expect, Family, Step, Vector};

/// A finished command: exit status 0 or not, its output. A command that
/// could not run (not found, killed after a limit) is `ok: false` with the
/// reason in `stderr`.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs one command line (argv) where the tool's firewall lives (a
/// private network namespace).
pub trait Exec {
    fn exec(&self, argv: &[String]) -> Outcome;
}

/// A tool's command lines: the iptables and ip6tables front-ends and their
/// saves, each a program and leading words.
#[derive(Clone, Debug)]
pub struct Tool {
    pub name: String,
    pub iptables: Vec<String>,
    pub ip6tables: Vec<String>,
    pub save4: Vec<String>,
    pub save6: Vec<String>,
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

impl Tool {
    /// nfkeeper's personalities through `bin` (`bin iptables …`).
    pub fn nfkeeper(bin: &str) -> Tool {
        Tool {
            name: "nfkeeper".into(),
            iptables: words(&[bin, "iptables"]),
            ip6tables: words(&[bin, "ip6tables"]),
            save4: words(&[bin, "iptables-save"]),
            save6: words(&[bin, "ip6tables-save"]),
        }
    }

    /// iptables-nft and its save, from $PATH.
    pub fn iptables_nft() -> Tool {
        Tool {
            name: "iptables-nft".into(),
            iptables: words(&["iptables-nft"]),
            ip6tables: words(&["ip6tables-nft"]),
            save4: words(&["iptables-nft-save"]),
            save6: words(&["ip6tables-nft-save"]),
        }
    }

    fn cli(&self, f: Family) -> &[String] {
        match f {
            Family::V4 => &self.iptables,
            Family::V6 => &self.ip6tables,
        }
    }

    fn save(&self, f: Family) -> &[String] {
        match f {
            Family::V4 => &self.save4,
            Family::V6 => &self.save6,
        }
    }

    /// `TOOL op spec` with `spec` split as the shell splits it.
    fn command(&self, f: Family, op: &str, spec: &str) -> Vec<String> {
        let mut argv = self.cli(f).to_vec();
        argv.push(op.into());
        argv.extend(shell_words(spec));
        argv
    }

    /// An external command line of a file: `iptables …` / `ip6tables …`
    /// through this tool (as the script puts its multi-binary in front),
    /// anything else as is.
    fn external(&self, line: &str) -> Vec<String> {
        let mut w = shell_words(line);
        let front = match w.first().map(String::as_str) {
            Some("iptables") => Some(&self.iptables),
            Some("ip6tables") => Some(&self.ip6tables),
            _ => None,
        };
        if let Some(front) = front {
            w.splice(0..1, front.iter().cloned());
        }
        w
    }
}

/// A vector and, when it failed, why.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub vector: Vector,
    pub failure: Option<String>,
}

/// Runs `steps` (one file in one family, in order) through `tool`.
pub fn run_steps(tool: &Tool, ex: &dyn Exec, steps: &[Step]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            Step::External(line) => {
                let argv = tool.external(line);
                if !argv.is_empty() {
                    ex.exec(&argv);
                }
            }
            Step::Vector(v) => out.push(Verdict {
                failure: run_vector(tool, ex, v).err(),
                vector: v.clone(),
            }),
        }
    }
    out
}

/// One vector; `Err` says why it failed.
fn run_vector(tool: &Tool, ex: &dyn Exec, v: &Vector) -> Result<(), String> {
    let spec = v.spec();
    let del = || ex.exec(&tool.command(v.family, "-D", &delete_spec(&spec)));
    let add = ex.exec(&tool.command(v.family, "-A", &spec));
    if !add.ok {
        return match v.expect {
            Expect::Fail => Ok(()),
            _ => Err(format!("cannot load: {}", first_line(&add.stderr))),
        };
    }
    if v.expect == Expect::Fail {
        del();
        return Err("should fail: accepted".into());
    }
    let save = ex.exec(tool.save(v.family));
    if !save.ok {
        del();
        return Err(format!("save failed: {}", first_line(&save.stderr)));
    }
    let found = save.stdout.contains(&format!("\n-A {}\n", v.save));
    match (found, v.expect) {
        (false, Expect::Ok) => {
            del();
            let table = v.table.as_deref().unwrap_or("filter");
            Err(format!(
                "cannot find: saved {}",
                saved_rules(&save.stdout, table, &v.chain).join(" | ")
            ))
        }
        (false, _) => {
            del();
            Ok(())
        }
        (true, Expect::Ok) => {
            let d = del();
            if d.ok {
                Ok(())
            } else {
                del();
                Err(format!("cannot delete: {}", first_line(&d.stderr)))
            }
        }
        (true, _) => {
            del();
            Err("should not match: saved as given".into())
        }
    }
}

/// The `-A CHAIN …` lines of `table` in a save output (what the tool
/// printed instead of the expected line).
fn saved_rules(save: &str, table: &str, chain: &str) -> Vec<String> {
    let head = format!("*{table}");
    let prefix = format!("-A {chain} ");
    save.lines()
        .skip_while(|l| *l != head)
        .take_while(|l| *l != "COMMIT")
        .filter(|l| l.starts_with(&prefix))
        .map(String::from)
        .collect()
}

/// The first non-empty line of a message, for one-line failure reasons.
fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no message)")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::conformance::vectors::parse;
    use std::cell::RefCell;

    /// A fake tool: accepts rules without `bad`, saves each accepted rule
    /// with `long` rewritten to `short`, deletes by exact words.
    #[derive(Default)]
    struct Fake {
        rules: RefCell<Vec<String>>,
        log: RefCell<Vec<String>>,
    }

    impl Exec for Fake {
        fn exec(&self, argv: &[String]) -> Outcome {
            self.log.borrow_mut().push(argv.join(" "));
            let mut rules = self.rules.borrow_mut();
            let rest = argv[2..].join(" ");
            let ok = |ok| Outcome {
                ok,
                stdout: String::new(),
                stderr: if ok { String::new() } else { "nope\n".into() },
            };
            match (argv[1].as_str(), argv.get(2).map(String::as_str)) {
                ("iptables", Some("-A")) if rest.contains("bad") => ok(false),
                ("iptables", Some("-A")) => {
                    rules.push(argv[3..].join(" "));
                    ok(true)
                }
                ("iptables", Some("-D")) => {
                    let r = argv[3..].join(" ");
                    match rules.iter().position(|x| *x == r) {
                        Some(i) => {
                            rules.remove(i);
                            ok(true)
                        }
                        None => ok(false),
                    }
                }
                ("iptables-save", _) => {
                    let mut s = "# x\n*filter\n".to_string();
                    for r in rules.iter() {
                        let r = r.replace("long", "short").replace("-t filter ", "");
                        s.push_str(&format!("-A {r}\n"));
                    }
                    s.push_str("COMMIT\n");
                    Outcome {
                        ok: true,
                        stdout: s,
                        stderr: String::new(),
                    }
                }
                _ => ok(true),
            }
        }
    }

    #[test]
    fn verdicts_follow_the_script() {
        let text = "\
:INPUT
-p tcp;=;OK
-m bad;;FAIL
-m good;;FAIL
-m long;-m short;OK
-m long;=;OK
-m long;=;NOMATCH
-m short;=;NOMATCH
-m bad;=;OK
%iptables -N X
";
        let steps = parse("libipt_x.t", text, Family::V4).unwrap();
        let tool = Tool::nfkeeper("nfk");
        let fake = Fake::default();
        let got: Vec<String> = run_steps(&tool, &fake, &steps)
            .into_iter()
            .map(|v| format!("{}: {}", v.vector.line, v.failure.unwrap_or("ok".into())))
            .collect();
        assert_eq!(
            got,
            [
                "2: ok",
                "3: ok",
                "4: should fail: accepted",
                "5: ok",
                "6: cannot find: saved -A INPUT -m short",
                "7: ok",
                "8: should not match: saved as given",
                "9: cannot load: nope",
            ]
        );
        // Nothing is left behind, and the external command went through
        // the tool.
        assert!(fake.rules.borrow().is_empty(), "{:?}", fake.rules.borrow());
        assert_eq!(fake.log.borrow().last().unwrap(), "nfk iptables -N X");
    }
}
