//! Man pages made from a program's own `--help` texts (a test-only tool:
//! the programs carry no man page code).
//!
//! A page is a roff template (the hand-written sections: NAME, FILES,
//! ENVIRONMENT, EXIT STATUS, ...) in which a line
//! `.\" @help ARGS...` stands for what the program prints for `ARGS`
//! (e.g. `serve --help`), and `@VERSION@` for the version. [`expand`]
//! fills them in; a page's test compares the result with the committed page.

/// The marker line that stands for a help text: `.\" @help ARGS...`.
const HELP: &str = ".\\\" @help ";

/// Escapes one line of plain text for roff: backslashes, hyphens (so
/// options copy and search as ASCII `-`), a leading `.` or `'` (which
/// would start a request), and characters beyond ASCII (as `\[uXXXX]`,
/// which groff reads whatever the page's encoding).
pub fn escape(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    if line.starts_with('.') || line.starts_with('\'') {
        out.push_str("\\&");
    }
    for c in line.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            c if c.is_ascii() => out.push(c),
            c => out.push_str(&format!("\\[u{:04X}]", c as u32)),
        }
    }
    out
}

/// Renders a help text as roff. Paragraphs (split at blank lines) whose
/// lines all start at the margin are prose, left for roff to fill; any
/// other paragraph (usage lines, option tables, aligned columns) and the
/// a paragraph that starts with a usage line are kept line for line, as the
/// terminal shows them.
pub fn help_to_roff(text: &str) -> String {
    let mut out = String::new();
    let mut para: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            paragraph(&para, &mut out);
            para.clear();
        } else {
            para.push(line);
        }
    }
    paragraph(&para, &mut out);
    out
}

/// One paragraph of [`help_to_roff`] (nothing when empty).
fn paragraph(para: &[&str], out: &mut String) {
    let Some(first) = para.first() else {
        return;
    };
    let usage = first.to_ascii_lowercase().starts_with("usage:");
    let prose = !usage && para.iter().all(|l| !l.starts_with(' '));
    out.push_str(".PP\n");
    if !prose {
        out.push_str(".nf\n");
    }
    for l in para {
        out.push_str(&escape(l.trim_end()));
        out.push('\n');
    }
    if !prose {
        out.push_str(".fi\n");
    }
}

/// Fills in a template: every `.\" @help ARGS...` line becomes
/// `help(ARGS)` rendered by [`help_to_roff`], every `@VERSION@` the
/// version. `help` runs the program (its stdout; it panics when the
/// program fails, so a page never documents an error message).
pub fn expand(template: &str, version: &str, help: impl Fn(&[&str]) -> String) -> String {
    let mut out = String::new();
    for line in template.lines() {
        if let Some(args) = line.strip_prefix(HELP) {
            let args: Vec<&str> = args.split_whitespace().collect();
            out.push_str(&help_to_roff(&help(&args)));
        } else {
            out.push_str(&line.replace("@VERSION@", version));
            out.push('\n');
        }
    }
    out
}

/// Holds the committed `page` to `template` filled in by [`expand`]:
/// panics with the first differing line unless they are equal, or, with
/// `NFK_UPDATE_GOLDEN` set, rewrites the page. Then, when groff is
/// installed, has it format the page with warnings on and panics on any
/// (a page that renders badly fails like a stale one).
pub fn check(
    template: &std::path::Path,
    page: &std::path::Path,
    version: &str,
    help: impl Fn(&[&str]) -> String,
) {
    let t =
        std::fs::read_to_string(template).unwrap_or_else(|e| panic!("{}: {e}", template.display()));
    let made = expand(&t, version, help);
    if std::env::var_os("NFK_UPDATE_GOLDEN").is_some() {
        std::fs::write(page, &made).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    }
    let want = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    if want != made {
        let n = want
            .lines()
            .zip(made.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(made.lines().count()));
        panic!(
            "{} is not {} filled in with the program's help (first difference at line {}: \
             committed {:?}, made {:?}); regenerate with NFK_UPDATE_GOLDEN=1",
            page.display(),
            template.display(),
            n + 1,
            want.lines().nth(n),
            made.lines().nth(n)
        );
    }
    lint(page);
}

/// groff's warnings about a page (`-ww`), as a panic; skipped with a
/// message when groff is not installed.
fn lint(page: &std::path::Path) {
    let out = match std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(page)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!(
                "SKIP: groff not runnable ({e}); {} not linted",
                page.display()
            );
            return;
        }
    };
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && warnings.trim().is_empty(),
        "groff on {}: {warnings}",
        page.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_roff_would_read_as_markup() {
        let cases = [
            ("--quiet", "\\-\\-quiet"),
            (".hidden", "\\&.hidden"),
            ("'quoted'", "\\&'quoted'"),
            ("a\\b", "a\\eb"),
            ("plain", "plain"),
            ("N × M", "N \\[u00D7] M"),
        ];
        for (input, want) in cases {
            assert_eq!(escape(input), want, "{input:?}");
        }
    }

    #[test]
    fn prose_fills_and_layout_stays_line_for_line() {
        let cases = [
            (
                "Some prose\nthat fills.\n",
                ".PP\nSome prose\nthat fills.\n",
            ),
            (
                "usage: x [-q]\n\n  -q   quiet\n",
                ".PP\n.nf\nusage: x [\\-q]\n.fi\n.PP\n.nf\n  \\-q   quiet\n.fi\n",
            ),
            (
                "Usage:\n  x a\n\nText.\n",
                ".PP\n.nf\nUsage:\n  x a\n.fi\n.PP\nText.\n",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(help_to_roff(input), want, "{input:?}");
        }
    }

    #[test]
    fn expands_help_markers_and_the_version() {
        let template = ".TH X 8 \"\" \"x @VERSION@\"\n.\\\" @help serve --help\n.SH END\n";
        let got = expand(template, "1.2", |args| format!("{}\n", args.join(" ")));
        assert_eq!(
            got,
            ".TH X 8 \"\" \"x 1.2\"\n.PP\nserve \\-\\-help\n.SH END\n"
        );
    }
}
