//! dockerd 20.10 (docker.io) with its own data and exec roots, its own
//! containerd, vfs storage and ip6tables: its chains, the default bridge
//! and a user network (IPv4 and IPv6) and an internal one, containers with
//! published ports, removal, daemon stop (docker.sh). The container image
//! is one static binary (pause.c) built with gcc at test time.

use crate::harness::{check, Client};

#[test]
fn docker() {
    check(&Client {
        name: "docker",
        script: "docker.sh",
        case: "",
        needs: &[
            ("dockerd", "docker.io"),
            ("docker", "docker.io"),
            ("containerd", "containerd"),
            ("runc", "runc"),
            ("gcc", "gcc"),
        ],
        known: &[],
        known_failure: None,
    });
}
