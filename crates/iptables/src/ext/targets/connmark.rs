//! `-j CONNMARK`: set the connection mark or copy it to/from the packet mark
//! (iptables' libxt_CONNMARK, revision 2 with the shift options).

use super::mark::{list_xmark, parse_xmark};
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// What the target does with the marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnmarkMode {
    /// ctmark = (ctmark & ~ctmask) ^ ctmark_value
    Set,
    /// ctmark from nfmark
    Save,
    /// nfmark from ctmark
    Restore,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connmark {
    pub mode: ConnmarkMode,
    pub ctmark: u32,
    pub ctmask: u32,
    /// Only meaningful for save/restore (0xffffffff in set mode).
    pub nfmask: u32,
    /// Shift right instead of left (false whenever `shift_bits` is 0).
    pub shift_right: bool,
    pub shift_bits: u8,
}

const SET_MARK: u8 = 0;
const SAVE_MARK: u8 = 1;
const RESTORE_MARK: u8 = 2;
const AND_MARK: u8 = 3;
const OR_MARK: u8 = 4;
const XOR_MARK: u8 = 5;
const LEFT_SHIFT: u8 = 6;
const RIGHT_SHIFT: u8 = 7;
const SET_XMARK: u8 = 8;
const CTMASK: u8 = 9;
const NFMASK: u8 = 10;
const MASK: u8 = 11;
const OP_ANY: u32 = 1 << SET_MARK
    | 1 << SAVE_MARK
    | 1 << RESTORE_MARK
    | 1 << AND_MARK
    | 1 << OR_MARK
    | 1 << XOR_MARK
    | 1 << SET_XMARK;

impl Ext for Connmark {
    const NAME: &'static str = "CONNMARK";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("set-xmark", SET_XMARK, Arg::Required).excl(OP_ANY),
        OptDef::new("set-mark", SET_MARK, Arg::Required).excl(OP_ANY),
        OptDef::new("and-mark", AND_MARK, Arg::Required).excl(OP_ANY),
        OptDef::new("or-mark", OR_MARK, Arg::Required).excl(OP_ANY),
        OptDef::new("xor-mark", XOR_MARK, Arg::Required).excl(OP_ANY),
        OptDef::new("save-mark", SAVE_MARK, Arg::None).excl(OP_ANY),
        OptDef::new("restore-mark", RESTORE_MARK, Arg::None).excl(OP_ANY),
        OptDef::new("left-shift-mark", LEFT_SHIFT, Arg::Required),
        OptDef::new("right-shift-mark", RIGHT_SHIFT, Arg::Required),
        OptDef::new("ctmask", CTMASK, Arg::Required).excl(1 << MASK),
        OptDef::new("nfmask", NFMASK, Arg::Required).excl(1 << MASK),
        OptDef::new("mask", MASK, Arg::Required).excl(1 << CTMASK | 1 << NFMASK),
    ];

    fn new(_: &ParseCtx) -> Self {
        Connmark {
            mode: ConnmarkMode::Set,
            ctmark: 0,
            ctmask: u32::MAX,
            nfmask: u32::MAX,
            shift_right: false,
            shift_bits: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let u32_arg = |c: &Call| c.uint(0, u32::MAX as u64).map(|v| v as u32);
        if let Some((mark, mask)) = parse_xmark(c)? {
            self.mode = ConnmarkMode::Set;
            self.ctmark = mark;
            self.ctmask = mask;
            return Ok(());
        }
        match c.opt.id {
            SAVE_MARK => self.mode = ConnmarkMode::Save,
            RESTORE_MARK => self.mode = ConnmarkMode::Restore,
            CTMASK => self.ctmask = u32_arg(c)?,
            NFMASK => self.nfmask = u32_arg(c)?,
            MASK => {
                let v = u32_arg(c)?;
                self.ctmask = v;
                self.nfmask = v;
            }
            LEFT_SHIFT | RIGHT_SHIFT => {
                self.shift_bits = c.uint(0, 32)? as u8;
                self.shift_right = c.opt.id == RIGHT_SHIFT;
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen & OP_ANY == 0 {
            return Err(Error::param("CONNMARK target: No operation specified"));
        }
        // Canonical form: what neither the kernel nor the printers use.
        if self.mode == ConnmarkMode::Set {
            self.nfmask = u32::MAX;
        }
        if self.shift_bits == 0 {
            self.shift_right = false;
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = match self.mode {
            ConnmarkMode::Set => write!(out, " --set-xmark {:#x}/{:#x}", self.ctmark, self.ctmask),
            ConnmarkMode::Save => write!(
                out,
                " --save-mark --nfmask {:#x} --ctmask {:#x}",
                self.nfmask, self.ctmask
            ),
            ConnmarkMode::Restore => write!(
                out,
                " --restore-mark --nfmask {:#x} --ctmask {:#x}",
                self.nfmask, self.ctmask
            ),
        };
        if self.shift_bits != 0 {
            let _ = write!(out, " --{} {}", self.shift_op(), self.shift_bits);
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let (ctmark, ctmask, nfmask) = (self.ctmark, self.ctmask, self.nfmask);
        let _ = match self.mode {
            ConnmarkMode::Set => {
                list_xmark(out, "CONNMARK", ctmark, ctmask);
                Ok(())
            }
            ConnmarkMode::Save => {
                if nfmask == u32::MAX && ctmask == u32::MAX {
                    write!(out, " CONNMARK save")
                } else if nfmask == ctmask {
                    write!(out, " CONNMARK save mask {nfmask:#x}")
                } else {
                    write!(out, " CONNMARK save nfmask {nfmask:#x} ctmask ~{ctmask:#x}")
                }
            }
            ConnmarkMode::Restore => {
                if ctmask == u32::MAX && nfmask == u32::MAX {
                    write!(out, " CONNMARK restore")
                } else if ctmask == nfmask {
                    write!(out, " CONNMARK restore mask {ctmask:#x}")
                } else {
                    write!(
                        out,
                        " CONNMARK restore ctmask {ctmask:#x} nfmask ~{nfmask:#x}"
                    )
                }
            }
        };
        if self.shift_bits != 0 {
            let _ = write!(out, " {} {}", self.shift_op(), self.shift_bits);
        }
    }
}

impl Connmark {
    fn shift_op(&self) -> &'static str {
        if self.shift_right {
            "right-shift-mark"
        } else {
            "left-shift-mark"
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in, run, Printed};
    use ruleset::{Family, TableKind};

    fn ok(rule: &str) -> Printed {
        ok_in(Family::Ipv4, TableKind::Mangle, "PREROUTING", rule)
    }

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            (
                "-j CONNMARK --set-xmark 0x5/0xff",
                " --set-xmark 0x5/0xff",
                " CONNMARK xset 0x5/0xff",
            ),
            (
                "-j CONNMARK --set-mark 7",
                " --set-xmark 0x7/0xffffffff",
                " CONNMARK set 0x7",
            ),
            (
                "-j CONNMARK --set-mark 0x1/0x10",
                " --set-xmark 0x1/0x11",
                " CONNMARK xset 0x1/0x11",
            ),
            (
                "-j CONNMARK --and-mark 0xff",
                " --set-xmark 0x0/0xffffff00",
                " CONNMARK and 0xff",
            ),
            (
                "-j CONNMARK --or-mark 0x3",
                " --set-xmark 0x3/0x3",
                " CONNMARK or 0x3",
            ),
            (
                "-j CONNMARK --xor-mark 0x3",
                " --set-xmark 0x3/0x0",
                " CONNMARK xor 0x3",
            ),
            (
                "-j CONNMARK --save-mark",
                " --save-mark --nfmask 0xffffffff --ctmask 0xffffffff",
                " CONNMARK save",
            ),
            (
                "-j CONNMARK --save-mark --mask 0xff",
                " --save-mark --nfmask 0xff --ctmask 0xff",
                " CONNMARK save mask 0xff",
            ),
            (
                "-j CONNMARK --save-mark --nfmask 0xfffffff --ctmask 0xffffffff",
                " --save-mark --nfmask 0xfffffff --ctmask 0xffffffff",
                " CONNMARK save nfmask 0xfffffff ctmask ~0xffffffff",
            ),
            (
                "-j CONNMARK --restore-mark",
                " --restore-mark --nfmask 0xffffffff --ctmask 0xffffffff",
                " CONNMARK restore",
            ),
            (
                "-j CONNMARK --restore-mark --ctmask 0xf0 --nfmask 0xf0",
                " --restore-mark --nfmask 0xf0 --ctmask 0xf0",
                " CONNMARK restore mask 0xf0",
            ),
            (
                "-j CONNMARK --restore-mark --nfmask 0xfffffff",
                " --restore-mark --nfmask 0xfffffff --ctmask 0xffffffff",
                " CONNMARK restore ctmask 0xffffffff nfmask ~0xfffffff",
            ),
            (
                "-j CONNMARK --save-mark --left-shift-mark 8",
                " --save-mark --nfmask 0xffffffff --ctmask 0xffffffff --left-shift-mark 8",
                " CONNMARK save left-shift-mark 8",
            ),
            (
                "-j CONNMARK --restore-mark --mask 0xff00 --right-shift-mark 8",
                " --restore-mark --nfmask 0xff00 --ctmask 0xff00 --right-shift-mark 8",
                " CONNMARK restore mask 0xff00 right-shift-mark 8",
            ),
            (
                "-j CONNMARK --restore-mark --right-shift-mark 0",
                " --restore-mark --nfmask 0xffffffff --ctmask 0xffffffff",
                " CONNMARK restore",
            ),
            // --ctmask after --set-xmark replaces the mask given there.
            (
                "-j CONNMARK --set-xmark 1/2 --ctmask 0x4",
                " --set-xmark 0x1/0x4",
                " CONNMARK xset 0x1/0x4",
            ),
            (
                "-j CONNMARK --ctmask 0x4 --set-xmark 1/2",
                " --set-xmark 0x1/0x2",
                " CONNMARK xset 0x1/0x2",
            ),
        ];
        for (rule, save, list) in cases {
            let Printed {
                save: s,
                list: l,
                list_numeric: n,
            } = ok(rule);
            assert_eq!(s, *save, "{rule}");
            assert_eq!(l, *list, "{rule}");
            assert_eq!(n, *list, "{rule} -n");
        }
    }

    #[test]
    fn canonical() {
        // nfmask is not part of a set operation.
        assert_eq!(
            ok("-j CONNMARK --set-mark 1 --nfmask 3"),
            ok("-j CONNMARK --set-mark 1")
        );
        let a = run(
            Family::Ipv4,
            TableKind::Mangle,
            "OUTPUT",
            "-j CONNMARK --set-mark 1 --nfmask 3",
        );
        let b = run(
            Family::Ipv4,
            TableKind::Mangle,
            "OUTPUT",
            "-j CONNMARK --set-xmark 1/0xffffffff",
        );
        assert_eq!(a, b);
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            ("-j CONNMARK", "CONNMARK target: No operation specified"),
            (
                "-j CONNMARK --mask 1",
                "CONNMARK target: No operation specified",
            ),
            (
                "-j CONNMARK --save-mark --restore-mark",
                "CONNMARK: option \"--save-mark\" cannot be used together with \"--restore-mark\".\n",
            ),
            (
                "-j CONNMARK --save-mark --mask 1 --ctmask 2",
                "CONNMARK: option \"--ctmask\" cannot be used together with \"--mask\".\n",
            ),
            (
                "-j CONNMARK --save-mark --left-shift-mark 33",
                "CONNMARK: bad value for option \"--left-shift-mark\", or out of range (0-32).\n",
            ),
            (
                "-j CONNMARK --set-mark 0x100000000",
                "CONNMARK: bad integer value for option \"--set-mark\", or out of range.\n",
            ),
            (
                "-j CONNMARK --or-mark x",
                "CONNMARK: bad value for option \"--or-mark\", or out of range (0-4294967295).\n",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, TableKind::Mangle, "FORWARD", rule),
                *want,
                "{rule}"
            );
        }
    }
}
