//! kube-proxy's endpoint selection compiled into a `numgen random mod k`
//! verdict map picks each endpoint with the rules' probability 1/k, and
//! agrees with the logical rules packet by packet: counted over many
//! draws (seeds), for several k, with 10- and 11-decimal probabilities.

use classify::build::kernel_of;
use classify::gen::{self, Rng};
use classify::{logical, Choices, Hook};
use compile::runs::RunOpts;
use iptables::exec::restore::{restore, RestoreOpts};
use nft::Expr;
use ruleset::{Family, Ruleset};

const DRAWS: u64 = 20_000;

/// A filter table whose FORWARD jumps to SVC, which picks endpoint SEP-i
/// (i = 1..=k; each marks the packet i and accepts) as kube-proxy does.
fn kube(k: usize, decimals: usize) -> String {
    let mut t = String::from(
        "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n:SVC - [0:0]\n",
    );
    for i in 1..=k {
        t.push_str(&format!(":SEP-{i} - [0:0]\n"));
    }
    t.push_str("-A FORWARD -j SVC\n");
    for i in 1..=k {
        let left = k + 1 - i;
        if left > 1 {
            t.push_str(&format!(
                "-A SVC -m comment --comment ep{i} -m statistic --mode random --probability {:.decimals$} -j SEP-{i}\n",
                1.0 / left as f64
            ));
        } else {
            t.push_str(&format!("-A SVC -m comment --comment ep{i} -j SEP-{i}\n"));
        }
        t.push_str(&format!(
            "-A SEP-{i} -j MARK --set-xmark {i:#x}/0xffffffff\n-A SEP-{i} -j ACCEPT\n"
        ));
    }
    t.push_str("COMMIT\n");
    t
}

#[test]
fn numgen_maps_pick_endpoints_as_the_rules_do() {
    for (k, decimals) in [(2, 11), (3, 10), (3, 11), (5, 10), (8, 10), (13, 11)] {
        let text = kube(k, decimals);
        let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
        restore(
            &mut rs,
            &text,
            &RestoreOpts::new(Family::Ipv4, "iptables-restore"),
        )
        .unwrap_or_else(|e| panic!("{}", e.render("iptables-restore")));
        let compiled = kernel_of(
            &rs,
            Family::Ipv4,
            Some(RunOpts {
                numgen: true,
                ..RunOpts::default()
            }),
        )
        .expect("compiled");
        let svc = &compiled
            .tables
            .iter()
            .find_map(|t| t.chains.get("SVC"))
            .expect("SVC")
            .rules;
        assert_eq!(svc.len(), 1, "k={k}: one kernel rule");
        assert!(
            svc[0].exprs.iter().any(|e| matches!(
                e,
                Expr::Numgen { modulus, ty: 1, .. } if *modulus == k as u32
            )),
            "k={k}: {:?}",
            svc[0].exprs
        );
        let mut r = Rng::new(k as u64);
        let mut picks = vec![0u64; k + 1];
        for seed in 0..DRAWS {
            let p = gen::packet_of(&mut r, Family::Ipv4);
            let ch = Choices { seed, fixed: None };
            let want = logical::eval_hook(&rs, Hook::Forward, &p, ch).expect("logical");
            let got = compiled.eval_hook(Hook::Forward, &p, ch).expect("compiled");
            assert_eq!(want, got, "k={k} seed {seed}");
            // One member counted, the endpoint's mark and its two rules.
            assert_eq!(got.counted.len(), 4, "k={k} seed {seed}: {got:?}");
            picks[got.mark as usize] += 1;
        }
        // Each endpoint 1/k of the draws, within 6 standard deviations.
        let n = DRAWS as f64;
        let p = 1.0 / k as f64;
        let sd = (n * p * (1.0 - p)).sqrt();
        assert_eq!(picks[0], 0, "k={k}: every draw picks an endpoint");
        for (i, &c) in picks.iter().enumerate().skip(1) {
            assert!(
                (c as f64 - n * p).abs() < 6.0 * sd,
                "k={k}: endpoint {i} picked {c} times of {DRAWS}: {picks:?}"
            );
        }
        // Fixed outcomes (as `nfkeeper trace` asks): every statistic match
        // passes (the first endpoint) or fails (the last), in both forms.
        for (fixed, mark) in [(true, 1), (false, k as u32)] {
            let p = gen::packet_of(&mut r, Family::Ipv4);
            let ch = Choices {
                seed: 0,
                fixed: Some(fixed),
            };
            let want = logical::eval_hook(&rs, Hook::Forward, &p, ch).expect("logical");
            let got = compiled.eval_hook(Hook::Forward, &p, ch).expect("compiled");
            assert_eq!((want.mark, got.mark), (mark, mark), "k={k} fixed {fixed}");
        }
    }
}
