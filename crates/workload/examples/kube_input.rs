//! Print a kube-proxy-shaped restore input (`workload::Kube`), for
//! profiling a sync by hand: `cargo run -p nfk-workload --example
//! kube_input -- full|first|partial SERVICES [CHANGED [ROUND]]`
//! (ROUND ≥ 1 picks the changed service's endpoints, as the bench's
//! repetitions do); the `nft-full`
//! and `nft-partial` forms are `nft -f` input of kube-proxy's nftables
//! mode (`workload::kube_nft`).

use workload::Kube;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: kube_input full|first|partial|nft-full|nft-partial SERVICES [CHANGED [ROUND]]";
    let (Some(what), Some(n)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let k = Kube {
        services: n,
        endpoints: 3,
    };
    let changed = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(0);
    let round = args.get(3).and_then(|c| c.parse().ok()).unwrap_or(1);
    let text = match what.as_str() {
        "first" => k.full(true),
        "full" => k.full(false),
        "partial" => k.partial(changed, round),
        "nft-full" => k.nft_full(),
        "nft-partial" => k.nft_partial(changed, round),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    print!("{text}");
}
