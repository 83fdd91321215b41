//! `baseline-bench`: the firewall suites against the baseline tools
//! (iptables-legacy, iptables-nft, nft), each case in a private network
//! namespace. Prints the Markdown table and writes `results.csv`,
//! `results.json` and `results.md` to `--out`.
//!
//! Usage: `cargo run --release -p nfk-bench --bin baseline-bench -- --suite
//! cf|ruleset|packet|all[,…] [options]` (`--help` lists them; the same as
//! `nfkeeper bench`). Needs root (it creates network namespaces); the
//! host's own firewall is never touched.

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(bench::suites::cli::main("baseline-bench", &argv));
}
