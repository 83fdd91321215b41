//! A small POSIX-shell parser for the command lines of ipset's test
//! vectors: lists (`;`, `&&`, `||`), pipelines, subshells, `for` loops,
//! redirections. Words stay raw (quotes, `$...`, backticks) and are expanded
//! when run.

#[derive(Clone, Debug, PartialEq)]
pub enum Redir {
    Out(String),
    Err(String),
    In(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Items joined by `;` (run in order).
    List(Vec<Node>),
    /// Pipelines joined by `&&` (true) / `||` (false) before each next one.
    AndOr(Vec<(bool, Node)>),
    Pipe(Vec<Node>),
    Simple {
        words: Vec<String>,
        redirs: Vec<Redir>,
    },
    Sub(Box<Node>, Vec<Redir>),
    For {
        var: String,
        words: Vec<String>,
        body: Box<Node>,
    },
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Op(&'static str),
}

/// Read one raw word starting at `i` (quotes, `$(( ))` and backticks kept).
fn word(c: &[char], mut i: usize) -> (String, usize) {
    let mut w = String::new();
    while i < c.len() {
        let ch = c[i];
        match ch {
            ' ' | '\t' | '\n' | ';' | '|' | '&' | '(' | ')' | '<' | '>' => break,
            '\'' => {
                w.push(ch);
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    w.push(c[i]);
                    i += 1;
                }
                if i < c.len() {
                    w.push('\'');
                    i += 1;
                }
            }
            '"' => {
                w.push(ch);
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' && i + 1 < c.len() {
                        w.push(c[i]);
                        i += 1;
                    } else if c[i] == '`' {
                        w.push('`');
                        i += 1;
                        while i < c.len() && c[i] != '`' {
                            w.push(c[i]);
                            i += 1;
                        }
                        if i >= c.len() {
                            break;
                        }
                    }
                    w.push(c[i]);
                    i += 1;
                }
                if i < c.len() {
                    w.push('"');
                    i += 1;
                }
            }
            '`' => {
                w.push(ch);
                i += 1;
                while i < c.len() && c[i] != '`' {
                    w.push(c[i]);
                    i += 1;
                }
                if i < c.len() {
                    w.push('`');
                    i += 1;
                }
            }
            '$' if c.get(i + 1) == Some(&'(') && c.get(i + 2) == Some(&'(') => {
                let mut depth = 0;
                while i < c.len() {
                    w.push(c[i]);
                    if c[i] == '(' {
                        depth += 1;
                    } else if c[i] == ')' {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    i += 1;
                }
            }
            '\\' => {
                w.push(ch);
                if i + 1 < c.len() {
                    w.push(c[i + 1]);
                }
                i += 2;
            }
            _ => {
                w.push(ch);
                i += 1;
            }
        }
    }
    (w, i)
}

fn tokens(s: &str) -> Vec<Tok> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let two: String = c[i..(i + 2).min(c.len())].iter().collect();
        match c[i] {
            ' ' | '\t' => i += 1,
            '\n' | ';' => {
                out.push(Tok::Op(";"));
                i += 1;
            }
            '&' if two == "&&" => {
                out.push(Tok::Op("&&"));
                i += 2;
            }
            '|' if two == "||" => {
                out.push(Tok::Op("||"));
                i += 2;
            }
            '|' => {
                out.push(Tok::Op("|"));
                i += 1;
            }
            '(' => {
                out.push(Tok::Op("("));
                i += 1;
            }
            ')' => {
                out.push(Tok::Op(")"));
                i += 1;
            }
            '2' if two == "2>" => {
                out.push(Tok::Op("2>"));
                i += 2;
            }
            '>' => {
                out.push(Tok::Op(">"));
                i += 1;
            }
            '<' => {
                out.push(Tok::Op("<"));
                i += 1;
            }
            _ => {
                let (w, j) = word(&c, i);
                out.push(Tok::Word(w));
                i = j.max(i + 1);
            }
        }
    }
    out
}

struct P {
    t: Vec<Tok>,
    i: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }

    fn list(&mut self, stop: &[&str]) -> Result<Node, String> {
        let mut items = Vec::new();
        loop {
            while self.is_op(";") {
                self.i += 1;
            }
            match self.peek() {
                None => break,
                Some(Tok::Op(")")) => break,
                Some(Tok::Word(w)) if stop.contains(&w.as_str()) => break,
                _ => {}
            }
            items.push(self.and_or(stop)?);
        }
        Ok(Node::List(items))
    }

    fn and_or(&mut self, stop: &[&str]) -> Result<Node, String> {
        let mut v = vec![(true, self.pipe(stop)?)];
        loop {
            let and = if self.is_op("&&") {
                true
            } else if self.is_op("||") {
                false
            } else {
                break;
            };
            self.i += 1;
            v.push((and, self.pipe(stop)?));
        }
        Ok(Node::AndOr(v))
    }

    fn pipe(&mut self, stop: &[&str]) -> Result<Node, String> {
        let mut v = vec![self.command(stop)?];
        while self.is_op("|") {
            self.i += 1;
            v.push(self.command(stop)?);
        }
        Ok(Node::Pipe(v))
    }

    fn redirs(&mut self, redirs: &mut Vec<Redir>) -> Result<bool, String> {
        let op = match self.peek() {
            Some(Tok::Op(o)) if matches!(*o, ">" | "2>" | "<") => *o,
            _ => return Ok(false),
        };
        self.i += 1;
        let Some(Tok::Word(target)) = self.peek().cloned() else {
            return Err(format!("redirection {op} without target"));
        };
        self.i += 1;
        redirs.push(match op {
            ">" => Redir::Out(target),
            "2>" => Redir::Err(target),
            _ => Redir::In(target),
        });
        Ok(true)
    }

    fn command(&mut self, stop: &[&str]) -> Result<Node, String> {
        if self.is_op("(") {
            self.i += 1;
            let body = self.list(&[])?;
            if !self.is_op(")") {
                return Err("missing )".into());
            }
            self.i += 1;
            let mut redirs = Vec::new();
            while self.redirs(&mut redirs)? {}
            return Ok(Node::Sub(Box::new(body), redirs));
        }
        if self.is_word("for") {
            self.i += 1;
            let Some(Tok::Word(var)) = self.peek().cloned() else {
                return Err("for without variable".into());
            };
            self.i += 2;
            let mut words = Vec::new();
            while let Some(Tok::Word(w)) = self.peek().cloned() {
                self.i += 1;
                words.push(w);
            }
            while self.is_op(";") {
                self.i += 1;
            }
            if !self.is_word("do") {
                return Err("for without do".into());
            }
            self.i += 1;
            let body = self.list(&["done"])?;
            self.i += 1;
            return Ok(Node::For {
                var,
                words,
                body: Box::new(body),
            });
        }
        let mut words = Vec::new();
        let mut redirs = Vec::new();
        loop {
            if self.redirs(&mut redirs)? {
                continue;
            }
            match self.peek().cloned() {
                Some(Tok::Word(w)) if !(words.is_empty() && stop.contains(&w.as_str())) => {
                    self.i += 1;
                    words.push(w);
                }
                _ => break,
            }
        }
        Ok(Node::Simple { words, redirs })
    }
}

/// Parse a command line.
pub fn parse(s: &str) -> Result<Node, String> {
    let mut p = P { t: tokens(s), i: 0 };
    let n = p.list(&[])?;
    if p.i != p.t.len() {
        return Err(format!("unparsed input at token {}", p.i));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let n = parse("ipset -L test > .foo0 && ./sort.sh .foo0").unwrap();
        assert!(matches!(n, Node::List(ref v) if v.len() == 1));
        let n = parse("(set -e; for x in `seq 0 63`; do ipset add test 10.0.0.0/16,eth$x; done)")
            .unwrap();
        let Node::List(v) = n else { panic!() };
        assert_eq!(v.len(), 1);
        assert!(parse("for x in a b c; do ipset n $x hash:ip; done").is_ok());
    }
}
