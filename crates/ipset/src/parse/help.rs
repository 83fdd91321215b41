//! `ipset help [TYPE]`: the command and option summary, the supported types
//! (newest revision of each), and a type's keywords per command.

use crate::error::{Error, Result, PROGRAM, VERSION};
use crate::types::{SetType, TypeFamily};

const COMMAND_HELP: &[(&str, &str, &str)] = &[
    (
        "create",
        "SETNAME TYPENAME [type-specific-options]",
        "Create a new set",
    ),
    ("add", "SETNAME ENTRY", "Add entry to the named set"),
    ("del", "SETNAME ENTRY", "Delete entry from the named set"),
    ("test", "SETNAME ENTRY", "Test entry in the named set"),
    ("destroy", "[SETNAME]", "Destroy a named set or all sets"),
    (
        "list",
        "[SETNAME]",
        "List the entries of a named set or all sets",
    ),
    (
        "save",
        "[SETNAME]",
        "Save the named set or all sets to stdout",
    ),
    ("restore", "", "Restore a saved state"),
    ("flush", "[SETNAME]", "Flush a named set or all sets"),
    ("rename", "FROM-SETNAME TO-SETNAME", "Rename two sets"),
    (
        "swap",
        "FROM-SETNAME TO-SETNAME",
        "Swap the contect of two existing sets",
    ),
    (
        "help",
        "[TYPENAME]",
        "Print help, and settype specific help",
    ),
    ("version", "", "Print version information"),
    ("quit", "", "Quit interactive mode"),
];

const OPTION_HELP: &[(&str, &str)] = &[
    (
        "-o plain|save|xml|json",
        "       Specify output mode for listing sets.\n       Default value for \"list\" command is mode \"plain\"\n       and for \"save\" command is mode \"save\".",
    ),
    ("-s ", "        Print elements sorted (if supported by the set type)."),
    ("-q ", "        Suppress any notice or warning message."),
    ("-r ", "        Try to resolve IP addresses in the output (slow!)"),
    (
        "-! ",
        "        Ignore errors when creating or adding sets or\n        elements that do exist or when deleting elements\n        that don't exist.",
    ),
    ("-n ", "        When listing, just list setnames from the kernel.\n"),
    ("-t ", "        When listing, list setnames and set headers\n        from kernel only."),
    (
        "-f ",
        "        Read from the given file instead of standard\n        input (restore) or write to given file instead\n        of standard output (list/save).",
    ),
];

/// The order ipset lists its registered types in.
const LIST_ORDER: [SetType; 16] = [
    SetType::ListSet,
    SetType::HashMac,
    SetType::HashIpMac,
    SetType::HashNetIface,
    SetType::HashNetPort,
    SetType::HashNetPortNet,
    SetType::HashNetNet,
    SetType::HashNet,
    SetType::HashIpPortNet,
    SetType::HashIpPortIp,
    SetType::HashIpMark,
    SetType::HashIpPort,
    SetType::HashIp,
    SetType::BitmapPort,
    SetType::BitmapIpMac,
    SetType::BitmapIp,
];

/// The general help text (commands, options).
pub fn general_help() -> String {
    let mut s =
        format!("{PROGRAM} v{VERSION}\n\nUsage: {PROGRAM} [options] COMMAND\n\nCommands:\n");
    for (name, args, what) in COMMAND_HELP {
        s.push_str(&format!("{name} {args}\n        {what}\n"));
    }
    s.push_str("\nOptions:\n");
    for (name, what) in OPTION_HELP {
        s.push_str(&format!("{name}\n{what}\n"));
    }
    s
}

/// The supported-types section printed after the general help.
pub fn types_help() -> String {
    let mut s = String::from("\nSupported set types:\n");
    for ty in LIST_ORDER {
        let t = ty.info();
        let pad = if t.name.len() < 12 { "\t" } else { "" };
        s.push_str(&format!(
            "    {}\t{pad}{}\t{}\n",
            t.name, t.revision, t.description
        ));
    }
    s
}

/// The type-specific section of `help TYPE`.
pub fn type_help(name: &str) -> Result<String> {
    let Some(ty) = SetType::by_name(name) else {
        return Err(Error::parameter(format!("Unknown settype: `{name}'")));
    };
    let t = ty.info();
    let mut s = format!("\n{} type specific options:\n\n", t.name);
    for (prefix, spec) in [
        ("create SETNAME", &t.create),
        ("add    SETNAME", &t.add),
        ("del    SETNAME", &t.del),
        ("test   SETNAME", &t.test),
    ] {
        s.push_str(&format!("{prefix} {} {}\n", t.name, spec.help));
        for k in spec.args.iter().filter(|k| !k.help.is_empty()) {
            s.push_str(&format!("               {}\n", k.help));
        }
    }
    s.push('\n');
    match t.family {
        TypeFamily::Unspec => s.push_str(&format!("\nType {} is family neutral.\n", t.name)),
        TypeFamily::Both => s.push_str(&format!("\nType {} supports inet and inet6.\n", t.name)),
        TypeFamily::Ipv4 => s.push_str(&format!("\nType {} supports family inet only.\n", t.name)),
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_texts() {
        let g = general_help();
        assert!(g.starts_with(
            "ipset v7.21\n\nUsage: ipset [options] COMMAND\n\nCommands:\ncreate SETNAME"
        ));
        assert!(types_help().contains("    hash:ip\t\t6\tbitmask support\n"));
        assert!(types_help().contains("    hash:net,port,net\t3\t"));
        let t = type_help("iphash").unwrap();
        assert!(t.contains("add    SETNAME hash:ip IP\n               [timeout VALUE]\n"));
        assert_eq!(type_help("x").unwrap_err().msg, "Unknown settype: `x'");
    }
}
