//! `-m sctp`: ports and chunk types (iptables' libxt_sctp).

use super::tcp::parse_ports;
use crate::error::{Error, Result};
use crate::ext::{fmt_port, require_proto, Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use std::fmt::Write;

/// Chunk names: (name, chunk type, flag letters from bit 7 down to bit 0).
const CHUNKS: &[(&str, u8, &[u8; 8])] = &[
    ("DATA", 0, b"----IUBE"),
    ("INIT", 1, b"--------"),
    ("INIT_ACK", 2, b"--------"),
    ("SACK", 3, b"--------"),
    ("HEARTBEAT", 4, b"--------"),
    ("HEARTBEAT_ACK", 5, b"--------"),
    ("ABORT", 6, b"-------T"),
    ("SHUTDOWN", 7, b"--------"),
    ("SHUTDOWN_ACK", 8, b"--------"),
    ("ERROR", 9, b"--------"),
    ("COOKIE_ECHO", 10, b"--------"),
    ("COOKIE_ACK", 11, b"--------"),
    ("ECN_ECNE", 12, b"--------"),
    ("ECN_CWR", 13, b"--------"),
    ("SHUTDOWN_COMPLETE", 14, b"-------T"),
    ("I_DATA", 64, b"----IUBE"),
    ("RE_CONFIG", 130, b"--------"),
    ("PAD", 132, b"--------"),
    ("ASCONF", 193, b"--------"),
    ("ASCONF_ACK", 128, b"--------"),
    ("FORWARD_TSN", 192, b"--------"),
    ("I_FORWARD_TSN", 194, b"--------"),
];

/// How many chunk entries may carry flags (XT_NUM_SCTP_FLAGS).
const MAX_FLAG_ENTRIES: usize = 4;

/// `--chunk-types` match modes (kernel values).
pub const MATCH_ANY: u8 = 1;
pub const MATCH_ALL: u8 = 2;
pub const MATCH_ONLY: u8 = 4;

/// Flag condition on a chunk. Like iptables, `key` is the position of the
/// chunk's name in the name table (which equals the chunk type only for types
/// 0..=14; iptables stores and prints it that way).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkFlags {
    pub key: u8,
    pub flag: u8,
    pub mask: u8,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chunks {
    pub mode: u8,
    /// All chunk types (`ALL`): the kernel map is fully set.
    pub all: bool,
    /// Chunk types 0..=255 as a bit map (when not `all`).
    pub map: [u64; 4],
    /// Sorted by key, at most one entry per key.
    pub flags: Vec<ChunkFlags>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sctp {
    pub spts: Option<(u16, u16)>,
    pub dpts: Option<(u16, u16)>,
    pub chunks: Option<Chunks>,
    pub inv_sport: bool,
    pub inv_dport: bool,
    pub inv_chunks: bool,
}

const SPORT: u8 = 0;
const DPORT: u8 = 1;
const CHUNK: u8 = 2;

fn parse_chunks(mode: &str, list: &str) -> Result<Chunks> {
    let mode = if mode.eq_ignore_ascii_case("ANY") {
        MATCH_ANY
    } else if mode.eq_ignore_ascii_case("ALL") {
        MATCH_ALL
    } else if mode.eq_ignore_ascii_case("ONLY") {
        MATCH_ONLY
    } else {
        return Err(Error::param(
            "Match type has to be one of \"ALL\", \"ANY\" or \"ONLY\"",
        ));
    };
    let mut ch = Chunks {
        mode,
        all: false,
        map: [0; 4],
        flags: Vec::new(),
    };
    if list.eq_ignore_ascii_case("ALL") {
        ch.all = true;
        return Ok(ch);
    }
    if list.eq_ignore_ascii_case("NONE") {
        return Ok(ch);
    }
    for tok in list.split(',').filter(|t| !t.is_empty()) {
        let (name, flags) = match tok.split_once(':') {
            Some((n, f)) => (n, Some(f)),
            None => (tok, None),
        };
        let Some(idx) = CHUNKS.iter().position(|c| c.0.eq_ignore_ascii_case(name)) else {
            return Err(Error::param(format!("Unknown sctp chunk `{name}'")));
        };
        let (_, typ, letters) = CHUNKS[idx];
        ch.map[typ as usize / 64] |= 1u64 << (typ % 64);
        for b in flags.unwrap_or("").bytes() {
            let Some(pos) = letters.iter().position(|&l| l == b.to_ascii_uppercase()) else {
                return Err(Error::param(format!("Invalid flags for chunk type {idx}")));
            };
            let bit = 1u8 << (7 - pos);
            let key = idx as u8;
            let entry = match ch.flags.iter().position(|f| f.key == key) {
                Some(i) => &mut ch.flags[i],
                None => {
                    if ch.flags.len() == MAX_FLAG_ENTRIES {
                        return Err(Error::param(
                            "Number of chunk types with flags exceeds currently allowed limit. Increasing this limit involves changing IPT_NUM_SCTP_FLAGS and recompiling both the kernel space and user space modules",
                        ));
                    }
                    ch.flags.push(ChunkFlags {
                        key,
                        flag: 0,
                        mask: 0,
                    });
                    ch.flags.last_mut().expect("just pushed")
                }
            };
            entry.mask |= bit;
            if b.is_ascii_uppercase() {
                entry.flag |= bit;
            }
        }
    }
    ch.flags.sort();
    Ok(ch)
}

/// iptables' print_chunks: ` any|all|only` then ` NONE`, ` ALL` or the list.
fn print_chunks(out: &mut String, ch: &Chunks, numeric: bool) {
    out.push_str(match ch.mode {
        MATCH_ANY => " any",
        MATCH_ALL => " all",
        _ => " only",
    });
    if ch.all {
        out.push_str(" ALL");
        return;
    }
    if ch.map == [0; 4] {
        out.push_str(" NONE");
        return;
    }
    let mut first = true;
    for t in 0..=255u8 {
        if ch.map[t as usize / 64] & (1u64 << (t % 64)) == 0 {
            continue;
        }
        out.push(if first { ' ' } else { ',' });
        first = false;
        if numeric {
            let _ = write!(out, "0x{t:04X}");
        } else {
            for c in CHUNKS.iter().filter(|c| c.1 == t) {
                out.push_str(c.0);
            }
        }
        for f in ch.flags.iter().filter(|f| f.key == t) {
            if f.mask != 0 {
                out.push(':');
            }
            let letters = CHUNKS[f.key as usize].2;
            for i in (0..8).rev() {
                if f.mask & (1 << i) == 0 {
                    continue;
                }
                let l = letters[7 - i] as char;
                out.push(if f.flag & (1 << i) != 0 {
                    l
                } else {
                    l.to_ascii_lowercase()
                });
            }
        }
    }
}

fn list_ports(out: &mut String, label: &str, r: (u16, u16), inv: bool, numeric: bool) {
    if r.0 == 0 && r.1 == 0xFFFF && !inv {
        return;
    }
    let inv = if inv { "!" } else { "" };
    let _ = write!(out, " {label}");
    if r.0 == r.1 {
        let _ = write!(out, ":{inv}");
        fmt_port(out, r.0, "sctp", numeric);
    } else {
        let _ = write!(out, "s:{inv}");
        fmt_port(out, r.0, "sctp", numeric);
        out.push(':');
        fmt_port(out, r.1, "sctp", numeric);
    }
}

fn save_ports(out: &mut String, opt: &str, r: (u16, u16), inv: bool) {
    if inv {
        out.push_str(" !");
    }
    if r.0 != r.1 {
        let _ = write!(out, " --{opt} {}:{}", r.0, r.1);
    } else {
        let _ = write!(out, " --{opt} {}", r.0);
    }
}

impl Ext for Sctp {
    const NAME: &'static str = "sctp";
    // All `multi` so that sctp's own "Only one ..." messages are given.
    const OPTS: &'static [OptDef] = &[
        OptDef::new("source-port", SPORT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("sport", SPORT, Arg::Required).inv().multi(),
        OptDef::new("destination-port", DPORT, Arg::Required)
            .inv()
            .multi(),
        OptDef::new("dport", DPORT, Arg::Required).inv().multi(),
        OptDef::new("chunk-types", CHUNK, Arg::Required)
            .inv()
            .multi(),
    ];

    fn new(_: &ParseCtx) -> Self {
        Sctp {
            spts: None,
            dpts: None,
            chunks: None,
            inv_sport: false,
            inv_dport: false,
            inv_chunks: false,
        }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        match c.opt.id {
            SPORT => {
                if self.spts.is_some() {
                    return Err(Error::param("Only one `--source-port' allowed"));
                }
                self.spts = Some(parse_ports(c.arg, "sctp")?);
                self.inv_sport = c.inv;
            }
            DPORT => {
                if self.dpts.is_some() {
                    return Err(Error::param("Only one `--destination-port' allowed"));
                }
                self.dpts = Some(parse_ports(c.arg, "sctp")?);
                self.inv_dport = c.inv;
            }
            _ => {
                if self.chunks.is_some() {
                    return Err(Error::param("Only one `--chunk-types' allowed"));
                }
                let list = match c.rest.peek() {
                    Some(w) if !w.starts_with('-') && !w.starts_with('!') => {
                        c.rest.pos += 1;
                        w
                    }
                    _ => return Err(Error::param("--chunk-types requires two args")),
                };
                self.chunks = Some(parse_chunks(c.arg, list)?);
                self.inv_chunks = c.inv;
            }
        }
        Ok(())
    }

    fn finish(&mut self, _seen: u32, ctx: &ParseCtx) -> Result<()> {
        require_proto("sctp match", ctx, &[132])
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        if let Some(r) = self.spts {
            save_ports(out, "sport", r, self.inv_sport);
        }
        if let Some(r) = self.dpts {
            save_ports(out, "dport", r, self.inv_dport);
        }
        if let Some(ch) = &self.chunks {
            if self.inv_chunks {
                out.push_str(" !");
            }
            out.push_str(" --chunk-types");
            print_chunks(out, ch, false);
        }
    }

    fn list(&self, ctx: &PrintCtx, out: &mut String) {
        out.push_str(" sctp");
        if let Some(r) = self.spts {
            list_ports(out, "spt", r, self.inv_sport, ctx.numeric);
        }
        if let Some(r) = self.dpts {
            list_ports(out, "dpt", r, self.inv_dport, ctx.numeric);
        }
        if let Some(ch) = &self.chunks {
            if self.inv_chunks {
                out.push_str(" !");
            }
            print_chunks(out, ch, ctx.numeric);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::testutil::print_ext;
    use ruleset::Family;

    fn with_chunks(mode: &str, list: &str, inv: bool) -> Sctp {
        Sctp {
            spts: None,
            dpts: None,
            chunks: Some(parse_chunks(mode, list).unwrap()),
            inv_sport: false,
            inv_dport: false,
            inv_chunks: inv,
        }
    }

    #[test]
    fn list_forms() {
        let ports = Sctp {
            spts: Some((80, 80)),
            dpts: Some((1, 1024)),
            chunks: None,
            inv_sport: true,
            inv_dport: false,
            inv_chunks: false,
        };
        let full = Sctp {
            spts: Some((0, 65535)),
            inv_sport: false,
            ..ports.clone()
        };
        let cases: Vec<(Sctp, bool, &str)> = vec![
            (ports.clone(), true, " sctp spt:!80 dpts:1:1024"),
            (full, true, " sctp dpts:1:1024"),
            (
                with_chunks("all", "INIT,DATA:iB", false),
                false,
                " sctp all DATA:iB,INIT",
            ),
            (
                with_chunks("any", "DATA:iB,INIT", true),
                true,
                " sctp ! any 0x0000:iB,0x0001",
            ),
            (with_chunks("only", "none", false), false, " sctp only NONE"),
            (with_chunks("ANY", "all", false), true, " sctp any ALL"),
            (
                with_chunks("all", "ASCONF,ASCONF_ACK,abort:T", false),
                false,
                " sctp all ABORT:T,ASCONF_ACK,ASCONF",
            ),
            // iptables keys flags by the name's table position, so flags on
            // I_DATA (type 64, position 15) are not printed.
            (
                with_chunks("all", "I_DATA:I", false),
                false,
                " sctp all I_DATA",
            ),
        ];
        for (m, numeric, want) in cases {
            let p = print_ext(&m, Family::Ipv4, 132);
            assert_eq!(p.listed(numeric), want);
        }
    }

    #[test]
    fn save_forms() {
        let m = with_chunks("all", "DATA:Ie,SACK", true);
        let p = print_ext(&m, Family::Ipv4, 132);
        assert_eq!(p.save, " ! --chunk-types all DATA:Ie,SACK");
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "some",
                "DATA",
                "Match type has to be one of \"ALL\", \"ANY\" or \"ONLY\"",
            ),
            ("all", "DATA,FOO", "Unknown sctp chunk `FOO'"),
            ("all", "INIT:I", "Invalid flags for chunk type 1"),
            (
                "all",
                "DATA:I,ABORT:T,SHUTDOWN_COMPLETE:T,I_DATA:B,DATA:E,ABORT:t",
                "",
            ),
            ("all", "DATA:I,ABORT:T,SHUTDOWN_COMPLETE:T,I_DATA:B,INIT:-", "Number of chunk types with flags exceeds currently allowed limit. Increasing this limit involves changing IPT_NUM_SCTP_FLAGS and recompiling both the kernel space and user space modules"),
        ];
        for (mode, list, want) in cases {
            let got = parse_chunks(mode, list)
                .err()
                .map(|e| e.msg)
                .unwrap_or_default();
            assert_eq!(got, *want, "{mode} {list}");
        }
        assert_eq!(
            parse_ports("5:4", "sctp").unwrap_err().msg,
            "invalid portrange (min > max)"
        );
        assert_eq!(
            parse_ports("65536", "sctp").unwrap_err().msg,
            "invalid port/service `65536' specified"
        );
    }
}
