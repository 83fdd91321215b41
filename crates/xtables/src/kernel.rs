//! The kernel's ip_tables/ip6_tables interface of the current network
//! namespace: the tables it has (/proc/net/ip_tables_names,
//! ip6_tables_names), and getsockopt/setsockopt on a raw socket
//! (`SOL_IP`/`SOL_IPV6`): `IPT_SO_GET_INFO` (64), `IPT_SO_GET_ENTRIES`
//! (65), `IPT_SO_SET_REPLACE` (64). The only I/O of this crate.
//!
//! Contract: only tables the names file lists are ever asked for — asking
//! for another one loads it, i.e. creates it in the namespace.
//!
//! Structs (64-bit hosts): `ipt_getinfo` = name[32] @0, valid_hooks u32
//! @32, hook_entry[5] @36, underflow[5] @56, num_entries @76, size @80
//! (84 bytes); `ipt_get_entries` = name[32], size u32 @32, entries @40;
//! `ipt_replace` = name[32], valid_hooks @32, num_entries @36, size @40,
//! hook_entry[5] @44, underflow[5] @64, num_counters @84, counters pointer
//! @88, entries @96. The ip6t structs are the same.

use crate::table::Info;
use ruleset::Family;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SO_GET_INFO: libc::c_int = 64;
const SO_GET_ENTRIES: libc::c_int = 65;
const SO_SET_REPLACE: libc::c_int = 64;
const TABLE_MAXNAMELEN: usize = 32;

/// The tables the namespace has for `family`, in the kernel's order
/// (none when the module is not loaded).
pub fn table_names(family: Family) -> io::Result<Vec<String>> {
    // thread-self: /proc/net is the process's (its first thread's)
    // namespace, not necessarily the calling thread's.
    let path = match family {
        Family::Ipv4 => "/proc/thread-self/net/ip_tables_names",
        Family::Ipv6 => "/proc/thread-self/net/ip6_tables_names",
    };
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(s
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// A raw socket of the family, the handle for the socket options.
pub struct Socket {
    fd: OwnedFd,
    level: libc::c_int,
}

impl Socket {
    pub fn open(family: Family) -> io::Result<Socket> {
        let (af, level) = match family {
            Family::Ipv4 => (libc::AF_INET, libc::SOL_IP),
            Family::Ipv6 => (libc::AF_INET6, libc::SOL_IPV6),
        };
        // SAFETY: plain socket(2); the descriptor is owned below.
        let fd =
            unsafe { libc::socket(af, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::IPPROTO_RAW) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Socket { fd, level })
    }

    fn get(&self, opt: libc::c_int, buf: &mut [u8]) -> io::Result<usize> {
        let mut len = buf.len() as libc::socklen_t;
        // SAFETY: buf is valid for len bytes; the kernel writes at most len.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                self.level,
                opt,
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(len as usize)
    }

    /// `IPT_SO_GET_INFO` for `table`, which must be listed by
    /// [`table_names`].
    pub fn info(&self, table: &str) -> io::Result<Info> {
        let mut b = [0u8; 84];
        put_name(&mut b, table)?;
        self.get(SO_GET_INFO, &mut b)?;
        let u = |at: usize| u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let mut i = Info {
            valid_hooks: u(32),
            num_entries: u(76),
            size: u(80),
            ..Info::default()
        };
        for h in 0..5 {
            i.hook_entry[h] = u(36 + 4 * h);
            i.underflow[h] = u(56 + 4 * h);
        }
        Ok(i)
    }

    /// The table's info and blob, consistent with each other (read again
    /// when the table changed between the two calls).
    pub fn read(&self, table: &str) -> io::Result<(Info, Vec<u8>)> {
        for _ in 0..16 {
            let info = self.info(table)?;
            let size = info.size as usize;
            let mut b = vec![0u8; 40 + size];
            put_name(&mut b, table)?;
            b[32..36].copy_from_slice(&info.size.to_ne_bytes());
            match self.get(SO_GET_ENTRIES, &mut b) {
                Ok(_) => {
                    b.drain(..40);
                    return Ok((info, b));
                }
                // The size changed under us.
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!("table {table} keeps changing")))
    }

    /// `IPT_SO_SET_REPLACE`: `table` becomes `blob` (laid out as `info`
    /// says); `old_entries` is the entry count of the table being replaced
    /// (the kernel refuses with EAGAIN when it no longer is).
    pub fn replace(
        &self,
        table: &str,
        info: &Info,
        blob: &[u8],
        old_entries: u32,
    ) -> io::Result<()> {
        let mut counters = vec![0u8; 16 * old_entries.max(1) as usize];
        let mut b = vec![0u8; 96 + blob.len()];
        put_name(&mut b, table)?;
        let mut put = |at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        put(32, info.valid_hooks);
        put(36, info.num_entries);
        put(40, info.size);
        for h in 0..5 {
            put(44 + 4 * h, info.hook_entry[h]);
            put(64 + 4 * h, info.underflow[h]);
        }
        put(84, old_entries);
        let ptr = counters.as_mut_ptr() as u64;
        b[88..96].copy_from_slice(&ptr.to_ne_bytes());
        b[96..].copy_from_slice(blob);
        // SAFETY: b is valid for its length; the kernel writes the old
        // counters to `counters`, which outlives the call.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                self.level,
                SO_SET_REPLACE,
                b.as_ptr().cast(),
                b.len() as libc::socklen_t,
            )
        };
        drop(counters);
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn put_name(b: &mut [u8], table: &str) -> io::Result<()> {
    let n = table.as_bytes();
    if n.len() >= TABLE_MAXNAMELEN {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "table name too long",
        ));
    }
    b[..n.len()].copy_from_slice(n);
    Ok(())
}
