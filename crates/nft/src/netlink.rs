//! Netlink framing: `nlmsghdr` + `nfgenmsg` headers, the attribute (TLV)
//! writer and a parser that never panics.
//!
//! Byte order: netlink headers (`nlmsghdr`, `nlattr`) are host order (this
//! crate targets little- and big-endian Linux alike via `to_ne_bytes`);
//! nf_tables attribute *payloads* (u16/u32/u64 numbers) are big-endian
//! (network order), except where a helper says otherwise. `nfgenmsg.res_id`
//! is big-endian. All lengths are bytes; every attribute and message starts on
//! a 4-byte boundary.

use crate::Error;

/// `NETLINK_NETFILTER` protocol number.
pub const NETLINK_NETFILTER: i32 = 12;
/// Netlink header flags (linux/netlink.h).
pub const NLM_F_REQUEST: u16 = 0x01;
pub const NLM_F_MULTI: u16 = 0x02;
pub const NLM_F_ACK: u16 = 0x04;
pub const NLM_F_ECHO: u16 = 0x08;
pub const NLM_F_DUMP_INTR: u16 = 0x10;
pub const NLM_F_DUMP: u16 = 0x300;
pub const NLM_F_REPLACE: u16 = 0x100;
/// On delete requests: fail instead of deleting what the object contains.
pub const NLM_F_NONREC: u16 = 0x100;
pub const NLM_F_EXCL: u16 = 0x200;
pub const NLM_F_CREATE: u16 = 0x400;
pub const NLM_F_APPEND: u16 = 0x800;
/// Set in an error message's flags when extended-ACK TLVs follow.
pub const NLM_F_ACK_TLVS: u16 = 0x200;
pub const NLMSG_NOOP: u16 = 0x1;
pub const NLMSG_ERROR: u16 = 0x2;
pub const NLMSG_DONE: u16 = 0x3;
/// Extended ACK attribute: the error string.
pub const NLMSGERR_ATTR_MSG: u16 = 1;
pub const NLA_F_NESTED: u16 = 1 << 15;
pub const NLA_F_NET_BYTEORDER: u16 = 1 << 14;
const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | NLA_F_NET_BYTEORDER);

/// nfnetlink subsystem id of nf_tables (`res_id` of batch messages).
pub const NFNL_SUBSYS_NFTABLES: u16 = 10;
pub const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
pub const NFNL_MSG_BATCH_END: u16 = 0x11;
/// Batch-begin attribute: the expected ruleset generation (u32, big-endian).
pub const NFNL_BATCH_GENID: u16 = 1;
pub const NFNETLINK_V0: u8 = 0;

/// Size of `struct nlmsghdr`.
pub const NLMSG_HDRLEN: usize = 16;
/// Size of `struct nfgenmsg`.
pub const NFGENMSG_LEN: usize = 4;
/// Size of `struct nlattr`.
pub const NLA_HDRLEN: usize = 4;

/// Rounds `n` up to the netlink alignment (4 bytes).
pub const fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// The full netlink message type of an nf_tables message (`NFT_MSG_*`).
pub const fn nft_type(msg: u16) -> u16 {
    (NFNL_SUBSYS_NFTABLES << 8) | msg
}

/// Appends messages and attributes to a caller-owned byte buffer.
///
/// The writer borrows the buffer; lengths of open messages and nests are
/// patched when they are closed, so a caller must pair every `begin_*` with
/// its `end_*` (unpaired begins leave a zero length the kernel rejects).
pub struct Writer<'a> {
    pub buf: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        Writer { buf }
    }

    /// Starts a message with `nlmsghdr` + `nfgenmsg`; returns its start
    /// offset for [`Writer::end_msg`]. `res_id` is written big-endian.
    pub fn begin_msg(&mut self, ty: u16, flags: u16, seq: u32, family: u8, res_id: u16) -> usize {
        let start = self.buf.len();
        self.buf.extend_from_slice(&0u32.to_ne_bytes()); // length, patched
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(&flags.to_ne_bytes());
        self.buf.extend_from_slice(&seq.to_ne_bytes());
        self.buf.extend_from_slice(&0u32.to_ne_bytes()); // port id: kernel
        self.buf.push(family);
        self.buf.push(NFNETLINK_V0);
        self.buf.extend_from_slice(&res_id.to_be_bytes());
        start
    }

    /// Closes the message opened at `start` (patches `nlmsg_len`).
    pub fn end_msg(&mut self, start: usize) {
        let len = (self.buf.len() - start) as u32;
        self.buf[start..start + 4].copy_from_slice(&len.to_ne_bytes());
    }

    /// Appends one attribute with a raw payload, padded to 4 bytes.
    pub fn put(&mut self, ty: u16, payload: &[u8]) {
        let len = (NLA_HDRLEN + payload.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(payload);
        self.pad();
    }

    fn pad(&mut self) {
        let n = align(self.buf.len()) - self.buf.len();
        self.buf.extend_from_slice(&[0u8; 3][..n]);
    }

    pub fn put_u8(&mut self, ty: u16, v: u8) {
        self.put(ty, &[v]);
    }
    /// Big-endian u16.
    pub fn put_be16(&mut self, ty: u16, v: u16) {
        self.put(ty, &v.to_be_bytes());
    }
    /// Big-endian u32.
    pub fn put_be32(&mut self, ty: u16, v: u32) {
        self.put(ty, &v.to_be_bytes());
    }
    /// Big-endian u64.
    pub fn put_be64(&mut self, ty: u16, v: u64) {
        self.put(ty, &v.to_be_bytes());
    }
    /// NUL-terminated string (NLA_STRING as nf_tables expects it).
    pub fn put_str(&mut self, ty: u16, s: &str) {
        let len = (NLA_HDRLEN + s.len() + 1) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        self.pad();
    }

    /// Opens a nested attribute (type gets `NLA_F_NESTED`); returns the
    /// offset for [`Writer::end_nest`].
    pub fn begin_nest(&mut self, ty: u16) -> usize {
        let start = self.buf.len();
        self.buf.extend_from_slice(&0u16.to_ne_bytes());
        self.buf
            .extend_from_slice(&(ty | NLA_F_NESTED).to_ne_bytes());
        start
    }

    /// Current length of the nest opened at `start`, bytes.
    pub fn nest_len(&self, start: usize) -> usize {
        self.buf.len() - start
    }

    /// Closes the nest opened at `start` (patches `nla_len`) and pads to
    /// the next 4-byte boundary, outside the nest's length as for any
    /// attribute. A nest of attributes is aligned already; one holding raw
    /// bytes of any length (an unknown expression's data, kept as it came)
    /// would otherwise shift every attribute after it.
    ///
    /// Panics if the nest exceeds 65535 bytes: `nla_len` is 16 bits, and a
    /// wrapped length would make the kernel misparse the message (this is
    /// the ENOENT seen when large element lists are sent in one message).
    /// Callers split big lists, as [`crate::Batch`] does for set elements.
    pub fn end_nest(&mut self, start: usize) {
        let len = self.nest_len(start);
        assert!(
            len <= u16::MAX as usize,
            "netlink attribute nest of {len} bytes exceeds 65535"
        );
        let len = len as u16;
        self.buf[start..start + 2].copy_from_slice(&len.to_ne_bytes());
        self.pad();
    }
}

/// One parsed attribute; `payload` excludes header and padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr<'a> {
    /// Type with the NESTED/BYTEORDER flag bits removed.
    pub ty: u16,
    pub payload: &'a [u8],
}

impl<'a> Attr<'a> {
    pub fn u8(&self) -> Result<u8, Error> {
        match self.payload {
            [b] => Ok(*b),
            _ => Err(Error::BadAttr(self.ty)),
        }
    }
    /// Big-endian u16.
    pub fn be16(&self) -> Result<u16, Error> {
        let b: [u8; 2] = self
            .payload
            .try_into()
            .map_err(|_| Error::BadAttr(self.ty))?;
        Ok(u16::from_be_bytes(b))
    }
    /// Big-endian u32.
    pub fn be32(&self) -> Result<u32, Error> {
        let b: [u8; 4] = self
            .payload
            .try_into()
            .map_err(|_| Error::BadAttr(self.ty))?;
        Ok(u32::from_be_bytes(b))
    }
    /// Big-endian u64.
    pub fn be64(&self) -> Result<u64, Error> {
        let b: [u8; 8] = self
            .payload
            .try_into()
            .map_err(|_| Error::BadAttr(self.ty))?;
        Ok(u64::from_be_bytes(b))
    }
    /// A string, without its trailing NUL(s); must be UTF-8.
    pub fn str(&self) -> Result<&'a str, Error> {
        let end = self
            .payload
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.payload.len());
        std::str::from_utf8(&self.payload[..end]).map_err(|_| Error::BadAttr(self.ty))
    }
    /// Iterates the attributes nested in this one.
    pub fn nested(&self) -> Attrs<'a> {
        Attrs::new(self.payload)
    }
}

/// Iterator over a run of attributes. Yields `Err` once on malformed input
/// and then stops.
#[derive(Clone, Debug)]
pub struct Attrs<'a> {
    rest: &'a [u8],
}

impl<'a> Attrs<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Attrs { rest: buf }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>, Error>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        if self.rest.len() < NLA_HDRLEN {
            self.rest = &[];
            return Some(Err(Error::Truncated));
        }
        let len = u16::from_ne_bytes([self.rest[0], self.rest[1]]) as usize;
        let ty = u16::from_ne_bytes([self.rest[2], self.rest[3]]) & NLA_TYPE_MASK;
        if len < NLA_HDRLEN || len > self.rest.len() {
            self.rest = &[];
            return Some(Err(Error::Truncated));
        }
        let payload = &self.rest[NLA_HDRLEN..len];
        self.rest = &self.rest[align(len).min(self.rest.len())..];
        Some(Ok(Attr { ty, payload }))
    }
}

/// One netlink message; `payload` follows `nlmsghdr` (for nf_tables: the
/// `nfgenmsg` and then attributes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg<'a> {
    pub ty: u16,
    pub flags: u16,
    pub seq: u32,
    pub pid: u32,
    pub payload: &'a [u8],
}

/// The `nfgenmsg` of an nf_tables message plus its attributes.
#[derive(Clone, Debug)]
pub struct NfMsg<'a> {
    pub family: u8,
    pub version: u8,
    /// `res_id`, converted from big-endian.
    pub res_id: u16,
    pub attrs: Attrs<'a>,
}

impl<'a> Msg<'a> {
    /// Splits an nf_tables payload into `nfgenmsg` and attributes.
    pub fn nf(&self) -> Result<NfMsg<'a>, Error> {
        if self.payload.len() < NFGENMSG_LEN {
            return Err(Error::Truncated);
        }
        let p = self.payload;
        Ok(NfMsg {
            family: p[0],
            version: p[1],
            res_id: u16::from_be_bytes([p[2], p[3]]),
            attrs: Attrs::new(&p[NFGENMSG_LEN..]),
        })
    }

    /// For `NLMSG_ERROR`: the (negative-errno or 0) code, the seq of the
    /// message it answers and the extended-ACK text if any.
    pub fn error(&self) -> Result<AckInfo<'a>, Error> {
        let p = self.payload;
        if p.len() < 4 + NLMSG_HDRLEN {
            return Err(Error::Truncated);
        }
        let code = i32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
        let orig_len = u32::from_ne_bytes([p[4], p[5], p[6], p[7]]) as usize;
        let orig_seq = u32::from_ne_bytes([p[12], p[13], p[14], p[15]]);
        let mut text = None;
        if self.flags & NLM_F_ACK_TLVS != 0 {
            // With NETLINK_CAP_ACK (or for ACKs) only the header is echoed;
            // otherwise the whole original message precedes the TLVs.
            let capped = self.flags & 0x100 != 0 || code == 0;
            let skip = 4 + if capped {
                NLMSG_HDRLEN
            } else {
                align(orig_len)
            };
            if skip <= p.len() {
                for a in Attrs::new(&p[skip..]).flatten() {
                    if a.ty == NLMSGERR_ATTR_MSG {
                        text = a.str().ok();
                    }
                }
            }
        }
        Ok(AckInfo {
            code,
            seq: orig_seq,
            text,
        })
    }
}

/// Contents of an `NLMSG_ERROR` (an ACK when `code == 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo<'a> {
    /// 0 or a negative errno.
    pub code: i32,
    /// `nlmsg_seq` of the request this answers.
    pub seq: u32,
    pub text: Option<&'a str>,
}

/// Iterator over the netlink messages in a receive buffer. Yields `Err` once
/// on malformed input and then stops.
#[derive(Clone, Debug)]
pub struct Msgs<'a> {
    rest: &'a [u8],
}

impl<'a> Msgs<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Msgs { rest: buf }
    }
}

impl<'a> Iterator for Msgs<'a> {
    type Item = Result<Msg<'a>, Error>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let r = self.rest;
        if r.len() < NLMSG_HDRLEN {
            self.rest = &[];
            return Some(Err(Error::Truncated));
        }
        let len = u32::from_ne_bytes([r[0], r[1], r[2], r[3]]) as usize;
        if len < NLMSG_HDRLEN || len > r.len() {
            self.rest = &[];
            return Some(Err(Error::Truncated));
        }
        let msg = Msg {
            ty: u16::from_ne_bytes([r[4], r[5]]),
            flags: u16::from_ne_bytes([r[6], r[7]]),
            seq: u32::from_ne_bytes([r[8], r[9], r[10], r[11]]),
            pid: u32::from_ne_bytes([r[12], r[13], r[14], r[15]]),
            payload: &r[NLMSG_HDRLEN..len],
        };
        self.rest = &r[align(len).min(r.len())..];
        Some(Ok(msg))
    }
}

/// Attributes of one level indexed by type (types >= 24 are ignored), so a
/// parser can look fields up by type. Later duplicates win.
pub struct Tb<'a> {
    a: [Option<Attr<'a>>; 24],
}

impl<'a> Tb<'a> {
    pub fn parse(attrs: Attrs<'a>) -> Result<Tb<'a>, Error> {
        let mut a = [None; 24];
        for x in attrs {
            let x = x?;
            if let Some(slot) = a.get_mut(x.ty as usize) {
                *slot = Some(x);
            }
        }
        Ok(Tb { a })
    }
    pub fn get(&self, ty: u16) -> Option<Attr<'a>> {
        self.a.get(ty as usize).copied().flatten()
    }
    pub fn need(&self, ty: u16) -> Result<Attr<'a>, Error> {
        self.get(ty).ok_or(Error::Missing(ty))
    }
    pub fn be32(&self, ty: u16) -> Result<u32, Error> {
        self.need(ty)?.be32()
    }
    pub fn be64(&self, ty: u16) -> Result<u64, Error> {
        self.need(ty)?.be64()
    }
    pub fn string(&self, ty: u16) -> Result<String, Error> {
        Ok(self.need(ty)?.str()?.to_string())
    }
    pub fn opt_u8(&self, ty: u16) -> Result<Option<u8>, Error> {
        self.get(ty).map(|a| a.u8()).transpose()
    }
    pub fn opt_be16(&self, ty: u16) -> Result<Option<u16>, Error> {
        self.get(ty).map(|a| a.be16()).transpose()
    }
    pub fn opt_be32(&self, ty: u16) -> Result<Option<u32>, Error> {
        self.get(ty).map(|a| a.be32()).transpose()
    }
    pub fn opt_be64(&self, ty: u16) -> Result<Option<u64>, Error> {
        self.get(ty).map(|a| a.be64()).transpose()
    }
    pub fn opt_string(&self, ty: u16) -> Result<Option<String>, Error> {
        self.get(ty)
            .map(|a| a.str().map(str::to_string))
            .transpose()
    }
    pub fn opt_bytes(&self, ty: u16) -> Option<Vec<u8>> {
        self.get(ty).map(|a| a.payload.to_vec())
    }
}

/// Writer helpers for optional fields.
impl Writer<'_> {
    pub fn opt_be32(&mut self, ty: u16, v: Option<u32>) {
        if let Some(v) = v {
            self.put_be32(ty, v);
        }
    }
    pub fn opt_be64(&mut self, ty: u16, v: Option<u64>) {
        if let Some(v) = v {
            self.put_be64(ty, v);
        }
    }
    pub fn opt_str(&mut self, ty: u16, v: Option<&str>) {
        if let Some(v) = v {
            self.put_str(ty, v);
        }
    }
    pub fn opt_bytes(&mut self, ty: u16, v: Option<&[u8]>) {
        if let Some(v) = v {
            self.put(ty, v);
        }
    }
}

/// Writes a single nf_tables request (no batch) for `GET*`/dump use.
/// `build` appends the attributes. Returns nothing; bytes go to `buf`.
pub fn request(
    buf: &mut Vec<u8>,
    msg: u16,
    flags: u16,
    seq: u32,
    family: u8,
    build: impl FnOnce(&mut Writer),
) {
    let mut w = Writer::new(buf);
    let start = w.begin_msg(nft_type(msg), NLM_F_REQUEST | flags, seq, family, 0);
    build(&mut w);
    w.end_msg(start);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_aligns_and_nests() {
        let mut buf = Vec::new();
        let mut w = Writer::new(&mut buf);
        let m = w.begin_msg(nft_type(0), NLM_F_REQUEST, 7, 2, 0);
        w.put_str(1, "ab");
        let n = w.begin_nest(2);
        w.put_be32(1, 0x01020304);
        w.put_u8(2, 9);
        w.end_nest(n);
        w.end_msg(m);
        assert_eq!(buf.len() % 4, 0);
        let msg = Msgs::new(&buf).next().unwrap().unwrap();
        assert_eq!((msg.ty, msg.seq), (0xa00, 7));
        let nf = msg.nf().unwrap();
        assert_eq!(nf.family, 2);
        let a: Vec<_> = nf.attrs.map(|a| a.unwrap()).collect();
        assert_eq!(a[0].str().unwrap(), "ab");
        let inner: Vec<_> = a[1].nested().map(|a| a.unwrap()).collect();
        assert_eq!(inner[0].be32().unwrap(), 0x01020304);
        assert_eq!(inner[1].u8().unwrap(), 9);
    }

    #[test]
    fn a_nest_of_unaligned_raw_bytes_is_padded_outside_its_length() {
        let mut buf = Vec::new();
        let mut w = Writer::new(&mut buf);
        let n = w.begin_nest(1);
        w.buf.extend_from_slice(&[9; 3]);
        w.end_nest(n);
        w.put_u8(2, 7);
        assert_eq!(buf, [7, 0, 1, 0x80, 9, 9, 9, 0, 5, 0, 2, 0, 7, 0, 0, 0]);
        let a: Vec<_> = Attrs::new(&buf).map(|a| a.unwrap()).collect();
        assert_eq!((a[0].payload, a[1].ty), (&[9u8; 3][..], 2));
    }

    #[test]
    fn malformed_is_error_not_panic() {
        assert!(matches!(Attrs::new(&[1, 0]).next(), Some(Err(_))));
        assert!(matches!(Attrs::new(&[2, 0, 1, 0]).next(), Some(Err(_))));
        assert!(matches!(Attrs::new(&[200, 0, 1, 0]).next(), Some(Err(_))));
        assert!(matches!(Msgs::new(&[1, 0, 0, 0]).next(), Some(Err(_))));
        // An unpadded last attribute is accepted (the kernel tolerates it).
        let a = Attrs::new(&[5, 0, 1, 0, 7]).next().unwrap().unwrap();
        assert_eq!(a.u8().unwrap(), 7);
    }
}
