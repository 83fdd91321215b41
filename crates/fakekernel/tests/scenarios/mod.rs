//! The scenarios of the differential test, one module per area, and the
//! helpers that build their datagrams.

pub mod expressions;
pub mod more;
pub mod objects;
pub mod requests;
pub mod sets;
pub mod validation;

use nft::chain::POLICY_ACCEPT;
use nft::expr::{base, reg};
use nft::netlink;
use nft::{Batch, Chain, Expr, Family, Object, Rule, Set, SetElem, SetElems, Verdict};

pub const F: Family = Family::Ipv4;
pub const T: &str = "t";

/// A batch built by `f`, numbered from the step's sequence number.
pub fn batch(f: impl Fn(&mut Batch) + 'static) -> impl Fn(u32, u32) -> Vec<u8> {
    move |seq, _| {
        let mut b = Batch::new(seq, None);
        f(&mut b);
        b.finish().to_vec()
    }
}

/// One request outside a batch.
pub fn request<O: Object + 'static>(ty: u16, flags: u16, o: O) -> impl Fn(u32, u32) -> Vec<u8> {
    move |seq, _| {
        let mut buf = Vec::new();
        netlink::request(&mut buf, ty, flags, seq, o.family() as u8, |w| o.emit(w));
        buf
    }
}

pub fn rule(chain: &str, exprs: Vec<Expr>) -> Rule {
    Rule::new(F, T, chain, exprs)
}

pub fn accept(tag: &[u8]) -> Rule {
    Rule {
        userdata: Some(tag.to_vec()),
        ..rule("c", vec![Expr::counter(), Expr::verdict(Verdict::Accept)])
    }
}

pub fn jump(from: &str, to: &str) -> Rule {
    rule(from, vec![Expr::verdict(Verdict::Jump(to.into()))])
}

pub fn base_chain(name: &str, num: u32) -> Chain {
    Chain::base(F, T, name, "filter", num, 0, POLICY_ACCEPT)
}

pub fn addr(last: u8) -> Vec<u8> {
    vec![10, 0, 0, last]
}

pub fn set4(name: &str, id: u32, flags: u32) -> Set {
    Set {
        flags: Some(flags),
        key_type: Some(7),
        key_len: Some(4),
        id: Some(id),
        ..Set::new(F, T, name)
    }
}

pub fn elems(set: &str, e: Vec<SetElem>) -> SetElems {
    SetElems::new(F, T, set, e)
}

pub fn lookup(set: &str, id: Option<u32>, dreg: Option<u32>) -> Vec<Expr> {
    vec![
        Expr::load(base::NETWORK, 12, 4),
        Expr::Lookup {
            set: set.into(),
            set_id: id,
            sreg: reg::R1,
            dreg,
            flags: None,
        },
    ]
}

/// Moves a rule to another chain (the helpers build rules of `c`).
pub trait IntoChain {
    fn clone_into_chain(self, chain: &str) -> Rule;
}

impl IntoChain for Rule {
    fn clone_into_chain(self, chain: &str) -> Rule {
        Rule {
            chain: chain.into(),
            ..self
        }
    }
}
