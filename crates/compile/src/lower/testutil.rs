//! Helpers shared by the lowering unit tests (matches and targets): run a
//! lowering on a fresh [`Cx`] and build the expressions it should produce.

use crate::lower::{AnonSet, Cx, Result, RuleObject};
use iptables::ext::targets::snat::NatRange;
use iptables::rule::inv;
use iptables::Rule;
use nft::expr::{base, reg, CmpOp};
use nft::{Data, Expr};
use ruleset::{Family, TableKind};

/// Run `f` on a fresh context of `family` for `rule`; the expressions and
/// sets it produced, or its error.
fn run_rule(
    family: Family,
    rule: &Rule,
    f: impl FnOnce(&mut Cx) -> Result<()>,
) -> Result<(Vec<Expr>, Vec<AnonSet>)> {
    let mut cx = Cx::new(family, TableKind::Filter, "INPUT", rule);
    f(&mut cx)?;
    Ok((cx.out, cx.sets))
}

/// Run `f` on a fresh context of `family` (no `-p`); the expressions and
/// the named objects it produced (it must produce no sets), or its error.
pub fn run_objects(
    family: Family,
    f: impl FnOnce(&mut Cx) -> Result<()>,
) -> Result<(Vec<Expr>, Vec<RuleObject>)> {
    let rule = Rule::default();
    let mut cx = Cx::new(family, TableKind::Filter, "INPUT", &rule);
    f(&mut cx)?;
    assert!(cx.sets.is_empty());
    Ok((cx.out, cx.objects))
}

/// Run `f` on a fresh context of `family` (no `-p`); the expressions it
/// produced (it must produce no sets), or its error.
pub fn run(family: Family, f: impl FnOnce(&mut Cx) -> Result<()>) -> Result<Vec<Expr>> {
    let (out, sets) = run_rule(family, &Rule::default(), f)?;
    assert!(sets.is_empty());
    Ok(out)
}

/// Run `f` on a fresh context of `family` whose header has `-p proto`
/// (0: none); the expressions and sets it produced, or its error.
pub fn run_proto(
    family: Family,
    proto: u8,
    f: impl FnOnce(&mut Cx) -> Result<()>,
) -> Result<(Vec<Expr>, Vec<AnonSet>)> {
    let rule = Rule {
        proto,
        ..Default::default()
    };
    run_rule(family, &rule, f)
}

/// Like [`run_proto`] with an inverted `! -p proto`; the expressions (`f`
/// must succeed).
pub fn run_inv_proto(
    family: Family,
    proto: u8,
    f: impl FnOnce(&mut Cx) -> Result<()>,
) -> Vec<Expr> {
    let rule = Rule {
        proto,
        inv: inv::PROTO,
        ..Default::default()
    };
    run_rule(family, &rule, f).unwrap().0
}

pub fn load(b: u32, offset: u32, len: u32) -> Expr {
    Expr::load(b, offset, len)
}
pub fn th(offset: u32, len: u32) -> Expr {
    load(base::TRANSPORT, offset, len)
}
pub fn nh(offset: u32, len: u32) -> Expr {
    load(base::NETWORK, offset, len)
}
pub fn meta(key: u32) -> Expr {
    Expr::Meta { key, dreg: reg::R1 }
}
pub fn meta_set(key: u32) -> Expr {
    Expr::MetaSet { key, sreg: reg::R1 }
}
pub fn ct(key: u32, dir: Option<u8>) -> Expr {
    Expr::Ct {
        key,
        dreg: reg::R1,
        dir,
    }
}
pub fn ct_set(key: u32, dir: Option<u8>) -> Expr {
    Expr::CtSet {
        key,
        sreg: reg::R1,
        dir,
    }
}
pub fn cmp(op: CmpOp, data: &[u8]) -> Expr {
    Expr::Cmp {
        sreg: reg::R1,
        op,
        data: data.to_vec(),
    }
}
pub fn eq(data: &[u8]) -> Expr {
    cmp(CmpOp::Eq, data)
}
pub fn ne(data: &[u8]) -> Expr {
    cmp(CmpOp::Neq, data)
}
pub fn range(from: &[u8], to: &[u8], neq: bool) -> Expr {
    Expr::Range {
        sreg: reg::R1,
        neq,
        from: from.to_vec(),
        to: to.to_vec(),
    }
}
/// `reg1 &= m` (xor 0), as many bytes as `m`.
pub fn mask(m: &[u8]) -> Expr {
    Expr::Bitwise {
        sreg: reg::R1,
        dreg: reg::R1,
        len: m.len() as u32,
        mask: m.to_vec(),
        xor: vec![0; m.len()],
    }
}
/// `reg1 = (reg1 & and) ^ xor` on a host-order u32.
pub fn bitwise(and: u32, xor: u32) -> Expr {
    Expr::Bitwise {
        sreg: reg::R1,
        dreg: reg::R1,
        len: 4,
        mask: and.to_ne_bytes().to_vec(),
        xor: xor.to_ne_bytes().to_vec(),
    }
}
/// Host-order u32 bytes.
pub fn ne32(v: u32) -> [u8; 4] {
    v.to_ne_bytes()
}
/// `exthdr` load of `len` bytes at `offset` of header/option `ty` into
/// register 1.
pub fn exthdr(op: u32, ty: u8, offset: u32, len: u32) -> Expr {
    Expr::Exthdr(nft::expr::Exthdr {
        dreg: reg::R1,
        op,
        ty,
        offset,
        len,
        flags: 0,
    })
}
/// `exthdr` presence test of header/option `ty` into register 1.
pub fn exthdr_present(op: u32, ty: u8) -> Expr {
    Expr::Exthdr(nft::expr::Exthdr {
        dreg: reg::R1,
        op,
        ty,
        offset: 0,
        len: 1,
        flags: nft::expr::exthdr::F_PRESENT,
    })
}
/// `reg1 = reg1 >> amount` (`right`) or `<< amount`, one 32-bit word.
pub fn shift(right: bool, amount: u32) -> Expr {
    Expr::Shift(nft::expr::Shift {
        sreg: reg::R1,
        dreg: reg::R1,
        len: 4,
        right,
        amount,
    })
}
/// `byteorder` hton of a u32 in register 1.
pub fn hton() -> Expr {
    Expr::Byteorder(nft::expr::Byteorder {
        sreg: reg::R1,
        dreg: reg::R1,
        op: nft::expr::byteorder::HTON,
        len: 4,
        size: 4,
    })
}
/// `data` into register `r`.
pub fn imm(r: u32, data: &[u8]) -> Expr {
    Expr::Immediate {
        dreg: r,
        data: Data::Value(data.to_vec()),
    }
}
/// A NAT range: flags, v4 or v6 address text (min, max; "" for none), ports.
pub fn nat_range(flags: u8, addrs: (&str, &str), ports: (u16, u16)) -> NatRange {
    let addr = |s: &str| {
        let mut a = [0u8; 16];
        if s.contains(':') {
            a = s.parse::<std::net::Ipv6Addr>().unwrap().octets();
        } else if !s.is_empty() {
            a[..4].copy_from_slice(&s.parse::<std::net::Ipv4Addr>().unwrap().octets());
        }
        a
    };
    NatRange {
        flags,
        min_addr: addr(addrs.0),
        max_addr: addr(addrs.1),
        min_port: ports.0,
        max_port: ports.1,
        base_port: 0,
    }
}

/// A catalog of ipsets made of `ipset create` lines (through the ipset
/// model), as the lowering of `-m set` and `-j SET` sees them; the name
/// `kset` is a kernel ipset (index 7).
pub struct Catalog(std::collections::HashMap<String, ipset::model::Header>);

impl Catalog {
    pub fn of(creates: &[&str]) -> Catalog {
        let mut store = ipset::model::Store::new();
        let mut m = ipset::exec::NoMirror;
        let mut ctx = ipset::exec::Ctx {
            store: &mut store,
            mirror: &mut m,
            now: 0,
        };
        let mut out = std::collections::HashMap::new();
        for c in creates {
            let w: Vec<&str> = c.split_whitespace().collect();
            let o = ipset::exec::run(&mut ctx, &w, None);
            assert_eq!(o.code, 0, "{c}: {}", o.stderr);
            out.insert(
                w[1].to_string(),
                ctx.store.get(w[1]).unwrap().header.clone(),
            );
        }
        Catalog(out)
    }
}

impl crate::lower::Ipsets for Catalog {
    fn info(&self, name: &str) -> crate::lower::IpsetInfo<'_> {
        match self.0.get(name) {
            Some(h) => crate::lower::IpsetInfo::Ours(h),
            None if name == "kset" => crate::lower::IpsetInfo::Kernel(7),
            None => crate::lower::IpsetInfo::Missing,
        }
    }
}
