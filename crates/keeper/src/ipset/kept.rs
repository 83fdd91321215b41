//! Which ipset reads a long-lived process (the daemon) may answer from
//! sets it read for an earlier command instead of reading them again.
//!
//! A set's members change in two ways: netlink commits, which move the
//! kernel's generation id (and reach the daemon as events), and the packet
//! path — members added or deleted by `-j SET` rules, members expiring,
//! counters counting — which moves nothing. So sets read at generation G
//! answer later reads exactly while the kernel is still at G, if every
//! one of them is *static*: no timeout, no counters, and no rule of the
//! tables holding its copies adds or deletes its members. A picture with
//! any other set is not kept at all (one rule for the whole picture keeps
//! it simple to trust).

use super::rules::rule_names;
use super::{Job, Sets};
use ipset::parse::{verb, Cmd};
use iptables::ext::TargetExt;
use iptables::{Rule, Target};
use ruleset::Ruleset;

/// Whether `job` only reads sets (`list`, `save`, `test`, `help`,
/// `version`): a group of such jobs commits nothing, so the sets it read
/// describe the kernel at the generation they were read at.
pub fn reads_only(job: &Job) -> bool {
    let args: Vec<&str> = job.args.iter().map(String::as_str).collect();
    matches!(
        verb(&args),
        Some((
            Cmd::List | Cmd::Save | Cmd::Test | Cmd::Help | Cmd::Version,
            _
        ))
    )
}

/// Whether every set in `sets` is static given the rules of `model` (the
/// rule tables at the same generation). O(sets + rules of the tables that
/// hold copies of them).
pub fn all_static(sets: &Sets, model: &Ruleset<Rule>) -> bool {
    if !sets.kernel.is_empty() {
        // Sets of the kernel's ipset module change without nftables
        // generations.
        return false;
    }
    let mut tables = Vec::new();
    for slot in sets.store.slots() {
        let h = &slot.set.header;
        if h.timeout.is_some() || h.counters {
            return false;
        }
        if let Some(place) = sets.places.get(&slot.name) {
            for (f, k, _) in &place.copies {
                if !tables.contains(&(*f, *k)) {
                    tables.push((*f, *k));
                }
            }
        }
    }
    for (f, k) in tables {
        let table = model.table(f, k);
        for c in table.chains() {
            for r in table.rules_in(&c) {
                if updates_members(r.body)
                    && rule_names(r.body)
                        .iter()
                        .any(|n| sets.store.get(n).is_some())
                {
                    return false;
                }
            }
        }
    }
    true
}

/// Whether `rule` changes set members from the packet path (`-j SET`).
fn updates_members(rule: &Rule) -> bool {
    matches!(&rule.target, Target::Ext(t) if matches!(&**t, TargetExt::Set(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipset::exec::{run, Ctx, NoMirror};
    use iptables::parse::{parse, ParseOpts};
    use ruleset::{Counters, Family, TableKind};

    fn job(line: &str) -> Job {
        Job {
            args: line.split_whitespace().map(String::from).collect(),
            input: None,
        }
    }

    #[test]
    fn reads_only_the_reading_commands() {
        let cases = [
            ("list", true),
            ("list s", true),
            ("-L s", true),
            ("-o save list s", true),
            ("list -name", true),
            ("save", true),
            ("test s 10.0.0.1", true),
            ("-T s 10.0.0.1", true),
            ("version", true),
            ("add s 10.0.0.1", false),
            ("restore", false),
            ("create s hash:ip", false),
            ("flush", false),
            ("destroy s", false),
            ("swap a b", false),
            ("", false),
        ];
        for (line, want) in cases {
            assert_eq!(reads_only(&job(line)), want, "{line:?}");
        }
    }

    /// A picture of sets (made by `create` lines) and rules in the filter
    /// table of IPv4, where the set `s` has a copy.
    fn picture(create: &[&str], rules: &[&str]) -> (Sets, Ruleset<Rule>) {
        let mut sets = Sets::default();
        {
            let mut m = NoMirror;
            let mut ctx = Ctx {
                store: &mut sets.store,
                mirror: &mut m,
                now: 1000,
            };
            for l in create {
                let w: Vec<&str> = l.split_whitespace().collect();
                assert_eq!(run(&mut ctx, &w, None).code, 0, "{l}");
            }
        }
        for slot in sets.store.slots() {
            let mut place = super::super::Place::default();
            if slot.name == "s" {
                let spec = compile::ipset::set_spec(&slot.set.header).unwrap();
                place.copies.push((Family::Ipv4, TableKind::Filter, spec));
            }
            sets.places.insert(slot.name.clone(), place);
        }
        let mut model = Ruleset::new();
        let t = model.table_mut(Family::Ipv4, TableKind::Filter);
        for r in rules {
            let words: Vec<&str> = r.split_whitespace().collect();
            let o = ParseOpts {
                family: Family::Ipv4,
                restore: true,
                table: Some(TableKind::Filter),
                prog: "nfkeeper",
            };
            let mut p = parse(&words, o).unwrap();
            t.append("INPUT", p.rules.remove(0), Counters::default())
                .unwrap();
        }
        (sets, model)
    }

    #[test]
    fn static_sets_and_the_others() {
        let cases: [(&[&str], &[&str], bool); 7] = [
            (&["create s hash:ip"], &[], true),
            (&["create s hash:ip", "create t hash:net"], &[], true),
            (&["create s hash:ip timeout 60"], &[], false),
            (
                &["create s hash:ip", "create t hash:ip counters"],
                &[],
                false,
            ),
            // Lookups change nothing without counters.
            (
                &["create s hash:ip"],
                &["-A INPUT -m set --match-set s src -j DROP"],
                true,
            ),
            // The packet path adds members.
            (
                &["create s hash:ip"],
                &["-A INPUT -j SET --add-set s src"],
                false,
            ),
            // A -j SET rule naming a set not in the picture.
            (
                &["create s hash:ip"],
                &["-A INPUT -j SET --add-set other src"],
                true,
            ),
        ];
        for (create, rules, want) in cases {
            let (sets, model) = picture(create, rules);
            assert_eq!(all_static(&sets, &model), want, "{create:?} {rules:?}");
        }
    }
}
