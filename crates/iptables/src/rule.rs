//! The structured iptables rule: the IP header part (`-s -d -i -o -p -f`),
//! the ordered matches, and the target.
//!
//! A `Rule` is canonical: parsing normalises everything that prints the same
//! (e.g. `-p 6` and `-p tcp`), so `Eq`/`Hash` are "same rule" for -D/-C.
//! Size: 152 bytes for a rule without matches and with a built-in verdict;
//! matches and extension targets live on the heap.

use crate::ext::{Match, TargetExt};

/// An address with its mask, network byte order. IPv4 uses the first 4 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Addr {
    pub addr: [u8; 16],
    pub mask: [u8; 16],
}

impl Addr {
    /// Matches every address (`0.0.0.0/0`, `::/0`).
    pub fn is_any(&self) -> bool {
        self.mask == [0; 16]
    }
}

/// An interface name as iptables stores it: up to 15 bytes, NUL padded; a
/// trailing '+' makes it a prefix match; empty means any interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Iface {
    name: [u8; 16],
}

impl Iface {
    /// `None` if longer than 15 bytes.
    pub fn new(s: &str) -> Option<Iface> {
        let b = s.as_bytes();
        if b.len() >= 16 {
            return None;
        }
        let mut name = [0u8; 16];
        name[..b.len()].copy_from_slice(b);
        Some(Iface { name })
    }
    pub fn as_str(&self) -> &str {
        let len = self.name.iter().position(|&c| c == 0).unwrap_or(16);
        // Built only from &str, so valid UTF-8 up to the first NUL.
        std::str::from_utf8(&self.name[..len]).unwrap_or("")
    }
    pub fn is_empty(&self) -> bool {
        self.name[0] == 0
    }
}

/// Inversion flags of the header part (`!` before the option).
pub mod inv {
    pub const SRC: u8 = 1;
    pub const DST: u8 = 2;
    pub const IN: u8 = 4;
    pub const OUT: u8 = 8;
    pub const PROTO: u8 = 16;
    pub const FRAG: u8 = 32;
}

/// What the rule does when it matches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// No `-j`: the rule only counts.
    #[default]
    None,
    Accept,
    Drop,
    Return,
    /// `-j CHAIN`
    Jump(Box<str>),
    /// `-g CHAIN`
    Goto(Box<str>),
    /// A target extension (`-j LOG ...`).
    Ext(Box<TargetExt>),
}

impl Target {
    /// The name printed after `-j`/`-g` or in the target column of `-L`.
    pub fn name(&self) -> &str {
        match self {
            Target::None => "",
            Target::Accept => "ACCEPT",
            Target::Drop => "DROP",
            Target::Return => "RETURN",
            Target::Jump(c) | Target::Goto(c) => c,
            Target::Ext(t) => t.name(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rule {
    pub src: Addr,
    pub dst: Addr,
    pub iniface: Iface,
    pub outiface: Iface,
    /// Layer-4 protocol number; 0 = any.
    pub proto: u8,
    /// IPv4 `-f`: second and further fragments only.
    pub frag: bool,
    /// Bits from [`inv`].
    pub inv: u8,
    pub matches: Vec<Match>,
    pub target: Target,
}

impl Rule {
    pub fn inverted(&self, bit: u8) -> bool {
        self.inv & bit != 0
    }
}

impl ruleset::RuleBody for Rule {
    fn jump_target(&self) -> Option<&str> {
        match &self.target {
            Target::Jump(c) | Target::Goto(c) => Some(c),
            _ => None,
        }
    }
    fn retarget(&mut self, new_chain: &str) {
        match &mut self.target {
            Target::Jump(c) | Target::Goto(c) => *c = new_chain.into(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_stay_small() {
        // The per-rule memory budget (BRIEF: < 400 bytes/rule at 1M rules)
        // starts here; growing Rule must be a decision, not an accident.
        assert!(
            std::mem::size_of::<Rule>() <= 160,
            "{}",
            std::mem::size_of::<Rule>()
        );
        assert!(std::mem::size_of::<Target>() <= 24);
    }

    #[test]
    fn parsed_rules_hold_no_spare_match_capacity() {
        // A rule lives as long as the model; spare capacity in its match
        // list is paid once per rule (it was 3 spare `Match`es per
        // one-match rule, ~75% of a warm daemon's heap).
        for line in [
            "-A X -p tcp -m tcp --dport 80 -j ACCEPT",
            "-A X -p tcp -m tcp --dport 80 -m comment --comment c -m mark --mark 1 -j ACCEPT",
            "-A X -s 10.0.0.1 -j DROP",
        ] {
            let words: Vec<&str> = line.split(' ').collect();
            let o = crate::parse::ParseOpts {
                family: ruleset::Family::Ipv4,
                restore: true,
                table: Some(ruleset::TableKind::Filter),
                prog: "iptables",
            };
            let p = crate::parse::parse(&words, o).expect(line);
            for r in &p.rules {
                assert_eq!(r.matches.capacity(), r.matches.len(), "{line}");
            }
        }
    }
}
