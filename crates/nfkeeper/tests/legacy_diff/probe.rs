//! Probe packets sent through a namespace's OUTPUT and INPUT: forged IPv4
//! packets written on a raw socket (IP_HDRINCL) to a local address, so
//! each one crosses OUTPUT, loops over `lo`, and crosses INPUT.
//!
//! Verdict per packet: OUTPUT dropping it fails the send with EPERM;
//! INPUT accepting it hands a copy to the raw sockets listening for its
//! protocol (raw delivery runs after INPUT); otherwise INPUT dropped it.
//! Each packet ends with a 4-byte id so the copies are told apart.

use super::gen::Probe;
use std::collections::HashSet;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// What happened to one probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    DroppedInOutput,
    DroppedInInput,
    Delivered,
}

const MAGIC: [u8; 4] = *b"nfkP";

fn packet(p: &Probe, id: u32) -> Vec<u8> {
    let mut l4 = match p.proto {
        6 => {
            let mut h = vec![0u8; 20];
            h[0..2].copy_from_slice(&p.sport.to_be_bytes());
            h[2..4].copy_from_slice(&p.dport.to_be_bytes());
            h[4..8].copy_from_slice(&id.to_be_bytes());
            h[12] = 5 << 4;
            h[13] = p.flags;
            h[14..16].copy_from_slice(&512u16.to_be_bytes());
            h
        }
        17 => {
            let mut h = vec![0u8; 8];
            h[0..2].copy_from_slice(&p.sport.to_be_bytes());
            h[2..4].copy_from_slice(&p.dport.to_be_bytes());
            h
        }
        _ => {
            let mut h = vec![0u8; 8];
            h[0] = p.flags;
            h[4..8].copy_from_slice(&id.to_be_bytes());
            h
        }
    };
    l4.extend(std::iter::repeat_n(0xa5, p.pad));
    l4.extend(MAGIC);
    l4.extend(id.to_be_bytes());
    if p.proto == 17 {
        let n = l4.len() as u16;
        l4[4..6].copy_from_slice(&n.to_be_bytes());
    }
    let total = 20 + l4.len();
    let mut ip = vec![0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = p.proto;
    ip[12..16].copy_from_slice(&p.src.to_be_bytes());
    ip[16..20].copy_from_slice(&p.dst.to_be_bytes());
    ip.extend(l4);
    ip
}

fn socket(proto: i32) -> OwnedFd {
    // SAFETY: plain socket(2); the fd is owned from here on.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, proto) };
    assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
    // SAFETY: fd is a fresh descriptor nobody else owns.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Ids of the probes read from `fd` so far (non-blocking).
fn drain(fd: &OwnedFd, seen: &mut HashSet<u32>) -> usize {
    let mut buf = [0u8; 2048];
    let mut n = 0;
    loop {
        // SAFETY: buf is valid for its length.
        let r = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if r < 8 {
            return n;
        }
        let b = &buf[..r as usize];
        let (tail, id) = b[b.len() - 8..].split_at(4);
        if tail == MAGIC {
            seen.insert(u32::from_be_bytes(id.try_into().unwrap()));
            n += 1;
        }
    }
}

/// Send `probes` in the network namespace at `netns` (a /run/netns path)
/// and report each one's fate. Runs on a thread of its own, which enters
/// the namespace; the calling thread stays where it is.
pub fn run(netns: &str, probes: &[Probe]) -> Vec<Fate> {
    let netns = netns.to_string();
    let probes = probes.to_vec();
    std::thread::spawn(move || {
        let f = std::fs::File::open(&netns).expect("open netns");
        // SAFETY: setns on this thread only, with a namespace fd.
        let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns {netns}: {}", std::io::Error::last_os_error());
        let tx = socket(libc::IPPROTO_RAW);
        let rx = [socket(6), socket(17), socket(1)];
        let mut fates = Vec::with_capacity(probes.len());
        let mut seen = HashSet::new();
        for (id, p) in probes.iter().enumerate() {
            let pkt = packet(p, id as u32);
            let to = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: 0,
                sin_addr: libc::in_addr {
                    s_addr: p.dst.to_be(),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: pkt and `to` are valid for the lengths given.
            let r = unsafe {
                libc::sendto(
                    tx.as_raw_fd(),
                    pkt.as_ptr().cast(),
                    pkt.len(),
                    0,
                    (&to as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            };
            let fate = if r < 0 {
                let e = std::io::Error::last_os_error();
                assert_eq!(e.raw_os_error(), Some(libc::EPERM), "send probe {id}: {e}");
                Fate::DroppedInOutput
            } else {
                Fate::DroppedInInput
            };
            fates.push(fate);
            for s in &rx {
                drain(s, &mut seen);
            }
        }
        // Loopback delivery normally completes within the send; wait
        // for stragglers until nothing arrives for a while.
        let mut quiet = Instant::now();
        while quiet.elapsed() < Duration::from_millis(100) {
            std::thread::sleep(Duration::from_millis(5));
            if rx.iter().map(|s| drain(s, &mut seen)).sum::<usize>() > 0 {
                quiet = Instant::now();
            }
        }
        for id in seen {
            let f = &mut fates[id as usize];
            assert_eq!(
                *f,
                Fate::DroppedInInput,
                "probe {id} delivered although OUTPUT dropped it"
            );
            *f = Fate::Delivered;
        }
        fates
    })
    .join()
    .expect("probe thread panicked")
}
