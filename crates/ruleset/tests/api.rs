//! The public API as other crates use it: through `Ruleset`, by names.

use ruleset::{ChainId, Counters, Error, Family, Policy, RuleBody, RuleId, Ruleset, TableKind};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Rule {
    spec: String,
    jump: Option<String>,
}

impl RuleBody for Rule {
    fn jump_target(&self) -> Option<&str> {
        self.jump.as_deref()
    }
    fn retarget(&mut self, new_chain: &str) {
        self.jump = Some(new_chain.to_string());
    }
}

fn rule(spec: &str, jump: Option<&str>) -> Rule {
    Rule {
        spec: spec.to_string(),
        jump: jump.map(str::to_string),
    }
}

#[test]
fn tables_are_independent_and_transactions_roll_back() {
    let mut rs: Ruleset<Rule> = Ruleset::new();
    let t = rs.table_mut(Family::Ipv6, TableKind::Nat);
    t.new_chain("svc").unwrap();
    let id = t
        .append(
            "PREROUTING",
            rule("-p tcp", Some("svc")),
            Counters::default(),
        )
        .unwrap();
    assert_eq!(id, RuleId(1));
    assert_eq!(t.chain("svc").unwrap().references, 1);
    assert_eq!(
        rs.table(Family::Ipv4, TableKind::Nat)
            .chain("svc")
            .map(|c| c.id),
        None
    );

    let t = rs.table_mut(Family::Ipv6, TableKind::Nat);
    t.begin();
    t.rename_chain("svc", "svc2").unwrap();
    t.set_policy("OUTPUT", Policy::Drop, None).unwrap();
    assert_eq!(t.undo_log().map(|u| u.len()), Some(2));
    t.rollback();
    let specs: Vec<_> = t
        .rules("PREROUTING")
        .unwrap()
        .map(|r| r.body.clone())
        .collect();
    assert_eq!(specs, [rule("-p tcp", Some("svc"))]);
    assert_eq!(t.chain("OUTPUT").unwrap().policy, Some(Policy::Accept));
    assert_eq!(t.delete_chain("svc"), Err(Error::ChainInUse));
    assert_eq!(
        t.rule_by_id(id).map(|(c, p, _)| (c, p)),
        Some((ChainId(0), 1))
    );

    let fresh = ruleset::Table::new(Family::Ipv6, TableKind::Nat);
    let old = rs.replace_table(fresh);
    assert_eq!(old.rule_count(), 1);
    assert_eq!(rs.table(Family::Ipv6, TableKind::Nat).rule_count(), 0);
}
