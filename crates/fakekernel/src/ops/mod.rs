//! The prepare phase of a batch: one handler per message type, each doing
//! what its `nf_tables_new*`/`nf_tables_del*` does to the working ruleset
//! and appending its transactions — the same checks in the same order, so
//! that the same errno comes back, and (as in the kernel) whatever a
//! failing message did before its check stays done for the rest of the
//! batch, which is aborted anyway.

mod chain;
mod elem;
mod rule;
mod set;
mod table;

pub use elem::find as find_elem;

use nft::netlink::Attrs;
use nft::{msg, Family, Object};

use crate::errno::*;
use crate::model::Ruleset;
use crate::txn::{Ctx, Txn};

/// `NFT_MSG_DESTROY*` (as `DEL*`, but absent objects are no error).
pub mod destroy {
    pub const TABLE: u16 = 26;
    pub const CHAIN: u16 = 27;
    pub const RULE: u16 = 28;
    pub const SET: u16 = 29;
    pub const SETELEM: u16 = 30;
}

/// A handler's result: `Err` carries a positive errno.
pub type Res = Result<(), i32>;

/// What a handler works on.
pub struct Prep<'a> {
    pub rs: &'a mut Ruleset,
    pub txn: &'a mut Txn,
    /// The kernel-wide table handle counter (the last one given out).
    pub table_handles: &'a mut u64,
}

/// Largest name of a table, chain or set, bytes (`NFT_NAME_MAXLEN` - 1).
pub const NAME_MAX: usize = 255;
/// Largest userdata, bytes (`NFT_USERDATA_MAXLEN`).
pub const USERDATA_MAX: usize = 256;

/// Attribute policy checks shared by the handlers: an over-long string or
/// userdata is `ERANGE`.
pub fn check_len(name: &str, userdata: Option<&[u8]>) -> Res {
    if name.len() > NAME_MAX || userdata.is_some_and(|u| u.len() > USERDATA_MAX) {
        return Err(ERANGE);
    }
    Ok(())
}

/// Applies one batch message of type `ty` (`NFT_MSG_*`).
pub fn dispatch(p: &mut Prep, ctx: Ctx, ty: u16, attrs: Attrs) -> Res {
    let fam = ctx.family;
    match ty {
        msg::NEWTABLE => table::new(p, ctx, parse(fam, attrs)?),
        msg::DELTABLE => table::del(p, ctx, parse(fam, attrs)?, false),
        destroy::TABLE => table::del(p, ctx, parse(fam, attrs)?, true),
        msg::NEWCHAIN => chain::new(p, ctx, parse(fam, attrs)?),
        msg::DELCHAIN => chain::del(p, ctx, parse(fam, attrs)?, false),
        destroy::CHAIN => chain::del(p, ctx, parse(fam, attrs)?, true),
        msg::NEWRULE => rule::new(p, ctx, parse(fam, attrs)?),
        msg::DELRULE => rule::del(p, ctx, parse(fam, attrs)?, false),
        destroy::RULE => rule::del(p, ctx, parse(fam, attrs)?, true),
        msg::NEWSET => set::new(p, ctx, parse(fam, attrs)?),
        msg::DELSET => set::del(p, ctx, parse(fam, attrs)?, false),
        destroy::SET => set::del(p, ctx, parse(fam, attrs)?, true),
        msg::NEWSETELEM => elem::new(p, ctx, parse(fam, attrs)?),
        msg::DELSETELEM => elem::del(p, ctx, parse(fam, attrs)?, false),
        destroy::SETELEM => elem::del(p, ctx, parse(fam, attrs)?, true),
        // Requests in a batch have no batch handler: nothing happens.
        msg::GETTABLE
        | msg::GETCHAIN
        | msg::GETRULE
        | msg::GETSET
        | msg::GETSETELEM
        | msg::GETGEN => Ok(()),
        // Objects and flowtables are not modelled.
        _ => Err(EOPNOTSUPP),
    }
}

/// Parses a message body; malformed attributes are `EINVAL`.
fn parse<O: Object>(family: Family, attrs: Attrs) -> Result<O, i32> {
    O::parse(family, attrs).map_err(|_| EINVAL)
}

/// A missing object: `ENOENT`, or nothing for a `DESTROY*`.
fn absent(destroy: bool) -> Res {
    if destroy {
        Ok(())
    } else {
        Err(ENOENT)
    }
}

/// The table a message names (`nft_table_lookup`): no name is `EINVAL`,
/// no such table `ENOENT`.
fn table_of(rs: &Ruleset, family: Family, name: &str) -> Result<usize, i32> {
    if name.is_empty() {
        return Err(EINVAL);
    }
    rs.table(family, name).ok_or(ENOENT)
}
