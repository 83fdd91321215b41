//! What makes an nftables set one of our ipsets, readable from the kernel
//! alone: the set's userdata says which ipset it is (type and every create
//! option, as `ipset save` prints them, and the slot — ipset's set index,
//! which orders listings) and whether it is the set's home or a copy in a
//! rule table; an element's userdata holds its comment.
//!
//! Set userdata is one nftables comment record (libnftnl's
//! `NFTNL_UDATA_SET_COMMENT`, so `nft list` shows it):
//! `nfkeeper-ipset 1 home 0 hash:ip family inet hashsize 1024 …`. Element
//! userdata is libnftnl's element comment record (type 0, NUL-terminated),
//! or, for a comment too long for a record, the byte 0xff and the comment.

use ipset::data::Data;
use ipset::model::Header;
use ipset::parse::{self, Command, Env};
use ipset::print::text::header_items;

/// The first word of our set userdata text, and its format version.
const MAGIC: &str = "nfkeeper-ipset";
const VERSION: &str = "1";
/// libnftnl's `NFTNL_UDATA_SET_COMMENT`.
const UDATA_SET_COMMENT: u8 = 7;
/// libnftnl's `NFTNL_UDATA_SET_ELEM_COMMENT`.
const UDATA_ELEM_COMMENT: u8 = 0;
/// Marks element userdata that is a bare comment (too long for a record).
const RAW_COMMENT: u8 = 0xff;
/// The kernel's limit on userdata (`NFT_USERDATA_MAXLEN`).
pub const USERDATA_MAX: usize = 256;

/// Which of a set's nftables sets this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The set in the ipset table: always there, written by every command.
    Home,
    /// The copy in a rule table that rules of that table look up.
    Copy,
}

/// What a set's userdata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetMeta {
    pub role: Role,
    pub slot: usize,
    pub header: Header,
}

/// The create options of `h` as words (`hash:ip family inet …`).
pub fn header_words(h: &Header) -> Vec<String> {
    let mut w = vec![h.ty.name().to_string()];
    for (name, v) in header_items(h, false) {
        w.push(name.to_string());
        if let Some(v) = v {
            w.push(v);
        }
    }
    w
}

/// The userdata of a set of ours; `None` when it does not fit the kernel's
/// limit (it always does for ipset's own names and options).
pub fn encode_set(m: &SetMeta) -> Option<Vec<u8>> {
    let role = match m.role {
        Role::Home => "home",
        Role::Copy => "copy",
    };
    let text = format!(
        "{MAGIC} {VERSION} {role} {} {}",
        m.slot,
        header_words(&m.header).join(" ")
    );
    // A record: type, length (with the NUL), the text and its NUL.
    let len = text.len() + 1;
    if len > usize::from(u8::MAX) {
        return None;
    }
    let mut ud = Vec::with_capacity(len + 2);
    ud.push(UDATA_SET_COMMENT);
    ud.push(len as u8);
    ud.extend_from_slice(text.as_bytes());
    ud.push(0);
    Some(ud)
}

/// What set userdata says, if the set is ours.
pub fn decode_set(ud: &[u8]) -> Option<SetMeta> {
    let text = records(ud).find(|(t, _)| *t == UDATA_SET_COMMENT)?.1;
    let text = std::str::from_utf8(text.strip_suffix(&[0]).unwrap_or(text)).ok()?;
    let mut w = text.split(' ');
    if w.next()? != MAGIC || w.next()? != VERSION {
        return None;
    }
    let role = match w.next()? {
        "home" => Role::Home,
        "copy" => Role::Copy,
        _ => return None,
    };
    let slot: usize = w.next()?.parse().ok()?;
    let mut args = vec!["create", "x"];
    args.extend(w);
    let lookup = |_: &str| None;
    let p = parse::parse(&args, None, Env::default(), &lookup).ok()?;
    let Command::Create { ty, data, .. } = p.cmd else {
        return None;
    };
    let header = header_of(ty, &data)?;
    Some(SetMeta { role, slot, header })
}

fn header_of(ty: ipset::types::SetType, d: &Data) -> Option<Header> {
    Header::create(ty, d, d.initval.unwrap_or(0)).ok()
}

/// The TLV records of nftables userdata: (type, value).
fn records(ud: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let t = *ud.get(at)?;
        let len = usize::from(*ud.get(at + 1)?);
        let v = ud.get(at + 2..at + 2 + len)?;
        at += 2 + len;
        Some((t, v))
    })
}

/// The userdata of an element with `comment`.
pub fn encode_comment(comment: &str) -> Vec<u8> {
    let b = comment.as_bytes();
    if b.len() + 3 <= USERDATA_MAX {
        let mut ud = Vec::with_capacity(b.len() + 3);
        ud.push(UDATA_ELEM_COMMENT);
        ud.push((b.len() + 1) as u8);
        ud.extend_from_slice(b);
        ud.push(0);
        ud
    } else {
        let mut ud = Vec::with_capacity(b.len() + 1);
        ud.push(RAW_COMMENT);
        ud.extend_from_slice(&b[..b.len().min(USERDATA_MAX - 1)]);
        ud
    }
}

/// The comment in element userdata, if any.
pub fn decode_comment(ud: &[u8]) -> Option<String> {
    if let Some(raw) = ud.strip_prefix(&[RAW_COMMENT]) {
        return Some(String::from_utf8_lossy(raw).into_owned());
    }
    let v = records(ud).find(|(t, _)| *t == UDATA_ELEM_COMMENT)?.1;
    let v = v.strip_suffix(&[0]).unwrap_or(v);
    Some(String::from_utf8_lossy(v).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipset::exec::{run, Ctx, NoMirror};
    use ipset::model::Store;

    fn header(create: &str) -> Header {
        let mut store = Store::new();
        let mut m = NoMirror;
        let mut ctx = Ctx {
            store: &mut store,
            mirror: &mut m,
            now: 0,
        };
        let w: Vec<&str> = create.split_whitespace().collect();
        let o = run(&mut ctx, &w, None);
        assert_eq!(o.code, 0, "{create}: {}", o.stderr);
        store.get(w[1]).unwrap().header.clone()
    }

    #[test]
    fn headers_round_trip_through_set_userdata() {
        let creates = [
            "create a hash:ip",
            "create a hash:ip family inet6 hashsize 64 maxelem 7 timeout 5 counters comment",
            "create a hash:ip netmask 24 bucketsize 4 initval 0x11223344",
            "create a hash:ip bitmask 255.255.0.255",
            "create a hash:ip,mark markmask 0xff",
            "create a hash:net,iface skbinfo forceadd",
            "create a bitmap:ip range 10.0.0.0/16 netmask 24 timeout 0",
            "create a bitmap:ip,mac range 10.0.0.0-10.0.0.255",
            "create a bitmap:port range 1-1024 counters",
            "create a hash:mac",
            "create a hash:net,port,net family inet6 timeout 2147483",
        ];
        for c in creates {
            let h = header(c);
            for (role, slot) in [(Role::Home, 0), (Role::Copy, 65534)] {
                let m = SetMeta {
                    role,
                    slot,
                    header: h.clone(),
                };
                let ud = encode_set(&m).unwrap();
                assert!(ud.len() <= USERDATA_MAX, "{c}");
                assert_eq!(decode_set(&ud), Some(m), "{c}");
            }
        }
        assert_eq!(decode_set(b"\x07\x05other"), None);
        assert_eq!(decode_set(b""), None);
    }

    #[test]
    fn comments_round_trip_through_element_userdata() {
        let long = "x".repeat(255);
        for c in ["", "a comment", "\"quoted\" text", long.as_str()] {
            let ud = encode_comment(c);
            assert!(ud.len() <= USERDATA_MAX);
            assert_eq!(decode_comment(&ud).as_deref(), Some(c));
        }
        assert_eq!(decode_comment(b"\x01\x01x"), None);
    }
}
