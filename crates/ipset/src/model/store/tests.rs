//! Store semantics: slots, swap, list:set order, rollback.

use super::*;
use crate::parse::{self, Command, Env};

/// Apply one command line to the store (parse + model), as exec would.
fn apply(s: &mut Store, line: &str, now: u64) -> Result<bool> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let p = parse::parse(&words, None, Env::default(), s)?;
    let exist = p.env.exist;
    match p.cmd {
        Command::Create { name, ty, data } => s.create(&name, ty, &data, exist).map(|_| true),
        Command::Add { name, data } => s.adt(&name, &data, Adt::Add, exist, now).map(|_| true),
        Command::Del { name, data } => s.adt(&name, &data, Adt::Del, exist, now).map(|_| true),
        Command::Test { name, data } => s.test(&name, &data, now),
        Command::Destroy(n) => s.destroy(n.as_deref(), exist, now).map(|_| true),
        Command::Flush(n) => s.flush(n.as_deref()).map(|_| true),
        Command::Rename { from, to } => s.rename(&from, &to, now).map(|_| true),
        Command::Swap { from, to } => s.swap(&from, &to).map(|_| true),
        _ => Ok(true),
    }
}

fn list_of(s: &Store, name: &str) -> Vec<String> {
    match &s.get(name).unwrap().members {
        Members::List(l) => l.iter().map(|(n, _)| n.clone()).collect(),
        Members::Map(_) => Vec::new(),
    }
}

#[test]
fn list_set_positions() {
    let mut s = Store::new();
    for l in [
        "create a hash:ip",
        "create b hash:ip",
        "create c hash:ip",
        "create t list:set",
    ] {
        apply(&mut s, l, 0).unwrap();
    }
    let steps: [(&str, std::result::Result<bool, Kernel>, &[&str]); 9] = [
        ("add t b", Ok(true), &["b"]),
        ("add t c after b", Ok(true), &["b", "c"]),
        ("add t a before b", Ok(true), &["a", "b", "c"]),
        ("test t a before b", Ok(true), &["a", "b", "c"]),
        ("test t c after a", Ok(false), &["a", "b", "c"]),
        (
            "del t c after a",
            Err(Kernel::ListRefExist),
            &["a", "b", "c"],
        ),
        ("del t b before c", Ok(true), &["a", "c"]),
        ("add t b before x", Err(Kernel::ListNameRef), &["a", "c"]),
        ("add t b after b", Err(Kernel::ListRefExist), &["a", "c"]),
    ];
    for (line, want, order) in steps {
        let got = apply(&mut s, line, 0).map_err(|e| e.msg);
        assert_eq!(got, want.map_err(|k| k.message().to_string()), "{line}");
        assert_eq!(list_of(&s, "t"), order, "{line}");
    }
    assert_eq!(s.references("a"), 1);
    assert_eq!(s.references("b"), 0);
}

#[test]
fn list_members_expire_and_release_references() {
    let mut s = Store::new();
    for l in [
        "create a hash:ip",
        "create t list:set timeout 5",
        "add t a timeout 1",
    ] {
        apply(&mut s, l, 0).unwrap();
    }
    assert_eq!(s.references("a"), 1);
    s.purge(1001);
    assert_eq!(s.references("a"), 0);
    assert!(s.destroy(Some("a"), false, 1001).is_ok());
}

#[test]
fn swap_exchanges_contents_not_names() {
    let mut s = Store::new();
    for l in [
        "create a hash:ip",
        "create b hash:ip family inet6",
        "create c hash:ip",
        "add a 1.1.1.1",
        "create l list:set",
        "add l a",
    ] {
        apply(&mut s, l, 0).unwrap();
    }
    assert_eq!(
        apply(&mut s, "swap a b", 0).unwrap_err().msg,
        Kernel::TypeMismatch.message()
    );
    apply(&mut s, "swap a c", 0).unwrap();
    assert_eq!(s.get("a").unwrap().len(), 0);
    assert_eq!(s.get("c").unwrap().len(), 1);
    assert_eq!(s.references("a"), 1, "references stay with the name");
    let order: Vec<&str> = s.in_dump_order().iter().map(|x| x.name.as_str()).collect();
    assert_eq!(order, ["a", "b", "c", "l"]);
}

#[test]
fn new_sets_take_the_first_free_slot() {
    let mut s = Store::new();
    for l in [
        "create a hash:ip",
        "create l list:set",
        "create b hash:ip",
        "destroy a",
        "create c hash:ip",
    ] {
        apply(&mut s, l, 0).unwrap();
    }
    let order: Vec<&str> = s.in_dump_order().iter().map(|x| x.name.as_str()).collect();
    assert_eq!(order, ["c", "b", "l"]);
}

#[test]
fn rollback_restores_everything() {
    let mut s = Store::new();
    for l in [
        "create a hash:ip",
        "add a 1.1.1.1",
        "create l list:set",
        "add l a",
        "create z hash:net",
    ] {
        apply(&mut s, l, 0).unwrap();
    }
    let before: Vec<(String, usize)> = s.slots().map(|x| (x.name.clone(), x.set.len())).collect();
    let sp = s.begin();
    for l in [
        "add a 2.2.2.2-2.2.2.9",
        "del a 1.1.1.1",
        "flush l",
        "destroy z",
        "create n hash:ip",
        "rename n m",
        "swap a m",
        "add z2 1.1.1.1",
    ] {
        let _ = apply(&mut s, l, 0);
    }
    s.hold("a").unwrap();
    s.rollback(sp);
    let after: Vec<(String, usize)> = s.slots().map(|x| (x.name.clone(), x.set.len())).collect();
    assert_eq!(after, before);
    assert_eq!(s.references("a"), 1);
    assert!(s.get("m").is_none() && s.get("n").is_none());
    assert!(apply(&mut s, "test a 1.1.1.1", 0).unwrap());
}

#[test]
fn failed_command_changes_nothing() {
    let mut s = Store::new();
    apply(&mut s, "create a hash:ip maxelem 4", 0).unwrap();
    apply(&mut s, "add a 1.1.1.1", 0).unwrap();
    assert_eq!(
        apply(&mut s, "add a 1.1.1.2-1.1.1.9", 0).unwrap_err().msg,
        Kernel::HashFull.message()
    );
    assert_eq!(s.get("a").unwrap().len(), 1);
    apply(&mut s, "create f hash:ip maxelem 2 forceadd", 0).unwrap();
    apply(&mut s, "add f 1.1.1.1-1.1.1.5", 0).unwrap();
    assert_eq!(s.get("f").unwrap().len(), 2);
}

#[test]
fn net_tests_try_every_stored_prefix() {
    let mut s = Store::new();
    for l in [
        "create n hash:net",
        "add n 10.0.0.0/8",
        "add n 10.1.0.0/16 nomatch",
        "add n 10.1.1.0/24",
        "create i hash:net,iface",
        "add i 10.0.0.0/16,eth1",
        "add i 10.0.0.0/24,eth0",
        "add i 20.0.0.0/8,eth",
        "-! add i 20.0.0.0/8,eth wildcard",
    ] {
        apply(&mut s, l, 0).unwrap();
    }
    let cases = [
        ("test n 10.2.3.4", true),
        ("test n 10.1.2.3", false),
        ("test n 10.1.2.3 nomatch", true),
        ("test n 10.1.1.1", true),
        ("test n 10.1.0.0/16", false),
        ("test n 11.0.0.1", false),
        ("test i 10.0.1.1,eth1", true),
        // A /24 entry with another interface hides the /16 (kernel behaviour).
        ("test i 10.0.0.1,eth1", false),
        ("test i 10.0.0.1,eth0", true),
        ("test i 20.1.1.1,eth7", false),
    ];
    for (line, want) in cases {
        assert_eq!(apply(&mut s, line, 0).unwrap(), want, "{line}");
    }
}

/// Members of a set created in the innermost open transaction are not
/// journaled; every rollback must still leave the store as it was: the
/// outer transaction holds the first script, the inner one the second,
/// which is rolled back (and then the outer one too).
#[test]
fn rollbacks_undo_members_of_new_and_old_sets() {
    let members = |s: &Store, name: &str| -> Option<Vec<String>> {
        let set = s.get(name)?;
        Some(match &set.members {
            Members::Map(m) => m
                .iter()
                .map(|(k, _)| format!("{:?}", k.ip.map(|n| n.addr)))
                .collect(),
            Members::List(l) => l.iter().map(|(n, _)| n.clone()).collect(),
        })
    };
    let snapshot = |s: &Store| {
        ["old", "new", "tmp"]
            .iter()
            .map(|n| members(s, n))
            .collect::<Vec<_>>()
    };
    let cases: [(&[&str], &[&str]); 5] = [
        // New set in the inner transaction: dropped whole.
        (&[], &["create new hash:ip", "add new 1.1.1.1-1.1.1.9"]),
        // New set in the outer transaction, members in the inner one.
        (
            &["create new hash:ip", "add new 2.2.2.2"],
            &["add new 3.3.3.0/30", "del new 2.2.2.2"],
        ),
        // An old set's members, changed in the inner transaction.
        (
            &[],
            &[
                "add old 4.4.4.4",
                "del old 9.9.9.9",
                "flush old",
                "add old 5.5.5.5",
            ],
        ),
        // A new set swapped with the old one: its slot now holds old contents.
        (
            &[],
            &[
                "create tmp hash:ip",
                "swap tmp old",
                "add tmp 6.6.6.6",
                "del tmp 9.9.9.9",
            ],
        ),
        // Destroyed and created again in the same slot.
        (
            &["create new hash:ip"],
            &["destroy new", "create new hash:ip", "add new 7.7.7.7"],
        ),
    ];
    for (outer, inner) in cases {
        let mut s = Store::new();
        apply(&mut s, "create old hash:ip", 0).unwrap();
        apply(&mut s, "add old 9.9.9.9", 0).unwrap();
        let before = snapshot(&s);
        let o = s.begin();
        for l in outer {
            apply(&mut s, l, 0).unwrap();
        }
        let mid = snapshot(&s);
        let i = s.begin();
        for l in inner {
            apply(&mut s, l, 0).unwrap();
        }
        assert_ne!(snapshot(&s), mid, "{inner:?} changes something");
        s.rollback(i);
        assert_eq!(snapshot(&s), mid, "inner {inner:?} after {outer:?}");
        s.rollback(o);
        assert_eq!(snapshot(&s), before, "outer {outer:?}");
    }
}
