//! `-j LED`: blink the LED trigger `netfilter-<id>` (iptables' libxt_LED).
//! Usable everywhere, where the kernel has the module.

use super::xtypes::{check_len, unsaveable};
use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// The kernel's `id` array (27 bytes, NUL included) less "netfilter-".
pub const ID_MAX: usize = 27 - "netfilter-".len() - 1;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Led {
    /// The trigger name without its "netfilter-" prefix.
    pub id: String,
    pub always_blink: bool,
    /// Milliseconds; `u32::MAX` is "inf" (the LED stays on).
    pub delay: u32,
}

const TRIGGER_ID: u8 = 0;
const DELAY: u8 = 1;
const ALWAYS_BLINK: u8 = 2;

/// The id in double quotes, with `"` and `\` escaped.
fn quoted(out: &mut String, id: &str) {
    out.push('"');
    for ch in id.chars() {
        if ch == '"' || ch == '\\' {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('"');
}

impl Ext for Led {
    const NAME: &'static str = "LED";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("led-trigger-id", TRIGGER_ID, Arg::Required).mand(),
        OptDef::new("led-delay", DELAY, Arg::Required),
        OptDef::new("led-always-blink", ALWAYS_BLINK, Arg::None),
    ];

    fn new(_: &ParseCtx) -> Self {
        Led {
            id: String::new(),
            always_blink: false,
            delay: 0,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            TRIGGER_ID => {
                check_len(c.arg, 0, ID_MAX)?;
                self.id = c.arg.to_string();
            }
            DELAY => {
                // Anything starting with "inf" (any case) is infinite.
                let inf = c.arg.len() >= 3 && c.arg.as_bytes()[..3].eq_ignore_ascii_case(b"inf");
                self.delay = if inf {
                    u32::MAX
                } else {
                    crate::opt::parse_uint(c.arg, 0, u32::MAX as u64).ok_or_else(|| {
                        Error::param(format!("Delay value must be within range 0..{}", u32::MAX))
                    })? as u32
                };
            }
            _ => self.always_blink = true,
        }
        Ok(())
    }

    /// iptables saves a delay from 2^31 ms on ("inf" included) as a
    /// negative number, which does not read back.
    fn finish(&mut self, _: u32, _: &ParseCtx) -> Result<()> {
        if self.delay > i32::MAX as u32 {
            return Err(unsaveable(
                Self::NAME,
                "led-delay",
                &(self.delay as i32).to_string(),
            ));
        }
        Ok(())
    }

    // iptables prints the delay as a signed number, and saves "inf" as -1.
    fn save(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" --led-trigger-id ");
        quoted(out, &self.id);
        if self.delay != 0 {
            let _ = write!(out, " --led-delay {}", self.delay as i32);
        }
        if self.always_blink {
            out.push_str(" --led-always-blink");
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" led-trigger-id:");
        quoted(out, &self.id);
        if self.delay == u32::MAX {
            out.push_str(" led-delay:inf");
        } else {
            let _ = write!(out, " led-delay:{}ms", self.delay as i32);
        }
        if self.always_blink {
            out.push_str(" led-always-blink");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, ok};

    #[test]
    fn forms() {
        // rule, save, -L
        let cases: &[(&str, &str, &str)] = &[
            (
                "-j LED --led-trigger-id \"foo\"",
                " --led-trigger-id \"foo\"",
                " led-trigger-id:\"foo\" led-delay:0ms",
            ),
            (
                "-j LED --led-trigger-id \"foo\" --led-delay 42 --led-always-blink",
                " --led-trigger-id \"foo\" --led-delay 42 --led-always-blink",
                " led-trigger-id:\"foo\" led-delay:42ms led-always-blink",
            ),
            (
                "-j LED --led-trigger-id \"a\\\"b\\\\c\" --led-delay 2147483647",
                " --led-trigger-id \"a\\\"b\\\\c\" --led-delay 2147483647",
                " led-trigger-id:\"a\\\"b\\\\c\" led-delay:2147483647ms",
            ),
            (
                "-j LED --led-trigger-id 0123456789abcdef",
                " --led-trigger-id \"0123456789abcdef\"",
                " led-trigger-id:\"0123456789abcdef\" led-delay:0ms",
            ),
        ];
        for (rule, save, list) in cases {
            let got = ok(rule);
            assert_eq!(got.save, *save, "{rule}");
            assert_eq!(got.list, *list, "{rule}");
            assert_eq!(got.list_numeric, *list, "{rule}");
        }
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-j LED",
                "LED: option \"--led-trigger-id\" must be specified\n",
            ),
            (
                "-j LED --led-trigger-id 0123456789abcdefg",
                "Argument must have a maximum length of 16 characters\n",
            ),
            (
                "-j LED --led-trigger-id x --led-delay 1x",
                "Delay value must be within range 0..4294967295",
            ),
            (
                "-j LED --led-trigger-id x --led-delay -1",
                "Delay value must be within range 0..4294967295",
            ),
            // iptables saves these as -1 and -1294967296.
            (
                "-j LED --led-trigger-id x --led-delay INFinite",
                "LED: \"--led-delay -1\" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
            (
                "-j LED --led-trigger-id x --led-delay 3000000000",
                "LED: \"--led-delay -1294967296\" would not read back from the saved rule; nfkeeper cannot keep this rule",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(err(rule), *want, "{rule}");
        }
    }
}
