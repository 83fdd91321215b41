//! `model-bench`: the model benchmarks as a Markdown table on stdout.
//!
//! Usage: `cargo run --release -p nfk-bench --bin model-bench -- [--sizes
//! 1000,100000,1000000] [--reps N] [--op-reps N] [--batch K] [--quick]`
//!
//! This program installs a counting global allocator so the memory lines are
//! exact heap bytes (requested sizes) rather than estimates. The counting
//! costs two uncontended atomic operations per allocation, which the restore
//! timings include (a few ns against hundreds per rule).

use bench::{loadavg, model_suite, print_markdown, AllocProbe, ModelArgs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting bytes currently allocated and their peak.
struct Counting;

impl Counting {
    fn grew(by: usize) {
        let now = CURRENT.fetch_add(by, Relaxed) + by;
        PEAK.fetch_max(now, Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the counters are
// bookkeeping only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            Self::grew(l.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            Self::grew(l.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        CURRENT.fetch_sub(l.size(), Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                Self::grew(new - l.size());
            } else {
                CURRENT.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn current() -> usize {
    CURRENT.load(Relaxed)
}

fn peak() -> usize {
    PEAK.load(Relaxed)
}

fn reset_peak() {
    PEAK.store(CURRENT.load(Relaxed), Relaxed);
}

fn main() {
    let m = clap::Command::new("model-bench")
        .about("The model benchmarks with exact heap bytes per rule, as a Markdown table")
        .args(ModelArgs::args())
        .get_matches();
    let mut opts = ModelArgs::from_matches(&m).opts();
    opts.alloc = Some(AllocProbe {
        current,
        peak,
        reset_peak,
    });
    opts.progress = true;
    let load0 = loadavg();
    let results = model_suite(&opts);
    println!(
        "Model benchmarks (sizes {:?}, reps {}, op samples {} of {} ops; \
         load average {} at start, {} at end, {} CPUs)\n",
        opts.sizes,
        opts.reps,
        opts.op_reps,
        opts.batch,
        load0,
        loadavg(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    print!("{}", print_markdown(&results));
}
