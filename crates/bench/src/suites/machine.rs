//! The machine and the run behind a set of results: CPU, memory, kernel,
//! distribution, tool versions, nfkeeper's version, date and command line.
//! [`Machine::probe`] reads `/proc`, `/etc/os-release` and asks each tool
//! for its version (`-V`/`-v` prints and exits; no firewall is read or
//! changed); everything else here is pure parsing and formatting.

use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// How the run was made (filled in by the caller after it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunInfo {
    pub reps: usize,
    /// Per-step limit, seconds.
    pub limit: f64,
    /// Wall time of the whole run, seconds.
    pub wall: f64,
    pub load_end: String,
    /// Ran with `--rcu-expedited`.
    pub rcu_expedited: bool,
}

/// The machine a run was made on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Machine {
    pub kernel: String,
    pub cpus: usize,
    pub cpu_model: String,
    /// Total memory, e.g. `7.8 GiB`.
    pub memory: String,
    /// `PRETTY_NAME` of os-release.
    pub distro: String,
    /// Load average (1 min) when the run started.
    pub loadavg: String,
    /// UTC, `2026-11-22T07:05:00Z`.
    pub date: String,
    /// This build of nfkeeper (the harness).
    pub nfkeeper: String,
    /// The command line that produced the run, shell-quoted.
    pub command: String,
    /// (tool or adapter, version line or `missing: …`).
    pub tools: Vec<(String, String)>,
    pub run: RunInfo,
}

/// As `results.json` shows it: the fields in this order, without the RCU
/// flag (REPORT.md states it).
impl Serialize for RunInfo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("RunInfo", 4)?;
        o.serialize_field("reps", &self.reps)?;
        o.serialize_field("limit", &self.limit)?;
        o.serialize_field("wall", &self.wall)?;
        o.serialize_field("load_end", &self.load_end)?;
        o.end()
    }
}

/// As `results.json` shows it: the fields in this order, `tools` an
/// object with the tools in the order probed.
impl Serialize for Machine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The pairs as one object, in their order.
        struct Tools<'a>(&'a [(String, String)]);
        impl Serialize for Tools<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (k, v) in self.0 {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
        let mut o = s.serialize_struct("Machine", 11)?;
        o.serialize_field("kernel", &self.kernel)?;
        o.serialize_field("cpus", &self.cpus)?;
        o.serialize_field("cpu_model", &self.cpu_model)?;
        o.serialize_field("memory", &self.memory)?;
        o.serialize_field("distro", &self.distro)?;
        o.serialize_field("loadavg", &self.loadavg)?;
        o.serialize_field("date", &self.date)?;
        o.serialize_field("nfkeeper", &self.nfkeeper)?;
        o.serialize_field("command", &self.command)?;
        o.serialize_field("tools", &Tools(&self.tools))?;
        o.serialize_field("run", &self.run)?;
        o.end()
    }
}

/// The baseline tools and how each prints its version.
const TOOLS: &[(&str, &str, &str)] = &[
    ("iptables-legacy", "-V", "iptables"),
    ("iptables-nft", "-V", "iptables"),
    ("nft", "-v", "nftables"),
    ("ipset", "-v", "ipset"),
];

impl Machine {
    /// This machine now, with the baseline tools' versions; `command` is
    /// the run's argv.
    pub fn probe(command: &[String]) -> Machine {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let mut m = Machine {
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model: cpu_model(&read("/proc/cpuinfo")),
            memory: mem_total(&read("/proc/meminfo")).map_or("unknown".into(), fmt_bytes),
            distro: os_release(&read("/etc/os-release")),
            loadavg: crate::loadavg(),
            date: utc(now_secs(), false),
            nfkeeper: env!("CARGO_PKG_VERSION").to_string(),
            command: shell_line(command),
            tools: Vec::new(),
            run: RunInfo::default(),
        };
        for (tool, flag, package) in TOOLS {
            m.set_tool(tool, tool_version(tool, flag, package));
        }
        m
    }

    /// Sets (or replaces) a tool's version line.
    pub fn set_tool(&mut self, name: &str, version: String) {
        match self.tools.iter_mut().find(|(n, _)| n == name) {
            Some(t) => t.1 = version,
            None => self.tools.push((name.to_string(), version)),
        }
    }
}

fn tool_version(tool: &str, flag: &str, package: &str) -> String {
    match Command::new(tool).arg(flag).stdin(Stdio::null()).output() {
        Ok(o) => {
            // ipset prints to stdout, some builds of the others to stderr.
            let text = [o.stdout, o.stderr].concat();
            let line = String::from_utf8_lossy(&text)
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .to_string();
            if o.status.success() && !line.is_empty() {
                line
            } else {
                format!("missing: `{tool} {flag}` failed: {line}")
            }
        }
        Err(_) => format!("missing: not installed (apt-get install {package})"),
    }
}

/// The first `model name` (x86) or `Model` (arm boards) of /proc/cpuinfo.
pub fn cpu_model(cpuinfo: &str) -> String {
    for key in ["model name", "Model", "cpu model", "Hardware"] {
        let hit = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        });
        if let Some(v) = hit.filter(|v| !v.is_empty()) {
            return v;
        }
    }
    "unknown".into()
}

/// MemTotal of /proc/meminfo, bytes.
pub fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes in binary units with one decimal: `7.8 GiB`.
pub fn fmt_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// `PRETTY_NAME` of an os-release file, unquoted; else NAME VERSION.
pub fn os_release(text: &str) -> String {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?;
            Some(v.trim().trim_matches('"').to_string())
        })
    };
    get("PRETTY_NAME")
        .or_else(|| {
            Some(format!(
                "{} {}",
                get("NAME")?,
                get("VERSION").unwrap_or_default()
            ))
        })
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seconds since the epoch as UTC: `2026-11-22T07:05:00Z`, or compact for
/// file names: `20261122T070500Z`.
pub fn utc(secs: u64, compact: bool) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, mi, s) = (rem / 3600, rem / 60 % 60, rem % 60);
    let (y, m, d) = iptables::print::ctime::civil(days);
    if compact {
        format!("{y:04}{m:02}{d:02}T{h:02}{mi:02}{s:02}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    }
}

/// Words as a shell would need them: plain words as they are, others in
/// single quotes.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_parsing() {
        let cpu = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t: fpu\n";
        assert_eq!(cpu_model(cpu), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        assert_eq!(
            cpu_model("processor : 0\nModel : Raspberry Pi 4\n"),
            "Raspberry Pi 4"
        );
        assert_eq!(cpu_model(""), "unknown");
        let mem = "MemTotal:        8140172 kB\nMemFree:  1 kB\n";
        assert_eq!(mem_total(mem), Some(8_140_172 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        let sizes = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1536, "1.5 KiB"),
            (8_335_536_128, "7.8 GiB"),
        ];
        for (b, want) in sizes {
            assert_eq!(fmt_bytes(b), want);
        }
        let os = [
            (
                "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
                "Debian GNU/Linux 12 (bookworm)",
            ),
            ("NAME=Alpine\nVERSION=3.20\n", "Alpine 3.20"),
            ("NAME=Arch\n", "Arch"),
            ("", "unknown"),
        ];
        for (text, want) in os {
            assert_eq!(os_release(text), want);
        }
    }

    #[test]
    fn dates() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_795_331_100, "2026-11-22T07:05:00Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
        ];
        for (s, want) in cases {
            assert_eq!(utc(s, false), want, "{s}");
        }
        assert_eq!(utc(1_795_331_100, true), "20261122T070500Z");
    }

    #[test]
    fn quoting() {
        let argv: Vec<String> = [
            "nfkeeper", "bench", "cf", "--out", "/tmp/a b", "--x=it's", "",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            shell_line(&argv),
            "nfkeeper bench cf --out '/tmp/a b' '--x=it'\\''s' ''"
        );
    }

    #[test]
    fn tools_replace_in_place() {
        let mut m = Machine::default();
        m.set_tool("nft", "a".into());
        m.set_tool("ipset", "b".into());
        m.set_tool("nft", "c".into());
        assert_eq!(
            m.tools,
            [
                ("nft".to_string(), "c".to_string()),
                ("ipset".into(), "b".into())
            ]
        );
    }
}
