//! ipset restore input and command lines applied to the ipset model.
//!
//! Input: bytes, lossily decoded as UTF-8, restored into a store that
//! already holds a few sets (so there is something to change), then each
//! input line run as a command line.
//!
//! Properties:
//! - neither the parsers nor the model panic;
//! - all or nothing: a failed restore leaves the sets as they were (their
//!   save output is unchanged);
//! - round trip (unless a word other than a comment holds a blank or a
//!   quote, which ipset's save form cannot carry either): after a successful
//!   restore, the save output restores into an empty store and saves
//!   identically.
#![no_main]

use ipset::exec::{run, Ctx, NoMirror, Output};
use ipset::model::Store;
use ipset::parse::restore::{lines, words, Line};
use libfuzzer_sys::fuzz_target;

const BASE: &str = "\
create a hash:ip timeout 60 counters comment
add a 10.0.0.1 timeout 0 packets 1 bytes 2 comment \"one\"
create n hash:net,iface
add n 10.0.0.0/8,eth0 nomatch
create b bitmap:port range 1-1024
add b 22-25
create m bitmap:ip,mac range 10.1.0.0/24 timeout 5
add m 10.1.0.1
create l list:set size 4
add l a
";

/// Milliseconds of the fixed clock every step runs at.
const NOW: u64 = 1_000_000;

fn exec(store: &mut Store, args: &[&str], input: Option<&str>) -> Output {
    let mut m = NoMirror;
    let mut ctx = Ctx {
        store,
        mirror: &mut m,
        now: NOW,
    };
    run(&mut ctx, args, input)
}

fn save(store: &mut Store) -> String {
    exec(store, &["save"], None).stdout
}

/// Whether the save form carries every word of the input.
fn carried(input: &str) -> bool {
    lines(input).into_iter().all(|(_, l)| {
        let Line::Command(text) = l else { return true };
        let Ok(w) = words(text) else { return true };
        w.iter().enumerate().all(|(i, x)| {
            let special = x.contains(|c: char| c == '"' || c.is_whitespace());
            !special || (i > 0 && w[i - 1] == "comment")
        })
    })
}

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    let mut store = Store::new();
    assert_eq!(exec(&mut store, &["restore"], Some(BASE)).code, 0, "base restores");
    let before = save(&mut store);
    let o = exec(&mut store, &["restore"], Some(&input));
    let after = save(&mut store);
    if o.code != 0 {
        assert_eq!(before, after, "a failed restore changed the sets");
    } else if carried(&input) {
        let mut fresh = Store::new();
        let r = exec(&mut fresh, &["restore"], Some(&after));
        assert_eq!(r.code, 0, "saved sets do not restore: {}\n{after}", r.stderr);
        assert_eq!(save(&mut fresh), after, "save differs after a round trip");
    }
    for line in input.lines().take(16) {
        let w: Vec<&str> = line.split_whitespace().collect();
        exec(&mut store, &w, Some(""));
    }
});
