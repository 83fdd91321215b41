//! Lowering of `-j SECMARK --selctx CTX` (xt_SECMARK.c): an `objref` of a
//! secmark object holding the context (nft's `meta secmark set "name"`).
//! Both map the context to a secid once, when the rule (object) is loaded,
//! with the same permission check, and set it on every packet the rule
//! sees (`skb->secmark = secid`).
//!
//! The object is one of the rule's [`RuleObject`]s, named after its
//! context (see [`object`]).

use crate::lower::{Cx, Result, RuleObject};
use iptables::ext::targets::secmark::Secmark;
use nft::expr::objref::ObjData;

/// Prefix of the secmark objects' names.
pub const PREFIX: &str = "__nfk_secmark_";

/// The kernel's limit on object names (`NFT_OBJ_MAXNAMELEN`, NUL included).
const NAME_MAX: usize = 255;

/// The secmark object of context `ctx`: named `PREFIX` + the context when
/// that fits the kernel's limit, else `PREFIX` + `#` + the context's
/// 128-bit FNV-1a hash in hex (a context is at most 255 bytes).
pub fn object(ctx: &str) -> RuleObject {
    let name = if PREFIX.len() + ctx.len() <= NAME_MAX {
        format!("{PREFIX}{ctx}")
    } else {
        format!("{PREFIX}#{:032x}", fnv1a_128(ctx.as_bytes()))
    };
    RuleObject {
        name,
        data: ObjData::Secmark {
            ctx: ctx.to_string(),
        },
    }
}

/// FNV-1a, 128-bit (offset basis and prime from the FNV specification).
fn fnv1a_128(bytes: &[u8]) -> u128 {
    const BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes
        .iter()
        .fold(BASIS, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}

pub fn lower(t: &Secmark, cx: &mut Cx) -> Result<()> {
    cx.objref(object(&t.selctx));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::testutil::run_objects;
    use nft::expr::objref::obj_type;
    use nft::expr::Objref;
    use nft::Expr;
    use ruleset::Family;

    #[test]
    fn forms() {
        let ctx = "system_u:object_r:ssh_packet_t:s0";
        let t = Secmark { selctx: ctx.into() };
        let (exprs, objects) = run_objects(Family::Ipv4, |cx| lower(&t, cx)).unwrap();
        let name = format!("__nfk_secmark_{ctx}");
        assert_eq!(
            exprs,
            vec![Expr::Objref(Objref {
                ty: obj_type::SECMARK,
                name: name.clone()
            })]
        );
        assert_eq!(
            objects,
            vec![RuleObject {
                name,
                data: ObjData::Secmark { ctx: ctx.into() }
            }]
        );
    }

    #[test]
    fn names() {
        // Fits: the context itself; too long: the hash, stable and distinct.
        let fits = "a".repeat(NAME_MAX - PREFIX.len());
        assert_eq!(object(&fits).name, format!("{PREFIX}{fits}"));
        let long_a = "a".repeat(255);
        let long_b = format!("{}b", "a".repeat(254));
        let (a, b) = (object(&long_a).name, object(&long_b).name);
        assert!(a.starts_with("__nfk_secmark_#") && a.len() == PREFIX.len() + 33);
        assert_ne!(a, b);
        assert_eq!(a, object(&long_a).name);
        // The FNV-1a 128 test vectors: "" and "a".
        assert_eq!(fnv1a_128(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(fnv1a_128(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
    }
}
