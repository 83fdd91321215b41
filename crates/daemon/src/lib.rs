//! `nfkeeper serve`: a daemon per network namespace that keeps the model of
//! nfkeeper's tables warm, answers reads from memory and folds concurrent
//! writes into few kernel transactions. It is only a cache: the kernel is
//! the truth, every write is acknowledged only once committed, and a
//! change made by anyone else is re-read (see [`coherence`]).
//!
//! Threads: one acceptor ([`listen`]), one per client connection
//! ([`conn`]: parses requests, serves reads under a shared lock, queues
//! writes), one writer ([`writer`]: group commit), one slow timer that
//! drains nftables events while no request does ([`coherence::tick`]), one
//! that waits for a stop signal ([`stop`]), and optionally one metrics
//! endpoint ([`metrics`]).
//! The protocol is in the `proto` crate and docs/protocol.md.

pub mod coherence;
pub mod conn;
pub mod frame;
pub mod listen;
pub mod log;
pub mod metrics;
pub mod stop;
pub mod warm;
pub mod writer;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

pub const USAGE: &str = "\
Usage: nfkeeper serve [--netns NAME] [--socket PATH] [--group NAME|GID]
                      [--metrics ADDR:PORT] [--max-request BYTES] [--max-group WRITES]
                      [--max-clients N] [--idle-timeout SECS] [--quiet]

Keeps nfkeeper's tables of one network namespace warm and serves iptables,
iptables-save and iptables-restore requests (and typed operations) on a unix
socket; nfkeeper's iptables personalities use it when it answers.

  --netns NAME        serve the named namespace (/run/netns/NAME) instead of the current one
  --socket PATH       listen here (default: /run/nfkeeper/net-<inode of the namespace>.sock,
                      where clients in that namespace look first; $NFKEEPER_SOCKET overrides both)
  --group NAME|GID    also accept peers in this group (root is always accepted)
  --metrics ADDR:PORT serve Prometheus text metrics over HTTP (e.g. 127.0.0.1:9469)
  --max-request BYTES largest request accepted (default 64 MiB)
  --max-group WRITES  most writes folded into one kernel commit (default 1024)
  --max-clients N     most concurrent connections (default 1024)
  --idle-timeout SECS close a connection idle or stalled this long (default 60)
  --quiet             no log line per write (errors and foreign changes are still logged)

SIGTERM or SIGINT stops it once the requests in hand are answered; it removes
its socket, and commands then run in direct mode.

Runs of 16 or more similar rules are kept as one nftables set or verdict map
lookup (docs/compilation.md); `nfkeeper --no-compile-runs serve` (or
NFKEEPER_COMPILE=off) writes every rule as its own kernel rule.
";

/// Daemon settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub netns: Option<String>,
    pub socket: Option<PathBuf>,
    pub group: Option<u32>,
    pub metrics: Option<String>,
    pub max_request: usize,
    pub max_group: usize,
    pub max_clients: usize,
    pub idle_timeout: Duration,
    pub quiet: bool,
    /// The engine's settings (run compilation …), from the program.
    pub settings: keeper::Settings,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            netns: None,
            socket: None,
            group: None,
            metrics: None,
            max_request: proto::DEFAULT_MAX_REQUEST,
            max_group: 1024,
            max_clients: 1024,
            idle_timeout: Duration::from_secs(60),
            quiet: false,
            settings: keeper::Settings::default(),
        }
    }
}

/// A group by number or by name (from /etc/group: nfkeeper makes no NSS
/// lookups, which a static binary can't make well).
fn group_id(v: &str) -> Result<u32, String> {
    if let Ok(g) = v.parse() {
        return Ok(g);
    }
    iptables::ext::matches::owner::lookup_id(true, v)
        .ok_or_else(|| format!("--group: no group named {v:?}"))
}

/// Parse `nfkeeper serve` options.
pub fn parse_args(args: &[String]) -> Result<Config, String> {
    let mut c = Config::default();
    let mut it = args.iter();
    let num = |v: Option<&String>, f: &str| -> Result<usize, String> {
        v.ok_or(format!("{f} needs a value"))?
            .parse()
            .map_err(|_| format!("{f}: not a number"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--netns" => c.netns = Some(it.next().ok_or("--netns needs a name")?.clone()),
            "--socket" => c.socket = Some(it.next().ok_or("--socket needs a path")?.into()),
            "--group" => c.group = Some(group_id(it.next().ok_or("--group needs a value")?)?),
            "--metrics" => c.metrics = Some(it.next().ok_or("--metrics needs ADDR:PORT")?.clone()),
            "--max-request" => c.max_request = num(it.next(), a)?.max(1024),
            "--max-group" => c.max_group = num(it.next(), a)?.max(1),
            "--max-clients" => c.max_clients = num(it.next(), a)?.max(1),
            "--idle-timeout" => {
                c.idle_timeout = Duration::from_secs(num(it.next(), a)?.max(1) as u64)
            }
            "--quiet" => c.quiet = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("serve: unknown option {other:?}")),
        }
    }
    Ok(c)
}

/// Per table: the generation its save text was printed at, and the text.
pub type SaveTexts =
    std::collections::HashMap<(ruleset::Family, ruleset::TableKind), (u32, Arc<String>)>;

/// What every thread shares.
pub struct Shared {
    pub cfg: Config,
    pub warm: RwLock<keeper::State>,
    pub queue: writer::Queue,
    pub coherence: coherence::Coherence,
    pub metrics: metrics::Metrics,
    pub started: Instant,
    pub socket_path: PathBuf,
    /// Inode of the network namespace served.
    pub netns_ino: u64,
    pub clients: AtomicUsize,
    readers_waiting: AtomicUsize,
    /// Set once a stop signal came ([`stop`]).
    stopping: AtomicBool,
    /// Requests being handled, from their arrival to their answer
    /// ([`Shared::begin_request`]).
    busy: AtomicUsize,
    /// Every open connection, through a descriptor of its own, by a
    /// number ([`Shared::register`]): the stop answers them.
    conns: Mutex<std::collections::HashMap<u64, std::os::unix::net::UnixStream>>,
    next_conn: AtomicU64,
    /// The netlink socket every commit goes through (`None` until the
    /// model is loaded). Whoever holds it is the writer: the writer
    /// thread, or a connection thread committing inline when idle.
    kernel: Mutex<Option<nft::Socket>>,
    /// iptables-save text of each table (without counters) as the model
    /// had it at a generation: repeated saves of an unchanged table are a
    /// copy, not a walk over every rule (see `conn::Front::save`).
    pub save_texts: Mutex<SaveTexts>,
    /// The namespace's cookie, naming the snapshots direct mode keeps
    /// (`keeper::snapshot`), when snapshots are on: a table's save text
    /// not kept yet is taken from its snapshot at the model's generation
    /// before it is printed from the model.
    pub snap_cookie: Option<u64>,
    /// Work after a group's answers (freeing what a commit left, handing
    /// memory back): done by the reaper thread, so an inline write's
    /// client is answered, and the kernel socket released, before it.
    reaper: mpsc::Sender<Reap>,
}

/// A job for the reaper thread (see [`Shared::reap`]).
pub(crate) type Reap = Box<dyn FnOnce() + Send>;

/// The kernel socket, held (see [`Shared::kernel_socket`]).
pub struct KernelSocket<'a>(MutexGuard<'a, Option<nft::Socket>>);

impl std::ops::Deref for KernelSocket<'_> {
    type Target = nft::Socket;
    fn deref(&self) -> &nft::Socket {
        self.0
            .as_ref()
            .expect("kernel socket installed before any write")
    }
}

impl std::ops::DerefMut for KernelSocket<'_> {
    fn deref_mut(&mut self) -> &mut nft::Socket {
        self.0
            .as_mut()
            .expect("kernel socket installed before any write")
    }
}

impl Shared {
    /// Run `job` on the reaper thread (here when that thread is gone).
    pub(crate) fn reap(&self, job: Reap) {
        if let Err(mpsc::SendError(job)) = self.reaper.send(job) {
            job();
        }
    }

    /// Wait for the kernel socket (one writer at a time).
    pub fn kernel_socket(&self) -> KernelSocket<'_> {
        KernelSocket(self.kernel.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The kernel socket if nobody holds it.
    pub fn try_kernel_socket(&self) -> Option<KernelSocket<'_>> {
        match self.kernel.try_lock() {
            Ok(g) if g.is_some() => Some(KernelSocket(g)),
            _ => None,
        }
    }

    pub fn write_lock(&self) -> RwLockWriteGuard<'_, keeper::State> {
        self.warm.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn read_lock(&self) -> RwLockReadGuard<'_, keeper::State> {
        self.readers_waiting.fetch_add(1, Ordering::SeqCst);
        let g = self.warm.read().unwrap_or_else(|e| e.into_inner());
        self.readers_waiting.fetch_sub(1, Ordering::SeqCst);
        g
    }

    /// Called by the writer between groups: if readers are waiting, give
    /// them the lock before taking it again (bounded to 2 ms).
    pub fn let_readers_in(&self) {
        let t0 = Instant::now();
        while self.readers_waiting.load(Ordering::SeqCst) > 0
            && t0.elapsed() < Duration::from_millis(2)
        {
            std::thread::yield_now();
        }
    }

    /// Rules and chains in the model, and the queue depth.
    pub fn sizes(&self) -> metrics::Sizes {
        let w = self.read_lock();
        metrics::Sizes {
            rules: w.rule_count(),
            chains: w.chain_count(),
            queue: self.queue.len(),
        }
    }

    /// `nfkeeper status` text.
    pub fn status(&self) -> String {
        use std::fmt::Write as _;
        let mut o = String::new();
        let m = &self.metrics;
        let _ = writeln!(o, "nfkeeper serve: running, pid {}", std::process::id());
        let _ = writeln!(o, "  network namespace: net:[{}]", self.netns_ino);
        let _ = writeln!(o, "  socket:            {}", self.socket_path.display());
        let _ = writeln!(
            o,
            "  uptime:            {} s",
            self.started.elapsed().as_secs()
        );
        let _ = writeln!(
            o,
            "  clients:           {} connected, {} since start",
            self.clients.load(Ordering::Relaxed),
            m.connections.get()
        );
        {
            let w = self.read_lock();
            let _ = writeln!(o, "  generation:        {}", w.genid);
            for f in ruleset::Family::ALL {
                for k in warm::KINDS {
                    if !w.exists(f, k) {
                        continue;
                    }
                    let t = w.model.table(f, k);
                    let foreign = w.foreign.get(&(f, k)).map_or(0, Vec::len);
                    let _ = writeln!(
                        o,
                        "  table {} nfkeeper_{}: {} chains, {} rules{}",
                        warm::fam_name(f),
                        k.name(),
                        t.chains().len(),
                        t.rule_count(),
                        if foreign > 0 {
                            format!(", {foreign} foreign object(s) kept")
                        } else {
                            String::new()
                        }
                    );
                }
            }
        }
        let _ = writeln!(
            o,
            "  commits:           {} (mean {:.0} µs, mean {:.1} writes each)",
            m.commits.get(),
            m.commit_latency.mean() * 1e6,
            m.batch_writes.mean()
        );
        let _ = writeln!(
            o,
            "  queue:             {} writes waiting",
            self.queue.len()
        );
        let _ = writeln!(
            o,
            "  conflicts:         {} replayed, {} foreign changes, {} tables re-read",
            m.conflicts.get(),
            m.foreign_changes.get(),
            m.resyncs.get()
        );
        let _ = writeln!(
            o,
            "  ipset reads:       {} answered from sets kept in memory",
            m.ipset_kept.get()
        );
        o
    }
}

/// Inode of the calling thread's network namespace.
pub fn netns_inode() -> std::io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    Ok(std::fs::metadata("/proc/thread-self/ns/net")?.ino())
}

/// Enter the named network namespace (before any thread starts).
fn enter_netns(name: &str) -> Result<(), String> {
    use std::os::fd::AsFd;
    let path = format!("/run/netns/{name}");
    let f = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
    rustix::thread::move_into_link_name_space(
        f.as_fd(),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .map_err(|e| format!("setns {path}: {e}"))
}

/// Descriptors the daemon needs beyond one per client.
const OWN_FDS: u64 = 64;

/// Raise the soft limit of open descriptors towards the hard one so that
/// `max_clients` clients fit; a warning when even the hard limit is short
/// (accepts then fail, and the acceptor pauses instead of spinning).
fn ensure_fds(max_clients: usize) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let want = max_clients as u64 + OWN_FDS;
    let mut lim = getrlimit(Resource::Nofile);
    let (cur, max) = (
        lim.current.unwrap_or(u64::MAX),
        lim.maximum.unwrap_or(u64::MAX),
    );
    if cur >= want {
        return;
    }
    lim.current = Some(want.min(max));
    let _ = setrlimit(Resource::Nofile, lim);
    if max < want {
        log::line(&format!(
            "event=warning what=\"open file limit {max} is below --max-clients {max_clients} + {OWN_FDS}; raise LimitNOFILE\""
        ));
    }
}

/// The kernel connections a daemon works through: the socket every commit
/// goes through, and the event socket that tells it of others' changes
/// (an error: no events; then every table is re-read whenever the
/// generation moved).
pub struct Kernel {
    pub sock: nft::Socket,
    pub events: Result<nft::EventSocket, nft::Error>,
}

/// Run the daemon until a stop signal ([`stop`]) or until killed. Errors
/// at start-up are returned.
pub fn serve(cfg: Config) -> Result<(), String> {
    // Before any thread starts: only the stop thread takes the signals.
    stop::block_signals();
    // The metrics endpoint listens where the caller is (the host, for a
    // daemon serving a named namespace), so bind it before entering.
    let metrics = match &cfg.metrics {
        Some(addr) => {
            Some(std::net::TcpListener::bind(addr).map_err(|e| format!("--metrics {addr}: {e}"))?)
        }
        None => None,
    };
    if let Some(n) = &cfg.netns {
        enter_netns(n)?;
    }
    ensure_fds(cfg.max_clients);
    let ino = netns_inode().map_err(|e| format!("network namespace: {e}"))?;
    let path = cfg
        .socket
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/run/nfkeeper/net-{ino}.sock")));
    let kernel = Kernel {
        sock: nft::Socket::open().map_err(|e| format!("netlink: {e}"))?,
        events: nft::EventSocket::open(),
    };
    let (sh, listener) = start(cfg, kernel, ino, &path)?;
    let bound = stop::BoundSocket::new(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stop_listener = listener.try_clone().map_err(|e| e.to_string())?;
    stop::watch(sh.clone(), bound, stop_listener).map_err(|e| e.to_string())?;
    if let Some(l) = metrics {
        listen::metrics_endpoint(sh.clone(), l)?;
    }
    listen::accept_loop(sh, listener);
    Ok(())
}

/// Load the model through `kernel`, start the event and writer threads
/// and bind the socket at `path`; the caller runs the accept loop
/// (`listen::accept_loop`). `ino` is the served namespace's inode, for
/// status.
pub fn start(
    cfg: Config,
    kernel: Kernel,
    ino: u64,
    path: &std::path::Path,
) -> Result<(Arc<Shared>, std::os::unix::net::UnixListener), String> {
    let t0 = Instant::now();
    let Kernel { mut sock, events } = kernel;
    let snap_cookie = cfg
        .settings
        .snapshots
        .then(|| sock.netns_cookie())
        .flatten();
    let coherence = coherence::Coherence::default();
    coherence.set_our_portid(sock.portid());
    let sh = Arc::new(Shared {
        warm: RwLock::new(keeper::State::default()),
        cfg,
        queue: writer::Queue::default(),
        coherence,
        metrics: metrics::Metrics::default(),
        started: Instant::now(),
        socket_path: path.to_path_buf(),
        netns_ino: ino,
        clients: AtomicUsize::new(0),
        readers_waiting: AtomicUsize::new(0),
        stopping: AtomicBool::new(false),
        busy: AtomicUsize::new(0),
        conns: Mutex::new(std::collections::HashMap::new()),
        next_conn: AtomicU64::new(0),
        kernel: Mutex::new(None),
        save_texts: Mutex::new(std::collections::HashMap::new()),
        snap_cookie,
        reaper: spawn_reaper().map_err(|e| e.to_string())?,
    });
    // Events first, then the read: a change after the read is then seen.
    if sh.coherence.watch_with(events) {
        let sh = sh.clone();
        std::thread::Builder::new()
            .name("events".into())
            .spawn(move || coherence::tick(&sh.coherence, &sh.metrics, coherence::TICK))
            .map_err(|e| e.to_string())?;
    }
    *sh.write_lock() = warm::load(&mut sock).map_err(|e| format!("reading the ruleset: {e}"))?;
    // The load's transient buffers (the dump, the rule texts) are freed
    // but glibc keeps the pages; hand them back so the resident set is the
    // model's (tens of MB at 1M rules).
    give_back_memory();
    *sh.kernel.lock().unwrap_or_else(|e| e.into_inner()) = Some(sock);
    let listener = listen::bind(path)?;
    let sz = sh.sizes();
    log::line(&format!(
        "event=start pid={} netns=net:[{ino}] socket={:?} rules={} chains={} load_ms={}",
        std::process::id(),
        path.display().to_string(),
        sz.rules,
        sz.chains,
        t0.elapsed().as_millis()
    ));
    {
        let sh = sh.clone();
        std::thread::Builder::new()
            .name("writer".into())
            .spawn(move || writer::run(&sh))
            .map_err(|e| e.to_string())?;
    }
    Ok((sh, listener))
}

/// The reaper: runs each job sent to it, in order, until the daemon's
/// `Shared` (the sender) is gone.
fn spawn_reaper() -> std::io::Result<mpsc::Sender<Reap>> {
    let (tx, rx) = mpsc::channel::<Reap>();
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || {
            for job in rx {
                job();
            }
        })?;
    Ok(tx)
}

/// Return the heap pages the allocator holds free to the system (glibc
/// keeps them otherwise). O(heap): after the initial load and after big
/// groups only.
pub(crate) fn give_back_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory of the allocator's own
    // arenas; it takes no pointers and is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}
