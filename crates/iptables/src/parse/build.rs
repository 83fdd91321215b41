//! The end of a command-line parse: extension final checks, the option /
//! command consistency checks, and the rule(s) the command carries.

use super::argv::State;
use super::options::*;
use super::{Command, ListFlags, Parsed};
use crate::error::{Error, Result};
use crate::ext::{self, Match, ParseCtx};
use crate::opt;
use crate::rule::{inv, Addr, Iface, Rule, Target};
use ruleset::{Family, Policy, TableKind};

impl State<'_> {
    pub(super) fn finish(mut self) -> Result<Parsed> {
        let table = match (self.o.table, self.table) {
            (Some(t), _) => t,
            (None, Some(name)) => TableKind::from_name(name)
                .ok_or_else(|| Error::version(format!("table '{name}' does not exist")))?,
            (None, None) => TableKind::Filter,
        };
        let flags = ListFlags {
            numeric: self.options & O_NUMERIC != 0,
            verbose: self.verbose > 0,
            exact: self.options & O_EXACT != 0,
            line_numbers: self.options & O_LINENUM != 0,
            wait: self.wait,
        };
        if self.help {
            return Ok(Parsed {
                command: Command::Help,
                table,
                rules: Vec::new(),
                counters: None,
                flags,
                warnings: std::mem::take(&mut self.warnings),
            });
        }
        if self.version {
            return Ok(Parsed {
                command: Command::Version,
                table,
                rules: Vec::new(),
                counters: None,
                flags,
                warnings: std::mem::take(&mut self.warnings),
            });
        }
        if table == TableKind::Nat && (self.policy == Some("DROP") || self.jumpto == Some("DROP")) {
            return Err(Error::param(
                "\nThe \"nat\" table is not intended for filtering, the use of DROP is therefore inhibited.\n\n",
            ));
        }
        let ctx = ParseCtx {
            family: self.o.family,
            table,
            chain: self.chain.unwrap_or(""),
            proto: self.proto,
            inv_proto: self.invflags & inv::PROTO != 0,
        };
        // As xtables: the extension's own final check, then the generic
        // mandatory/exclusive/also-requires checks.
        for l in &mut self.matches {
            l.ext.finish(l.seen, &ctx)?;
            ext::postcheck(l.ext.name(), l.ext.opts(), l.seen)?;
        }
        if let Some(l) = &mut self.target {
            l.ext.finish(l.seen, &ctx)?;
            ext::postcheck(l.ext.name(), l.ext.opts(), l.seen)?;
        }
        if self.cmd == 0 {
            return Err(Error::param("no command specified"));
        }
        for i in 0..12 {
            let o = 1u32 << i;
            if self.options & o != 0 && allowed_commands(o) & self.cmd != self.cmd {
                return Err(Error::param(format!(
                    "Illegal option `{}' with this command",
                    option_name(o)
                )));
            }
        }
        let chain = self.chain.unwrap_or("");
        if chain.len() >= MAXNAMELEN {
            return Err(Error::param(format!(
                "chain name `{chain}' too long (must be under {MAXNAMELEN} chars)"
            )));
        }
        let rule_cmd = C_APPEND | C_DELETE | C_CHECK | C_INSERT | C_REPLACE;
        if self.cmd & rule_cmd != 0 {
            if (chain == "PREROUTING" || chain == "INPUT") && self.options & O_OUT != 0 {
                return Err(Error::param(format!(
                    "Can't use --out-interface with {chain}"
                )));
            }
            if (chain == "POSTROUTING" || chain == "OUTPUT") && self.options & O_IN != 0 {
                return Err(Error::param(format!(
                    "Can't use --in-interface with {chain}"
                )));
            }
        }
        let rules = if self.cmd & rule_cmd != 0 {
            self.build_rules()?
        } else {
            Vec::new()
        };
        let owned = |s: Option<&str>| s.map(str::to_string);
        let command = match self.cmd {
            C_APPEND => Command::Append(chain.into()),
            C_CHECK => Command::Check(chain.into()),
            C_DELETE => Command::Delete(chain.into()),
            C_DELETE_NUM => Command::DeleteNum(chain.into(), self.rulenum.unwrap_or(1)),
            C_INSERT => Command::Insert(chain.into(), self.rulenum.unwrap_or(1)),
            C_REPLACE => Command::Replace(chain.into(), self.rulenum.unwrap_or(1)),
            C_FLUSH => Command::Flush(owned(self.chain)),
            C_NEW_CHAIN => Command::NewChain(chain.into()),
            C_DELETE_CHAIN => Command::DeleteChain(owned(self.chain)),
            C_RENAME => Command::Rename(chain.into(), self.newname.unwrap_or("").into()),
            C_SET_POLICY => {
                let p = self.policy.unwrap_or("");
                let policy = match p {
                    "ACCEPT" => Policy::Accept,
                    "DROP" => Policy::Drop,
                    _ => {
                        return Err(Error::op(
                            "Bad policy name. Run `dmesg' for more information.",
                        ))
                    }
                };
                Command::Policy(chain.into(), policy, self.counters.unwrap_or_default())
            }
            c if c & (C_LIST | C_LIST_RULES) != 0 => {
                let zero = c & (C_ZERO | C_ZERO_NUM) != 0;
                if c & C_LIST != 0 {
                    Command::List {
                        chain: owned(self.chain),
                        num: self.rulenum,
                        zero,
                    }
                } else {
                    Command::ListRules {
                        chain: owned(self.chain),
                        num: self.rulenum,
                        zero,
                    }
                }
            }
            C_ZERO => Command::Zero {
                chain: owned(self.chain),
                num: None,
            },
            C_ZERO_NUM => Command::Zero {
                chain: owned(self.chain),
                num: self.rulenum,
            },
            _ => return Err(Error::param("no command specified")),
        };
        Ok(Parsed {
            command,
            table,
            rules,
            counters: self.counters,
            flags,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    /// The rule(s) of a rule command: one per (source, destination) pair
    /// when `-s`/`-d` list several addresses.
    fn build_rules(&mut self) -> Result<Vec<Rule>> {
        let v6 = self.o.family == Family::Ipv6;
        // Most rules name one address (or none): parse it without a Vec.
        let one = |part: &str| -> Result<Addr> {
            if part.trim_start().len() > 255 {
                return Err(Error::param("Hostname too long"));
            }
            let (addr, mask) = opt::parse_host_mask(part, v6)?;
            Ok(Addr { addr, mask })
        };
        let split = |s: Option<&str>| -> Result<(Addr, Vec<Addr>)> {
            let Some(s) = s else {
                return Ok((Addr::default(), Vec::new()));
            };
            if !s.as_bytes().contains(&b',') {
                return Ok((one(s)?, Vec::new()));
            }
            let mut parts = s.split(',');
            let first = one(parts.next().unwrap_or(""))?;
            let rest = parts.map(one).collect::<Result<Vec<Addr>>>()?;
            Ok((first, rest))
        };
        let (src0, src_rest) = split(self.src)?;
        let (dst0, dst_rest) = split(self.dst)?;
        let multi = !src_rest.is_empty() || !dst_rest.is_empty();
        if multi && self.invflags & (inv::SRC | inv::DST) != 0 {
            return Err(Error::param(
                "! not allowed with multiple source or destination IP addresses",
            ));
        }
        let target = match self.jumpto {
            None => Target::None,
            Some(name) => match (self.target.take(), name) {
                (Some(t), _) => {
                    if self.goto {
                        Target::Goto(name.into())
                    } else {
                        Target::Ext(Box::new(t.ext))
                    }
                }
                (None, "ACCEPT") => Target::Accept,
                (None, "DROP") => Target::Drop,
                (None, "RETURN") => Target::Return,
                (None, n) => {
                    if ext::KNOWN_TARGETS.contains(&n) && !self.goto {
                        return Err(Error::param(format!(
                            "Couldn't load target `{n}':No such file or directory\n"
                        )));
                    }
                    if self.goto {
                        Target::Goto(n.into())
                    } else {
                        Target::Jump(n.into())
                    }
                }
            },
        };
        // An exact-capacity Vec: `collect()` here would reuse the parse
        // state's allocation in place (its elements are larger than a
        // `Match`), keeping ~4x the bytes alive for the rule's lifetime
        // (measured: 768 instead of 192 bytes per one-match rule).
        let parsed = std::mem::take(&mut self.matches);
        let mut matches: Vec<Match> = Vec::with_capacity(parsed.len());
        matches.extend(parsed.into_iter().map(|l| l.ext));
        // `-i +` / `-o +` match everything and are dropped unless inverted.
        let any = Iface::new("+").unwrap_or_default();
        let mut invflags = self.invflags;
        if self.iniface == any && invflags & inv::IN == 0 {
            self.iniface = Iface::default();
        }
        if self.outiface == any && invflags & inv::OUT == 0 {
            self.outiface = Iface::default();
        }
        if !self.frag {
            invflags &= !inv::FRAG;
        }
        let template = Rule {
            src: src0,
            dst: dst0,
            iniface: self.iniface,
            outiface: self.outiface,
            proto: self.proto,
            frag: self.frag,
            inv: invflags,
            matches,
            target,
        };
        if !multi {
            return Ok(vec![template]);
        }
        let srcs: Vec<Addr> = std::iter::once(src0).chain(src_rest).collect();
        let dsts: Vec<Addr> = std::iter::once(dst0).chain(dst_rest).collect();
        let mut rules = Vec::with_capacity(srcs.len() * dsts.len());
        for s in &srcs {
            for d in &dsts {
                let mut r = template.clone();
                r.src = *s;
                r.dst = *d;
                rules.push(r);
            }
        }
        Ok(rules)
    }
}
