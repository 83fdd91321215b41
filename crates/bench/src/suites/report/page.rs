//! The self-contained report of a run: `REPORT.md` (plots as SVG files
//! beside it) and `report.html` (plots inlined), built from one document
//! outline so both say the same: the machine and tools, how to read the
//! results, then per suite its table, failures and plots.

use super::{failures, md_table, md_text, reference, suite_grid, suites_of, Grid, Machine, Record};
use crate::suites::plot::{self, esc, Figure};
use std::fmt::Write;
use std::path::Path;

/// A piece of running text.
enum Span {
    Text(String),
    Code(String),
}

enum Block {
    Heading(u8, String),
    Para(Vec<Span>),
    Table(Grid),
    List(Vec<String>),
    /// A figure: its file and title (the SVG comes from the figure list).
    Figure(usize),
}

fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

fn how_to_read(refn: &str) -> String {
    format!(
        "Every case runs in a fresh network namespace per tool; its setup is not timed \
         and the measured step is repeated, the tools taking turns repetition by \
         repetition. A cell shows the median and, in brackets, the \
         fastest and slowest repetition (the packet suite shows rates, higher is \
         better). A ratio column divides the baseline's time by {refn}'s, each the \
         mean of the tool's fastest half of repetitions (noise only adds time, so the \
         slow half says more about the machine than about the tool; averaging the rest \
         keeps one lucky repetition from setting the ratio): \
         above 1 {refn} is faster (2.00× = half the time), below 1 slower; for rates \
         it is {refn}'s rate over the baseline's, so above 1 still means {refn} is \
         faster. FAIL means the command failed or its effect was missing and never \
         counts as a time; >limit means the step was killed at the time limit; n/a \
         means the tool has no form of the operation; missing means the tool is not \
         installed. In the plots each tool keeps its colour and marker; the marker is \
         the median and the bar spans the fastest to the slowest repetition. An axis \
         turns logarithmic when its values span more than 20×: equal distances are \
         then equal ratios. A cross in the FAIL band is a failed step and a hollow \
         marker labelled >limit a step killed at the limit; neither is a measurement."
    )
}

fn outline(m: &Machine, records: &[Record], adapters: &[String], figures: &[Figure]) -> Vec<Block> {
    let suites = suites_of(records);
    let mut v = vec![
        Block::Heading(1, format!("nfkeeper bench: {}", suites.join(", "))),
        Block::Para(vec![text(format!(
            "Run of {} on {} ({} CPUs, {} memory), kernel {}, {}.",
            m.date, m.cpu_model, m.cpus, m.memory, m.kernel, m.distro
        ))]),
        Block::Para(vec![text("Command: "), Span::Code(m.command.clone())]),
        Block::Heading(2, "Machine and tools".into()),
    ];
    let mut rows = vec![
        ["CPU".to_string(), format!("{} × {}", m.cpus, m.cpu_model)],
        ["memory".into(), m.memory.clone()],
        ["kernel".into(), m.kernel.clone()],
        ["distribution".into(), m.distro.clone()],
        ["nfkeeper (harness)".into(), m.nfkeeper.clone()],
    ];
    rows.extend(m.tools.iter().map(|(k, v)| [k.clone(), v.clone()]));
    rows.push([
        "run".into(),
        format!(
            "{} repetitions, limit {} s per step, wall time {:.0} s{}",
            m.run.reps,
            m.run.limit,
            m.run.wall,
            if m.run.rcu_expedited {
                ", RCU grace periods expedited for the run"
            } else {
                ""
            }
        ),
    ]);
    rows.push([
        "load average".into(),
        format!("{} at the start, {} at the end", m.loadavg, m.run.load_end),
    ]);
    v.push(Block::Table(Grid {
        head: vec!["what".into(), "value".into()],
        rows: rows.into_iter().map(Vec::from).collect(),
        right: vec![false, false],
    }));
    v.push(Block::Heading(2, "How to read".into()));
    v.push(Block::Para(vec![text(how_to_read(
        reference(adapters).unwrap_or("the first tool"),
    ))]));
    for suite in suites {
        v.push(Block::Heading(2, format!("Suite {suite}")));
        v.push(Block::Table(suite_grid(records, suite, adapters)));
        let fails = failures(records, suite);
        if !fails.is_empty() {
            v.push(Block::Para(vec![text("Failures:")]));
            v.push(Block::List(fails));
        }
        for (i, _) in figures.iter().enumerate().filter(|(_, f)| f.suite == suite) {
            v.push(Block::Figure(i));
        }
    }
    v
}

/// Inline code in Markdown: backticks fenced by a longer run than any
/// inside.
fn md_code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if longest > 0 {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

/// `REPORT.md`: the plots are linked as the SVG files beside it.
pub fn report_md(
    m: &Machine,
    records: &[Record],
    adapters: &[String],
    figures: &[Figure],
) -> String {
    let mut s = String::new();
    for b in outline(m, records, adapters, figures) {
        match b {
            Block::Heading(l, t) => {
                let _ = writeln!(s, "{} {}\n", "#".repeat(l as usize), md_text(&t));
            }
            Block::Para(spans) => {
                for sp in spans {
                    match sp {
                        Span::Text(t) => s.push_str(&md_text(&t)),
                        Span::Code(c) => s.push_str(&md_code(&c)),
                    }
                }
                s.push_str("\n\n");
            }
            Block::Table(g) => {
                s.push_str(&md_table(&g));
                s.push('\n');
            }
            Block::List(items) => {
                for i in items {
                    let _ = writeln!(s, "- {}", md_text(&i));
                }
                s.push('\n');
            }
            Block::Figure(i) => {
                let f = &figures[i];
                let _ = writeln!(s, "![{}]({})\n", md_text(&f.chart.title), f.file);
            }
        }
    }
    s
}

const STYLE: &str = "body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;\
padding:0 1em;color:#222}table{border-collapse:collapse;margin:1em 0;font-size:14px}\
th,td{border:1px solid #ccc;padding:3px 8px}th{background:#f2f2f2}td.r{text-align:right;\
white-space:nowrap}code{background:#f4f4f4;padding:1px 4px}figure{margin:1.5em 0}\
figure svg{max-width:100%;height:auto}";

/// `report.html`: one file, the plots inlined (`svgs[i]` is figure i's
/// document).
pub fn report_html(
    m: &Machine,
    records: &[Record],
    adapters: &[String],
    figures: &[Figure],
    svgs: &[String],
) -> String {
    let blocks = outline(m, records, adapters, figures);
    let title = match blocks.first() {
        Some(Block::Heading(_, t)) => t.clone(),
        _ => String::new(),
    };
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    for b in blocks {
        match b {
            Block::Heading(l, t) => {
                let _ = writeln!(s, "<h{l}>{}</h{l}>", esc(&t));
            }
            Block::Para(spans) => {
                s.push_str("<p>");
                for sp in spans {
                    match sp {
                        Span::Text(t) => s.push_str(&esc(&t)),
                        Span::Code(c) => {
                            let _ = write!(s, "<code>{}</code>", esc(&c));
                        }
                    }
                }
                s.push_str("</p>\n");
            }
            Block::Table(g) => {
                s.push_str("<table>\n<tr>");
                for h in &g.head {
                    let _ = write!(s, "<th>{}</th>", esc(h));
                }
                s.push_str("</tr>\n");
                for r in &g.rows {
                    s.push_str("<tr>");
                    for (c, right) in r.iter().zip(&g.right) {
                        let class = if *right { " class=\"r\"" } else { "" };
                        let _ = write!(s, "<td{class}>{}</td>", esc(c));
                    }
                    s.push_str("</tr>\n");
                }
                s.push_str("</table>\n");
            }
            Block::List(items) => {
                s.push_str("<ul>\n");
                for i in items {
                    let _ = writeln!(s, "<li>{}</li>", esc(&i));
                }
                s.push_str("</ul>\n");
            }
            Block::Figure(i) => {
                let _ = write!(
                    s,
                    "<figure id=\"{}\">\n{}</figure>\n",
                    esc(&figures[i].file),
                    svgs[i]
                );
            }
        }
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// The report's files as (name, content): `REPORT.md`, `report.html` and
/// one SVG per figure.
pub fn render_files(m: &Machine, records: &[Record], adapters: &[String]) -> Vec<(String, String)> {
    let figures = plot::figures(records, adapters);
    let svgs: Vec<String> = figures.iter().map(|f| f.chart.svg()).collect();
    let mut out = vec![
        (
            "REPORT.md".to_string(),
            report_md(m, records, adapters, &figures),
        ),
        (
            "report.html".to_string(),
            report_html(m, records, adapters, &figures, &svgs),
        ),
    ];
    out.extend(figures.into_iter().map(|f| f.file).zip(svgs));
    out
}

/// Writes the output directory: `results.csv`, `results.json`,
/// `results.md` (`summary`, the terminal text) and the report's files.
/// Returns the names written.
pub fn write_files(
    dir: &Path,
    m: &Machine,
    records: &[Record],
    adapters: &[String],
    summary: &str,
) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut files = vec![
        ("results.csv".to_string(), super::to_csv(records)),
        ("results.json".to_string(), super::to_json(m, records)),
        ("results.md".to_string(), summary.to_string()),
    ];
    files.extend(render_files(m, records, adapters));
    let mut names = Vec::new();
    for (name, body) in files {
        std::fs::write(dir.join(&name), body)?;
        names.push(name);
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans() {
        let cases = [("a b", "`a b`"), ("x`y", "`` x`y ``"), ("``", "``` `` ```")];
        for (i, o) in cases {
            assert_eq!(md_code(i), o);
        }
    }
}
