//! A minimal SVG writer: the handful of elements the plots draw, with
//! coordinates rounded to 0.1 px (smaller, stable files) and every text
//! escaped. The output is a standalone SVG 1.1 document that also works
//! inlined in HTML.

use std::fmt::Write;

/// `&`, `<`, `>`, `"` and `'` as entities: safe in text and in attribute
/// values of SVG, XML and HTML alike.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Marker shapes: each adapter has its own, so the lines stay apart in
/// grey print and for colour-blind readers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
}

/// How a text is placed and styled.
#[derive(Clone, Copy, Debug)]
pub struct Font<'a> {
    pub size: f64,
    /// `start`, `middle` or `end`.
    pub anchor: &'a str,
    pub bold: bool,
    pub fill: &'a str,
    /// Degrees, clockwise, around the anchor point.
    pub rotate: f64,
}

impl Font<'_> {
    pub fn new(size: f64) -> Font<'static> {
        Font {
            size,
            anchor: "start",
            bold: false,
            fill: "#222",
            rotate: 0.0,
        }
    }
}

impl<'a> Font<'a> {
    pub fn anchor(mut self, a: &'a str) -> Font<'a> {
        self.anchor = a;
        self
    }
    pub fn bold(mut self) -> Font<'a> {
        self.bold = true;
        self
    }
    pub fn fill(mut self, f: &'a str) -> Font<'a> {
        self.fill = f;
        self
    }
    pub fn rotate(mut self, deg: f64) -> Font<'a> {
        self.rotate = deg;
        self
    }
}

/// A document being written; [`Svg::finish`] closes it.
pub struct Svg {
    s: String,
}

/// A coordinate: one decimal, no `-0.0`.
fn c(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    let r = if r == 0.0 { 0.0 } else { r };
    let s = format!("{r:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

impl Svg {
    /// A `w`×`h` document with `title` as its accessible name.
    pub fn new(w: f64, h: f64, title: &str) -> Svg {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
             font-family=\"Helvetica, Arial, sans-serif\" role=\"img\">\n<title>{}</title>",
            esc(title)
        );
        let _ = writeln!(s, "<rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>");
        Svg { s }
    }

    pub fn line(&mut self, a: (f64, f64), b: (f64, f64), stroke: &str, width: f64) {
        let _ = writeln!(
            self.s,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>",
            c(a.0),
            c(a.1),
            c(b.0),
            c(b.1)
        );
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, stroke: &str) {
        let _ = writeln!(
            self.s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\"/>",
            c(x),
            c(y),
            c(w),
            c(h)
        );
    }

    /// An open line through the points (nothing for fewer than two).
    pub fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str, width: f64) {
        if pts.len() < 2 {
            return;
        }
        let p: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{},{}", c(x), c(y)))
            .collect();
        let _ = writeln!(
            self.s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"/>",
            p.join(" ")
        );
    }

    /// A marker of radius `r` centred on (x, y); hollow ones are white
    /// inside with a coloured outline.
    pub fn marker(&mut self, shape: Shape, x: f64, y: f64, r: f64, color: &str, hollow: bool) {
        let fill = if hollow { "#fff" } else { color };
        let paint = format!("fill=\"{fill}\" stroke=\"{color}\" stroke-width=\"1.5\"");
        let poly = |pts: &[(f64, f64)]| {
            let p: Vec<String> = pts
                .iter()
                .map(|&(dx, dy)| format!("{},{}", c(x + dx * r), c(y + dy * r)))
                .collect();
            format!("<polygon points=\"{}\" {paint}/>", p.join(" "))
        };
        let el = match shape {
            Shape::Circle => format!(
                "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {paint}/>",
                c(x),
                c(y),
                c(r)
            ),
            Shape::Square => format!(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {paint}/>",
                c(x - r * 0.85),
                c(y - r * 0.85),
                c(r * 1.7),
                c(r * 1.7)
            ),
            Shape::Triangle => poly(&[(0.0, -1.2), (1.1, 0.8), (-1.1, 0.8)]),
            Shape::TriangleDown => poly(&[(0.0, 1.2), (1.1, -0.8), (-1.1, -0.8)]),
            Shape::Diamond => poly(&[(0.0, -1.25), (1.1, 0.0), (0.0, 1.25), (-1.1, 0.0)]),
        };
        self.s.push_str(&el);
        self.s.push('\n');
    }

    /// A cross (×) of half-size `r`: the mark of a failed step.
    pub fn cross(&mut self, x: f64, y: f64, r: f64, color: &str) {
        self.line((x - r, y - r), (x + r, y + r), color, 2.0);
        self.line((x - r, y + r), (x + r, y - r), color, 2.0);
    }

    pub fn text(&mut self, x: f64, y: f64, text: &str, f: Font) {
        let mut attrs = format!(
            "x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\"",
            c(x),
            c(y),
            f.size,
            f.anchor,
            f.fill
        );
        if f.bold {
            attrs.push_str(" font-weight=\"bold\"");
        }
        if f.rotate != 0.0 {
            let _ = write!(
                attrs,
                " transform=\"rotate({} {} {})\"",
                f.rotate,
                c(x),
                c(y)
            );
        }
        let _ = writeln!(self.s, "<text {attrs}>{}</text>", esc(text));
    }

    pub fn finish(mut self) -> String {
        self.s.push_str("</svg>\n");
        self.s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        let cases = [
            ("plain", "plain"),
            ("a<b>&\"c\"'", "a&lt;b&gt;&amp;&quot;c&quot;&#39;"),
            ("&amp;", "&amp;amp;"),
            ("µs ×", "µs ×"),
        ];
        for (i, o) in cases {
            assert_eq!(esc(i), o);
        }
        let mut s = Svg::new(10.0, 10.0, "t<&>");
        s.text(1.0, 2.0, "<script>x</script>", Font::new(9.0));
        let doc = s.finish();
        assert!(doc.contains("<title>t&lt;&amp;&gt;</title>"));
        assert!(doc.contains(">&lt;script&gt;x&lt;/script&gt;</text>"));
        assert!(!doc.contains("<script"));
    }

    #[test]
    fn elements() {
        let mut s = Svg::new(100.0, 50.0, "t");
        s.line((0.04, -0.04), (10.25, 3.0), "#000", 1.0);
        s.polyline(&[(1.0, 2.0)], "#000", 1.0);
        s.polyline(&[(1.0, 2.0), (3.0, 4.56)], "#123", 2.0);
        s.marker(Shape::Circle, 5.0, 5.0, 4.0, "#f00", true);
        s.text(
            3.0,
            4.0,
            "x",
            Font::new(11.0).anchor("end").bold().rotate(-30.0),
        );
        let doc = s.finish();
        assert!(doc
            .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\""));
        assert!(
            doc.contains("<line x1=\"0\" y1=\"0\" x2=\"10.3\" y2=\"3\""),
            "{doc}"
        );
        assert_eq!(
            doc.matches("<polyline").count(),
            1,
            "a one-point line draws nothing"
        );
        assert!(doc.contains("points=\"1,2 3,4.6\""));
        assert!(doc.contains("<circle cx=\"5\" cy=\"5\" r=\"4\" fill=\"#fff\" stroke=\"#f00\""));
        assert!(doc.contains("font-weight=\"bold\" transform=\"rotate(-30 3 4)\">x</text>"));
        assert!(doc.ends_with("</svg>\n"));
    }
}
