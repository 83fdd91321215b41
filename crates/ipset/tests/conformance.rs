//! ipset 7.21's own test vectors (`../shared/conformance/ipset-7.21/tests`)
//! run against the in-memory model, the way ipset's `runtest.sh` runs them:
//! each `EXPECTED COMMAND` step through a small shell (`shell/`), with the
//! suite's helper scripts re-created (`./sort.sh`, `./diff.sh`, ...), and
//! `sleep` advancing a virtual clock. Steps that need a kernel or packets
//! are skipped with the reason printed; the rest must all pass for every
//! supported set type. Prints a pass table per set type.
//!
//! `CONFORMANCE_FILE="hash:ip.t comment.t"` runs only some files;
//! `CONFORMANCE_VERBOSE=1` prints every failing step with its output.

#[path = "shell/mod.rs"]
mod shell;

use shell::runner::{self, Report};

#[test]
fn ipset_vectors() {
    let Some(dir) = runner::vector_dir() else {
        eprintln!(
            "SKIP: ipset vectors not found (../shared/conformance/ipset-7.21/tests); set NFKEEPER_CONFORMANCE_DIR"
        );
        return;
    };
    let verbose = std::env::var_os("CONFORMANCE_VERBOSE").is_some();
    let mut rep = Report::default();
    for (f, ty) in runner::files(&dir) {
        let t = rep.table.entry(ty).or_default();
        runner::run_file(
            &dir,
            &f,
            Box::new(shell::Model::default()),
            &|_| None,
            t,
            &mut rep.skips,
            verbose,
        );
    }
    let failed = rep.print();
    assert!(failed.is_empty(), "{} step(s) failed", failed.len());
}

/// ipset's big_sort.sh (65536 members restored, then `-t list` and `-s save`)
/// against `big_sort.terse` / `big_sort.saved`. Those files come from an
/// older ipset (hash:ip revision 4, a hash resized to 32768 buckets, and a
/// plain string sort): compared with the header's hash tuning set aside and
/// the members as a set, and our sorted order checked to be ipset 7's
/// numeric one.
#[test]
fn big_sort_vectors() {
    let Some(dir) = shell::runner::vector_dir() else {
        eprintln!("SKIP: ipset vectors not found");
        return;
    };
    let (Ok(terse), Ok(saved)) = (
        std::fs::read_to_string(dir.join("big_sort.terse")),
        std::fs::read_to_string(dir.join("big_sort.saved")),
    ) else {
        eprintln!("SKIP: big_sort vectors not found");
        return;
    };
    let mut sh = shell::Shell::new(dir.clone(), Box::new(shell::Model::default()));
    let mut input = String::new();
    for x in 0..=255 {
        for y in 0..=255 {
            input.push_str(&format!("a test 10.10.{x}.{y}\n"));
        }
    }
    sh.fs.write("big.in", input);
    for cmd in [
        "ipset n test hash:ip",
        "ipset r < big.in",
        "ipset -t list > .foo",
        "ipset -s save > .foo2",
    ] {
        assert_eq!(sh.run(cmd), Ok(0), "{cmd}");
    }
    let strip_tuning = |l: &str| -> String {
        let mut w: Vec<&str> = l.split(' ').collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < w.len() {
            if matches!(w[i], "hashsize" | "bucketsize" | "initval") {
                i += 2;
                continue;
            }
            out.push(w[i]);
            i += 1;
        }
        w.clear();
        out.join(" ")
    };
    let norm = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("Revision:") && !l.starts_with("Size in memory"))
            .map(strip_tuning)
            .collect()
    };
    assert_eq!(norm(&sh.fs.read(".foo").unwrap()), norm(&terse));
    let ours = sh.fs.read(".foo2").unwrap();
    let (ours_head, ours_adds) = ours.split_once('\n').unwrap();
    let (want_head, want_adds) = saved.split_once('\n').unwrap();
    assert_eq!(strip_tuning(ours_head), strip_tuning(want_head));
    let mut a: Vec<&str> = ours_adds.lines().collect();
    let addr = |l: &str| -> u32 {
        l.rsplit(' ')
            .next()
            .unwrap()
            .parse::<std::net::Ipv4Addr>()
            .unwrap()
            .into()
    };
    assert!(
        a.windows(2).all(|w| addr(w[0]) < addr(w[1])),
        "-sorted orders numerically"
    );
    let mut b: Vec<&str> = want_adds.lines().collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

/// The model on its virtual clock, with `test` steps stalled: real time
/// passes (`stall` ms, as on a loaded machine) and the model's clock moves
/// with it.
struct Stalled {
    model: shell::Model,
    stall: u64,
}

impl shell::Backend for Stalled {
    fn ipset(&mut self, args: &[String], input: Option<String>) -> ipset::exec::Output {
        if args.first().is_some_and(|a| a == "test") {
            std::thread::sleep(std::time::Duration::from_millis(self.stall));
            self.model.now += self.stall;
        }
        self.model.ipset(args, input)
    }

    fn sleep(&mut self, ms: u64) {
        self.model.sleep(ms);
    }

    fn reset(&mut self) {
        self.model.reset();
    }
}

/// The runner tells a miss that came while a run was behind the vector's
/// timing (a stalled step) from one that came on time: a member with a
/// 1 s timeout tested after a 1.1 s stall is a late miss; a wrong
/// expectation is a miss on time.
#[test]
fn late_misses_are_told_apart() {
    let dir = std::env::temp_dir().join(format!("nfk-late-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vector = "0 ipset create t hash:ip timeout 1\n0 ipset add t 1.2.3.4\n0 sleep 0\n\
                  # present\n0 ipset test t 1.2.3.4\n# absent\n1 ipset test t 5.6.7.8\n";
    let wrong = vector.replace("1 ipset test t 5.6.7.8", "0 ipset test t 5.6.7.8");
    // (vector, stall ms, misses, late misses)
    let cases: [(&str, u64, usize, usize); 3] =
        [(vector, 0, 0, 0), (vector, 1100, 1, 1), (&wrong, 0, 1, 0)];
    for (i, (text, stall, misses, late)) in cases.into_iter().enumerate() {
        let file = format!("case{i}.t");
        std::fs::write(dir.join(&file), text).unwrap();
        let mut t = runner::Tally::default();
        let backend = Stalled {
            model: shell::Model::default(),
            stall,
        };
        let mut skips = Default::default();
        runner::run_file(
            &dir,
            &file,
            Box::new(backend),
            &|_| None,
            &mut t,
            &mut skips,
            false,
        );
        assert_eq!(
            (t.misses.len(), t.late),
            (misses, late),
            "case {i} (stall {stall} ms): {:?}",
            t.misses
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
