//! `-m pkttype`: placeholder until implemented (SUPPORTED = false, so the
//! registry treats it as unknown and rules using it are rejected).

use crate::error::Result;
use crate::ext::{Call, Ext, Fam, OptDef, ParseCtx, PrintCtx};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pkttype;

impl Ext for Pkttype {
    const NAME: &'static str = "pkttype";
    const FAMILY: Fam = Fam::Both;
    const SUPPORTED: bool = false;
    const OPTS: &'static [OptDef] = &[];

    fn new(_: &ParseCtx) -> Self {
        Pkttype
    }

    fn parse(&mut self, _: &mut Call) -> Result<()> {
        Ok(())
    }

    fn save(&self, _: &PrintCtx, _: &mut String) {}

    fn list(&self, _: &PrintCtx, _: &mut String) {}
}
