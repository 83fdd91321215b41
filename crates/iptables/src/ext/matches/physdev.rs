//! `-m physdev`: the bridge ports a bridged packet uses (iptables'
//! libxt_physdev).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;

/// A bridge port name (a trailing '+' is a prefix match) with its inversion.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Port {
    pub name: String,
    pub inv: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Physdev {
    pub physin: Option<Port>,
    pub physout: Option<Port>,
    /// The `--physdev-is-*` flags: `Some(inverted)` when given.
    pub is_in: Option<bool>,
    pub is_out: Option<bool>,
    pub is_bridged: Option<bool>,
}

const IN: u8 = 0;
const OUT: u8 = 1;
const IS_IN: u8 = 2;
const IS_OUT: u8 = 3;
const IS_BRIDGED: u8 = 4;

/// IFNAMSIZ
const IFNAMSIZ: usize = 16;

fn parse_port(c: &Call) -> Result<Port> {
    if c.arg.len() + 1 > IFNAMSIZ {
        return Err(Error::param(format!(
            "interface name `{}' must be shorter than IFNAMSIZ ({})",
            c.arg,
            IFNAMSIZ - 1
        )));
    }
    Ok(Port {
        name: c.arg.to_string(),
        inv: c.inv,
    })
}

fn put_flag(out: &mut String, flag: Option<bool>, name: &str) {
    if let Some(inv) = flag {
        if inv {
            out.push_str(" !");
        }
        out.push_str(" --");
        out.push_str(name);
    }
}

fn put_port(out: &mut String, port: &Option<Port>, name: &str) {
    if let Some(p) = port {
        if p.inv {
            out.push_str(" !");
        }
        out.push_str(" --");
        out.push_str(name);
        out.push(' ');
        out.push_str(&p.name);
    }
}

impl Ext for Physdev {
    const NAME: &'static str = "physdev";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("physdev-in", IN, Arg::Required).inv(),
        OptDef::new("physdev-out", OUT, Arg::Required).inv(),
        OptDef::new("physdev-is-in", IS_IN, Arg::None).inv(),
        OptDef::new("physdev-is-out", IS_OUT, Arg::None).inv(),
        OptDef::new("physdev-is-bridged", IS_BRIDGED, Arg::None).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Physdev {
            physin: None,
            physout: None,
            is_in: None,
            is_out: None,
            is_bridged: None,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            IN => self.physin = Some(parse_port(c)?),
            OUT => self.physout = Some(parse_port(c)?),
            IS_IN => self.is_in = Some(c.inv),
            IS_OUT => self.is_out = Some(c.inv),
            _ => self.is_bridged = Some(c.inv),
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, ctx: &ParseCtx) -> Result<()> {
        if seen == 0 {
            return Err(Error::param("PHYSDEV: no physdev option specified"));
        }
        // The kernel: the output port is only known for bridged traffic,
        // which never passes OUTPUT.
        let out_used = self.physout.is_some() || self.is_out.is_some();
        let bridged_only = self.is_bridged == Some(false);
        if out_used && !bridged_only && opt::builtin_hook(ctx.table, ctx.chain) == Some("OUTPUT") {
            return Err(opt::einval(
                "physdev match: --physdev-out and --physdev-is-out only supported in the FORWARD and POSTROUTING chains with bridged traffic",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        put_flag(out, self.is_in, "physdev-is-in");
        put_port(out, &self.physin, "physdev-in");
        put_flag(out, self.is_out, "physdev-is-out");
        put_port(out, &self.physout, "physdev-out");
        put_flag(out, self.is_bridged, "physdev-is-bridged");
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" PHYSDEV match");
        self.save(ctx, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list, list_in, save_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_output() {
        let cases = [
            (
                "-m physdev --physdev-in lo",
                " PHYSDEV match --physdev-in lo",
            ),
            (
                "-m physdev ! --physdev-in eth+ --physdev-is-in",
                " PHYSDEV match --physdev-is-in ! --physdev-in eth+",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
        assert_eq!(
            list_in(
                Family::Ipv6,
                TableKind::Filter,
                "FORWARD",
                "-m physdev ! --physdev-is-bridged --physdev-out br0p1 ! --physdev-is-out --physdev-is-in",
                false
            ),
            " PHYSDEV match --physdev-is-in ! --physdev-is-out --physdev-out br0p1 ! --physdev-is-bridged"
        );
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save_in(
                Family::Ipv4,
                TableKind::Mangle,
                "POSTROUTING",
                "-m physdev --physdev-is-bridged --physdev-out lo"
            ),
            " --physdev-out lo --physdev-is-bridged"
        );
        assert_eq!(
            save_in(
                Family::Ipv4,
                TableKind::Filter,
                "OUTPUT",
                "-m physdev --physdev-out lo --physdev-is-bridged"
            ),
            " --physdev-out lo --physdev-is-bridged"
        );
    }

    #[test]
    fn errors() {
        assert_eq!(err("-m physdev"), "PHYSDEV: no physdev option specified");
        assert_eq!(
            err("-m physdev --physdev-in 0123456789abcdef"),
            "interface name `0123456789abcdef' must be shorter than IFNAMSIZ (15)"
        );
        assert_eq!(
            err_in(
                Family::Ipv4,
                TableKind::Filter,
                "OUTPUT",
                "-m physdev --physdev-is-out ! --physdev-is-bridged"
            ),
            "Invalid argument: physdev match: --physdev-out and --physdev-is-out only supported in the FORWARD and POSTROUTING chains with bridged traffic."
        );
    }
}
