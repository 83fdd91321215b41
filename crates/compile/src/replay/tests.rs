use super::*;
use iptables::exec::{restore, RestoreOpts};
use ruleset::Ruleset;

/// The raw table of restore input `raw` (the lines between `*raw` and
/// `COMMIT`).
fn raw(family: Family, lines: &str) -> Table<Rule> {
    let mut rs: Ruleset<Rule> = Ruleset::new();
    let input = format!("*raw\n{lines}\nCOMMIT\n");
    restore(&mut rs, &input, &RestoreOpts::new(family, "t")).expect(lines);
    rs.table(family, TableKind::Raw).clone()
}

/// One rule of a replay chain as text: its verdict, preceded by `helper
/// NAME` for an objref and `new?` for the guard.
fn shape(l: &Lowered) -> String {
    let mut s = Vec::new();
    for e in &l.exprs {
        match e {
            Expr::Ct { key, .. } if *key == ct::STATE => s.push("new?".to_string()),
            Expr::Objref(o) => s.push(format!("helper {}", o.name)),
            Expr::Immediate {
                data: Data::Verdict(v),
                ..
            } => s.push(
                match v {
                    Verdict::Accept => "accept".to_string(),
                    Verdict::Return => "return".to_string(),
                    Verdict::Jump(c) => format!("jump {c}"),
                    Verdict::Goto(c) => format!("goto {c}"),
                    v => format!("{v:?}"),
                }
                .to_string(),
            ),
            Expr::Counter { .. } => s.push("counter".to_string()),
            _ => {}
        }
    }
    s.join(" ")
}

fn chains(r: &Replay) -> Vec<String> {
    r.chains
        .iter()
        .map(|c| {
            let rules: Vec<String> = c.rules.iter().map(shape).collect();
            format!(
                "{}{}: {}",
                c.name,
                if c.hook.is_some() { "*" } else { "" },
                rules.join(" | ")
            )
        })
        .collect()
}

#[test]
fn replays_what_reaches_a_helper_rule() {
    let v4 = Family::Ipv4;
    // (raw table, chains of the replay: `NAME*` is a base chain; rules
    // separated by `|`)
    let cases: &[(&str, &[&str])] = &[
        (
            "-A PREROUTING -p tcp --dport 21 -j CT --helper ftp",
            &[
                "PREROUTING*: new? accept | helper ftp-6 accept",
                "OUTPUT*: new? accept",
            ],
        ),
        // A dump's shape: both built-ins jump to one user chain.
        (
            ":port_assignment - [0:0]\n-A PREROUTING -j port_assignment\n\
             -A OUTPUT -j port_assignment\n\
             -A port_assignment -p tcp -m tcp --dport 1723 -j CT --helper pptp",
            &[
                "PREROUTING*: new? accept | jump port_assignment",
                "OUTPUT*: new? accept | jump port_assignment",
                "port_assignment: helper pptp-6 accept",
            ],
        ),
        // Another's: gotos and a chain of chains; LOG and plain rules go.
        (
            ":Z - [0:0]\n:A - [0:0]\n-A PREROUTING -j LOG\n-A PREROUTING -s 10.0.0.0/8\n\
             -A PREROUTING -i eth0 -g Z\n-A Z -j A\n-A Z -j RETURN\n\
             -A A -p udp --dport 137 -j CT --helper netbios-ns\n-A A -j NOTRACK",
            &[
                "PREROUTING*: new? accept | goto Z",
                "OUTPUT*: new? accept",
                "Z: jump A | return",
                "A: helper netbios-ns-17 accept | accept",
            ],
        ),
        // Other CT targets and verdicts end the replay; one object for two
        // rules of the same helper and protocol.
        (
            "-A PREROUTING -s 10.1.0.0/16 -j CT --zone 5\n-A PREROUTING -d 10.2.0.1 -j DROP\n\
             -A PREROUTING -p tcp --dport 21 -j CT --helper ftp\n\
             -A PREROUTING -p tcp --dport 2121 -j CT --helper ftp\n-A OUTPUT -j ACCEPT",
            &[
                "PREROUTING*: new? accept | accept | accept | helper ftp-6 accept | helper ftp-6 accept",
                "OUTPUT*: new? accept | accept",
            ],
        ),
    ];
    for (input, want) in cases {
        let t = raw(v4, input);
        let r = build(&t, v4).expect(input).expect(input);
        assert_eq!(chains(&r), *want, "{input}");
        // No rule counts: the raw chain's rule keeps the counter.
        assert!(!chains(&r).iter().any(|c| c.contains("counter")), "{input}");
    }
    let r = build(&raw(v4, "-A PREROUTING -p tcp -j CT --helper ftp"), v4)
        .unwrap()
        .unwrap();
    assert_eq!(r.objects, vec![helper_object("ftp", v4, 6)]);
    assert_eq!(r.objects[0].name, "ftp-6");
}

#[test]
fn nothing_without_a_reachable_helper() {
    let v4 = Family::Ipv4;
    for input in [
        "-A PREROUTING -j NOTRACK",
        // A chain nothing jumps to.
        ":X - [0:0]\n-A X -p tcp -j CT --helper ftp",
    ] {
        assert!(matches!(build(&raw(v4, input), v4), Ok(None)), "{input}");
    }
    assert!(has_helpers(&raw(
        v4,
        ":X - [0:0]\n-A X -p tcp -j CT --helper ftp"
    )));
    assert!(!has_helpers(&raw(v4, "-A PREROUTING -j CT --notrack")));
}

#[test]
fn refuses_what_would_not_replay_exactly() {
    let v4 = Family::Ipv4;
    // (raw table, words the refusal must contain)
    let cases: &[(&str, &[&str])] = &[
        (
            "-A PREROUTING -m limit --limit 1/s -j ACCEPT\n-A PREROUTING -p tcp -j CT --helper ftp",
            &["rule 1 of chain PREROUTING cannot", "-m limit"],
        ),
        (
            "-A PREROUTING -j MARK --set-mark 1\n-A PREROUTING -p tcp -j CT --helper ftp",
            &["-j MARK changes what later rules read"],
        ),
        ("-A PREROUTING -j CT --helper ftp", &["needs -p PROTO"]),
        (
            "-A PREROUTING ! -p tcp -j CT --helper ftp",
            &["needs -p PROTO"],
        ),
        (
            "-A PREROUTING -p tcp -m statistic --mode random --probability 0.5 -j CT --helper ftp",
            &["-m statistic"],
        ),
    ];
    for (input, words) in cases {
        let e = build(&raw(v4, input), v4).expect_err(input).1.to_string();
        for w in *words {
            assert!(e.contains(w), "{input}: {e}");
        }
    }
    // A stateful match in a rule the replay leaves out is no problem.
    let ok = "-A PREROUTING -m limit --limit 1/s -j LOG\n-A PREROUTING -p tcp -j CT --helper ftp";
    assert!(build(&raw(v4, ok), v4).unwrap().is_some());
}

#[test]
fn families_name_their_layer_3() {
    let r = build(
        &raw(
            Family::Ipv6,
            "-A OUTPUT -p udp --dport 69 -j CT --helper tftp",
        ),
        Family::Ipv6,
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        r.objects[0].data,
        ObjData::CtHelper {
            name: "tftp".into(),
            l3proto: Some(10),
            l4proto: 17
        }
    );
}
