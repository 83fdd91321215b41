//! `-m realm`: the routing realm of the packet's route (iptables'
//! libipt_realm; IPv4 only). Realm names come from
//! `/etc/iproute2/rt_realms`.

use crate::error::Result;
use crate::ext::lmap::{self, put_val_mask};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Realm {
    pub id: u32,
    pub mask: u32,
    pub inv: bool,
}

const REALM: u8 = 0;

impl Ext for Realm {
    const NAME: &'static str = "realm";
    const FAMILY: Fam = Fam::V4;
    const OPTS: &'static [OptDef] = &[OptDef::new("realm", REALM, Arg::Required).inv().mand()];

    fn new(_: &ParseCtx) -> Self {
        Realm {
            id: 0,
            mask: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        (self.id, self.mask) = lmap::parse_val_mask(c, lmap::realms())?;
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" --realm");
        put_val_mask(out, self.id, self.mask, Some(lmap::realms()));
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" realm");
        let map = (!ctx.numeric).then(lmap::realms);
        put_val_mask(out, self.id, self.mask, map);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list, save};
    use ruleset::{Family, TableKind};

    // Realm 0xabcd is above the map files' range (0-255), so no name.
    #[test]
    fn forms() {
        let cases = [
            (
                "-m realm --realm 0xabcd",
                " --realm 0xabcd",
                " realm 0xabcd",
            ),
            (
                "-m realm ! --realm 1/0x2a",
                " ! --realm 0x1/0x2a",
                " ! realm 0x1/0x2a",
            ),
            (
                "-m realm --realm 43981/4294967295",
                " --realm 0xabcd",
                " realm 0xabcd",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save(args), s, "{args}");
            assert_eq!(list(args, false), l, "{args}");
            assert_eq!(list(args, true), l, "{args} -n");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m realm", "realm: option \"--realm\" must be specified\n"),
            (
                "-m realm --realm 1/0x1g",
                "realm: trailing garbage after value for option \"--realm\".\n",
            ),
            (
                "-m realm --realm 1/x",
                "realm: bad integer value for option \"--realm\", or out of range.\n",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
        assert_eq!(
            err_in(
                Family::Ipv6,
                TableKind::Filter,
                "INPUT",
                "-m realm --realm 1"
            ),
            "Couldn't load match `realm':No such file or directory\n"
        );
    }
}
