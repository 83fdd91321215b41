//! The report of a small synthetic run against the files under
//! `testdata/report/`: REPORT.md, report.html and every SVG. After a
//! deliberate change of the output, regenerate them with
//! `NFK_UPDATE_GOLDEN=1 cargo test -p nfk-bench --test report_golden` and
//! look at the diff (and at the SVGs in a browser).

use bench::suites::machine::RunInfo;
use bench::suites::report::render_files;
use bench::suites::{Machine, Record, Status};
use std::path::PathBuf;

fn rec(
    suite: &str,
    case: &str,
    name: &str,
    adapter: &str,
    n: usize,
    status: Status,
    samples: &[f64],
) -> Record {
    Record {
        suite: suite.into(),
        case: case.into(),
        name: name.into(),
        adapter: adapter.into(),
        n,
        status,
        samples: samples.to_vec(),
    }
}

fn machine() -> Machine {
    Machine {
        kernel: "6.18.0-test".into(),
        cpus: 2,
        cpu_model: "Example CPU <model> @ 2.0GHz".into(),
        memory: "7.8 GiB".into(),
        distro: "Debian GNU/Linux 12 (bookworm)".into(),
        loadavg: "0.50".into(),
        date: "2026-11-22T07:05:00Z".into(),
        nfkeeper: "0.1.0".into(),
        command: "nfkeeper bench cf --quick --out '/tmp/a b'".into(),
        tools: vec![
            ("nfkeeper".into(), "nfkeeper 0.1.0".into()),
            ("iptables-legacy".into(), "iptables v1.8.9 (legacy)".into()),
            ("iptables-nft".into(), "iptables v1.8.9 (nf_tables)".into()),
            (
                "nft".into(),
                "missing: not installed (apt-get install nftables)".into(),
            ),
        ],
        run: RunInfo {
            reps: 3,
            limit: 10.0,
            wall: 61.4,
            load_end: "1.10".into(),
            rcu_expedited: false,
        },
    }
}

/// A run with every status: values over a wide and a narrow range, a
/// failure that had collected samples, a step killed at the limit, a tool
/// without the operation and a missing tool, names that need escaping.
fn records() -> Vec<Record> {
    let ok = Status::Ok;
    let fail = || Status::Fail("`iptables -A` exit 4: <resource> & \"lock\"".into());
    let missing =
        || Status::Unavailable("nft not found; install it with: apt-get install nftables".into());
    let append = "append N rules, one process each";
    let per_call = "append N rules, one process each, per call";
    let mut v = Vec::new();
    for (n, k) in [(100, 1.0), (1000, 10.0), (3000, 30.0)] {
        v.push(rec(
            "cf",
            "cf.append",
            append,
            "nfkeeper",
            n,
            ok.clone(),
            &[0.0014 * k, 0.0013 * k, 0.0016 * k],
        ));
        v.push(rec(
            "cf",
            "cf.append.call",
            per_call,
            "nfkeeper",
            n,
            ok.clone(),
            &[0.0012, 0.0013, 0.0019],
        ));
        let legacy = if n == 3000 {
            Status::Timeout(10.0)
        } else {
            ok.clone()
        };
        let samples: &[f64] = if n == 3000 {
            &[]
        } else {
            &[0.0012 * k * k, 0.0011 * k * k, 0.0013 * k * k]
        };
        v.push(rec(
            "cf",
            "cf.append",
            append,
            "iptables-legacy",
            n,
            legacy,
            samples,
        ));
        // The runner reports per-call times of successful steps only.
        if n != 3000 {
            v.push(rec(
                "cf",
                "cf.append.call",
                per_call,
                "iptables-legacy",
                n,
                ok.clone(),
                &[0.0011 * k, 0.0012 * k, 0.0015 * k],
            ));
        }
        let nft = if n == 1000 { fail() } else { ok.clone() };
        v.push(rec(
            "cf",
            "cf.append",
            append,
            "iptables-nft",
            n,
            nft,
            &[0.0016 * k, 0.0015 * k],
        ));
        if n != 1000 {
            v.push(rec(
                "cf",
                "cf.append.call",
                per_call,
                "iptables-nft",
                n,
                ok.clone(),
                &[0.0015, 0.0016, 0.0017],
            ));
        }
        v.push(rec("cf", "cf.append", append, "nft", n, missing(), &[]));
    }
    let big = "5k rules + 10k chains";
    for (id, what, t) in [
        ("cf.big.N", "create a chain (-N)", 0.003),
        ("cf.big.A", "append one rule to FORWARD (-A)", 0.004),
        ("cf.big.S", "list <the table> & count (-S)", 0.05),
    ] {
        let name = format!("{big}: {what}");
        v.push(rec(
            "cf",
            id,
            &name,
            "nfkeeper",
            5000,
            ok.clone(),
            &[t, t * 1.1, t * 0.9],
        ));
        v.push(rec(
            "cf",
            id,
            &name,
            "iptables-legacy",
            5000,
            ok.clone(),
            &[t * 9.0, t * 10.0, t * 11.0],
        ));
        let st = if id == "cf.big.S" {
            Status::NoForm
        } else {
            ok.clone()
        };
        let s: &[f64] = if id == "cf.big.S" {
            &[]
        } else {
            &[t * 0.8, t * 0.9, t]
        };
        v.push(rec("cf", id, &name, "iptables-nft", 5000, st, s));
        v.push(rec("cf", id, &name, "nft", 5000, missing(), &[]));
    }
    for n in [100, 1000, 10_000] {
        let f = n as f64 / 100.0;
        let name = "restore N rules";
        v.push(rec(
            "ruleset",
            "1.1",
            name,
            "nfkeeper",
            n,
            ok.clone(),
            &[0.010 + 0.0001 * f, 0.011 + 0.0001 * f],
        ));
        v.push(rec(
            "ruleset",
            "1.1",
            name,
            "iptables-legacy",
            n,
            ok.clone(),
            &[0.012 + 0.0002 * f, 0.013 + 0.0002 * f],
        ));
        v.push(rec(
            "ruleset",
            "1.1",
            name,
            "iptables-nft",
            n,
            if n == 10_000 { fail() } else { ok.clone() },
            &[0.02],
        ));
        v.push(rec("ruleset", "1.1", name, "nft", n, missing(), &[]));
    }
    for (n, gbit) in [(0, 9.0), (100, 8.9), (1000, 8.0), (10_000, 4.0)] {
        let name = "single addresses; TCP bulk, s per Gbit";
        let cost = |g: f64| 1.0 / g;
        v.push(rec(
            "packet",
            "single.tcp",
            name,
            "nfkeeper",
            n,
            ok.clone(),
            &[cost(gbit), cost(gbit * 1.05)],
        ));
        v.push(rec(
            "packet",
            "single.tcp",
            name,
            "iptables-legacy",
            n,
            ok.clone(),
            &[cost(gbit * 0.5), cost(gbit * 0.6)],
        ));
        v.push(rec(
            "packet",
            "single.tcp",
            name,
            "iptables-nft",
            n,
            if n == 0 {
                ok.clone()
            } else {
                Status::Timeout(10.0)
            },
            &[cost(gbit)],
        ));
        v.push(rec("packet", "single.tcp", name, "nft", n, missing(), &[]));
    }
    v
}

fn adapters() -> Vec<String> {
    ["nfkeeper", "iptables-legacy", "iptables-nft", "nft"]
        .map(String::from)
        .to_vec()
}

#[test]
fn report_matches_golden_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/report");
    let files = render_files(&machine(), &records(), &adapters());
    let update = std::env::var_os("NFK_UPDATE_GOLDEN").is_some();
    if update {
        std::fs::create_dir_all(&dir).unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
    }
    let mut stale = Vec::new();
    for (name, body) in &files {
        let path = dir.join(name);
        if update {
            std::fs::write(&path, body).unwrap();
            continue;
        }
        let want =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if &want != body {
            let line = want.lines().zip(body.lines()).position(|(a, b)| a != b);
            stale.push(format!(
                "{name} differs (first at line {})",
                line.map_or(0, |l| l + 1)
            ));
        }
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut made: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    made.sort();
    assert_eq!(
        on_disk, made,
        "golden files without a counterpart, or missing"
    );
    assert!(
        stale.is_empty(),
        "{stale:?}; regenerate with NFK_UPDATE_GOLDEN=1 if intended"
    );
}

/// What the golden files must show, stated independently of them.
#[test]
fn report_content() {
    let files = render_files(&machine(), &records(), &adapters());
    let get = |n: &str| &files.iter().find(|(f, _)| f == n).unwrap().1;
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "REPORT.md",
            "report.html",
            "cf-cf.append.svg",
            "cf-cf.append.call.svg",
            "cf-n5000.svg",
            "ruleset-1.1.svg",
            "packet-single.tcp.svg"
        ]
    );
    let md = get("REPORT.md");
    assert!(md.contains("![cf cf.append: append N rules, one process each](cf-cf.append.svg)"));
    assert!(md.contains("| case | N | nfkeeper | iptables-legacy | iptables-nft | nft | iptables-legacy ÷ nfkeeper |"));
    assert!(md.contains("Command: `nfkeeper bench cf --quick --out '/tmp/a b'`"));
    let html = get("report.html");
    assert_eq!(html.matches("<svg ").count(), 5, "every plot inlined");
    assert!(!html.contains("<model>") && html.contains("Example CPU &lt;model&gt;"));
    assert!(!html.contains("<the table>") && html.contains("&lt;the table&gt; &amp; count"));
    for (name, body) in files.iter().filter(|(n, _)| n.ends_with(".svg")) {
        assert!(
            body.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{name}"
        );
        assert!(!body.contains("<the table>"), "{name}: unescaped text");
    }
    // Packet costs are shown as rates: 9 Gbit/s, not 0.11 s.
    assert!(md.contains("(9.00–9.45) Gbit/s"), "{md}");
}

/// results.csv and results.json keep the format runs wrote before they
/// were written with csv and serde_json (`testdata/results/`, written by
/// the former writers from the same records): the CSV byte for byte, the
/// JSON but for its integral numbers (`1` then, `1.0` now); and `--compare`
/// reads such an earlier run.
#[test]
fn results_files_keep_their_format() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/results");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect("golden file");
    let (old_csv, old_json) = (read("results.csv"), read("results.json"));
    assert_eq!(bench::suites::to_csv(&records()), old_csv);
    let json = bench::suites::to_json(&machine(), &records());
    let integral = json
        .replace(".0,", ",")
        .replace(".0]", "]")
        .replace(".0}", "}");
    assert_eq!(integral, old_json);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        doc["records"].as_array().map(Vec::len),
        Some(records().len())
    );
    let best = bench::suites::compare::best(&old_csv).expect("an earlier run's CSV");
    let all = records();
    let steps = all
        .iter()
        .filter(|r| r.status == Status::Ok && !r.samples.is_empty())
        .map(|r| (&r.suite, &r.case, &r.name, r.n))
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(best.len(), steps.len());
}
