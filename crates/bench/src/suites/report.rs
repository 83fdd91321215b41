//! Results of the suites and their renderings: raw CSV, JSON (a tiny writer,
//! no serde) and a Markdown table with ratios between adapters. Pure: no I/O
//! except [`Machine::probe`].

use std::fmt::Write;

/// How a measured step ended for one adapter.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Ok,
    /// The command failed or its effect was not there (never a time).
    Fail(String),
    /// Killed at the per-step limit (seconds).
    Timeout(f64),
    /// The tool has no form of this operation.
    NoForm,
    /// The tool is missing; the text says how to install it.
    Unavailable(String),
}

impl Status {
    pub fn word(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Fail(_) => "fail",
            Status::Timeout(_) => "timeout",
            Status::NoForm => "n/a",
            Status::Unavailable(_) => "unavailable",
        }
    }

    pub fn detail(&self) -> String {
        match self {
            Status::Ok | Status::NoForm => String::new(),
            Status::Fail(m) | Status::Unavailable(m) => m.clone(),
            Status::Timeout(l) => format!("limit {l} s"),
        }
    }
}

/// One measured step of one case for one adapter: raw samples in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub suite: String,
    /// Stable id, e.g. `2.1` or `cf.append`.
    pub case: String,
    pub name: String,
    pub adapter: String,
    pub n: usize,
    pub status: Status,
    pub samples: Vec<f64>,
}

/// min / median / max of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Summary {
    /// `None` for no samples; the median of an even count is the mean of
    /// the middle two.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let k = s.len();
        let median = if k % 2 == 1 {
            s[k / 2]
        } else {
            (s[k / 2 - 1] + s[k / 2]) / 2.0
        };
        Some(Summary {
            min: s[0],
            median,
            max: s[k - 1],
        })
    }
}

impl Record {
    /// The summary when the step succeeded.
    pub fn summary(&self) -> Option<Summary> {
        match self.status {
            Status::Ok => Summary::of(&self.samples),
            _ => None,
        }
    }
}

/// Seconds for humans: µs below 1 ms, ms below 1 s, else s; 3 significant
/// digits.
pub fn fmt_secs(s: f64) -> String {
    let (v, unit) = if s < 1e-3 {
        (s * 1e6, "µs")
    } else if s < 1.0 {
        (s * 1e3, "ms")
    } else {
        (s, "s")
    };
    let num = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    format!("{num} {unit}")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per sample (`rep` from 0); a record without samples gives one
/// row with empty `rep` and `seconds`.
pub fn to_csv(records: &[Record]) -> String {
    let mut s = String::from("suite,case,name,adapter,n,status,rep,seconds,detail\n");
    for r in records {
        let head = [&r.suite, &r.case, &r.name, &r.adapter]
            .map(|f| csv_field(f))
            .join(",");
        let (status, detail) = (r.status.word(), csv_field(&r.status.detail()));
        if r.samples.is_empty() {
            let _ = writeln!(s, "{head},{},{status},,,{detail}", r.n);
        }
        for (i, v) in r.samples.iter().enumerate() {
            let _ = writeln!(s, "{head},{},{status},{i},{v},{detail}", r.n);
        }
    }
    s
}

/// A JSON value, rendered compactly.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    pub fn render(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Num(v) if v.is_finite() => {
                let _ = write!(out, "{v}");
            }
            Json::Num(_) => out.push_str("null"),
            Json::Str(s) => {
                out.push('"');
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        c if (c as u32) < 0x20 => {
                            let _ = write!(out, "\\u{:04x}", c as u32);
                        }
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            Json::Arr(v) => {
                out.push('[');
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.render(out);
                }
                out.push(']');
            }
            Json::Obj(v) => {
                out.push('{');
                for (i, (k, x)) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    Json::Str(k.clone()).render(out);
                    out.push(':');
                    x.render(out);
                }
                out.push('}');
            }
        }
    }
}

/// The machine a run was made on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Machine {
    pub kernel: String,
    pub cpus: usize,
    pub loadavg: String,
    pub date: String,
    /// (adapter, version line or why it is missing)
    pub tools: Vec<(String, String)>,
}

impl Machine {
    /// Kernel, CPU count, load and date of this machine (tools are added by
    /// the caller).
    pub fn probe() -> Machine {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let date = std::process::Command::new("date")
            .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        Machine {
            kernel: read("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            loadavg: crate::loadavg(),
            date,
            tools: Vec::new(),
        }
    }

    fn json(&self) -> Json {
        Json::Obj(vec![
            ("kernel".into(), Json::str(&self.kernel)),
            ("cpus".into(), Json::Num(self.cpus as f64)),
            ("loadavg".into(), Json::str(&self.loadavg)),
            ("date".into(), Json::str(&self.date)),
            (
                "tools".into(),
                Json::Obj(
                    self.tools
                        .iter()
                        .map(|(k, v)| (k.clone(), Json::str(v)))
                        .collect(),
                ),
            ),
        ])
    }
}

/// `{"machine": …, "records": [{…, "samples": […], "min", "median", "max"}]}`.
pub fn to_json(m: &Machine, records: &[Record]) -> String {
    let recs = records
        .iter()
        .map(|r| {
            let sum = r.summary();
            let num = |f: fn(&Summary) -> f64| sum.as_ref().map_or(Json::Null, |s| Json::Num(f(s)));
            Json::Obj(vec![
                ("suite".into(), Json::str(&r.suite)),
                ("case".into(), Json::str(&r.case)),
                ("name".into(), Json::str(&r.name)),
                ("adapter".into(), Json::str(&r.adapter)),
                ("n".into(), Json::Num(r.n as f64)),
                ("status".into(), Json::str(r.status.word())),
                ("detail".into(), Json::str(r.status.detail())),
                (
                    "samples".into(),
                    Json::Arr(r.samples.iter().map(|&v| Json::Num(v)).collect()),
                ),
                ("min".into(), num(|s| s.min)),
                ("median".into(), num(|s| s.median)),
                ("max".into(), num(|s| s.max)),
            ])
        })
        .collect();
    let mut s = String::new();
    Json::Obj(vec![
        ("machine".into(), m.json()),
        ("records".into(), Json::Arr(recs)),
    ])
    .render(&mut s);
    s.push('\n');
    s
}

fn cell(r: Option<&Record>) -> String {
    let Some(r) = r else { return "—".into() };
    match &r.status {
        Status::Ok => match r.summary() {
            Some(s) if r.samples.len() > 1 => format!(
                "{} ({}–{})",
                fmt_secs(s.median),
                fmt_secs(s.min),
                fmt_secs(s.max)
            ),
            Some(s) => fmt_secs(s.median),
            None => "—".into(),
        },
        Status::Fail(_) => "FAIL".into(),
        Status::Timeout(l) => format!(">{}", fmt_secs(*l)),
        Status::NoForm => "n/a".into(),
        Status::Unavailable(_) => "missing".into(),
    }
}

/// One table per suite: a row per (case, N), a column per adapter (median
/// and min–max), then each other adapter's median over the reference's
/// (the first adapter). Failures are listed under the table.
pub fn to_markdown(m: &Machine, records: &[Record], adapters: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Machine: kernel {}, {} CPUs, load average {} at {}.\n",
        m.kernel, m.cpus, m.loadavg, m.date
    );
    for (k, v) in &m.tools {
        let _ = writeln!(s, "- {k}: {v}");
    }
    let mut suites: Vec<&str> = Vec::new();
    for r in records {
        if !suites.contains(&r.suite.as_str()) {
            suites.push(&r.suite);
        }
    }
    let reference = adapters.first();
    for suite in suites {
        let _ = writeln!(s, "\n### {suite}\n");
        let mut head = String::from("| case | N |");
        let mut rule = String::from("|---|--:|");
        for a in adapters {
            let _ = write!(head, " {a} |");
            rule.push_str("--:|");
        }
        for a in adapters.iter().skip(1) {
            let _ = write!(head, " {a} / {} |", reference.map_or("", String::as_str));
            rule.push_str("--:|");
        }
        let _ = writeln!(s, "{head}\n{rule}");
        let mut rows: Vec<(&str, usize, &str)> = Vec::new();
        for r in records.iter().filter(|r| r.suite == suite) {
            if !rows.iter().any(|&(c, n, _)| c == r.case && n == r.n) {
                rows.push((&r.case, r.n, &r.name));
            }
        }
        for (case, n, name) in rows {
            let find = |a: &str| {
                records
                    .iter()
                    .find(|r| r.suite == suite && r.case == case && r.n == n && r.adapter == a)
            };
            let _ = write!(
                s,
                "| {case} {} | {} |",
                name.replace('|', "\\|"),
                crate::fmt_n(n)
            );
            for a in adapters {
                let _ = write!(s, " {} |", cell(find(a)));
            }
            let base = reference.and_then(|a| find(a)).and_then(Record::summary);
            for a in adapters.iter().skip(1) {
                let ratio = match (find(a).and_then(Record::summary), base) {
                    (Some(x), Some(b)) if b.median > 0.0 => format!("{:.2}×", x.median / b.median),
                    _ => "—".into(),
                };
                let _ = write!(s, " {ratio} |");
            }
            s.push('\n');
        }
        let fails: Vec<&Record> = records
            .iter()
            .filter(|r| r.suite == suite && matches!(r.status, Status::Fail(_)))
            .collect();
        if !fails.is_empty() {
            s.push_str("\nFailures:\n");
            for r in fails {
                let _ = writeln!(
                    s,
                    "- {} {} N={} {}: {}",
                    r.case,
                    r.name,
                    r.n,
                    r.adapter,
                    r.status.detail().replace('\n', " ")
                );
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(case: &str, adapter: &str, status: Status, samples: &[f64]) -> Record {
        Record {
            suite: "cf".into(),
            case: case.into(),
            name: "append, \"quoted\"".into(),
            adapter: adapter.into(),
            n: 1000,
            status,
            samples: samples.to_vec(),
        }
    }

    #[test]
    fn summaries() {
        let s = Summary::of(&[3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((s.min, s.median, s.max), (1.0, 2.5, 10.0));
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(Summary::of(&[]), None);
        let failed = rec("x", "a", Status::Fail("boom".into()), &[1.0]);
        assert_eq!(failed.summary(), None, "a failed step has no time");
        assert_eq!(fmt_secs(0.000_012_34), "12.3 µs");
        assert_eq!(fmt_secs(0.5), "500 ms");
        assert_eq!(fmt_secs(2.25), "2.25 s");
    }

    #[test]
    fn csv_rows() {
        let rs = [
            rec("cf.append", "nft", Status::Ok, &[1.5, 2.0]),
            rec(
                "cf.append",
                "iptables-nft",
                Status::Fail("bad, \"x\"".into()),
                &[],
            ),
        ];
        let csv = to_csv(&rs);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[1],
            "cf,cf.append,\"append, \"\"quoted\"\"\",nft,1000,ok,0,1.5,"
        );
        assert_eq!(
            lines[3],
            "cf,cf.append,\"append, \"\"quoted\"\"\",iptables-nft,1000,fail,,,\"bad, \"\"x\"\"\""
        );
    }

    #[test]
    fn json_rendering() {
        let mut s = String::new();
        Json::Obj(vec![
            (
                "a".into(),
                Json::Arr(vec![Json::Num(0.5), Json::Num(f64::NAN), Json::Null]),
            ),
            ("b\"".into(), Json::str("x\ny\u{1}")),
        ])
        .render(&mut s);
        assert_eq!(s, r#"{"a":[0.5,null,null],"b\"":"x\ny\u0001"}"#);
        let m = Machine {
            kernel: "6.18".into(),
            cpus: 2,
            ..Machine::default()
        };
        let j = to_json(&m, &[rec("c", "nft", Status::Ok, &[1.0, 3.0])]);
        assert!(j.contains(r#""kernel":"6.18","cpus":2"#), "{j}");
        assert!(
            j.contains(r#""samples":[1,3],"min":1,"median":2,"max":3"#),
            "{j}"
        );
    }

    #[test]
    fn markdown_table_with_ratios() {
        let rs = [
            rec("cf.append", "iptables-legacy", Status::Ok, &[2.0, 2.2, 2.4]),
            rec("cf.append", "iptables-nft", Status::Ok, &[1.1]),
            rec("cf.append", "nft", Status::Timeout(10.0), &[]),
            rec(
                "cf.del",
                "iptables-legacy",
                Status::Fail("no such rule".into()),
                &[],
            ),
            rec("cf.del", "nft", Status::NoForm, &[]),
        ];
        let ads: Vec<String> = ["iptables-legacy", "iptables-nft", "nft"]
            .map(String::from)
            .to_vec();
        let md = to_markdown(&Machine::default(), &rs, &ads);
        assert!(md.contains(
            "| case | N | iptables-legacy | iptables-nft | nft | iptables-nft / iptables-legacy | nft / iptables-legacy |"
        ));
        assert!(md.contains(
            "| cf.append append, \"quoted\" | 1k | 2.20 s (2.00 s–2.40 s) | 1.10 s | >10.0 s | 0.50× | — |"
        ), "{md}");
        assert!(
            md.contains("| cf.del append, \"quoted\" | 1k | FAIL | — | n/a | — | — |"),
            "{md}"
        );
        assert!(md.contains("- cf.del append, \"quoted\" N=1000 iptables-legacy: no such rule"));
    }
}
