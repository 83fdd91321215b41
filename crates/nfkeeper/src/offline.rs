//! The offline backend: the ruleset lives in an iptables-save file
//! (NFKEEPER_OFFLINE_STATE + ".4"/".6") that each command loads, changes and
//! writes back. For using and testing the syntax without a kernel; it is not
//! a cache of the kernel and never touches it.

use iptables::exec::{self, restore, RestoreError, RestoreOpts, RestoreStats};
use iptables::parse::{Command, Parsed};
use iptables::tool::{completed_line, generated_line, Backend};
use iptables::{Error, Rule};
use keeper::state::SAVE_ORDER;
use ruleset::{Family, Ruleset, TableKind};
use std::path::{Path, PathBuf};

pub struct State {
    rs: Ruleset<Rule>,
    /// Tables that exist (were restored or written to), like tables that
    /// exist in the kernel: save prints only those.
    present: Vec<TableKind>,
    path: PathBuf,
    family: Family,
}

impl State {
    /// The state kept at `base` + `.4`/`.6`.
    pub fn load(family: Family, base: &Path) -> Result<State, String> {
        let mut p = base.as_os_str().to_owned();
        p.push(if family == Family::Ipv4 { ".4" } else { ".6" });
        let mut st = State {
            rs: Ruleset::new(),
            present: Vec::new(),
            path: PathBuf::from(p),
            family,
        };
        let path = &st.path;
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("nfkeeper: can't read {}: {e}", path.display())),
        };
        for line in text.lines() {
            if let Some(t) = line.strip_prefix('*').and_then(TableKind::from_name) {
                if !st.present.contains(&t) {
                    st.present.push(t);
                }
            }
        }
        let o = RestoreOpts {
            family,
            noflush: false,
            counters: true,
            test: false,
            table: None,
            prog: "nfkeeper",
        };
        restore(&mut st.rs, &text, &o).map_err(|e| {
            format!(
                "nfkeeper: offline state {} is corrupt: {}",
                st.path.display(),
                e.render("state")
            )
        })?;
        Ok(st)
    }

    fn touch(&mut self, t: TableKind) {
        if !self.present.contains(&t) {
            self.present.push(t);
        }
    }

    /// Save text of the tables present (with `only`: that one, present or
    /// not), with the comment lines when `prog` is given.
    pub fn save_text(&self, counters: bool, only: Option<TableKind>, prog: Option<&str>) -> String {
        let mut out = String::new();
        for t in SAVE_ORDER {
            let wanted = match only {
                Some(o) => o == t,
                None => self.present.contains(&t),
            };
            if !wanted {
                continue;
            }
            if let Some(prog) = prog {
                out.push_str(&generated_line(prog));
            }
            exec::save_table(self.rs.table(self.family, t), counters, &mut out);
            if prog.is_some() {
                out.push_str(&completed_line());
            }
        }
        out
    }

    fn store(&self) -> Result<(), String> {
        let path = &self.path;
        let text = self.save_text(true, None, None);
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, path))
            .map_err(|e| format!("nfkeeper: can't write {}: {e}", path.display()))
    }
}

impl Backend for State {
    fn command(&mut self, p: Parsed) -> Result<String, Error> {
        let mut out = String::new();
        let writes = !matches!(
            p.command,
            Command::Check(_)
                | Command::List { zero: false, .. }
                | Command::ListRules { zero: false, .. }
        );
        let table = p.table;
        let res = exec::execute(self.rs.table_mut(self.family, table), &p, &mut out);
        if res.is_ok() && writes {
            self.touch(table);
            self.store().map_err(|m| Error {
                kind: iptables::ExitKind::Resource,
                ..Error::op(m)
            })?;
        }
        res.map(|()| out)
    }

    fn save(
        &mut self,
        counters: bool,
        only: Option<TableKind>,
        prog: &str,
        out: &mut dyn std::io::Write,
    ) -> Result<(), Error> {
        out.write_all(self.save_text(counters, only, Some(prog)).as_bytes())
            .map_err(|e| Error::other(format!("writing the output: {e}")))
    }

    fn restore(
        &mut self,
        input: &str,
        o: &RestoreOpts,
        _wait: Option<Option<u32>>,
    ) -> Result<RestoreStats, RestoreError> {
        let tables: Vec<TableKind> = input
            .lines()
            .filter_map(|l| l.strip_prefix('*'))
            .filter_map(|t| TableKind::from_name(t.trim()))
            .filter(|t| o.table.is_none_or(|only| only == *t))
            .collect();
        let stats = restore(&mut self.rs, input, o)?;
        if !o.test {
            for t in tables {
                self.touch(t);
            }
            self.store().map_err(|m| RestoreError {
                line: 0,
                err: Error::op(m),
            })?;
        }
        Ok(stats)
    }
}
