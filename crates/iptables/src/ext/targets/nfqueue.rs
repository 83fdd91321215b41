//! `-j NFQUEUE`: hand the packet to a user-space queue (iptables'
//! libxt_NFQUEUE, revision 3). Usable everywhere.

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// xt_NFQ_info_v3.flags
pub const FLAG_BYPASS: u16 = 0x01;
pub const FLAG_CPU_FANOUT: u16 = 0x02;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Nfqueue {
    /// The first queue.
    pub queuenum: u16,
    /// How many queues from `queuenum` on (1 = just that one).
    pub queues_total: u16,
    pub flags: u16,
}

const QUEUE_NUM: u8 = 0;
const QUEUE_BALANCE: u8 = 1;
const QUEUE_BYPASS: u8 = 2;
const QUEUE_CPU_FANOUT: u8 = 3;

impl Ext for Nfqueue {
    const NAME: &'static str = "NFQUEUE";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("queue-num", QUEUE_NUM, Arg::Required).excl(1 << QUEUE_BALANCE),
        OptDef::new("queue-balance", QUEUE_BALANCE, Arg::Required).excl(1 << QUEUE_NUM),
        OptDef::new("queue-bypass", QUEUE_BYPASS, Arg::None),
        OptDef::new("queue-cpu-fanout", QUEUE_CPU_FANOUT, Arg::None).also(1 << QUEUE_BALANCE),
    ];

    fn new(_: &ParseCtx) -> Self {
        Nfqueue {
            queuenum: 0,
            queues_total: 1,
            flags: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            QUEUE_NUM => self.queuenum = c.uint(0, 65535)? as u16,
            QUEUE_BALANCE => {
                // The last queue may not be 65535: the total would not fit.
                let (lo, hi) = opt::parse_uint_range(c.ext, c.opt.name, c.arg, 65534)?;
                let hi = hi.ok_or_else(|| Error::param(format!("Bad range \"{}\"", c.arg)))?;
                if lo >= hi {
                    return Err(Error::param(format!("{lo} should be less than {hi}")));
                }
                self.queuenum = lo as u16;
                self.queues_total = (hi - lo + 1) as u16;
            }
            QUEUE_BYPASS => self.flags |= FLAG_BYPASS,
            _ => self.flags |= FLAG_CPU_FANOUT,
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.queues_total > 1 {
            let last = u32::from(self.queuenum) + u32::from(self.queues_total) - 1;
            let _ = write!(out, " --queue-balance {}:{last}", self.queuenum);
        } else {
            let _ = write!(out, " --queue-num {}", self.queuenum);
        }
        if self.flags & FLAG_BYPASS != 0 {
            out.push_str(" --queue-bypass");
        }
        if self.flags & FLAG_CPU_FANOUT != 0 {
            out.push_str(" --queue-cpu-fanout");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        if self.queues_total > 1 {
            let last = u32::from(self.queuenum) + u32::from(self.queues_total) - 1;
            let _ = write!(out, " NFQUEUE balance {}:{last}", self.queuenum);
        } else {
            let _ = write!(out, " NFQUEUE num {}", self.queuenum);
        }
        if self.flags & FLAG_BYPASS != 0 {
            out.push_str(" bypass");
        }
        if self.flags & FLAG_CPU_FANOUT != 0 {
            out.push_str(" cpu-fanout");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            ("-j NFQUEUE", " --queue-num 0", " NFQUEUE num 0"),
            (
                "-j NFQUEUE --queue-num 65535",
                " --queue-num 65535",
                " NFQUEUE num 65535",
            ),
            (
                "-j NFQUEUE --queue-balance :",
                " --queue-balance 0:65534",
                " NFQUEUE balance 0:65534",
            ),
            (
                "-j NFQUEUE --queue-balance 4:",
                " --queue-balance 4:65534",
                " NFQUEUE balance 4:65534",
            ),
            (
                "-j NFQUEUE --queue-balance :4",
                " --queue-balance 0:4",
                " NFQUEUE balance 0:4",
            ),
            (
                "-j NFQUEUE --queue-num 10 --queue-bypass",
                " --queue-num 10 --queue-bypass",
                " NFQUEUE num 10 bypass",
            ),
            (
                "-j NFQUEUE --queue-cpu-fanout --queue-balance 0:6 --queue-bypass",
                " --queue-balance 0:6 --queue-bypass --queue-cpu-fanout",
                " NFQUEUE balance 0:6 bypass cpu-fanout",
            ),
            (
                "-j NFQUEUE --queue-bypass",
                " --queue-num 0 --queue-bypass",
                " NFQUEUE num 0 bypass",
            ),
        ];
        for (fam, table, chain) in [
            (Family::Ipv4, TableKind::Filter, "INPUT"),
            (Family::Ipv6, TableKind::Mangle, "POSTROUTING"),
            (Family::Ipv4, TableKind::Nat, "PREROUTING"),
        ] {
            for (rule, save, list) in cases {
                let got = ok_in(fam, table, chain, rule);
                assert_eq!(got.save, *save, "{rule}");
                assert_eq!(got.list, *list, "{rule}");
                assert_eq!(got.list_numeric, *list, "{rule}");
            }
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-j NFQUEUE --queue-num 65536",
                "NFQUEUE: bad value for option \"--queue-num\", or out of range (0-65535).\n",
            ),
            (
                "-j NFQUEUE --queue-balance 0:65535",
                "NFQUEUE: bad value for option \"--queue-balance\" near \"65535\", or out of range (0-65534).\n",
            ),
            (
                "-j NFQUEUE --queue-balance -1:65535",
                "NFQUEUE: bad value for option \"--queue-balance\" near \"-1:65535\", or out of range (0-65534).\n",
            ),
            ("-j NFQUEUE --queue-balance 4", "Bad range \"4\""),
            ("-j NFQUEUE --queue-balance 4:4", "4 should be less than 4"),
            ("-j NFQUEUE --queue-balance 4:3", "NFQUEUE: bad value for option \"--queue-balance\" near \"3\", or out of range (4-65534).\n"),
            (
                "-j NFQUEUE --queue-num 1 --queue-balance 2:3",
                "NFQUEUE: option \"--queue-num\" cannot be used together with \"--queue-balance\".\n",
            ),
            (
                "-j NFQUEUE --queue-num 1 --queue-cpu-fanout",
                "NFQUEUE: option \"--queue-cpu-fanout\" also requires \"--queue-balance\".\n",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(err(rule), *want, "{rule}");
        }
    }
}
