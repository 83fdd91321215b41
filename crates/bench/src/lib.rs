//! Benchmarks of nfkeeper's in-memory model: restore (parse + build), single
//! rule operations, save, and memory per rule. Std only: no benchmark crate,
//! just `std::time::Instant`, `std::hint::black_box` and repetition.
//!
//! Method, common to every measurement:
//! - input generation (restore text, argv words, pre-parsed rule bodies) and
//!   any undo work happen outside the timed region;
//! - each measurement is repeated; a result reports min / median / max over
//!   the repetitions (for throughputs, "min" is the slowest repetition);
//! - results flow through `black_box` so the optimiser cannot drop the work.
//!
//! What it is not: a statistics package. The numbers are wall-clock times on
//! whatever machine runs them, noisy when other work shares the CPU.
//!
//! `model_suite` runs everything; `print_markdown` renders the results. The
//! `model-bench` binary adds a counting global allocator (see `AllocProbe`) for
//! exact heap bytes per rule.

mod model;
pub mod netns;
pub mod rcu;
pub mod suites;

pub use model::model_suite;

/// What to run. `Default` is the full suite: N = 1k, 100k, 1M.
#[derive(Clone, Debug)]
pub struct ModelOpts {
    /// Rule counts. Restore, save and memory run at every size for both
    /// shapes; single operations run on a FORWARD chain of every size, and the
    /// growth ratios compare the largest size with the smallest.
    pub sizes: Vec<usize>,
    /// Repetitions of the heavy measurements (restore, save).
    pub reps: usize,
    /// Repetitions (batches) of each single-operation measurement.
    pub op_reps: usize,
    /// Operations per single-operation sample, timed in sub-batches of at
    /// most N/10 so the chain stays within 10% of N.
    pub batch: usize,
    /// Exact heap accounting, when the program installed a counting allocator.
    pub alloc: Option<AllocProbe>,
    /// Progress lines on stderr.
    pub progress: bool,
}

impl Default for ModelOpts {
    fn default() -> Self {
        ModelOpts {
            sizes: vec![1_000, 100_000, 1_000_000],
            reps: 5,
            op_reps: 21,
            batch: 1000,
            alloc: None,
            progress: false,
        }
    }
}

impl ModelOpts {
    /// A fast run for a first look: N = 1k, 10k, 100k, fewer repetitions.
    pub fn quick() -> Self {
        ModelOpts {
            sizes: vec![1_000, 10_000, 100_000],
            reps: 3,
            op_reps: 7,
            batch: 500,
            ..ModelOpts::default()
        }
    }
}

/// Hooks into a counting global allocator (the library cannot install one:
/// a global allocator belongs to the final program).
#[derive(Clone, Copy, Debug)]
pub struct AllocProbe {
    /// Bytes currently allocated (requested sizes, not the allocator's own
    /// rounding or bookkeeping).
    pub current: fn() -> usize,
    /// Highest `current` since the last `reset_peak`.
    pub peak: fn() -> usize,
    /// Set the peak to the current value.
    pub reset_peak: fn(),
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Result {
    /// Section: "restore", "save", "memory", "op: model", "op: command",
    /// "growth".
    pub group: &'static str,
    pub name: String,
    /// Rules in the table (or chain) measured.
    pub n: usize,
    pub unit: &'static str,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Repetitions behind min/median/max; 1 for a computed or exact value.
    pub samples: usize,
    pub note: String,
}

impl Result {
    /// Summary of repeated samples (at least one).
    pub fn from_samples(
        group: &'static str,
        name: impl Into<String>,
        n: usize,
        unit: &'static str,
        samples: &[f64],
        note: impl Into<String>,
    ) -> Self {
        assert!(!samples.is_empty(), "no samples for a result");
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let k = s.len();
        let median = if k % 2 == 1 {
            s[k / 2]
        } else {
            (s[k / 2 - 1] + s[k / 2]) / 2.0
        };
        Result {
            group,
            name: name.into(),
            n,
            unit,
            min: s[0],
            median,
            max: s[k - 1],
            samples: k,
            note: note.into(),
        }
    }

    /// An exact or derived value (memory, ratios).
    pub fn single(
        group: &'static str,
        name: impl Into<String>,
        n: usize,
        unit: &'static str,
        value: f64,
        note: impl Into<String>,
    ) -> Self {
        Self::from_samples(group, name, n, unit, &[value], note)
    }
}

/// A number for humans: thousands separators when large, three significant
/// digits when small.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a >= 10_000.0 {
        let digits = format!("{:.0}", a);
        let mut out = String::new();
        for (i, ch) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(ch);
        }
        if v < 0.0 {
            out.insert(0, '-');
        }
        out
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Sizes like 1k, 100k, 1M.
pub fn fmt_n(n: usize) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n % 1_000 == 0 {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// The results as one Markdown table, in the order given.
pub fn print_markdown(results: &[Result]) -> String {
    let mut s = String::new();
    s.push_str("| Group | Measurement | N | Min | Median | Max | Unit | Reps | Notes |\n");
    s.push_str("|---|---|--:|--:|--:|--:|---|--:|---|\n");
    for r in results {
        let (min, max) = if r.samples > 1 {
            (fmt_num(r.min), fmt_num(r.max))
        } else {
            ("".to_string(), "".to_string())
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.group,
            r.name,
            fmt_n(r.n),
            min,
            fmt_num(r.median),
            max,
            r.unit,
            r.samples,
            r.note.replace('|', "\\|"),
        ));
    }
    s
}

/// Usage of the model suite's options.
pub const USAGE: &str =
    "usage: [model-bench|nfkeeper bench model] [--sizes N,N,...] [--reps N] [--op-reps N] [--batch K] [--quick]";

fn number(v: Option<&String>, flag: &str) -> std::result::Result<usize, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.replace('_', "")
        .parse()
        .map_err(|_| format!("{flag}: not a number: {v}"))
}

/// Options of the model suite from command-line words (`--sizes 1000,1000000`,
/// `--reps N`, `--op-reps N`, `--batch K`, `--quick`).
pub fn parse_model_args(args: &[String]) -> std::result::Result<ModelOpts, String> {
    let mut o = if args.iter().any(|a| a == "--quick") {
        ModelOpts::quick()
    } else {
        ModelOpts::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => {}
            "--sizes" => {
                let v = it.next().ok_or("--sizes needs a value")?;
                o.sizes = v
                    .split(',')
                    .map(|s| number(Some(&s.to_string()), "--sizes"))
                    .collect::<std::result::Result<_, _>>()?;
                if o.sizes.iter().any(|&n| n < 10) {
                    return Err("--sizes: each size must be at least 10".into());
                }
            }
            "--reps" => o.reps = number(it.next(), "--reps")?.max(1),
            "--op-reps" => o.op_reps = number(it.next(), "--op-reps")?.max(1),
            "--batch" => o.batch = number(it.next(), "--batch")?.max(1),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// The 1-minute load average (Linux), to judge how noisy a run was.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_formatting() {
        let r = Result::from_samples("g", "x", 10, "ms", &[3.0, 1.0, 2.0, 10.0], "");
        assert_eq!((r.min, r.median, r.max, r.samples), (1.0, 2.5, 10.0, 4));
        assert_eq!(fmt_num(1_234_567.4), "1,234,567");
        assert_eq!(fmt_num(0.1234), "0.123");
        assert_eq!(fmt_n(100_000), "100k");
        assert_eq!(fmt_n(1_000_000), "1M");
        assert_eq!(fmt_n(1_234), "1234");
    }

    /// The whole suite at tiny sizes: every number positive and finite.
    #[test]
    fn tiny_suite_runs() {
        let opts = ModelOpts {
            sizes: vec![100, 200],
            reps: 2,
            op_reps: 2,
            batch: 1000,
            alloc: None,
            progress: false,
        };
        let res = model_suite(&opts);
        for g in [
            "restore",
            "save",
            "memory",
            "op: model",
            "op: command",
            "growth",
        ] {
            assert!(res.iter().any(|r| r.group == g), "no {g} results");
        }
        for r in &res {
            for v in [r.min, r.median, r.max] {
                assert!(v.is_finite() && v > 0.0, "{r:?}");
            }
            assert!(r.min <= r.median && r.median <= r.max, "{r:?}");
        }
        let md = print_markdown(&res);
        assert_eq!(md.lines().count(), res.len() + 2);
    }
}
