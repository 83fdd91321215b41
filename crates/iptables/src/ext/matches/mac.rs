//! `-m mac`: the Ethernet source address (iptables' libxt_mac).

use crate::error::{Error, Result};
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mac {
    pub addr: [u8; 6],
    pub inv: bool,
}

const SOURCE: u8 = 0;

/// C's `strtoul(s, &end, 16)`: the value (wrapped like the C cast to a
/// byte is done by the caller) and the number of bytes consumed (0 when no
/// digit was read).
fn c_strtoul_hex(s: &str) -> (u64, usize) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    if i + 1 < b.len()
        && b[i] == b'0'
        && (b[i + 1] | 0x20) == b'x'
        && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
    {
        i += 2;
    }
    let start = i;
    let mut v: u64 = 0;
    while i < b.len() && b[i].is_ascii_hexdigit() {
        v = v
            .saturating_mul(16)
            .saturating_add((b[i] as char).to_digit(16).unwrap_or(0) as u64);
        i += 1;
    }
    if i == start {
        return (0, 0);
    }
    (if neg { v.wrapping_neg() } else { v }, i)
}

/// xtables' XTTYPE_ETHERMAC: six hex bytes separated by ':', each written
/// with at most two characters.
fn parse_mac(arg: &str) -> Result<[u8; 6]> {
    let bad = || Error::param("Invalid MAC address specified.");
    let mut out = [0u8; 6];
    let mut rest = arg;
    for (i, slot) in out.iter_mut().enumerate() {
        let (v, used) = c_strtoul_hex(rest);
        let next = rest.as_bytes().get(used).copied();
        let want = if i < 5 { Some(b':') } else { None };
        if next != want || used > 2 {
            return Err(bad());
        }
        *slot = v as u8;
        rest = rest.get(used + 1..).unwrap_or("");
    }
    Ok(out)
}

fn put_mac(out: &mut String, a: &[u8; 6]) {
    let _ = write!(
        out,
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        a[0], a[1], a[2], a[3], a[4], a[5]
    );
}

impl Ext for Mac {
    const NAME: &'static str = "mac";
    const FAMILY: Fam = Fam::Both;
    const OPTS: &'static [OptDef] = &[OptDef::new("mac-source", SOURCE, Arg::Required)
        .inv()
        .mand()];

    fn new(_: &ParseCtx) -> Self {
        Mac {
            addr: [0; 6],
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.addr = parse_mac(c.arg)?;
        self.inv = c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        // The kernel's xt_mac hook mask.
        opt::check_hooks(
            "mac match",
            ctx.table,
            ctx.chain,
            &["PREROUTING", "INPUT", "FORWARD"],
        )
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.inv {
            out.push_str(" !");
        }
        out.push_str(" --mac-source ");
        put_mac(out, &self.addr);
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" MAC ");
        if self.inv {
            out.push_str("! ");
        }
        put_mac(out, &self.addr);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, err_in, list, save, save_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn list_output() {
        let cases = [
            (
                "-m mac --mac-source 42:01:02:03:04:05",
                " MAC 42:01:02:03:04:05",
            ),
            (
                "-m mac ! --mac-source AA:bb:C:d:0:FF",
                " MAC ! aa:bb:0c:0d:00:ff",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(list(args, false), want, "{args}");
            assert_eq!(list(args, true), want, "{args} -n");
        }
    }

    #[test]
    fn save_output() {
        assert_eq!(
            save("-m mac ! --mac-source 0A:0B:0C:0D:0E:0F"),
            " ! --mac-source 0a:0b:0c:0d:0e:0f"
        );
        // strtoul leniency: empty parts read as 0.
        assert_eq!(
            save("-m mac --mac-source :1::2::3"),
            " --mac-source 00:01:00:02:00:03"
        );
        assert_eq!(
            save_in(
                Family::Ipv6,
                TableKind::Mangle,
                "PREROUTING",
                "-m mac --mac-source 1:2:3:4:5:6"
            ),
            " --mac-source 01:02:03:04:05:06"
        );
    }

    #[test]
    fn errors() {
        let bad = "Invalid MAC address specified.";
        for args in [
            "-m mac --mac-source 42:01:02:03:04",
            "-m mac --mac-source 42:01:02:03:04:05:06",
            "-m mac --mac-source 420:01:02:03:04:05",
            "-m mac --mac-source 42:01:02:03:04:0x5",
            "-m mac --mac-source 42-01-02-03-04-05",
        ] {
            assert_eq!(err(args), bad, "{args}");
        }
        assert_eq!(
            err("-m mac"),
            "mac: option \"--mac-source\" must be specified\n"
        );
        assert_eq!(
            err_in(
                Family::Ipv4,
                TableKind::Filter,
                "OUTPUT",
                "-m mac --mac-source 42:01:02:03:04:05"
            ),
            "Invalid argument: mac match: used from hooks OUTPUT, but only valid from PREROUTING/INPUT/FORWARD."
        );
    }
}
