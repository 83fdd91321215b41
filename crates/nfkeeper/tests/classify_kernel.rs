//! The kernel agrees with the reference classifier: generated rulesets are
//! loaded (runs compiled into sets and verdict maps, on exact, tuple and
//! range keys) into a server
//! namespace's INPUT path, at least 10 000 generated packets are sent to it
//! over veth (crafted IPv4 headers through a raw socket), and every rule's
//! packet counter in the kernel must equal what the classifier says each
//! logical rule counted.
//!
//! What keeps the two comparable: connection tracking is off for the
//! traffic (raw PREROUTING `-j CT --notrack`, so every packet is UNTRACKED
//! for both); rules with stateful matches (limit, statistic) are left out;
//! no fragments (the kernel would hold them for reassembly); sources are
//! never the server's own addresses (martians).

mod common;

use classify::gen::{self, Rng};
use classify::{logical, Choices, CtState, Hook, L4};
use common::{prerequisites, veth, Ns};
use iptables::exec::{restore, RestoreOpts};
use iptables::rule::Iface;
use ruleset::{Family, Ruleset, TableKind};
use std::collections::HashMap;
use std::os::fd::AsRawFd;

const RULESETS: u64 = 5;
const PACKETS: u64 = 2_200;

fn ropts() -> RestoreOpts<'static> {
    RestoreOpts::new(Family::Ipv4, "iptables-restore")
}

/// Send each packet (IPv4 header and all) from namespace `ns` through a
/// raw socket.
fn send_all(ns: &str, packets: Vec<Vec<u8>>) {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let f = std::fs::File::open(&path).expect("netns file");
        // SAFETY: setns on a valid namespace fd moves only this thread.
        assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
        // SAFETY: plain socket(2); checked below.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW) };
        assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
        for p in packets {
            let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sa.sin_family = libc::AF_INET as u16;
            sa.sin_addr.s_addr = u32::from_ne_bytes([p[16], p[17], p[18], p[19]]);
            // SAFETY: buffer and address are valid for the call.
            let n = unsafe {
                libc::sendto(
                    fd,
                    p.as_ptr().cast(),
                    p.len(),
                    0,
                    (&sa as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as u32,
                )
            };
            assert_eq!(
                n,
                p.len() as isize,
                "sendto: {}",
                std::io::Error::last_os_error()
            );
        }
        // SAFETY: fd is ours.
        unsafe { libc::close(fd) };
    })
    .join()
    .expect("sender thread");
}

/// Packet counters of every rule of the filter table in the kernel, by
/// (chain, 1-based position), read back through nfkeeper.
fn kernel_counts(server: &Ns) -> HashMap<(String, usize), u64> {
    let o = server.nfk_output("iptables-save -c -t filter");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut pos: HashMap<String, usize> = HashMap::new();
    let mut out = HashMap::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let Some(rest) = l.strip_prefix('[') else {
            continue;
        };
        let (c, rule) = rest.split_once("] -A ").expect("counter line");
        let packets: u64 = c.split(':').next().unwrap().parse().unwrap();
        let chain = rule.split(' ').next().unwrap().to_string();
        let n = pos.entry(chain.clone()).or_default();
        *n += 1;
        out.insert((chain, *n), packets);
    }
    out
}

#[test]
fn kernel_counters_match_the_classifier() {
    if !prerequisites() {
        return;
    }
    let mut sent = 0u64;
    let mut counted = 0u64;
    let (mut nft_seen, mut tuple_sets, mut interval_sets) = (false, 0usize, 0usize);
    for seed in 0..RULESETS {
        let client = Ns::new(&format!("ck{seed}c"));
        let server = Ns::new(&format!("ck{seed}s"));
        client.ip("link set lo up");
        server.ip("link set lo up");
        veth(&client, "vc", &server, "veth0");
        client.ip("addr add 172.31.0.1/30 dev vc");
        server.ip("addr add 172.31.0.2/30 dev veth0");
        // Destinations: the server's local ranges; sources: 10.0.0.0/24.
        for net in ["10.0.1.0/24", "192.168.7.0/24"] {
            server.ip(&format!("route add local {net} dev lo"));
            client.ip(&format!("route add {net} via 172.31.0.2"));
        }
        server.sysctl("net.ipv4.conf.all.rp_filter=0");
        server.sysctl("net.ipv4.conf.veth0.rp_filter=0");
        server.sysctl("net.ipv4.icmp_ratelimit=0");

        let mut r = Rng::new(seed + 7000);
        let text: String = gen::ruleset(&mut r, 60)
            .lines()
            .filter(|l| !l.contains("-m limit") && !l.contains("-m statistic"))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut model: Ruleset<iptables::Rule> = Ruleset::new();
        restore(&mut model, &text, &ropts()).expect("model");
        let path = std::env::temp_dir().join(format!("nfk-ck-{}-{seed}.rules", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let o = server.exec(&[
            "sh",
            "-c",
            &format!(
                "{} --compile-runs=2 iptables-restore < {}",
                env!("CARGO_BIN_EXE_nfkeeper"),
                path.display()
            ),
        ]);
        let _ = std::fs::remove_file(&path);
        assert!(
            o.status.success(),
            "restore: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        server.nfk("iptables -t raw -A PREROUTING -j CT --notrack");
        // The oracle, where installed: runs on tuple keys are in the kernel
        // as concatenated sets, runs on ranges as interval sets.
        let sets = server.exec(&["nft", "list", "sets"]);
        if sets.status.success() {
            nft_seen = true;
            let text = String::from_utf8_lossy(&sets.stdout);
            tuple_sets += text
                .lines()
                .filter(|l| l.trim_start().starts_with("type ") && l.contains(" . "))
                .count();
            interval_sets += text
                .lines()
                .filter(|l| l.trim() == "flags interval")
                .count();
        }

        let mut want: HashMap<(String, usize), u64> = HashMap::new();
        let mut wire = Vec::new();
        let t = model.table(Family::Ipv4, TableKind::Filter);
        let mut i = 0;
        while wire.len() < PACKETS as usize {
            i += 1;
            let mut p = gen::packet(&mut r);
            // What this topology can deliver to INPUT unchanged.
            p.src[..3].copy_from_slice(&[10, 0, 0]);
            if p.dst[..3] == [10, 0, 0] {
                p.dst[2] = 1;
            }
            p.frag_off = 0;
            p.ttl = p.ttl.max(1);
            p.iif = Iface::new("veth0").unwrap();
            p.oif = Iface::default();
            p.mark = 0;
            p.ct = CtState::Untracked;
            if let L4::Other(_) = p.l4 {
                p.len = p.min_len();
            }
            // A packet generated as a later fragment had room for no
            // transport header: it has one now (a truncated header would
            // be dropped by iptables' tcp match but only not match in
            // nftables, which this check does not compare).
            p.len = p.len.max(p.min_len());
            let ch = Choices {
                seed: i,
                fixed: None,
            };
            let out = logical::eval_hook(&model, Hook::Input, &p, ch).expect("classify");
            for id in out.counted {
                let (cid, num, _) = t.rule_by_id(id).expect("rule");
                let chain = t.chain_by_id(cid).expect("chain").name.to_string();
                *want.entry((chain, num)).or_default() += 1;
                counted += 1;
            }
            let mut bytes = p.network_header();
            bytes.extend(p.transport_header().unwrap_or_default());
            bytes.resize(p.len as usize, 0);
            wire.push(bytes);
        }
        sent += wire.len() as u64;
        send_all(&client.name, wire);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let got = kernel_counts(&server);
        let mut keys: Vec<_> = got.keys().chain(want.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        let mut diffs = Vec::new();
        for k in keys {
            let (g, w) = (
                got.get(&k).copied().unwrap_or(0),
                want.get(&k).copied().unwrap_or(0),
            );
            if g != w {
                diffs.push(format!("{} #{}: kernel {g}, classifier {w}", k.0, k.1));
            }
        }
        assert!(
            diffs.is_empty(),
            "seed {seed}: {}\n{text}\n{}",
            diffs.join("\n"),
            server.ruleset()
        );
    }
    assert!(sent >= 10_000, "{sent} packets");
    assert!(
        !nft_seen || tuple_sets > 0,
        "no run on a tuple key reached the kernel"
    );
    assert!(
        !nft_seen || interval_sets > 0,
        "no run on a range reached the kernel"
    );
    assert!(
        counted > sent / 5,
        "only {counted} rule hits for {sent} packets"
    );
}
