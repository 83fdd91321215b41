//! The remaining values: MAC addresses, marks, interface names, set names,
//! timeouts, comments, skb info, netmask/bitmask and family.

use super::{elem_sep, ip};
use crate::addr::{self, Family};
use crate::data::Data;
use crate::error::{Error, Result};
use crate::num;
use crate::types::Opt;

/// Longest set name (IPSET_MAXNAMELEN - 1).
pub const MAX_NAME: usize = 31;
/// Longest comment.
pub const MAX_COMMENT: usize = 255;
/// Longest interface name (IFNAMSIZ - 1).
pub const MAX_IFNAME: usize = 15;
/// Largest timeout in seconds (the kernel's jiffies limit).
pub const MAX_TIMEOUT: u64 = (u32::MAX as u64 >> 1) / 1000;

/// A MAC address: six hex numbers separated by `:` (C `strtol` per part).
pub fn ether(s: &str) -> Result<[u8; 6]> {
    let err = || Error::syntax(format!("cannot parse '{s}' as ethernet address"));
    if s.len() > 17 {
        return Err(err());
    }
    let mut out = [0u8; 6];
    let mut p = 0usize;
    for (i, slot) in out.iter_mut().enumerate() {
        let rest = s.get(p..).unwrap_or("");
        let (v, used) = num::strtol16(rest);
        let end = p + used;
        let next = s.as_bytes().get(end).copied();
        let sep_ok = (next == Some(b':') && i < 5) || (next.is_none() && i == 5);
        match v {
            Some(n) if sep_ok && (0..=255).contains(&n) => *slot = n as u8,
            _ => return Err(err()),
        }
        p = end + 1;
    }
    Ok(out)
}

/// A 32-bit mark.
pub fn mark(s: &str) -> Result<u32> {
    num::u32_(s)
}

/// `[physdev:]name`.
pub fn iface(d: &mut Data, s: &str) -> Result<()> {
    let name = match s.strip_prefix("physdev:") {
        Some(n) => {
            d.physdev = true;
            n
        }
        None => s,
    };
    if name.len() > MAX_IFNAME {
        return Err(Error::syntax(format!(
            "interface name '{name}' is longer than {MAX_IFNAME} characters"
        )));
    }
    d.iface = Some(name.to_string());
    d.mark(Opt::Iface);
    Ok(())
}

/// A set name (length checked).
pub fn setname(s: &str) -> Result<String> {
    if s.len() > MAX_NAME {
        return Err(Error::syntax(format!(
            "setname '{s}' is longer than {MAX_NAME} characters"
        )));
    }
    Ok(s.to_string())
}

/// list:set's old element syntax `name,before|after,name`.
pub fn name_compat(d: &mut Data, s: &str) -> Result<()> {
    let (name, rest) = match elem_sep(s) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut before = None;
    if let Some(rest) = rest {
        let (word, refname) = match elem_sep(rest) {
            Some(j) => (&rest[..j], Some(&rest[j + 1..])),
            None => (rest, None),
        };
        match refname {
            Some(r) if word == "before" || word == "after" => before = Some((word == "before", r)),
            _ => {
                return Err(Error::session(
                    "you must specify elements as setname,[before|after],setname",
                ))
            }
        }
    }
    d.name = Some(setname(name)?);
    d.mark(Opt::Name);
    if let Some((b, r)) = before {
        d.nameref = Some(setname(r)?);
        d.mark(Opt::Nameref);
        if b {
            d.before = true;
        }
    }
    Ok(())
}

/// A timeout in seconds.
pub fn timeout(s: &str) -> Result<u32> {
    num::number(s, 0, MAX_TIMEOUT).map(|v| v as u32)
}

/// An element comment.
pub fn comment(s: &str) -> Result<String> {
    if s.contains('"') {
        return Err(Error::syntax("\" character is not permitted in comments"));
    }
    if s.len() > MAX_COMMENT {
        return Err(Error::syntax(format!(
            "Comment is longer than the maximum allowed {MAX_COMMENT} characters"
        )));
    }
    Ok(s.to_string())
}

/// C `sscanf("%lx")` after a literal `0x`: the value and bytes used.
fn scan_0x_hex(s: &str) -> Option<(u64, usize)> {
    let rest = s.strip_prefix("0x")?;
    let (v, used, _) = num::strtoull(rest, 16);
    (used > 0).then_some((v, used + 2))
}

/// `skbmark MARK[/MASK]`, both hex with `0x`: mark in the high word, mask in
/// the low word.
pub fn skbmark(s: &str) -> Result<u64> {
    let err =
        || Error::syntax("Invalid skbmark format, it should be:  MARK/MASK or MARK (see manpage)");
    let (mark, used) = scan_0x_hex(s).ok_or_else(err)?;
    let mask = s[used..]
        .strip_prefix('/')
        .and_then(scan_0x_hex)
        .map(|(m, _)| m)
        .unwrap_or(0xffff_ffff);
    Ok((mark << 32) | (mask & 0xffff_ffff))
}

/// `skbprio MAJOR:MINOR`, both hex.
pub fn skbprio(s: &str) -> Result<u32> {
    let err = || Error::syntax("Invalid skbprio format, it should be:MAJOR:MINOR (see manpage)");
    let (maj, used, _) = num::strtoull(s, 16);
    if used == 0 {
        return Err(err());
    }
    let rest = s[used..].strip_prefix(':').ok_or_else(err)?;
    let (min, used2, _) = num::strtoull(rest, 16);
    if used2 == 0 {
        return Err(err());
    }
    Ok(((maj as u32) << 16) | (min as u32 & 0xffff))
}

/// `netmask CIDR` for the set's family (inet if not given yet).
pub fn netmask(d: &mut Data, s: &str) -> Result<()> {
    if d.has(Opt::Bitmask) {
        return Err(Error::syntax(
            "bitmask and netmask are mutually exclusive, provide only one",
        ));
    }
    let fam = d.family_or_inet();
    let c = ip::cidr_value(s, 1, fam.bits()).map_err(|e| {
        e.then(Error::syntax(format!(
            "netmask is out of the inclusive range of 1-{}",
            fam.bits()
        )))
    })?;
    d.netmask = Some(c);
    d.mark(Opt::Netmask);
    Ok(())
}

/// `bitmask ADDR` for the set's family.
pub fn bitmask(d: &mut Data, s: &str) -> Result<()> {
    if d.has(Opt::Netmask) {
        return Err(Error::syntax(
            "bitmask and netmask are mutually exclusive, provide only one",
        ));
    }
    let fam = d.family_or_inet();
    ip::parse_ipaddr(d, Opt::Bitmask, s, fam).map_err(|e| {
        e.then(Error::syntax(format!(
            "bitmask is not valid for family = {}",
            fam.name()
        )))
    })
}

/// `family inet|inet6` (also `-4`/`-6` and their spellings).
pub fn family(d: &mut Data, s: &str) -> Result<()> {
    if d.has(Opt::Family) && d.ignored & Opt::Family.bit() == 0 {
        return Err(Error::syntax(
            "protocol family may not be specified multiple times",
        ));
    }
    let f = match s {
        "inet" | "ipv4" | "-4" => Some(Family::Inet),
        "inet6" | "ipv6" | "-6" => Some(Family::Inet6),
        "any" | "unspec" => None,
        _ => return Err(Error::syntax(format!("unknown inet family {s}"))),
    };
    d.family = f;
    d.mark(Opt::Family);
    Ok(())
}

/// A bitmask address must not be zero; ipset checks it in the kernel.
pub fn bitmask_is_zero(d: &Data) -> bool {
    d.bitmask.is_some_and(addr::is_zero)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_addresses() {
        let ok = [
            ("00:11:22:33:44:55", [0, 0x11, 0x22, 0x33, 0x44, 0x55]),
            ("0:1:2:3:4:5", [0, 1, 2, 3, 4, 5]),
            ("aa:BB:cc:dd:ee:ff", [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]),
        ];
        for (s, want) in ok {
            assert_eq!(ether(s).unwrap(), want, "{s}");
        }
        for bad in [
            "00:11:22:33:44",
            "00:11:22:33:44:55:66",
            "00:11:22:33:44:1ff",
            "zz:11:22:33:44:55",
        ] {
            assert_eq!(
                ether(bad).unwrap_err().msg,
                format!("Syntax error: cannot parse '{bad}' as ethernet address")
            );
        }
    }

    #[test]
    fn skb_values() {
        assert_eq!(skbmark("0x123456").unwrap(), 0x0012_3456_ffff_ffff);
        assert_eq!(skbmark("0x1234ab/0xffff").unwrap(), 0x0012_34ab_0000_ffff);
        assert!(skbmark("123").is_err());
        assert_eq!(skbprio("1:20").unwrap(), 0x0001_0020);
        assert!(skbprio("1").is_err());
    }

    #[test]
    fn netmask_and_family() {
        let mut d = Data::default();
        assert_eq!(
            netmask(&mut d, "33").unwrap_err().msg,
            "Syntax error: '33' is out of range 1-32\nSyntax error: netmask is out of the inclusive range of 1-32"
        );
        netmask(&mut d, "24").unwrap();
        assert_eq!(d.netmask, Some(24));
        let mut d = Data::default();
        family(&mut d, "inet6").unwrap();
        assert_eq!(
            family(&mut d, "inet").unwrap_err().msg,
            "Syntax error: protocol family may not be specified multiple times"
        );
        assert!(comment(&"x".repeat(256)).is_err());
        assert!(comment(&"x".repeat(255)).is_ok());
        assert_eq!(
            timeout("2147484").unwrap_err().msg,
            "Syntax error: '2147484' is out of range 0-2147483"
        );
    }
}
