//! `--compare RUN1,RUN2`: how repeatable two runs of the same suites are.
//! For every (suite, case, N) and every baseline measured in both runs, the
//! ratio baseline ÷ nfkeeper of each run — of the mean of each tool's
//! fastest half of repetitions ([`Summary::fast`]), as the report's ratio
//! columns — and how far apart the two ratios are. A
//! report, not a gate: the bar is "within 20%". Each pair also shows how
//! steady its measurements were — the spread (slowest ÷ fastest) of the
//! repetitions the four means use, the widest of the four — and the
//! report ends with each run's median spread: a busy machine widens it,
//! and a miss with a wide spread is a disturbed measurement.
//!
//! Input: the `results.csv` each run writes (see `report::to_csv`), read
//! with csv by column name.

use super::report::CSV_HEAD;
use super::Summary;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Two ratios are "the same" within this relative difference.
pub const TOLERANCE: f64 = 0.20;

/// (suite, case, name, n): one measured step.
type Key = (String, String, String, usize);

/// One tool's estimate of one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Est {
    /// [`Summary::fast`], seconds.
    pub fast: f64,
    /// Slowest ÷ fastest of the repetitions `fast` is the mean of (1 for
    /// one).
    pub spread: f64,
}

impl Est {
    fn of(samples: &[f64]) -> Option<Est> {
        let fast = Summary::of(samples)?.fast;
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let used = &s[..(s.len() / 2).max(1)];
        let spread = match (used.first(), used.last()) {
            (Some(lo), Some(hi)) if *lo > 0.0 => hi / lo,
            _ => 1.0,
        };
        Some(Est { fast, spread })
    }
}

/// Step → adapter → estimate of the OK samples.
type Best = BTreeMap<Key, BTreeMap<String, Est>>;

/// [`Est`] per case and adapter, from a results.csv text. Columns are
/// found by name (the header), so added columns don't matter.
pub fn best(csv: &str) -> Result<Best, String> {
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let head = rd.headers().map_err(|e| e.to_string())?.clone();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name} (want {})", CSV_HEAD.join(",")))
    };
    let [suite, case, name, adapter, n, status, seconds] =
        ["suite", "case", "name", "adapter", "n", "status", "seconds"].map(col);
    let (suite, case, name, adapter) = (suite?, case?, name?, adapter?);
    let (n, status, seconds) = (n?, status?, seconds?);
    let mut samples: BTreeMap<Key, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    for row in rd.records() {
        let r = row.map_err(|e| e.to_string())?;
        let line = r.position().map_or(0, |p| p.line());
        let f = |i: usize| r.get(i).unwrap_or_default();
        if f(status) != "ok" || f(seconds).is_empty() {
            continue;
        }
        let bad = |what: &str, v: &str| format!("line {line}: bad {what} {v:?}");
        let k: usize = f(n).parse().map_err(|_| bad("n", f(n)))?;
        let v: f64 = f(seconds).parse().map_err(|_| bad("seconds", f(seconds)))?;
        samples
            .entry((f(suite).into(), f(case).into(), f(name).into(), k))
            .or_default()
            .entry(f(adapter).into())
            .or_default()
            .push(v);
    }
    Ok(samples
        .into_iter()
        .map(|(k, by)| {
            let m = by
                .into_iter()
                .filter_map(|(a, v)| Some((a, Est::of(&v)?)))
                .collect();
            (k, m)
        })
        .collect())
}

/// One compared ratio.
#[derive(Debug, PartialEq)]
pub struct Pair {
    pub case: String,
    pub n: usize,
    pub baseline: String,
    pub first: f64,
    pub second: f64,
    /// The widest [`Est::spread`] of the four estimates.
    pub spread: f64,
}

impl Pair {
    /// |first − second| relative to the larger of the two.
    pub fn diff(&self) -> f64 {
        (self.first - self.second).abs() / self.first.max(self.second)
    }
}

/// Ratio pairs of every case both runs measured for nfkeeper and a
/// baseline.
pub fn pairs(a: &Best, b: &Best) -> Vec<Pair> {
    let mut out = Vec::new();
    for (key, ma) in a {
        let Some(mb) = b.get(key) else { continue };
        let (Some(na), Some(nb)) = (ma.get("nfkeeper"), mb.get("nfkeeper")) else {
            continue;
        };
        for (adapter, va) in ma.iter().filter(|(k, _)| *k != "nfkeeper") {
            let Some(vb) = mb.get(adapter) else { continue };
            if na.fast <= 0.0 || nb.fast <= 0.0 {
                continue;
            }
            out.push(Pair {
                case: format!("{} {} {}", key.0, key.1, key.2),
                n: key.3,
                baseline: adapter.clone(),
                first: va.fast / na.fast,
                second: vb.fast / nb.fast,
                spread: [va, na, vb, nb]
                    .iter()
                    .map(|e| e.spread)
                    .fold(1.0, f64::max),
            });
        }
    }
    out
}

/// The Markdown report of two runs' `results.csv`.
pub fn report(a: &str, b: &str) -> Result<String, String> {
    let (ba, bb) = (best(a)?, best(b)?);
    let ps = pairs(&ba, &bb);
    let mut o = String::from(
        "| case | N | baseline | ratio run 1 | ratio run 2 | difference | spread |\n|---|---:|---|---:|---:|---:|---:|\n",
    );
    for p in &ps {
        let flag = if p.diff() > TOLERANCE { " ✗" } else { "" };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {:.2} | {:.2} | {:.0}%{flag} | {:.2}× |",
            p.case,
            p.n,
            p.baseline,
            p.first,
            p.second,
            p.diff() * 100.0,
            p.spread
        );
    }
    let within = ps.iter().filter(|p| p.diff() <= TOLERANCE).count();
    let _ = writeln!(
        o,
        "\n{within} of {} ratio pairs within {:.0}% (ratio = baseline ÷ nfkeeper, means of the fastest half of repetitions).",
        ps.len(),
        TOLERANCE * 100.0
    );
    let _ = writeln!(
        o,
        "Spread: slowest ÷ fastest of the repetitions the means use, the widest of a pair's four; \
         median over every measurement: run 1 {:.2}×, run 2 {:.2}× (a busy machine widens it).",
        median_spread(&ba),
        median_spread(&bb)
    );
    Ok(o)
}

/// Median [`Est::spread`] over every step and tool of a run (1 for none).
fn median_spread(b: &Best) -> f64 {
    let mut v: Vec<f64> = b
        .values()
        .flat_map(|m| m.values().map(|e| e.spread))
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(1.0)
}

/// `--compare DIR1,DIR2`: prints the report; exit 0 (2 on unreadable input).
pub fn main(dirs: &str) -> i32 {
    let Some((d1, d2)) = dirs.split_once(',') else {
        eprintln!("--compare takes DIR1,DIR2 (two runs' output directories)");
        return 2;
    };
    let read = |d: &str| {
        let p = Path::new(d).join("results.csv");
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    match read(d1).and_then(|a| read(d2).and_then(|b| report(&a, &b))) {
        Ok(r) => {
            print!("{r}");
            0
        }
        Err(e) => {
            eprintln!("{e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/compare")
            .join(name);
        std::fs::read_to_string(p).expect("fixture")
    }

    /// What `report::to_csv` writes, `best` reads back: quoted names,
    /// failed records and records without samples.
    #[test]
    fn reads_what_the_report_writes() {
        use crate::suites::{Record, Status};
        let rec = |name: &str, adapter: &str, status: Status, samples: &[f64]| Record {
            suite: "cf".into(),
            case: "cf.x".into(),
            name: name.into(),
            adapter: adapter.into(),
            n: 7,
            status,
            samples: samples.to_vec(),
        };
        let odd = "say \"hi\", then\nstop";
        let csv = crate::suites::to_csv(&[
            rec(odd, "nfkeeper", Status::Ok, &[2.0, 1.0]),
            rec(odd, "nft", Status::Ok, &[3.0]),
            rec(odd, "iptables-nft", Status::Fail("a, \"b\"".into()), &[9.0]),
            rec(odd, "iptables-legacy", Status::NoForm, &[]),
        ]);
        let b = best(&csv).unwrap();
        let key = ("cf".to_string(), "cf.x".to_string(), odd.to_string(), 7);
        let got: Vec<(&str, f64)> = b[&key].iter().map(|(a, e)| (a.as_str(), e.fast)).collect();
        assert_eq!(got, [("nfkeeper", 1.0), ("nft", 3.0)]);
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn pairs_and_report_of_two_runs() {
        let (a, b) = (data("run1.csv"), data("run2.csv"));
        let ps = pairs(&best(&a).unwrap(), &best(&b).unwrap());
        // cf.append: nft 4/2 = 2.0 then 5/2 = 2.5 (20% apart, within);
        // 2.1: iptables-nft 3/1 = 3.0 then 6/1 = 6.0 (50%, flagged);
        // 2.4: four repetitions, so means of the fastest two: nft 2/1.25
        // = 1.6 (nfkeeper's 1 and 1.5: spread 1.5) then 2/1 = 2.0;
        // the failed and the single-run cases give no pair.
        let got: Vec<(String, String, f64, f64, f64)> = ps
            .iter()
            .map(|p| {
                let spread = (p.spread * 100.0).round() / 100.0;
                (
                    p.case.clone(),
                    p.baseline.clone(),
                    p.first,
                    p.second,
                    spread,
                )
            })
            .collect();
        let row = |case: &str, b: &str, r1, r2, sp| (case.to_string(), b.to_string(), r1, r2, sp);
        assert_eq!(
            got,
            vec![
                row("cf cf.append append one rule", "nft", 2.0, 2.5, 1.0),
                row("ruleset 2.1 append, quoted", "iptables-nft", 3.0, 6.0, 1.0),
                row("ruleset 2.4 four reps", "nft", 1.6, 2.0, 1.5),
            ]
        );
        let r = report(&a, &b).unwrap();
        assert!(r.contains("| 20% | 1.00× |"), "{r}");
        assert!(r.contains("| 50% ✗ | 1.00× |"), "{r}");
        assert!(r.contains("| 1.60 | 2.00 | 20% | 1.50× |"), "{r}");
        assert!(
            r.contains("\n2 of 3 ratio pairs within 20% (ratio = baseline ÷ nfkeeper, means of the fastest half of repetitions).\n"),
            "{r}"
        );
        assert!(
            r.ends_with("median over every measurement: run 1 1.00×, run 2 1.00× (a busy machine widens it).\n"),
            "{r}"
        );
    }

    #[test]
    fn malformed_input_is_an_error() {
        let head = "suite,case,name,adapter,n,status,rep,seconds,detail\n";
        let cases = [
            (head, "cf,x,y,nfkeeper,zz,ok,0,1,\n", "line 2: bad n \"zz\""),
            (
                head,
                "cf,x,y,nfkeeper,1,ok,0,1,\ncf,x,y,nft,1,ok,0,fast,\n",
                "line 3: bad seconds \"fast\"",
            ),
            (head, "cf,x,y,nfkeeper,1,ok,0\n", "line: 2"),
            ("suite,case,name,adapter,status\n", "", "no column n"),
        ];
        for (head, body, want) in cases {
            let e = best(&format!("{head}{body}")).unwrap_err();
            assert!(e.contains(want), "{body}: {e}");
        }
    }
}
