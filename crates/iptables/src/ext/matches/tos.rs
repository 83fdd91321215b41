//! `-m tos`: the IPv4 TOS / IPv6 traffic class byte under a mask (iptables'
//! libxt_tos, revision 1).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tos {
    pub value: u8,
    pub mask: u8,
    pub inv: bool,
}

const TOS: u8 = 0;

/// The symbolic TOS values (RFC 1349); a name implies the mask 0x3f.
pub const TOS_NAMES: &[(&str, u8)] = &[
    ("Minimize-Delay", 0x10),
    ("Maximize-Throughput", 0x08),
    ("Maximize-Reliability", 0x04),
    ("Minimize-Cost", 0x02),
    ("Normal-Service", 0x00),
];

const NAME_MASK: u8 = 0x3f;

/// xtables' XTTYPE_TOSMASK: `value[/mask]` (numbers 0..=255, the mask
/// defaults to 0xff) or a symbolic name (mask `name_mask`).
pub fn parse_tos_mask(arg: &str, name_mask: u8) -> Result<(u8, u8)> {
    let num = |s: &str| -> Option<(u8, usize)> {
        if s.trim_start().starts_with('-') {
            return None;
        }
        let (v, rest) = opt::strtoul(s, 0)?;
        let v = u8::try_from(v).ok()?;
        Some((v, s.len() - rest.len()))
    };
    if let Some((value, used)) = num(arg) {
        let illegal = || Error::param(format!("Illegal value: \"{arg}\""));
        let rest = &arg[used..];
        if rest.is_empty() {
            return Ok((value, 0xff));
        }
        let m = rest.strip_prefix('/').ok_or_else(illegal)?;
        let (mask, used) = num(m).ok_or_else(illegal)?;
        if used != m.len() {
            return Err(illegal());
        }
        return Ok((value, mask));
    }
    TOS_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(arg))
        .map(|&(_, v)| (v, name_mask))
        .ok_or_else(|| Error::param(format!("Symbolic name \"{arg}\" is unknown")))
}

impl Ext for Tos {
    const NAME: &'static str = "tos";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("tos", TOS, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Tos {
            value: 0,
            mask: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        (self.value, self.mask) = parse_tos_mask(c.arg, NAME_MASK)?;
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        let _ = write!(out, " --tos 0x{:02x}/0x{:02x}", self.value, self.mask);
    }

    // iptables prints the numeric form right after "match" (no space) and
    // the symbolic one with a space.
    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" tos match");
        if self.inv {
            out.push('!');
        }
        let name = (!ctx.numeric && self.mask == NAME_MASK)
            .then(|| TOS_NAMES.iter().find(|e| e.1 == self.value))
            .flatten();
        match name {
            Some((n, _)) => {
                out.push(' ');
                out.push_str(n);
            }
            None => {
                let _ = write!(out, "0x{:02x}/0x{:02x}", self.value, self.mask);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn list_output() {
        let cases = [
            (
                "-m tos --tos Minimize-Delay",
                false,
                " tos match Minimize-Delay",
            ),
            ("-m tos --tos Minimize-Delay", true, " tos match0x10/0x3f"),
            (
                "-m tos ! --tos normal-service",
                false,
                " tos match! Normal-Service",
            ),
            (
                "-m tos ! --tos 0x10/0x3f",
                false,
                " tos match! Minimize-Delay",
            ),
            ("-m tos --tos 0x10", false, " tos match0x10/0xff"),
            ("-m tos ! --tos 0x0f/0x0f", true, " tos match!0x0f/0x0f"),
            ("-m tos --tos 0x01/0x3f", false, " tos match0x01/0x3f"),
        ];
        for (args, numeric, want) in cases {
            assert_eq!(list(args, numeric), want, "{args} {numeric}");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(save("-m tos --tos Maximize-Throughput"), " --tos 0x08/0x3f");
        assert_eq!(save("-m tos ! --tos 255"), " ! --tos 0xff/0xff");
        assert_eq!(save("-m tos --tos 4/017"), " --tos 0x04/0x0f");
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m tos --tos wrong", "Symbolic name \"wrong\" is unknown"),
            ("-m tos --tos 256", "Symbolic name \"256\" is unknown"),
            ("-m tos --tos 1x", "Illegal value: \"1x\""),
            ("-m tos --tos 1/256", "Illegal value: \"1/256\""),
            ("-m tos --tos 1/", "Illegal value: \"1/\""),
            ("-m tos", "tos: option \"--tos\" must be specified\n"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}
