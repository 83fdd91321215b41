//! `-j SNPT` and `-j DNPT`: IPv6-to-IPv6 network prefix translation
//! (RFC 6296; iptables' libip6t_SNPT / libip6t_DNPT). Mangle table; SNPT
//! from INPUT and POSTROUTING, DNPT from PREROUTING and OUTPUT.

use super::snat::check_table_hooks;
use super::xtypes::{einval, parse_hostmask, unsaveable};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use ruleset::TableKind;
use std::fmt::Write;

/// ip6t_npt_tginfo without the kernel's checksum adjustment. The prefixes
/// are kept as given (the kernel refuses host bits); a length is 255 for a
/// mask with holes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Npt {
    pub src_pfx: [u8; 16],
    pub dst_pfx: [u8; 16],
    pub src_pfx_len: u8,
    pub dst_pfx_len: u8,
}

const SRC_PFX: u8 = 1;
const DST_PFX: u8 = 2;

const OPTS: &[OptDef] = &[
    OptDef::new("src-pfx", SRC_PFX, Arg::Required).mand(),
    OptDef::new("dst-pfx", DST_PFX, Arg::Required).mand(),
];

impl Npt {
    fn new() -> Self {
        Npt {
            src_pfx: [0; 16],
            dst_pfx: [0; 16],
            src_pfx_len: 0,
            dst_pfx_len: 0,
        }
    }

    fn parse(&mut self, c: &Call) -> Result<()> {
        let (addr, _, len) = parse_hostmask(c, true)?;
        if c.opt.id == SRC_PFX {
            (self.src_pfx, self.src_pfx_len) = (addr, len);
        } else {
            (self.dst_pfx, self.dst_pfx_len) = (addr, len);
        }
        Ok(())
    }

    /// The generic checks, then the kernel's (table, hooks, prefixes).
    fn finish(&self, name: &str, seen: u32, ctx: &ParseCtx, hooks: &[&str]) -> Result<()> {
        crate::ext::postcheck(name, OPTS, seen)?;
        check_table_hooks(name, ctx, TableKind::Mangle, hooks)?;
        if self.src_pfx_len > 64 || self.dst_pfx_len > 64 {
            return Err(einval(name, "prefix longer than 64 bits"));
        }
        for (pfx, len) in [
            (&self.src_pfx, self.src_pfx_len),
            (&self.dst_pfx, self.dst_pfx_len),
        ] {
            let mask = opt::prefix_to_mask16(u32::from(len));
            if pfx.iter().zip(mask).any(|(a, m)| a & !m != 0) {
                return Err(einval(name, "prefix has bits set after its length"));
            }
        }
        // iptables leaves `::/0` out of the save form.
        for (opt_name, pfx, len) in [
            ("src-pfx", &self.src_pfx, self.src_pfx_len),
            ("dst-pfx", &self.dst_pfx, self.dst_pfx_len),
        ] {
            if *pfx == [0; 16] && len == 0 {
                return Err(unsaveable(name, opt_name, "::/0"));
            }
        }
        Ok(())
    }

    /// Save: a prefix that is all zero (`::/0`) is left out.
    fn save(&self, out: &mut String) {
        for (opt_name, pfx, len) in [
            ("src-pfx", &self.src_pfx, self.src_pfx_len),
            ("dst-pfx", &self.dst_pfx, self.dst_pfx_len),
        ] {
            if *pfx != [0; 16] || len != 0 {
                let _ = write!(out, " --{opt_name} ");
                opt::fmt_v6(out, pfx);
                let _ = write!(out, "/{len}");
            }
        }
    }

    fn list(&self, name: &str, out: &mut String) {
        let _ = write!(out, " {name} src-pfx ");
        opt::fmt_v6(out, &self.src_pfx);
        let _ = write!(out, "/{} dst-pfx ", self.src_pfx_len);
        opt::fmt_v6(out, &self.dst_pfx);
        let _ = write!(out, "/{}", self.dst_pfx_len);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Snpt(pub Npt);

impl Ext for Snpt {
    const NAME: &'static str = "SNPT";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = OPTS;

    fn new(_: &ParseCtx) -> Self {
        Snpt(Npt::new())
    }
    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.0.parse(c)
    }
    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        self.0
            .finish(Self::NAME, seen, ctx, &["INPUT", "POSTROUTING"])
    }
    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.0.save(out);
    }
    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.0.list(Self::NAME, out);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dnpt(pub Npt);

impl Ext for Dnpt {
    const NAME: &'static str = "DNPT";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = OPTS;

    fn new(_: &ParseCtx) -> Self {
        Dnpt(Npt::new())
    }
    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.0.parse(c)
    }
    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        self.0
            .finish(Self::NAME, seen, ctx, &["PREROUTING", "OUTPUT"])
    }
    fn save(&self, _: &PrintCtx, out: &mut String) {
        self.0.save(out);
    }
    fn list(&self, _: &PrintCtx, out: &mut String) {
        self.0.list(Self::NAME, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in, run};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // target, chain, options, save, -L after the name
        let cases: &[(&str, &str, &str, &str, &str)] = &[
            (
                "SNPT",
                "POSTROUTING",
                "--src-pfx dead::/64 --dst-pfx 1c3::/64",
                " --src-pfx dead::/64 --dst-pfx 1c3::/64",
                " src-pfx dead::/64 dst-pfx 1c3::/64",
            ),
            (
                "DNPT",
                "PREROUTING",
                "--dst-pfx 1c3::/ffff:ffff:: --src-pfx dead:0:0::/48",
                " --src-pfx dead::/48 --dst-pfx 1c3::/32",
                " src-pfx dead::/48 dst-pfx 1c3::/32",
            ),
        ];
        for (target, chain, opts, save, list) in cases {
            let rule = format!("-j {target} {opts}");
            let got = ok_in(Family::Ipv6, TableKind::Mangle, chain, &rule);
            assert_eq!(got.save, *save, "{rule}");
            assert_eq!(got.list, format!(" {target}{list}"), "{rule}");
            assert_eq!(got.list_numeric, got.list, "{rule}");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(TableKind, &str, &str, &str)] = &[
            (
                TableKind::Mangle,
                "INPUT",
                "-j SNPT --src-pfx dead::/64",
                "SNPT: option \"--dst-pfx\" must be specified\n",
            ),
            (
                TableKind::Mangle,
                "PREROUTING",
                "-j DNPT",
                "DNPT: option \"--src-pfx\" must be specified\n",
            ),
            (
                TableKind::Mangle,
                "INPUT",
                "-j SNPT --src-pfx dead::beef --dst-pfx 1c3::/64",
                "Invalid argument: SNPT target: prefix longer than 64 bits.",
            ),
            (
                TableKind::Mangle,
                "INPUT",
                "-j SNPT --src-pfx dead::/ffff::ff --dst-pfx 1c3::/64",
                "Invalid argument: SNPT target: prefix longer than 64 bits.",
            ),
            (
                TableKind::Mangle,
                "PREROUTING",
                "-j DNPT --src-pfx dead::1/64 --dst-pfx 1c3::/64",
                "Invalid argument: DNPT target: prefix has bits set after its length.",
            ),
            (
                TableKind::Mangle,
                "PREROUTING",
                "-j SNPT --src-pfx dead::/64 --dst-pfx 1c3::/64",
                "Invalid argument: SNPT target: used from hooks PREROUTING, but only usable from INPUT/POSTROUTING.",
            ),
            (
                TableKind::Mangle,
                "INPUT",
                "-j DNPT --src-pfx dead::/64 --dst-pfx 1c3::/64",
                "Invalid argument: DNPT target: used from hooks INPUT, but only usable from PREROUTING/OUTPUT.",
            ),
            (
                TableKind::Mangle,
                "mychain",
                "-j DNPT --src-pfx ::/0 --dst-pfx 1c3::/64",
                "DNPT: \"--src-pfx ::/0\" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
            (
                TableKind::Nat,
                "INPUT",
                "-j SNPT --src-pfx dead::/64 --dst-pfx 1c3::/64",
                "Invalid argument: SNPT target: only valid in mangle table, not nat.",
            ),
        ];
        for (table, chain, rule, want) in cases {
            assert_eq!(err_in(Family::Ipv6, *table, chain, rule), *want, "{rule}");
        }
        assert!(run(
            Family::Ipv4,
            TableKind::Mangle,
            "INPUT",
            "-j SNPT --src-pfx 1.2.3.0/24 --dst-pfx 1.2.4.0/24"
        )
        .is_err());
    }
}
