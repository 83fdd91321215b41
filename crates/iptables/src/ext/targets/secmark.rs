//! `-j SECMARK`: set the packet's security mark from an SELinux context
//! (iptables' libxt_SECMARK, revision 1). Mangle and security tables only;
//! the kernel also refuses a context its security module cannot map.

use super::connsecmark::check_secmark_table;
use super::xtypes::{check_plain_word, put_string};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

/// SECMARK_SECCTX_MAX: the context's `char` array, NUL included.
pub const SECCTX_SIZE: usize = 256;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Secmark {
    /// At most `SECCTX_SIZE - 1` bytes.
    pub selctx: String,
}

const SELCTX: u8 = 0;

impl Ext for Secmark {
    const NAME: &'static str = "SECMARK";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("selctx", SELCTX, Arg::Required).mand()];

    fn new(_: &ParseCtx) -> Self {
        Secmark {
            selctx: String::new(),
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.selctx = put_string(c.arg, SECCTX_SIZE);
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        check_secmark_table("SECMARK", ctx)?;
        check_plain_word(Self::NAME, "selctx", &self.selctx)
    }

    // The context is printed as it is, unquoted.
    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" --selctx ");
        out.push_str(&self.selctx);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" SECMARK selctx ");
        out.push_str(&self.selctx);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        let ctx = "system_u:object_r:firewalld_exec_t:s0";
        for (fam, table) in [
            (Family::Ipv4, TableKind::Security),
            (Family::Ipv6, TableKind::Mangle),
        ] {
            let got = ok_in(fam, table, "OUTPUT", &format!("-j SECMARK --selctx {ctx}"));
            assert_eq!(got.save, format!(" --selctx {ctx}"));
            assert_eq!(got.list, format!(" SECMARK selctx {ctx}"));
            assert_eq!(got.list_numeric, got.list);
        }
        let long = "x".repeat(300);
        let got = ok_in(
            Family::Ipv4,
            TableKind::Security,
            "INPUT",
            &format!("-j SECMARK --selctx {long}"),
        );
        assert_eq!(got.save, format!(" --selctx {}", &long[..255]));
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str)] = &[
            (
                TableKind::Security,
                "-j SECMARK",
                "SECMARK: option \"--selctx\" must be specified\n",
            ),
            (
                TableKind::Filter,
                "-j SECMARK --selctx a:b:c:d",
                "Invalid argument: SECMARK target: only valid in 'mangle' or 'security' table, not 'filter'.",
            ),
            (
                TableKind::Security,
                "-j SECMARK --selctx \"a b\"",
                "SECMARK: \"--selctx a b\" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
        ];
        for (table, rule, want) in cases {
            assert_eq!(err_in(Family::Ipv4, *table, "INPUT", rule), *want, "{rule}");
        }
    }
}
