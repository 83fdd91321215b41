//! A host's desired state: a release's rulesets with the host's additions
//! on top, as the logical model (for the lockout check), the restore text
//! that replaces the kernel's tables, and a digest to compare with what the
//! kernel holds.
//!
//! Scope: the tables a release (or the host's additions) names, per
//! family, as iptables-restore without `--noflush` replaces exactly the
//! tables its input names; the others are left to whoever else writes
//! them, and are not compared. A release empties a table by naming it
//! empty (`*nat` / `COMMIT`).
//!
//! Canonical form: both sides — what we want and what the kernel's
//! iptables-save prints — are read into the model and printed back table
//! by table (fixed table order, no counters), tables in scope only. A table
//! that holds nothing (built-in chains only, policies ACCEPT, no rules)
//! counts as absent, so a table the kernel keeps empty after a flush equals
//! a table never made. The digest is sha256 over the canonical text of
//! both families.
//!
//! Cost: O(rules) to parse and print; a save of 100k rules parses in tens
//! of milliseconds.

use iptables::exec::{restore, save_table, RestoreOpts};
use iptables::Rule;
use ruleset::{Family, Policy, Ruleset, Table, TableKind};
use sha2::{Digest as _, Sha256};

/// Tables in the order of the canonical form (iptables-save's order).
pub const ORDER: [TableKind; 5] = [
    TableKind::Mangle,
    TableKind::Security,
    TableKind::Raw,
    TableKind::Filter,
    TableKind::Nat,
];

/// What a release holds: iptables-save text per family (empty: nothing of
/// that family), and ipset save text (reserved; refused while non-empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Payload {
    pub v4: String,
    pub v6: String,
    pub ipset: String,
}

impl Payload {
    pub fn family(&self, f: Family) -> &str {
        match f {
            Family::Ipv4 => &self.v4,
            Family::Ipv6 => &self.v6,
        }
    }
}

/// One family's ruleset as the model, with the tables its text named.
pub struct Side {
    pub model: Ruleset<Rule>,
    /// Tables the text named, in [`ORDER`] (the scope, for a desired side).
    pub scope: Vec<TableKind>,
}

fn prog(f: Family) -> &'static str {
    match f {
        Family::Ipv4 => "iptables-restore",
        Family::Ipv6 => "ip6tables-restore",
    }
}

/// Whether table `t` holds nothing (see the module doc).
pub fn holds_nothing(t: &Table<Rule>) -> bool {
    t.rule_count() == 0
        && t.chains()
            .iter()
            .all(|c| c.policy == Some(Policy::Accept) && c.len == 0)
}

impl Side {
    /// Read iptables-save `text` of family `f` (plain restore semantics);
    /// `additions` then go on top as `--noflush` input would. The error
    /// names the input (`what`) and line as iptables-restore words it.
    pub fn parse(f: Family, text: &str, additions: &str, what: &str) -> Result<Side, String> {
        let mut model = Ruleset::new();
        let o = RestoreOpts::new(f, prog(f));
        restore(&mut model, text, &o)
            .map_err(|e| format!("{what}: {}", e.render(prog(f)).trim_end()))?;
        if !additions.trim().is_empty() {
            let o = RestoreOpts {
                noflush: true,
                ..RestoreOpts::new(f, prog(f))
            };
            restore(&mut model, additions, &o)
                .map_err(|e| format!("host additions: {}", e.render(prog(f)).trim_end()))?;
        }
        let mut named = tables_named(text);
        named.extend(tables_named(additions));
        let scope = ORDER.into_iter().filter(|k| named.contains(k)).collect();
        Ok(Side { model, scope })
    }

    /// Canonical text of the tables in `scope` that hold something.
    pub fn canonical_in(&self, f: Family, scope: &[TableKind]) -> String {
        let mut out = String::new();
        for k in ORDER {
            let t = self.model.table(f, k);
            if scope.contains(&k) && !holds_nothing(t) {
                save_table(t, false, &mut out);
            }
        }
        out
    }

    /// Canonical text of this side's own scope.
    pub fn canonical(&self, f: Family) -> String {
        self.canonical_in(f, &self.scope)
    }

    /// Restore input that makes the kernel's tables in `scope` hold what
    /// this side holds in them (a table holding nothing written in its
    /// empty form, so the restore empties it).
    pub fn restore_text(&self, f: Family, scope: &[TableKind]) -> String {
        let mut out = String::new();
        for k in ORDER {
            if scope.contains(&k) {
                save_table(self.model.table(f, k), false, &mut out);
            }
        }
        out
    }
}

/// Tables named by `*table` lines of save text, in [`ORDER`].
pub fn tables_named(text: &str) -> Vec<TableKind> {
    let named: Vec<TableKind> = text
        .lines()
        .filter_map(|l| l.strip_prefix('*'))
        .filter_map(|n| TableKind::from_name(n.trim()))
        .collect();
    ORDER.into_iter().filter(|k| named.contains(k)).collect()
}

/// `sha256:HEX` over the canonical text of both families.
pub fn digest(v4: &str, v6: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"v4\n");
    h.update(v4.as_bytes());
    h.update(b"v6\n");
    h.update(v6.as_bytes());
    let d = h.finalize();
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Both families of a desired state.
pub struct Desired {
    pub release: i64,
    pub additions: i64,
    pub v4: Side,
    pub v6: Side,
    pub digest: String,
}

impl Desired {
    /// Release `release` of `p` with the host's additions (`add`, with
    /// its mod revision `additions`).
    pub fn build(
        release: i64,
        p: &Payload,
        add: &Payload,
        additions: i64,
    ) -> Result<Desired, String> {
        if !p.ipset.trim().is_empty() || !add.ipset.trim().is_empty() {
            return Err("release carries ipset sets, which this agent does not apply yet".into());
        }
        let what = format!("release {release}");
        let v4 = Side::parse(Family::Ipv4, &p.v4, &add.v4, &format!("{what} v4"))?;
        let v6 = Side::parse(Family::Ipv6, &p.v6, &add.v6, &format!("{what} v6"))?;
        let digest = digest(&v4.canonical(Family::Ipv4), &v6.canonical(Family::Ipv6));
        Ok(Desired {
            release,
            additions,
            v4,
            v6,
            digest,
        })
    }

    pub fn side(&self, f: Family) -> &Side {
        match f {
            Family::Ipv4 => &self.v4,
            Family::Ipv6 => &self.v6,
        }
    }
}

/// What the kernel holds, from its iptables-save text per family.
pub struct Held {
    pub v4: Side,
    pub v6: Side,
    /// Over every table the kernel has.
    pub digest: String,
}

impl Held {
    pub fn parse(v4: &str, v6: &str) -> Result<Held, String> {
        let s4 = Side::parse(Family::Ipv4, v4, "", "kernel v4")?;
        let s6 = Side::parse(Family::Ipv6, v6, "", "kernel v6")?;
        let digest = digest(&s4.canonical(Family::Ipv4), &s6.canonical(Family::Ipv6));
        Ok(Held {
            v4: s4,
            v6: s6,
            digest,
        })
    }

    /// The digest of what the kernel holds in `d`'s scope: equal to
    /// `d.digest` when the kernel holds the desired state.
    pub fn digest_for(&self, d: &Desired) -> String {
        digest(
            &self.v4.canonical_in(Family::Ipv4, &d.v4.scope),
            &self.v6.canonical_in(Family::Ipv6, &d.v6.scope),
        )
    }

    pub fn side(&self, f: Family) -> &Side {
        match f {
            Family::Ipv4 => &self.v4,
            Family::Ipv6 => &self.v6,
        }
    }
}

/// What the host holds after `d` is applied over `held`: the tables in
/// `d`'s scope from `d`, every other table as the kernel has it (both
/// families in one ruleset, for the lockout check). O(rules) to copy.
pub fn after_apply(held: &Held, d: &Desired) -> Ruleset<Rule> {
    let mut rs = held.v4.model.clone();
    for k in ORDER {
        rs.replace_table(held.v6.model.table(Family::Ipv6, k).clone());
    }
    for f in Family::ALL {
        for &k in &d.side(f).scope {
            rs.replace_table(d.side(f).model.table(f, k).clone());
        }
    }
    rs
}

#[cfg(test)]
mod tests {
    use super::*;

    const WEB: &str = "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 80 -j ACCEPT\nCOMMIT\n";

    fn payload(v4: &str) -> Payload {
        Payload {
            v4: v4.into(),
            ..Payload::default()
        }
    }

    #[test]
    fn canonical_form_is_what_the_kernel_prints_back() {
        let d = Desired::build(7, &payload(WEB), &Payload::default(), 0).unwrap();
        // What nfkeeper's iptables-save prints for it: comments, counters,
        // the canonical `-m tcp`, and a nat table next to it (out of scope).
        let kernel = "# Generated by iptables-save v1.8.11 (nfkeeper) on Thu Jan  1 00:00:00 2026\n*filter\n:INPUT DROP [12:345]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\nCOMMIT\n# Completed\n*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -o eth1 -j MASQUERADE\nCOMMIT\n";
        let h = Held::parse(kernel, "").unwrap();
        assert_eq!(h.digest_for(&d), d.digest);
        assert_ne!(h.digest, d.digest, "the whole kernel holds more");
        assert_eq!(h.v4.scope, vec![TableKind::Filter, TableKind::Nat]);
        let other = Held::parse(&kernel.replace("--dport 80", "--dport 81"), "").unwrap();
        assert_ne!(other.digest_for(&d), d.digest);
        let empty = Held::parse("", "").unwrap();
        assert_eq!(empty.digest, digest("", ""));
        // A table named empty is in scope, and equal to an absent one.
        let nat_empty = Payload {
            v4: format!("{WEB}*nat\nCOMMIT\n"),
            ..Payload::default()
        };
        let d2 = Desired::build(8, &nat_empty, &Payload::default(), 0).unwrap();
        assert_eq!(d2.v4.scope, vec![TableKind::Filter, TableKind::Nat]);
        assert_eq!(d2.digest, d.digest);
        assert_ne!(
            h.digest_for(&d2),
            d2.digest,
            "the kernel's nat holds a rule"
        );
    }

    #[test]
    fn restore_text_covers_the_named_tables() {
        let d = Desired::build(
            1,
            &payload(&format!("{WEB}*nat\nCOMMIT\n")),
            &Payload::default(),
            0,
        )
        .unwrap();
        let t = d.v4.restore_text(Family::Ipv4, &d.v4.scope);
        assert_eq!(
            t,
            "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n"
        );
        assert_eq!(d.v6.restore_text(Family::Ipv6, &d.v6.scope), "");
    }

    #[test]
    fn after_apply_keeps_what_is_out_of_scope() {
        let kernel = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -j DROP\nCOMMIT\n*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -j DROP\nCOMMIT\n";
        let h = Held::parse(kernel, V6_ONE).unwrap();
        let d = Desired::build(1, &payload(WEB), &Payload::default(), 0).unwrap();
        let rs = after_apply(&h, &d);
        let text = |f, k| {
            let mut o = String::new();
            save_table(rs.table(f, k), false, &mut o);
            o
        };
        assert!(text(Family::Ipv4, TableKind::Filter).contains("--dport 80"));
        assert!(text(Family::Ipv4, TableKind::Raw).contains("-A OUTPUT -j DROP"));
        assert!(text(Family::Ipv6, TableKind::Filter).contains("--dport 22"));
    }

    const V6_ONE: &str = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 22 -j ACCEPT\nCOMMIT\n";

    #[test]
    fn additions_go_on_top() {
        let add = Payload {
            v4: "*filter\n-A INPUT -s 192.0.2.1/32 -j ACCEPT\nCOMMIT\n*raw\n-A PREROUTING -j NOTRACK\nCOMMIT\n".into(),
            ..Payload::default()
        };
        let d = Desired::build(1, &payload(WEB), &add, 9).unwrap();
        let c = d.v4.canonical(Family::Ipv4);
        assert!(
            c.contains("--dport 80 -j ACCEPT\n-A INPUT -s 192.0.2.1/32 -j ACCEPT\n"),
            "{c}"
        );
        assert!(c.starts_with("*raw\n"), "{c}");
        let plain = Desired::build(1, &payload(WEB), &Payload::default(), 0).unwrap();
        assert_ne!(plain.digest, d.digest);
    }

    #[test]
    fn refusals_name_the_input_and_line() {
        type Case = (&'static str, &'static str, &'static str);
        let cases: [Case; 3] = [
            (
                "*filter\n-A INPUT -p tcp --dport 99999 -j ACCEPT\nCOMMIT\n",
                "",
                "release 3 v4: iptables-restore",
            ),
            ("*filter\n-A NOPE -j ACCEPT\nCOMMIT\n", "", "line 2"),
            (
                WEB,
                "*filter\n-A INPUT -j NOWHERE\nCOMMIT\n",
                "host additions:",
            ),
        ];
        for (v4, add, want) in cases {
            let add = payload(add);
            let e = Desired::build(3, &payload(v4), &add, 1).err().expect(v4);
            assert!(e.contains(want), "{e} lacks {want}");
        }
        let ipset = Payload {
            ipset: "create x hash:ip\n".into(),
            ..Payload::default()
        };
        assert!(Desired::build(3, &ipset, &Payload::default(), 0)
            .err()
            .unwrap()
            .contains("ipset"));
    }
}
