//! `-m pkttype`: the link-layer packet type (iptables' libxt_pkttype).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pkttype {
    /// PACKET_HOST (0), PACKET_BROADCAST (1), PACKET_MULTICAST (2),
    /// PACKET_OTHERHOST (3).
    pub pkttype: u8,
    pub inv: bool,
}

const PKT_TYPE: u8 = 0;

/// Names in print order; the first name of a value is the one printed.
const TYPES: &[(&str, u8)] = &[
    ("unicast", 0),
    ("broadcast", 1),
    ("multicast", 2),
    ("otherhost", 3),
    ("bcast", 1),
    ("mcast", 2),
    ("host", 0),
];

fn put_type(out: &mut String, t: u8) {
    match TYPES.iter().find(|e| e.1 == t) {
        Some((name, _)) => out.push_str(name),
        None => {
            let _ = write!(out, "{t}");
        }
    }
}

impl Ext for Pkttype {
    const NAME: &'static str = "pkttype";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("pkt-type", PKT_TYPE, Arg::Required)
        .inv()
        .mand()];

    fn new(_: &ParseCtx) -> Self {
        Pkttype {
            pkttype: 0,
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.pkttype = TYPES
            .iter()
            .find(|e| e.0.eq_ignore_ascii_case(c.arg))
            .map(|e| e.1)
            .ok_or_else(|| Error::param(format!("Bad packet type '{}'", c.arg)))?;
        self.inv = c.inv;
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" --pkt-type ");
        put_type(out, self.pkttype);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" PKTTYPE ");
        if self.inv {
            out.push('!');
        }
        out.push_str("= ");
        put_type(out, self.pkttype);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    #[test]
    fn list_output() {
        let cases = [
            ("-m pkttype --pkt-type unicast", " PKTTYPE = unicast"),
            ("-m pkttype ! --pkt-type BCAST", " PKTTYPE != broadcast"),
            ("-m pkttype --pkt-type Host", " PKTTYPE = unicast"),
            ("-m pkttype --pkt-type otherhost", " PKTTYPE = otherhost"),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save("-m pkttype ! --pkt-type mcast"),
            " ! --pkt-type multicast"
        );
        assert_eq!(
            save("-m pkttype --pkt-type broadcast"),
            " --pkt-type broadcast"
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            err("-m pkttype --pkt-type wrong"),
            "Bad packet type 'wrong'"
        );
        assert_eq!(
            err("-m pkttype"),
            "pkttype: option \"--pkt-type\" must be specified\n"
        );
    }
}
