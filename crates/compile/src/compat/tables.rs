//! The xtables extensions whose kernel check (`checkentry`, or the `.table`
//! of their registration) accepts them only in tables of certain names.
//!
//! Through nft_compat the kernel passes the name of the nftables table the
//! rule is in, and nfkeeper's tables are named `nfkeeper_<table>` (see
//! [`crate::layout::table_name`]), so such an extension is refused at
//! commit (EINVAL, and dmesg says e.g. `TOS target: only valid in mangle
//! table, not nfkeeper_mangle`) whatever iptables table the rule belongs
//! to: nfkeeper never offers their compat form.
//!
//! Facts (kernel 6.18: the x_tables registrations and checkentry
//! functions; tests/compat_targets_kernel.rs loads every target into
//! nfkeeper's tables and finds the kernel refusing exactly these):
//! targets CHECKSUM, DSCP, TOS, ECN, TTL, HL, TCPOPTSTRIP, TPROXY, SNPT,
//! DNPT (mangle); SECMARK, CONNSECMARK (mangle or security); CT, NOTRACK
//! (raw); SNAT, DNAT, MASQUERADE, REDIRECT, NETMAP (nat); REJECT (filter).
//! Matches: rpfilter (raw or mangle). Every other extension runs in any
//! table.

use ruleset::TableKind;

/// Which side of a rule an extension is on (a match and a target may
/// share a name, e.g. `-m dscp` and `-j DSCP` differ in case only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Match,
    Target,
}

const MANGLE: &[&str] = &["mangle"];
const MANGLE_SECURITY: &[&str] = &["mangle", "security"];
const RAW: &[&str] = &["raw"];
const RAW_MANGLE: &[&str] = &["raw", "mangle"];
const NAT: &[&str] = &["nat"];
const FILTER: &[&str] = &["filter"];

/// The table names the kernel accepts extension `name` (its xtables name,
/// e.g. `TOS`, `rpfilter`) in; `None` when it runs in any table.
pub fn required_tables(kind: Kind, name: &str) -> Option<&'static [&'static str]> {
    Some(match (kind, name) {
        (
            Kind::Target,
            "CHECKSUM" | "DSCP" | "TOS" | "ECN" | "TTL" | "HL" | "TCPOPTSTRIP" | "TPROXY" | "SNPT"
            | "DNPT",
        ) => MANGLE,
        (Kind::Target, "SECMARK" | "CONNSECMARK") => MANGLE_SECURITY,
        (Kind::Target, "CT" | "NOTRACK") => RAW,
        (Kind::Target, "SNAT" | "DNAT" | "MASQUERADE" | "REDIRECT" | "NETMAP") => NAT,
        (Kind::Target, "REJECT") => FILTER,
        (Kind::Match, "rpfilter") => RAW_MANGLE,
        _ => return None,
    })
}

/// Why the kernel refuses extension `name` through nft_compat in
/// nfkeeper's table for `table`; `None` when it does not.
pub fn refusal(kind: Kind, name: &str, table: TableKind) -> Option<String> {
    let tables = required_tables(kind, name)?;
    let what = match kind {
        Kind::Match => "match",
        Kind::Target => "target",
    };
    let only = match tables {
        [one] => format!("a table named {one}"),
        _ => format!("tables named {}", tables.join(" or ")),
    };
    Some(format!(
        "the kernel's xtables {name} {what} runs only in {only}, and nfkeeper's table is \
         named {}",
        crate::layout::table_name(table)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals() {
        let cases: &[(Kind, &str, TableKind, Option<&str>)] = &[
            (
                Kind::Target,
                "TOS",
                TableKind::Mangle,
                Some(
                    "the kernel's xtables TOS target runs only in a table named mangle, \
                     and nfkeeper's table is named nfkeeper_mangle",
                ),
            ),
            (
                Kind::Target,
                "SECMARK",
                TableKind::Security,
                Some(
                    "the kernel's xtables SECMARK target runs only in tables named mangle \
                     or security, and nfkeeper's table is named nfkeeper_security",
                ),
            ),
            (
                Kind::Match,
                "rpfilter",
                TableKind::Raw,
                Some(
                    "the kernel's xtables rpfilter match runs only in tables named raw or \
                     mangle, and nfkeeper's table is named nfkeeper_raw",
                ),
            ),
            (Kind::Target, "TCPMSS", TableKind::Mangle, None),
            (Kind::Target, "SYNPROXY", TableKind::Filter, None),
            (Kind::Target, "TEE", TableKind::Mangle, None),
            // The match `dscp` is not the target `DSCP`.
            (Kind::Match, "dscp", TableKind::Mangle, None),
            (Kind::Match, "DSCP", TableKind::Mangle, None),
        ];
        for (kind, name, table, want) in cases {
            assert_eq!(
                refusal(*kind, name, *table).as_deref(),
                *want,
                "{kind:?} {name}"
            );
        }
    }
}
