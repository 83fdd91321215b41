//! Chains (`NFT_MSG_NEWCHAIN`/`DELCHAIN`/`GETCHAIN`, `NFTA_CHAIN_*`).

use crate::netlink::{Attrs, Tb, Writer};
use crate::{msg, Error, Family, Object};

const TABLE: u16 = 1;
const HANDLE: u16 = 2;
const NAME: u16 = 3;
const HOOK: u16 = 4;
const POLICY: u16 = 5;
const USE: u16 = 6;
const TYPE: u16 = 7;
const COUNTERS: u16 = 8;
const FLAGS: u16 = 10;
const ID: u16 = 11;
const USERDATA: u16 = 12;

const HOOK_HOOKNUM: u16 = 1;
const HOOK_PRIORITY: u16 = 2;
const HOOK_DEV: u16 = 3;
const COUNTER_BYTES: u16 = 1;
const COUNTER_PACKETS: u16 = 2;

/// Netfilter hook numbers (`NF_INET_*`).
pub mod hook {
    pub const PRE_ROUTING: u32 = 0;
    pub const LOCAL_IN: u32 = 1;
    pub const FORWARD: u32 = 2;
    pub const LOCAL_OUT: u32 = 3;
    pub const POST_ROUTING: u32 = 4;
    pub const INGRESS: u32 = 5;
}

/// Base-chain policies (`NF_DROP`, `NF_ACCEPT`).
pub const POLICY_DROP: u32 = 0;
pub const POLICY_ACCEPT: u32 = 1;
/// `NFT_CHAIN_BASE` (set by the kernel on base chains in dumps).
pub const F_BASE: u32 = 1;

/// Where a base chain attaches: hook number, priority (signed, lower runs
/// first; iptables' raw -300, mangle -150, dnat -100, filter 0, security 50,
/// snat 100) and, for netdev/ingress, the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hook {
    pub num: u32,
    pub priority: i32,
    pub dev: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chain {
    pub family: Family,
    pub table: String,
    pub name: String,
    pub handle: Option<u64>,
    /// `Some` for a base chain.
    pub hook: Option<Hook>,
    /// Base-chain policy (`POLICY_ACCEPT`/`POLICY_DROP`).
    pub policy: Option<u32>,
    /// Base-chain type: "filter", "nat" or "route".
    pub chain_type: Option<String>,
    /// (bytes, packets) of the base chain's policy counter.
    pub counters: Option<(u64, u64)>,
    pub flags: Option<u32>,
    /// Batch-local id so rules in the same batch can refer to a new chain.
    pub id: Option<u32>,
    pub userdata: Option<Vec<u8>>,
    /// Number of references (jumps) to this chain (read-only).
    pub use_count: Option<u32>,
}

impl Chain {
    /// A regular (user) chain.
    pub fn new(family: Family, table: &str, name: &str) -> Chain {
        Chain {
            family,
            table: table.to_string(),
            name: name.to_string(),
            ..Default::default()
        }
    }

    /// A base chain of type `ty` on `hooknum` at `priority` with `policy`.
    pub fn base(
        family: Family,
        table: &str,
        name: &str,
        ty: &str,
        hooknum: u32,
        priority: i32,
        policy: u32,
    ) -> Chain {
        Chain {
            hook: Some(Hook {
                num: hooknum,
                priority,
                dev: None,
            }),
            chain_type: Some(ty.to_string()),
            policy: Some(policy),
            ..Chain::new(family, table, name)
        }
    }
}

impl Object for Chain {
    const NEW: u16 = msg::NEWCHAIN;
    const DEL: u16 = msg::DELCHAIN;
    const GET: u16 = msg::GETCHAIN;

    fn family(&self) -> Family {
        self.family
    }

    fn emit(&self, w: &mut Writer) {
        if !self.table.is_empty() {
            w.put_str(TABLE, &self.table);
        }
        w.opt_be64(HANDLE, self.handle);
        if !self.name.is_empty() {
            w.put_str(NAME, &self.name);
        }
        if let Some(h) = &self.hook {
            let n = w.begin_nest(HOOK);
            w.put_be32(HOOK_HOOKNUM, h.num);
            w.put_be32(HOOK_PRIORITY, h.priority as u32);
            w.opt_str(HOOK_DEV, h.dev.as_deref());
            w.end_nest(n);
        }
        w.opt_be32(POLICY, self.policy);
        w.opt_str(TYPE, self.chain_type.as_deref());
        if let Some((bytes, packets)) = self.counters {
            let n = w.begin_nest(COUNTERS);
            w.put_be64(COUNTER_BYTES, bytes);
            w.put_be64(COUNTER_PACKETS, packets);
            w.end_nest(n);
        }
        w.opt_be32(FLAGS, self.flags);
        w.opt_be32(ID, self.id);
        w.opt_bytes(USERDATA, self.userdata.as_deref());
    }

    fn parse(family: Family, attrs: Attrs) -> Result<Chain, Error> {
        let t = Tb::parse(attrs)?;
        let hook = match t.get(HOOK) {
            Some(a) => {
                let h = Tb::parse(a.nested())?;
                Some(Hook {
                    num: h.be32(HOOK_HOOKNUM)?,
                    priority: h.be32(HOOK_PRIORITY)? as i32,
                    dev: h.opt_string(HOOK_DEV)?,
                })
            }
            None => None,
        };
        let counters = match t.get(COUNTERS) {
            Some(a) => {
                let c = Tb::parse(a.nested())?;
                Some((c.be64(COUNTER_BYTES)?, c.be64(COUNTER_PACKETS)?))
            }
            None => None,
        };
        Ok(Chain {
            family,
            table: t.opt_string(TABLE)?.unwrap_or_default(),
            name: t.opt_string(NAME)?.unwrap_or_default(),
            handle: t.opt_be64(HANDLE)?,
            hook,
            policy: t.opt_be32(POLICY)?,
            chain_type: t.opt_string(TYPE)?,
            counters,
            flags: t.opt_be32(FLAGS)?,
            id: t.opt_be32(ID)?,
            userdata: t.opt_bytes(USERDATA),
            use_count: t.opt_be32(USE)?,
        })
    }
}
