//! Rules (`NFT_MSG_NEWRULE`/`DELRULE`/`GETRULE`, `NFTA_RULE_*`).
//!
//! Placement of a new rule is the pair (message flags, `position`):
//! `NLM_F_APPEND` without position appends; with position inserts after
//! the rule whose handle is `position`. Without `NLM_F_APPEND` the rule goes
//! before `position`, or at the head. `NLM_F_REPLACE` with `handle` replaces
//! that rule. See [`crate::batch::Placement`].
//!
//! A `DELRULE` with table+chain+handle deletes one rule; with only
//! table+chain it flushes the chain; with only table, the table's rules.
//!
//! `NFTA_RULE_COMPAT` ([`RuleCompat`]) is what nft_compat extensions
//! ([`Expr::Match`], [`Expr::Target`]) see as the rule's layer-4 protocol
//! (iptables' `-p`, and whether it is inverted). The kernel reads it only
//! when it creates the rule's compat expressions and never dumps it.

use crate::expr::{self, Expr};
use crate::netlink::{Attr, Attrs, Tb, Writer};
use crate::{msg, Error, Family, Object};

const TABLE: u16 = 1;
const CHAIN: u16 = 2;
const HANDLE: u16 = 3;
const EXPRESSIONS: u16 = 4;
const COMPAT: u16 = 5;
const POSITION: u16 = 6;
const USERDATA: u16 = 7;
const ID: u16 = 9;
const POSITION_ID: u16 = 10;
const CHAIN_ID: u16 = 11;
/// `enum nft_rule_compat_attributes`, nested in `COMPAT`.
const COMPAT_PROTO: u16 = 1;
const COMPAT_FLAGS: u16 = 2;

/// `NFT_RULE_COMPAT_F_INV`: the protocol is inverted (`! -p tcp`). The
/// kernel refuses any other flag.
pub const COMPAT_F_INV: u32 = 1 << 1;

/// The rule's protocol as x_tables extensions check it: `proto` is the
/// `IPPROTO_*` number (0: any), `flags` [`COMPAT_F_INV`] or 0. The kernel
/// requires both attributes when the nest is present. An extension that
/// declares a protocol (e.g. the `sctp` match, the `TCPMSS` target) is
/// refused without it (EINVAL), or when it is inverted; iptables-nft sends
/// it with every rule, its `-p` value and inversion, 0 without `-p`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RuleCompat {
    pub proto: u32,
    pub flags: u32,
}

impl RuleCompat {
    /// `proto`, inverted if `inv` (iptables' `! -p proto`).
    pub fn new(proto: u32, inv: bool) -> RuleCompat {
        RuleCompat {
            proto,
            flags: if inv { COMPAT_F_INV } else { 0 },
        }
    }

    fn emit(&self, w: &mut Writer) {
        let n = w.begin_nest(COMPAT);
        w.put_be32(COMPAT_PROTO, self.proto);
        w.put_be32(COMPAT_FLAGS, self.flags);
        w.end_nest(n);
    }

    fn parse(a: &Attr) -> Result<RuleCompat, Error> {
        let t = Tb::parse(a.nested())?;
        Ok(RuleCompat {
            proto: t.be32(COMPAT_PROTO)?,
            flags: t.be32(COMPAT_FLAGS)?,
        })
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    pub family: Family,
    pub table: String,
    pub chain: String,
    /// Kernel handle (from dumps/echo); identifies the rule on delete/replace.
    pub handle: Option<u64>,
    /// Handle of the reference rule for insert-before/after.
    pub position: Option<u64>,
    pub exprs: Vec<Expr>,
    /// `NFTA_RULE_COMPAT`, for rules with x_tables extensions (sent only;
    /// the kernel does not dump it).
    pub compat: Option<RuleCompat>,
    /// Opaque user data (nfkeeper: canonical rule text and stable id).
    pub userdata: Option<Vec<u8>>,
    /// Batch-local id (so a later rule in the batch can be placed by it).
    pub id: Option<u32>,
    /// Batch-local id of the reference rule (instead of `position`).
    pub position_id: Option<u32>,
    /// Batch-local id of a chain created in the same batch (instead of `chain`).
    pub chain_id: Option<u32>,
}

impl Rule {
    pub fn new(family: Family, table: &str, chain: &str, exprs: Vec<Expr>) -> Rule {
        Rule {
            family,
            table: table.to_string(),
            chain: chain.to_string(),
            exprs,
            ..Default::default()
        }
    }

    /// Identifies one rule for `DELRULE` (or, with `handle` `None`, a whole
    /// chain to flush).
    pub fn key(family: Family, table: &str, chain: &str, handle: Option<u64>) -> Rule {
        Rule {
            handle,
            ..Rule::new(family, table, chain, Vec::new())
        }
    }
}

impl Object for Rule {
    const NEW: u16 = msg::NEWRULE;
    const DEL: u16 = msg::DELRULE;
    const GET: u16 = msg::GETRULE;

    fn family(&self) -> Family {
        self.family
    }

    fn emit(&self, w: &mut Writer) {
        if !self.table.is_empty() {
            w.put_str(TABLE, &self.table);
        }
        if !self.chain.is_empty() {
            w.put_str(CHAIN, &self.chain);
        }
        w.opt_be64(HANDLE, self.handle);
        if !self.exprs.is_empty() {
            expr::emit_list(w, EXPRESSIONS, &self.exprs);
        }
        if let Some(c) = &self.compat {
            c.emit(w);
        }
        w.opt_be64(POSITION, self.position);
        w.opt_bytes(USERDATA, self.userdata.as_deref());
        w.opt_be32(ID, self.id);
        w.opt_be32(POSITION_ID, self.position_id);
        w.opt_be32(CHAIN_ID, self.chain_id);
    }

    fn parse(family: Family, attrs: Attrs) -> Result<Rule, Error> {
        let t = Tb::parse(attrs)?;
        Ok(Rule {
            family,
            table: t.opt_string(TABLE)?.unwrap_or_default(),
            chain: t.opt_string(CHAIN)?.unwrap_or_default(),
            handle: t.opt_be64(HANDLE)?,
            position: t.opt_be64(POSITION)?,
            exprs: match t.get(EXPRESSIONS) {
                Some(a) => expr::parse_list(&a)?,
                None => Vec::new(),
            },
            compat: t.get(COMPAT).as_ref().map(RuleCompat::parse).transpose()?,
            userdata: t.opt_bytes(USERDATA),
            id: t.opt_be32(ID)?,
            position_id: t.opt_be32(POSITION_ID)?,
            chain_id: t.opt_be32(CHAIN_ID)?,
        })
    }
}

/// A rule borrowed from a receive buffer, parsed lazily: names, handle and
/// userdata are slices into the buffer; expressions stay raw until
/// [`RuleRef::exprs`] is called. This is what dumps hand out, so listing a
/// million rules allocates nothing per rule unless the caller asks.
#[derive(Clone, Debug)]
pub struct RuleRef<'a> {
    pub family: Family,
    pub table: &'a str,
    pub chain: &'a str,
    pub handle: Option<u64>,
    pub position: Option<u64>,
    pub userdata: Option<&'a [u8]>,
    /// Raw bytes of `NFTA_RULE_EXPRESSIONS` (a run of `NFTA_LIST_ELEM`s).
    pub exprs_raw: &'a [u8],
}

impl<'a> RuleRef<'a> {
    /// Reads the fixed fields of a `NEWRULE` message; expressions are not
    /// decoded.
    pub fn parse(family: Family, attrs: Attrs<'a>) -> Result<RuleRef<'a>, Error> {
        let t = Tb::parse(attrs)?;
        let s = |ty| t.get(ty).map(|a: Attr<'a>| a.str()).transpose();
        Ok(RuleRef {
            family,
            table: s(TABLE)?.unwrap_or(""),
            chain: s(CHAIN)?.unwrap_or(""),
            handle: t.opt_be64(HANDLE)?,
            position: t.opt_be64(POSITION)?,
            userdata: t.get(USERDATA).map(|a| a.payload),
            exprs_raw: t.get(EXPRESSIONS).map(|a| a.payload).unwrap_or(&[]),
        })
    }

    /// Decodes the expressions one by one.
    pub fn exprs(&self) -> impl Iterator<Item = Result<Expr, Error>> + 'a {
        Attrs::new(self.exprs_raw).map(|a| a.and_then(|a| Expr::parse(&a)))
    }

    /// Decodes only the expressions of the given kinds (`NFTA_EXPR_NAME`
    /// values), in order; the others are skipped after reading their name.
    pub fn exprs_of(&self, kinds: &'a [&'a str]) -> impl Iterator<Item = Result<Expr, Error>> + 'a {
        Attrs::new(self.exprs_raw).filter_map(move |a| {
            let a = match a {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            };
            match Expr::name_of(&a) {
                Ok(n) if kinds.contains(&n) => Some(Expr::parse(&a)),
                Ok(_) => None,
                Err(e) => Some(Err(e)),
            }
        })
    }

    /// An owned [`Rule`] with all expressions decoded.
    pub fn to_rule(&self) -> Result<Rule, Error> {
        Ok(Rule {
            family: self.family,
            table: self.table.to_string(),
            chain: self.chain.to_string(),
            handle: self.handle,
            position: self.position,
            exprs: self.exprs().collect::<Result<_, _>>()?,
            userdata: self.userdata.map(<[u8]>::to_vec),
            ..Rule::default()
        })
    }
}
