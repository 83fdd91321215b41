//! `nfkeeper-agent`: the agent (default), `fleet` (operators' commands) and
//! `controller` (a rollout controller without a host). Wiring only.

use agent::agent::{Config, Run};
use agent::etcd::EtcdOpts;
use agent::host::{Host, ProbeSource};
use agent::kernel::Local;
use agent::lockout::{self, Probe};
use agent::routes::SysRoutes;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const USAGE: &str = "\
usage: nfkeeper-agent [agent] [ETCD OPTIONS] [--host NAME] [--socket PATH] [--nfkeeper PATH]
                      [--direct] [--lease-ttl SECS] [--resync SECS] [--keep-open 'TRACE OPTIONS']...
                      [--force] [--metrics ADDR:PORT] [--no-controller] [--no-events]
       nfkeeper-agent fleet [ETCD OPTIONS] COMMAND ...   (nfkeeper-agent fleet --help)
       nfkeeper-agent controller [ETCD OPTIONS] [--name NAME] [--lease-ttl SECS]

Keeps this host's nfkeeper tables on the ruleset etcd assigns it (docs/fleet.md).

  --host NAME          this host's name in etcd (default: the hostname)
  --socket PATH        the local daemon's socket (default: this namespace's)
  --nfkeeper PATH      nfkeeper for direct mode when no daemon answers (default: next to
                       this program, else from PATH)
  --direct             never use the daemon
  --lease-ttl SECS     the status expires this long after the agent stops (default 10)
  --resync SECS        compare the kernel with the desired state this often (default 60)
  --keep-open OPTS     a flow that must stay open (nfkeeper trace packet options), checked
                       before every apply besides the etcd endpoints; repeatable
  --force              apply even if the lockout check refuses
  --metrics ADDR:PORT  Prometheus metrics over HTTP
  --no-controller      never stand for rollout controller
  --no-events          find drift by the periodic check only

ETCD OPTIONS (as etcdctl's, also from ETCDCTL_*): --endpoints A,B --cacert F --cert F
  --key F --user NAME[:PW] --password PW --dial-timeout D --command-timeout D
  --keepalive-time D --keepalive-timeout D --prefix P (default /nfkeeper)";

struct SysProbes {
    endpoints: Vec<SocketAddr>,
    keep_open: Vec<String>,
}

impl ProbeSource for SysProbes {
    fn probes(&self, group: &[String]) -> Result<Vec<Probe>, String> {
        let mut all = self.keep_open.clone();
        all.extend(group.iter().cloned());
        lockout::probes(&self.endpoints, &all, &SysRoutes)
    }
}

struct Opts {
    etcd: EtcdOpts,
    host: Option<String>,
    socket: Option<PathBuf>,
    nfkeeper: Option<PathBuf>,
    direct: bool,
    ttl: i64,
    resync: u64,
    keep_open: Vec<String>,
    force: bool,
    metrics: Option<String>,
    controller: bool,
    events: bool,
}

fn parse(args: &[String], etcd: EtcdOpts) -> Result<Opts, String> {
    let mut o = Opts {
        etcd,
        host: None,
        socket: None,
        nfkeeper: None,
        direct: false,
        ttl: 10,
        resync: 60,
        keep_open: Vec::new(),
        force: false,
        metrics: None,
        controller: true,
        events: true,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (k, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut val = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{k} needs a value"))
        };
        let num = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{k}: not a number: {v}"))
        };
        match k {
            "--direct" => o.direct = true,
            "--force" => o.force = true,
            "--no-controller" => o.controller = false,
            "--no-events" => o.events = false,
            "--host" | "--name" => o.host = Some(val()?),
            "--socket" => o.socket = Some(val()?.into()),
            "--nfkeeper" => o.nfkeeper = Some(val()?.into()),
            "--lease-ttl" => o.ttl = num(val()?)?.max(2) as i64,
            "--resync" => o.resync = num(val()?)?.max(1),
            "--keep-open" => {
                let spec = val()?;
                lockout::flow_probes(&spec)?;
                o.keep_open.push(spec);
            }
            "--metrics" => o.metrics = Some(val()?),
            _ if k.starts_with("--") => {
                let v = val()?;
                if !o.etcd.set(k, &v)? {
                    return Err(format!("unknown option {k}"));
                }
            }
            _ => return Err(format!("unexpected argument {a}")),
        }
    }
    Ok(o)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

fn nfkeeper_path() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("nfkeeper")))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("nfkeeper"))
}

async fn agent(o: Opts) -> i32 {
    let name = o.host.clone().unwrap_or_else(hostname);
    if !agent::layout::valid_name(&name) {
        eprintln!("nfkeeper-agent: invalid host name {name:?} (--host)");
        return 2;
    }
    let endpoints = match o.etcd.addrs() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("nfkeeper-agent: {e}");
            return 2;
        }
    };
    let kernel = Local::new(
        o.socket.clone().unwrap_or_else(proto::client::default_path),
        o.nfkeeper.clone().unwrap_or_else(nfkeeper_path),
        o.direct,
    );
    let probes = SysProbes {
        endpoints,
        keep_open: o.keep_open.clone(),
    };
    let host = Host::new(&name, Box::new(kernel), Box::new(probes), o.force);
    let metrics = Arc::new(agent::metrics::Etcd::default());
    let cfg = Config {
        host: name.clone(),
        etcd: o.etcd.clone(),
        ttl: o.ttl,
        resync: Duration::from_secs(o.resync),
        debounce: Duration::from_millis(20),
    };
    let run = Run::new(cfg, host, metrics.clone());
    if let Some(addr) = &o.metrics {
        let l = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("nfkeeper-agent: --metrics {addr}: {e}");
                return 1;
            }
        };
        let h = run.host.clone();
        tokio::spawn(agent::metrics::serve(l, move || {
            let g = h.lock().unwrap_or_else(|e| e.into_inner());
            agent::metrics::render(&g.counts, &g.status, &metrics)
        }));
    }
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    if o.events {
        if let Err(e) = agent::events::spawn(tx) {
            eprintln!("nfkeeper-agent: {e}; drift is found by the periodic check only");
        }
    }
    if o.controller {
        tokio::spawn(agent::controller::run(o.etcd.clone(), name, o.ttl));
    }
    run.run(rx).await;
    0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let env = |k: &str| std::env::var(k).ok();
    let etcd = match EtcdOpts::from_env(&env) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("nfkeeper-agent: {e}");
            std::process::exit(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(4)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("nfkeeper-agent: {e}");
            std::process::exit(1);
        }
    };
    let code = match args.first().map(String::as_str) {
        Some("fleet") => rt.block_on(agent::fleet::main(etcd, &args[1..])),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            0
        }
        Some("controller") => match parse(&args[1..], etcd) {
            Ok(o) => {
                let name = o
                    .host
                    .unwrap_or_else(|| format!("controller-{}", hostname()));
                rt.block_on(agent::controller::run(o.etcd, name, o.ttl));
                0
            }
            Err(e) => {
                eprintln!("nfkeeper-agent: {e}\n{USAGE}");
                2
            }
        },
        _ => {
            let rest = match args.first().map(String::as_str) {
                Some("agent") => &args[1..],
                _ => &args[..],
            };
            match parse(rest, etcd) {
                Ok(o) => rt.block_on(agent(o)),
                Err(e) => {
                    eprintln!("nfkeeper-agent: {e}\n{USAGE}");
                    2
                }
            }
        }
    };
    std::process::exit(code);
}
