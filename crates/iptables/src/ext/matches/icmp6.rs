//! `-m icmp6`: placeholder until implemented (SUPPORTED = false, so the
//! registry treats it as unknown and rules using it are rejected).

use crate::error::Result;
use crate::ext::{Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Icmp6;

impl Ext for Icmp6 {
    const NAME: &'static str = "icmp6";
    const FAMILY: Fam = Fam::V6;
    const SUPPORTED: bool = false;
    const OPTS: &'static [OptDef] = &[];

    fn new(_: &ParseCtx) -> Self {
        Icmp6
    }

    fn parse(&mut self, _: &mut Call) -> Result<()> {
        Ok(())
    }

    fn save(&self, _: &PrintCtx, _: &mut String) {}

    fn list(&self, _: &PrintCtx, _: &mut String) {}
}
