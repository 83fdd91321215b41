//! The tools under test. An [`Adapter`] turns a tool-neutral [`Op`] into the
//! processes that tool needs, says how to list a table for verification and
//! how to read that listing. The runner starts every process inside a
//! [`Netns`]; an adapter that is not a program (a daemon's socket API) can
//! override [`Adapter::exec`] and interpret the [`Cmd`] itself.
//!
//! Baselines: `iptables-legacy`, `iptables-nft` (both with `-w`, as
//! orchestrators call them, since the xtables lock file is the host's) and
//! `nft` (statements where nftables has a form; `nft -f` for restores and
//! for kube-proxy's syncs in the shape of its nftables mode).
//! nfkeeper: the same iptables command lines, direct or through its daemon
//! (started on the namespace's first command, stopped again after every
//! repetition by [`Adapter::quiesce`]).

use super::model::{Cmd, Dialect, Listing, Op, Ruleset, Table, TableSpec};
use crate::netns::{Netns, Run, RunError};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A firewall tool the suites can drive.
pub trait Adapter {
    /// Column name in the reports.
    fn name(&self) -> &str;

    /// The tool's version line when it is usable here, or why not with the
    /// command that installs it.
    fn available(&self) -> Result<String, String>;

    /// The language the tool speaks (which [`super::Check::Only`] checks
    /// it makes).
    fn dialect(&self) -> Dialect {
        Dialect::Iptables
    }

    /// The processes that perform `op`, run in order (one for most ops, one
    /// per rule for [`Op::AppendEach`]), or `None` when the tool has no form
    /// for it (reported as n/a, never as a time).
    fn commands(&self, op: &Op) -> Option<Vec<Cmd>>;

    /// A listing of one chain or the whole table, for verification.
    fn listing(&self, table: Table, chain: Option<&str>) -> Cmd;

    /// Reads what `listing` (or a list op) printed.
    fn parse_listing(&self, out: &str) -> Listing;

    /// Stops what the tool keeps running between its commands (a daemon);
    /// its next command starts it again. The runner calls this after the
    /// setup and after every repetition, untimed, so that no other tool is
    /// measured while this one's process is subscribed to nf_tables
    /// events: the kernel keeps one listener bitmap per netlink protocol
    /// for all namespaces, so while any such process lives, every
    /// nf_tables commit in every namespace builds its event messages (an
    /// `iptables -F` of 50k chains took 0.23 s instead of 0.08 s for every
    /// nftables tool with `nfkeeper serve` idle in another namespace).
    fn quiesce(&self, _ns: &Netns) {}

    /// Runs one command in the namespace with stdin from a staged file.
    fn exec(
        &self,
        ns: &Netns,
        cmd: &Cmd,
        stdin: Option<&Path>,
        limit: Duration,
    ) -> Result<Run, RunError> {
        ns.run(&cmd.argv, stdin, limit)
    }
}

/// The adapters of the given names (all baselines when empty), in order.
pub fn baselines(names: &[String]) -> Result<Vec<Box<dyn Adapter>>, String> {
    let all = [
        "nfkeeper",
        "nfkeeper-daemon",
        "iptables-legacy",
        "iptables-nft",
        "nft",
    ];
    let want: Vec<&str> = if names.is_empty() {
        all.to_vec()
    } else {
        names.iter().map(String::as_str).collect()
    };
    want.into_iter()
        .map(|n| -> Result<Box<dyn Adapter>, String> {
            match n {
                "nfkeeper" => Ok(Box::new(Iptables::nfkeeper())),
                "nfkeeper-daemon" => Ok(Box::new(Iptables::nfkeeper_daemon())),
                "nfkeeper-plain" => Ok(Box::new(Iptables::nfkeeper_plain())),
                "nfkeeper-daemon-plain" => Ok(Box::new(Iptables::nfkeeper_daemon_plain())),
                "nfkeeper-old" => Ok(Box::new(Iptables::nfkeeper_old())),
                "nfkeeper-daemon-old" => Ok(Box::new(Iptables::nfkeeper_daemon_old())),
                "iptables-legacy" => Ok(Box::new(Iptables::legacy())),
                "iptables-nft" => Ok(Box::new(Iptables::nft())),
                "nft" => Ok(Box::new(Nft)),
                "ipset" => Ok(Box::new(IpsetTool)),
                o => Err(format!("unknown adapter {o} (known: {})", all.join(", "))),
            }
        })
        .collect()
}

/// Every adapter whose tool is installed here (for the kernel smoke tests).
pub fn present() -> Vec<Box<dyn Adapter>> {
    baselines(&[])
        .unwrap_or_default()
        .into_iter()
        .filter(|a| a.available().is_ok())
        .collect()
}

/// `prog --version` on the host (prints a version, touches no firewall).
fn version(prog: &str, package: &str) -> Result<String, String> {
    match Command::new(prog)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string()),
        Ok(o) => Err(format!(
            "{prog} --version failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(_) => Err(format!(
            "{prog} not found; install it with: apt-get install {package}"
        )),
    }
}

/// Empty filter and nat tables: every case's starting point.
fn empty_tables() -> Ruleset {
    Ruleset {
        tables: vec![TableSpec::new(Table::Filter), TableSpec::new(Table::Nat)],
    }
}

/// `iptables-legacy`, `iptables-nft`, or nfkeeper's direct mode (same
/// command lines, through `nfkeeper iptables …`).
pub struct Iptables {
    name: &'static str,
    /// The program and leading words of a command (`iptables-nft`, or
    /// `/path/nfkeeper iptables`).
    bin: Vec<String>,
    restore: Vec<String>,
    /// Takes `-w` (the xtables lock); nfkeeper serialises through the kernel.
    wait: bool,
    /// Commands go through an `nfkeeper serve` started in each case's
    /// namespace (before its setup, untimed).
    daemon: bool,
}

/// The nfkeeper binary to measure: $NFKEEPER_BIN, else `nfkeeper` next to
/// this program (cargo puts both in target/release; a test binary is one
/// level down, in `deps/`), else on $PATH.
pub fn nfkeeper_bin() -> String {
    if let Some(p) = std::env::var_os("NFKEEPER_BIN") {
        return p.to_string_lossy().into_owned();
    }
    // Beside this binary; for cargo's test binaries (in `deps/`), beside
    // the directory, where cargo puts the workspace's binaries.
    let exe = std::env::current_exe().ok();
    let dir = exe.as_deref().and_then(|e| e.parent());
    let up = dir.filter(|d| d.ends_with("deps")).and_then(|d| d.parent());
    let found = [dir, up]
        .into_iter()
        .flatten()
        .map(|d| d.join("nfkeeper"))
        .find(|p| p.is_file());
    found.map_or_else(|| "nfkeeper".into(), |p| p.to_string_lossy().into_owned())
}

/// Another nfkeeper build to compare against ($NFKEEPER_OLD_BIN; the
/// `nfkeeper-old` adapters and the daemon suite's parallel and hostile
/// cases), `None` when unset.
pub fn nfkeeper_old_bin() -> Option<String> {
    std::env::var_os("NFKEEPER_OLD_BIN")
        .filter(|p| !p.is_empty())
        .map(|p| p.to_string_lossy().into_owned())
}

impl Iptables {
    pub fn legacy() -> Iptables {
        Iptables {
            name: "iptables-legacy",
            bin: vec!["iptables-legacy".into()],
            restore: vec!["iptables-legacy-restore".into()],
            wait: true,
            daemon: false,
        }
    }

    pub fn nft() -> Iptables {
        Iptables {
            name: "iptables-nft",
            bin: vec!["iptables-nft".into()],
            restore: vec!["iptables-nft-restore".into()],
            wait: true,
            daemon: false,
        }
    }

    pub fn nfkeeper() -> Iptables {
        let b = nfkeeper_bin();
        Iptables {
            name: "nfkeeper",
            bin: vec![b.clone(), "iptables".into()],
            restore: vec![b, "iptables-restore".into()],
            wait: false,
            daemon: false,
        }
    }

    /// nfkeeper without run compilation (`--no-compile-runs`): every
    /// logical rule its own kernel rule, as iptables-nft writes them. For
    /// comparison; not among the defaults.
    pub fn nfkeeper_plain() -> Iptables {
        let b = nfkeeper_bin();
        Iptables {
            name: "nfkeeper-plain",
            bin: vec![b.clone(), "--no-compile-runs".into(), "iptables".into()],
            restore: vec![b, "--no-compile-runs".into(), "iptables-restore".into()],
            wait: false,
            daemon: false,
        }
    }

    /// [`Iptables::nfkeeper_daemon`] with a daemon that compiles no runs
    /// (`nfkeeper --no-compile-runs serve`).
    pub fn nfkeeper_daemon_plain() -> Iptables {
        Iptables {
            name: "nfkeeper-daemon-plain",
            ..Iptables::nfkeeper_daemon()
        }
    }

    /// The same command lines through a warm `nfkeeper serve` (the CLI
    /// forced to the daemon with `--daemon`; it fails rather than fall
    /// back to direct mode).
    pub fn nfkeeper_daemon() -> Iptables {
        let b = nfkeeper_bin();
        Iptables {
            name: "nfkeeper-daemon",
            bin: vec![b.clone(), "--daemon".into(), "iptables".into()],
            restore: vec![b, "--daemon".into(), "iptables-restore".into()],
            wait: false,
            daemon: true,
        }
    }

    /// [`Iptables::nfkeeper`] with the binary of $NFKEEPER_OLD_BIN (an
    /// older build, for before/after ratios in one run); unavailable
    /// when that is unset.
    pub fn nfkeeper_old() -> Iptables {
        Iptables::nfkeeper().rebuilt("nfkeeper-old")
    }

    /// [`Iptables::nfkeeper_daemon`] with the binary of $NFKEEPER_OLD_BIN.
    pub fn nfkeeper_daemon_old() -> Iptables {
        Iptables::nfkeeper_daemon().rebuilt("nfkeeper-daemon-old")
    }

    /// The same command lines under `name`, with $NFKEEPER_OLD_BIN (or
    /// an empty program name, which [`Adapter::available`] reports) in
    /// place of this build's nfkeeper.
    fn rebuilt(self, name: &'static str) -> Iptables {
        let old = nfkeeper_old_bin().unwrap_or_default();
        let swap = |v: Vec<String>| -> Vec<String> {
            let mut v = v;
            v[0] = old.clone();
            v
        };
        Iptables {
            name,
            bin: swap(self.bin),
            restore: swap(self.restore),
            ..self
        }
    }

    /// Starts the namespace's daemon on first use (and after the runner
    /// stopped it, [`Adapter::quiesce`]) and waits until its socket (the
    /// default path of that namespace) answers and it is idle: its model
    /// is loaded, as a daemon that has run for a while has it. Untimed.
    fn ensure_daemon(&self, ns: &Netns) -> Result<(), RunError> {
        match ns.service_state() {
            Some(true) => return Ok(()),
            Some(false) => {
                return Err(RunError::Io(std::io::Error::other(
                    "nfkeeper serve exited in this namespace",
                )))
            }
            None => {}
        }
        let sock = format!(
            "/run/nfkeeper/net-{}.sock",
            ns.inode().map_err(RunError::Io)?
        );
        let _ = std::fs::remove_file(&sock);
        let mut argv = vec![self.bin[0].as_str()];
        if self.name.ends_with("-plain") {
            argv.push("--no-compile-runs");
        }
        argv.extend(["serve", "--quiet"]);
        ns.spawn_service(&argv, &[std::path::PathBuf::from(&sock)])
            .map_err(RunError::Io)?;
        let t0 = std::time::Instant::now();
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            if ns.service_state() != Some(true) || t0.elapsed() > Duration::from_secs(60) {
                return Err(RunError::Io(std::io::Error::other(
                    "nfkeeper serve did not start in this namespace",
                )));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // Its socket answers once the model is loaded; what it still does
        // after that (its events thread, freeing the load's buffers) is
        // not the timed command's cost.
        crate::netns::settle_services(Duration::from_secs(5));
        Ok(())
    }

    /// `nfkeeper ipset …` for nfkeeper, direct or through its daemon
    /// (`--daemon ipset`); no form for the other tools.
    fn set_commands(&self, op: &super::sets::SetOp) -> Option<Vec<Cmd>> {
        if !self.name.starts_with("nfkeeper") {
            return None;
        }
        let mut prog = self.bin.clone();
        *prog.last_mut()? = "ipset".into();
        Some(super::sets::ipset(&prog, op))
    }

    fn cmd(&self, t: Table, words: &[&str]) -> Cmd {
        let mut v: Vec<String> = self.bin.clone();
        if self.wait {
            v.push("-w".into());
        }
        v.extend(["-t", t.name()].iter().map(|s| s.to_string()));
        v.extend(words.iter().map(|s| s.to_string()));
        Cmd::new(v)
    }

    fn rule_cmd(&self, t: Table, verb: &str, r: &super::model::Rule) -> Cmd {
        let mut c = self.cmd(t, &[verb, &r.chain]);
        c.argv.extend(r.iptables_args());
        c
    }

    fn restore_cmd(&self, rs: &Ruleset, noflush: bool) -> Cmd {
        let mut argv: Vec<String> = self.restore.clone();
        if self.wait {
            argv.push("-w".into());
        }
        if noflush {
            argv.push("--noflush".into());
        }
        Cmd::new(argv).with_stdin(rs.iptables_text(noflush))
    }
}

impl Adapter for Iptables {
    fn name(&self) -> &str {
        self.name
    }

    fn available(&self) -> Result<String, String> {
        if self.bin[0].is_empty() {
            return Err(format!(
                "{}: set NFKEEPER_OLD_BIN to the nfkeeper binary to compare against",
                self.name
            ));
        }
        let package = if self.name.starts_with("nfkeeper") {
            "nfkeeper (cargo build --release -p nfkeeper)"
        } else {
            "iptables"
        };
        version(&self.restore[0], package)?;
        version(&self.bin[0], package)
    }

    fn commands(&self, op: &Op) -> Option<Vec<Cmd>> {
        let c = match op {
            Op::Reset => self.restore_cmd(&empty_tables(), false),
            Op::Restore { rs, noflush } => self.restore_cmd(rs, *noflush),
            Op::NewChain(t, c) => self.cmd(*t, &["-N", c]),
            Op::DeleteChain(t, c) => self.cmd(*t, &["-X", c]),
            Op::Append(t, r) => self.rule_cmd(*t, "-A", r),
            Op::Insert(t, r) => self.rule_cmd(*t, "-I", r),
            Op::Delete(t, r) => self.rule_cmd(*t, "-D", r),
            Op::AppendEach(t, rules) => {
                return Some(rules.iter().map(|r| self.rule_cmd(*t, "-A", r)).collect())
            }
            Op::Flush(t, Some(c)) => self.cmd(*t, &["-F", c]),
            Op::Flush(t, None) => self.cmd(*t, &["-F"]),
            Op::ListRule(t, c, k) => self.cmd(*t, &["-S", c, &k.to_string()]),
            Op::List(t, c) => self.listing(*t, c.as_deref()),
            Op::Set(op) => return self.set_commands(op),
            Op::RestoreText {
                text,
                noflush,
                counters,
                ..
            } => {
                let mut argv: Vec<String> = self.restore.clone();
                if self.wait {
                    argv.push("-w".into());
                }
                if *noflush {
                    argv.push("--noflush".into());
                }
                if *counters {
                    argv.push("--counters".into());
                }
                Cmd::new(argv).with_stdin(text.clone())
            }
        };
        Some(vec![c])
    }

    fn listing(&self, table: Table, chain: Option<&str>) -> Cmd {
        match chain {
            Some(c) => self.cmd(table, &["-S", c]),
            None => self.cmd(table, &["-S"]),
        }
    }

    fn parse_listing(&self, out: &str) -> Listing {
        parse_iptables_s(out)
    }

    fn quiesce(&self, ns: &Netns) {
        if self.daemon {
            ns.stop_services();
        }
    }

    fn exec(
        &self,
        ns: &Netns,
        cmd: &Cmd,
        stdin: Option<&Path>,
        limit: Duration,
    ) -> Result<Run, RunError> {
        if self.daemon {
            self.ensure_daemon(ns)?;
        }
        ns.run(&cmd.argv, stdin, limit)
    }
}

/// `iptables -S` output: `-P` built-in chains, `-N` user chains, `-A` rules.
pub fn parse_iptables_s(out: &str) -> Listing {
    let mut l = Listing::default();
    for line in out.lines() {
        let mut w = line.split_whitespace();
        match (w.next(), w.next()) {
            (Some("-P"), Some(c)) => l.chain_mut(c).builtin = true,
            (Some("-N"), Some(c)) => {
                l.chain_mut(c);
            }
            (Some("-A"), Some(c)) => l.chain_mut(c).rules += 1,
            _ => {}
        }
    }
    l
}

/// The `nft` command-line tool, on tables `ip filter` / `ip nat` laid out
/// like iptables' (same chain names, base chains on the same hooks).
pub struct Nft;

impl Nft {
    fn words(words: &[&str]) -> Cmd {
        let mut v = vec!["nft"];
        v.extend_from_slice(words);
        Cmd::new(v)
    }

    fn rule_cmd(verb: &str, t: Table, r: &super::model::Rule) -> Cmd {
        let mut c = Nft::words(&[verb, "rule", "ip", t.name(), &r.chain]);
        c.argv.extend(r.nft_args());
        c
    }

    fn file(text: String) -> Cmd {
        Nft::words(&["-f", "/dev/stdin"]).with_stdin(text)
    }
}

impl Adapter for Nft {
    fn name(&self) -> &str {
        "nft"
    }

    fn available(&self) -> Result<String, String> {
        version("nft", "nftables")
    }

    fn dialect(&self) -> Dialect {
        Dialect::Nft
    }

    fn commands(&self, op: &Op) -> Option<Vec<Cmd>> {
        let c = match op {
            // Also no kube-proxy table (the kube suite's nft form).
            Op::Reset => {
                let kube = Table::KubeProxy.name();
                let mut text = format!("table ip {kube}\ndelete table ip {kube}\n");
                text.push_str(&empty_tables().nft_text(false));
                Nft::file(text)
            }
            Op::Restore { rs, noflush } => Nft::file(rs.nft_text(*noflush)),
            Op::RestoreText { nft: Some(t), .. } => Nft::file(t.clone()),
            Op::NewChain(t, c) => Nft::words(&["add", "chain", "ip", t.name(), c]),
            Op::DeleteChain(t, c) => Nft::words(&["delete", "chain", "ip", t.name(), c]),
            Op::Append(t, r) => Nft::rule_cmd("add", *t, r),
            Op::Insert(t, r) => Nft::rule_cmd("insert", *t, r),
            // nftables deletes by handle only; there is no rule-spec form.
            // iptables-restore input without an nftables counterpart has none.
            Op::Delete(..) | Op::ListRule(..) | Op::RestoreText { nft: None, .. } => return None,
            Op::Set(op) => return Some(super::sets::nft(op)),
            Op::AppendEach(t, rules) => {
                return Some(rules.iter().map(|r| Nft::rule_cmd("add", *t, r)).collect())
            }
            Op::Flush(t, Some(c)) => Nft::words(&["flush", "chain", "ip", t.name(), c]),
            Op::Flush(t, None) => Nft::words(&["flush", "table", "ip", t.name()]),
            Op::List(t, c) => self.listing(*t, c.as_deref()),
        };
        Some(vec![c])
    }

    fn listing(&self, table: Table, chain: Option<&str>) -> Cmd {
        match chain {
            Some(c) => Nft::words(&["list", "chain", "ip", table.name(), c]),
            None => Nft::words(&["list", "table", "ip", table.name()]),
        }
    }

    fn parse_listing(&self, out: &str) -> Listing {
        parse_nft_list(out)
    }
}

/// The ipset tool (the kernel's ipset subsystem): only set operations.
pub struct IpsetTool;

impl Adapter for IpsetTool {
    fn name(&self) -> &str {
        "ipset"
    }

    fn available(&self) -> Result<String, String> {
        version("ipset", "ipset")
    }

    fn commands(&self, op: &Op) -> Option<Vec<Cmd>> {
        match op {
            Op::Set(op) => Some(super::sets::ipset(&["ipset".to_string()], op)),
            // The starting point of every case: no sets.
            Op::Reset => Some(vec![Cmd::new(["ipset", "destroy"])]),
            _ => None,
        }
    }

    fn listing(&self, _table: Table, _chain: Option<&str>) -> Cmd {
        Cmd::new(["ipset", "list", "-name"])
    }

    fn parse_listing(&self, _out: &str) -> Listing {
        Listing::default()
    }
}

/// `nft list` output: `chain NAME {` opens a chain, a `type …` line makes
/// it a base chain, other lines inside are rules, `}` closes.
pub fn parse_nft_list(out: &str) -> Listing {
    let mut l = Listing::default();
    let mut cur: Option<String> = None;
    for line in out.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("chain ") {
            let name = rest.trim_end_matches('{').trim().to_string();
            l.chain_mut(&name);
            cur = Some(name);
        } else if t == "}" {
            cur = None;
        } else if let Some(c) = &cur {
            if t.starts_with("type ") {
                l.chain_mut(c).builtin = true;
            } else if !t.is_empty() && !t.starts_with("policy ") && !t.starts_with("comment ") {
                l.chain_mut(c).rules += 1;
            }
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::super::model::Rule;
    use super::*;

    #[test]
    fn iptables_commands() {
        let a = Iptables::nft();
        let c = a
            .commands(&Op::Delete(Table::Filter, Rule::cf("X", 0)))
            .unwrap();
        assert_eq!(
            c[0].argv.join(" "),
            "iptables-nft -w -t filter -D X -s 10.0.0.1/32 -j ACCEPT"
        );
        let c = a
            .commands(&Op::ListRule(Table::Nat, "X".into(), 7))
            .unwrap();
        assert_eq!(c[0].argv.join(" "), "iptables-nft -w -t nat -S X 7");
        let each = Op::AppendEach(
            Table::Filter,
            (0..3).map(|i| Rule::cf("FORWARD", i)).collect(),
        );
        assert_eq!(a.commands(&each).unwrap().len(), 3);
        let r = &Iptables::legacy().commands(&Op::Reset).unwrap()[0];
        let old = Iptables::nfkeeper_daemon_old();
        assert_eq!(
            (old.name(), old.daemon, &old.bin[1..]),
            (
                "nfkeeper-daemon-old",
                true,
                &["--daemon".to_string(), "iptables".to_string()][..]
            )
        );
        assert_eq!(r.argv, ["iptables-legacy-restore", "-w"]);
        assert!(r
            .stdin
            .as_deref()
            .unwrap()
            .contains("*nat\n:PREROUTING ACCEPT [0:0]\n"));
    }

    #[test]
    fn nft_commands() {
        let c = Nft
            .commands(&Op::Insert(Table::Filter, Rule::cf("X", 1)))
            .unwrap();
        assert_eq!(
            c[0].argv.join(" "),
            "nft insert rule ip filter X ip saddr 10.0.0.2 accept"
        );
        assert_eq!(
            Nft.commands(&Op::Delete(Table::Filter, Rule::cf("X", 1))),
            None
        );
        let f = Nft.commands(&Op::Flush(Table::Nat, None)).unwrap();
        assert_eq!(f[0].argv.join(" "), "nft flush table ip nat");
    }

    #[test]
    fn parse_listings() {
        let s = "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-N X\n-N Y\n-A FORWARD -s 10.0.0.1/32 -j ACCEPT\n-A X -j ACCEPT\n-A X -j ACCEPT\n";
        let l = parse_iptables_s(s);
        assert_eq!((l.rules(), l.user_chains()), (3, 2));
        assert!(l.get("FORWARD").unwrap().builtin);
        assert_eq!(l.get("Y").unwrap().rules, 0);
        let n = "table ip filter {\n\tchain FORWARD {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tip saddr 10.0.0.1 accept\n\t}\n\n\tchain X {\n\t\tip saddr 10.0.0.2 accept\n\t\tip saddr 10.0.0.3 accept\n\t}\n\n\tchain Y {\n\t}\n}\n";
        let l = parse_nft_list(n);
        assert_eq!((l.rules(), l.user_chains()), (3, 2));
        assert!(l.get("FORWARD").unwrap().builtin);
        assert_eq!(l.get("X").unwrap().rules, 2);
    }
}
