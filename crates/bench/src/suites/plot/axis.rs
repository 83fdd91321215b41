//! Axes of the plots: a scale (linear or logarithmic) fitted to the data
//! and its ticks with labels. Pure arithmetic; drawing is in `draw`.

/// Above this ratio of the largest to the smallest positive value an axis
/// is logarithmic: on a linear one the small values would share a pixel
/// row and their differences (often the point of the plot) would vanish.
pub const LOG_SPAN: f64 = 20.0;

/// Where values go between the axis ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear {
        lo: f64,
        hi: f64,
    },
    /// `lo` > 0. `zero` > 0 is where the value 0 is drawn (a slot left of
    /// the smallest positive value, for N = 0 on an N axis); 0 when the
    /// axis has no such slot.
    Log {
        lo: f64,
        hi: f64,
        zero: f64,
    },
}

impl Scale {
    /// 0 at `lo`, 1 at `hi`; values outside the bounds fall outside [0, 1]
    /// (the caller clamps); on a log scale non-positive values go to the
    /// zero slot, or to −∞ without one.
    pub fn frac(&self, v: f64) -> f64 {
        match *self {
            Scale::Linear { lo, hi } => (v - lo) / (hi - lo),
            Scale::Log { lo, hi, zero } => {
                let v = if v <= 0.0 && zero > 0.0 { zero } else { v };
                (v.log10() - lo.log10()) / (hi.log10() - lo.log10())
            }
        }
    }

    pub fn is_log(&self) -> bool {
        matches!(self, Scale::Log { .. })
    }
}

/// A tick; an empty label makes a minor tick (grid line only).
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub scale: Scale,
    pub ticks: Vec<Tick>,
}

/// Whether values from `lo` to `hi` need a log axis.
pub fn wants_log(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo > LOG_SPAN
}

/// A value axis for data within [`lo`, `hi`] (finite, `lo` ≤ `hi`): log
/// from the decade below `lo` to the decade above `hi`, ticks at every
/// decade (every k-th labelled when there are more than 8) and minor ticks
/// at 2…9 when there are at most 4; otherwise linear from 0 with a 1–2–5
/// step and at most 6 intervals. `fmt` labels a tick value.
pub fn fit_values(lo: f64, hi: f64, fmt: &dyn Fn(f64) -> String) -> Axis {
    if wants_log(lo, hi) {
        return log_axis(lo, hi, fmt);
    }
    let hi = if hi > 0.0 { hi } else { 1.0 };
    let step = nice_step(hi / 6.0);
    let top = (hi / step - 1e-9).ceil().max(1.0) * step;
    let count = (top / step).round() as usize;
    let ticks = (0..=count)
        .map(|i| {
            let v = i as f64 * step;
            Tick {
                value: v,
                label: fmt(v),
            }
        })
        .collect();
    Axis {
        scale: Scale::Linear { lo: 0.0, hi: top },
        ticks,
    }
}

fn log_axis(lo: f64, hi: f64, fmt: &dyn Fn(f64) -> String) -> Axis {
    // The epsilon keeps an exact decade (1e-3 read back as 0.00099999…)
    // from opening one more decade.
    let e0 = (lo.log10() + 1e-9).floor() as i32;
    let e1 = ((hi.log10() - 1e-9).ceil() as i32).max(e0 + 1);
    let decades = (e1 - e0) as usize;
    let every = decades.div_ceil(8).max(1);
    let mut ticks = Vec::new();
    for e in e0..=e1 {
        let v = decade(e);
        let labelled = (e - e0) as usize % every == 0;
        ticks.push(Tick {
            value: v,
            label: if labelled { fmt(v) } else { String::new() },
        });
        if decades <= 4 && e < e1 {
            ticks.extend((2..10).map(|m| Tick {
                value: m as f64 * v,
                label: String::new(),
            }));
        }
    }
    Axis {
        scale: Scale::Log {
            lo: decade(e0),
            hi: decade(e1),
            zero: 0.0,
        },
        ticks,
    }
}

/// 10^e, exact for the decades plots use (`powi` drifts for negative e).
fn decade(e: i32) -> f64 {
    if e >= 0 {
        10f64.powi(e)
    } else {
        1.0 / 10f64.powi(-e)
    }
}

/// The smallest of 1, 2, 5 × 10^k that is at least `raw` (> 0).
pub fn nice_step(raw: f64) -> f64 {
    let e = raw.log10().floor() as i32;
    let base = decade(e);
    let f = raw / base;
    let m = if f <= 1.0 + 1e-9 {
        1.0
    } else if f <= 2.0 + 1e-9 {
        2.0
    } else if f <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    m * base
}

/// A position axis for the given x values (finite, ≥ 0; at least one):
/// ticks at exactly those values, log when the positive ones span more
/// than [`LOG_SPAN`] (a 0 then gets a slot left of them), the ends padded
/// so no point sits on the frame.
pub fn fit_points(xs: &[f64], fmt: &dyn Fn(f64) -> String) -> Axis {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo_pos = xs
        .iter()
        .copied()
        .filter(|&x| x > 0.0)
        .fold(f64::INFINITY, f64::min);
    let scale = if wants_log(lo_pos, hi) {
        let span = hi / lo_pos;
        let pad = span.powf(0.06);
        let zero = if lo <= 0.0 {
            lo_pos / span.powf(0.3)
        } else {
            0.0
        };
        Scale::Log {
            lo: if zero > 0.0 { zero } else { lo_pos } / pad,
            hi: hi * pad,
            zero,
        }
    } else if hi > lo {
        let pad = (hi - lo) * 0.06;
        // Below 0 when N starts at 0: the ticks are the data's, so the
        // margin shows no negative value.
        Scale::Linear {
            lo: lo - pad,
            hi: hi + pad,
        }
    } else {
        Scale::Linear {
            lo: 0.0,
            hi: 2.0 * hi.max(0.5),
        }
    };
    let mut vals: Vec<f64> = xs.to_vec();
    vals.sort_by(f64::total_cmp);
    vals.dedup();
    Axis {
        scale,
        ticks: vals
            .into_iter()
            .map(|v| Tick {
                value: v,
                label: fmt(v),
            })
            .collect(),
    }
}

/// At most three significant digits, trailing zeros dropped: 1, 2.5,
/// 12.5, 333.
fn sig3(x: f64) -> String {
    let a = x.abs();
    let decimals = if a >= 100.0 || a == 0.0 {
        0
    } else {
        (2 - a.log10().floor() as i32).clamp(0, 3) as usize
    };
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Seconds as a tick label: 0, 500 µs, 1 ms, 2.5 ms, 1 s, 20 s.
pub fn fmt_secs_tick(v: f64) -> String {
    let a = v.abs();
    // The 0.9995 thresholds keep 0.99999… (a float step) in the upper unit.
    let (x, unit) = if a == 0.0 {
        return "0".into();
    } else if a < 0.9995e-6 {
        (v * 1e9, "ns")
    } else if a < 0.9995e-3 {
        (v * 1e6, "µs")
    } else if a < 0.9995 {
        (v * 1e3, "ms")
    } else {
        (v, "s")
    };
    format!("{} {unit}", sig3(x))
}

/// Counts and rates as a tick label: 0, 100, 2.5k, 1M, 3G.
pub fn fmt_count(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 0.9995e9 {
        (v / 1e9, "G")
    } else if a >= 0.9995e6 {
        (v / 1e6, "M")
    } else if a >= 0.9995e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{suffix}", sig3(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<&str> {
        a.ticks
            .iter()
            .filter(|t| !t.label.is_empty())
            .map(|t| t.label.as_str())
            .collect()
    }

    #[test]
    fn log_or_linear() {
        // (lo, hi, log?, labelled ticks)
        let cases: &[(f64, f64, bool, &[&str])] = &[
            (
                0.0012,
                0.0019,
                false,
                &["0", "500 µs", "1 ms", "1.5 ms", "2 ms"],
            ),
            (0.5, 9.0, false, &["0", "2 s", "4 s", "6 s", "8 s", "10 s"]),
            (
                0.001,
                0.02,
                false,
                &["0", "5 ms", "10 ms", "15 ms", "20 ms"],
            ),
            (0.001, 0.0201, true, &["1 ms", "10 ms", "100 ms"]),
            (0.003, 0.07, true, &["1 ms", "10 ms", "100 ms"]),
            (
                2e-5,
                30.0,
                true,
                &[
                    "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s",
                ],
            ),
            (
                1e-9,
                1e3,
                true,
                &[
                    "1 ns", "100 ns", "10 µs", "1 ms", "100 ms", "10 s", "1000 s",
                ],
            ),
            (
                0.0,
                0.0,
                false,
                &["0", "200 ms", "400 ms", "600 ms", "800 ms", "1 s"],
            ),
        ];
        for &(lo, hi, log, want) in cases {
            let a = fit_values(lo, hi, &fmt_secs_tick);
            assert_eq!(a.scale.is_log(), log, "{lo}..{hi}");
            assert_eq!(labels(&a), want, "{lo}..{hi}");
            assert!(a.scale.frac(hi) <= 1.0 + 1e-12 && a.scale.frac(lo.max(1e-300)) >= -1e-12);
        }
    }

    #[test]
    fn log_decades_and_minor_ticks() {
        let a = fit_values(0.003, 0.07, &fmt_secs_tick);
        assert_eq!(
            a.scale,
            Scale::Log {
                lo: 0.001,
                hi: 0.1,
                zero: 0.0
            }
        );
        // 3 decades, 8 minor ticks in each of the 2 intervals.
        assert_eq!(a.ticks.len(), 3 + 16);
        assert!((a.scale.frac(0.01) - 0.5).abs() < 1e-12);
        // An exact decade at either end opens no extra decade.
        let b = fit_values(0.001, 0.1, &fmt_secs_tick);
        assert_eq!(
            b.scale,
            Scale::Log {
                lo: 0.001,
                hi: 0.1,
                zero: 0.0
            }
        );
        // Many decades: no minor ticks.
        let c = fit_values(1e-6, 10.0, &fmt_secs_tick);
        assert_eq!(c.ticks.len(), 8);
    }

    #[test]
    fn linear_scaling() {
        let a = fit_values(3.0, 7.3, &fmt_count);
        assert_eq!(a.scale, Scale::Linear { lo: 0.0, hi: 8.0 });
        assert_eq!(labels(&a), ["0", "2", "4", "6", "8"]);
        assert!((a.scale.frac(2.0) - 0.25).abs() < 1e-12);
        let steps = [
            (0.07, 0.1),
            (0.1, 0.1),
            (0.11, 0.2),
            (3.0, 5.0),
            (6.0, 10.0),
            (1234.0, 2000.0),
        ];
        for (raw, want) in steps {
            assert!((nice_step(raw) - want).abs() < 1e-9 * want, "{raw}");
        }
    }

    #[test]
    fn point_axes() {
        let a = fit_points(&[100.0, 1000.0, 3000.0, 1000.0], &fmt_count);
        assert!(a.scale.is_log());
        assert_eq!(labels(&a), ["100", "1k", "3k"]);
        let f = |v| a.scale.frac(v);
        assert!(f(100.0) > 0.0 && f(3000.0) < 1.0 && f(100.0) < f(1000.0));
        let b = fit_points(&[100.0, 1000.0], &fmt_count);
        assert!(!b.scale.is_log());
        assert!(b.scale.frac(100.0) > 0.0 && b.scale.frac(1000.0) < 1.0);
        let zero = fit_points(&[0.0, 1000.0], &fmt_count);
        assert!(zero.scale.frac(0.0) > 0.03, "N = 0 off the frame");
        let c = fit_points(&[5000.0], &fmt_count);
        assert!((c.scale.frac(5000.0) - 0.5).abs() < 1e-12);
        // N = 0 next to a wide range: a slot left of the smallest N.
        let z = fit_points(&[0.0, 100.0, 10_000.0], &fmt_count);
        assert!(z.scale.is_log());
        assert_eq!(labels(&z), ["0", "100", "10k"]);
        let f = |v| z.scale.frac(v);
        assert!(
            f(0.0) > 0.0 && f(0.0) < f(100.0) - 0.1,
            "{} {}",
            f(0.0),
            f(100.0)
        );
        // Without a wide range, 0 stays on a linear axis.
        assert!(!fit_points(&[0.0, 1000.0, 10_000.0], &fmt_count)
            .scale
            .is_log());
    }

    #[test]
    fn tick_labels() {
        let secs = [
            (0.0, "0"),
            (2.5e-7, "250 ns"),
            (1e-6, "1 µs"),
            (0.000_999_999_9, "1 ms"),
            (0.0015, "1.5 ms"),
            (0.3, "300 ms"),
            (1.0, "1 s"),
            (12.5, "12.5 s"),
            (120.0, "120 s"),
        ];
        for (v, want) in secs {
            assert_eq!(fmt_secs_tick(v), want, "{v}");
        }
        let counts = [
            (0.0, "0"),
            (0.25, "0.25"),
            (100.0, "100"),
            (2500.0, "2.5k"),
            (1e6, "1M"),
            (9.4e9, "9.4G"),
        ];
        for (v, want) in counts {
            assert_eq!(fmt_count(v), want, "{v}");
        }
    }
}
