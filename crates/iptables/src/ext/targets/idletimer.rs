//! `-j IDLETIMER`: restart a named idle timer on every packet; user space
//! learns through sysfs when it expires (iptables' libxt_IDLETIMER,
//! revision 1). Usable everywhere.

use super::xtypes::{check_plain_word, einval, put_string};
use crate::error::Result;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// MAX_IDLETIMER_LABEL_SIZE: the label's `char` array, NUL included.
pub const LABEL_SIZE: usize = 28;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Idletimer {
    /// Seconds.
    pub timeout: u32,
    /// At most `LABEL_SIZE - 1` bytes (longer ones are cut, as iptables
    /// does).
    pub label: String,
    /// `--alarm`: an alarm timer (timer_type XT_IDLETIMER_ALARM).
    pub alarm: bool,
    /// `--send_nl_msg` (kept for Android compatibility).
    pub send_nl_msg: bool,
}

const TIMEOUT: u8 = 0;
const LABEL: u8 = 1;
const ALARM: u8 = 2;
const NETLINK: u8 = 3;

/// The names sysfs reserves in the timer's directory.
const RESERVED: &[&str] = &[".", "..", "power", "subsystem", "uevent"];

impl Ext for Idletimer {
    const NAME: &'static str = "IDLETIMER";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("timeout", TIMEOUT, Arg::Required).mand(),
        OptDef::new("label", LABEL, Arg::Required).mand(),
        OptDef::new("alarm", ALARM, Arg::None),
        OptDef::new("send_nl_msg", NETLINK, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Idletimer {
            timeout: 0,
            label: String::new(),
            alarm: false,
            send_nl_msg: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            TIMEOUT => self.timeout = c.uint(0, u32::MAX as u64)? as u32,
            LABEL => self.label = put_string(c.arg, LABEL_SIZE),
            ALARM => self.alarm = true,
            _ => self.send_nl_msg = true,
        }
        Ok(())
    }

    /// The kernel's checks (idletimer_tg_helper and the sysfs name check).
    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        crate::ext::postcheck(Self::NAME, Self::OPTS, seen)?;
        if self.timeout == 0 {
            return Err(einval("IDLETIMER", "timeout value is zero"));
        }
        if self.timeout >= i32::MAX as u32 / 1000 {
            return Err(einval("IDLETIMER", "timeout value is too big"));
        }
        if self.label.is_empty() {
            return Err(einval("IDLETIMER", "label is empty"));
        }
        if RESERVED.contains(&self.label.as_str()) || self.label.contains('/') {
            return Err(einval(
                "IDLETIMER",
                &format!("label \"{}\" is not a valid file name", self.label),
            ));
        }
        check_plain_word(Self::NAME, "label", &self.label)
    }

    // The label is printed as it is, unquoted.
    fn save(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " --timeout {} --label {}", self.timeout, self.label);
        if self.alarm {
            out.push_str(" --alarm");
        }
        if self.send_nl_msg {
            out.push_str(" --send_nl_msg");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        let _ = write!(out, " timeout:{} label:{}", self.timeout, self.label);
        if self.alarm {
            out.push_str(" alarm");
        }
        if self.send_nl_msg {
            out.push_str(" send_nl_msg");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            (
                "-j IDLETIMER --timeout 42 --label foo",
                " --timeout 42 --label foo",
                " timeout:42 label:foo",
            ),
            (
                "-j IDLETIMER --timeout 42 --label bar --alarm",
                " --timeout 42 --label bar --alarm",
                " timeout:42 label:bar alarm",
            ),
            (
                "-j IDLETIMER --send_nl_msg --timeout 0x10 --label x",
                " --timeout 16 --label x --send_nl_msg",
                " timeout:16 label:x send_nl_msg",
            ),
            (
                "-j IDLETIMER --timeout 2147482 --label x",
                " --timeout 2147482 --label x",
                " timeout:2147482 label:x",
            ),
            (
                "-j IDLETIMER --timeout 1 --label abcdefghijklmnopqrstuvwxyz0123456789",
                " --timeout 1 --label abcdefghijklmnopqrstuvwxyz0",
                " timeout:1 label:abcdefghijklmnopqrstuvwxyz0",
            ),
        ];
        for fam in [Family::Ipv4, Family::Ipv6] {
            for (rule, save, list) in cases {
                let got = ok_in(fam, TableKind::Raw, "PREROUTING", rule);
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
                "-j IDLETIMER --timeout 42",
                "IDLETIMER: option \"--label\" must be specified\n",
            ),
            (
                "-j IDLETIMER --label x",
                "IDLETIMER: option \"--timeout\" must be specified\n",
            ),
            (
                "-j IDLETIMER --timeout -1 --label x",
                "IDLETIMER: bad value for option \"--timeout\", or out of range (0-4294967295).\n",
            ),
            (
                "-j IDLETIMER --timeout 0 --label x",
                "Invalid argument: IDLETIMER target: timeout value is zero.",
            ),
            (
                "-j IDLETIMER --timeout 2147483 --label x",
                "Invalid argument: IDLETIMER target: timeout value is too big.",
            ),
            (
                "-j IDLETIMER --timeout 1 --label \"\"",
                "Invalid argument: IDLETIMER target: label is empty.",
            ),
            (
                "-j IDLETIMER --timeout 1 --label a/b",
                "Invalid argument: IDLETIMER target: label \"a/b\" is not a valid file name.",
            ),
            (
                "-j IDLETIMER --timeout 1 --label power",
                "Invalid argument: IDLETIMER target: label \"power\" is not a valid file name.",
            ),
            // Accepted by iptables, but saved unquoted: it would not read back.
            (
                "-j IDLETIMER --timeout 1 --label \"a b\"",
                "IDLETIMER: \"--label a b\" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(
                err_in(Family::Ipv4, TableKind::Filter, "INPUT", rule),
                *want,
                "{rule}"
            );
        }
    }
}
