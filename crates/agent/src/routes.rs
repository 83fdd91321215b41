//! The host's way to an address, for the lockout probes: the source
//! address the kernel picks (a connected UDP socket's local address; no
//! packet is sent) and the output interface from the main routing table
//! (`/proc/net/route`, `/proc/net/ipv6_route`: longest prefix, then lowest
//! metric). Policy routing is not modelled; an address of the host itself
//! goes out on `lo`.

use crate::lockout::Routes;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// Routes of the calling thread's network namespace.
pub struct SysRoutes;

/// A route: destination network, prefix length, metric, interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub dst: IpAddr,
    pub len: u8,
    pub metric: u32,
    pub iface: String,
}

fn in_net(a: IpAddr, r: &Route) -> bool {
    match (a, r.dst) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let m = u32::MAX.checked_shl(32 - u32::from(r.len)).unwrap_or(0);
            u32::from(a) & m == u32::from(n) & m
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let m = u128::MAX.checked_shl(128 - u32::from(r.len)).unwrap_or(0);
            u128::from(a) & m == u128::from(n) & m
        }
        _ => false,
    }
}

/// The interface of the best route to `a`.
pub fn lookup(routes: &[Route], a: IpAddr) -> Option<&str> {
    routes
        .iter()
        .filter(|r| in_net(a, r))
        .max_by(|x, y| x.len.cmp(&y.len).then(y.metric.cmp(&x.metric)))
        .map(|r| r.iface.as_str())
}

/// `/proc/net/route`: addresses and masks are the network-order bytes
/// printed as a host-order u32, so native-endian bytes give them back.
pub fn parse_v4(text: &str) -> Vec<Route> {
    let mut v = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 {
            continue;
        }
        let (Ok(dst), Ok(metric), Ok(mask)) = (
            u32::from_str_radix(f[1], 16),
            f[6].parse::<u32>(),
            u32::from_str_radix(f[7], 16),
        ) else {
            continue;
        };
        let dst = Ipv4Addr::from(dst.to_ne_bytes());
        let len = u32::from_be_bytes(mask.to_ne_bytes()).leading_ones() as u8;
        v.push(Route {
            dst: IpAddr::V4(dst),
            len,
            metric,
            iface: f[0].to_string(),
        });
    }
    v
}

/// `/proc/net/ipv6_route`: dst, dst len, src, src len, next hop, metric,
/// refcnt, use, flags, interface (all hex but the name).
pub fn parse_v6(text: &str) -> Vec<Route> {
    let mut v = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 {
            continue;
        }
        let (Ok(dst), Ok(len), Ok(metric)) = (
            u128::from_str_radix(f[0], 16),
            u8::from_str_radix(f[1], 16),
            u32::from_str_radix(f[5], 16),
        ) else {
            continue;
        };
        v.push(Route {
            dst: IpAddr::V6(Ipv6Addr::from(dst)),
            len,
            metric,
            iface: f[9].to_string(),
        });
    }
    v
}

impl Routes for SysRoutes {
    fn route(&self, dst: IpAddr) -> Result<(IpAddr, String), String> {
        let any: SocketAddr = match dst {
            IpAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            IpAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let s = UdpSocket::bind(any).map_err(|e| format!("route to {dst}: {e}"))?;
        s.connect((dst, 9))
            .map_err(|e| format!("no route to etcd endpoint {dst}: {e}"))?;
        let src = s.local_addr().map_err(|e| e.to_string())?.ip();
        if src == dst || dst.is_loopback() {
            return Ok((src, "lo".into()));
        }
        let (path, parse): (&str, fn(&str) -> Vec<Route>) = match dst {
            IpAddr::V4(_) => ("/proc/net/route", parse_v4),
            IpAddr::V6(_) => ("/proc/net/ipv6_route", parse_v6),
        };
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        let routes = parse(&text);
        let oif = lookup(&routes, dst).ok_or_else(|| format!("no route to etcd endpoint {dst}"))?;
        Ok((src, oif.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_route_tables() {
        let v4 =
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
eth0\t00000000\t010012C6\t0003\t0\t0\t100\t00000000\t0\t0\t0\n\
eth0\t000012C6\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n\
mgmt\t000912C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
        let r = parse_v4(v4);
        assert_eq!(r[1].dst, "198.18.0.0".parse::<IpAddr>().unwrap());
        assert_eq!(r[1].len, 16);
        let at = |a: &str| lookup(&r, a.parse().unwrap()).map(str::to_string);
        assert_eq!(at("198.18.9.4").as_deref(), Some("mgmt"));
        assert_eq!(at("198.18.1.1").as_deref(), Some("eth0"));
        assert_eq!(at("8.8.8.8").as_deref(), Some("eth0"));
        let v6 = "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n\
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000001 00000000 00000003     wan\n";
        let r6 = parse_v6(v6);
        assert_eq!(lookup(&r6, "fd00::5".parse().unwrap()), Some("eth0"));
        assert_eq!(lookup(&r6, "2001:db8::1".parse().unwrap()), Some("wan"));
        assert_eq!(lookup(&[], "2001:db8::1".parse().unwrap()), None);
    }
}
