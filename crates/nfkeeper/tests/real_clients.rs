//! Real iptables clients, run as they run on a host, against iptables-nft
//! and against nfkeeper: ufw, fail2ban, dockerd and libvirtd (Debian 12's
//! packages; .ci/run installs them). Each client's sequence runs twice in
//! fresh pid, network and mount namespaces, with a private copy of
//! /etc/alternatives resolving its `iptables`, `ip6tables`,
//! `iptables-save` and `iptables-restore` (and, for nfkeeper, `ipset`) to
//! the side's tool; the steps' exit codes, the errors the client logged and
//! every snapshot of the saves must be the same (see real_clients/harness.rs
//! and real_clients/ns.sh). A test skips, saying why, without root or
//! when its client is not installed.

// The crate root's modules live beside it in real_clients/ (a test
// crate's root resolves `mod` paths from tests/ itself).
#[path = "real_clients/compare.rs"]
mod compare;
#[path = "real_clients/harness.rs"]
mod harness;
#[path = "real_clients/run.rs"]
mod run;

#[path = "real_clients/docker.rs"]
mod docker;
#[path = "real_clients/fail2ban.rs"]
mod fail2ban;
#[path = "real_clients/libvirt.rs"]
mod libvirt;
#[path = "real_clients/ufw.rs"]
mod ufw;
