//! Command-line parsing: command words, global options, keywords.

use super::*;
use crate::addr::Family;

fn sets(name: &str) -> Option<(SetType, Option<Family>)> {
    match name {
        "ip" => Some((SetType::HashIp, Some(Family::Inet))),
        "ip6" => Some((SetType::HashIp, Some(Family::Inet6))),
        "ports" => Some((SetType::BitmapPort, None)),
        "list" => Some((SetType::ListSet, None)),
        "iface" => Some((SetType::HashNetIface, Some(Family::Inet))),
        _ => None,
    }
}

fn p(line: &str) -> Result<Parsed> {
    let words: Vec<&str> = line.split_whitespace().collect();
    parse(&words, None, Env::default(), &sets)
}

#[test]
fn command_words_and_aliases() {
    let cases: [(&str, Command); 14] = [
        (
            "-N x iphash",
            Command::Create {
                name: "x".into(),
                ty: SetType::HashIp,
                data: p("create x hash:ip").unwrap().cmd.data_of(),
            },
        ),
        ("n x hash:ip", p("create x hash:ip").unwrap().cmd),
        ("--create x hash:ip", p("create x hash:ip").unwrap().cmd),
        ("a ip 1.1.1.1", p("add ip 1.1.1.1").unwrap().cmd),
        ("-A ip 1.1.1.1", p("add ip 1.1.1.1").unwrap().cmd),
        ("d ip 1.1.1.1", p("del ip 1.1.1.1").unwrap().cmd),
        ("t ip 1.1.1.1", p("test ip 1.1.1.1").unwrap().cmd),
        ("x", Command::Destroy(None)),
        ("l", Command::List(None)),
        ("s ip", Command::Save(Some("ip".into()))),
        ("r", Command::Restore),
        (
            "e a b",
            Command::Rename {
                from: "a".into(),
                to: "b".into(),
            },
        ),
        (
            "w a b",
            Command::Swap {
                from: "a".into(),
                to: "b".into(),
            },
        ),
        ("-V", Command::Version),
    ];
    for (line, want) in cases {
        assert_eq!(p(line).unwrap().cmd, want, "{line}");
    }
}

impl Command {
    fn data_of(self) -> Data {
        match self {
            Command::Create { data, .. }
            | Command::Add { data, .. }
            | Command::Del { data, .. }
            | Command::Test { data, .. } => data,
            _ => Data::default(),
        }
    }
}

#[test]
fn global_options_anywhere() {
    let e = p("add ip 1.1.1.1 -exist --quiet").unwrap().env;
    assert!(e.exist && e.quiet);
    let e = p("-! -s -t -n -r -o xml -f out list").unwrap().env;
    assert_eq!(
        e,
        Env {
            exist: true,
            quiet: false,
            sorted: true,
            resolve: true,
            names_only: true,
            terse: true,
            output: Some(OutputMode::Xml),
            file: Some("out".into()),
        }
    );
    assert_eq!(
        p("list -o").unwrap_err().msg,
        "Missing mandatory argument to option -o"
    );
    assert_eq!(
        p("-f a -f b list").unwrap_err().msg,
        "-file option cannot be used when full io is activated"
    );
}

#[test]
fn create_options() {
    let d = p("create x hash:ip family inet6 netmask 64 timeout 30 counters comment")
        .unwrap()
        .cmd
        .data_of();
    assert_eq!(d.family, Some(Family::Inet6));
    assert_eq!(
        (d.netmask, d.timeout, d.counters, d.create_comment),
        (Some(64), Some(30), true, true)
    );
    let d = p("create x hash:ip -6 --hashsize 128")
        .unwrap()
        .cmd
        .data_of();
    assert_eq!((d.family, d.hashsize), (Some(Family::Inet6), Some(128)));
    let d = p("create x bitmap:ip --from 2.0.0.1 --to 2.1.0.0")
        .unwrap()
        .cmd
        .data_of();
    assert_eq!((d.ip.is_some(), d.ip_to.is_some()), (true, true));
    let d = p("create x bitmap:port range tcp:1-1024")
        .unwrap()
        .cmd
        .data_of();
    assert_eq!((d.port, d.port_to, d.proto), (Some(1), Some(1024), None));
    let errs = [
        ("create x bitmap:ip range 1.1.1.0/24 family inet6", "Unknown argument: `family'"),
        ("create x hash:ip netmask 24 bitmask 255.255.0.0", "Syntax error: bitmask and netmask are mutually exclusive, provide only one"),
        ("create x hash:ip maxelem -1", "Syntax error: '-1' is out of range 0-4294967295"),
        ("create x hash:mac family inet", "Unknown argument: `family'"),
        ("create this-name-is-much-too-long-for-ipset hash:ip", "Syntax error: setname 'this-name-is-much-too-long-for-ipset' is longer than 31 characters"),
    ];
    for (line, want) in errs {
        assert_eq!(p(line).unwrap_err().msg, want, "{line}");
    }
}

#[test]
fn adt_elements_and_options() {
    let d = p("add ip 1.1.1.1 timeout 5 packets 1 bytes 2 comment hello")
        .unwrap()
        .cmd
        .data_of();
    assert_eq!(
        (d.timeout, d.packets, d.bytes, d.comment.as_deref()),
        (Some(5), Some(1), Some(2), Some("hello"))
    );
    let d = p("add iface 10.0.0.0/8,physdev:eth0 nomatch")
        .unwrap()
        .cmd
        .data_of();
    assert_eq!(
        (d.iface.as_deref(), d.physdev, d.nomatch),
        (Some("eth0"), true, true)
    );
    let d = p("add ports 80-90").unwrap().cmd.data_of();
    assert_eq!((d.port, d.port_to), (Some(80), Some(90)));
    let d = p("add list ip before ip6").unwrap().cmd.data_of();
    assert_eq!(
        (d.name.as_deref(), d.nameref.as_deref(), d.before),
        (Some("ip"), Some("ip6"), true)
    );
    let errs = [
        ("add ip 1.1.1.1 wildcard", "Unknown argument: `wildcard'"),
        ("test ip 1.1.1.1 timeout 5", "Unknown argument: `timeout'"),
        ("add ip6 1::1-1::2", "Syntax error: plain IP address must be supplied: 1::1-1::2"),
        ("add ip6 1.1.1.1", "Syntax error: cannot parse 1.1.1.1: resolving to IPv6 address failed"),
        ("test ports 80-90", "FROM-TO port range is not allowed in command test with set type bitmap:port and family unspec"),
        ("add ports gre:0", "Syntax error: Only protocols TCP and UDP are valid"),
        ("add nosuch 1.1.1.1", "The set with the given name does not exist"),
        ("add ip 1.1.1.1 comment a\"b", "Syntax error: \" character is not permitted in comments"),
    ];
    for (line, want) in errs {
        assert_eq!(p(line).unwrap_err().msg, want, "{line}");
    }
}

#[test]
fn restore_mode_refusals_and_limits() {
    let words = ["help"];
    let e = parse(&words, Some(3), Env::default(), &sets).unwrap_err();
    assert_eq!(e.msg, "Command `help' is invalid in restore mode.");
    let many: Vec<&str> = std::iter::repeat_n("x", 32).collect();
    assert_eq!(
        parse(&many, None, Env::default(), &sets).unwrap_err().msg,
        "Line is too long to parse."
    );
}
