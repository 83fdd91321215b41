//! Time a restore of N members into one hash:ip set and a sorted save.
//! `cargo run --release -p nfk-ipset --example restore_bench -- 65536`
use ipset::exec::{run, Ctx, NoMirror};
use ipset::model::Store;
use std::time::Instant;

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(65536);
    let mut input = String::from("create test hash:ip maxelem 1000000\n");
    for i in 0..n {
        input.push_str(&format!(
            "add test 10.{}.{}.{}\n",
            i >> 16 & 255,
            i >> 8 & 255,
            i & 255
        ));
    }
    let mut store = Store::new();
    let mut m = NoMirror;
    let mut ctx = Ctx {
        store: &mut store,
        mirror: &mut m,
        now: 0,
    };
    let t = Instant::now();
    let o = run(&mut ctx, &["restore"], Some(&input));
    let restore = t.elapsed();
    assert_eq!(o.code, 0, "{}", o.stderr);
    let t = Instant::now();
    let o = run(&mut ctx, &["-s", "save"], None);
    let save = t.elapsed();
    println!(
        "restore {n} members: {restore:?}; sorted save ({} bytes): {save:?}",
        o.stdout.len()
    );
}
