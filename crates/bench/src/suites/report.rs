//! Results of the suites and their renderings: raw CSV (csv) and JSON
//! (serde_json), the per-suite tables with ratios against nfkeeper
//! (Markdown here; the full report with machine, plots and HTML in
//! `page`). Pure except [`write_files`], which writes the output directory.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::fmt::Write;

mod page;

pub use super::machine::{Machine, RunInfo};
pub use page::{render_files, report_html, report_md, write_files};

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

/// min / median / max of samples, and the estimate ratios compare.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Mean of the fastest half of the samples (the fastest alone for
    /// fewer than 4): noise on a shared machine only adds time, so the
    /// slow half is dropped; averaging the rest keeps one lucky
    /// repetition from setting the ratio. Of the estimates tried on six
    /// quick runs (seven pairings, BENCHMARKS §5.1) it moved least between
    /// runs: 293 of 296 ratio pairs within 20% on average, the fastest
    /// alone 285, the median 285.
    pub fast: f64,
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
        let half = (k / 2).max(1);
        Some(Summary {
            min: s[0],
            median,
            max: s[k - 1],
            fast: s[..half].iter().sum::<f64>() / half as f64,
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

/// The columns of `results.csv`, in order (what `compare` reads back).
pub const CSV_HEAD: [&str; 9] = [
    "suite", "case", "name", "adapter", "n", "status", "rep", "seconds", "detail",
];

/// One row per sample (`rep` from 0); a record without samples gives one
/// row with empty `rep` and `seconds`. Seconds are written as Rust prints
/// an `f64` (the shortest text that reads back to the same value).
pub fn to_csv(records: &[Record]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to memory fails only on a bug (a row of the wrong width).
    w.write_record(CSV_HEAD).expect("CSV row in memory");
    for r in records {
        let (n, detail) = (r.n.to_string(), r.status.detail());
        let head = [
            &*r.suite,
            &*r.case,
            &*r.name,
            &*r.adapter,
            &*n,
            r.status.word(),
        ];
        let mut row = |rep: &str, seconds: &str| {
            let tail = [rep, seconds, &*detail];
            w.write_record(head.iter().chain(&tail))
                .expect("CSV row in memory");
        };
        if r.samples.is_empty() {
            row("", "");
        }
        for (i, v) in r.samples.iter().enumerate() {
            row(&i.to_string(), &v.to_string());
        }
    }
    let bytes = w.into_inner().expect("CSV in memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields")
}

/// A record as `results.json` shows it: the raw samples and, when the
/// step succeeded, their summary (else `null`s).
struct RecordJson<'a>(&'a Record);

impl Serialize for RecordJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let sum = r.summary();
        let mut o = s.serialize_struct("Record", 12)?;
        o.serialize_field("suite", &r.suite)?;
        o.serialize_field("case", &r.case)?;
        o.serialize_field("name", &r.name)?;
        o.serialize_field("adapter", &r.adapter)?;
        o.serialize_field("n", &r.n)?;
        o.serialize_field("status", r.status.word())?;
        o.serialize_field("detail", &r.status.detail())?;
        o.serialize_field("samples", &r.samples)?;
        o.serialize_field("min", &sum.map(|s| s.min))?;
        o.serialize_field("median", &sum.map(|s| s.median))?;
        o.serialize_field("max", &sum.map(|s| s.max))?;
        o.serialize_field("fast_half_mean", &sum.map(|s| s.fast))?;
        o.end()
    }
}

/// The whole file: the machine, then the records.
struct ResultsJson<'a>(&'a Machine, &'a [Record]);

impl Serialize for ResultsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let records: Vec<RecordJson> = self.1.iter().map(RecordJson).collect();
        let mut o = s.serialize_struct("Results", 2)?;
        o.serialize_field("machine", self.0)?;
        o.serialize_field("records", &records)?;
        o.end()
    }
}

/// `{"machine": …, "records": [{…, "samples": […], "min", "median", "max",
/// "fast_half_mean"}]}`, compact, one line. A sample that is not a finite
/// number is written as `null`.
pub fn to_json(m: &Machine, records: &[Record]) -> String {
    // Plain data with string keys: serialising cannot fail.
    let mut s = serde_json::to_string(&ResultsJson(m, records)).expect("results as JSON");
    s.push('\n');
    s
}

/// What a record measures as shown: a time, or (the packet suite, which
/// stores seconds per unit of traffic) the rate that is its inverse.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Quantity {
    Time,
    /// The unit, e.g. `Gbit/s`.
    Rate(String),
}

/// The record's quantity, whatever its status. The packet suite alone
/// knows its units; it is asked with a stand-in sample so that a failed
/// record gets the same answer as a successful one.
pub fn quantity(r: &Record) -> Quantity {
    let probe = Record {
        suite: r.suite.clone(),
        case: r.case.clone(),
        name: String::new(),
        adapter: String::new(),
        n: r.n,
        status: Status::Ok,
        samples: vec![1.0],
    };
    match super::packet::rate(&probe) {
        Some((unit, _)) => Quantity::Rate(unit.to_string()),
        None => Quantity::Time,
    }
}

/// min / median / max as shown (rates inverted); `None` unless the step
/// succeeded.
pub fn shown(r: &Record) -> Option<Summary> {
    match quantity(r) {
        Quantity::Time => r.summary(),
        Quantity::Rate(_) => super::packet::rate(r).map(|(_, s)| s),
    }
}

/// The record's name as shown: a rate drops the packet suite's `, s per
/// …` (the unit of the raw samples; the rate's unit is in the cell and on
/// the axis).
pub fn shown_name(r: &Record) -> String {
    match (quantity(r), r.name.rfind(", s per ")) {
        (Quantity::Rate(_), Some(i)) => r.name[..i].to_string(),
        _ => r.name.clone(),
    }
}

/// A value of the quantity for humans: `1.50 ms`, `9.41 Gbit/s`.
pub fn fmt_value(q: &Quantity, v: f64) -> String {
    match q {
        Quantity::Time => fmt_secs(v),
        Quantity::Rate(unit) => format!("{} {unit}", crate::fmt_num(v)),
    }
}

fn cell(r: Option<&Record>) -> String {
    let Some(r) = r else { return "—".into() };
    let q = quantity(r);
    match &r.status {
        Status::Ok => match shown(r) {
            Some(s) if r.samples.len() > 1 => match &q {
                // One unit for the three: a rate keeps its unit.
                Quantity::Rate(unit) => format!(
                    "{} ({}–{}) {unit}",
                    crate::fmt_num(s.median),
                    crate::fmt_num(s.min),
                    crate::fmt_num(s.max)
                ),
                Quantity::Time => format!(
                    "{} ({}–{})",
                    fmt_secs(s.median),
                    fmt_secs(s.min),
                    fmt_secs(s.max)
                ),
            },
            Some(s) => fmt_value(&q, s.median),
            None => "—".into(),
        },
        Status::Fail(_) => "FAIL".into(),
        Status::Timeout(l) => format!(">{}", fmt_secs(*l)),
        Status::NoForm => "n/a".into(),
        Status::Unavailable(_) => "missing".into(),
    }
}

/// The adapter the ratios compare against: nfkeeper when it ran, else the
/// first one.
pub fn reference(adapters: &[String]) -> Option<&str> {
    adapters
        .iter()
        .find(|a| *a == "nfkeeper")
        .or(adapters.first())
        .map(String::as_str)
}

/// A table ready to print in any format.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Right-aligned (numeric) columns.
    pub right: Vec<bool>,
}

/// The suites in order of first appearance.
pub fn suites_of(records: &[Record]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for r in records {
        if !v.contains(&r.suite.as_str()) {
            v.push(&r.suite);
        }
    }
    v
}

/// A suite's table: a row per (case, N), a column per adapter (median and
/// min–max), then per other adapter its ratio to the [`reference()`]:
/// baseline time ÷ reference time, so above 1 the reference is faster (for
/// rates the same number is the reference's rate ÷ the baseline's). Ratios
/// compare [`Summary::fast`] (the mean of each tool's fastest half of
/// repetitions), the estimate two runs reproduce best (see `compare`).
pub fn suite_grid(records: &[Record], suite: &str, adapters: &[String]) -> Grid {
    let refn = reference(adapters);
    let others: Vec<&String> = adapters
        .iter()
        .filter(|a| Some(a.as_str()) != refn)
        .collect();
    let mut head = vec!["case".to_string(), "N".to_string()];
    head.extend(adapters.iter().cloned());
    head.extend(
        others
            .iter()
            .map(|a| format!("{a} ÷ {}", refn.unwrap_or(""))),
    );
    let mut right = vec![false, true];
    right.resize(head.len(), true);
    let mut keys: Vec<(&str, usize, String)> = Vec::new();
    for r in records.iter().filter(|r| r.suite == suite) {
        if !keys.iter().any(|(c, n, _)| *c == r.case && *n == r.n) {
            keys.push((&r.case, r.n, shown_name(r)));
        }
    }
    let rows = keys
        .into_iter()
        .map(|(case, n, name)| {
            let find = |a: &str| {
                records
                    .iter()
                    .find(|r| r.suite == suite && r.case == case && r.n == n && r.adapter == a)
            };
            let mut row = vec![format!("{case} {name}"), crate::fmt_n(n)];
            row.extend(adapters.iter().map(|a| cell(find(a))));
            let base = refn.and_then(find).and_then(Record::summary);
            for a in &others {
                row.push(match (find(a).and_then(Record::summary), base) {
                    (Some(x), Some(b)) if b.fast > 0.0 => format!("{:.2}×", x.fast / b.fast),
                    _ => "—".into(),
                });
            }
            row
        })
        .collect();
    Grid { head, rows, right }
}

/// The failed steps of a suite, one line each.
pub fn failures(records: &[Record], suite: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.suite == suite && matches!(r.status, Status::Fail(_)))
        .map(|r| {
            format!(
                "{} {} N={} {}: {}",
                r.case,
                r.name,
                r.n,
                r.adapter,
                r.status.detail().replace('\n', " ")
            )
        })
        .collect()
}

/// Markdown-escapes text for a table cell or a paragraph.
pub fn md_text(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\`*_[]<|".contains(c) {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

pub fn md_table(g: &Grid) -> String {
    let row = |cells: &[String]| {
        let mut s = String::from("|");
        for c in cells {
            let _ = write!(s, " {} |", md_text(c));
        }
        s.push('\n');
        s
    };
    let mut s = row(&g.head);
    s.push('|');
    for &r in &g.right {
        s.push_str(if r { "--:|" } else { "---|" });
    }
    s.push('\n');
    for r in &g.rows {
        s.push_str(&row(r));
    }
    s
}

/// The terminal summary: the machine in a line, the tools, then per suite
/// its table and failures.
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
    for suite in suites_of(records) {
        let _ = writeln!(s, "\n### {suite}\n");
        s.push_str(&md_table(&suite_grid(records, suite, adapters)));
        let fails = failures(records, suite);
        if !fails.is_empty() {
            s.push_str("\nFailures:\n");
            for f in fails {
                let _ = writeln!(s, "- {f}");
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
        assert_eq!((s.min, s.median, s.max, s.fast), (1.0, 2.5, 10.0, 1.5));
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0]).unwrap().median, 2.0);
        // The fast estimate: the fastest alone below 4 samples, else the
        // mean of the fastest half (rounded down).
        for (samples, fast) in [
            (&[5.0][..], 5.0),
            (&[4.0, 1.0, 2.0], 1.0),
            (&[9.0, 1.0, 3.0, 2.0, 8.0], 1.5),
            (&[6.0, 1.0, 2.0, 3.0, 50.0, 40.0], 2.0),
        ] {
            assert_eq!(Summary::of(samples).unwrap().fast, fast, "{samples:?}");
        }
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
        let m = Machine {
            kernel: "6.18".into(),
            cpus: 2,
            tools: vec![("b\"".into(), "x\ny\u{1}".into()), ("a".into(), "1".into())],
            ..Machine::default()
        };
        let j = to_json(
            &m,
            &[
                rec("c", "nft", Status::Ok, &[1.0, 3.0, f64::NAN]),
                rec("c", "ipset", Status::Fail("no".into()), &[0.5]),
            ],
        );
        assert!(j.ends_with("}\n") && j.lines().count() == 1, "{j}");
        assert!(
            j.contains(r#""kernel":"6.18","cpus":2,"cpu_model":"""#),
            "{j}"
        );
        // Tools in the order probed, escaped; the run without its RCU flag.
        assert!(
            j.contains(
                r#""command":"","tools":{"b\"":"x\ny\u0001","a":"1"},"run":{"reps":0,"limit":0.0,"wall":0.0,"load_end":""}}"#
            ),
            "{j}"
        );
        // NaN is no JSON number: null.
        assert!(
            j.contains(r#""samples":[1.0,3.0,null],"min":1.0,"median":3.0,"max":"#),
            "{j}"
        );
        // A failed step keeps its samples but has no summary.
        assert!(
            j.contains(r#""status":"fail","detail":"no","samples":[0.5],"min":null,"median":null,"max":null,"fast_half_mean":null}"#),
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
                &[9.0],
            ),
            rec("cf.del", "nft", Status::NoForm, &[]),
            rec("cf.del", "nfkeeper", Status::Ok, &[0.5]),
            rec("cf.append", "nfkeeper", Status::Ok, &[0.55, 0.5, 0.45]),
        ];
        let ads: Vec<String> = ["iptables-legacy", "iptables-nft", "nft"]
            .map(String::from)
            .to_vec();
        let md = to_markdown(&Machine::default(), &rs, &ads);
        // Without nfkeeper the first adapter is the reference.
        assert!(md.contains(
            "| case | N | iptables-legacy | iptables-nft | nft | iptables-nft ÷ iptables-legacy | nft ÷ iptables-legacy |\n|---|--:|--:|--:|--:|--:|--:|\n"
        ), "{md}");
        assert!(md.contains(
            "| cf.append append, \"quoted\" | 1k | 2.20 s (2.00 s–2.40 s) | 1.10 s | >10.0 s | 0.55× | — |"
        ), "{md}");
        assert!(
            md.contains("| cf.del append, \"quoted\" | 1k | FAIL | — | n/a | — | — |"),
            "{md}"
        );
        assert!(md.contains("- cf.del append, \"quoted\" N=1000 iptables-legacy: no such rule"));
        let ads: Vec<String> = ["iptables-legacy", "nfkeeper"].map(String::from).to_vec();
        let g = suite_grid(&rs, "cf", &ads);
        assert_eq!(g.head[4], "iptables-legacy ÷ nfkeeper");
        assert_eq!(
            g.rows[0][4], "4.44×",
            "baseline ÷ nfkeeper: above 1 = nfkeeper faster"
        );
        assert_eq!(
            g.rows[1][4], "—",
            "a failure has no ratio, whatever its samples"
        );
    }

    #[test]
    fn markdown_escaping() {
        let cases = [
            ("a|b", "a\\|b"),
            ("x_y*z", "x\\_y\\*z"),
            ("<b>", "\\<b>"),
            ("1.2 ms (1–2)", "1.2 ms (1–2)"),
        ];
        for (i, o) in cases {
            assert_eq!(md_text(i), o);
        }
        let g = Grid {
            head: vec!["a".into(), "b".into()],
            rows: vec![vec!["x|y".into(), "1".into()]],
            right: vec![false, true],
        };
        assert_eq!(md_table(&g), "| a | b |\n|---|--:|\n| x\\|y | 1 |\n");
    }
}
