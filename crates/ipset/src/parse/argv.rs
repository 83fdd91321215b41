//! One ipset command line (ipset's `ipset_parser`): global options, the
//! command, its arguments, keyword options, and the checks of mandatory and
//! allowed items, in ipset's order and with its messages.

use super::{Command, Env, OutputMode, Parsed, SetLookup};
use crate::data::Data;
use crate::error::{Error, Kernel, Result};
use crate::types::kw::{self, ADT_FLAGS, CREATE_FLAGS, OPT_FLAGS_LIMIT};
use crate::types::{CmdSpec, Keyword, Opt, SetType, TypeFamily, TypeInfo, ValueKind};
use crate::value::{self, ip, misc, port};

/// ipset's limit on words per command line, the program name included.
pub const MAX_ARGS: usize = 32;

/// A command, as [`verb`] names it to a caller that has not read the
/// sets yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    Create,
    Add,
    Del,
    Test,
    Destroy,
    List,
    Save,
    Restore,
    Flush,
    Rename,
    Swap,
    Help,
    Version,
    Quit,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arity {
    None,
    Optional,
    Two,
}

/// The commands in ipset's matching order, with their spellings.
const COMMANDS: &[(Cmd, [&str; 3], Arity)] = &[
    (Cmd::Create, ["create", "new", "-N"], Arity::Two),
    (Cmd::Add, ["add", "-A", ""], Arity::Two),
    (Cmd::Del, ["del", "-D", ""], Arity::Two),
    (Cmd::Test, ["test", "-T", ""], Arity::Two),
    (Cmd::Destroy, ["destroy", "x", "-X"], Arity::Optional),
    (Cmd::List, ["list", "-L", ""], Arity::Optional),
    (Cmd::Save, ["save", "-S", ""], Arity::Optional),
    (Cmd::Restore, ["restore", "-R", ""], Arity::None),
    (Cmd::Flush, ["flush", "-F", ""], Arity::Optional),
    (Cmd::Rename, ["rename", "e", "-E"], Arity::Two),
    (Cmd::Swap, ["swap", "w", "-W"], Arity::Two),
    (Cmd::Help, ["help", "-h", "-H"], Arity::Optional),
    (Cmd::Version, ["version", "-v", "-V"], Arity::None),
    (Cmd::Quit, ["quit", "", ""], Arity::None),
];

/// A command word: two leading dashes are ignored, and any prefix of a
/// spelling matches.
fn match_cmd(arg: &str, names: &[&str; 3]) -> bool {
    let skip = if arg.starts_with("--") { 2 } else { 0 };
    if arg.len() <= skip || arg == "-" {
        return false;
    }
    let a = &arg[skip..];
    names
        .iter()
        .filter(|n| !n.is_empty())
        .any(|n| n.starts_with(a))
}

/// A keyword: exact, with two leading dashes ignored.
fn match_option(arg: &str, name: &str) -> bool {
    arg.strip_prefix("--").unwrap_or(arg) == name
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EnvOpt {
    Output,
    Sorted,
    Quiet,
    Resolve,
    Exist,
    Name,
    Terse,
    File,
}

/// Global options in ipset's scan order: (option, short, long, takes value).
const ENVOPTS: &[(EnvOpt, &str, &str, bool)] = &[
    (EnvOpt::Output, "-o", "-output", true),
    (EnvOpt::Sorted, "-s", "-sorted", false),
    (EnvOpt::Quiet, "-q", "-quiet", false),
    (EnvOpt::Resolve, "-r", "-resolve", false),
    (EnvOpt::Exist, "-!", "-exist", false),
    (EnvOpt::Name, "-n", "-name", false),
    (EnvOpt::Terse, "-t", "-terse", false),
    (EnvOpt::File, "-f", "-file", true),
];

/// A global option: exact, with one of two leading dashes ignored.
fn match_envopt(arg: &str, short: &str, long: &str) -> bool {
    let a = if arg.starts_with("--") {
        &arg[1..]
    } else {
        arg
    };
    a == short || a == long
}

/// Take the global options out of `args`, into `env`.
fn take_envopts(args: &mut Vec<String>, env: &mut Env) -> Result<()> {
    // Every global option starts with '-': most restore lines have none.
    if !args.iter().any(|a| a.starts_with('-')) {
        return Ok(());
    }
    for &(opt, short, long, has_arg) in ENVOPTS {
        let mut i = 0;
        while i < args.len() {
            if !match_envopt(&args[i], short, long) {
                i += 1;
                continue;
            }
            args.remove(i);
            if has_arg {
                if i >= args.len() {
                    return Err(Error::parameter(format!(
                        "Missing mandatory argument to option {short}"
                    )));
                }
                let v = args.remove(i);
                match opt {
                    EnvOpt::Output => {
                        env.output = Some(match v.as_str() {
                            "plain" => OutputMode::Plain,
                            "xml" => OutputMode::Xml,
                            "json" => OutputMode::Json,
                            "save" => OutputMode::Save,
                            _ => {
                                return Err(Error::session(format!(
                                    "Syntax error: unknown output mode '{v}'"
                                )))
                            }
                        })
                    }
                    _ => {
                        if env.file.is_some() {
                            return Err(Error::parameter(
                                "-file option cannot be used when full io is activated",
                            ));
                        }
                        env.file = Some(v);
                    }
                }
                continue;
            }
            match opt {
                EnvOpt::Sorted => env.sorted = true,
                EnvOpt::Quiet => env.quiet = true,
                EnvOpt::Resolve => env.resolve = true,
                EnvOpt::Exist => env.exist = true,
                EnvOpt::Name => env.names_only = true,
                EnvOpt::Terse => env.terse = true,
                EnvOpt::Output | EnvOpt::File => {}
            }
        }
    }
    Ok(())
}

/// The command of a command line and the set names it takes (both for
/// `rename` and `swap`, one for the others, none when absent), read
/// without any set: a backend learns from it which sets to read before
/// [`parse`]. `None`: no command word (or a bad global option).
pub fn verb(args: &[&str]) -> Option<(Cmd, Vec<String>)> {
    // Global options start with '-'; without one the words are used as
    // they are (a restore's member lines are read this way one by one).
    let owned: Vec<String>;
    let args: Vec<&str> = if args.iter().any(|a| a.starts_with('-')) {
        let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        take_envopts(&mut v, &mut Env::default()).ok()?;
        owned = v;
        owned.iter().map(String::as_str).collect()
    } else {
        args.to_vec()
    };
    let first = args.first()?;
    let &(cmd, _, arity) = COMMANDS.iter().find(|c| match_cmd(first, &c.1))?;
    let n = match (cmd, arity) {
        (Cmd::Rename | Cmd::Swap, _) => 2,
        (Cmd::Help, _) | (_, Arity::None) => 0,
        _ => 1,
    };
    Some((
        cmd,
        args.iter().skip(1).take(n).map(|a| a.to_string()).collect(),
    ))
}

/// Parse one command line (without the program name). `restore_line` is the
/// 1-based input line in restore mode; `env` carries the global options in
/// force so far (restore lines keep adding to them).
pub fn parse(
    args: &[&str],
    restore_line: Option<usize>,
    env: Env,
    sets: &dyn SetLookup,
) -> Result<Parsed> {
    if args.len() + 1 > MAX_ARGS {
        return Err(Error::parameter("Line is too long to parse."));
    }
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut env = env;
    take_envopts(&mut args, &mut env)?;

    let Some(&(cmd, names, arity)) = args
        .first()
        .and_then(|a| COMMANDS.iter().find(|c| match_cmd(a, &c.1)))
    else {
        return match args.first() {
            Some(a) if a == "-" => Ok(Parsed {
                env,
                cmd: Command::Interactive,
                warnings: Vec::new(),
            }),
            Some(a) => Err(Error::parameter(format!(
                "No command specified: unknown argument {a}"
            ))),
            None => Err(Error::parameter("No command specified.")),
        };
    };
    if restore_line.is_some() && matches!(cmd, Cmd::Restore | Cmd::Version | Cmd::Help) {
        return Err(Error::parameter(format!(
            "Command `{}' is invalid in restore mode.",
            names[0]
        )));
    }
    args.remove(0);
    let mut arg0 = None;
    let mut arg1 = None;
    match arity {
        Arity::Two => {
            if args.is_empty() {
                return Err(Error::parameter(format!(
                    "Missing mandatory argument to command {}",
                    names[0]
                )));
            }
            arg0 = Some(args.remove(0));
            if args.is_empty() {
                return Err(Error::parameter(format!(
                    "Missing second mandatory argument to command {}",
                    names[0]
                )));
            }
            arg1 = Some(args.remove(0));
        }
        Arity::Optional => {
            if !args.is_empty() {
                arg0 = Some(args.remove(0));
            }
        }
        Arity::None => {}
    }

    let mut warnings = Vec::new();
    let command = match cmd {
        Cmd::Help => Command::Help(arg0),
        Cmd::Version => Command::Version,
        Cmd::Quit => Command::Quit,
        Cmd::Restore => {
            if let Some(a) = args.first() {
                return Err(Error::parameter(format!("Unknown argument {a}")));
            }
            Command::Restore
        }
        Cmd::Create => {
            let name = misc::setname(&arg0.unwrap_or_default())?;
            let tname = arg1.unwrap_or_default();
            let (t, data) = parse_create(&tname, &mut args, &mut warnings)?;
            Command::Create {
                name,
                ty: t.ty,
                data,
            }
        }
        Cmd::Add | Cmd::Del | Cmd::Test => {
            let name = misc::setname(&arg0.unwrap_or_default())?;
            let Some((ty, family)) = sets.set_kind(&name) else {
                return Err(Kernel::NoSet.into());
            };
            let t = ty.info();
            let mut data = Data {
                family,
                ..Data::default()
            };
            value::parse_elem(&mut data, t, &arg1.unwrap_or_default())?;
            let (spec, word) = match cmd {
                Cmd::Add => (&t.add, "add"),
                Cmd::Del => (&t.del, "del"),
                _ => (&t.test, "test"),
            };
            call_parser(&mut args, spec, &mut data, false, &mut warnings)?;
            check_mandatory(spec, &data)?;
            check_allowed(spec, &data, ADT_FLAGS, word, t)?;
            match cmd {
                Cmd::Add => Command::Add { name, data },
                Cmd::Del => Command::Del { name, data },
                _ => Command::Test { name, data },
            }
        }
        Cmd::List | Cmd::Save | Cmd::Destroy | Cmd::Flush => {
            let name = arg0.map(|a| misc::setname(&a)).transpose()?;
            match cmd {
                Cmd::List => Command::List(name),
                Cmd::Save => Command::Save(name),
                Cmd::Destroy => Command::Destroy(name),
                _ => Command::Flush(name),
            }
        }
        Cmd::Rename | Cmd::Swap => {
            let from = misc::setname(&arg0.unwrap_or_default())?;
            let to = misc::setname(&arg1.unwrap_or_default())?;
            if cmd == Cmd::Rename {
                Command::Rename { from, to }
            } else {
                Command::Swap { from, to }
            }
        }
    };
    if let Some(a) = args.first() {
        return Err(Error::parameter(format!("Unknown argument {a}")));
    }
    Ok(Parsed {
        env,
        cmd: command,
        warnings,
    })
}

/// The type and create options of `create NAME TYPE ...`.
fn parse_create(
    tname: &str,
    args: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<(&'static TypeInfo, Data)> {
    if tname.len() > misc::MAX_NAME {
        return Err(Error::syntax(format!(
            "typename '{tname}' is longer than {} characters",
            misc::MAX_NAME
        )));
    }
    let Some(ty) = SetType::by_name(tname) else {
        return Err(Error::syntax(format!("typename '{tname}' is unknown")));
    };
    let t = ty.info();
    let mut data = Data::default();
    match t.family {
        TypeFamily::Both => {
            data.family = Some(crate::addr::Family::Inet);
            data.mark(Opt::Family);
            data.ignored |= Opt::Family.bit();
        }
        TypeFamily::Ipv4 => {
            data.family = Some(crate::addr::Family::Inet);
            data.mark(Opt::Family);
        }
        TypeFamily::Unspec => {}
    }
    let mut rest = args.clone();
    call_parser(&mut rest, &t.create, &mut data, true, warnings)?;
    call_parser(args, &t.create, &mut data, false, warnings)?;
    check_mandatory(&t.create, &data)?;
    check_allowed(&t.create, &data, CREATE_FLAGS, "create", t)?;
    Ok((t, data))
}

/// ipset's `call_parser`: match keywords against the command's list and
/// read their values. With `family_pass`, only family keywords are read
/// (others are skipped with their values); otherwise the reverse, and every
/// word is consumed.
fn call_parser(
    args: &mut Vec<String>,
    spec: &CmdSpec,
    data: &mut Data,
    family_pass: bool,
    warnings: &mut Vec<String>,
) -> Result<()> {
    if spec.args.is_empty() {
        if let Some(a) = args.first() {
            return Err(Error::parameter(format!("Unknown argument: `{a}'")));
        }
        return Ok(());
    }
    let mut i = 0;
    while i < args.len() {
        let Some(k) = spec.args.iter().find(|k| match_option(&args[i], k.name)) else {
            return Err(Error::parameter(format!("Unknown argument: `{}'", args[i])));
        };
        let optstr = args[i].clone();
        i += 1;
        let parse_it = family_pass == (k.opt == Opt::Family);
        if k.has_arg {
            if i >= args.len() {
                return Err(Error::parameter(format!(
                    "Missing mandatory argument of option `{}'",
                    k.name
                )));
            }
            if parse_it {
                let v = args[i].clone();
                call_one(k, &v, data, warnings)?;
            }
            i += 1;
        } else if parse_it {
            call_one(k, &optstr, data, warnings)?;
        }
    }
    if !family_pass {
        args.clear();
    }
    Ok(())
}

/// ipset's `ipset_call_parser`: refuse an item given twice, then read it.
fn call_one(k: &Keyword, v: &str, d: &mut Data, warnings: &mut Vec<String>) -> Result<()> {
    if d.has(k.opt) && !(k.opt == Opt::Family && d.ignored & Opt::Family.bit() != 0) {
        return Err(Error::syntax(format!("{} already specified", k.name)));
    }
    match k.value {
        ValueKind::Family => misc::family(d, v)?,
        ValueKind::U8 => {
            let n = crate::num::u8_(v)?;
            if k.opt == Opt::Bucketsize {
                d.bucketsize = Some(n);
            }
            d.mark(k.opt);
        }
        ValueKind::U16 => {
            d.skbqueue = Some(crate::num::u16_(v)?);
            d.mark(k.opt);
        }
        ValueKind::U32 => {
            let n = crate::num::u32_(v)?;
            match k.opt {
                Opt::Hashsize => d.hashsize = Some(n),
                Opt::Maxelem => d.maxelem = Some(n),
                Opt::Markmask => d.markmask = Some(n),
                Opt::Size => d.size = Some(n),
                Opt::Initval => d.initval = Some(n),
                _ => {}
            }
            d.mark(k.opt);
        }
        ValueKind::U64 => {
            let n = crate::num::number(v, 0, u64::MAX - 1)?;
            if k.opt == Opt::Packets {
                d.packets = Some(n);
            } else {
                d.bytes = Some(n);
            }
            d.mark(k.opt);
        }
        ValueKind::Ignored => {
            if d.ignored & k.opt.bit() == 0 {
                d.ignored |= k.opt.bit();
                warnings.push(format!(
                    "Option '--{} {v}' is ignored. Please upgrade your syntax.",
                    kw::ignored_name(k.opt)
                ));
            }
        }
        ValueKind::NetRange => ip::netrange(d, Opt::Ip, v)?,
        ValueKind::PortRange => port::tcp_udp_port(d, v)?,
        ValueKind::Netmask => misc::netmask(d, v)?,
        ValueKind::Bitmask => misc::bitmask(d, v)?,
        ValueKind::Before | ValueKind::After => {
            d.nameref = Some(misc::setname(v)?);
            d.before = k.value == ValueKind::Before;
            d.mark(Opt::Nameref);
        }
        ValueKind::SingleIp => ip::parse_ip(d, k.opt, v, ip::AddrShape::Plain)?,
        ValueKind::Net => ip::parse_ip(d, k.opt, v, ip::AddrShape::Net)?,
        ValueKind::SingleTcpPort => port::single_tcp_port(d, k.opt, v)?,
        ValueKind::Flag => {
            match k.opt {
                Opt::Counters => d.counters = true,
                Opt::CreateComment => d.create_comment = true,
                Opt::Forceadd => d.forceadd = true,
                Opt::Skbinfo => d.skbinfo = true,
                Opt::Nomatch => d.nomatch = true,
                Opt::IfaceWildcard => d.wildcard = true,
                _ => {}
            }
            d.mark(k.opt);
        }
        ValueKind::Timeout => {
            d.timeout = Some(misc::timeout(v)?);
            d.mark(k.opt);
        }
        ValueKind::Comment => {
            d.comment = Some(misc::comment(v)?);
            d.mark(k.opt);
        }
        ValueKind::Skbmark => {
            d.skbmark = Some(misc::skbmark(v)?);
            d.mark(k.opt);
        }
        ValueKind::Skbprio => {
            d.skbprio = Some(misc::skbprio(v)?);
            d.mark(k.opt);
        }
    }
    Ok(())
}

/// ipset's `check_mandatory`: the first keyword whose item is missing.
fn check_mandatory(spec: &CmdSpec, d: &Data) -> Result<()> {
    let mut flags = d.flags;
    if d.has(Opt::Cidr) {
        flags |= Opt::IpTo.bit();
    }
    let missing = spec.need & !flags;
    if missing == 0 {
        return Ok(());
    }
    if let Some(k) = spec.args.iter().find(|k| missing & k.opt.bit() != 0) {
        return Err(Error::parameter(format!(
            "Mandatory option `{}' is missing",
            k.name
        )));
    }
    Ok(())
}

/// ipset's `check_allowed`: the first item given that the command does not
/// take (ranges get their own wording).
fn check_allowed(spec: &CmdSpec, d: &Data, cmdflags: u64, cmd: &str, t: &TypeInfo) -> Result<()> {
    let mut allowed = spec.allowed();
    if allowed & Opt::IpTo.bit() != 0 {
        allowed |= Opt::Cidr.bit();
    }
    // Nothing given that the command takes and the type does not allow.
    if d.flags & cmdflags & !allowed == 0 {
        return Ok(());
    }
    let family = match d.family {
        Some(f) => f.name(),
        None => "unspec",
    };
    for o in Opt::ALL {
        if (o as u8) < (Opt::Ip as u8) || (o as u8) >= OPT_FLAGS_LIMIT {
            continue;
        }
        if cmdflags & o.bit() == 0 || allowed & o.bit() != 0 || !d.has(o) {
            continue;
        }
        let what = match o {
            Opt::Cidr => "IP/CIDR range".to_string(),
            Opt::IpTo => "FROM-TO IP range".to_string(),
            Opt::PortTo => "FROM-TO port range".to_string(),
            _ => match spec.args.iter().find(|k| k.opt == o) {
                Some(k) => format!("{} parameter", k.name),
                None => {
                    return Err(Error::other(format!(
                        "There are not allowed options ({}) but can't resolve them. \
                         It's a bug, please report the problem.",
                        o as u8
                    )))
                }
            },
        };
        return Err(Error::other(format!(
            "{what} is not allowed in command {cmd} with set type {} and family {family}",
            t.name
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
