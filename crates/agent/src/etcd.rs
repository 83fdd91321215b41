//! Connecting to etcd the way etcd's own clients are told to: etcdctl's
//! options (`--endpoints`, `--cacert`, `--cert`, `--key`, `--user`,
//! `--password`, `--dial-timeout`, `--command-timeout`,
//! `--keepalive-time`, `--keepalive-timeout`) and their `ETCDCTL_*`
//! environment variables; and the few reads both the agent and the
//! `fleet` commands make.

use crate::desired::Payload;
use crate::layout::Keys;
use etcd_client::{Certificate, Client, ConnectOptions, GetOptions, Identity, TlsOptions};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// How to reach etcd.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdOpts {
    pub endpoints: Vec<String>,
    pub cacert: Option<String>,
    pub cert: Option<String>,
    pub key: Option<String>,
    /// `name` or `name:password`.
    pub user: Option<String>,
    pub password: Option<String>,
    pub dial_timeout: Duration,
    /// Bound on one request (not on watches).
    pub command_timeout: Duration,
    /// HTTP/2 pings: how often, and how long an answer may take before
    /// the connection counts as dead (so a partition ends a watch).
    pub keepalive_time: Duration,
    pub keepalive_timeout: Duration,
    pub prefix: String,
}

impl Default for EtcdOpts {
    fn default() -> Self {
        EtcdOpts {
            endpoints: vec!["127.0.0.1:2379".into()],
            cacert: None,
            cert: None,
            key: None,
            user: None,
            password: None,
            dial_timeout: Duration::from_secs(2),
            command_timeout: Duration::from_secs(5),
            keepalive_time: Duration::from_secs(2),
            keepalive_timeout: Duration::from_secs(6),
            prefix: crate::layout::DEFAULT_PREFIX.into(),
        }
    }
}

/// etcdctl's duration syntax: `5s`, `500ms`, `2m`, or bare seconds.
pub fn duration(v: &str) -> Result<Duration, String> {
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => v.split_at(i),
        None => (v, "s"),
    };
    let n: f64 = num.parse().map_err(|_| format!("invalid duration {v:?}"))?;
    let s = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("invalid duration {v:?}")),
    };
    Ok(Duration::from_secs_f64(s))
}

impl EtcdOpts {
    /// The `ETCDCTL_*` variables from `env` (a lookup, so tests need not
    /// set the process environment).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<EtcdOpts, String> {
        let mut o = EtcdOpts::default();
        for (var, opt) in [
            ("ETCDCTL_ENDPOINTS", "--endpoints"),
            ("ETCDCTL_CACERT", "--cacert"),
            ("ETCDCTL_CERT", "--cert"),
            ("ETCDCTL_KEY", "--key"),
            ("ETCDCTL_USER", "--user"),
            ("ETCDCTL_PASSWORD", "--password"),
            ("ETCDCTL_DIAL_TIMEOUT", "--dial-timeout"),
            ("ETCDCTL_COMMAND_TIMEOUT", "--command-timeout"),
            ("ETCDCTL_KEEPALIVE_TIME", "--keepalive-time"),
            ("ETCDCTL_KEEPALIVE_TIMEOUT", "--keepalive-timeout"),
        ] {
            if let Some(v) = env(var) {
                o.set(opt, &v)?;
            }
        }
        Ok(o)
    }

    /// Take option `opt` (one of etcdctl's, or `--prefix`) with value `v`;
    /// `Ok(false)` if it is not an etcd option.
    pub fn set(&mut self, opt: &str, v: &str) -> Result<bool, String> {
        match opt {
            "--endpoints" => {
                self.endpoints = v
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            "--cacert" => self.cacert = Some(v.into()),
            "--cert" => self.cert = Some(v.into()),
            "--key" => self.key = Some(v.into()),
            "--user" => self.user = Some(v.into()),
            "--password" => self.password = Some(v.into()),
            "--dial-timeout" => self.dial_timeout = duration(v)?,
            "--command-timeout" => self.command_timeout = duration(v)?,
            "--keepalive-time" => self.keepalive_time = duration(v)?,
            "--keepalive-timeout" => self.keepalive_timeout = duration(v)?,
            "--prefix" => self.prefix = v.into(),
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub fn keys(&self) -> Keys {
        Keys::new(&self.prefix)
    }

    fn tls(&self) -> Result<Option<TlsOptions>, String> {
        if self.cacert.is_none() && self.cert.is_none() {
            return Ok(None);
        }
        let read = |p: &str| std::fs::read(p).map_err(|e| format!("{p}: {e}"));
        let mut t = TlsOptions::new();
        if let Some(ca) = &self.cacert {
            t = t.ca_certificate(Certificate::from_pem(read(ca)?));
        }
        match (&self.cert, &self.key) {
            (Some(c), Some(k)) => t = t.identity(Identity::from_pem(read(c)?, read(k)?)),
            (None, None) => {}
            _ => return Err("--cert and --key go together".into()),
        }
        Ok(Some(t))
    }

    fn credentials(&self) -> Option<(String, String)> {
        let u = self.user.as_ref()?;
        Some(match (u.split_once(':'), &self.password) {
            (_, Some(p)) => (u.clone(), p.clone()),
            (Some((n, p)), None) => (n.into(), p.into()),
            (None, None) => (u.clone(), String::new()),
        })
    }

    /// Connect (with the dial timeout).
    pub async fn connect(&self) -> Result<Client, String> {
        let mut co = ConnectOptions::new()
            .with_connect_timeout(self.dial_timeout)
            .with_keep_alive(self.keepalive_time, self.keepalive_timeout)
            .with_keep_alive_while_idle(true);
        if let Some(t) = self.tls()? {
            co = co.with_tls(t);
        }
        if let Some((u, p)) = self.credentials() {
            // etcd's tokens expire (5 minutes by default); a long-lived
            // agent gets a new one when a request finds it expired.
            co = co.with_user(u, p).with_auto_token_refresh(true);
        }
        let c = Client::connect(&self.endpoints, Some(co));
        match tokio::time::timeout(self.dial_timeout + self.command_timeout, c).await {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(format!("etcd {}: {e}", self.endpoints.join(","))),
            Err(_) => Err(format!("etcd {}: timed out", self.endpoints.join(","))),
        }
    }

    /// The endpoints as socket addresses (names resolved), for the
    /// lockout check.
    pub fn addrs(&self) -> Result<Vec<SocketAddr>, String> {
        let mut v = Vec::new();
        for e in &self.endpoints {
            let hostport = e
                .trim_start_matches("https://")
                .trim_start_matches("http://")
                .trim_end_matches('/');
            let found = hostport
                .to_socket_addrs()
                .map_err(|err| format!("etcd endpoint {e}: {err}"))?;
            v.extend(found);
        }
        v.sort();
        v.dedup();
        Ok(v)
    }
}

/// `f` bounded by `t`; a timeout is an error like any other.
pub async fn bounded<T>(
    t: Duration,
    f: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, String> {
    match tokio::time::timeout(t, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("etcd did not answer in time".into()),
    }
}

/// Split the keys of a ruleset or release directory into a payload.
pub fn payload_of(kvs: &[etcd_client::KeyValue], dir: &str) -> Payload {
    let mut p = Payload::default();
    for kv in kvs {
        let Some(leaf) = kv.key_str().ok().and_then(|k| Keys::leaf(k, dir)) else {
            continue;
        };
        let v = String::from_utf8_lossy(kv.value()).into_owned();
        match leaf {
            "v4" => p.v4 = v,
            "v6" => p.v6 = v,
            "ipset" => p.ipset = v,
            _ => {}
        }
    }
    p
}

/// Release `rev` of ruleset `name` (`None` if it does not exist).
///
/// Releases are immutable, so the member the client talks to may answer
/// from its own copy (a serializable read: the load of a stage's fetches
/// spreads over the cluster); a member that has not caught up yet finds
/// nothing, and then the leader is asked.
pub async fn release(
    c: &mut Client,
    o: &EtcdOpts,
    name: &str,
    rev: i64,
) -> Result<Option<Payload>, String> {
    let dir = o.keys().release(name, rev);
    for opts in [
        GetOptions::new().with_prefix().with_serializable(),
        GetOptions::new().with_prefix(),
    ] {
        let r = bounded(o.command_timeout, c.get(dir.as_str(), Some(opts))).await?;
        if !r.kvs().is_empty() {
            return Ok(Some(payload_of(r.kvs(), &dir)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_as_etcdctl_takes_them() {
        let env = |k: &str| match k {
            "ETCDCTL_ENDPOINTS" => Some("https://a:2379,b:2379".to_string()),
            "ETCDCTL_USER" => Some("root:pw".to_string()),
            "ETCDCTL_DIAL_TIMEOUT" => Some("500ms".to_string()),
            _ => None,
        };
        let mut o = EtcdOpts::from_env(&env).unwrap();
        assert_eq!(o.endpoints, vec!["https://a:2379", "b:2379"]);
        assert_eq!(o.dial_timeout, Duration::from_millis(500));
        assert_eq!(o.credentials(), Some(("root".into(), "pw".into())));
        assert_eq!(o.set("--password", "x"), Ok(true));
        assert_eq!(o.credentials(), Some(("root:pw".into(), "x".into())));
        assert_eq!(o.set("--command-timeout", "2m"), Ok(true));
        assert_eq!(o.command_timeout, Duration::from_secs(120));
        assert_eq!(o.set("--hook", "x"), Ok(false));
        assert!(o.set("--dial-timeout", "soon").is_err());
        o.cert = Some("/nonexistent".into());
        assert_eq!(o.tls().unwrap_err(), "--cert and --key go together");
        assert_eq!(duration("3").unwrap(), Duration::from_secs(3));
    }

    #[test]
    fn endpoint_addresses() {
        let o = EtcdOpts {
            endpoints: vec![
                "http://127.0.0.1:2379".into(),
                "127.0.0.1:2379".into(),
                "[::1]:2380/".into(),
            ],
            ..EtcdOpts::default()
        };
        let a = o.addrs().unwrap();
        assert_eq!(
            a,
            vec![
                "127.0.0.1:2379".parse::<SocketAddr>().unwrap(),
                "[::1]:2380".parse().unwrap()
            ]
        );
    }
}
