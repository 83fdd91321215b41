//! `-j AUDIT`: record the packet in the audit log (iptables' libxt_AUDIT).
//! Usable in every table and chain.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

/// The action type recorded (xt_audit_info.type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuditType {
    Accept = 0,
    Drop = 1,
    Reject = 2,
}

impl AuditType {
    pub fn name(self) -> &'static str {
        match self {
            AuditType::Accept => "accept",
            AuditType::Drop => "drop",
            AuditType::Reject => "reject",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Audit {
    pub kind: AuditType,
}

const TYPE: u8 = 0;

impl Ext for Audit {
    const NAME: &'static str = "AUDIT";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("type", TYPE, Arg::Required).mand()];

    fn new(_: &ParseCtx) -> Self {
        Audit {
            kind: AuditType::Accept,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        // Names are compared case-insensitively.
        self.kind = [AuditType::Accept, AuditType::Drop, AuditType::Reject]
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(c.arg))
            .ok_or_else(|| Error::param(format!("Bad action type value \"{}\"", c.arg)))?;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" --type ");
        out.push_str(self.kind.name());
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" AUDIT ");
        out.push_str(self.kind.name());
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, ok_in, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            ("-j AUDIT --type accept", " --type accept", " AUDIT accept"),
            ("-j AUDIT --type DROP", " --type drop", " AUDIT drop"),
            ("-j AUDIT --type Reject", " --type reject", " AUDIT reject"),
        ];
        for (fam, table, chain) in [
            (Family::Ipv4, TableKind::Filter, "INPUT"),
            (Family::Ipv6, TableKind::Raw, "PREROUTING"),
            (Family::Ipv4, TableKind::Nat, "mychain"),
        ] {
            for (rule, save, list) in cases {
                let got = ok_in(fam, table, chain, rule);
                let want = Printed {
                    save: save.to_string(),
                    list: list.to_string(),
                    list_numeric: list.to_string(),
                };
                assert_eq!(got, want, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            ("-j AUDIT", "AUDIT: option \"--type\" must be specified\n"),
            ("-j AUDIT --type wrong", "Bad action type value \"wrong\""),
            (
                "-j AUDIT --type drop --type drop",
                "AUDIT: option \"--type\" can only be used once.\n",
            ),
            (
                "-j AUDIT ! --type drop",
                "AUDIT: option \"--type\" cannot be inverted.\n",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(err(rule), *want, "{rule}");
        }
    }
}
