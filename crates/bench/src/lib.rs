//! nfkeeper-bench: the benchmark suites, the demo and `load`, outside the
//! lean nfkeeper binary (which forwards `nfkeeper bench|demo|load` to the
//! `nfkeeper-bench` program beside it). [`cmd`] is its command line; the
//! kernel suites are in [`suites`], the demo in [`demo`].
//!
//! This file: benchmarks of nfkeeper's in-memory model: restore (parse +
//! build), single rule operations, save, and memory per rule. No
//! benchmark crate, just `std::time::Instant`, `std::hint::black_box` and
//! repetition.
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

pub mod args;
pub mod cmd;
pub mod demo;
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

/// The options of the model suite (`nfkeeper bench model`, `model-bench`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelArgs {
    pub quick: bool,
    pub sizes: Option<args::Sizes>,
    pub reps: Option<usize>,
    pub op_reps: Option<usize>,
    pub batch: Option<usize>,
}

impl ModelArgs {
    /// The options as clap arguments, with their help.
    pub fn args() -> Vec<clap::Arg> {
        use args::{flag, num, value};
        vec![
            flag("quick").help("A first look: N = 1k, 10k, 100k, fewer repetitions"),
            value("sizes", "N,N,...", args::model_sizes).help(
                "Rule counts, each at least 10 [full: 1000,100000,1000000; quick: 1000,10000,100000]",
            ),
            value("reps", "N", num).help("Repetitions of restore and save [full: 5; quick: 3]"),
            value("op-reps", "N", num)
                .help("Samples of each single-operation measurement [full: 21; quick: 7]"),
            value("batch", "K", num)
                .help("Operations per single-operation sample [full: 1000; quick: 500]"),
        ]
    }

    /// The options from what clap matched with [`ModelArgs::args`].
    pub fn from_matches(m: &clap::ArgMatches) -> ModelArgs {
        let n = |name: &str| m.get_one::<usize>(name).copied();
        ModelArgs {
            quick: m.get_flag("quick"),
            sizes: m.get_one::<args::Sizes>("sizes").cloned(),
            reps: n("reps"),
            op_reps: n("op-reps"),
            batch: n("batch"),
        }
    }

    /// The full or quick defaults with the options given on top
    /// (repetitions and batch at least 1).
    pub fn opts(&self) -> ModelOpts {
        let mut o = if self.quick {
            ModelOpts::quick()
        } else {
            ModelOpts::default()
        };
        if let Some(s) = &self.sizes {
            o.sizes = s.clone();
        }
        if let Some(r) = self.reps {
            o.reps = r.max(1);
        }
        if let Some(r) = self.op_reps {
            o.op_reps = r.max(1);
        }
        if let Some(b) = self.batch {
            o.batch = b.max(1);
        }
        o
    }
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

    #[test]
    fn model_options() {
        let opts = |line: &str| {
            let argv = std::iter::once("model").chain(line.split_whitespace());
            clap::Command::new("model")
                .args(ModelArgs::args())
                .try_get_matches_from(argv)
                .map(|m| ModelArgs::from_matches(&m).opts())
                .map_err(|e| e.to_string())
        };
        let o = opts("").unwrap();
        assert_eq!(
            (o.sizes, o.reps, o.op_reps, o.batch),
            (vec![1_000, 100_000, 1_000_000], 5, 21, 1000)
        );
        let o = opts("--batch 0 --quick --sizes 10,1_000 --reps 2").unwrap();
        assert_eq!(
            (o.sizes, o.reps, o.op_reps, o.batch),
            (vec![10, 1_000], 2, 7, 1)
        );
        for (line, want) in [
            ("--sizes 9", "each size must be at least 10"),
            ("--op-reps", "a value is required for '--op-reps <N>'"),
            ("--reps x", "not a number: x"),
            ("--frob", "unexpected argument '--frob'"),
        ] {
            let e = opts(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
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
