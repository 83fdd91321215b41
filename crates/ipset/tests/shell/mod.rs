//! Enough of a shell to run the command lines of ipset's test vectors
//! against the in-memory model: expansion (quotes, variables, `$(( ))`,
//! backticks), lists, pipelines, subshells with `set -e`, `for` loops and
//! redirections over a virtual file system (reads fall back to the vector
//! directory, writes stay in memory). The commands themselves are in
//! `cmds.rs`.

mod cmds;
pub mod parse;
pub mod runner;

use parse::{Node, Redir};
use std::collections::HashMap;
use std::path::PathBuf;

/// Files: written ones in memory, the rest read from the vector directory.
pub struct Vfs {
    pub dir: PathBuf,
    files: HashMap<String, Option<String>>,
}

impl Vfs {
    pub fn new(dir: PathBuf) -> Vfs {
        Vfs {
            dir,
            files: HashMap::new(),
        }
    }

    pub fn read(&self, path: &str) -> Option<String> {
        match self.files.get(path) {
            Some(f) => f.clone(),
            None => std::fs::read_to_string(self.dir.join(path)).ok(),
        }
    }

    pub fn write(&mut self, path: &str, text: String) {
        if path != "/dev/null" {
            self.files.insert(path.to_string(), Some(text));
        }
    }

    pub fn remove(&mut self, path: &str) {
        self.files.insert(path.to_string(), None);
    }
}

/// Control flow out of a command: a status, or `exit` of the (sub)shell.
pub enum Flow {
    Exit(i32),
}

type R<T> = Result<T, Flow>;

/// What `ipset` runs on: the model alone, or a kernel backend.
pub trait Backend {
    /// One `ipset ARGS` (restore input in `input`).
    fn ipset(&mut self, args: &[String], input: Option<String>) -> ipset::exec::Output;
    /// `sleep`: let `ms` milliseconds pass.
    fn sleep(&mut self, ms: u64);
    /// Forget every set (a skipped helper would have destroyed its sets).
    fn reset(&mut self);
}

/// The model alone, on a virtual clock.
pub struct Model {
    pub store: ipset::model::Store,
    /// Milliseconds of the virtual clock (`sleep` advances it).
    pub now: u64,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            store: ipset::model::Store::new(),
            now: 1_000_000,
        }
    }
}

impl Backend for Model {
    fn ipset(&mut self, args: &[String], input: Option<String>) -> ipset::exec::Output {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut mirror = ipset::exec::NoMirror;
        let mut ctx = ipset::exec::Ctx {
            store: &mut self.store,
            mirror: &mut mirror,
            now: self.now,
        };
        ipset::exec::run(&mut ctx, &argv, input.as_deref())
    }

    fn sleep(&mut self, ms: u64) {
        self.now += ms;
    }

    fn reset(&mut self) {
        self.store = ipset::model::Store::new();
    }
}

/// The shell with the ipset backend it drives.
pub struct Shell {
    pub fs: Vfs,
    pub vars: HashMap<String, String>,
    pub backend: Box<dyn Backend>,
    /// The output of the last `ipset` run.
    pub last_ipset: Option<ipset::exec::Output>,
    errexit: bool,
    last: i32,
    /// Status of the last command substitution in the current command.
    subst: Option<i32>,
    /// stderr of commands not redirected (for failure reports).
    pub stderr: String,
}

/// Output of a command.
pub struct Out {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Out {
    pub fn ok(stdout: String) -> Out {
        Out {
            stdout,
            stderr: String::new(),
            code: 0,
        }
    }
    pub fn status(code: i32) -> Out {
        Out {
            stdout: String::new(),
            stderr: String::new(),
            code,
        }
    }
}

impl Shell {
    pub fn new(dir: PathBuf, backend: Box<dyn Backend>) -> Shell {
        Shell {
            fs: Vfs::new(dir),
            vars: HashMap::new(),
            backend,
            last_ipset: None,
            errexit: false,
            last: 0,
            subst: None,
            stderr: String::new(),
        }
    }

    /// Run a command line; its exit status.
    pub fn run(&mut self, line: &str) -> Result<i32, String> {
        let node = parse::parse(line)?;
        let code = match self.exec(&node, String::new()) {
            Ok(o) => {
                self.stderr.push_str(&o.stderr);
                o.code
            }
            Err(Flow::Exit(c)) => c,
        };
        self.errexit = false;
        Ok(code)
    }

    fn exec(&mut self, n: &Node, stdin: String) -> R<Out> {
        match n {
            Node::List(items) => {
                let mut last = Out::status(0);
                let mut out = String::new();
                let mut err = String::new();
                for it in items {
                    last = self.exec(it, stdin.clone())?;
                    out.push_str(&last.stdout);
                    err.push_str(&last.stderr);
                }
                Ok(Out {
                    stdout: out,
                    stderr: err,
                    code: last.code,
                })
            }
            Node::AndOr(chain) => {
                let mut out = String::new();
                let mut err = String::new();
                let mut code = 0;
                for (i, (and, p)) in chain.iter().enumerate() {
                    if i > 0 && (*and != (code == 0)) {
                        continue;
                    }
                    let o = self.exec(p, stdin.clone())?;
                    out.push_str(&o.stdout);
                    err.push_str(&o.stderr);
                    code = o.code;
                    self.last = code;
                    if self.errexit && code != 0 && i + 1 == chain.len() {
                        return Err(Flow::Exit(code));
                    }
                }
                Ok(Out {
                    stdout: out,
                    stderr: err,
                    code,
                })
            }
            Node::Pipe(cmds) => {
                let mut input = stdin;
                let mut err = String::new();
                let mut last = Out::status(0);
                for c in cmds {
                    last = self.exec(c, input)?;
                    err.push_str(&last.stderr);
                    input = std::mem::take(&mut last.stdout);
                }
                Ok(Out {
                    stdout: input,
                    stderr: err,
                    code: last.code,
                })
            }
            Node::Sub(body, redirs) => {
                let saved = (self.vars.clone(), self.errexit);
                let r = self.exec(body, stdin);
                (self.vars, self.errexit) = saved;
                let o = match r {
                    Ok(o) => o,
                    Err(Flow::Exit(c)) => Out::status(c),
                };
                Ok(self.redirect(o, redirs))
            }
            Node::For { var, words, body } => {
                let mut items = Vec::new();
                for w in words {
                    items.extend(self.expand(w)?);
                }
                let mut out = String::new();
                let mut code = 0;
                for it in items {
                    self.vars.insert(var.clone(), it);
                    let o = self.exec(body, stdin.clone())?;
                    out.push_str(&o.stdout);
                    code = o.code;
                }
                Ok(Out {
                    stdout: out,
                    stderr: String::new(),
                    code,
                })
            }
            Node::Simple { words, redirs } => {
                self.subst = None;
                let mut args = Vec::new();
                for w in words {
                    if args.is_empty() {
                        if let Some((name, value)) = assignment(w) {
                            let v = self.expand_joined(value)?;
                            self.vars.insert(name.to_string(), v);
                            continue;
                        }
                    }
                    args.extend(self.expand(w)?);
                }
                let mut input = stdin;
                for r in redirs {
                    if let Redir::In(f) = r {
                        let f = self.expand_joined(f)?;
                        input = self.fs.read(&f).unwrap_or_default();
                    }
                }
                if args.is_empty() {
                    return Ok(Out::status(self.subst.unwrap_or(0)));
                }
                let o = self.command(&args, input)?;
                Ok(self.redirect(o, redirs))
            }
        }
    }

    fn redirect(&mut self, mut o: Out, redirs: &[Redir]) -> Out {
        for r in redirs {
            match r {
                Redir::Out(f) => {
                    let f = self.expand_joined(f).unwrap_or_default();
                    self.fs.write(&f, std::mem::take(&mut o.stdout));
                }
                Redir::Err(f) => {
                    let f = self.expand_joined(f).unwrap_or_default();
                    self.fs.write(&f, std::mem::take(&mut o.stderr));
                }
                Redir::In(_) => {}
            }
        }
        o
    }

    /// Expand a word into fields.
    pub fn expand(&mut self, w: &str) -> R<Vec<String>> {
        // Segments: (text, splittable).
        let mut segs: Vec<(String, bool)> = Vec::new();
        let c: Vec<char> = w.chars().collect();
        let mut i = 0;
        while i < c.len() {
            match c[i] {
                '\'' => {
                    let start = i + 1;
                    i = start;
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    segs.push((c[start..i.min(c.len())].iter().collect(), false));
                    i += 1;
                }
                '"' => {
                    i += 1;
                    let mut s = String::new();
                    while i < c.len() && c[i] != '"' {
                        if c[i] == '\\' && i + 1 < c.len() && "\"\\$`".contains(c[i + 1]) {
                            s.push(c[i + 1]);
                            i += 2;
                        } else if c[i] == '$' || c[i] == '`' {
                            let (v, j) = self.dollar(&c, i)?;
                            s.push_str(&v);
                            i = j;
                        } else {
                            s.push(c[i]);
                            i += 1;
                        }
                    }
                    i += 1;
                    segs.push((s, false));
                }
                '\\' => {
                    if i + 1 < c.len() {
                        segs.push((c[i + 1].to_string(), false));
                    }
                    i += 2;
                }
                '$' | '`' => {
                    let (v, j) = self.dollar(&c, i)?;
                    segs.push((v, true));
                    i = j;
                }
                ch => {
                    segs.push((ch.to_string(), false));
                    i += 1;
                }
            }
        }
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut started = false;
        for (s, split) in segs {
            if !split {
                cur.push_str(&s);
                started = true;
                continue;
            }
            for ch in s.chars() {
                if ch.is_ascii_whitespace() {
                    if started {
                        fields.push(std::mem::take(&mut cur));
                        started = false;
                    }
                } else {
                    cur.push(ch);
                    started = true;
                }
            }
        }
        if started {
            fields.push(cur);
        }
        Ok(fields)
    }

    fn expand_joined(&mut self, w: &str) -> R<String> {
        Ok(self.expand(w)?.join(" "))
    }

    /// `$name`, `$?`, `$((expr))` or a backtick substitution at `c[i]`.
    fn dollar(&mut self, c: &[char], i: usize) -> R<(String, usize)> {
        if c[i] == '`' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '`' {
                j += 1;
            }
            let inner: String = c[i + 1..j.min(c.len())].iter().collect();
            let node = parse::parse(&inner).map_err(|_| Flow::Exit(2))?;
            let saved = self.errexit;
            self.errexit = false;
            let o = match self.exec(&node, String::new()) {
                Ok(o) => o,
                Err(Flow::Exit(code)) => Out::status(code),
            };
            self.errexit = saved;
            self.last = o.code;
            self.subst = Some(o.code);
            return Ok((o.stdout.trim_end_matches('\n').to_string(), j + 1));
        }
        if c.get(i + 1) == Some(&'(') && c.get(i + 2) == Some(&'(') {
            let mut depth = 0;
            let mut j = i + 1;
            while j < c.len() {
                if c[j] == '(' {
                    depth += 1;
                } else if c[j] == ')' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            let expr: String = c[i + 3..j.saturating_sub(1)].iter().collect();
            return Ok((self.arith(&expr).to_string(), j + 1));
        }
        if c.get(i + 1) == Some(&'?') {
            return Ok((self.last.to_string(), i + 2));
        }
        let mut j = i + 1;
        while j < c.len() && (c[j].is_ascii_alphanumeric() || c[j] == '_') {
            j += 1;
        }
        let name: String = c[i + 1..j].iter().collect();
        if name.is_empty() {
            return Ok(("$".into(), i + 1));
        }
        Ok((self.vars.get(&name).cloned().unwrap_or_default(), j))
    }

    /// Integer arithmetic with `+ - *` and variables.
    fn arith(&self, e: &str) -> i64 {
        let val = |t: &str| -> i64 {
            let t = t.trim().trim_start_matches('$');
            t.parse()
                .unwrap_or_else(|_| self.vars.get(t).and_then(|v| v.parse().ok()).unwrap_or(0))
        };
        let mut sum = 0i64;
        let mut sign = 1i64;
        let mut term = String::new();
        let flush = |term: &str, sum: &mut i64, sign: i64| {
            let p: i64 = term.split('*').map(val).product();
            *sum += sign * p;
        };
        for ch in e.chars() {
            if ch == '+' || ch == '-' {
                flush(&term, &mut sum, sign);
                term.clear();
                sign = if ch == '+' { 1 } else { -1 };
            } else {
                term.push(ch);
            }
        }
        flush(&term, &mut sum, sign);
        sum
    }
}

/// `NAME=value` at the start of a simple command.
fn assignment(w: &str) -> Option<(&str, &str)> {
    let (n, v) = w.split_once('=')?;
    (!n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some((n, v))
}
