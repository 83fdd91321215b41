//! A table's entries as chains: built-in chains start at their hook's entry
//! and end at its underflow (the policy); a user chain starts after an
//! ERROR entry naming it and ends with an unconditional RETURN before the
//! next ERROR; the last entry is the ERROR named "ERROR". Standard targets
//! carry a verdict (`-NF_x - 1`, `XT_RETURN` = -5) or a byte offset: the
//! entry after a user chain's ERROR head for a jump (a goto when the
//! entry's GOTO flag is set), the entry's own end for a rule without
//! target.

use crate::entry::{self, flags, BadBlob, Entry, Ext};
use ruleset::Family;

/// The hooks' built-in chain names, by hook number (`NF_INET_*`).
pub const HOOKS: [&str; 5] = ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];

/// `IPT_SO_GET_INFO`'s answer (`struct ipt_getinfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    pub valid_hooks: u32,
    /// Offsets of each hook's first entry and of its policy entry.
    pub hook_entry: [u32; 5],
    pub underflow: [u32; 5],
    pub num_entries: u32,
    pub size: u32,
}

/// A built-in verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Drop,
    Queue,
    Return,
}

impl Verdict {
    /// From a standard target's negative verdict.
    pub fn from_raw(v: i32) -> Option<Verdict> {
        Some(match v {
            -1 => Verdict::Drop,
            -2 => Verdict::Accept,
            -4 => Verdict::Queue,
            -5 => Verdict::Return,
            _ => return None,
        })
    }

    pub fn raw(self) -> i32 {
        match self {
            Verdict::Drop => -1,
            Verdict::Accept => -2,
            Verdict::Queue => -4,
            Verdict::Return => -5,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Accept => "ACCEPT",
            Verdict::Drop => "DROP",
            Verdict::Queue => "QUEUE",
            Verdict::Return => "RETURN",
        }
    }
}

/// What a rule does, with jumps resolved to chain names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawTarget {
    /// No target: the rule only counts.
    None,
    Verdict(Verdict),
    Jump(String),
    Goto(String),
    Ext(Ext),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRule {
    pub entry: Entry,
    pub target: RawTarget,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawChain {
    pub name: String,
    /// Built-in chains: the policy and its counters.
    pub policy: Option<(Verdict, (u64, u64))>,
    pub rules: Vec<RawRule>,
}

/// The chains of a table in blob order (built-ins in hook order first, as
/// the kernel lays them out, then user chains).
pub fn chains(family: Family, info: &Info, entries: &[Entry]) -> Result<Vec<RawChain>, BadBlob> {
    let bad = |s: String| Err(BadBlob(s));
    // Jump targets: the offset after each user chain's head.
    let mut heads = std::collections::HashMap::new();
    for e in entries {
        if e.target.name == entry::ERROR && e.target.error_name() != entry::ERROR {
            heads.insert(e.offset + e.size, e.target.error_name());
        }
    }
    let goto_flag = match family {
        Family::Ipv4 => flags::V4_GOTO,
        Family::Ipv6 => flags::V6_GOTO,
    };
    let hook_at =
        |off: u32| (0..5).find(|&h| info.valid_hooks & (1 << h) != 0 && info.hook_entry[h] == off);
    let mut out: Vec<RawChain> = Vec::new();
    // The chain being read: its index in `out` and, for a built-in one,
    // its hook.
    let mut cur: Option<(usize, Option<usize>)> = None;
    let mut ended = false;
    for e in entries {
        if ended {
            return bad(format!("entry at {} after the table's end", e.offset));
        }
        if let Some(h) = hook_at(e.offset) {
            out.push(RawChain {
                name: HOOKS[h].into(),
                policy: None,
                rules: Vec::new(),
            });
            cur = Some((out.len() - 1, Some(h)));
        }
        if e.target.name == entry::ERROR {
            if let Some((i, None)) = cur {
                // The user chain's tail: its last entry, an unconditional
                // RETURN, is no rule.
                match out[i].rules.pop() {
                    Some(r) if r.target == RawTarget::Verdict(Verdict::Return) => {}
                    _ => return bad(format!("chain {} does not end in RETURN", out[i].name)),
                }
            }
            if let Some((i, Some(_))) = cur {
                return bad(format!("chain {} has no policy", out[i].name));
            }
            let name = e.target.error_name();
            if name == entry::ERROR {
                ended = true;
                cur = None;
                continue;
            }
            out.push(RawChain {
                name,
                policy: None,
                rules: Vec::new(),
            });
            cur = Some((out.len() - 1, None));
            continue;
        }
        let Some((i, hook)) = cur else {
            return bad(format!("entry at {} belongs to no chain", e.offset));
        };
        let target = if e.target.name == entry::STANDARD {
            let Some(v) = e.target.verdict() else {
                return bad(format!("standard target at {} has no verdict", e.offset));
            };
            if v < 0 {
                match Verdict::from_raw(v) {
                    Some(v) => RawTarget::Verdict(v),
                    None => return bad(format!("verdict {v} at {}", e.offset)),
                }
            } else if v as u32 == e.offset + e.size && e.ip.flags & goto_flag == 0 {
                RawTarget::None
            } else if let Some(name) = heads.get(&(v as u32)) {
                if e.ip.flags & goto_flag != 0 {
                    RawTarget::Goto(name.clone())
                } else {
                    RawTarget::Jump(name.clone())
                }
            } else {
                return bad(format!("jump at {} to offset {v}, no chain", e.offset));
            }
        } else {
            RawTarget::Ext(e.target.clone())
        };
        if let Some(h) = hook {
            if info.underflow[h] == e.offset {
                let RawTarget::Verdict(v) = target else {
                    return bad(format!("policy of {} is no verdict", HOOKS[h]));
                };
                out[i].policy = Some((v, e.counters));
                cur = None;
                continue;
            }
        }
        out[i].rules.push(RawRule {
            entry: e.clone(),
            target,
        });
    }
    if !ended {
        return bad("no ERROR entry ends the table".into());
    }
    let builtins = out.iter().filter(|c| c.policy.is_some()).count();
    if builtins != info.valid_hooks.count_ones() as usize {
        return bad(format!(
            "{builtins} built-in chains for hooks {:#x}",
            info.valid_hooks
        ));
    }
    Ok(out)
}

/// The blob and info of an empty table: each of `valid_hooks`' chains with
/// an ACCEPT policy, then the ending ERROR entry (what `IPT_SO_SET_REPLACE`
/// takes to empty a table).
pub fn empty(family: Family, valid_hooks: u32) -> (Info, Vec<u8>) {
    let mut w = entry::Writer::new(family);
    let mut info = Info {
        valid_hooks,
        ..Info::default()
    };
    let ip = entry::IpPart::default();
    for h in 0..5 {
        if valid_hooks & (1 << h) != 0 {
            let at = w.push(&ip, &[], &entry::standard(Verdict::Accept.raw()));
            info.hook_entry[h] = at;
            info.underflow[h] = at;
            info.num_entries += 1;
        }
    }
    w.push(&ip, &[], &entry::error(entry::ERROR));
    info.num_entries += 1;
    info.size = w.blob.len() as u32;
    (info, w.blob)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{error, standard, IpPart, Writer};

    /// filter with INPUT (policy DROP, a jump to `a`), FORWARD, OUTPUT (a
    /// goto to `a`, a rule without target), user chain `a` (RETURN rule).
    fn sample(family: Family) -> (Info, Vec<u8>) {
        let mut w = Writer::new(family);
        let ip = IpPart::default();
        let goto = match family {
            Family::Ipv4 => flags::V4_GOTO,
            Family::Ipv6 => flags::V6_GOTO,
        };
        let std_size = w.entry_size(&[], &standard(0));
        let err_size = w.entry_size(&[], &error("a"));
        // Layout: INPUT jump, INPUT policy, FORWARD policy, OUTPUT goto,
        // OUTPUT count-only, OUTPUT policy, ERROR a, a RETURN rule, a tail,
        // ERROR.
        let a_body = 6 * std_size + err_size;
        let mut info = Info {
            valid_hooks: 0b1110,
            ..Info::default()
        };
        info.hook_entry[1] = w.push(&ip, &[], &standard(a_body as i32));
        info.underflow[1] = w.push(&ip, &[], &standard(-1));
        info.hook_entry[2] = w.push(&ip, &[], &standard(-2));
        info.underflow[2] = info.hook_entry[2];
        let g = IpPart {
            flags: goto,
            ..IpPart::default()
        };
        info.hook_entry[3] = w.push(&g, &[], &standard(a_body as i32));
        let here = w.blob.len() as u32;
        w.push(&ip, &[], &standard((here + std_size) as i32));
        info.underflow[3] = w.push(&ip, &[], &standard(-2));
        w.push(&ip, &[], &error("a"));
        assert_eq!(w.push(&ip, &[], &standard(-5)), a_body);
        w.push(&ip, &[], &standard(-5));
        w.push(&ip, &[], &error("ERROR"));
        info.size = w.blob.len() as u32;
        info.num_entries = 10;
        (info, w.blob)
    }

    #[test]
    fn chains_policies_jumps_and_gotos() {
        for family in [Family::Ipv4, Family::Ipv6] {
            let (info, blob) = sample(family);
            let entries = entry::parse(family, &blob).unwrap();
            let got = chains(family, &info, &entries).unwrap();
            let shape: Vec<(String, Option<Verdict>, Vec<RawTarget>)> = got
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.policy.map(|p| p.0),
                        c.rules.iter().map(|r| r.target.clone()).collect(),
                    )
                })
                .collect();
            let want = vec![
                (
                    "INPUT".to_string(),
                    Some(Verdict::Drop),
                    vec![RawTarget::Jump("a".into())],
                ),
                ("FORWARD".into(), Some(Verdict::Accept), vec![]),
                (
                    "OUTPUT".into(),
                    Some(Verdict::Accept),
                    vec![RawTarget::Goto("a".into()), RawTarget::None],
                ),
                ("a".into(), None, vec![RawTarget::Verdict(Verdict::Return)]),
            ];
            assert_eq!(shape, want, "{family:?}");
        }
    }

    #[test]
    fn empty_tables_read_back_empty() {
        for family in [Family::Ipv4, Family::Ipv6] {
            let (info, blob) = empty(family, 0b11011);
            assert_eq!(info.num_entries, 5);
            let entries = entry::parse(family, &blob).unwrap();
            let got = chains(family, &info, &entries).unwrap();
            let names: Vec<&str> = got.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"]);
            assert!(got
                .iter()
                .all(|c| c.rules.is_empty() && c.policy.map(|p| p.0) == Some(Verdict::Accept)));
        }
    }

    #[test]
    fn broken_structure_is_refused() {
        let family = Family::Ipv4;
        let (info, blob) = sample(family);
        let entries = entry::parse(family, &blob).unwrap();
        let mut no_end = entries.clone();
        no_end.pop();
        let mut bad_jump = entries.clone();
        bad_jump[0].target = standard(4);
        let mut wrong_hooks = info.clone();
        wrong_hooks.valid_hooks |= 1;
        let cases: Vec<(Info, Vec<Entry>, &str)> = vec![
            (info.clone(), no_end, "no ERROR entry"),
            (info.clone(), bad_jump, "no chain"),
            (wrong_hooks, entries, "policy of PREROUTING"),
        ];
        for (i, e, want) in cases {
            let err = chains(family, &i, &e).unwrap_err();
            assert!(err.0.contains(want), "{err} / {want}");
        }
    }
}
