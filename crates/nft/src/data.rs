//! Data values and verdicts (`NFTA_DATA_*`, `NFTA_VERDICT_*`), as nested in
//! cmp/immediate/range/bitwise expressions and in set elements.

use crate::netlink::{Attr, Writer};
use crate::Error;

const NFTA_DATA_VALUE: u16 = 1;
const NFTA_DATA_VERDICT: u16 = 2;
const NFTA_VERDICT_CODE: u16 = 1;
const NFTA_VERDICT_CHAIN: u16 = 2;

/// A verdict. Codes are the kernel's (`NF_DROP` 0, `NF_ACCEPT` 1,
/// `NFT_CONTINUE` -1, `NFT_BREAK` -2, `NFT_JUMP` -3, `NFT_GOTO` -4,
/// `NFT_RETURN` -5), sent as a big-endian u32 of the i32.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Drop,
    Accept,
    Continue,
    Break,
    Return,
    Jump(String),
    Goto(String),
    /// Any other code (e.g. `NF_QUEUE` with its queue number in the high bits).
    Other(i32),
}

impl Verdict {
    pub fn code(&self) -> i32 {
        match self {
            Verdict::Drop => 0,
            Verdict::Accept => 1,
            Verdict::Continue => -1,
            Verdict::Break => -2,
            Verdict::Jump(_) => -3,
            Verdict::Goto(_) => -4,
            Verdict::Return => -5,
            Verdict::Other(c) => *c,
        }
    }

    fn emit_inner(&self, w: &mut Writer) {
        w.put_be32(NFTA_VERDICT_CODE, self.code() as u32);
        if let Verdict::Jump(c) | Verdict::Goto(c) = self {
            w.put_str(NFTA_VERDICT_CHAIN, c);
        }
    }

    fn parse_inner(a: &Attr) -> Result<Verdict, Error> {
        let mut code = None;
        let mut chain = None;
        for a in a.nested() {
            let a = a?;
            match a.ty {
                NFTA_VERDICT_CODE => code = Some(a.be32()? as i32),
                NFTA_VERDICT_CHAIN => chain = Some(a.str()?.to_string()),
                _ => {}
            }
        }
        let code = code.ok_or(Error::Missing(NFTA_VERDICT_CODE))?;
        Ok(match code {
            0 => Verdict::Drop,
            1 => Verdict::Accept,
            -1 => Verdict::Continue,
            -2 => Verdict::Break,
            -3 => Verdict::Jump(chain.ok_or(Error::Missing(NFTA_VERDICT_CHAIN))?),
            -4 => Verdict::Goto(chain.ok_or(Error::Missing(NFTA_VERDICT_CHAIN))?),
            -5 => Verdict::Return,
            c => Verdict::Other(c),
        })
    }
}

/// The content of an `NFTA_*_DATA`-style nest: a value (raw bytes, in the
/// byte order the matched field has in the packet/register, at most 64 bytes
/// for the kernel) or a verdict.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Data {
    Value(Vec<u8>),
    Verdict(Verdict),
}

impl Data {
    /// Writes `ty` as a nest holding `NFTA_DATA_VALUE` or `NFTA_DATA_VERDICT`.
    pub fn emit(&self, w: &mut Writer, ty: u16) {
        let n = w.begin_nest(ty);
        match self {
            Data::Value(v) => w.put(NFTA_DATA_VALUE, v),
            Data::Verdict(v) => {
                let m = w.begin_nest(NFTA_DATA_VERDICT);
                v.emit_inner(w);
                w.end_nest(m);
            }
        }
        w.end_nest(n);
    }

    /// Writes a value nest without building a `Data`.
    pub fn emit_value(w: &mut Writer, ty: u16, v: &[u8]) {
        let n = w.begin_nest(ty);
        w.put(NFTA_DATA_VALUE, v);
        w.end_nest(n);
    }

    /// Parses the nest `a` (the outer `NFTA_*_DATA` attribute).
    pub fn parse(a: &Attr) -> Result<Data, Error> {
        for inner in a.nested() {
            let inner = inner?;
            match inner.ty {
                NFTA_DATA_VALUE => return Ok(Data::Value(inner.payload.to_vec())),
                NFTA_DATA_VERDICT => return Ok(Data::Verdict(Verdict::parse_inner(&inner)?)),
                _ => {}
            }
        }
        Err(Error::Missing(NFTA_DATA_VALUE))
    }

    /// Parses a nest that must hold a value.
    pub fn parse_value(a: &Attr) -> Result<Vec<u8>, Error> {
        match Data::parse(a)? {
            Data::Value(v) => Ok(v),
            Data::Verdict(_) => Err(Error::BadAttr(a.ty)),
        }
    }
}
