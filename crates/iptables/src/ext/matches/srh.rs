//! `-m srh`: IPv6 segment routing header (ip6tables' libip6t_srh,
//! revision 1). The value mirrors the kernel's: the `-eq`/`-gt`/`-lt` forms
//! of a field share that field (the last one given sets it) and each sets
//! its own flag.

use crate::error::Result;
use crate::ext::matches::connlimit::parse_plenmask;
use crate::ext::{Arg, Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// An address and mask (`--srh-psid` and friends).
pub type Sid = ([u8; 16], [u8; 16]);

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Srh {
    /// IP6T_SRH_* flags: bit N is option id N.
    pub flags: u16,
    /// IP6T_SRH_INV_* flags (same bits).
    pub inv: u16,
    pub next_hdr: u8,
    pub hdr_len: u8,
    pub segs_left: u8,
    pub last_entry: u8,
    pub tag: u16,
    /// Previous, next and last SID (address as given, mask).
    pub sids: [Sid; 3],
}

const NEXTHDR: u8 = 0;
const TAG: u8 = 10;
const PSID: u8 = 11;

/// Option names and their `-L` labels, in id (and flag bit) order.
const OPTIONS: &[(&str, &str)] = &[
    ("srh-next-hdr", "next-hdr"),
    ("srh-hdr-len-eq", "hdr-len-eq"),
    ("srh-hdr-len-gt", "hdr-len-gt"),
    ("srh-hdr-len-lt", "hdr-len-lt"),
    ("srh-segs-left-eq", "segs-left-eq"),
    ("srh-segs-left-gt", "segs-left-gt"),
    ("srh-segs-left-lt", "segs-left-lt"),
    ("srh-last-entry-eq", "last-entry-eq"),
    ("srh-last-entry-gt", "last-entry-gt"),
    ("srh-last-entry-lt", "last-entry-lt"),
    ("srh-tag", "tag"),
    ("srh-psid", "psid"),
    ("srh-nsid", "nsid"),
    ("srh-lsid", "lsid"),
];

/// XTTYPE_HOSTMASK: `addr[/mask]` (the address kept as given, not masked;
/// no mask is all ones). Messages name option `--name` of extension `ext`.
///
/// An IPv4 mask fills 4 of the 16 bytes; the other 12 are what iptables
/// leaves there when it reads the mask as printed: all ones for /32 (which
/// prints as no mask) and for a non-contiguous mask, zero for a shorter
/// prefix. So `1.2.3.4` and `1.2.3.4/32` are one value.
pub fn parse_hostmask(ext: &str, name: &str, arg: &str, v6: bool) -> Result<Sid> {
    let (host, mask) = match arg.split_once('/') {
        Some((h, m)) => (h, Some(m)),
        None => (arg, None),
    };
    let addr = opt::parse_gai_host(host, v6)?;
    let mut mask = match mask {
        Some(m) => parse_plenmask(ext, name, m, v6)?,
        None => [0xff; 16],
    };
    if !v6 {
        let short_prefix = matches!(opt::mask_prefix(&mask[..4]), Some(n) if n < 32);
        mask[4..].fill(if short_prefix { 0 } else { 0xff });
    }
    Ok((addr, mask))
}

impl Srh {
    /// The value option `id` (0..=10) tests.
    fn value(&self, id: u8) -> u16 {
        match id {
            NEXTHDR => self.next_hdr as u16,
            1..=3 => self.hdr_len as u16,
            4..=6 => self.segs_left as u16,
            7..=9 => self.last_entry as u16,
            _ => self.tag,
        }
    }

    fn put_sid(out: &mut String, sid: &Sid) {
        opt::fmt_v6(out, &sid.0);
        let bits = opt::mask_prefix(&sid.1).unwrap_or(u32::MAX);
        let _ = write!(out, "/{bits}");
    }
}

impl Ext for Srh {
    const NAME: &'static str = "srh";
    const FAMILY: Fam = Fam::V6;
    const OPTS: &'static [OptDef] = &[
        OptDef::new("srh-next-hdr", 0, Arg::Required).inv(),
        OptDef::new("srh-hdr-len-eq", 1, Arg::Required).inv(),
        OptDef::new("srh-hdr-len-gt", 2, Arg::Required).inv(),
        OptDef::new("srh-hdr-len-lt", 3, Arg::Required).inv(),
        OptDef::new("srh-segs-left-eq", 4, Arg::Required).inv(),
        OptDef::new("srh-segs-left-gt", 5, Arg::Required).inv(),
        OptDef::new("srh-segs-left-lt", 6, Arg::Required).inv(),
        OptDef::new("srh-last-entry-eq", 7, Arg::Required).inv(),
        OptDef::new("srh-last-entry-gt", 8, Arg::Required).inv(),
        OptDef::new("srh-last-entry-lt", 9, Arg::Required).inv(),
        OptDef::new("srh-tag", 10, Arg::Required).inv(),
        OptDef::new("srh-psid", 11, Arg::Required).inv(),
        OptDef::new("srh-nsid", 12, Arg::Required).inv(),
        OptDef::new("srh-lsid", 13, Arg::Required).inv(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Srh::default()
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        let id = c.opt.id;
        match id {
            NEXTHDR => self.next_hdr = c.uint(0, 255)? as u8,
            1..=3 => self.hdr_len = c.uint(0, 255)? as u8,
            4..=6 => self.segs_left = c.uint(0, 255)? as u8,
            7..=9 => self.last_entry = c.uint(0, 255)? as u8,
            TAG => self.tag = c.uint(0, 65535)? as u16,
            _ => self.sids[(id - PSID) as usize] = parse_hostmask(c.ext, c.opt.name, c.arg, true)?,
        }
        self.flags |= 1 << id;
        if c.inv {
            self.inv |= 1 << id;
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        for (i, (name, _)) in OPTIONS.iter().enumerate() {
            let bit = 1u16 << i;
            if self.flags & bit == 0 {
                continue;
            }
            let inv = if self.inv & bit != 0 { " !" } else { "" };
            let _ = write!(out, "{inv} --{name} ");
            if i < PSID as usize {
                let _ = write!(out, "{}", self.value(i as u8));
            } else {
                Srh::put_sid(out, &self.sids[i - PSID as usize]);
            }
        }
    }

    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str(" srh");
        for (i, (_, label)) in OPTIONS.iter().enumerate() {
            let bit = 1u16 << i;
            if self.flags & bit == 0 {
                continue;
            }
            let inv = if self.inv & bit != 0 { "!" } else { "" };
            if i < PSID as usize {
                let _ = write!(out, " {label}:{inv}{}", self.value(i as u8));
            } else {
                let _ = write!(out, " {label} {inv} ");
                Srh::put_sid(out, &self.sids[i - PSID as usize]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err_in, list_in, save_in};
    use ruleset::{Family, TableKind};

    fn at(args: &str) -> (String, String) {
        (
            save_in(Family::Ipv6, TableKind::Filter, "INPUT", args),
            list_in(Family::Ipv6, TableKind::Filter, "INPUT", args, true),
        )
    }

    #[test]
    fn forms() {
        let cases = [
            ("-m srh", "", " srh"),
            (
                "-m srh ! --srh-next-hdr 17 ! --srh-segs-left-eq 0 --srh-tag 0",
                " ! --srh-next-hdr 17 ! --srh-segs-left-eq 0 --srh-tag 0",
                " srh next-hdr:!17 segs-left-eq:!0 tag:0",
            ),
            (
                // The three length tests share one field.
                "-m srh --srh-hdr-len-gt 8 ! --srh-hdr-len-eq 3 --srh-last-entry-lt 255",
                " ! --srh-hdr-len-eq 3 --srh-hdr-len-gt 3 --srh-last-entry-lt 255",
                " srh hdr-len-eq:!3 hdr-len-gt:3 last-entry-lt:255",
            ),
            (
                "-m srh --srh-psid a::/64 ! --srh-nsid b::1 --srh-lsid c::/0",
                " --srh-psid a::/64 ! --srh-nsid b::1/128 --srh-lsid c::/0",
                " srh psid  a::/64 nsid ! b::1/128 lsid  c::/0",
            ),
            (
                "-m srh --srh-psid a::1/ffff:0:ffff::",
                " --srh-psid a::1/4294967295",
                " srh psid  a::1/4294967295",
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(at(args), (s.to_string(), l.to_string()), "{args}");
        }
    }

    #[test]
    fn v4_hostmasks() {
        use super::parse_hostmask;
        let ones = [0xffu8; 16];
        let mut slash8 = [0u8; 16];
        slash8[0] = 0xff;
        let mut odd = ones;
        odd[..4].copy_from_slice(&[255, 0, 255, 0]);
        let cases: &[(&str, [u8; 16])] = &[
            ("1.2.3.4", ones),
            ("1.2.3.4/32", ones),
            ("1.2.3.4/255.255.255.255", ones),
            ("1.2.3.4/8", slash8),
            ("1.2.3.4/255.0.0.0", slash8),
            ("1.2.3.4/255.0.255.0", odd),
        ];
        for (arg, mask) in cases {
            let (a, m) = parse_hostmask("x", "y", arg, false).unwrap();
            assert_eq!(a[..4], [1, 2, 3, 4], "{arg}");
            assert_eq!(m, *mask, "{arg}");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "-m srh --srh-tag 65536",
                "srh: bad value for option \"--srh-tag\", or out of range (0-65535).\n",
            ),
            (
                "-m srh --srh-next-hdr 1 --srh-next-hdr 2",
                "srh: option \"--srh-next-hdr\" can only be used once.\n",
            ),
            (
                "-m srh --srh-psid a::/129",
                "srh: bad value for option \"--srh-psid\", neither a valid network mask nor valid CIDR (0-128).\n",
            ),
            ("-m srh --srh-lsid 1.2.3.4", "getaddrinfo: Name or service not known\n"),
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
