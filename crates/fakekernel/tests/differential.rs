//! The fake kernel against the real one: each scenario's datagrams go to
//! both (the real kernel in a fresh network namespace, skipped without
//! root), and their transcripts — replies, notifications, state after
//! every step — must be equal. Every kernel fact the fake relies on is
//! exercised here. With `FK_DIFF_DIR` set, both transcripts are written
//! there (`<scenario>.kernel`, `<scenario>.fake`).

mod common;
mod scenarios;

use common::{run, Side, Step};
use scenarios::*;

/// Runs `steps` on both kernels and compares.
fn differential(name: &str, steps: fn() -> Vec<Step>) {
    let Some((real, fake)) = testkit::in_netns(move || {
        let kernel = {
            let mut side = Side {
                req: Box::new(nft::transport::Netlink::open_requests().unwrap()),
                events: {
                    let mut t = nft::transport::Netlink::open().unwrap();
                    nft::Transport::join_group(&mut t, nft::events::NFNLGRP_NFTABLES).unwrap();
                    Box::new(t)
                },
                reader: nft::Socket::open().unwrap(),
            };
            run(&mut side, &steps())
        };
        let fk = fakekernel::Kernel::new();
        let mut side = Side {
            req: Box::new(fk.connect()),
            events: {
                let mut t = fk.connect();
                nft::Transport::join_group(&mut t, nft::events::NFNLGRP_NFTABLES).unwrap();
                Box::new(t)
            },
            reader: fk.socket(),
        };
        (kernel, run(&mut side, &steps()))
    }) else {
        return;
    };
    if let Some(dir) = std::env::var_os("FK_DIFF_DIR") {
        let dir = std::path::Path::new(&dir);
        std::fs::write(dir.join(format!("{name}.kernel")), &real).unwrap();
        std::fs::write(dir.join(format!("{name}.fake")), &fake).unwrap();
    }
    if real != fake {
        panic!(
            "{name}: the fake kernel differs from the real one\n{}",
            common::diff(&real, &fake)
        );
    }
}

#[test]
fn ids_destroys_and_big_dumps() {
    differential("more", more::more);
}

#[test]
fn kept_expressions() {
    differential("expressions", expressions::expressions);
}

#[test]
fn tables_chains_rules() {
    differential("objects", objects::objects);
}

#[test]
fn sets_and_elements() {
    differential("sets", sets::sets);
}

#[test]
fn jump_validation() {
    differential("validation", validation::validation);
}

#[test]
fn dumps_and_gets() {
    differential("requests", requests::requests);
}
