//! Plots of the suites' results as SVG, written by our own small writer
//! (`svg`), so the report needs no plotting dependency and renders in any
//! browser.
//!
//! One figure per case measured at several N: x = N, y = the step's time
//! (or rate), one line with markers per adapter, error bars from min to
//! max, log axes when the values span more than [`axis::LOG_SPAN`]. Cases
//! measured at one N only (the `cf` single commands on the big ruleset, or
//! any suite run with one size) share one dot plot per (suite, N) with a
//! row per case. A failed step is a cross in a FAIL band outside the value
//! range and a step killed at the limit a hollow marker at the limit with
//! its label: neither is ever drawn as a measured value. Each adapter keeps
//! its colour and marker shape in every figure.
//!
//! What it is not: a general charting library (no other chart types, no
//! interactivity).

pub mod axis;
mod draw;
pub mod svg;

pub use draw::{Area, Placed};
pub use svg::{esc, Shape};

use super::report::{quantity, shown, shown_name, Quantity, Record, Status, Summary};

/// What one point of a series shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    Value(Summary),
    /// Killed at this limit (seconds).
    Over(f64),
    Fail,
}

/// The mark of a record: `None` for an operation the tool has no form of
/// or a missing tool (nothing to draw). Only a successful step has a
/// value (as shown: a rate for the packet suite); a failed one never
/// does, whatever samples it collected before failing.
pub fn mark(r: &Record) -> Option<Mark> {
    match &r.status {
        Status::Ok => shown(r).map(Mark::Value),
        Status::Timeout(limit) => Some(Mark::Over(*limit)),
        Status::Fail(_) => Some(Mark::Fail),
        Status::NoForm | Status::Unavailable(_) => None,
    }
}

/// One adapter's points: (x, mark), x = N or the category's index.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, Mark)>,
    /// Shown under the name in the legend (e.g. why there are no points).
    pub note: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum XAxis {
    /// x = N; the axis title.
    Numeric(String),
    /// One row per category, in order; x of a point = the index.
    Categories(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x: XAxis,
    /// The value axis title without the scale (", log scale" is added).
    pub value_title: String,
    pub quantity: Quantity,
    /// A step killed at the limit is drawn at the limit on the value axis
    /// (times of whole steps); otherwise in the band (rates, per-call
    /// times: the limit is not one of their values).
    pub limit_on_axis: bool,
    pub series: Vec<Series>,
}

/// A chart with where it belongs: the suite and a file name (`.svg`).
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub suite: String,
    pub file: String,
    pub chart: Chart,
}

/// The adapter's colour and marker: fixed for the known tools, stable for
/// others (from the name), so a tool looks the same in every figure.
pub fn style(adapter: &str) -> (&'static str, Shape) {
    const KNOWN: &[(&str, &str, Shape)] = &[
        ("nfkeeper", "#d62728", Shape::Circle),
        ("iptables-legacy", "#7f7f7f", Shape::Square),
        ("iptables-nft", "#1f77b4", Shape::Triangle),
        ("nft", "#2ca02c", Shape::Diamond),
        ("ipset", "#9467bd", Shape::TriangleDown),
        ("nfkeeper-daemon", "#ff7f0e", Shape::Circle),
        ("nfkeeper-api", "#8c564b", Shape::Circle),
    ];
    const OTHER: &[&str] = &["#17becf", "#bcbd22", "#e377c2", "#393b79", "#637939"];
    const SHAPES: &[Shape] = &[
        Shape::Square,
        Shape::Triangle,
        Shape::Diamond,
        Shape::TriangleDown,
    ];
    if let Some(&(_, c, s)) = KNOWN.iter().find(|(n, _, _)| *n == adapter) {
        return (c, s);
    }
    // FNV-1a: a fixed hash, so the choice never changes between runs.
    let h = adapter.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    (
        OTHER[(h % OTHER.len() as u64) as usize],
        SHAPES[((h >> 8) % SHAPES.len() as u64) as usize],
    )
}

/// A file name part: ASCII letters, digits, `.` and `-`; anything else
/// becomes `-`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The items in order of first appearance.
fn distinct<T: PartialEq + Clone>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

fn value_title(case: &str, q: &Quantity) -> String {
    match q {
        Quantity::Rate(unit) => format!("rate ({unit})"),
        Quantity::Time if case.ends_with(".call") => "time per call".into(),
        Quantity::Time => "runtime".into(),
    }
}

/// What a series says when it has no points: the status all its records
/// share (`n/a`, `missing: …`).
fn note(recs: &[&Record]) -> String {
    if recs.iter().any(|r| mark(r).is_some()) {
        return String::new();
    }
    match recs.first().map(|r| &r.status) {
        Some(Status::NoForm) => "no form of this operation".into(),
        Some(Status::Unavailable(_)) => "not installed".into(),
        _ => "no results".into(),
    }
}

/// The longest prefix ending in `": "` that every name shares.
fn common_prefix<'a>(names: &[&'a str]) -> &'a str {
    let Some(first) = names.first() else {
        return "";
    };
    let mut cut = 0;
    for (i, _) in first.match_indices(": ") {
        let p = &first[..i + 2];
        if names.iter().all(|n| n.starts_with(p)) {
            cut = i + 2;
        }
    }
    &first[..cut]
}

/// The figures of a run, suite by suite: a line chart per case measured at
/// two or more N, then a dot plot per (suite, N) of the cases measured at
/// that one N only. Series follow `adapters`' order.
pub fn figures(records: &[Record], adapters: &[String]) -> Vec<Figure> {
    let mut out = Vec::new();
    for suite in distinct(records.iter().map(|r| r.suite.as_str())) {
        let recs: Vec<&Record> = records.iter().filter(|r| r.suite == suite).collect();
        let mut single: Vec<((usize, Quantity), Vec<&str>)> = Vec::new();
        for case in distinct(recs.iter().map(|r| r.case.as_str())) {
            let of_case: Vec<&Record> = recs.iter().copied().filter(|r| r.case == case).collect();
            let ns = distinct(of_case.iter().map(|r| r.n));
            let q = quantity(of_case[0]);
            if ns.len() == 1 {
                let key = (ns[0], q);
                match single.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, cases)) => cases.push(case),
                    None => single.push((key, vec![case])),
                }
                continue;
            }
            let series = adapters
                .iter()
                .map(|a| {
                    let mine: Vec<&Record> = of_case
                        .iter()
                        .copied()
                        .filter(|r| &r.adapter == a)
                        .collect();
                    let mut points: Vec<(f64, Mark)> = mine
                        .iter()
                        .filter_map(|r| mark(r).map(|m| (r.n as f64, m)))
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Series {
                        name: a.clone(),
                        points,
                        note: note(&mine),
                    }
                })
                .collect();
            out.push(Figure {
                suite: suite.to_string(),
                file: format!("{}-{}.svg", slug(suite), slug(case)),
                chart: Chart {
                    title: format!("{suite} {case}: {}", shown_name(of_case[0])),
                    x: XAxis::Numeric("N".into()),
                    value_title: value_title(case, &q),
                    limit_on_axis: q == Quantity::Time && !case.ends_with(".call"),
                    quantity: q,
                    series,
                },
            });
        }
        for ((n, q), cases) in single {
            out.push(dot_plot(suite, n, q, &cases, &recs, adapters));
        }
    }
    out
}

/// One row per case, all measured at `n` in quantity `q` (rates and times
/// never share an axis: each kind gets its own plot).
fn dot_plot(
    suite: &str,
    n: usize,
    q: Quantity,
    cases: &[&str],
    recs: &[&Record],
    adapters: &[String],
) -> Figure {
    let first = |c: &str| recs.iter().find(|r| r.case == c).copied();
    let shown: Vec<String> = cases
        .iter()
        .filter_map(|c| first(c))
        .map(shown_name)
        .collect();
    let names: Vec<&str> = shown.iter().map(String::as_str).collect();
    let prefix = common_prefix(&names);
    let labels = cases
        .iter()
        .zip(&names)
        .map(|(c, name)| format!("{c}  {}", &name[prefix.len()..]))
        .collect();
    let series = adapters
        .iter()
        .map(|a| {
            let mine: Vec<&Record> = recs
                .iter()
                .copied()
                .filter(|r| &r.adapter == a && cases.contains(&r.case.as_str()))
                .collect();
            let points = cases
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let r = mine.iter().find(|r| r.case == *c)?;
                    mark(r).map(|m| (i as f64, m))
                })
                .collect();
            Series {
                name: a.clone(),
                points,
                note: note(&mine),
            }
        })
        .collect();
    let what = prefix.trim_end_matches(": ");
    let title = if what.is_empty() {
        format!("{suite}, N = {}: single operations", crate::fmt_n(n))
    } else {
        format!("{suite}, N = {}: {what}", crate::fmt_n(n))
    };
    Figure {
        suite: suite.to_string(),
        file: match q {
            Quantity::Time => format!("{}-n{n}.svg", slug(suite)),
            Quantity::Rate(_) => format!("{}-n{n}-rate.svg", slug(suite)),
        },
        chart: Chart {
            title,
            x: XAxis::Categories(labels),
            value_title: value_title("", &q),
            limit_on_axis: q == Quantity::Time,
            quantity: q,
            series,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        case: &str,
        name: &str,
        adapter: &str,
        n: usize,
        status: Status,
        samples: &[f64],
    ) -> Record {
        Record {
            suite: "s".into(),
            case: case.into(),
            name: name.into(),
            adapter: adapter.into(),
            n,
            status,
            samples: samples.to_vec(),
        }
    }

    #[test]
    fn marks_never_turn_failures_into_values() {
        let cases = [
            (
                Status::Ok,
                vec![1.0, 3.0, 2.0],
                Some(Mark::Value(Summary {
                    min: 1.0,
                    median: 2.0,
                    max: 3.0,
                    fast: 1.0,
                })),
            ),
            (Status::Fail("x".into()), vec![1.0, 2.0], Some(Mark::Fail)),
            (Status::Timeout(10.0), vec![1.0], Some(Mark::Over(10.0))),
            (Status::NoForm, vec![], None),
            (
                Status::Unavailable("apt-get install nftables".into()),
                vec![],
                None,
            ),
            (Status::Ok, vec![], None),
        ];
        for (st, samples, want) in cases {
            assert_eq!(
                mark(&rec("c", "c", "a", 1, st.clone(), &samples)),
                want,
                "{st:?}"
            );
        }
    }

    #[test]
    fn styles_are_fixed_and_distinct() {
        let known = [
            "nfkeeper",
            "iptables-legacy",
            "iptables-nft",
            "nft",
            "ipset",
        ];
        let colours = distinct(known.iter().map(|a| style(a).0));
        let shapes = distinct(known.iter().map(|a| style(a).1));
        assert_eq!((colours.len(), shapes.len()), (5, 5));
        assert_eq!(style("iptables-nft"), (("#1f77b4"), Shape::Triangle));
        assert_eq!(style("some-tool"), style("some-tool"));
    }

    #[test]
    fn grouping_into_figures() {
        let ok = |s: &[f64]| (Status::Ok, s.to_vec());
        let rs: Vec<Record> = [
            ("a.x", "append N", "nft", 100, ok(&[1.0])),
            ("a.x", "append N", "nft", 1000, ok(&[2.0])),
            (
                "a.x",
                "append N",
                "iptables-nft",
                100,
                (Status::Fail("e".into()), vec![5.0]),
            ),
            ("a.x", "append N", "iptables-nft", 1000, ok(&[3.0])),
            (
                "b.N",
                "5k rules: create a chain (-N)",
                "nft",
                5000,
                ok(&[0.1]),
            ),
            (
                "b.N",
                "5k rules: create a chain (-N)",
                "iptables-nft",
                5000,
                (Status::NoForm, vec![]),
            ),
            ("b.S", "5k rules: list <all> (-S)", "nft", 5000, ok(&[0.2])),
            (
                "b.S",
                "5k rules: list <all> (-S)",
                "iptables-nft",
                5000,
                (Status::NoForm, vec![]),
            ),
            (
                "b.udp",
                "UDP, s per packet",
                "nft",
                5000,
                ok(&[0.001, 0.002, 0.004]),
            ),
        ]
        .into_iter()
        .map(|(c, name, a, n, (st, s))| rec(c, name, a, n, st, &s))
        .collect();
        let mut rs = rs;
        // The packet suite's costs per packet plot as rates.
        rs[8].suite = "packet".into();
        let ads = vec!["iptables-nft".to_string(), "nft".to_string()];
        let f = figures(&rs, &ads);
        let files: Vec<&str> = f.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(files, ["s-a.x.svg", "s-n5000.svg", "packet-n5000-rate.svg"]);
        let line = &f[0].chart;
        assert_eq!(line.title, "s a.x: append N");
        assert_eq!(
            line.series[0].points,
            [
                (100.0, Mark::Fail),
                (
                    1000.0,
                    Mark::Value(Summary {
                        min: 3.0,
                        median: 3.0,
                        max: 3.0,
                        fast: 3.0,
                    })
                )
            ]
        );
        let dots = &f[1].chart;
        assert_eq!(dots.title, "s, N = 5k: 5k rules");
        assert_eq!(
            dots.x,
            XAxis::Categories(vec![
                "b.N  create a chain (-N)".into(),
                "b.S  list <all> (-S)".into()
            ]),
            "the rate case does not share a time axis"
        );
        assert_eq!(f[2].chart.quantity, Quantity::Rate("kpps".into()));
        assert_eq!(f[2].chart.value_title, "rate (kpps)");
        assert_eq!(
            f[2].chart.series[1].points,
            [(
                0.0,
                Mark::Value(Summary {
                    min: 0.25,
                    median: 0.5,
                    max: 1.0,
                    fast: 1.0,
                })
            )]
        );
        assert_eq!(dots.series[0].note, "no form of this operation");
        assert_eq!(dots.series[1].points.len(), 2);
    }

    #[test]
    fn prefixes_and_slugs() {
        assert_eq!(common_prefix(&["a: b: c", "a: b: d"]), "a: b: ");
        assert_eq!(common_prefix(&["a: b", "c: d"]), "");
        assert_eq!(common_prefix(&["only: one"]), "only: ");
        assert_eq!(slug("cf.big.N"), "cf.big.n");
        assert_eq!(slug("x/y z<"), "x-y-z-");
    }
}
