//! The ruleset generation (`NFT_MSG_GETGEN` → `NFT_MSG_NEWGEN`, `NFTA_GEN_*`).
//!
//! The generation id increases by one with every successful commit in the
//! network namespace. A batch that carries it (`NFNL_BATCH_GENID`) is
//! refused with `ERESTART` if anyone committed in between.

use crate::netlink::{Attrs, Tb, Writer};
use crate::{msg, Error, Family, Object};

const ID: u16 = 1;
const PROC_PID: u16 = 2;
const PROC_NAME: u16 = 3;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gen {
    pub id: u32,
    /// Pid and name of the process that made the last commit.
    pub proc_pid: Option<u32>,
    pub proc_name: Option<String>,
}

impl Object for Gen {
    const NEW: u16 = msg::NEWGEN;
    const DEL: u16 = msg::NEWGEN;
    const GET: u16 = msg::GETGEN;

    fn family(&self) -> Family {
        Family::Unspec
    }

    fn emit(&self, w: &mut Writer) {
        w.put_be32(ID, self.id);
        w.opt_be32(PROC_PID, self.proc_pid);
        w.opt_str(PROC_NAME, self.proc_name.as_deref());
    }

    fn parse(_family: Family, attrs: Attrs) -> Result<Gen, Error> {
        let t = Tb::parse(attrs)?;
        Ok(Gen {
            id: t.be32(ID)?,
            proc_pid: t.opt_be32(PROC_PID)?,
            proc_name: t.opt_string(PROC_NAME)?,
        })
    }
}
