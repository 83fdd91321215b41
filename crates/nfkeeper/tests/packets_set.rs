//! Real packets, ipsets: `-m set` rules written with nfkeeper's iptables
//! look up nfkeeper's own ipsets (native nftables sets, a copy in the
//! rule's table), and every later `ipset` command changes the verdict
//! without touching the rule. Also ipset's in-use rule for `destroy`,
//! iptables-save's text of set rules, and fail2ban's
//! iptables-ipset-proto6 action as one sequence of commands. Checked with
//! TCP connects over a veth pair. Skips without root, `ip` or python3.

mod common;

use common::{lan, Ns, CLI4, SRV4};

/// Run `line` with nfkeeper; (exit code, stdout, stderr).
fn run(ns: &Ns, line: &str) -> (i32, String, String) {
    let o = ns.nfk_output(line);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Each (command, exit code, stdout, stderr) in order, in `ns`.
fn expect_all(ns: &Ns, steps: &[(&str, i32, &str, &str)]) {
    for &(line, code, out, err) in steps {
        let got = run(ns, line);
        assert_eq!(
            got,
            (code, out.to_string(), err.to_string()),
            "`{line}`\n{}",
            ns.ruleset()
        );
    }
}

/// Whether the kernel table of our filter rules holds a set `name`.
fn has_copy(ns: &Ns, name: &str) -> bool {
    let o = ns.exec(&["nft", "list", "sets", "ip"]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .any(|l| l.trim() == format!("set {name} {{"))
}

/// hash:ip: the client's address in the set drops its connects; ipset
/// add/del flip the verdict with the rule untouched; `!` inverts.
#[test]
fn hash_ip_verdict_follows_ipset_commands() {
    let Some(net) = lan("hip") else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t81", "t82"]);
    server.nfk_all(
        "
        ipset create x hash:ip
        iptables -A INPUT -p tcp --dport 81 -m set --match-set x src -j DROP
        iptables -A INPUT -p tcp --dport 82 -m set ! --match-set x src -j DROP
        ",
    );
    let steps: [(&str, &str, &str); 5] = [
        ("", "ok", "timeout"),
        ("ipset add x 10.89.0.3", "ok", "timeout"),
        (&format!("ipset add x {CLI4}"), "timeout", "ok"),
        (&format!("ipset del x {CLI4}"), "ok", "timeout"),
        (&format!("ipset add x {CLI4}"), "timeout", "ok"),
    ];
    for (cmd, p81, p82) in steps {
        if !cmd.is_empty() {
            server.nfk(cmd);
        }
        client.expect_tcp(
            server,
            SRV4,
            &[
                (81, p81, &format!("after `{cmd}`: source in x drops")),
                (82, p82, &format!("after `{cmd}`: source not in x drops")),
            ],
        );
    }
    server.nfk("ipset flush x");
    client.expect_tcp(server, SRV4, &[(81, "ok", "after flush")]);
}

/// hash:ip,port with `-p tcp`: the key is the source address, the
/// protocol and the destination port; a UDP member of the same port does
/// not match TCP. hash:net with a network of the client.
#[test]
fn hash_ip_port_and_net() {
    let Some(net) = lan("hipp") else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t83", "t84", "t85", "t86"]);
    server.nfk_all(&format!(
        "
        ipset create ipp hash:ip,port
        ipset add ipp {CLI4},tcp:83
        ipset add ipp {CLI4},udp:84
        ipset add ipp 10.89.0.9,tcp:85
        iptables -A INPUT -p tcp -m set --match-set ipp src,dst -j DROP
        ipset create nets hash:net
        ipset add nets 10.89.0.0/28
        iptables -A INPUT -p tcp --dport 86 -m set --match-set nets src -j DROP
        "
    ));
    client.expect_tcp(
        server,
        SRV4,
        &[
            (83, "timeout", "client,tcp:83 is in ipp"),
            (84, "ok", "only udp:84 is in ipp"),
            (85, "ok", "tcp:85 is in ipp for another address"),
            (86, "timeout", "the client is in 10.89.0.0/28"),
        ],
    );
    server.nfk("ipset del nets 10.89.0.0/28");
    server.nfk("ipset add nets 10.89.0.16/28");
    client.expect_tcp(
        server,
        SRV4,
        &[(86, "ok", "10.89.0.16/28 lacks the client")],
    );
}

/// ipset's rule: a set a rule uses cannot be destroyed (its exact
/// message and exit code); once the last rule using it is deleted, the
/// rule table's copy goes and destroy succeeds. A name that is no ipset
/// is iptables-nft's error. iptables-save prints the rules as iptables.
#[test]
fn in_use_sets_and_saved_rules() {
    let Some(ns) = common::lan("inuse").map(|l| l.server) else {
        return;
    };
    expect_all(
        &ns,
        &[
            ("ipset create s hash:ip", 0, "", ""),
            ("ipset create p hash:ip,port", 0, "", ""),
            (
                "iptables -A INPUT -p tcp --dport 22 -m set --match-set s src -j DROP",
                0,
                "",
                "",
            ),
            (
                "iptables -A INPUT -m set ! --match-set s dst --return-nomatch -j ACCEPT",
                0,
                "",
                "",
            ),
            (
                "iptables -I INPUT -p udp -m set --match-set p src,src -j REJECT",
                0,
                "",
                "",
            ),
            (
                "iptables -S INPUT",
                0,
                "-P INPUT ACCEPT\n\
                 -A INPUT -p udp -m set --match-set p src,src -j REJECT --reject-with icmp-port-unreachable\n\
                 -A INPUT -p tcp -m tcp --dport 22 -m set --match-set s src -j DROP\n\
                 -A INPUT -m set ! --match-set s dst --return-nomatch -j ACCEPT\n",
                "",
            ),
            (
                "ipset destroy s",
                1,
                "",
                "ipset v7.21: Set cannot be destroyed: it is in use by a kernel component\n",
            ),
            (
                "iptables -A INPUT -m set --match-set nope src -j DROP",
                2,
                "",
                "iptables v1.8.11 (nfkeeper): Set nope doesn't exist.\n\n\
                 Try `iptables -h' or 'iptables --help' for more information.\n",
            ),
            ("iptables -D INPUT 2", 0, "", ""),
        ],
    );
    assert!(
        has_copy(&ns, "s"),
        "one rule still uses s\n{}",
        ns.ruleset()
    );
    expect_all(
        &ns,
        &[
            (
                "ipset destroy s",
                1,
                "",
                "ipset v7.21: Set cannot be destroyed: it is in use by a kernel component\n",
            ),
            (
                "iptables -D INPUT -m set ! --match-set s dst --return-nomatch -j ACCEPT",
                0,
                "",
                "",
            ),
        ],
    );
    assert!(!has_copy(&ns, "s"), "no rule uses s\n{}", ns.ruleset());
    assert!(has_copy(&ns, "p"), "a rule uses p\n{}", ns.ruleset());
    expect_all(
        &ns,
        &[
            ("ipset destroy s", 0, "", ""),
            ("iptables -F INPUT", 0, "", ""),
            ("ipset destroy p", 0, "", ""),
            ("ipset list -n", 0, "", ""),
        ],
    );
    assert!(!has_copy(&ns, "p"), "{}", ns.ruleset());
}

/// fail2ban's iptables-ipset-proto6 action (actionstart, actionban,
/// actionunban, actionstop) with `ipset` and `iptables` both nfkeeper:
/// every command's output and exit code, and the ban's effect on the
/// client's connects in between.
#[test]
fn fail2ban_iptables_ipset_action() {
    let Some(net) = lan("f2b") else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t22"]);
    let rule = "INPUT -p tcp -m multiport --dports ssh -m set --match-set f2b-sshd src -j REJECT --reject-with icmp-port-unreachable";
    expect_all(
        server,
        &[
            (
                "ipset -exist create f2b-sshd hash:ip timeout 0 maxelem 65536",
                0,
                "",
                "",
            ),
            (&format!("iptables -w -I {rule}"), 0, "", ""),
        ],
    );
    client.expect_tcp(server, SRV4, &[(22, "ok", "nobody banned")]);
    expect_all(
        server,
        &[
            (
                &format!("ipset -exist add f2b-sshd {CLI4} timeout 600"),
                0,
                "",
                "",
            ),
            (
                &format!("ipset test f2b-sshd {CLI4}"),
                0,
                "",
                &format!("Warning: {CLI4} is in set f2b-sshd.\n"),
            ),
        ],
    );
    let banned = client.tcp(SRV4, 22);
    assert_ne!(banned, "ok", "the client is banned\n{}", server.ruleset());
    assert_ne!(banned, "timeout", "REJECT answers\n{}", server.ruleset());
    expect_all(
        server,
        &[
            (&format!("ipset -exist del f2b-sshd {CLI4}"), 0, "", ""),
            (
                &format!("ipset test f2b-sshd {CLI4}"),
                1,
                "",
                &format!("{CLI4} is NOT in set f2b-sshd.\n"),
            ),
        ],
    );
    client.expect_tcp(server, SRV4, &[(22, "ok", "unbanned")]);
    expect_all(
        server,
        &[
            (
                &format!("ipset -exist add f2b-sshd {CLI4} timeout 600"),
                0,
                "",
                "",
            ),
            (&format!("iptables -w -D {rule}"), 0, "", ""),
            ("ipset flush f2b-sshd", 0, "", ""),
            ("ipset destroy f2b-sshd", 0, "", ""),
            ("iptables -S INPUT", 0, "-P INPUT ACCEPT\n", ""),
        ],
    );
    client.expect_tcp(server, SRV4, &[(22, "ok", "the action stopped")]);
}

/// `-j SET`: a connect to port 87 adds the client's address to `seen`
/// from the packet path (the rule table's copy, see docs/ipset.md); `ipset
/// test` and `ipset list` then show it, a `-m set` rule of the same table
/// drops the client's connects to port 88, and a connect to port 89
/// (`--del-set`) takes it out again.
#[test]
fn set_target_adds_and_deletes_from_the_packet_path() {
    let Some(net) = lan("settgt") else { return };
    let (server, client) = (&net.server, &net.client);
    let _srv = server.serve(&["t87", "t88", "t89"]);
    server.nfk_all(
        "
        ipset create seen hash:ip timeout 600
        iptables -A INPUT -p tcp --dport 87 -j SET --add-set seen src --exist --timeout 300
        iptables -A INPUT -p tcp --dport 88 -m set --match-set seen src -j DROP
        iptables -A INPUT -p tcp --dport 89 -j SET --del-set seen src
        ",
    );
    let not_in = format!("{CLI4} is NOT in set seen.\n");
    let is_in = format!("Warning: {CLI4} is in set seen.\n");
    let test = format!("ipset test seen {CLI4}");
    expect_all(server, &[(&test, 1, "", &not_in)]);
    client.expect_tcp(
        server,
        SRV4,
        &[(88, "ok", "not seen yet"), (87, "ok", "SET goes on")],
    );
    expect_all(server, &[(&test, 0, "", &is_in)]);
    let (code, list, _) = run(server, "ipset list seen");
    assert_eq!(code, 0);
    let members: Vec<&str> = list
        .lines()
        .skip_while(|l| *l != "Members:")
        .skip(1)
        .collect();
    assert_eq!(members.len(), 1, "{list}");
    let timeout: u32 = members[0]
        .strip_prefix(&format!("{CLI4} timeout "))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{list}"));
    assert!((290..=300).contains(&timeout), "--timeout 300: {list}");
    client.expect_tcp(server, SRV4, &[(88, "timeout", "seen")]);
    client.expect_tcp(server, SRV4, &[(89, "ok", "--del-set")]);
    expect_all(server, &[(&test, 1, "", &not_in)]);
    client.expect_tcp(server, SRV4, &[(88, "ok", "deleted")]);
    // ipset commands reach the member the packet path added.
    client.expect_tcp(server, SRV4, &[(87, "ok", "seen again")]);
    expect_all(
        server,
        &[
            (&format!("ipset del seen {CLI4}"), 0, "", ""),
            (&test, 1, "", &not_in),
        ],
    );
    client.expect_tcp(server, SRV4, &[(88, "ok", "deleted by ipset")]);
}

/// A set of the kernel's own ipset module (made by the real `ipset`) is
/// reached through nft_compat: the real tool's add/del change the verdict
/// of nfkeeper's rule, `-j SET` adds to it, and the real tool's destroy is
/// refused while the rule is there. Skips without the real `ipset`.
#[test]
fn kernel_ipsets_through_the_xtables_match() {
    let Some(net) = lan("kset") else { return };
    let (server, client) = (&net.server, &net.client);
    let real = |args: &[&str]| {
        let mut argv = vec!["ipset"];
        argv.extend_from_slice(args);
        let o = server.exec(&argv);
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    if real(&["version"]).0 != 0 {
        eprintln!("SKIP: the real ipset tool is not installed");
        return;
    }
    let _srv = server.serve(&["t90", "t91"]);
    assert_eq!(real(&["create", "k", "hash:ip"]).0, 0);
    server.nfk_all(
        "
        iptables -A INPUT -p tcp --dport 90 -m set --match-set k src -j DROP
        iptables -A INPUT -p tcp --dport 91 -j SET --add-set k src
        ",
    );
    client.expect_tcp(server, SRV4, &[(90, "ok", "k is empty")]);
    assert_eq!(real(&["add", "k", CLI4]).0, 0);
    client.expect_tcp(
        server,
        SRV4,
        &[(90, "timeout", "real ipset added the client")],
    );
    assert_eq!(real(&["del", "k", CLI4]).0, 0);
    client.expect_tcp(server, SRV4, &[(90, "ok", "real ipset deleted it")]);
    client.expect_tcp(server, SRV4, &[(91, "ok", "-j SET goes on")]);
    assert_eq!(real(&["test", "k", CLI4]).0, 0, "-j SET added the client");
    let (code, err) = real(&["destroy", "k"]);
    assert_eq!(code, 1, "in use: {err}");
    assert!(
        err.ends_with("Set cannot be destroyed: it is in use by a kernel component\n"),
        "{err}"
    );
    expect_all(
        server,
        &[
            (
                "iptables -S INPUT",
                0,
                "-P INPUT ACCEPT\n\
                 -A INPUT -p tcp -m tcp --dport 90 -m set --match-set k src -j DROP\n\
                 -A INPUT -p tcp -m tcp --dport 91 -j SET --add-set k src\n",
                "",
            ),
            ("iptables -F INPUT", 0, "", ""),
        ],
    );
    // The kernel drops the xtables match's hold on the set when it frees
    // the deleted rule, after an RCU grace period. A write that names a
    // kernel ipset waits for that at exit (as iptables-nft does); a flush
    // does not read the rules it removes, so it hands its socket to the
    // closer (nft::linger) and destroy may need a moment.
    let mut last = real(&["destroy", "k"]);
    for _ in 0..20 {
        if last.0 == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        last = real(&["destroy", "k"]);
    }
    assert_eq!(last.0, 0, "destroy once no rule uses k: {}", last.1);
}

/// `nfkeeper verify` knows rules that use ipsets: lookups and `-j SET`
/// updates of copies (IPv4 and IPv6, concatenated keys) compile to what
/// the kernel holds, and the copies are nfkeeper's.
#[test]
fn verify_is_clean_with_set_rules() {
    if !common::prerequisites() {
        return;
    }
    let ns = Ns::new("setvfy");
    ns.nfk_all(
        "
        ipset create a hash:ip
        ipset create ap hash:ip,port timeout 60
        ipset create a6 hash:ip,port,ip family inet6
        iptables -A INPUT -p tcp -m set ! --match-set ap src,dst -j SET --add-set a src --del-set ap src,src
        iptables -A FORWARD -p udp -m multiport --dports 53,123 -m set --match-set a dst -j DROP
        ip6tables -A INPUT -p tcp -m set --match-set a6 src,dst,dst -j SET --add-set a6 dst,dst,src --exist
        ",
    );
    let (code, out, err) = run(&ns, "verify");
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "ip filter: 2 kernel rules, 0 runs (0 elements): no differences\n\
             ip6 filter: 1 kernel rules, 0 runs (0 elements): no differences\n",
            ""
        ),
        "{}",
        ns.ruleset()
    );
}
