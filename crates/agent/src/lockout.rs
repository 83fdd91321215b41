//! Lockout protection: before a ruleset is applied, the classifier
//! (crates/classify, as `nfkeeper trace` uses it) evaluates the packets the
//! agent cannot live without under what the host would hold *after* the
//! apply (the release's tables, and the kernel's tables out of the
//! release's scope as they are) — its connections to
//! each etcd endpoint, and the flows an operator declared must stay open —
//! and the apply is refused, with the reason, unless each gets ACCEPT.
//!
//! For each etcd endpoint (TCP): the first packet out (OUTPUT then
//! POSTROUTING, state NEW, SYN) and a packet of the established connection
//! (state ESTABLISHED, ACK), and the replies in (PREROUTING then INPUT,
//! state ESTABLISHED). A declared flow is `nfkeeper trace` packet options;
//! at the input or output hook its reply is checked too (addresses, ports
//! and interfaces swapped, ESTABLISHED). Each packet is evaluated twice,
//! with stateful matches (limit, statistic) passing and failing: both must
//! accept. Anything the classifier cannot decide refuses — a rule it does
//! not model, a destination NAT on the way (the rest of the path would see
//! another packet) — since a wrong "yes" costs the host. Source NAT (nat
//! at INPUT and POSTROUTING) is skipped: it cannot drop.

use classify::describe::{self, Opts};
use classify::logical::{eval_table, hook_tables};
use classify::{Choices, CtState, Hook, Packet, Verdict, L4};
use iptables::rule::Iface;
use iptables::Rule;
use ruleset::Ruleset;
use ruleset::{Family, TableKind};
use std::net::{IpAddr, SocketAddr};

/// One packet to prove accepted, and what to call it in a refusal.
#[derive(Clone, Debug)]
pub struct Probe {
    pub label: String,
    /// The hooks it passes, in order.
    pub hooks: Vec<Hook>,
    pub packet: Packet,
}

/// How the host reaches an address: its source address and output
/// interface. Injected so tests need no routes.
pub trait Routes {
    fn route(&self, dst: IpAddr) -> Result<(IpAddr, String), String>;
}

/// Source port the probes use for the agent's side of a connection (any
/// ephemeral port; rules on etcd traffic match the server's port).
const EPHEMERAL: u16 = 49152;

fn addr16(a: IpAddr) -> (Family, [u8; 16]) {
    let mut out = [0u8; 16];
    match a {
        IpAddr::V4(v) => {
            out[..4].copy_from_slice(&v.octets());
            (Family::Ipv4, out)
        }
        IpAddr::V6(v) => (Family::Ipv6, v.octets()),
    }
}

fn iface(s: &str) -> Iface {
    Iface::new(s).unwrap_or_default()
}

/// The probes of one etcd endpoint reached from `src` over `oif`.
pub fn etcd_probes(ep: SocketAddr, src: IpAddr, oif: &str) -> Vec<Probe> {
    let (family, local) = addr16(src);
    let (_, remote) = addr16(ep.ip());
    let out = |ct, flags, what: &str| Probe {
        label: format!("etcd {ep} ({what})"),
        hooks: vec![Hook::Output, Hook::Postrouting],
        packet: Packet {
            family,
            src: local,
            dst: remote,
            l4: L4::Tcp {
                sport: EPHEMERAL,
                dport: ep.port(),
                flags,
            },
            frag_off: 0,
            iif: Iface::default(),
            oif: iface(oif),
            mark: 0,
            ct,
            len: 0,
            ttl: 64,
        },
    };
    let mut v = vec![
        out(CtState::New, 0x02, "new connection out"),
        out(CtState::Established, 0x10, "established, out"),
    ];
    let mut reply = out(CtState::Established, 0x12, "replies in").packet;
    std::mem::swap(&mut reply.src, &mut reply.dst);
    reply.l4 = L4::Tcp {
        sport: ep.port(),
        dport: EPHEMERAL,
        flags: 0x12,
    };
    reply.iif = reply.oif;
    reply.oif = Iface::default();
    v.push(Probe {
        label: format!("etcd {ep} (replies in)"),
        hooks: vec![Hook::Prerouting, Hook::Input],
        packet: reply,
    });
    for p in &mut v {
        p.packet.len = p.packet.min_len();
    }
    v
}

fn path_of(h: Hook) -> Vec<Hook> {
    match h {
        Hook::Input => vec![Hook::Prerouting, Hook::Input],
        Hook::Output => vec![Hook::Output, Hook::Postrouting],
        Hook::Forward => vec![Hook::Prerouting, Hook::Forward, Hook::Postrouting],
        h => vec![h],
    }
}

/// The probes of a declared flow (`nfkeeper trace` packet options).
pub fn flow_probes(spec: &str) -> Result<Vec<Probe>, String> {
    let args: Vec<String> = spec.split_whitespace().map(str::to_string).collect();
    let o: Opts = describe::parse(&args).map_err(|e| format!("keep-open {spec:?}: {e}"))?;
    if o.rules.is_some() {
        return Err(format!("keep-open {spec:?}: --rules has no place here"));
    }
    let p = describe::packet(&o).map_err(|e| format!("keep-open {spec:?}: {e}"))?;
    let hook = describe::hook_of(&o);
    let mut v = vec![Probe {
        label: format!("keep-open {spec:?}"),
        hooks: path_of(hook),
        packet: p.clone(),
    }];
    let back = match hook {
        Hook::Input => Some(Hook::Output),
        Hook::Output => Some(Hook::Input),
        _ => None,
    };
    if let Some(back) = back {
        let mut r = p;
        std::mem::swap(&mut r.src, &mut r.dst);
        std::mem::swap(&mut r.iif, &mut r.oif);
        r.ct = CtState::Established;
        r.l4 = match r.l4 {
            L4::Tcp { sport, dport, .. } => L4::Tcp {
                sport: dport,
                dport: sport,
                flags: 0x10,
            },
            L4::Udp { sport, dport } => L4::Udp {
                sport: dport,
                dport: sport,
            },
            L4::Icmp { typ: 8, code } => L4::Icmp { typ: 0, code },
            L4::Icmp { typ: 128, code } => L4::Icmp { typ: 129, code },
            other => other,
        };
        r.len = r.min_len();
        v.push(Probe {
            label: format!("keep-open {spec:?} (reply)"),
            hooks: path_of(back),
            packet: r,
        });
    }
    Ok(v)
}

/// Why `p` is not accepted by the desired ruleset, or `None` if it is
/// (for both outcomes of stateful matches).
fn blocked(rs: &Ruleset<Rule>, p: &Probe) -> Option<String> {
    for fixed in [true, false] {
        let ch = Choices {
            seed: 0,
            fixed: Some(fixed),
        };
        let mut pkt = p.packet.clone();
        for &hook in &p.hooks {
            for &kind in hook_tables(hook) {
                // nat sees only a connection's first packet; at INPUT and
                // POSTROUTING it rewrites the source, which cannot drop
                // (the kernel keeps DROP out of the nat table).
                if kind == TableKind::Nat
                    && (pkt.ct != CtState::New || matches!(hook, Hook::Input | Hook::Postrouting))
                {
                    continue;
                }
                let t = rs.table(pkt.family, kind);
                let o = match eval_table(t, hook.chain(), &pkt, ch) {
                    Ok(o) => o,
                    Err(e) => {
                        return Some(format!(
                            "{}: cannot be evaluated in {} {}: {e}",
                            p.label,
                            kind.name(),
                            hook.chain()
                        ))
                    }
                };
                pkt.mark = o.mark;
                match o.verdict {
                    Verdict::Accept => {}
                    v => {
                        return Some(format!(
                            "{}: {} in {} {}",
                            p.label,
                            match v {
                                Verdict::Drop => "DROP".to_string(),
                                Verdict::Reject => "REJECT".to_string(),
                                Verdict::Other(t) => format!("{t} (not provably delivered)"),
                                Verdict::Accept => unreachable!(),
                            },
                            kind.name(),
                            hook.chain()
                        ));
                    }
                }
            }
        }
    }
    None
}

/// Why the ruleset `rs` — what the host would hold after the apply, both
/// families — would cut the host off, over all probes; `Ok` if every probe
/// is accepted.
pub fn check(rs: &Ruleset<Rule>, probes: &[Probe]) -> Result<(), String> {
    let reasons: Vec<String> = probes.iter().filter_map(|p| blocked(rs, p)).collect();
    match reasons.is_empty() {
        true => Ok(()),
        false => Err(format!("lockout: {}", reasons.join("; "))),
    }
}

/// Every probe: the etcd endpoints as `routes` reaches them, and the
/// declared flows.
pub fn probes(
    endpoints: &[SocketAddr],
    keep_open: &[String],
    routes: &dyn Routes,
) -> Result<Vec<Probe>, String> {
    let mut v = Vec::new();
    for &ep in endpoints {
        let (src, oif) = routes.route(ep.ip())?;
        v.extend(etcd_probes(ep, src, &oif));
    }
    for spec in keep_open {
        v.extend(flow_probes(spec)?);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desired::{Desired, Payload};

    struct Fixed;
    impl Routes for Fixed {
        fn route(&self, dst: IpAddr) -> Result<(IpAddr, String), String> {
            Ok(match dst {
                IpAddr::V4(_) => ("198.18.0.10".parse().unwrap(), "eth0".into()),
                IpAddr::V6(_) => ("fd00::10".parse().unwrap(), "eth0".into()),
            })
        }
    }

    fn desired(v4: &str) -> Desired {
        let p = Payload {
            v4: format!("*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n{v4}COMMIT\n"),
            ..Payload::default()
        };
        Desired::build(1, &p, &Payload::default(), 0).unwrap()
    }

    #[test]
    fn etcd_and_declared_flows() {
        let eps: Vec<SocketAddr> = vec!["198.18.0.1:2379".parse().unwrap()];
        let ssh =
            vec!["--hook input -s 198.18.9.9 -d 198.18.0.10 -p tcp --dport 22 -i eth0".to_string()];
        let probes = probes(&eps, &ssh, &Fixed).unwrap();
        assert_eq!(probes.len(), 5);
        // (rules, Ok or the text the refusal must hold)
        let est = "-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n";
        let cases: Vec<(String, Result<(), &str>)> = vec![
            (
                format!("{est}-A INPUT -s 198.18.9.0/24 -p tcp --dport 22 -j ACCEPT\n"),
                Ok(()),
            ),
            (est.to_string(), Err("keep-open \"--hook input")),
            (
                "-A INPUT -s 198.18.9.0/24 -p tcp --dport 22 -j ACCEPT\n".to_string(),
                Err("etcd 198.18.0.1:2379 (replies in): DROP in filter INPUT"),
            ),
            (
                format!("{est}-A INPUT -p tcp --dport 22 -j ACCEPT\n-I OUTPUT -d 198.18.0.1 -p tcp --dport 2379 -j REJECT\n"),
                Err("etcd 198.18.0.1:2379 (new connection out): REJECT in filter OUTPUT"),
            ),
            (
                format!("{est}-A INPUT -p tcp --dport 22 -j ACCEPT\n-A OUTPUT -o eth0 -m limit --limit 1/s -j ACCEPT\n-A OUTPUT -o eth0 -j DROP\n"),
                Err("DROP in filter OUTPUT"),
            ),
            (
                format!("{est}-A INPUT -p tcp --dport 22 -j ACCEPT\n-A OUTPUT -o eth1 -j DROP\n"),
                Ok(()),
            ),
        ];
        for (rules, want) in cases {
            let got = check(&desired(&rules).v4.model, &probes);
            match want {
                Ok(()) => assert_eq!(got, Ok(()), "{rules}"),
                Err(w) => {
                    let e = got.expect_err(&rules);
                    assert!(e.contains(w), "{rules}: {e} lacks {w}");
                }
            }
        }
    }

    #[test]
    fn nat_on_the_way() {
        let eps: Vec<SocketAddr> = vec!["198.18.0.1:2379".parse().unwrap()];
        let probes = probes(&eps, &[], &Fixed).unwrap();
        let mk = |nat: &str| {
            let p = Payload {
                v4: format!("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n{nat}COMMIT\n"),
                ..Payload::default()
            };
            Desired::build(1, &p, &Payload::default(), 0).unwrap()
        };
        assert_eq!(
            check(
                &mk("-A POSTROUTING -o eth0 -j MASQUERADE\n").v4.model,
                &probes
            ),
            Ok(())
        );
        let e = check(
            &mk("-A OUTPUT -p tcp --dport 2379 -j DNAT --to-destination 198.18.0.2\n")
                .v4
                .model,
            &probes,
        )
        .unwrap_err();
        assert!(
            e.contains("new connection out)") && e.contains("nat OUTPUT"),
            "{e}"
        );
    }

    #[test]
    fn bad_flow_specs() {
        for (spec, want) in [
            ("--hook sideways", "unknown hook"),
            ("--rules /etc/x", "--rules has no place"),
            ("--dport", "requires an argument"),
        ] {
            let e = flow_probes(spec).unwrap_err();
            assert!(e.contains(want), "{spec}: {e}");
        }
        assert_eq!(flow_probes("--hook forward -i a -o b").unwrap().len(), 1);
    }
}
