//! The naive reference model for the differential test: chains as `Vec`s of
//! rules, every query a linear scan, loops found by a plain DFS over rules.

use super::*;

#[derive(Clone, Debug)]
pub(super) struct MChain {
    pub(super) name: String,
    pub(super) builtin: Option<(Policy, Counters)>,
    pub(super) rules: Vec<(RuleId, B, Counters)>,
}

#[derive(Clone, Debug)]
pub(super) struct Model {
    pub(super) chains: Vec<Option<MChain>>,
    pub(super) next_id: u64,
}

impl Model {
    pub(super) fn new() -> Self {
        let chains = TableKind::Filter
            .builtin_chains()
            .iter()
            .map(|n| {
                Some(MChain {
                    name: n.to_string(),
                    builtin: Some((Policy::Accept, Counters::default())),
                    rules: Vec::new(),
                })
            })
            .collect();
        Model { chains, next_id: 1 }
    }

    pub(super) fn observe(&self) -> (Obs, u64) {
        let refs = |name: &str| {
            self.chains
                .iter()
                .flatten()
                .flat_map(|c| &c.rules)
                .filter(|r| r.1.jump.as_deref() == Some(name))
                .count() as u32
        };
        let mut order: Vec<usize> = (0..self.chains.len())
            .filter(|&i| self.chains[i].is_some())
            .collect();
        order.sort_by_key(|&i| {
            let c = self.chains[i].as_ref().unwrap();
            (
                c.builtin.is_none(),
                if c.builtin.is_some() {
                    String::new()
                } else {
                    c.name.clone()
                },
                i,
            )
        });
        let obs = order
            .into_iter()
            .map(|i| {
                let c = self.chains[i].as_ref().unwrap();
                (
                    i as u32,
                    c.name.clone(),
                    c.builtin.map(|b| b.0),
                    c.builtin.map(|b| b.1).unwrap_or_default(),
                    refs(&c.name),
                    c.rules.clone(),
                )
            })
            .collect();
        (obs, self.next_id)
    }

    pub(super) fn find(&self, name: &str) -> Result<usize, Error> {
        self.chains
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.name == name))
            .ok_or(Error::NoSuchChain)
    }

    pub(super) fn ch(&mut self, i: usize) -> &mut MChain {
        self.chains[i].as_mut().unwrap()
    }

    /// The kernel's rule: refuse the jump if, with it, a cycle is reachable
    /// from a built-in chain (a plain colouring DFS over all rules).
    pub(super) fn check_jump(&self, ci: usize, body: &B) -> Result<(), Error> {
        let Some(t) = &body.jump else { return Ok(()) };
        let ti = self.find(t).map_err(|_| Error::NoSuchTarget(t.clone()))?;
        let n = self.chains.len();
        let mut adj = vec![Vec::new(); n];
        for (i, c) in self.chains.iter().enumerate() {
            for r in c.iter().flat_map(|c| &c.rules) {
                if let Some(j) = &r.1.jump {
                    adj[i].push(self.find(j).unwrap());
                }
            }
        }
        adj[ci].push(ti);
        fn on_cycle(v: usize, adj: &[Vec<usize>], state: &mut [u8]) -> bool {
            state[v] = 1;
            for &w in &adj[v] {
                if state[w] == 1 || (state[w] == 0 && on_cycle(w, adj, state)) {
                    return true;
                }
            }
            state[v] = 2;
            false
        }
        let mut state = vec![0u8; n];
        for i in 0..n {
            let builtin = self.chains[i].as_ref().is_some_and(|c| c.builtin.is_some());
            if builtin && state[i] == 0 && on_cycle(i, &adj, &mut state) {
                return Err(Error::Loop);
            }
        }
        Ok(())
    }

    pub(super) fn id(&mut self) -> RuleId {
        self.next_id += 1;
        RuleId(self.next_id - 1)
    }

    pub(super) fn add(
        &mut self,
        chain: &str,
        pos: Option<usize>,
        body: B,
        cs: Counters,
    ) -> Result<RuleId, Error> {
        let ci = self.find(chain)?;
        let len = self.ch(ci).rules.len();
        let at = match pos {
            None => len,
            Some(p) if p >= 1 && p <= len + 1 => p - 1,
            Some(_) => return Err(Error::IndexOutOfRange),
        };
        self.check_jump(ci, &body)?;
        let id = self.id();
        self.ch(ci).rules.insert(at, (id, body, cs));
        Ok(id)
    }

    pub(super) fn append_with_id(
        &mut self,
        chain: &str,
        id: RuleId,
        body: B,
        cs: Counters,
    ) -> Result<RuleId, Error> {
        let ci = self.find(chain)?;
        self.check_jump(ci, &body)?;
        let used = self
            .chains
            .iter()
            .flatten()
            .flat_map(|c| &c.rules)
            .any(|r| r.0 == id);
        let id = if id.0 == 0 || used {
            self.id()
        } else {
            self.next_id = self.next_id.max(id.0 + 1);
            id
        };
        self.ch(ci).rules.push((id, body, cs));
        Ok(id)
    }

    pub(super) fn replace(
        &mut self,
        chain: &str,
        pos: usize,
        body: B,
        cs: Counters,
    ) -> Result<RuleId, Error> {
        let ci = self.find(chain)?;
        if pos == 0 || pos > self.ch(ci).rules.len() {
            return Err(Error::IndexOutOfRange);
        }
        self.check_jump(ci, &body)?;
        let id = self.id();
        self.ch(ci).rules[pos - 1] = (id, body, cs);
        Ok(id)
    }

    pub(super) fn delete_at(&mut self, chain: &str, pos: usize) -> Result<RuleId, Error> {
        let ci = self.find(chain)?;
        if pos == 0 || pos > self.ch(ci).rules.len() {
            return Err(Error::IndexOutOfRange);
        }
        Ok(self.ch(ci).rules.remove(pos - 1).0)
    }

    pub(super) fn delete_spec(&mut self, chain: &str, body: &B) -> Result<RuleId, Error> {
        let ci = self.find(chain)?;
        let at = self
            .ch(ci)
            .rules
            .iter()
            .position(|r| r.1 == *body)
            .ok_or(Error::NoSuchRule)?;
        Ok(self.ch(ci).rules.remove(at).0)
    }

    pub(super) fn find_spec(
        &self,
        chain: &str,
        body: &B,
    ) -> Result<Option<(usize, RuleId)>, Error> {
        let ci = self.find(chain)?;
        let rules = &self.chains[ci].as_ref().unwrap().rules;
        Ok(rules
            .iter()
            .position(|r| r.1 == *body)
            .map(|at| (at + 1, rules[at].0)))
    }

    pub(super) fn new_chain(&mut self, name: &str) -> Result<ChainId, Error> {
        if self.find(name).is_ok() {
            return Err(Error::ChainExists);
        }
        self.chains.push(Some(MChain {
            name: name.to_string(),
            builtin: None,
            rules: Vec::new(),
        }));
        Ok(ChainId(self.chains.len() as u32 - 1))
    }

    pub(super) fn refs(&self, name: &str) -> usize {
        self.chains
            .iter()
            .flatten()
            .flat_map(|c| &c.rules)
            .filter(|r| r.1.jump.as_deref() == Some(name))
            .count()
    }

    pub(super) fn deletable(&self, ci: usize) -> Result<(), Error> {
        let c = self.chains[ci].as_ref().unwrap();
        if c.builtin.is_some() {
            Err(Error::BuiltinChain)
        } else if self.refs(&c.name) > 0 {
            Err(Error::ChainInUse)
        } else if !c.rules.is_empty() {
            Err(Error::ChainNotEmpty)
        } else {
            Ok(())
        }
    }

    pub(super) fn delete_chain(&mut self, name: &str) -> Result<(), Error> {
        let ci = self.find(name)?;
        self.deletable(ci)?;
        self.chains[ci] = None;
        Ok(())
    }

    pub(super) fn delete_user_chains(&mut self) -> Result<(), Error> {
        let mut user: Vec<usize> = (0..self.chains.len())
            .filter(|&i| self.chains[i].as_ref().is_some_and(|c| c.builtin.is_none()))
            .collect();
        user.sort_by_key(|&i| self.chains[i].as_ref().unwrap().name.clone());
        for &i in &user {
            self.deletable(i)?;
        }
        for i in user {
            self.chains[i] = None;
        }
        Ok(())
    }

    pub(super) fn rename(&mut self, old: &str, new: &str) -> Result<(), Error> {
        let ci = self.find(old)?;
        if self.ch(ci).builtin.is_some() {
            return Err(Error::BuiltinChain);
        }
        if self.find(new).is_ok() {
            return Err(Error::ChainExists);
        }
        self.ch(ci).name = new.to_string();
        for c in self.chains.iter_mut().flatten() {
            for r in &mut c.rules {
                if r.1.jump.as_deref() == Some(old) {
                    r.1.jump = Some(new.to_string());
                }
            }
        }
        Ok(())
    }

    pub(super) fn set_policy(
        &mut self,
        chain: &str,
        p: Policy,
        cs: Option<Counters>,
    ) -> Result<(), Error> {
        let ci = self.find(chain)?;
        let (_, old) = self.ch(ci).builtin.ok_or(Error::BuiltinChain)?;
        self.ch(ci).builtin = Some((p, cs.unwrap_or(old)));
        Ok(())
    }

    pub(super) fn zero(&mut self, chain: Option<&str>, pos: Option<usize>) -> Result<(), Error> {
        let cis: Vec<usize> = match (chain, pos) {
            (None, Some(_)) => return Err(Error::IndexOutOfRange),
            (Some(n), Some(p)) => {
                let ci = self.find(n)?;
                let rules = &mut self.ch(ci).rules;
                if p == 0 || p > rules.len() {
                    return Err(Error::IndexOutOfRange);
                }
                rules[p - 1].2 = Counters::default();
                return Ok(());
            }
            (Some(n), None) => vec![self.find(n)?],
            (None, None) => (0..self.chains.len())
                .filter(|&i| self.chains[i].is_some())
                .collect(),
        };
        for ci in cis {
            let ch = self.ch(ci);
            if let Some((p, _)) = ch.builtin {
                ch.builtin = Some((p, Counters::default()));
            }
            for r in &mut ch.rules {
                r.2 = Counters::default();
            }
        }
        Ok(())
    }

    pub(super) fn set_rule_counters(
        &mut self,
        chain: &str,
        pos: usize,
        cs: Counters,
    ) -> Result<(), Error> {
        let ci = self.find(chain)?;
        let rules = &mut self.ch(ci).rules;
        if pos == 0 || pos > rules.len() {
            return Err(Error::IndexOutOfRange);
        }
        rules[pos - 1].2 = cs;
        Ok(())
    }
}
