//! Command scenarios: each step's stdout, stderr and exit code exactly.

use super::*;
use crate::model::Store;

/// Run `line` (words split at blanks) at time `now`.
fn step(
    store: &mut Store,
    mirror: &mut dyn Mirror,
    now: u64,
    line: &str,
    input: Option<&str>,
) -> Output {
    let args: Vec<&str> = line.split_whitespace().collect();
    let mut ctx = Ctx { store, mirror, now };
    run(&mut ctx, &args, input)
}

/// (command, stdout, stderr, exit code); an empty stdout/stderr pattern
/// means "empty".
type Case = (&'static str, &'static str, &'static str, i32);

fn scenario(cases: &[Case]) {
    let mut store = Store::new();
    let mut m = NoMirror;
    for (cmd, out, err, code) in cases {
        let o = step(&mut store, &mut m, 0, cmd, None);
        assert_eq!(
            (o.stdout.as_str(), o.stderr.as_str(), o.code),
            (*out, *err, *code),
            "{cmd}"
        );
    }
}

const HELP: &str = "Try `ipset help' for more information.\n";

#[test]
fn hash_ip_basics() {
    scenario(&[
        ("create test hash:ip initval 0x12", "", "", 0),
        (
            "create test hash:ip",
            "",
            "ipset v7.21: Set cannot be created: set with the same name already exists\n",
            1,
        ),
        ("-exist create test hash:ip", "", "", 0),
        (
            "create test hash:ip timeout 5 -exist",
            "",
            "ipset v7.21: Set cannot be created: set with the same name already exists\n",
            1,
        ),
        ("add test 1.1.1.1", "", "", 0),
        (
            "add test 1.1.1.1",
            "",
            "ipset v7.21: Element cannot be added to the set: it's already added\n",
            1,
        ),
        ("-! add test 1.1.1.1", "", "", 0),
        ("test test 1.1.1.1", "", "Warning: 1.1.1.1 is in set test.\n", 0),
        ("test test 1.1.1.2", "", "1.1.1.2 is NOT in set test.\n", 1),
        ("-q test test 1.1.1.2", "", "", 1),
        (
            "del test 1.1.1.2",
            "",
            "ipset v7.21: Element cannot be deleted from the set: it's not added\n",
            1,
        ),
        (
            "add test 0.0.0.0",
            "",
            "ipset v7.21: Null-valued element, cannot be stored in a hash type of set\n",
            1,
        ),
        (
            "add test 1.1.1.2 timeout 5",
            "",
            "ipset v7.21: Timeout cannot be used: set was created without timeout support\n",
            1,
        ),
        (
            "list test",
            "Name: test\nType: hash:ip\nRevision: 6\nHeader: family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x00000012\nSize in memory: 720\nReferences: 0\nNumber of entries: 1\nMembers:\n1.1.1.1\n",
            "",
            0,
        ),
        (
            "save",
            "create test hash:ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x00000012\nadd test 1.1.1.1\n",
            "",
            0,
        ),
        ("-n list", "test\n", "", 0),
        ("-t list test", "Name: test\nType: hash:ip\nRevision: 6\nHeader: family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x00000012\nSize in memory: 720\nReferences: 0\nNumber of entries: 1\n", "", 0),
        ("destroy test", "", "", 0),
        ("destroy test", "", "ipset v7.21: The set with the given name does not exist\n", 1),
        ("-exist destroy test", "", "", 0),
    ]);
}

#[test]
fn command_line_problems() {
    scenario(&[
        ("", "", "ipset v7.21: No command specified.\n", 2),
        ("foo", "", "ipset v7.21: No command specified: unknown argument foo\n", 2),
        ("add test", "", "ipset v7.21: Missing second mandatory argument to command add\n", 2),
        ("-N", "", "ipset v7.21: Missing mandatory argument to command create\n", 2),
        ("add nosuch 1.1.1.1", "", "ipset v7.21: The set with the given name does not exist\n", 1),
        ("create t hash:ip hashsize", "", "ipset v7.21: Missing mandatory argument of option `hashsize'\n", 2),
        ("create t hash:ip foo", "", "ipset v7.21: Unknown argument: `foo'\n", 2),
        ("create t hash:ip timeout 1 timeout 2", "", "ipset v7.21: Syntax error: timeout already specified\n", 1),
        ("create t bitmap:ip", "", "ipset v7.21: Mandatory option `range' is missing\n", 2),
        ("create t hash:foo", "", "ipset v7.21: Syntax error: typename 'hash:foo' is unknown\n", 1),
        ("create b bitmap:ip range 10.0.0.0/24", "", "", 0),
        (
            "test b 10.0.0.1-10.0.0.2",
            "",
            "ipset v7.21: FROM-TO IP range is not allowed in command test with set type bitmap:ip and family inet\n",
            1,
        ),
        (
            "test b 10.0.0.0/30",
            "",
            "ipset v7.21: IP/CIDR range is not allowed in command test with set type bitmap:ip and family inet\n",
            1,
        ),
        ("add b 10.0.1.0", "", "ipset v7.21: Element is out of the range of the set\n", 1),
        ("list b x", "", "ipset v7.21: Unknown argument x\n", 2),
        ("-o foo list", "", "ipset v7.21: Syntax error: unknown output mode 'foo'\n", 1),
        ("version", "ipset v7.21, protocol version: 7\n", "", 0),
    ]
    .map(|(c, o, e, n)| {
        // Parameter problems end with the help hint.
        let e: &'static str = if n == 2 { Box::leak(format!("{e}{HELP}").into_boxed_str()) } else { e };
        (c, o, e, n)
    }));
}

#[test]
fn ignored_options_warn_after_success() {
    scenario(&[
        (
            "create t hash:ip probes 4 resize 50",
            "",
            "Warning: Option '--probes 4' is ignored. Please upgrade your syntax.\nWarning: Option '--resize 50' is ignored. Please upgrade your syntax.\n",
            0,
        ),
        ("create n hash:ip,mark --from 1.1.1.1", "", "Warning: Option '--from 1.1.1.1' is ignored. Please upgrade your syntax.\n", 0),
    ]);
}

#[test]
fn restore_is_all_or_nothing_with_line_numbers() {
    let mut store = Store::new();
    let mut m = NoMirror;
    let input = "create a hash:ip\nadd a 1.1.1.1\n\n# comment\nadd a 1.1.1.1\nCOMMIT\n";
    let o = step(&mut store, &mut m, 0, "restore", Some(input));
    assert_eq!(
        (o.stderr.as_str(), o.code),
        ("ipset v7.21: Error in line 5: Element cannot be added to the set: it's already added\n", 1)
    );
    assert!(
        store.get("a").is_none(),
        "nothing of a failed restore stays"
    );
    let o = step(&mut store, &mut m, 0, "-exist restore", Some(input));
    assert_eq!((o.stderr.as_str(), o.code), ("", 0));
    assert_eq!(store.get("a").map(|s| s.len()), Some(1));
    let o = step(
        &mut store,
        &mut m,
        0,
        "restore",
        Some("add a 2.2.2.2\nrestore\n"),
    );
    assert_eq!(
        (o.stderr.as_str(), o.code),
        ("ipset v7.21: Command `restore' is invalid in restore mode.\nTry `ipset help' for more information.\n", 2)
    );
    assert_eq!(store.get("a").map(|s| s.len()), Some(1));
}

#[test]
fn timeouts_follow_the_clock() {
    let mut store = Store::new();
    let mut m = NoMirror;
    assert_eq!(
        step(&mut store, &mut m, 0, "create t hash:ip timeout 4", None).code,
        0
    );
    assert_eq!(step(&mut store, &mut m, 0, "add t 1.1.1.1", None).code, 0);
    assert_eq!(
        step(&mut store, &mut m, 0, "add t 1.1.1.2 timeout 0", None).code,
        0
    );
    let o = step(&mut store, &mut m, 1500, "save t", None);
    assert!(
        o.stdout.contains("add t 1.1.1.1 timeout 2\n"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("add t 1.1.1.2 timeout 0\n"));
    assert_eq!(
        step(&mut store, &mut m, 4000, "test t 1.1.1.1", None).code,
        0
    );
    assert_eq!(
        step(&mut store, &mut m, 4001, "test t 1.1.1.1", None).code,
        1
    );
    let o = step(&mut store, &mut m, 5000, "list t", None);
    assert!(o
        .stdout
        .contains("Number of entries: 1\nMembers:\n1.1.1.2 timeout 0\n"));
}

#[test]
fn references_block_destroy_and_rename() {
    scenario(&[
        ("create a hash:ip", "", "", 0),
        ("create l list:set", "", "", 0),
        ("add l a", "", "", 0),
        (
            "destroy a",
            "",
            "ipset v7.21: Set cannot be destroyed: it is in use by a kernel component\n",
            1,
        ),
        (
            "rename a b",
            "",
            "ipset v7.21: Set cannot be renamed: it is in use by another system\n",
            1,
        ),
        (
            "destroy",
            "",
            "ipset v7.21: Set cannot be destroyed: it is in use by a kernel component\n",
            1,
        ),
        (
            "add l l",
            "",
            "ipset v7.21: Sets with list:set type cannot be added to the set.\n",
            1,
        ),
        (
            "add l x",
            "",
            "ipset v7.21: Set to be added/deleted/tested as element does not exist.\n",
            1,
        ),
        (
            "swap a l",
            "",
            "ipset v7.21: The sets cannot be swapped: their type does not match\n",
            1,
        ),
        (
            "swap a zz",
            "",
            "ipset v7.21: Sets cannot be swapped: the second set does not exist\n",
            1,
        ),
        ("flush", "", "", 0),
        ("rename a b", "", "", 0),
        ("create c hash:ip", "", "", 0),
        (
            "rename b c",
            "",
            "ipset v7.21: Set cannot be renamed: a set with the new name already exists\n",
            1,
        ),
        ("destroy", "", "", 0),
        ("list", "", "", 0),
    ]);
}

#[test]
fn held_references_are_the_callers() {
    let mut store = Store::new();
    let mut m = NoMirror;
    step(&mut store, &mut m, 0, "create a hash:ip", None);
    store.hold("a").unwrap();
    assert!(step(&mut store, &mut m, 0, "list a", None)
        .stdout
        .contains("References: 1\n"));
    assert_eq!(step(&mut store, &mut m, 0, "destroy a", None).code, 1);
    store.release("a").unwrap();
    assert_eq!(step(&mut store, &mut m, 0, "destroy a", None).code, 0);
}

#[test]
fn every_change_reaches_the_mirror() {
    let mut store = Store::new();
    let mut rec = Recorder::default();
    for cmd in [
        "create a hash:net",
        "add a 10.2.0.0-10.2.1.12",
        "del a 10.2.1.8/30",
        "-! add a 10.2.0.0/24 nomatch",
        "create b hash:net",
        "swap a b",
        "rename b c",
        "flush c",
        "destroy c",
    ] {
        let o = step(&mut store, &mut rec, 0, cmd, None);
        assert_eq!(o.code, 0, "{cmd}: {}", o.stderr);
    }
    // A failed command reaches the mirror neither.
    assert_eq!(
        step(&mut store, &mut rec, 0, "add a 1.1.1.1,x", None).code,
        1
    );
    assert_eq!(
        rec.calls,
        [
            "create a hash:net",
            "add a 10.2.0.0/24 10.2.1.0/29 10.2.1.8/30 10.2.1.12",
            "del a 10.2.1.8/30",
            "update a 10.2.0.0/24",
            "create b hash:net",
            "swap a b",
            "rename b c",
            "flush c",
            "destroy c",
        ]
    );
}

#[test]
fn xml_and_json_listings() {
    let mut store = Store::new();
    let mut m = NoMirror;
    for cmd in [
        "create s hash:ip timeout 10 comment initval 1",
        "add s 1.1.1.1 comment x",
        "create l list:set",
    ] {
        assert_eq!(step(&mut store, &mut m, 0, cmd, None).code, 0, "{cmd}");
    }
    let xml = step(&mut store, &mut m, 0, "-o xml list", None).stdout;
    assert_eq!(
        xml,
        "<ipsets>\n<ipset name=\"s\">\n<type>hash:ip</type>\n<revision>6</revision>\n\
         <header><family>inet</family><hashsize>1024</hashsize><maxelem>65536</maxelem>\
         <timeout>10</timeout><comment/><bucketsize>12</bucketsize><initval>0x00000001</initval>\n\
         <memsize>736</memsize>\n<references>0</references>\n<numentries>1</numentries>\n</header>\n\
         <members>\n<member><elem>1.1.1.1</elem><timeout>10</timeout><comment>\"x\"</comment></member>\n\
         </members>\n</ipset>\n<ipset name=\"l\">\n<type>list:set</type>\n<revision>3</revision>\n\
         <header><size>8</size>\n<memsize>88</memsize>\n<references>0</references>\n\
         <numentries>0</numentries>\n</header>\n<members>\n</members>\n</ipset>\n</ipsets>\n"
    );
    let json = step(&mut store, &mut m, 0, "-o json list s", None).stdout;
    assert_eq!(
        json,
        "[\n  {\n    \"name\" : \"s\",\n    \"type\" : \"hash:ip\",\n    \"revision\" : 6,\n    \"header\" : {\n\
         \x20     \"family\" : \"inet\",\n      \"hashsize\" : 1024,\n      \"maxelem\" : 65536,\n\
         \x20     \"timeout\" : 10,\n      \"comment\" : true,\n      \"bucketsize\" : 12,\n\
         \x20     \"initval\" : \"0x00000001\",\n      \"memsize\" : 736,\n      \"references\" : 0,\n\
         \x20     \"numentries\" : 1\n    },\n    \"members\" : [\n      {\n        \"elem\" : \"1.1.1.1\",\n\
         \x20       \"timeout\" : 10,\n        \"comment\" : \"x\"\n      }\n    ]\n  }\n]\n"
    );
    let names = step(&mut store, &mut m, 0, "-n -o json list", None).stdout;
    assert_eq!(
        names,
        "[\n  { \"name\" : \"s\" },\n  { \"name\" : \"l\" }\n]\n"
    );
}

#[test]
fn sorted_listing_orders_hash_members_numerically() {
    let mut store = Store::new();
    let mut m = NoMirror;
    for cmd in [
        "create s hash:net",
        "add s 10.0.0.0/8",
        "add s 9.0.0.0/8",
        "add s 10.0.0.0/16",
        "add s 192.168.0.0/24",
    ] {
        assert_eq!(step(&mut store, &mut m, 0, cmd, None).code, 0, "{cmd}");
    }
    let out = step(&mut store, &mut m, 0, "-s save s", None).stdout;
    let adds: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        adds,
        [
            "add s 9.0.0.0/8",
            "add s 10.0.0.0/16",
            "add s 10.0.0.0/8",
            "add s 192.168.0.0/24"
        ]
    );
}

#[test]
fn test_messages_print_the_element_as_given() {
    scenario(&[
        ("create a hash:ip", "", "", 0),
        ("create b hash:ip", "", "", 0),
        ("create l list:set", "", "", 0),
        ("add l a", "", "", 0),
        ("add l b", "", "", 0),
        // ipset's message says "after" even for "before" (it reads the
        // flag from the wrong word).
        (
            "test l a before b",
            "",
            "Warning: a after b is in set l.\n",
            0,
        ),
        ("create p hash:ip,port", "", "", 0),
        ("add p 1.1.1.1,80", "", "", 0),
        (
            "test p 1.1.1.1,80",
            "",
            "Warning: 1.1.1.1,tcp:80 is in set p.\n",
            0,
        ),
        (
            "test p 1.1.1.1,udp:80",
            "",
            "1.1.1.1,udp:80 is NOT in set p.\n",
            1,
        ),
        ("create n hash:net", "", "", 0),
        ("add n 10.0.0.0/8", "", "", 0),
        (
            "test n 10.1.1.1/32",
            "",
            "Warning: 10.1.1.1 is in set n.\n",
            0,
        ),
        (
            "test n 10.0.0.0/16",
            "",
            "10.0.0.0/16 is NOT in set n.\n",
            1,
        ),
    ]);
}
