//! `nfkeeper-bench`: the benchmark suites, the demo and `load`, kept out
//! of the lean nfkeeper binary. `nfkeeper bench|demo|load ...` replaces
//! itself with this program (found beside it) with the same arguments;
//! `nfkeeper-bench bench|demo|load ...` runs it directly. `bench` finds
//! the nfkeeper it measures in $NFKEEPER_BIN, else beside itself.

fn main() {
    std::process::exit(bench::cmd::main(std::env::args_os().collect()));
}
