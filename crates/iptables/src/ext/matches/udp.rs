//! `-m udp`: source and destination ports (iptables' libxt_udp).

use crate::error::Result;
use crate::ext::{
    list_ports, parse_portrc, require_proto, save_ports, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx,
};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Udp {
    pub spts: (u16, u16),
    pub dpts: (u16, u16),
    pub inv_sport: bool,
    pub inv_dport: bool,
}

const SPORT: u8 = 0;
const DPORT: u8 = 1;

impl Ext for Udp {
    const NAME: &'static str = "udp";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("source-port", SPORT, Arg::Required).inv(),
        OptDef::new("sport", SPORT, Arg::Required).inv(),
        OptDef::new("destination-port", DPORT, Arg::Required).inv(),
        OptDef::new("dport", DPORT, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Udp {
            spts: (0, 65535),
            dpts: (0, 65535),
            inv_sport: false,
            inv_dport: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let r = parse_portrc(c)?;
        if c.opt.id == SPORT {
            self.spts = r;
            self.inv_sport = c.inv;
        } else {
            self.dpts = r;
            self.inv_dport = c.inv;
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("udp match", ctx, &[17])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        save_ports(out, "sport", self.spts.0, self.spts.1, self.inv_sport);
        save_ports(out, "dport", self.dpts.0, self.dpts.1, self.inv_dport);
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" udp");
        list_ports(
            out,
            "spt",
            self.spts.0,
            self.spts.1,
            self.inv_sport,
            "udp",
            ctx.numeric,
        );
        list_ports(
            out,
            "dpt",
            self.dpts.0,
            self.dpts.1,
            self.inv_dport,
            "udp",
            ctx.numeric,
        );
    }
}
