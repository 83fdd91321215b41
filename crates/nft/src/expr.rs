//! Native nf_tables expressions: one [`Expr`] variant per kind, each with
//! symmetric emit/parse.
//!
//! On the wire an expression is an `NFTA_LIST_ELEM` nest holding
//! `NFTA_EXPR_NAME` (string) and `NFTA_EXPR_DATA` (nest of the kind's
//! attributes). All numbers are big-endian; registers are raw
//! `NFT_REG_*`/`NFT_REG32_*` numbers (see [`reg`]). Keys, ops and types are
//! kept as the kernel's raw numbers (see [`meta`], [`ct`], ...) so that any
//! ruleset, including foreign ones, round-trips; unknown kinds parse into
//! [`Expr::Other`] with their data bytes intact.

mod kinds;
pub mod objref;

use crate::data::Data;
use crate::netlink::{Attr, Tb, Writer};
use crate::Error;
pub use kinds::{byteorder, exthdr, fib, rt, Byteorder, Exthdr, ExthdrSet, Fib, Rt, Shift};
pub use objref::Objref;

const NFTA_LIST_ELEM: u16 = 1;
const NFTA_EXPR_NAME: u16 = 1;
const NFTA_EXPR_DATA: u16 = 2;

/// Register numbers.
pub mod reg {
    pub const VERDICT: u32 = 0;
    /// 16-byte registers 1..=4.
    pub const R1: u32 = 1;
    pub const R2: u32 = 2;
    pub const R3: u32 = 3;
    pub const R4: u32 = 4;
    /// First 4-byte register (`NFT_REG32_00`); 00..=15 are 8..=23.
    pub const R32_00: u32 = 8;
}

/// `enum nft_meta_keys` values used here.
pub mod meta {
    pub const LEN: u32 = 0;
    pub const PROTOCOL: u32 = 1;
    pub const MARK: u32 = 3;
    pub const IIF: u32 = 4;
    pub const OIF: u32 = 5;
    pub const IIFNAME: u32 = 6;
    pub const OIFNAME: u32 = 7;
    pub const SKUID: u32 = 10;
    pub const SKGID: u32 = 11;
    pub const NFPROTO: u32 = 15;
    pub const L4PROTO: u32 = 16;
    pub const PKTTYPE: u32 = 19;
}

/// `enum nft_ct_keys` values used here.
pub mod ct {
    pub const STATE: u32 = 0;
    pub const DIRECTION: u32 = 1;
    pub const STATUS: u32 = 2;
    pub const MARK: u32 = 3;
    pub const EXPIRATION: u32 = 5;
    pub const L3PROTOCOL: u32 = 7;
    pub const SRC: u32 = 8;
    pub const DST: u32 = 9;
    pub const PROTOCOL: u32 = 10;
    pub const PROTO_SRC: u32 = 11;
    pub const PROTO_DST: u32 = 12;
    pub const ZONE: u32 = 17;
}

/// Payload bases (`enum nft_payload_bases`).
pub mod base {
    pub const LL: u32 = 0;
    pub const NETWORK: u32 = 1;
    pub const TRANSPORT: u32 = 2;
}

/// `NFT_LOOKUP_F_INV`: match when the key is NOT in the set.
pub const LOOKUP_F_INV: u32 = 1;

/// Comparison operator of `cmp` (`enum nft_cmp_ops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq = 0,
    Neq = 1,
    Lt = 2,
    Lte = 3,
    Gt = 4,
    Gte = 5,
}

impl CmpOp {
    fn from_u32(v: u32) -> Result<CmpOp, Error> {
        Ok(match v {
            0 => CmpOp::Eq,
            1 => CmpOp::Neq,
            2 => CmpOp::Lt,
            3 => CmpOp::Lte,
            4 => CmpOp::Gt,
            5 => CmpOp::Gte,
            _ => return Err(Error::BadAttr(2)),
        })
    }
}

/// One expression. Field names follow the kernel attribute names; optional
/// attributes are `Option`s and are only emitted when `Some`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// `immediate`: load `data` into `dreg` (a verdict goes to `reg::VERDICT`).
    Immediate {
        dreg: u32,
        data: Data,
    },
    /// `payload` load: `len` bytes at `offset` of header `base` into `dreg`.
    Payload {
        dreg: u32,
        base: u32,
        offset: u32,
        len: u32,
    },
    /// `payload` set (mangle): write `sreg` to the packet, fixing checksums.
    PayloadSet {
        sreg: u32,
        base: u32,
        offset: u32,
        len: u32,
        csum_type: Option<u32>,
        csum_offset: Option<u32>,
        csum_flags: Option<u32>,
    },
    /// `cmp`: compare `sreg` against `data` (value bytes).
    Cmp {
        sreg: u32,
        op: CmpOp,
        data: Vec<u8>,
    },
    /// `range`: `from <= sreg <= to` (or not, if `neq`).
    Range {
        sreg: u32,
        neq: bool,
        from: Vec<u8>,
        to: Vec<u8>,
    },
    /// `bitwise` mask/xor: `dreg = (sreg & mask) ^ xor` over `len` bytes.
    Bitwise {
        sreg: u32,
        dreg: u32,
        len: u32,
        mask: Vec<u8>,
        xor: Vec<u8>,
    },
    /// `meta` load of `key` into `dreg`.
    Meta {
        key: u32,
        dreg: u32,
    },
    /// `meta` set of `key` (e.g. mark) from `sreg`.
    MetaSet {
        key: u32,
        sreg: u32,
    },
    /// `ct` load of `key` (optionally of one direction: 0 original, 1 reply).
    Ct {
        key: u32,
        dreg: u32,
        dir: Option<u8>,
    },
    /// `ct` set of `key` (mark, zone) from `sreg`.
    CtSet {
        key: u32,
        sreg: u32,
        dir: Option<u8>,
    },
    /// `lookup`: key in `sreg` against the set `set` (or `set_id` for a set
    /// created in the same batch); for maps the value goes to `dreg`.
    Lookup {
        set: String,
        set_id: Option<u32>,
        sreg: u32,
        dreg: Option<u32>,
        flags: Option<u32>,
    },
    /// `counter` with initial values.
    Counter {
        bytes: u64,
        packets: u64,
    },
    Log {
        group: Option<u16>,
        prefix: Option<String>,
        snaplen: Option<u32>,
        qthreshold: Option<u16>,
        level: Option<u32>,
        flags: Option<u32>,
    },
    /// `reject`: `ty` per `enum nft_reject_types`, ICMP `code`.
    Reject {
        ty: u32,
        code: Option<u8>,
    },
    /// `nat`: `ty` 0 snat / 1 dnat, `family` NFPROTO, address/port registers.
    Nat {
        ty: u32,
        family: u32,
        reg_addr_min: Option<u32>,
        reg_addr_max: Option<u32>,
        reg_proto_min: Option<u32>,
        reg_proto_max: Option<u32>,
        flags: Option<u32>,
    },
    Masq {
        flags: Option<u32>,
        reg_proto_min: Option<u32>,
        reg_proto_max: Option<u32>,
    },
    Redir {
        reg_proto_min: Option<u32>,
        reg_proto_max: Option<u32>,
        flags: Option<u32>,
    },
    /// `limit`: `rate` per `unit` seconds, `ty` 0 packets / 1 bytes.
    Limit {
        rate: u64,
        unit: u64,
        burst: u32,
        ty: u32,
        flags: u32,
    },
    Numgen {
        dreg: u32,
        modulus: u32,
        ty: u32,
        offset: Option<u32>,
    },
    Quota {
        bytes: u64,
        flags: u32,
        consumed: Option<u64>,
    },
    Notrack,
    /// `byteorder` conversion between host and network order.
    Byteorder(Byteorder),
    /// `bitwise` shift left or right.
    Shift(Shift),
    /// `exthdr` load (or presence test) of an extension header field.
    Exthdr(Exthdr),
    /// `exthdr` write of a TCP option field.
    ExthdrSet(ExthdrSet),
    /// `fib` route lookup.
    Fib(Fib),
    /// `rt` route property load.
    Rt(Rt),
    /// `objref` of a named stateful object of the table.
    Objref(Objref),
    /// Any other kind: its name and the raw bytes of its `NFTA_EXPR_DATA`.
    Other {
        name: String,
        data: Vec<u8>,
    },
}

impl Expr {
    /// The kernel's name of this kind.
    pub fn name(&self) -> &str {
        match self {
            Expr::Immediate { .. } => "immediate",
            Expr::Payload { .. } | Expr::PayloadSet { .. } => "payload",
            Expr::Cmp { .. } => "cmp",
            Expr::Range { .. } => "range",
            Expr::Bitwise { .. } | Expr::Shift(_) => "bitwise",
            Expr::Meta { .. } | Expr::MetaSet { .. } => "meta",
            Expr::Ct { .. } | Expr::CtSet { .. } => "ct",
            Expr::Lookup { .. } => "lookup",
            Expr::Counter { .. } => "counter",
            Expr::Log { .. } => "log",
            Expr::Reject { .. } => "reject",
            Expr::Nat { .. } => "nat",
            Expr::Masq { .. } => "masq",
            Expr::Redir { .. } => "redir",
            Expr::Limit { .. } => "limit",
            Expr::Numgen { .. } => "numgen",
            Expr::Quota { .. } => "quota",
            Expr::Notrack => "notrack",
            Expr::Byteorder(_) => "byteorder",
            Expr::Exthdr(_) | Expr::ExthdrSet(_) => "exthdr",
            Expr::Fib(_) => "fib",
            Expr::Rt(_) => "rt",
            Expr::Objref(_) => "objref",
            Expr::Other { name, .. } => name,
        }
    }

    /// Writes the expression as an `NFTA_LIST_ELEM` nest.
    pub fn emit(&self, w: &mut Writer) {
        let elem = w.begin_nest(NFTA_LIST_ELEM);
        self.emit_body(w);
        w.end_nest(elem);
    }

    /// Writes `NFTA_EXPR_NAME` and `NFTA_EXPR_DATA` (no surrounding nest);
    /// used directly for `NFTA_SET_EXPR`/`NFTA_SET_ELEM_EXPR`.
    pub fn emit_body(&self, w: &mut Writer) {
        w.put_str(NFTA_EXPR_NAME, self.name());
        if let Expr::Other { data, .. } = self {
            let n = w.begin_nest(NFTA_EXPR_DATA);
            w.buf.extend_from_slice(data);
            w.end_nest(n);
            return;
        }
        if let Expr::Notrack = self {
            return;
        }
        let n = w.begin_nest(NFTA_EXPR_DATA);
        self.emit_data(w);
        w.end_nest(n);
    }

    fn emit_data(&self, w: &mut Writer) {
        match self {
            Expr::Immediate { dreg, data } => {
                w.put_be32(1, *dreg);
                data.emit(w, 2);
            }
            Expr::Payload {
                dreg,
                base,
                offset,
                len,
            } => {
                w.put_be32(1, *dreg);
                w.put_be32(2, *base);
                w.put_be32(3, *offset);
                w.put_be32(4, *len);
            }
            Expr::PayloadSet {
                sreg,
                base,
                offset,
                len,
                csum_type,
                csum_offset,
                csum_flags,
            } => {
                w.put_be32(2, *base);
                w.put_be32(3, *offset);
                w.put_be32(4, *len);
                w.put_be32(5, *sreg);
                w.opt_be32(6, *csum_type);
                w.opt_be32(7, *csum_offset);
                w.opt_be32(8, *csum_flags);
            }
            Expr::Cmp { sreg, op, data } => {
                w.put_be32(1, *sreg);
                w.put_be32(2, *op as u32);
                Data::emit_value(w, 3, data);
            }
            Expr::Range {
                sreg,
                neq,
                from,
                to,
            } => {
                w.put_be32(1, *sreg);
                w.put_be32(2, *neq as u32);
                Data::emit_value(w, 3, from);
                Data::emit_value(w, 4, to);
            }
            Expr::Bitwise {
                sreg,
                dreg,
                len,
                mask,
                xor,
            } => {
                w.put_be32(1, *sreg);
                w.put_be32(2, *dreg);
                w.put_be32(3, *len);
                Data::emit_value(w, 4, mask);
                Data::emit_value(w, 5, xor);
                w.put_be32(6, 0); // NFT_BITWISE_MASK_XOR
            }
            Expr::Meta { key, dreg } => {
                w.put_be32(1, *dreg);
                w.put_be32(2, *key);
            }
            Expr::MetaSet { key, sreg } => {
                w.put_be32(2, *key);
                w.put_be32(3, *sreg);
            }
            Expr::Ct { key, dreg, dir } => {
                w.put_be32(1, *dreg);
                w.put_be32(2, *key);
                if let Some(d) = dir {
                    w.put_u8(3, *d);
                }
            }
            Expr::CtSet { key, sreg, dir } => {
                w.put_be32(2, *key);
                if let Some(d) = dir {
                    w.put_u8(3, *d);
                }
                w.put_be32(4, *sreg);
            }
            Expr::Lookup {
                set,
                set_id,
                sreg,
                dreg,
                flags,
            } => {
                w.put_str(1, set);
                w.put_be32(2, *sreg);
                w.opt_be32(3, *dreg);
                w.opt_be32(4, *set_id);
                w.opt_be32(5, *flags);
            }
            Expr::Counter { bytes, packets } => {
                w.put_be64(1, *bytes);
                w.put_be64(2, *packets);
            }
            Expr::Log {
                group,
                prefix,
                snaplen,
                qthreshold,
                level,
                flags,
            } => {
                if let Some(g) = group {
                    w.put_be16(1, *g);
                }
                w.opt_str(2, prefix.as_deref());
                w.opt_be32(3, *snaplen);
                if let Some(q) = qthreshold {
                    w.put_be16(4, *q);
                }
                w.opt_be32(5, *level);
                w.opt_be32(6, *flags);
            }
            Expr::Reject { ty, code } => {
                w.put_be32(1, *ty);
                if let Some(c) = code {
                    w.put_u8(2, *c);
                }
            }
            Expr::Nat {
                ty,
                family,
                reg_addr_min,
                reg_addr_max,
                reg_proto_min,
                reg_proto_max,
                flags,
            } => {
                w.put_be32(1, *ty);
                w.put_be32(2, *family);
                w.opt_be32(3, *reg_addr_min);
                w.opt_be32(4, *reg_addr_max);
                w.opt_be32(5, *reg_proto_min);
                w.opt_be32(6, *reg_proto_max);
                w.opt_be32(7, *flags);
            }
            Expr::Masq {
                flags,
                reg_proto_min,
                reg_proto_max,
            } => {
                w.opt_be32(1, *flags);
                w.opt_be32(2, *reg_proto_min);
                w.opt_be32(3, *reg_proto_max);
            }
            Expr::Redir {
                reg_proto_min,
                reg_proto_max,
                flags,
            } => {
                w.opt_be32(1, *reg_proto_min);
                w.opt_be32(2, *reg_proto_max);
                w.opt_be32(3, *flags);
            }
            Expr::Limit {
                rate,
                unit,
                burst,
                ty,
                flags,
            } => {
                w.put_be64(1, *rate);
                w.put_be64(2, *unit);
                w.put_be32(3, *burst);
                w.put_be32(4, *ty);
                w.put_be32(5, *flags);
            }
            Expr::Numgen {
                dreg,
                modulus,
                ty,
                offset,
            } => {
                w.put_be32(1, *dreg);
                w.put_be32(2, *modulus);
                w.put_be32(3, *ty);
                w.opt_be32(4, *offset);
            }
            Expr::Quota {
                bytes,
                flags,
                consumed,
            } => {
                w.put_be64(1, *bytes);
                w.put_be32(2, *flags);
                w.opt_be64(4, *consumed);
            }
            Expr::Byteorder(x) => x.emit(w),
            Expr::Shift(x) => x.emit(w),
            Expr::Exthdr(x) => x.emit(w),
            Expr::ExthdrSet(x) => x.emit(w),
            Expr::Fib(x) => x.emit(w),
            Expr::Rt(x) => x.emit(w),
            Expr::Objref(x) => x.emit(w),
            Expr::Notrack | Expr::Other { .. } => {}
        }
    }

    /// Parses one `NFTA_LIST_ELEM` attribute.
    pub fn parse(elem: &Attr) -> Result<Expr, Error> {
        Expr::parse_body(elem.payload)
    }

    /// Parses `NFTA_EXPR_NAME` + `NFTA_EXPR_DATA` from raw attribute bytes.
    pub fn parse_body(bytes: &[u8]) -> Result<Expr, Error> {
        let tb = Tb::parse(crate::netlink::Attrs::new(bytes))?;
        let name = tb.need(NFTA_EXPR_NAME)?.str()?;
        let data = tb.get(NFTA_EXPR_DATA);
        let payload = data.map(|d| d.payload).unwrap_or(&[]);
        let t = Tb::parse(crate::netlink::Attrs::new(payload))?;
        let value = |ty: u16| -> Result<Vec<u8>, Error> { Data::parse_value(&t.need(ty)?) };
        Ok(match name {
            "immediate" => Expr::Immediate {
                dreg: t.be32(1)?,
                data: Data::parse(&t.need(2)?)?,
            },
            "payload" => match t.opt_be32(1)? {
                Some(dreg) => Expr::Payload {
                    dreg,
                    base: t.be32(2)?,
                    offset: t.be32(3)?,
                    len: t.be32(4)?,
                },
                None => Expr::PayloadSet {
                    sreg: t.be32(5)?,
                    base: t.be32(2)?,
                    offset: t.be32(3)?,
                    len: t.be32(4)?,
                    csum_type: t.opt_be32(6)?,
                    csum_offset: t.opt_be32(7)?,
                    csum_flags: t.opt_be32(8)?,
                },
            },
            "cmp" => Expr::Cmp {
                sreg: t.be32(1)?,
                op: CmpOp::from_u32(t.be32(2)?)?,
                data: value(3)?,
            },
            "range" => Expr::Range {
                sreg: t.be32(1)?,
                neq: t.be32(2)? != 0,
                from: value(3)?,
                to: value(4)?,
            },
            "bitwise" if t.opt_be32(6)?.unwrap_or(0) == 0 => Expr::Bitwise {
                sreg: t.be32(1)?,
                dreg: t.be32(2)?,
                len: t.be32(3)?,
                mask: value(4)?,
                xor: value(5)?,
            },
            "bitwise" if matches!(t.opt_be32(6)?, Some(1 | 2)) => {
                Expr::Shift(Shift::parse(&t, t.be32(6)?)?)
            }
            "byteorder" => Expr::Byteorder(Byteorder::parse(&t)?),
            "exthdr" => match t.opt_be32(1)? {
                Some(dreg) => Expr::Exthdr(Exthdr::parse(&t, dreg)?),
                None => Expr::ExthdrSet(ExthdrSet::parse(&t)?),
            },
            "fib" => Expr::Fib(Fib::parse(&t)?),
            "rt" => Expr::Rt(Rt::parse(&t)?),
            "objref" => match Objref::parse(&t)? {
                Some(o) => Expr::Objref(o),
                None => Expr::Other {
                    name: name.to_string(),
                    data: payload.to_vec(),
                },
            },
            "meta" => match t.opt_be32(1)? {
                Some(dreg) => Expr::Meta {
                    key: t.be32(2)?,
                    dreg,
                },
                None => Expr::MetaSet {
                    key: t.be32(2)?,
                    sreg: t.be32(3)?,
                },
            },
            "ct" => match t.opt_be32(1)? {
                Some(dreg) => Expr::Ct {
                    key: t.be32(2)?,
                    dreg,
                    dir: t.opt_u8(3)?,
                },
                None => Expr::CtSet {
                    key: t.be32(2)?,
                    sreg: t.be32(4)?,
                    dir: t.opt_u8(3)?,
                },
            },
            "lookup" => Expr::Lookup {
                set: t.string(1)?,
                sreg: t.be32(2)?,
                dreg: t.opt_be32(3)?,
                set_id: t.opt_be32(4)?,
                flags: t.opt_be32(5)?,
            },
            "counter" => Expr::Counter {
                bytes: t.opt_be64(1)?.unwrap_or(0),
                packets: t.opt_be64(2)?.unwrap_or(0),
            },
            "log" => Expr::Log {
                group: t.opt_be16(1)?,
                prefix: t.opt_string(2)?,
                snaplen: t.opt_be32(3)?,
                qthreshold: t.opt_be16(4)?,
                level: t.opt_be32(5)?,
                flags: t.opt_be32(6)?,
            },
            "reject" => Expr::Reject {
                ty: t.be32(1)?,
                code: t.opt_u8(2)?,
            },
            "nat" => Expr::Nat {
                ty: t.be32(1)?,
                family: t.be32(2)?,
                reg_addr_min: t.opt_be32(3)?,
                reg_addr_max: t.opt_be32(4)?,
                reg_proto_min: t.opt_be32(5)?,
                reg_proto_max: t.opt_be32(6)?,
                flags: t.opt_be32(7)?,
            },
            "masq" => Expr::Masq {
                flags: t.opt_be32(1)?,
                reg_proto_min: t.opt_be32(2)?,
                reg_proto_max: t.opt_be32(3)?,
            },
            "redir" => Expr::Redir {
                reg_proto_min: t.opt_be32(1)?,
                reg_proto_max: t.opt_be32(2)?,
                flags: t.opt_be32(3)?,
            },
            "limit" => Expr::Limit {
                rate: t.be64(1)?,
                unit: t.be64(2)?,
                burst: t.opt_be32(3)?.unwrap_or(0),
                ty: t.opt_be32(4)?.unwrap_or(0),
                flags: t.opt_be32(5)?.unwrap_or(0),
            },
            "numgen" => Expr::Numgen {
                dreg: t.be32(1)?,
                modulus: t.be32(2)?,
                ty: t.be32(3)?,
                offset: t.opt_be32(4)?,
            },
            "quota" => Expr::Quota {
                bytes: t.be64(1)?,
                flags: t.opt_be32(2)?.unwrap_or(0),
                consumed: t.opt_be64(4)?,
            },
            "notrack" => Expr::Notrack,
            other => Expr::Other {
                name: other.to_string(),
                data: payload.to_vec(),
            },
        })
    }
}

/// Writes a list of expressions as the nest `ty` (e.g. `NFTA_RULE_EXPRESSIONS`).
pub fn emit_list(w: &mut Writer, ty: u16, exprs: &[Expr]) {
    let n = w.begin_nest(ty);
    for e in exprs {
        e.emit(w);
    }
    w.end_nest(n);
}

/// Parses a list nest of `NFTA_LIST_ELEM` expressions.
pub fn parse_list(a: &Attr) -> Result<Vec<Expr>, Error> {
    let mut v = Vec::new();
    for e in a.nested() {
        let e = e?;
        if e.ty == NFTA_LIST_ELEM {
            v.push(Expr::parse(&e)?);
        }
    }
    Ok(v)
}

/// Convenience constructors for the common shapes.
impl Expr {
    /// `immediate` verdict.
    pub fn verdict(v: crate::Verdict) -> Expr {
        Expr::Immediate {
            dreg: reg::VERDICT,
            data: Data::Verdict(v),
        }
    }
    /// `payload load` of `len` bytes at `offset` of header `base` into
    /// register 1 (what [`Expr::cmp_eq`] compares).
    pub fn load(base: u32, offset: u32, len: u32) -> Expr {
        Expr::Payload {
            dreg: reg::R1,
            base,
            offset,
            len,
        }
    }
    /// `cmp eq` of register 1 against `data`.
    pub fn cmp_eq(data: &[u8]) -> Expr {
        Expr::Cmp {
            sreg: reg::R1,
            op: CmpOp::Eq,
            data: data.to_vec(),
        }
    }
    /// A counter starting at zero.
    pub fn counter() -> Expr {
        Expr::Counter {
            bytes: 0,
            packets: 0,
        }
    }
}
