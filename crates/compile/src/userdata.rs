//! Rule userdata: what lets a kernel rule be turned back into its logical
//! rule with no other state — the stable rule id and the canonical rule text
//! (the save form after `-A CHAIN`), plus the `-m comment` text as nftables'
//! own comment so `nft list` shows it.
//!
//! Format: nftnl's userdata TLVs (type u8, length u8, value), so nftables
//! tools read the comment and skip our types. The kernel caps rule userdata
//! at NFT_USERDATA_MAXLEN (256) bytes: a text that does not fit is cut, the
//! cut is marked with `TEXT_CONTINUED` (total text length), and the caller
//! must store the rest elsewhere (see [`Encoded::overflow`]).

use ruleset::RuleId;

/// The kernel's limit on rule userdata (`NFT_USERDATA_MAXLEN`).
pub const MAX: usize = 256;

/// nftnl's rule comment (`NFTNL_UDATA_RULE_COMMENT`): NUL-terminated text.
pub const COMMENT: u8 = 0;
/// nfkeeper: the rule id, u64 big-endian.
pub const ID: u8 = 0xc0;
/// nfkeeper: a chunk of the canonical text (chunks concatenate in order).
pub const TEXT: u8 = 0xc1;
/// nfkeeper: the text continues outside the rule; u32 big-endian total length.
pub const TEXT_CONTINUED: u8 = 0xc2;
/// nfkeeper: this kernel rule is a compiled run (see `crate::runs`); its
/// logical rules are the elements of the named set, each with its own
/// id/text userdata. Value: the key kind (one byte, [`run_key_byte`], with
/// [`RUN_MAP`] set for a verdict map) then the set name.
pub const RUN: u8 = 0xc3;
/// In the key byte of [`RUN`]: the run is a verdict map.
pub const RUN_MAP: u8 = 0x80;
/// nfkeeper: a run's census (see [`catalog::Census`]): its member count
/// and the xor of its member ids, u64 big-endian each.
pub const CENSUS: u8 = 0xc4;

/// Encoded userdata and the part of the text that did not fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub bytes: Vec<u8>,
    /// Text bytes beyond what the userdata holds (empty when it all fits).
    pub overflow: String,
}

/// What [`decode`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    pub id: Option<RuleId>,
    pub text: String,
    /// Total text length when the text continues elsewhere.
    pub continued: Option<u32>,
    pub comment: Option<String>,
    /// A run rule: (key kind byte, set name).
    pub run: Option<(u8, String)>,
    /// Some `TEXT` was present (a run rule's shape may be empty text).
    pub has_text: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    Truncated,
    BadUtf8,
}

fn tlv(out: &mut Vec<u8>, ty: u8, value: &[u8]) {
    debug_assert!(value.len() <= 255);
    out.push(ty);
    out.push(value.len() as u8);
    out.extend_from_slice(value);
}

/// Encode id, text and (if it still fits) the comment. The id and the first
/// text bytes always fit; the comment is left out when the text needs the
/// room (the text holds the comment anyway).
pub fn encode(id: RuleId, text: &str, comment: Option<&str>) -> Encoded {
    let mut out = Vec::with_capacity(MAX);
    tlv(&mut out, ID, &id.0.to_be_bytes());
    let bytes = text.as_bytes();
    // Room for the whole text: one 2-byte header per 255-byte chunk.
    let chunks = bytes.len().div_ceil(255).max(1);
    let whole = out.len() + bytes.len() + 2 * chunks;
    let cut = if whole <= MAX {
        bytes.len()
    } else {
        // Leave room for the continuation marker (2 + 4), then fill.
        let room = MAX - out.len() - 6;
        let mut n = room - 2 * room.div_ceil(257);
        while n > 0 && !text.is_char_boundary(n) {
            n -= 1;
        }
        n
    };
    for chunk in bytes[..cut].chunks(255) {
        tlv(&mut out, TEXT, chunk);
    }
    if cut < bytes.len() {
        tlv(
            &mut out,
            TEXT_CONTINUED,
            &(bytes.len() as u32).to_be_bytes(),
        );
    } else if let Some(c) = comment {
        let need = c.len() + 1;
        if need <= 255 && out.len() + 2 + need <= MAX {
            let mut v = Vec::with_capacity(need);
            v.extend_from_slice(c.as_bytes());
            v.push(0);
            tlv(&mut out, COMMENT, &v);
        }
    }
    debug_assert!(out.len() <= MAX);
    Encoded {
        bytes: out,
        overflow: text[cut..].to_string(),
    }
}

/// Userdata of a run rule: the key kind and set name, and — when it fits
/// in the kernel's 256 bytes — the shape every member shares as canonical
/// text (the rule without its key; without its target for a verdict map),
/// so an append can join the run without reading its members.
pub fn encode_run(key: crate::runs::KeyKind, map: bool, set: &str, shape: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + set.len());
    v.push(run_key_byte(key) | if map { RUN_MAP } else { 0 });
    v.extend_from_slice(set.as_bytes());
    let mut out = Vec::with_capacity(MAX);
    tlv(&mut out, RUN, &v);
    let chunks = shape.len().div_ceil(255).max(1);
    if out.len() + shape.len() + 2 * chunks <= MAX {
        for c in shape.as_bytes().chunks(255) {
            tlv(&mut out, TEXT, c);
        }
        if shape.is_empty() {
            tlv(&mut out, TEXT, &[]);
        }
    }
    out
}

/// The byte a key kind is stored as in [`RUN`].
pub fn run_key_byte(k: crate::runs::KeyKind) -> u8 {
    use crate::runs::KeyKind::*;
    match k {
        Src => 1,
        Dst => 2,
        Dport => 3,
        Iif => 4,
        SrcDport => 5,
        DstDport => 6,
        SrcDst => 7,
        SrcNet => 8,
        DstNet => 9,
        DportRange => 10,
        Numgen => 11,
        Dports => 12,
    }
}

/// The key kind of a [`RUN`] byte and whether the run is a verdict map.
pub fn run_key(b: u8) -> Option<(crate::runs::KeyKind, bool)> {
    use crate::runs::KeyKind::*;
    let map = b & RUN_MAP != 0;
    Some((
        match b & !RUN_MAP {
            1 => Src,
            2 => Dst,
            3 => Dport,
            4 => Iif,
            5 => SrcDport,
            6 => DstDport,
            7 => SrcDst,
            8 => SrcNet,
            9 => DstNet,
            10 => DportRange,
            11 => Numgen,
            12 => Dports,
            _ => return None,
        },
        map,
    ))
}

/// Decode userdata written by [`encode`] (unknown TLV types are skipped, so
/// userdata from other tools decodes to no id and no text).
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let mut d = Decoded::default();
    let mut text = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if i + 2 > bytes.len() {
            return Err(DecodeError::Truncated);
        }
        let (ty, len) = (bytes[i], bytes[i + 1] as usize);
        let v = bytes
            .get(i + 2..i + 2 + len)
            .ok_or(DecodeError::Truncated)?;
        match ty {
            ID if len == 8 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(v);
                d.id = Some(RuleId(u64::from_be_bytes(b)));
            }
            TEXT => {
                text.extend_from_slice(v);
                d.has_text = true;
            }
            RUN if len >= 1 => {
                let name = String::from_utf8(v[1..].to_vec()).map_err(|_| DecodeError::BadUtf8)?;
                d.run = Some((v[0], name));
            }
            TEXT_CONTINUED if len == 4 => {
                d.continued = Some(u32::from_be_bytes([v[0], v[1], v[2], v[3]]));
            }
            COMMENT => {
                let s = v.strip_suffix(&[0]).unwrap_or(v);
                d.comment = Some(String::from_utf8(s.to_vec()).map_err(|_| DecodeError::BadUtf8)?);
            }
            _ => {}
        }
        i += 2 + len;
    }
    d.text = String::from_utf8(text).map_err(|_| DecodeError::BadUtf8)?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_limits() {
        let long = "x".repeat(600);
        let multi = "é".repeat(200);
        let cases: &[(&str, Option<&str>, bool)] = &[
            (" -s 10.0.0.1/32 -j ACCEPT", None, false),
            (" -m comment --comment hi -j ACCEPT", Some("hi"), false),
            (&long, Some("c"), true),
            (&multi, None, true),
            ("", None, false),
        ];
        for (text, comment, overflows) in cases {
            let e = encode(RuleId(42), text, *comment);
            assert!(e.bytes.len() <= MAX, "{} bytes", e.bytes.len());
            assert_eq!(!e.overflow.is_empty(), *overflows, "{text}");
            let d = decode(&e.bytes).unwrap();
            assert_eq!(d.id, Some(RuleId(42)));
            assert_eq!(format!("{}{}", d.text, e.overflow), *text);
            assert_eq!(d.continued.is_some(), *overflows);
            if !overflows {
                assert_eq!(d.comment.as_deref(), *comment);
            }
        }
    }

    #[test]
    fn foreign_and_broken_userdata() {
        // nft's own comment only.
        let d = decode(&[0, 3, b'h', b'i', 0]).unwrap();
        assert_eq!((d.id, d.comment.as_deref()), (None, Some("hi")));
        assert_eq!(decode(&[ID, 8, 1]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[TEXT]), Err(DecodeError::Truncated));
        assert_eq!(decode(&[TEXT, 1, 0xff]), Err(DecodeError::BadUtf8));
    }

    #[test]
    fn run_rules_name_their_set_and_key() {
        for k in crate::runs::KeyKind::ALL {
            for map in [false, true] {
                let d = decode(&encode_run(k, map, "__nfk_run7", " -j ACCEPT")).unwrap();
                let (b, name) = d.run.unwrap();
                assert_eq!((run_key(b), name.as_str()), (Some((k, map)), "__nfk_run7"));
                assert_eq!((d.id, d.text.as_str()), (None, " -j ACCEPT"));
            }
        }
        // A shape too long for the userdata is left out (appends then do
        // not join the run).
        let long = "x".repeat(300);
        let e = encode_run(crate::runs::KeyKind::Src, false, "__nfk_run7", &long);
        assert!(e.len() <= MAX);
        let d = decode(&e).unwrap();
        assert_eq!((d.text.as_str(), d.has_text), ("", false));
        // An empty shape (a map run of bare `-s ADDR -j VERDICT` rules) is
        // there, and empty.
        let d = decode(&encode_run(
            crate::runs::KeyKind::Src,
            true,
            "__nfk_run7",
            "",
        ))
        .unwrap();
        assert_eq!((d.text.as_str(), d.has_text), ("", true));
        assert_eq!(run_key(0), None);
    }
}

/// Overflow text lives in a named set of our table: one element per chunk,
/// keyed by (rule id u64, chunk number u32) big-endian, the chunk in the
/// element's userdata as one `TEXT` TLV. Element adds cost microseconds at
/// any set size, so long rules stay cheap.
pub mod catalog {
    use super::TEXT;
    use ruleset::RuleId;

    pub const SET: &str = "__nfk_text";
    pub const KEY_LEN: u32 = 12;
    /// nftables' "integer" data type, so `nft list` can print the set.
    pub const KEY_TYPE: u32 = 4;
    /// Text bytes per element (TLV header + chunk within 256 bytes).
    const CHUNK: usize = 250;

    pub fn key(id: RuleId, chunk: u32) -> Vec<u8> {
        let mut k = id.0.to_be_bytes().to_vec();
        k.extend_from_slice(&chunk.to_be_bytes());
        k
    }

    /// The overflow text cut into chunks at character boundaries.
    pub fn chunks(overflow: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = overflow;
        while !rest.is_empty() {
            let mut n = rest.len().min(CHUNK);
            while !rest.is_char_boundary(n) {
                n -= 1;
            }
            out.push(&rest[..n]);
            rest = &rest[n..];
        }
        out
    }

    pub fn value(chunk: &str) -> Vec<u8> {
        let mut v = Vec::with_capacity(chunk.len() + 2);
        v.push(TEXT);
        v.push(chunk.len() as u8);
        v.extend_from_slice(chunk.as_bytes());
        v
    }

    /// The catalog chunk number of a run's census element; text chunks
    /// never get this far.
    pub const CENSUS_CHUNK: u32 = u32::MAX;

    /// What a run holds, recorded beside it so that a member removed (or
    /// added) behind nfkeeper's back shows: the elements no longer add up.
    /// Kept in the catalog set under the run's id (its set name's number)
    /// and chunk [`CENSUS_CHUNK`].
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Census {
        pub count: u64,
        pub xor: u64,
    }

    impl Census {
        pub fn of(ids: impl IntoIterator<Item = RuleId>) -> Census {
            let mut c = Census::default();
            for id in ids {
                c.add(id);
            }
            c
        }

        pub fn add(&mut self, id: RuleId) {
            self.count += 1;
            self.xor ^= id.0;
        }

        pub fn remove(&mut self, id: RuleId) {
            self.count = self.count.saturating_sub(1);
            self.xor ^= id.0;
        }
    }

    pub fn census_key(run_id: u64) -> Vec<u8> {
        key(RuleId(run_id), CENSUS_CHUNK)
    }

    pub fn census_value(c: Census) -> Vec<u8> {
        let mut v = vec![super::CENSUS, 16];
        v.extend_from_slice(&c.count.to_be_bytes());
        v.extend_from_slice(&c.xor.to_be_bytes());
        v
    }

    /// (run id, census) of a catalog element that is a census.
    pub fn parse_census(key: &[u8], userdata: &[u8]) -> Option<(u64, Census)> {
        if key.len() != 12 || userdata.len() != 18 || userdata[..2] != [super::CENSUS, 16] {
            return None;
        }
        let id = u64::from_be_bytes(key[..8].try_into().ok()?);
        (u32::from_be_bytes(key[8..].try_into().ok()?) == CENSUS_CHUNK).then_some(())?;
        let count = u64::from_be_bytes(userdata[2..10].try_into().ok()?);
        let xor = u64::from_be_bytes(userdata[10..].try_into().ok()?);
        Some((id, Census { count, xor }))
    }

    /// (rule id, chunk number, text) of a catalog element.
    pub fn parse(key: &[u8], userdata: &[u8]) -> Option<(RuleId, u32, String)> {
        if key.len() != 12 || userdata.len() < 2 || userdata[0] != TEXT {
            return None;
        }
        let id = u64::from_be_bytes(key[..8].try_into().ok()?);
        let chunk = u32::from_be_bytes(key[8..].try_into().ok()?);
        let text = std::str::from_utf8(userdata.get(2..2 + userdata[1] as usize)?).ok()?;
        Some((RuleId(id), chunk, text.to_string()))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn chunks_round_trip() {
            let s = "ab€".repeat(200);
            let parts = chunks(&s);
            assert!(parts.iter().all(|p| p.len() <= CHUNK));
            assert_eq!(parts.concat(), s);
            for (i, p) in parts.iter().enumerate() {
                let got = parse(&key(RuleId(7), i as u32), &value(p)).unwrap();
                assert_eq!(got, (RuleId(7), i as u32, p.to_string()));
            }
            assert!(chunks("").is_empty());
        }
    }
}
