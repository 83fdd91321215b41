//! Drawing a [`Chart`]: the layout (plot area, FAIL band, legend), the two
//! orientations (x = N with values upward; categories as rows with values
//! rightward, so long case names stay horizontal and readable) and the
//! marks. [`Chart::placed`] exposes where each mark lands, so tests check
//! geometry rather than SVG text.

use super::axis::{self, Axis};
use super::svg::{Font, Svg};
use super::{style, Chart, Mark, XAxis};
use crate::suites::report::{fmt_secs, Quantity};

/// Document width when the labels fit; the legend column's width.
const WIDTH: f64 = 760.0;
const LEGEND: f64 = 190.0;
/// Depth of the band for marks without a value, beyond the value range.
const BAND: f64 = 26.0;
const MARK_R: f64 = 4.5;
/// Average glyph width per point of font size (Helvetica-like faces), for
/// fitting labels.
const GLYPH: f64 = 0.56;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn contains(&self, p: (f64, f64)) -> bool {
        let e = 1e-6;
        p.0 >= self.x - e
            && p.0 <= self.x + self.w + e
            && p.1 >= self.y - e
            && p.1 <= self.y + self.h + e
    }
}

/// The value region and, when some mark has no value, the band for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Area {
    pub values: Rect,
    pub band: Option<Rect>,
}

/// A mark as drawn: series index, x (N or category), the mark, its
/// centre and its error bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    pub series: usize,
    pub x: f64,
    pub mark: Mark,
    pub at: (f64, f64),
    pub bar: Option<((f64, f64), (f64, f64))>,
}

struct Frame {
    width: f64,
    height: f64,
    /// Categories as rows, values running rightward.
    rows: bool,
    /// The plot rectangle, band included.
    plot: Rect,
    band: f64,
    val: Axis,
    /// The N axis (line charts only).
    pos: Option<Axis>,
    row_h: f64,
    nseries: usize,
}

fn text_w(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * GLYPH
}

impl Chart {
    fn fmt(&self) -> fn(f64) -> String {
        match self.quantity {
            Quantity::Time => axis::fmt_secs_tick,
            Quantity::Rate(_) => axis::fmt_count,
        }
    }

    /// Whether a mark sits in the band: a failure always; a step killed at
    /// the limit unless the limit is a value of the axis.
    fn in_band(&self, m: &Mark) -> bool {
        match m {
            Mark::Value(_) => false,
            Mark::Fail => true,
            Mark::Over(_) => !self.limit_on_axis,
        }
    }

    fn marks(&self) -> impl Iterator<Item = &Mark> {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(|(_, m)| m))
    }

    fn frame(&self) -> Frame {
        let mut vals = Vec::new();
        for m in self.marks() {
            match m {
                Mark::Value(s) => vals.extend([s.min, s.max]),
                Mark::Over(l) if self.limit_on_axis => vals.push(*l),
                _ => {}
            }
        }
        vals.retain(|v| v.is_finite() && *v >= 0.0);
        let lo = vals
            .iter()
            .copied()
            .filter(|&v| v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(0.0, f64::max);
        let val = axis::fit_values(if lo.is_finite() { lo } else { 0.0 }, hi, &self.fmt());
        let band = if self.marks().any(|m| self.in_band(m)) {
            BAND
        } else {
            0.0
        };
        let nseries = self.series.len().max(1);
        let top = 52.0;
        let legend_h = self.legend_height();
        match &self.x {
            XAxis::Numeric(_) => {
                let mut xs: Vec<f64> = self
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0))
                    .collect();
                if xs.is_empty() {
                    xs.push(1.0);
                }
                let left = 86.0;
                let plot = Rect {
                    x: left,
                    y: top,
                    w: WIDTH - left - LEGEND - 14.0,
                    h: 300.0,
                };
                Frame {
                    width: WIDTH,
                    height: (plot.y + plot.h + 58.0).max(plot.y + legend_h + 10.0),
                    rows: false,
                    plot,
                    band,
                    val,
                    pos: Some(axis::fit_points(&xs, &axis::fmt_count)),
                    row_h: 0.0,
                    nseries,
                }
            }
            XAxis::Categories(labels) => {
                let widest = labels.iter().map(|l| text_w(l, 11.0)).fold(0.0, f64::max);
                let left = 16.0 + widest.min(420.0);
                let w = (WIDTH - left - LEGEND - 14.0).max(300.0);
                let row_h = (8.0 * nseries as f64 + 10.0).max(26.0);
                let plot = Rect {
                    x: left,
                    y: top,
                    w,
                    h: row_h * labels.len().max(1) as f64,
                };
                Frame {
                    width: left + w + LEGEND + 14.0,
                    height: (plot.y + plot.h + 58.0).max(plot.y + legend_h + 10.0),
                    rows: true,
                    plot,
                    band,
                    val,
                    pos: None,
                    row_h,
                    nseries,
                }
            }
        }
    }

    /// The value region and the band, in document coordinates.
    pub fn area(&self) -> Area {
        let f = self.frame();
        let p = f.plot;
        let (values, band) = if f.rows {
            (
                Rect {
                    w: p.w - f.band,
                    ..p
                },
                Rect {
                    x: p.x + p.w - f.band,
                    w: f.band,
                    ..p
                },
            )
        } else {
            (
                Rect {
                    y: p.y + f.band,
                    h: p.h - f.band,
                    ..p
                },
                Rect { h: f.band, ..p },
            )
        };
        Area {
            values,
            band: (f.band > 0.0).then_some(band),
        }
    }

    /// Every mark with its position: a value at its median with a bar from
    /// min to max, a limit at the limit, the rest in the band.
    pub fn placed(&self) -> Vec<Placed> {
        let f = self.frame();
        let mut out = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            for (x, m) in &s.points {
                let p = f.p(*x, i);
                let (at, bar) = match m {
                    Mark::Value(v) => {
                        let bar =
                            (v.max > v.min).then(|| (f.at(p, f.u(v.min)), f.at(p, f.u(v.max))));
                        (f.at(p, f.u(v.median)), bar)
                    }
                    Mark::Over(l) if !self.in_band(m) => (f.at(p, f.u(*l)), None),
                    _ => (f.at(p, f.u_band()), None),
                };
                out.push(Placed {
                    series: i,
                    x: *x,
                    mark: m.clone(),
                    at,
                    bar,
                });
            }
        }
        out
    }

    fn legend_height(&self) -> f64 {
        let entries: f64 = self
            .series
            .iter()
            .map(|s| if s.note.is_empty() { 22.0 } else { 36.0 })
            .sum();
        let keys = 1
            + usize::from(self.marks().any(|m| matches!(m, Mark::Over(_))))
            + usize::from(self.marks().any(|m| matches!(m, Mark::Fail)));
        entries + 12.0 + 18.0 * keys as f64
    }
}

impl Frame {
    fn vlen(&self) -> f64 {
        (if self.rows { self.plot.w } else { self.plot.h }) - self.band
    }

    /// Document point of (`p` px along the N or category axis, `u` px
    /// along the value axis from its low end).
    fn at(&self, p: f64, u: f64) -> (f64, f64) {
        if self.rows {
            (self.plot.x + u, self.plot.y + p)
        } else {
            (self.plot.x + p, self.plot.y + self.plot.h - u)
        }
    }

    /// A value's distance from the low end, clamped to the value range.
    fn u(&self, v: f64) -> f64 {
        let f = self.val.scale.frac(v);
        let f = if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        };
        f * self.vlen()
    }

    fn u_band(&self) -> f64 {
        self.vlen() + self.band / 2.0
    }

    /// Position of x along the N or category axis for series `i`, offset
    /// a little per series so error bars at the same x stay apart.
    fn p(&self, x: f64, i: usize) -> f64 {
        let k = self.nseries as f64;
        let rel = i as f64 - (k - 1.0) / 2.0;
        match &self.pos {
            Some(a) => a.scale.frac(x) * self.plot.w + rel * 6.0,
            None => (x + 0.5) * self.row_h + rel * (self.row_h / (k + 1.0)).min(8.0),
        }
    }
}

/// Labels along an axis, dropping any that would overlap the previous
/// one: (position, label, width along the axis).
fn thin(items: Vec<(f64, String, f64)>) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    let mut last: Option<(f64, f64)> = None;
    for (p, l, w) in items {
        if let Some((lp, lw)) = last {
            if (p - lp).abs() < (w + lw) / 2.0 + 6.0 {
                continue;
            }
        }
        last = Some((p, w));
        out.push((p, l));
    }
    out
}

impl Chart {
    /// The chart as a standalone SVG document.
    pub fn svg(&self) -> String {
        let f = self.frame();
        let p = f.plot;
        let mut s = Svg::new(f.width, f.height, &self.title);
        let size = if text_w(&self.title, 15.0) > f.width - 20.0 {
            12.5
        } else {
            15.0
        };
        s.text(
            f.width / 2.0,
            26.0,
            &self.title,
            Font::new(size).anchor("middle").bold(),
        );
        let area = self.area();
        if let Some(b) = area.band {
            s.rect(b.x, b.y, b.w, b.h, "#f4f4f4", "none");
        }
        if f.rows {
            for r in (0..self.categories().len()).filter(|r| r % 2 == 1) {
                s.rect(
                    p.x,
                    p.y + r as f64 * f.row_h,
                    f.vlen(),
                    f.row_h,
                    "#f8f8f8",
                    "none",
                );
            }
        }
        self.draw_value_axis(&mut s, &f);
        self.draw_position_axis(&mut s, &f);
        s.rect(p.x, p.y, p.w, p.h, "none", "#888");
        if let Some(b) = area.band {
            let label = self.band_label();
            let red = Font::new(11.0).bold().fill("#b00000");
            if f.rows {
                s.line((b.x, b.y), (b.x, b.y + b.h), "#bbb", 1.0);
                s.text(
                    b.x + b.w / 2.0,
                    p.y + p.h + 16.0,
                    &label,
                    red.anchor("middle"),
                );
            } else {
                s.line((b.x, b.y + b.h), (b.x + b.w, b.y + b.h), "#bbb", 1.0);
                s.text(p.x - 7.0, b.y + b.h / 2.0 + 4.0, &label, red.anchor("end"));
            }
        }
        self.draw_marks(&mut s, &f);
        self.draw_legend(&mut s, &f);
        s.finish()
    }

    fn categories(&self) -> &[String] {
        match &self.x {
            XAxis::Categories(c) => c,
            XAxis::Numeric(_) => &[],
        }
    }

    fn band_label(&self) -> String {
        let fail = self.marks().any(|m| matches!(m, Mark::Fail));
        let over = self
            .marks()
            .any(|m| self.in_band(m) && matches!(m, Mark::Over(_)));
        match (fail, over) {
            (true, true) => "FAIL/>limit".into(),
            (false, true) => ">limit".into(),
            _ => "FAIL".into(),
        }
    }

    fn draw_value_axis(&self, s: &mut Svg, f: &Frame) {
        let p = f.plot;
        let tick_font = Font::new(11.0).fill("#333");
        let mut labels = Vec::new();
        for t in &f.val.ticks {
            let u = f.u(t.value);
            let (a, b) = (f.at(0.0, u), f.at(if f.rows { p.h } else { p.w }, u));
            let grid = if t.label.is_empty() {
                "#f0f0f0"
            } else {
                "#dcdcdc"
            };
            s.line(a, b, grid, 1.0);
            if !t.label.is_empty() {
                let w = if f.rows { text_w(&t.label, 11.0) } else { 12.0 };
                labels.push((u, t.label.clone(), w));
            }
        }
        for (u, l) in thin(labels) {
            if f.rows {
                let (x, _) = f.at(0.0, u);
                s.text(x, p.y + p.h + 16.0, &l, tick_font.anchor("middle"));
            } else {
                let (_, y) = f.at(0.0, u);
                s.text(p.x - 7.0, y + 4.0, &l, tick_font.anchor("end"));
            }
        }
        let mut title = self.value_title.clone();
        if f.val.scale.is_log() {
            title.push_str(" (log scale)");
        }
        let t = Font::new(12.0).anchor("middle");
        if f.rows {
            s.text(p.x + f.vlen() / 2.0, p.y + p.h + 40.0, &title, t);
        } else {
            let y = p.y + f.band + f.vlen() / 2.0;
            s.text(20.0, y, &title, t.rotate(-90.0));
        }
    }

    fn draw_position_axis(&self, s: &mut Svg, f: &Frame) {
        let p = f.plot;
        let label = Font::new(11.0).fill("#333");
        match (&f.pos, &self.x) {
            (Some(a), XAxis::Numeric(title)) => {
                let mut items = Vec::new();
                for t in &a.ticks {
                    let x = p.x + a.scale.frac(t.value) * p.w;
                    s.line((x, p.y + f.band), (x, p.y + p.h), "#ececec", 1.0);
                    s.line((x, p.y + p.h), (x, p.y + p.h + 4.0), "#888", 1.0);
                    items.push((x, t.label.clone(), text_w(&t.label, 11.0)));
                }
                for (x, l) in thin(items) {
                    s.text(x, p.y + p.h + 17.0, &l, label.anchor("middle"));
                }
                let mut t = title.clone();
                if a.scale.is_log() {
                    t.push_str(" (log scale)");
                }
                s.text(
                    p.x + p.w / 2.0,
                    p.y + p.h + 40.0,
                    &t,
                    Font::new(12.0).anchor("middle"),
                );
            }
            (_, XAxis::Categories(cats)) => {
                for (i, c) in cats.iter().enumerate() {
                    let y = p.y + (i as f64 + 0.5) * f.row_h;
                    s.text(p.x - 8.0, y + 4.0, c, label.anchor("end"));
                }
            }
            _ => {}
        }
    }

    fn draw_marks(&self, s: &mut Svg, f: &Frame) {
        let placed = self.placed();
        let all_x: Vec<f64> = placed.iter().map(|m| m.x).collect();
        for (i, series) in self.series.iter().enumerate() {
            let (color, shape) = style(&series.name);
            let mine: Vec<&Placed> = placed.iter().filter(|m| m.series == i).collect();
            if !f.rows {
                // Lines join neighbouring values only: a failure, a limit
                // or an N this tool has no result for breaks the line.
                let mut run: Vec<(f64, f64)> = Vec::new();
                let mut last_x = f64::NEG_INFINITY;
                for m in &mine {
                    let gap = all_x
                        .iter()
                        .any(|&x| x > last_x && x < m.x && !mine.iter().any(|o| o.x == x));
                    if gap || !matches!(m.mark, Mark::Value(_)) {
                        s.polyline(&run, color, 1.8);
                        run.clear();
                    }
                    if matches!(m.mark, Mark::Value(_)) {
                        run.push(m.at);
                    }
                    last_x = m.x;
                }
                s.polyline(&run, color, 1.8);
            }
            for m in &mine {
                if let Some((a, b)) = m.bar {
                    s.line(a, b, color, 1.3);
                    let cap = |s: &mut Svg, q: (f64, f64)| {
                        if f.rows {
                            s.line((q.0, q.1 - 4.0), (q.0, q.1 + 4.0), color, 1.3);
                        } else {
                            s.line((q.0 - 4.0, q.1), (q.0 + 4.0, q.1), color, 1.3);
                        }
                    };
                    cap(s, a);
                    cap(s, b);
                }
                let (x, y) = m.at;
                match &m.mark {
                    Mark::Value(_) => s.marker(shape, x, y, MARK_R, color, false),
                    Mark::Over(l) => {
                        s.marker(shape, x, y, MARK_R, color, true);
                        let t = format!(">{}", fmt_secs(*l));
                        let font = Font::new(10.0).fill(color);
                        // Near the legend, the label goes left of the mark.
                        if x + 7.0 + text_w(&t, 10.0) > f.plot.x + f.plot.w {
                            s.text(x - 7.0, y - 6.0, &t, font.anchor("end"));
                        } else {
                            s.text(x + 7.0, y - 6.0, &t, font);
                        }
                    }
                    Mark::Fail => s.cross(x, y, 4.0, color),
                }
            }
        }
    }

    fn draw_legend(&self, s: &mut Svg, f: &Frame) {
        let x0 = f.width - LEGEND;
        let mut y = f.plot.y + 10.0;
        for series in &self.series {
            let (color, shape) = style(&series.name);
            if !f.rows {
                s.line((x0, y), (x0 + 24.0, y), color, 1.8);
            }
            s.marker(shape, x0 + 12.0, y, MARK_R, color, false);
            s.text(x0 + 32.0, y + 4.0, &series.name, Font::new(12.0));
            if !series.note.is_empty() {
                s.text(
                    x0 + 32.0,
                    y + 18.0,
                    &series.note,
                    Font::new(10.0).fill("#777"),
                );
                y += 14.0;
            }
            y += 22.0;
        }
        y += 12.0;
        let grey = "#555";
        let key = Font::new(10.0).fill("#444");
        s.line((x0 + 12.0, y - 7.0), (x0 + 12.0, y + 7.0), grey, 1.3);
        s.line((x0 + 8.0, y - 7.0), (x0 + 16.0, y - 7.0), grey, 1.3);
        s.line((x0 + 8.0, y + 7.0), (x0 + 16.0, y + 7.0), grey, 1.3);
        s.marker(super::Shape::Circle, x0 + 12.0, y, 3.5, grey, false);
        s.text(x0 + 32.0, y + 4.0, "median, bar min–max", key);
        if self.marks().any(|m| matches!(m, Mark::Over(_))) {
            y += 18.0;
            s.marker(super::Shape::Circle, x0 + 12.0, y, 3.5, grey, true);
            s.text(x0 + 32.0, y + 4.0, "killed at the time limit", key);
        }
        if self.marks().any(|m| matches!(m, Mark::Fail)) {
            y += 18.0;
            s.cross(x0 + 12.0, y, 3.5, grey);
            s.text(x0 + 32.0, y + 4.0, "failed: no time", key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Chart, Mark, Series, XAxis};
    use super::*;
    use crate::suites::report::Summary;

    fn val(min: f64, median: f64, max: f64) -> Mark {
        Mark::Value(Summary {
            min,
            median,
            max,
            fast: min,
        })
    }

    fn chart(x: XAxis, quantity: Quantity, series: Vec<(&str, Vec<(f64, Mark)>)>) -> Chart {
        Chart {
            title: "t".into(),
            x,
            value_title: "runtime".into(),
            limit_on_axis: quantity == Quantity::Time,
            quantity,
            series: series
                .into_iter()
                .map(|(n, points)| Series {
                    name: n.into(),
                    points,
                    note: String::new(),
                })
                .collect(),
        }
    }

    fn line(series: Vec<(&str, Vec<(f64, Mark)>)>) -> Chart {
        chart(XAxis::Numeric("N".into()), Quantity::Time, series)
    }

    #[test]
    fn failures_and_limits_are_never_values() {
        let c = line(vec![(
            "nfkeeper",
            vec![
                (100.0, val(0.001, 0.0015, 0.002)),
                (300.0, val(0.002, 0.003, 0.004)),
                (1000.0, Mark::Fail),
                (3000.0, Mark::Over(10.0)),
            ],
        )]);
        let area = c.area();
        let band = area.band.expect("a failure needs the band");
        let placed = c.placed();
        for p in &placed {
            match p.mark {
                Mark::Fail => assert!(band.contains(p.at) && p.at.1 < area.values.y, "{p:?}"),
                _ => assert!(area.values.contains(p.at), "{p:?}"),
            }
        }
        // The limit is a point of the value axis (10 s, the top decade),
        // above every measured value.
        let over = placed.iter().find(|p| p.mark == Mark::Over(10.0)).unwrap();
        assert!(
            (over.at.1 - area.values.y).abs() < 1e-9,
            "{over:?} {area:?}"
        );
        // The failure's samples, if any, are not what sized the axis: the
        // same chart without it has the same value axis.
        let mut without = c.clone();
        without.series[0].points.remove(2);
        assert_eq!(c.frame().val, without.frame().val);
        // Only the two neighbouring values are joined; the value after the
        // failure and the limit stands alone.
        let svg = c.svg();
        assert_eq!(svg.matches("<polyline").count(), 1, "{svg}");
        let poly = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
        assert_eq!(
            poly.split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .split(' ')
                .count(),
            2
        );
        assert!(svg.contains(">FAIL</text>") && svg.contains(">&gt;10.0 s</text>"));
    }

    #[test]
    fn missing_results_break_lines() {
        let c = line(vec![
            (
                "a",
                vec![(1.0, val(1.0, 1.0, 1.0)), (3.0, val(1.0, 1.0, 1.0))],
            ),
            (
                "b",
                vec![
                    (1.0, val(1.0, 1.0, 1.0)),
                    (2.0, val(1.0, 1.0, 1.0)),
                    (3.0, val(1.0, 1.0, 1.0)),
                ],
            ),
        ]);
        let svg = c.svg();
        let lines: Vec<&str> = svg.lines().filter(|l| l.starts_with("<polyline")).collect();
        assert_eq!(lines.len(), 1, "a has no result at N=2: no line across it");
        assert!(lines[0].contains(style("b").0));
    }

    #[test]
    fn rates_put_limits_in_the_band() {
        let c = chart(
            XAxis::Numeric("N".into()),
            Quantity::Rate("Gbit/s".into()),
            vec![(
                "nft",
                vec![(0.0, val(8.0, 9.0, 9.5)), (100.0, Mark::Over(10.0))],
            )],
        );
        let area = c.area();
        let placed = c.placed();
        assert!(area.band.unwrap().contains(placed[1].at));
        assert_eq!(
            c.frame().val.scale,
            axis::Scale::Linear { lo: 0.0, hi: 10.0 }
        );
        assert!(c.svg().contains(">&gt;limit</text>"));
    }

    #[test]
    fn error_bars_span_min_to_max() {
        let c = line(vec![(
            "x",
            vec![(1.0, val(1.0, 2.0, 4.0)), (2.0, val(3.0, 3.0, 3.0))],
        )]);
        let f = c.frame();
        let p = c.placed();
        let ((_, y_min), (_, y_max)) = p[0].bar.unwrap();
        let bottom = f.plot.y + f.plot.h;
        assert!(
            (bottom - y_min - f.u(1.0)).abs() < 1e-9 && (bottom - y_max - f.u(4.0)).abs() < 1e-9
        );
        assert!(
            y_max < p[0].at.1 && p[0].at.1 < y_min,
            "median between the ends"
        );
        assert_eq!(
            p[1].bar, None,
            "no bar when every repetition took the same time"
        );
    }

    #[test]
    fn rows_run_values_rightward() {
        let cats = XAxis::Categories(vec!["2.1  append".into(), "2.2  delete <x>".into()]);
        let c = chart(
            cats,
            Quantity::Time,
            vec![
                (
                    "nfkeeper",
                    vec![(0.0, val(0.001, 0.001, 0.001)), (1.0, Mark::Fail)],
                ),
                ("nft", vec![(0.0, val(0.1, 0.1, 0.1))]),
            ],
        );
        let area = c.area();
        let p = c.placed();
        assert!(area.values.contains(p[0].at) && area.values.contains(p[2].at));
        assert!(p[2].at.0 > p[0].at.0, "slower is further right");
        assert!(
            p[1].at.0 > area.values.x + area.values.w,
            "the failure sits right of all values"
        );
        assert!(p[1].at.1 > p[0].at.1, "second row below the first");
        let svg = c.svg();
        assert!(svg.contains(">2.2  delete &lt;x&gt;</text>"));
        assert!(!svg.contains("<polyline"), "no lines between categories");
    }

    #[test]
    fn nothing_measured_still_draws() {
        let c = line(vec![("a", vec![(10.0, Mark::Fail)]), ("b", vec![])]);
        let svg = c.svg();
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(
            c.frame().val.scale,
            axis::Scale::Linear { lo: 0.0, hi: 1.0 }
        );
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
