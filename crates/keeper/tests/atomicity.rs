//! Nothing half-applied: a restore that fails anywhere — in the parser at
//! line 50 000, or in the kernel at commit — leaves the kernel exactly as it
//! was, and so does a failing single command. Private netns; skips without
//! root.

use iptables::exec::RestoreOpts;
use iptables::parse::{parse, ParseOpts};
use keeper::Session;
use ruleset::Family;
use testkit::in_netns;

fn opts(noflush: bool) -> RestoreOpts<'static> {
    RestoreOpts {
        family: Family::Ipv4,
        noflush,
        counters: false,
        test: false,
        table: None,
        prog: "iptables-restore",
    }
}

fn save(s: &mut Session) -> String {
    s.save_text(true, None).expect("save")
}

fn command(s: &mut Session, words: &[&str]) -> Result<String, iptables::Error> {
    let o = ParseOpts::command(Family::Ipv4, "iptables");
    s.iptables(parse(words, o)?).map_err(|e| e.to_iptables())
}

#[test]
fn failures_change_nothing_in_the_kernel() {
    in_netns(|| {
        let mut s = Session::open(Family::Ipv4, keeper::Settings::default()).expect("netlink");
        let base = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n:a - [0:0]\n:b - [0:0]\n\
                    -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n-A INPUT -j a\n-A a -j b\nCOMMIT\n";
        s.restore(base, &opts(false)).expect("base restore");
        let before = save(&mut s);
        assert!(before.contains("-A a -j b"), "{before}");

        // A 50 000-line restore whose last rule line is bad: nothing applied,
        // the error names the line.
        let mut big = String::from(
            "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n",
        );
        let rules = 50_000 - 5;
        for i in 0..rules {
            big.push_str(&format!(
                "-A FORWARD -s 10.{}.{}.{}/32 -j ACCEPT\n",
                i / 65536 % 256,
                i / 256 % 256,
                i % 256
            ));
        }
        big.push_str("-A FORWARD --bogus\nCOMMIT\n");
        let bad_line = big.lines().position(|l| l.contains("--bogus")).unwrap() + 1;
        assert_eq!(bad_line, 50_000);
        let e = s
            .restore(&big, &opts(false))
            .expect_err("bad line must fail");
        assert_eq!(e.line, 50_000);
        assert_eq!(save(&mut s), before, "parser failure changed the kernel");

        // A restore that would close a loop reachable from a base chain
        // (INPUT -> a -> b -> a): refused, the whole transaction.
        let looped = "*filter\n-A b -j a\nCOMMIT\n";
        let e = s.restore(looped, &opts(true)).expect_err("loop must fail");
        assert!(e.err.msg.contains("Loop"), "{}", e.err.msg);
        assert_eq!(save(&mut s), before, "kernel failure changed the kernel");

        // Failing single commands change nothing either.
        for words in [
            &["-A", "b", "-j", "a"][..],
            &["-D", "INPUT", "-p", "tcp", "--dport", "23", "-j", "ACCEPT"][..],
            &["-X", "b"][..],
            &["-N", "a"][..],
            &["-I", "INPUT", "5", "-j", "DROP"][..],
        ] {
            assert!(command(&mut s, words).is_err(), "{words:?} should fail");
            assert_eq!(save(&mut s), before, "{words:?} changed the kernel");
        }
    });
}
