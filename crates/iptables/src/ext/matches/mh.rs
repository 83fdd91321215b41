//! `-m mh`: IPv6 mobility header type (ip6tables' libip6t_mh).

use crate::error::{Error, Result};
use crate::ext::{require_proto, Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mh {
    /// Type range; 0:255 uninverted tests nothing.
    pub types: (u8, u8),
    pub inv: bool,
}

/// Type names in iptables' order (the first name of a type prints).
const NAMES: &[(&str, u8)] = &[
    ("binding-refresh-request", 0),
    ("brr", 0),
    ("home-test-init", 1),
    ("hoti", 1),
    ("careof-test-init", 2),
    ("coti", 2),
    ("home-test", 3),
    ("hot", 3),
    ("careof-test", 4),
    ("cot", 4),
    ("binding-update", 5),
    ("bu", 5),
    ("binding-acknowledgement", 6),
    ("ba", 6),
    ("binding-error", 7),
    ("be", 7),
];

/// A type name (any case-insensitive prefix: the first match, unless a
/// later one is exact) or a number 0..=255.
fn name_to_type(s: &str) -> Result<u8> {
    let mut found: Option<&(&str, u8)> = None;
    for e in NAMES {
        let is_prefix =
            e.0.len() >= s.len() && e.0.as_bytes()[..s.len()].eq_ignore_ascii_case(s.as_bytes());
        if is_prefix && (found.is_none() || e.0.len() == s.len()) {
            found = Some(e);
        }
    }
    if let Some(e) = found {
        return Ok(e.1);
    }
    opt::parse_uint(s, 0, 255)
        .map(|v| v as u8)
        .ok_or_else(|| Error::param(format!("Invalid MH type `{s}'")))
}

fn put_type(out: &mut String, t: u8, numeric: bool) {
    match NAMES.iter().find(|e| e.1 == t).filter(|_| !numeric) {
        Some(e) => out.push_str(e.0),
        None => {
            let _ = write!(out, "{t}");
        }
    }
}

impl Mh {
    fn tests_nothing(&self) -> bool {
        self.types == (0, 255) && !self.inv
    }
}

impl Ext for Mh {
    const NAME: &'static str = "mh";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[OptDef::new("mh-type", 0, Arg::Required).inv()];

    fn new(_: &ParseCtx) -> Self {
        Mh {
            types: (0, 255),
            inv: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.types = match c.arg.split_once(':') {
            None => {
                let t = name_to_type(c.arg)?;
                (t, t)
            }
            Some((a, b)) => {
                let lo = if a.is_empty() { 0 } else { name_to_type(a)? };
                let hi = if b.is_empty() { 255 } else { name_to_type(b)? };
                if lo > hi {
                    return Err(Error::param("Invalid MH type range (min > max)"));
                }
                (lo, hi)
            }
        };
        self.inv |= c.inv;
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("mh match", ctx, &[135])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if self.tests_nothing() {
            return;
        }
        if self.inv {
            out.push_str(" !");
        }
        let (lo, hi) = self.types;
        if lo != hi {
            let _ = write!(out, " --mh-type {lo}:{hi}");
        } else {
            let _ = write!(out, " --mh-type {lo}");
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" mh");
        if self.tests_nothing() {
            return;
        }
        out.push(' ');
        if self.inv {
            out.push('!');
        }
        let (lo, hi) = self.types;
        put_type(out, lo, ctx.numeric);
        if lo != hi {
            out.push(':');
            put_type(out, hi, ctx.numeric);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, ok_in};
    use ruleset::{Family, TableKind};

    #[test]
    fn forms() {
        // (args, save, -L, -L -n)
        let cases = [
            ("", "", " mh", " mh"),
            (" --mh-type :", "", " mh", " mh"),
            (
                " ! --mh-type :",
                " ! --mh-type 0:255",
                " mh !binding-refresh-request:255",
                " mh !0:255",
            ),
            (
                " --mh-type 1",
                " --mh-type 1",
                " mh home-test-init",
                " mh 1",
            ),
            (
                " --mh-type BU",
                " --mh-type 5",
                " mh binding-update",
                " mh 5",
            ),
            (
                " --mh-type home-test",
                " --mh-type 3",
                " mh home-test",
                " mh 3",
            ),
            (
                " --mh-type home:cot",
                " --mh-type 1:4",
                " mh home-test-init:careof-test",
                " mh 1:4",
            ),
            (
                " ! --mh-type 4:123",
                " ! --mh-type 4:123",
                " mh !careof-test:123",
                " mh !4:123",
            ),
        ];
        for (opts, s, l, n) in cases {
            let args = format!("-p mobility-header -m mh{opts}");
            let p = ok_in(Family::Ipv6, TableKind::Filter, "INPUT", &args);
            assert_eq!(
                (p.save.as_str(), p.list.as_str(), p.list_numeric.as_str()),
                (s, l, n),
                "{args}"
            );
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m mh",
                "Invalid argument: mh match: only valid for protocol 135.",
            ),
            (
                "-p mh -m mh --mh-type 4:3",
                "Invalid MH type range (min > max)",
            ),
            ("-p mh -m mh --mh-type 256", "Invalid MH type `256'"),
            ("-p mh -m mh --mh-type x", "Invalid MH type `x'"),
        ];
        for (args, want) in cases {
            assert_eq!(
                err_in(Family::Ipv6, TableKind::Filter, "INPUT", args),
                want,
                "{args}"
            );
        }
    }
}
