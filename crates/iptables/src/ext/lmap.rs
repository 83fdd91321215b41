//! Name maps of iproute2's files (`/etc/iproute2/rt_realms`,
//! `/etc/iproute2/group`) as xtables reads them (xtables_lmap_init): one
//! `ID NAME` per line, the id decimal or `0x` hex in 0..=255, `#` comments.
//! Used by `-m realm` and `-m devgroup` to take and print names.

use crate::error::{Error, Result};
use crate::ext::Call;
use crate::opt;
use std::sync::OnceLock;

/// Map entries in file order (the first entry of an id or name wins).
#[derive(Debug, Default)]
pub struct Lmap(Vec<(u32, String)>);

impl Lmap {
    /// Parse a map file's text.
    pub fn parse(text: &str) -> Lmap {
        let mut v = Vec::new();
        for line in text.lines() {
            let cur = line.trim_start();
            if cur.is_empty() || cur.starts_with('#') {
                continue;
            }
            let (digits, base) = match cur.strip_prefix("0x") {
                Some(h) => (h, 16),
                None => (cur, 10),
            };
            let end = digits
                .find(|c: char| !c.is_digit(base))
                .unwrap_or(digits.len());
            let Ok(id) = u32::from_str_radix(&digits[..end], base) else {
                continue;
            };
            let rest = &digits[end..];
            if id > 255 || !rest.starts_with(|c: char| c.is_ascii_whitespace()) {
                continue;
            }
            let Some(name) = rest.split_ascii_whitespace().next() else {
                continue;
            };
            if name.starts_with('#') {
                continue;
            }
            v.push((id, name.to_string()));
        }
        Lmap(v)
    }

    pub fn id(&self, name: &str) -> Option<u32> {
        self.0.iter().find(|e| e.1 == name).map(|e| e.0)
    }

    pub fn name(&self, id: u32) -> Option<&str> {
        self.0.iter().find(|e| e.0 == id).map(|e| e.1.as_str())
    }
}

/// A map file, read once per process (missing or unreadable: empty).
fn load(cell: &'static OnceLock<Lmap>, path: &str) -> &'static Lmap {
    cell.get_or_init(|| Lmap::parse(&std::fs::read_to_string(path).unwrap_or_default()))
}

/// `/etc/iproute2/rt_realms`.
pub fn realms() -> &'static Lmap {
    static CELL: OnceLock<Lmap> = OnceLock::new();
    load(&CELL, "/etc/iproute2/rt_realms")
}

/// `/etc/iproute2/group`.
pub fn devgroups() -> &'static Lmap {
    static CELL: OnceLock<Lmap> = OnceLock::new();
    load(&CELL, "/etc/iproute2/group")
}

/// xtables_parse_val_mask with a name map: `value[/mask]` (any base) or a
/// name of `map`; the mask is 0xffffffff unless given. An empty map is no
/// map (xtables has none when the file is missing or names nothing), which
/// changes the messages for what is not a number.
pub fn parse_val_mask(c: &Call, map: &Lmap) -> Result<(u32, u32)> {
    let garbage = || {
        Error::param(format!(
            "{}: trailing garbage after value for option \"--{}\".\n",
            c.ext, c.opt.name
        ))
    };
    let by_name = |no_map: Error| {
        if map.0.is_empty() {
            return Err(no_map);
        }
        map.id(c.arg).map(|v| (v, u32::MAX)).ok_or_else(|| {
            Error::param(format!(
                "{}: could not map name {} to an integer value for option \"--{}\".\n",
                c.ext, c.arg, c.opt.name
            ))
        })
    };
    let bad = || {
        Error::param(format!(
            "{}: bad integer value for option \"--{}\", or out of range.\n",
            c.ext, c.opt.name
        ))
    };
    let Some((val, rest)) = num(c.arg) else {
        return by_name(bad());
    };
    if rest.is_empty() {
        return Ok((val, u32::MAX));
    }
    let Some(m) = rest.strip_prefix('/') else {
        return by_name(garbage());
    };
    match num(m) {
        Some((mask, "")) => Ok((val, mask)),
        Some(_) => Err(garbage()),
        None => Err(bad()),
    }
}

/// xtables_strtoui with an end pointer: a leading number and what follows.
fn num(s: &str) -> Option<(u32, &str)> {
    if s.trim_start().starts_with('-') {
        return None;
    }
    let (v, rest) = opt::strtoul(s, 0)?;
    Some((u32::try_from(v).ok()?, rest))
}

/// xtables_print_val_mask: ` 0xV/0xM`, else ` NAME` when `map` names the
/// value, else ` 0xV`.
pub fn put_val_mask(out: &mut String, val: u32, mask: u32, map: Option<&Lmap>) {
    use std::fmt::Write;
    if mask != u32::MAX {
        let _ = write!(out, " 0x{val:x}/0x{mask:x}");
        return;
    }
    match map.and_then(|m| m.name(val)) {
        Some(name) => {
            out.push(' ');
            out.push_str(name);
        }
        None => {
            let _ = write!(out, " 0x{val:x}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_map_files() {
        let text = "# c\n0\tcosmos\n  0x10 hex # x\n256 big\n7x bad\n8\n9 #n\n3 three\n3 again\n";
        let m = Lmap::parse(text);
        let cases: &[(&str, Option<u32>)] = &[
            ("cosmos", Some(0)),
            ("hex", Some(16)),
            ("big", None),
            ("bad", None),
            ("three", Some(3)),
            ("again", Some(3)),
        ];
        for (name, id) in cases {
            assert_eq!(m.id(name), *id, "{name}");
        }
        assert_eq!(m.name(3), Some("three"));
        assert_eq!(m.name(9), None);
        let mut out = String::new();
        put_val_mask(&mut out, 3, u32::MAX, Some(&m));
        put_val_mask(&mut out, 3, u32::MAX, None);
        put_val_mask(&mut out, 3, 7, Some(&m));
        assert_eq!(out, " three 0x3 0x3/0x7");
    }
}
