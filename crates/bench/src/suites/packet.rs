//! The `packet` suite: what N rules in front of the accepting one cost the
//! packets, for the scenarios of the nftables-vs-iptables packet-path study.
//!
//! Topology (two namespaces, rules on the server's input path): a client
//! namespace (198.18.0.1, device `vc`) and a server namespace (198.18.0.2
//! and the probe address 198.18.0.3, device `vs`) joined by a veth pair; the
//! tool under test loads its ruleset into the server namespace (INPUT, raw
//! PREROUTING or netdev ingress, see [`Variant`]). Each (variant, protocol,
//! N, adapter) gets a fresh pair; nothing runs in the host's namespace.
//!
//! Method: setup (the pair, until it carries packets; `ipset restore`; the
//! tool's restore) is untimed. Then one check: traffic to the server's port
//! passes, and a probe the last generated rule matches is dropped (proof
//! that the rules sit in the path); either failing is a FAIL. Then `reps`
//! measurements of `duration`: a TCP bulk transfer or a flood of 64-byte
//! UDP packets (our own generator, [`traffic`]); a measurement where
//! nothing gets through is a FAIL. The adapters of a row are set up side by
//! side and measured in turn within each repetition, so a change in the
//! machine's load lands on all of them.
//!
//! Units: a [`Record`]'s samples are seconds (lower is better) everywhere,
//! so the packet suite records the cost of a unit of traffic: seconds per
//! Gbit received (TCP) and seconds per packet delivered (UDP), the exact
//! inverses of throughput and packet rate. [`rate`] turns them back (the
//! report shows rates through it); [`appendix`] is the method's note.
//!
//! Scenario k (k.kube, [`kube`]) loads kube-proxy's nat table instead and
//! measures new connections to a service (the first packet of each walks
//! the nat table) and one established connection.
//!
//! What it is not: a NIC benchmark. veth hands packets over in the
//! sender's CPU, so the receive path (and the rules) mostly run on the
//! client's CPU; TCP uses veth's segmentation offloads (rules see 64 KiB
//! segments), so its throughput reacts to N far less than the small-packet
//! rate does.

pub mod kube;
mod rules;
mod traffic;

pub use rules::{Blocked, Dialect, Install, Proto, Variant, TRAFFIC_PORT, VARIANTS};

use super::model::{Cmd, Op, Ruleset};
use super::report::{Record, Status, Summary};
use super::sets::SetOp;
use super::{Adapter, Opts, Pin};
use crate::netns::Netns;
use std::collections::HashMap;
use std::fmt::Write;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::time::{Duration, Instant};
pub use traffic::pin;
use traffic::Place;

const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// A second server address; the client reaches it from the blocked
/// source address (a route with `src`), so std sockets need no bind.
const PROBE: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);
/// How long a probe that must be dropped is given to arrive.
const PROBE_WAIT: Duration = Duration::from_millis(300);
/// How long a probe that must pass may take (it returns when it passes).
const PASS_WAIT: Duration = Duration::from_secs(2);
/// How long a new veth pair may take to carry packets.
const SETTLE: Duration = Duration::from_secs(5);

/// Repetitions of each measurement in a quick run (without `--reps`).
const QUICK_REPS: usize = 5;

/// What the suite runs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// N; 0 (no rules, the path's ceiling) is always measured.
    pub sizes: Vec<usize>,
    pub reps: usize,
    /// Measurements per row and adapter run first and discarded
    /// ([`Opts::warmup`]).
    pub warmup: usize,
    /// Length of one TCP measurement.
    pub duration: Duration,
    /// Length of one UDP measurement.
    pub udp_duration: Duration,
    /// Limit of one measurement (every socket wait is bounded by it).
    pub limit: Duration,
    /// Limit of each setup command.
    pub setup_limit: Duration,
    pub progress: bool,
    pub variants: Vec<Variant>,
    pub protos: Vec<Proto>,
    /// The k.kube rows ([`kube::selected`]), after the variants'.
    pub kube: Vec<kube::Mode>,
    /// (client CPU, server CPU) when the machine has two CPUs or more.
    pub pin: Option<(usize, usize)>,
}

/// Which of the options behind an [`Opts`] the command line gave: the
/// packet suite has defaults of its own where they are absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Given {
    pub quick: bool,
    pub sizes: bool,
    pub reps: bool,
}

impl Plan {
    /// From the common options and which of them were given: the rows
    /// not run on request (quick: of those, the [`Variant::in_quick`]
    /// ones; `--case` picks by id prefix), sizes 0,
    /// 100, 1k, 10k (quick: 0, 1k; `--sizes` gives 0 plus those), 1 s
    /// measurements (quick: 5 repetitions of 0.2 s unless `--reps` says
    /// otherwise, which keeps `bench --quick` under its 5 minutes; the
    /// fastest of 5 short measurements moves less between runs than the
    /// fastest of 3 longer ones, BENCHMARKS §5).
    pub fn new(o: &Opts, given: Given) -> Plan {
        let quick = given.quick;
        let mut sizes = vec![0];
        if given.sizes {
            sizes.extend(&o.sizes);
        } else if quick {
            sizes.push(1_000);
        } else {
            sizes.extend([100, 1_000, 10_000]);
        }
        sizes.sort_unstable();
        sizes.dedup();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Plan {
            sizes,
            reps: if quick && !given.reps {
                QUICK_REPS
            } else {
                o.reps.max(1)
            },
            duration: Duration::from_millis(if quick { 200 } else { 1000 }),
            udp_duration: Duration::from_millis(if quick { 200 } else { 1000 }),
            limit: o.limit,
            setup_limit: o.setup_limit,
            progress: o.progress,
            variants: VARIANTS
                .iter()
                .copied()
                .filter(|v| {
                    if o.cases.is_empty() {
                        !v.on_request() && (!quick || v.in_quick())
                    } else {
                        o.cases.iter().any(|c| v.id().starts_with(c.as_str()))
                    }
                })
                .collect(),
            protos: vec![Proto::Tcp, Proto::Udp],
            kube: kube::selected(&o.cases, quick),
            pin: match o.pin {
                Pin::Default => (cpus >= 2).then_some((0, 1)),
                Pin::Off => None,
                Pin::Cpus(c, sv) => Some((c, sv)),
            },
            warmup: o.warmup,
        }
    }
}

/// nft reads nft files; every other adapter reads iptables-restore input.
pub fn dialect(adapter: &str) -> Dialect {
    if adapter == "nft" {
        Dialect::Nft
    } else {
        Dialect::Iptables
    }
}

/// The stable id of a (variant, protocol) row.
pub fn case_id(v: Variant, p: Proto) -> String {
    format!("{}.{}", v.id(), p.name())
}

fn case_name(v: Variant, p: Proto) -> String {
    let metric = match p {
        Proto::Tcp => "TCP bulk, s per Gbit",
        Proto::Udp => "UDP 64 B, s per packet",
    };
    format!("{}; {metric}", v.title())
}

/// A packet record's rate: unit and min / median / max of the inverted
/// samples (Gbit/s for TCP and k.kube.steady, kpps for UDP, kconn/s for
/// k.kube.first); `None` for other records or without samples.
pub fn rate(r: &Record) -> Option<(&'static str, Summary)> {
    if r.suite != "packet" {
        return None;
    }
    let (unit, scale) = if r.case.ends_with(".tcp") || r.case == kube::Mode::Steady.id() {
        ("Gbit/s", 1.0)
    } else if r.case.ends_with(".udp") {
        ("kpps", 1e-3)
    } else if r.case == kube::Mode::First.id() {
        ("kconn/s", 1e-3)
    } else {
        return None;
    };
    let secs = r.summary()?;
    let inv: Vec<f64> = r.samples.iter().map(|s| scale / s).collect();
    // `fast` stays the rate of the fastest half (the highest rates), not
    // the mean of the lowest rates `of` would give.
    Summary::of(&inv).map(|s| {
        let fast = scale / secs.fast;
        (unit, Summary { fast, ..s })
    })
}

/// The two namespaces and their veth pair, deleted on drop.
struct Pair {
    client: Netns,
    server: Netns,
}

fn ns_path(ns: &Netns) -> PathBuf {
    PathBuf::from("/run/netns").join(ns.name())
}

/// Runs `text` as `ip -batch -` inside `ns`.
fn ip_batch(ns: &Netns, text: &str, limit: Duration) -> Result<(), String> {
    let p = ns.stage("ip", text.as_bytes()).map_err(|e| e.to_string())?;
    let r = ns
        .run(&["ip", "-batch", "-"], Some(&p), limit)
        .map_err(|e| format!("ip -batch: {e}"))?;
    if !r.status.success() {
        return Err(format!("ip -batch: {}", r.stderr.trim()));
    }
    Ok(())
}

/// The `ip` commands of the two ends; the client also owns `blocked` (the
/// source the rules match) and reaches [`PROBE`] from it.
fn topology(server: &str, blocked: Option<Ipv4Addr>) -> (String, String) {
    let dev = rules::SERVER_DEV;
    let mut c = format!(
        "link add vc type veth peer name {dev} netns {server}\n\
         addr add {CLIENT}/24 dev vc\nlink set lo up\nlink set vc up\n"
    );
    if let Some(b) = blocked {
        let _ = write!(
            c,
            "addr add {b}/32 dev vc\nroute add {PROBE}/32 dev vc src {b}\n"
        );
    }
    let s = format!(
        "addr add {SERVER}/24 dev {dev}\naddr add {PROBE}/24 dev {dev}\n\
         link set lo up\nlink set {dev} up\nroute add 10.0.0.0/8 via {CLIENT}\n"
    );
    (c, s)
}

impl Pair {
    fn new(blocked: Option<Ipv4Addr>, limit: Duration) -> Result<Pair, String> {
        let client = Netns::new().map_err(|e| format!("namespace: {e}"))?;
        let server = Netns::new().map_err(|e| format!("namespace: {e}"))?;
        let (c, s) = topology(server.name(), blocked);
        ip_batch(&client, &c, limit)?;
        ip_batch(&server, &s, limit)?;
        let pair = Pair { client, server };
        pair.settle()?;
        Ok(pair)
    }

    /// Waits until the pair carries packets. A device set up drops what it
    /// is given until the kernel's link watch activates its queue (up to
    /// about a second later); before that, a dropped probe would prove
    /// nothing about the rules.
    fn settle(&self) -> Result<(), String> {
        let (cl, sv) = self.places(None);
        let dst = SocketAddrV4::new(SERVER, TRAFFIC_PORT);
        let t0 = Instant::now();
        while t0.elapsed() < SETTLE {
            if traffic::probe(&cl, &sv, Proto::Udp, dst, Duration::from_millis(50))? {
                return Ok(());
            }
        }
        Err(format!("the veth pair carried nothing for {SETTLE:?}"))
    }

    fn places(&self, pin: Option<(usize, usize)>) -> (Place, Place) {
        (
            Place {
                ns: ns_path(&self.client),
                cpu: pin.map(|p| p.0),
            },
            Place {
                ns: ns_path(&self.server),
                cpu: pin.map(|p| p.1),
            },
        )
    }
}

/// The first line of a failed command's complaint.
fn complaint(argv: &[String], stderr: &str) -> String {
    let line = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    format!("`{}`: {}", argv.join(" "), line.trim())
}

/// The command that restores `i`'s ipset for `a`: `a`'s own ipset
/// restore (the one its set `Op::Restore` uses) when `i` asks for it and
/// `a` has one, else the ipset tool's.
fn set_restore(a: &dyn Adapter, i: &Install) -> Cmd {
    let own = || {
        let op = Op::Set(SetOp::Restore {
            set: rules::SET.into(),
            n: 0,
        });
        a.commands(&op)?.pop()
    };
    let c = i.own_set.then(own).flatten();
    c.unwrap_or_else(|| Cmd::new(["ipset", "restore"]))
}

/// Loads `i` into `ns`: the ipset (see [`set_restore`]) and the nfacct
/// object first, then the adapter's restore command (the one its
/// `Op::Restore` uses) with our text as its input.
fn install(ns: &Netns, a: &dyn Adapter, i: &Install, limit: Duration) -> Result<(), String> {
    let mut cmds = Vec::new();
    if let Some(set) = &i.ipset {
        let mut c = set_restore(a, i);
        c.stdin = Some(set.clone());
        cmds.push(c);
    }
    if let Some(acct) = i.nfacct {
        cmds.push(Cmd::new(["nfacct", "add", acct]));
    }
    let restore = Op::Restore {
        rs: Ruleset { tables: Vec::new() },
        noflush: false,
    };
    let mut c = a
        .commands(&restore)
        .and_then(|mut v| v.pop())
        .ok_or_else(|| format!("{} has no restore command", a.name()))?;
    c.stdin = Some(i.rules.clone());
    cmds.push(c);
    for (k, c) in cmds.iter().enumerate() {
        let text = c.stdin.as_deref().unwrap_or("");
        let p = ns
            .stage(&format!("rules{k}"), text.as_bytes())
            .map_err(|e| e.to_string())?;
        let r = a
            .exec(ns, c, Some(&p), limit)
            .map_err(|e| format!("`{}`: {e}", c.argv.join(" ")))?;
        if !r.status.success() {
            return Err(complaint(&c.argv, &r.stderr));
        }
    }
    Ok(())
}

/// Traffic to the server's port passes; the probe of the last rule does not.
fn verify(cl: &Place, sv: &Place, p: Proto, blocked: Option<Blocked>) -> Result<(), String> {
    let ok = SocketAddrV4::new(SERVER, TRAFFIC_PORT);
    if !traffic::probe(cl, sv, p, ok, PASS_WAIT)? {
        return Err(format!(
            "{} to {ok} (must pass) was dropped",
            p.name().to_uppercase()
        ));
    }
    if let Some(b) = blocked {
        let dst = SocketAddrV4::new(if b.src.is_some() { PROBE } else { SERVER }, b.port);
        if traffic::probe(cl, sv, p, dst, PROBE_WAIT)? {
            let from = b.src.map_or(CLIENT.to_string(), |s| s.to_string());
            return Err(format!(
                "{} from {from} to port {} (matched by the last rule) got through: \
                 the rules are not in the packet path",
                p.name().to_uppercase(),
                b.port
            ));
        }
    }
    Ok(())
}

/// One measurement: the cost sample (seconds per Gbit or per packet).
fn measure(cl: &Place, sv: &Place, p: Proto, plan: &Plan) -> Result<f64, String> {
    let dst = SocketAddrV4::new(SERVER, TRAFFIC_PORT);
    match p {
        Proto::Tcp => {
            let r = traffic::tcp_bulk(cl, sv, dst, TRAFFIC_PORT, plan.duration, plan.limit)?;
            r.gbits()
                .map(|g| 1.0 / g)
                .ok_or_else(|| format!("nothing got through: {r:?}"))
        }
        Proto::Udp => {
            let r = traffic::udp_flood(cl, sv, dst, plan.udp_duration, plan.limit)?;
            r.pps()
                .map(|pps| 1.0 / pps)
                .ok_or_else(|| format!("nothing got through: {r:?}"))
        }
    }
}

/// What one adapter can do: its own availability and ipset's.
struct Avail<'a> {
    tool: &'a Result<String, String>,
    ipset: &'a Result<String, String>,
}

/// One adapter's state in a row: ready to measure (the pair lives while
/// it does), or finished with a status.
enum Slot {
    Ready {
        /// Boxed: the namespaces and veth pair are large and few.
        _pair: Box<Pair>,
        cl: Place,
        sv: Place,
    },
    Done(Status),
}

/// What one adapter measures in a row: the same tool loading the same
/// text (and ipset) with the same probe and traffic measures the same
/// thing, so a row equal to an earlier one repeats that row's samples
/// instead of measuring again (N = 0 of the rule-list scenarios, whose
/// ruleset is only the accepting rule; e.input of the iptables tools,
/// which is a.addr's list; h.set of nft, which is e.input's set). The text is kept as its length and a 128-bit
/// digest (two SipHash passes), not itself: a full run has hundreds of
/// rows of up to megabytes each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Measured {
    adapter: String,
    proto: Proto,
    blocked: Option<Blocked>,
    len: usize,
    digest: (u64, u64),
}

fn measured(v: Variant, p: Proto, n: usize, d: Dialect, adapter: &str) -> Option<Measured> {
    use std::hash::{Hash, Hasher};
    let inst = v.install(d, p, n)?;
    let pass = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut h);
        inst.hash(&mut h);
        h.finish()
    };
    Some(Measured {
        adapter: adapter.to_string(),
        proto: p,
        blocked: v.blocked(n),
        len: inst.rules.len() + inst.ipset.as_ref().map_or(0, |t| t.len()),
        digest: (pass(0), pass(1)),
    })
}

/// Setup and check of one (variant, protocol, N) for one adapter.
fn prepare(plan: &Plan, (v, p, n): (Variant, Proto, usize), a: &dyn Adapter, av: &Avail) -> Slot {
    if let Err(why) = av.tool {
        return Slot::Done(Status::Unavailable(why.clone()));
    }
    let Some(inst) = v.install(dialect(a.name()), p, n) else {
        return Slot::Done(Status::NoForm);
    };
    let tool_set = inst.ipset.is_some() && set_restore(a, &inst).argv[0] == "ipset";
    if let (true, Err(why)) = (tool_set, av.ipset) {
        return Slot::Done(Status::Unavailable(why.clone()));
    }
    let blocked = v.blocked(n);
    let pair = match Pair::new(blocked.and_then(|b| b.src), plan.setup_limit) {
        Ok(x) => x,
        Err(e) => return Slot::Done(Status::Fail(format!("topology: {e}"))),
    };
    if let Err(e) = install(&pair.server, a, &inst, plan.setup_limit) {
        return Slot::Done(Status::Fail(format!("setup: {e}")));
    }
    let (cl, sv) = pair.places(plan.pin);
    if let Err(e) = verify(&cl, &sv, p, blocked) {
        return Slot::Done(Status::Fail(format!("verify: {e}")));
    }
    Slot::Ready {
        _pair: Box::new(pair),
        cl,
        sv,
    }
}

/// The measurements of one row: repetition by repetition, every ready
/// adapter once per repetition (starting one further each time), so that
/// a change in the machine's load lands on all of them alike. A failed or
/// overlong measurement ends that adapter's row.
/// `measure` is one measurement's sample from the client's and the
/// server's place.
fn measure_row(
    plan: &Plan,
    slots: &mut [Slot],
    measure: &dyn Fn(&Place, &Place) -> Result<f64, String>,
) -> Vec<Vec<f64>> {
    let mut samples = vec![Vec::with_capacity(plan.reps); slots.len()];
    for rep in 0..plan.warmup + plan.reps {
        for i in 0..slots.len() {
            let k = (i + rep) % slots.len();
            let Slot::Ready { cl, sv, .. } = &slots[k] else {
                continue;
            };
            let t0 = Instant::now();
            let end = match measure(cl, sv) {
                Ok(_) if t0.elapsed() > plan.limit => {
                    Some(Status::Timeout(plan.limit.as_secs_f64()))
                }
                Ok(x) => {
                    if rep >= plan.warmup {
                        samples[k].push(x);
                    }
                    None
                }
                Err(e) => Some(Status::Fail(e)),
            };
            if let Some(st) = end {
                slots[k] = Slot::Done(st);
            }
        }
    }
    samples
}

/// `ipset --version`, run inside a private namespace.
fn ipset_version(limit: Duration) -> Result<String, String> {
    let missing = "ipset not found; install it with: apt-get install ipset".to_string();
    let ns = Netns::new().map_err(|e| format!("namespace: {e}"))?;
    match ns.run(&["ipset", "--version"], None, limit) {
        Ok(r) if r.status.success() => Ok(r.stdout.lines().next().unwrap_or("").trim().into()),
        Ok(r) => Err(format!("ipset --version failed: {}", r.stderr.trim())),
        Err(_) => Err(missing),
    }
}

/// Runs the plan with every adapter (interleaved per repetition, see
/// [`measure_row`]). Records in row order: variant, protocol, N.
pub fn run(plan: &Plan, adapters: &[Box<dyn Adapter>]) -> Vec<Record> {
    // Through the daemon nfkeeper writes the same kernel objects as in
    // direct mode: packets cannot tell them apart, so it is measured once.
    let adapters: Vec<&dyn Adapter> = adapters
        .iter()
        .map(|a| a.as_ref())
        .filter(|a| a.name() != "nfkeeper-daemon")
        .collect();
    let tools: Vec<Result<String, String>> = adapters.iter().map(|a| a.available()).collect();
    let ipset = ipset_version(plan.setup_limit);
    let rows: Vec<(Variant, Proto, usize)> = plan
        .variants
        .iter()
        .flat_map(|&v| {
            plan.protos
                .iter()
                .flat_map(move |&p| plan.sizes.iter().map(move |&n| (v, p, n)))
        })
        .collect();
    let kube_rows = kube::rows(plan);
    let total = (rows.len() + kube_rows.len()) * adapters.len();
    let t0 = Instant::now();
    let mut out = Vec::with_capacity(total);
    let mut done: HashMap<Measured, (Status, Vec<f64>)> = HashMap::new();
    for &(v, p, n) in &rows {
        // Per adapter: what it measures in this row, and whether an
        // earlier row measured exactly that already.
        let keys: Vec<Option<Measured>> = adapters
            .iter()
            .map(|a| measured(v, p, n, dialect(a.name()), a.name()))
            .collect();
        let mut slots: Vec<Slot> = adapters
            .iter()
            .zip(&tools)
            .zip(&keys)
            .map(|((a, tool), key)| {
                if let Some(seen) = key.as_ref().and_then(|k| done.get(k)) {
                    return Slot::Done(seen.0.clone());
                }
                let av = Avail {
                    tool,
                    ipset: &ipset,
                };
                prepare(plan, (v, p, n), *a, &av)
            })
            .collect();
        let mut samples = measure_row(plan, &mut slots, &|cl, sv| measure(cl, sv, p, plan));
        for ((slot, key), got) in slots.iter().zip(&keys).zip(&mut samples) {
            let Some(key) = key else { continue };
            match done.get(key) {
                Some((_, seen)) => *got = seen.clone(),
                None => {
                    let st = match slot {
                        Slot::Ready { .. } => Status::Ok,
                        Slot::Done(st) => st.clone(),
                    };
                    done.insert(key.clone(), (st, got.clone()));
                }
            }
        }
        let row = Row {
            case: case_id(v, p),
            name: case_name(v, p),
            n,
        };
        finish(
            plan,
            &row,
            (&adapters, slots, samples),
            (total, t0),
            &mut out,
        );
    }
    for &(m, n) in &kube_rows {
        // The text is made once per row (tens of MB at 20k services).
        let text = kube::ruleset(n);
        let (mut slots, target) = match kube::target(&text) {
            Ok(t) => {
                let slots: Vec<Slot> = adapters
                    .iter()
                    .zip(&tools)
                    .map(|(a, tool)| kube::prepare(plan, (n, &text, &t), *a, tool))
                    .collect();
                (slots, Some(t))
            }
            Err(e) => {
                let st = Status::Fail(format!("ruleset: {e}"));
                (
                    adapters.iter().map(|_| Slot::Done(st.clone())).collect(),
                    None,
                )
            }
        };
        drop(text);
        let samples = measure_row(plan, &mut slots, &|cl, sv| match &target {
            Some(t) => kube::measure(cl, sv, m, t, plan),
            None => Err("no target".into()),
        });
        let row = Row {
            case: m.id().into(),
            name: m.name().into(),
            n,
        };
        finish(
            plan,
            &row,
            (&adapters, slots, samples),
            (total, t0),
            &mut out,
        );
    }
    out
}

/// What names a row's records.
struct Row {
    case: String,
    name: String,
    n: usize,
}

/// The records of one row, one per adapter, in adapter order; with
/// `--progress` each is shown as it is added (`total` records expected
/// since `t0`).
fn finish(
    plan: &Plan,
    row: &Row,
    (adapters, slots, samples): (&[&dyn Adapter], Vec<Slot>, Vec<Vec<f64>>),
    (total, t0): (usize, Instant),
    out: &mut Vec<Record>,
) {
    for ((a, slot), samples) in adapters.iter().zip(slots).zip(samples) {
        let status = match slot {
            Slot::Ready { .. } => Status::Ok,
            Slot::Done(st) => st,
        };
        let r = Record {
            suite: "packet".into(),
            case: row.case.clone(),
            name: row.name.clone(),
            adapter: a.name().to_string(),
            n: row.n,
            status,
            samples,
        };
        if plan.progress {
            progress(&r, out.len() + 1, total, t0);
        }
        out.push(r);
    }
}

fn progress(r: &Record, done: usize, total: usize, t0: Instant) {
    let el = t0.elapsed().as_secs_f64();
    let left = el / done as f64 * (total - done) as f64;
    let what = match rate(r) {
        Some((unit, s)) => format!("{} {unit}", crate::fmt_num(s.median)),
        None => format!("{} {}", r.status.word(), r.status.detail()),
    };
    eprintln!(
        "[packet {done}/{total}, ~{left:.0} s left in packet] {} N={} {}: {what}",
        r.case, r.n, r.adapter
    );
}

/// The method's notes under the tables; empty without packet records.
/// (The report shows packet records as rates through [`rate`].)
pub fn appendix(plan: &Plan, records: &[Record]) -> String {
    if !records.iter().any(|r| r.suite == "packet") {
        return String::new();
    }
    let mut s = String::new();
    let pin = match plan.pin {
        Some((c, v)) => format!("client thread pinned to CPU {c}, server thread to CPU {v}"),
        None => "not pinned (fewer than two CPUs, or --no-pin)".into(),
    };
    let _ = write!(
        s,
        "\nPacket method: client and server namespaces joined by veth, rules in \
         the server namespace (INPUT; raw PREROUTING or netdev ingress for e.raw \
         / e.ingress), hook policy DROP, N non-matching rules then the accepting \
         one (g.compat: after one `-m recent --set` rule that lists the \
         traffic's source, so that every rule runs its xtables module; h.set: \
         one `-m set` rule on an ipset made by the tool's own ipset where it \
         has one, nfkeeper's, else by the ipset tool). {}{} repetitions of each measurement: a TCP bulk transfer of {:.1} s (one connection, \
         128 KiB writes; the bytes the server read) or a {:.1} s UDP flood of 64-byte IP \
         packets (the packets that reached the server's socket per second of \
         sending: read, or dropped at its full buffer, from the kernel's \
         counters). Threads of the harness in the namespaces (setns), {pin}. \
         veth runs the receive path on the sender's CPU, and TCP uses \
         segmentation offloads (rules see 64 KiB segments). Raw samples (CSV, \
         JSON) are the inverse: seconds per Gbit or per packet. Checked before \
         measuring: traffic passes, and a probe matched by the last rule is \
         dropped. A row in which a tool loads the same ruleset as in an earlier \
         row (N = 0 of the rule-list scenarios; e.input of the iptables tools, \
         which is a.addr's list; h.set of nft, which is e.input's set) is \
         measured once and shows that row's samples.\n",
        match plan.warmup {
            0 => String::new(),
            w => format!("{w} discarded, then "),
        },
        plan.reps,
        plan.duration.as_secs_f64(),
        plan.udp_duration.as_secs_f64()
    );
    if records.iter().any(|r| r.case.starts_with("k.kube")) {
        s.push_str(&kube::note());
    }
    s
}

#[cfg(test)]
mod tests;
