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
//!
//! Layout: this module holds the enum and the dispatch by kind. Each kind
//! (or small family of kinds sharing one kernel name or one attribute
//! layout) has its module: its kernel name (`NAME`), its attributes named
//! as the kernel's uapi names them (`NFTA_<KIND>_*`, from
//! linux/netfilter/nf_tables.h and nf_tables_compat.h), and its `emit` and
//! `parse` side by side. A kind's `emit` writes the attributes of the
//! variants it owns into the already-open `NFTA_EXPR_DATA` nest (other
//! variants write nothing: the dispatch below only hands a module its own);
//! its `parse` reads them from that nest's attribute table.

mod bitwise;
pub mod byteorder;
mod cmp;
mod compat;
mod counter;
pub mod ct;
mod dup;
pub mod dynset;
pub mod exthdr;
pub mod fib;
mod immediate;
mod limit;
mod log;
mod lookup;
pub mod meta;
mod nat;
mod numgen;
pub mod objref;
mod payload;
mod quota;
mod range;
mod reject;
pub mod rt;

use crate::data::Data;
use crate::netlink::{Attr, Attrs, Tb, Writer};
use crate::Error;
/// Kind names (`NFTA_EXPR_NAME`) for [`crate::RuleRef::exprs_of`].
pub const KIND_COUNTER: &str = counter::NAME;
pub const KIND_IMMEDIATE: &str = immediate::NAME;

pub use bitwise::Shift;
pub use byteorder::Byteorder;
pub use cmp::CmpOp;
pub use dup::Dup;
pub use exthdr::{Exthdr, ExthdrSet, ExthdrStrip};
pub use fib::Fib;
pub use lookup::LOOKUP_F_INV;
pub use objref::Objref;
pub use payload::base;
pub use rt::Rt;

/// `enum nft_list_attributes`: one element of an expression list.
const NFTA_LIST_ELEM: u16 = 1;
/// `enum nft_expr_attributes`.
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
    /// `exthdr` reset (strip) of a TCP option.
    ExthdrStrip(ExthdrStrip),
    /// `dup`: a copy of the packet to a gateway.
    Dup(Dup),
    /// `fib` route lookup.
    Fib(Fib),
    /// `rt` route property load.
    Rt(Rt),
    /// `objref` of a named stateful object of the table.
    Objref(Objref),
    /// `match` (nft_compat): the x_tables match `name` at revision `rev`
    /// with its `struct xt_*_info` bytes as the kernel expects them
    /// (`XT_ALIGN`ed, host byte order, layout per extension). A rule
    /// carrying one usually needs [`crate::rule::RuleCompat`] too.
    Match {
        name: String,
        rev: u32,
        info: Vec<u8>,
    },
    /// `target` (nft_compat): the x_tables target `name` at revision
    /// `rev` with its info bytes, as for [`Expr::Match`].
    Target {
        name: String,
        rev: u32,
        info: Vec<u8>,
    },
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
            Expr::Immediate { .. } => immediate::NAME,
            Expr::Payload { .. } | Expr::PayloadSet { .. } => payload::NAME,
            Expr::Cmp { .. } => cmp::NAME,
            Expr::Range { .. } => range::NAME,
            Expr::Bitwise { .. } | Expr::Shift(_) => bitwise::NAME,
            Expr::Meta { .. } | Expr::MetaSet { .. } => meta::NAME,
            Expr::Ct { .. } | Expr::CtSet { .. } => ct::NAME,
            Expr::Notrack => ct::NOTRACK,
            Expr::Lookup { .. } => lookup::NAME,
            Expr::Counter { .. } => counter::NAME,
            Expr::Log { .. } => log::NAME,
            Expr::Reject { .. } => reject::NAME,
            Expr::Nat { .. } => nat::NAT,
            Expr::Masq { .. } => nat::MASQ,
            Expr::Redir { .. } => nat::REDIR,
            Expr::Limit { .. } => limit::NAME,
            Expr::Numgen { .. } => numgen::NAME,
            Expr::Quota { .. } => quota::NAME,
            Expr::Byteorder(_) => byteorder::NAME,
            Expr::Exthdr(_) | Expr::ExthdrSet(_) | Expr::ExthdrStrip(_) => exthdr::NAME,
            Expr::Dup(_) => dup::NAME,
            Expr::Fib(_) => fib::NAME,
            Expr::Rt(_) => rt::NAME,
            Expr::Objref(_) => objref::NAME,
            Expr::Match { .. } => compat::MATCH,
            Expr::Target { .. } => compat::TARGET,
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
        // `notrack` has no attributes, and the kernel dumps no data nest.
        if let Expr::Notrack = self {
            return;
        }
        let n = w.begin_nest(NFTA_EXPR_DATA);
        self.emit_data(w);
        w.end_nest(n);
    }

    /// The kind's attributes, by the module that owns the variant.
    fn emit_data(&self, w: &mut Writer) {
        match self {
            Expr::Immediate { .. } => immediate::emit(self, w),
            Expr::Payload { .. } | Expr::PayloadSet { .. } => payload::emit(self, w),
            Expr::Cmp { .. } => cmp::emit(self, w),
            Expr::Range { .. } => range::emit(self, w),
            Expr::Bitwise { .. } => bitwise::emit(self, w),
            Expr::Meta { .. } | Expr::MetaSet { .. } => meta::emit(self, w),
            Expr::Ct { .. } | Expr::CtSet { .. } => ct::emit(self, w),
            Expr::Lookup { .. } => lookup::emit(self, w),
            Expr::Counter { .. } => counter::emit(self, w),
            Expr::Log { .. } => log::emit(self, w),
            Expr::Reject { .. } => reject::emit(self, w),
            Expr::Nat { .. } | Expr::Masq { .. } | Expr::Redir { .. } => nat::emit(self, w),
            Expr::Limit { .. } => limit::emit(self, w),
            Expr::Numgen { .. } => numgen::emit(self, w),
            Expr::Quota { .. } => quota::emit(self, w),
            Expr::Match { .. } | Expr::Target { .. } => compat::emit(self, w),
            Expr::Byteorder(x) => x.emit(w),
            Expr::Shift(x) => x.emit(w),
            Expr::Exthdr(x) => x.emit(w),
            Expr::ExthdrSet(x) => x.emit(w),
            Expr::ExthdrStrip(x) => x.emit(w),
            Expr::Dup(x) => x.emit(w),
            Expr::Fib(x) => x.emit(w),
            Expr::Rt(x) => x.emit(w),
            Expr::Objref(x) => x.emit(w),
            Expr::Notrack | Expr::Other { .. } => {}
        }
    }

    /// The kind name (`NFTA_EXPR_NAME`) of one `NFTA_LIST_ELEM` attribute,
    /// without decoding its data: O(attributes before the name), no
    /// allocation.
    pub fn name_of<'a>(elem: &Attr<'a>) -> Result<&'a str, Error> {
        for a in Attrs::new(elem.payload) {
            let a = a?;
            if a.ty == NFTA_EXPR_NAME {
                return a.str();
            }
        }
        Err(Error::Missing(NFTA_EXPR_NAME))
    }

    /// Parses one `NFTA_LIST_ELEM` attribute.
    pub fn parse(elem: &Attr) -> Result<Expr, Error> {
        Expr::parse_body(elem.payload)
    }

    /// Parses `NFTA_EXPR_NAME` + `NFTA_EXPR_DATA` from raw attribute bytes.
    pub fn parse_body(bytes: &[u8]) -> Result<Expr, Error> {
        let tb = Tb::parse(Attrs::new(bytes))?;
        let name = tb.need(NFTA_EXPR_NAME)?.str()?;
        let data = tb.get(NFTA_EXPR_DATA);
        let payload = data.map(|d| d.payload).unwrap_or(&[]);
        let t = Tb::parse(Attrs::new(payload))?;
        // `None`: a kind (or a form of one) without a typed variant, kept raw.
        let typed = match name {
            immediate::NAME => Some(immediate::parse(&t)?),
            payload::NAME => Some(payload::parse(&t)?),
            cmp::NAME => Some(cmp::parse(&t)?),
            range::NAME => Some(range::parse(&t)?),
            bitwise::NAME => bitwise::parse(&t)?,
            byteorder::NAME => Some(Expr::Byteorder(Byteorder::parse(&t)?)),
            exthdr::NAME => Some(exthdr::parse(&t)?),
            fib::NAME => Some(Expr::Fib(Fib::parse(&t)?)),
            rt::NAME => Some(Expr::Rt(Rt::parse(&t)?)),
            dup::NAME => Some(Expr::Dup(Dup::parse(&t)?)),
            objref::NAME => Objref::parse(&t)?.map(Expr::Objref),
            meta::NAME => Some(meta::parse(&t)?),
            ct::NAME => Some(ct::parse(&t)?),
            ct::NOTRACK => Some(Expr::Notrack),
            lookup::NAME => Some(lookup::parse(&t)?),
            counter::NAME => Some(counter::parse(&t)?),
            log::NAME => Some(log::parse(&t)?),
            reject::NAME => Some(reject::parse(&t)?),
            nat::NAT => Some(nat::parse_nat(&t)?),
            nat::MASQ => Some(nat::parse_masq(&t)?),
            nat::REDIR => Some(nat::parse_redir(&t)?),
            limit::NAME => Some(limit::parse(&t)?),
            numgen::NAME => Some(numgen::parse(&t)?),
            quota::NAME => Some(quota::parse(&t)?),
            compat::MATCH => Some(compat::parse_match(&t)?),
            compat::TARGET => Some(compat::parse_target(&t)?),
            _ => None,
        };
        Ok(typed.unwrap_or_else(|| Expr::Other {
            name: name.to_string(),
            data: payload.to_vec(),
        }))
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
