//! `-j CONNSECMARK`: copy the security mark between packet and connection
//! (iptables' libxt_CONNSECMARK). The kernel takes it in the mangle and
//! security tables only.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use ruleset::TableKind;

/// xt_connsecmark_target_info.mode
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnsecmarkMode {
    /// packet to connection
    Save = 1,
    /// connection to packet
    Restore = 2,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connsecmark {
    pub mode: ConnsecmarkMode,
}

const SAVE: u8 = 0;
const RESTORE: u8 = 1;

/// The check of security-mark targets (CONNSECMARK, SECMARK): mangle or
/// security table.
pub(crate) fn check_secmark_table(target: &str, ctx: &ParseCtx) -> Result<()> {
    if matches!(ctx.table, TableKind::Mangle | TableKind::Security) {
        return Ok(());
    }
    Err(Error::op(format!(
        "Invalid argument: {target} target: only valid in 'mangle' or 'security' table, not '{}'.",
        ctx.table.name()
    )))
}

impl Ext for Connsecmark {
    const NAME: &'static str = "CONNSECMARK";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("save", SAVE, Arg::None).excl(1 << RESTORE),
        OptDef::new("restore", RESTORE, Arg::None).excl(1 << SAVE),
    ];

    fn new(_: &ParseCtx) -> Self {
        Connsecmark {
            mode: ConnsecmarkMode::Save,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.mode = if c.opt.id == SAVE {
            ConnsecmarkMode::Save
        } else {
            ConnsecmarkMode::Restore
        };
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param("CONNSECMARK target: parameter required"));
        }
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        check_secmark_table("CONNSECMARK", ctx)
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(match self.mode {
            ConnsecmarkMode::Save => " --save",
            ConnsecmarkMode::Restore => " --restore",
        });
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(match self.mode {
            ConnsecmarkMode::Save => " CONNSECMARK save",
            ConnsecmarkMode::Restore => " CONNSECMARK restore",
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in, Printed};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        let cases: &[(&str, &str, &str)] = &[
            ("-j CONNSECMARK --save", " --save", " CONNSECMARK save"),
            (
                "-j CONNSECMARK --restore",
                " --restore",
                " CONNSECMARK restore",
            ),
        ];
        for (fam, table, chain) in [
            (Family::Ipv4, TableKind::Mangle, "PREROUTING"),
            (Family::Ipv6, TableKind::Security, "OUTPUT"),
            (Family::Ipv4, TableKind::Mangle, "mychain"),
        ] {
            for (rule, save, list) in cases {
                let want = Printed {
                    save: save.to_string(),
                    list: list.to_string(),
                    list_numeric: list.to_string(),
                };
                assert_eq!(ok_in(fam, table, chain, rule), want, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Mangle,
                "-j CONNSECMARK",
                "CONNSECMARK target: parameter required",
            ),
            (
                TableKind::Mangle,
                "-j CONNSECMARK --save --restore",
                "CONNSECMARK: option \"--save\" cannot be used together with \"--restore\".\n",
            ),
            (
                TableKind::Mangle,
                "-j CONNSECMARK --save --save",
                "CONNSECMARK: option \"--save\" can only be used once.\n",
            ),
            (
                TableKind::Filter,
                "-j CONNSECMARK --save",
                "Invalid argument: CONNSECMARK target: only valid in 'mangle' or 'security' table, not 'filter'.",
            ),
            (
                TableKind::Raw,
                "-j CONNSECMARK --restore",
                "Invalid argument: CONNSECMARK target: only valid in 'mangle' or 'security' table, not 'raw'.",
            ),
        ];
        for (table, rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, *table, "OUTPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}
