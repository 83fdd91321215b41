//! The entry codec: a table's blob as `IPT_SO_GET_ENTRIES` returns it (and
//! `IPT_SO_SET_REPLACE` takes it), a sequence of `struct ipt_entry` /
//! `struct ip6t_entry`, each followed by its matches and its target.
//!
//! C layouts (x86-64 and every 64-bit host; host byte order except
//! addresses): `struct ipt_ip` is 84 bytes — src, dst, smsk, dmsk (4 each)
//! @0..16, iniface[16] @16, outiface[16] @32, iniface_mask[16] @48,
//! outiface_mask[16] @64, proto u16 @80, flags u8 @82, invflags u8 @83 —
//! and `struct ipt_entry` adds nfcache u32 @84, target_offset u16 @88,
//! next_offset u16 @90, comefrom u32 @92, counters (pcnt, bcnt u64) @96:
//! 112 bytes. `struct ip6t_ip6` is 136 bytes — src, dst, smsk, dmsk (16
//! each) @0..64, the interfaces and masks @64..128, proto u16 @128, tos u8
//! @130, flags u8 @131, invflags u8 @132 — and `struct ip6t_entry` adds
//! nfcache @136, target_offset @140, next_offset @142, comefrom @144,
//! counters @152: 168 bytes. A match or target (`struct xt_entry_match`,
//! `xt_entry_target`): size u16 @0 (header included), name[29] @2,
//! revision u8 @31, info @32, padded to 8.

use ruleset::Family;

/// The standard target's name (`XT_STANDARD_TARGET`) is empty.
pub const STANDARD: &str = "";
/// The name of the target that heads user chains and ends the table.
pub const ERROR: &str = "ERROR";
/// `sizeof(struct xt_entry_match)` = `sizeof(struct xt_entry_target)`.
pub const EXT_HEADER: usize = 32;
/// An extension name's field (`XT_EXTENSION_MAXNAMELEN`).
const NAME_LEN: usize = 29;

/// Where an entry's fields are for a family.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// sizeof the entry header (`ipt_entry`: 112, `ip6t_entry`: 168).
    pub size: usize,
    /// Offset of the address block's interface names.
    iface: usize,
    proto: usize,
    flags: usize,
    invflags: usize,
    target_offset: usize,
    counters: usize,
    /// Address length (4 or 16).
    alen: usize,
}

impl Layout {
    pub const fn of(family: Family) -> Layout {
        match family {
            Family::Ipv4 => Layout {
                size: 112,
                iface: 16,
                proto: 80,
                flags: 82,
                invflags: 83,
                target_offset: 88,
                counters: 96,
                alen: 4,
            },
            Family::Ipv6 => Layout {
                size: 168,
                iface: 64,
                proto: 128,
                flags: 131,
                invflags: 132,
                target_offset: 140,
                counters: 152,
                alen: 16,
            },
        }
    }
}

/// `IPT_F_*` / `IP6T_F_*` and `IPT_INV_*` (same values in both families).
pub mod flags {
    /// IPv4 `-f`.
    pub const V4_FRAG: u8 = 0x01;
    pub const V4_GOTO: u8 = 0x02;
    /// IPv6: the protocol is given (`-p`).
    pub const V6_PROTO: u8 = 0x01;
    pub const V6_TOS: u8 = 0x02;
    pub const V6_GOTO: u8 = 0x04;
    pub const INV_VIA_IN: u8 = 0x01;
    pub const INV_VIA_OUT: u8 = 0x02;
    pub const INV_TOS: u8 = 0x04;
    pub const INV_SRCIP: u8 = 0x08;
    pub const INV_DSTIP: u8 = 0x10;
    pub const INV_FRAG: u8 = 0x20;
    pub const INV_PROTO: u8 = 0x40;
}

/// The address part of an entry (`struct ipt_ip` / `ip6t_ip6`); IPv4
/// addresses in the first 4 bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IpPart {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub smsk: [u8; 16],
    pub dmsk: [u8; 16],
    pub iniface: [u8; 16],
    pub outiface: [u8; 16],
    pub iniface_mask: [u8; 16],
    pub outiface_mask: [u8; 16],
    pub proto: u16,
    /// IPv6 only (`ip6t_ip6.tos`, unused by ip6tables).
    pub tos: u8,
    pub flags: u8,
    pub invflags: u8,
}

/// A match or target: kernel name, revision and info (padding included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ext {
    pub name: String,
    pub rev: u8,
    pub data: Vec<u8>,
}

impl Ext {
    /// The standard target's verdict: `-NF_x - 1` for verdicts, a byte
    /// offset into the table for jumps.
    pub fn verdict(&self) -> Option<i32> {
        let b = self.data.get(..4)?;
        Some(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The ERROR target's `errorname[32]`.
    pub fn error_name(&self) -> String {
        cstr(&self.data)
    }
}

/// One entry of a blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Byte offset in the blob (what jumps and hook entries name).
    pub offset: u32,
    /// `next_offset`: the entry's whole size.
    pub size: u32,
    pub ip: IpPart,
    /// (packets, bytes)
    pub counters: (u64, u64),
    pub matches: Vec<Ext>,
    pub target: Ext,
}

/// A blob that does not hold together; the text says where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadBlob(pub String);

impl std::fmt::Display for BadBlob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed table blob: {}", self.0)
    }
}

/// A NUL-terminated string in a fixed field (the bytes as iptables keeps
/// them, see `iptables::bytes`).
pub fn cstr(b: &[u8]) -> String {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    iptables::bytes::decode(&b[..n]).into_owned()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(x)
}

fn arr16(b: &[u8]) -> [u8; 16] {
    let mut a = [0; 16];
    a[..b.len()].copy_from_slice(b);
    a
}

/// One `xt_entry_match`/`xt_entry_target` at the start of `b`, and its size.
fn ext_at(b: &[u8], what: &str, at: u32) -> Result<(Ext, usize), BadBlob> {
    if b.len() < EXT_HEADER {
        return Err(BadBlob(format!("{what} at {at} is cut short")));
    }
    let size = usize::from(u16_at(b, 0));
    if size < EXT_HEADER || size > b.len() {
        return Err(BadBlob(format!("{what} at {at} has size {size}")));
    }
    Ok((
        Ext {
            name: cstr(&b[2..2 + NAME_LEN]),
            rev: b[31],
            data: b[EXT_HEADER..size].to_vec(),
        },
        size,
    ))
}

/// Every entry of `blob`, in order. O(blob size).
pub fn parse(family: Family, blob: &[u8]) -> Result<Vec<Entry>, BadBlob> {
    let l = Layout::of(family);
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < blob.len() {
        let rest = &blob[off..];
        if rest.len() < l.size {
            return Err(BadBlob(format!("entry at {off} is cut short")));
        }
        let t_off = usize::from(u16_at(rest, l.target_offset));
        let next = usize::from(u16_at(rest, l.target_offset + 2));
        if t_off < l.size || next > rest.len() || t_off + EXT_HEADER > next {
            return Err(BadBlob(format!(
                "entry at {off}: target at {t_off}, next at {next}"
            )));
        }
        let a = l.alen;
        let ip = IpPart {
            src: arr16(&rest[0..a]),
            dst: arr16(&rest[a..2 * a]),
            smsk: arr16(&rest[2 * a..3 * a]),
            dmsk: arr16(&rest[3 * a..4 * a]),
            iniface: arr16(&rest[l.iface..l.iface + 16]),
            outiface: arr16(&rest[l.iface + 16..l.iface + 32]),
            iniface_mask: arr16(&rest[l.iface + 32..l.iface + 48]),
            outiface_mask: arr16(&rest[l.iface + 48..l.iface + 64]),
            proto: u16_at(rest, l.proto),
            tos: if family == Family::Ipv6 { rest[130] } else { 0 },
            flags: rest[l.flags],
            invflags: rest[l.invflags],
        };
        let mut matches = Vec::new();
        let mut m = l.size;
        while m < t_off {
            let (e, size) = ext_at(&rest[m..t_off], "match", (off + m) as u32)?;
            matches.push(e);
            m += size;
        }
        let (target, _) = ext_at(&rest[t_off..next], "target", (off + t_off) as u32)?;
        out.push(Entry {
            offset: off as u32,
            size: next as u32,
            ip,
            counters: (u64_at(rest, l.counters), u64_at(rest, l.counters + 8)),
            matches,
            target,
        });
        off += next;
    }
    Ok(out)
}

/// Blob building, for `IPT_SO_SET_REPLACE` and for tests.
pub struct Writer {
    family: Family,
    pub blob: Vec<u8>,
}

impl Writer {
    pub fn new(family: Family) -> Writer {
        Writer {
            family,
            blob: Vec::new(),
        }
    }

    /// Append an entry with address part `ip`, `matches` and `target`;
    /// returns its offset. Each ext's data is padded to 8 bytes here.
    pub fn push(&mut self, ip: &IpPart, matches: &[Ext], target: &Ext) -> u32 {
        let l = Layout::of(self.family);
        let at = self.blob.len();
        let mut e = vec![0u8; l.size];
        let a = l.alen;
        e[0..a].copy_from_slice(&ip.src[..a]);
        e[a..2 * a].copy_from_slice(&ip.dst[..a]);
        e[2 * a..3 * a].copy_from_slice(&ip.smsk[..a]);
        e[3 * a..4 * a].copy_from_slice(&ip.dmsk[..a]);
        for (k, f) in [
            &ip.iniface,
            &ip.outiface,
            &ip.iniface_mask,
            &ip.outiface_mask,
        ]
        .into_iter()
        .enumerate()
        {
            e[l.iface + 16 * k..l.iface + 16 * (k + 1)].copy_from_slice(f);
        }
        e[l.proto..l.proto + 2].copy_from_slice(&ip.proto.to_ne_bytes());
        if self.family == Family::Ipv6 {
            e[130] = ip.tos;
        }
        e[l.flags] = ip.flags;
        e[l.invflags] = ip.invflags;
        for m in matches {
            ext_bytes(&mut e, m);
        }
        let t_off = e.len();
        ext_bytes(&mut e, target);
        let next = e.len();
        e[l.target_offset..l.target_offset + 2].copy_from_slice(&(t_off as u16).to_ne_bytes());
        e[l.target_offset + 2..l.target_offset + 4].copy_from_slice(&(next as u16).to_ne_bytes());
        self.blob.extend_from_slice(&e);
        at as u32
    }

    /// The size the next entry of `matches` and `target` will take.
    pub fn entry_size(&self, matches: &[Ext], target: &Ext) -> u32 {
        let ext = |x: &Ext| EXT_HEADER + align8(x.data.len());
        (Layout::of(self.family).size + matches.iter().map(ext).sum::<usize>() + ext(target)) as u32
    }
}

pub const fn align8(n: usize) -> usize {
    (n + 7) & !7
}

fn ext_bytes(e: &mut Vec<u8>, x: &Ext) {
    let size = EXT_HEADER + align8(x.data.len());
    let at = e.len();
    e.resize(at + size, 0);
    e[at..at + 2].copy_from_slice(&(size as u16).to_ne_bytes());
    let name = x.name.as_bytes();
    let n = name.len().min(NAME_LEN - 1);
    e[at + 2..at + 2 + n].copy_from_slice(&name[..n]);
    e[at + 31] = x.rev;
    e[at + EXT_HEADER..at + EXT_HEADER + x.data.len()].copy_from_slice(&x.data);
}

/// The standard target with `verdict`.
pub fn standard(verdict: i32) -> Ext {
    Ext {
        name: STANDARD.into(),
        rev: 0,
        data: verdict.to_ne_bytes().to_vec(),
    }
}

/// The ERROR target naming `chain` (`errorname[32]`).
pub fn error(chain: &str) -> Ext {
    let mut data = vec![0u8; 32];
    let b = chain.as_bytes();
    let n = b.len().min(31);
    data[..n].copy_from_slice(&b[..n]);
    Ext {
        name: ERROR.into(),
        rev: 0,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_in_both_families() {
        for family in [Family::Ipv4, Family::Ipv6] {
            let mut ip = IpPart {
                proto: 6,
                flags: 0,
                invflags: flags::INV_SRCIP,
                ..IpPart::default()
            };
            ip.src[0] = 10;
            ip.smsk[0] = 0xff;
            ip.iniface[..4].copy_from_slice(b"eth0");
            ip.iniface_mask[..5].fill(0xff);
            let m = Ext {
                name: "tcp".into(),
                rev: 0,
                data: vec![0, 0, 0xff, 0xff, 22, 0, 22, 0, 0, 0, 0, 0],
            };
            let mut w = Writer::new(family);
            let a = w.push(&ip, std::slice::from_ref(&m), &standard(-2));
            let b = w.push(&IpPart::default(), &[], &error("ERROR"));
            assert_eq!(a, 0);
            let size = Layout::of(family).size as u32 + 32 + 16 + 32 + 8;
            assert_eq!(b, size);
            let got = parse(family, &w.blob).unwrap();
            assert_eq!(got.len(), 2);
            assert_eq!(got[0].ip, ip, "{family:?}");
            let mut padded = m.clone();
            padded.data.resize(16, 0);
            assert_eq!(got[0].matches, vec![padded]);
            assert_eq!(got[0].target.verdict(), Some(-2));
            assert_eq!(got[0].size, size);
            assert_eq!(got[1].target.name, ERROR);
            assert_eq!(got[1].target.error_name(), "ERROR");
        }
    }

    #[test]
    fn broken_blobs_are_refused() {
        let mut w = Writer::new(Family::Ipv4);
        w.push(&IpPart::default(), &[], &standard(-2));
        let good = w.blob.clone();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..100].to_vec(), "cut short"),
            (
                {
                    let mut b = good.clone();
                    b[90..92].copy_from_slice(&200u16.to_ne_bytes());
                    b
                },
                "next at 200",
            ),
            (
                {
                    let mut b = good.clone();
                    b[112..114].copy_from_slice(&8u16.to_ne_bytes());
                    b
                },
                "has size 8",
            ),
        ];
        for (blob, want) in cases {
            let e = parse(Family::Ipv4, &blob).unwrap_err();
            assert!(e.0.contains(want), "{e} / {want}");
        }
    }
}
