//! The index of a set of the kernel's own ipset module (sets made by the
//! real `ipset` tool), which the xtables `set` match and `SET` target name
//! their sets by: the `SO_IP_SET` socket option, as iptables' libxt_set
//! asks it (`IP_SET_OP_VERSION`, then `IP_SET_OP_GET_BYNAME`).
//!
//! Not netlink, but the only other kernel request the rule side makes,
//! and like netlink it answers for the calling process's network
//! namespace. Needs CAP_NET_RAW (a raw socket).

use std::io;

/// `SO_IP_SET` (level `SOL_IP`).
const SO_IP_SET: libc::c_int = 83;
const IP_SET_OP_VERSION: u32 = 0x0000_0100;
const IP_SET_OP_GET_BYNAME: u32 = 0x0000_0006;
/// `IPSET_MAXNAMELEN`.
const MAXNAMELEN: usize = 32;
/// `IPSET_INVALID_ID`.
const INVALID_ID: u16 = 65535;

/// `struct ip_set_req_get_set`: op, version, then the name (in) or index
/// (out, a u16 at the union's start).
#[repr(C)]
struct ReqGetSet {
    op: u32,
    version: u32,
    name: [u8; MAXNAMELEN],
}

/// The kernel ipset `name`'s index; `None` when the kernel has no such
/// set (or no ipset module).
pub fn lookup(name: &str) -> io::Result<Option<u16>> {
    if name.is_empty() || name.len() >= MAXNAMELEN {
        return Ok(None);
    }
    // SAFETY: plain socket(2); the descriptor is closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        // Without CAP_NET_RAW the kernel's ipsets cannot be asked (nor
        // used by the caller's rules): none.
        return match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => Ok(None),
            _ => Err(e),
        };
    }
    let r = ask(fd, name);
    // SAFETY: fd is ours and open.
    unsafe { libc::close(fd) };
    r
}

fn get(fd: libc::c_int, req: &mut ReqGetSet, len: usize) -> io::Result<bool> {
    let mut l = len as libc::socklen_t;
    // SAFETY: `req` is valid for `len` bytes (at most its size), which the
    // kernel reads and writes back.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_IP,
            SO_IP_SET,
            (req as *mut ReqGetSet).cast(),
            &mut l,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        // No ipset module (or not in this namespace): no kernel ipsets.
        Some(libc::ENOPROTOOPT) | Some(libc::ENOENT) => Ok(false),
        _ => Err(e),
    }
}

fn ask(fd: libc::c_int, name: &str) -> io::Result<Option<u16>> {
    let mut req = ReqGetSet {
        op: IP_SET_OP_VERSION,
        version: 0,
        name: [0; MAXNAMELEN],
    };
    // `struct ip_set_req_version` is the first 8 bytes.
    if !get(fd, &mut req, 8)? {
        return Ok(None);
    }
    let version = req.version;
    req = ReqGetSet {
        op: IP_SET_OP_GET_BYNAME,
        version,
        name: [0; MAXNAMELEN],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    if !get(fd, &mut req, std::mem::size_of::<ReqGetSet>())? {
        return Ok(None);
    }
    let index = u16::from_ne_bytes([req.name[0], req.name[1]]);
    Ok((index != INVALID_ID).then_some(index))
}
