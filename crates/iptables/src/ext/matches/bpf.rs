//! `-m bpf`: a classic BPF program run on the packet, or a pinned eBPF
//! object (iptables' libxt_bpf, revision 1 — the newest this kernel
//! offers). Whether the program is valid BPF is the kernel's check.

use crate::error::{Error, Result};
use crate::ext::matches::helper::cut;
use crate::ext::{Arg, Call, Ext, OptDef, ParseCtx, PrintCtx};
use crate::opt;
use std::fmt::Write;

/// One `struct sock_filter`: code, jt, jf, k.
pub type Insn = (u16, u8, u8, u32);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Program {
    /// `--bytecode`: at most `MAX_INSNS` instructions.
    Bytecode(Vec<Insn>),
    /// `--object-pinned`: a path in the BPF file system (at most
    /// `PATH_MAX` bytes).
    Pinned(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bpf {
    /// `None` only until an option is given (the rule is then refused).
    pub prog: Option<Program>,
}

const BYTECODE: u8 = 0;
const PINNED: u8 = 1;
/// XT_BPF_MAX_NUM_INSTR.
pub const MAX_INSNS: usize = 64;
/// XT_BPF_PATH_MAX less the NUL.
pub const PATH_MAX: usize = 511;

/// sscanf's `%u` family: strtoul in base 10 (white space, a sign that
/// wraps, saturation on overflow); the caller cuts the value to the
/// conversion's width. Returns the value and the rest.
fn scan_uint(s: &str) -> Option<(u64, &str)> {
    opt::c_strtoul(s, 10).map(|(v, _, rest)| (v, rest))
}

/// One instruction as `sscanf(token, "%hu %hhu %hhu %u,")` reads it.
fn scan_insn(token: &str) -> Option<Insn> {
    let (code, r) = scan_uint(token)?;
    let (jt, r) = scan_uint(r)?;
    let (jf, r) = scan_uint(r)?;
    let (k, _) = scan_uint(r)?;
    Some((code as u16, jt as u8, jf as u8, k as u32))
}

/// `N,code jt jf k,code jt jf k,...` (nfbpf_compile's output) as iptables
/// reads it, with its messages.
pub fn parse_bytecode(s: &str) -> Result<Vec<Insn>> {
    let head = scan_uint(s).filter(|(_, r)| r.starts_with(','));
    let Some((len, _)) = head else {
        return Err(Error::param("bpf: error parsing program length"));
    };
    let len = len as u16 as usize;
    if len == 0 {
        return Err(Error::param("bpf: illegal zero length program"));
    }
    if len > MAX_INSNS {
        return Err(Error::param("bpf: number of instructions exceeds maximum"));
    }
    let mut prog = Vec::with_capacity(len);
    // Each instruction follows a comma; a comma at the very end ends the
    // program.
    let mut rest = s;
    while let Some(i) = rest.find(',') {
        rest = &rest[i + 1..];
        if rest.is_empty() {
            break;
        }
        if prog.len() >= len {
            return Err(Error::param(
                "bpf: real program length exceeds the encoded length parameter",
            ));
        }
        let insn = scan_insn(rest)
            .ok_or_else(|| Error::param(format!("bpf: error at instr {}", prog.len())))?;
        prog.push(insn);
    }
    if prog.len() != len {
        return Err(Error::param(
            "bpf: parsed program length is less than the encoded length parameter",
        ));
    }
    Ok(prog)
}

fn put_code(out: &mut String, prog: &[Insn], tail: char) {
    for (i, (code, jt, jf, k)) in prog.iter().enumerate() {
        let sep = if i + 1 < prog.len() { ',' } else { tail };
        let _ = write!(out, "{code} {jt} {jf} {k}{sep}");
    }
}

impl Ext for Bpf {
    const NAME: &'static str = "bpf";
    const OPTS: &'static [OptDef] = &[
        OptDef::new("bytecode", BYTECODE, Arg::Required),
        OptDef::new("object-pinned", PINNED, Arg::Required),
    ];

    fn new(_: &ParseCtx) -> Self {
        Bpf { prog: None }
    }

    fn parse(&mut self, c: &mut Call) -> Result<()> {
        self.prog = Some(if c.opt.id == BYTECODE {
            Program::Bytecode(parse_bytecode(c.arg)?)
        } else {
            // iptables opens the object here (BPF_OBJ_GET); a path that
            // does not exist cannot be one.
            if std::fs::metadata(c.arg).is_err() {
                return Err(Error::param("bpf: failed to get bpf object"));
            }
            Program::Pinned(cut(c.arg, PATH_MAX))
        });
        Ok(())
    }

    fn finish(&mut self, seen: u32, _: &ParseCtx) -> Result<()> {
        if seen != 1 << BYTECODE && seen != 1 << PINNED {
            return Err(Error::param(
                "bpf: one of --bytecode or --pinned is required",
            ));
        }
        Ok(())
    }

    fn save(&self, _: &PrintCtx, out: &mut String) {
        match &self.prog {
            Some(Program::Bytecode(p)) => {
                let _ = write!(out, " --bytecode \"{},", p.len());
                put_code(out, p, '"');
            }
            Some(Program::Pinned(path)) => {
                let _ = write!(out, " --object-pinned {path}");
            }
            None => {}
        }
    }

    /// iptables prints this without the leading space, and ends a program
    /// with a NUL byte (it prints the last separator, '\0', with `%c`).
    fn list(&self, _: &PrintCtx, out: &mut String) {
        out.push_str("match bpf ");
        match &self.prog {
            Some(Program::Bytecode(p)) => put_code(out, p, '\0'),
            Some(Program::Pinned(path)) => {
                let _ = write!(out, "pinned {path}");
            }
            None => out.push_str("unknown"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::testutil::{err, list, save};

    const PROG: &str = "4,48 0 0 9,21 0 1 6,6 0 0 1,6 0 0 0";

    #[test]
    fn forms() {
        let cases = [
            (
                format!("-m bpf --bytecode \"{PROG}\""),
                format!(" --bytecode \"{PROG}\""),
                "match bpf 48 0 0 9,21 0 1 6,6 0 0 1,6 0 0 0\0".to_string(),
            ),
            (
                "-m bpf --bytecode \"1,6 0 0 65535,\"".into(),
                " --bytecode \"1,6 0 0 65535\"".into(),
                "match bpf 6 0 0 65535\0".into(),
            ),
            (
                // sscanf's leniency: signs, white space, wrapping widths.
                "-m bpf --bytecode \" 2,  -1 +2 257 4294967297 ,6\t0 0 0x\"".into(),
                " --bytecode \"2,65535 2 1 1,6 0 0 0\"".into(),
                "match bpf 65535 2 1 1,6 0 0 0\0".into(),
            ),
            (
                "-m bpf --object-pinned /".into(),
                " --object-pinned /".into(),
                "match bpf pinned /".into(),
            ),
        ];
        for (args, s, l) in cases {
            assert_eq!(save(&args), s, "{args}");
            assert_eq!(list(&args, false), l, "{args}");
            assert_eq!(list(&args, true), l, "{args} -n");
        }
    }

    #[test]
    fn errors() {
        let cases = [
            ("-m bpf", "bpf: one of --bytecode or --pinned is required"),
            (
                "-m bpf --bytecode 1,6 --object-pinned /",
                "bpf: error at instr 0",
            ),
            (
                "-m bpf --bytecode \"1,6 0 0 0\" --object-pinned /",
                "bpf: one of --bytecode or --pinned is required",
            ),
            ("-m bpf --bytecode 4", "bpf: error parsing program length"),
            ("-m bpf --bytecode x,1", "bpf: error parsing program length"),
            ("-m bpf --bytecode 0,", "bpf: illegal zero length program"),
            (
                "-m bpf --bytecode 65,",
                "bpf: number of instructions exceeds maximum",
            ),
            (
                "-m bpf --bytecode \"1,6 0 0 0,6 0 0 0\"",
                "bpf: real program length exceeds the encoded length parameter",
            ),
            (
                "-m bpf --bytecode \"2,6 0 0 0\"",
                "bpf: parsed program length is less than the encoded length parameter",
            ),
            ("-m bpf --bytecode \"1,6 0 0 x\"", "bpf: error at instr 0"),
            (
                "-m bpf --object-pinned /nonexistent/bpf/object",
                "bpf: failed to get bpf object",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args}");
        }
    }
}
