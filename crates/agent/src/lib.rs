//! nfkeeper-agent: the fleet side of nfkeeper. A host's desired ruleset
//! comes from etcd — named rulesets, host groups, assignments, per-host
//! additions (docs/fleet.md has the key layout) — and the agent keeps the
//! kernel on it: one restore transaction per family through the local
//! daemon (or `nfkeeper` in direct mode), never twice the same, refused
//! if it does not parse or would cut the host off from etcd or from the
//! flows an operator keeps open. It reports its status under a lease (a
//! dead host's status expires), notices foreign changes within
//! milliseconds from the kernel's events (drift: re-asserted or reported),
//! and takes part in staged rollouts that one elected controller advances.
//! `fleet` is the operators' side, reading and writing etcd only.
//!
//! What it is not: part of the drop-in `nfkeeper` binary (this crate is a
//! workspace of its own with an async runtime and gRPC), nor a
//! coordination layer of its own: etcd is the store, the watch, the lease
//! and the lock.
//!
//! Pure parts, tested without etcd or a kernel: [`layout`] (keys and
//! documents), [`desired`] (canonical form and digest), [`lockout`] (the
//! classifier's verdicts), [`rollout`] (admission and stage decisions),
//! [`host`] (reconciliation over an injected [`kernel::Kernel`]).

pub mod agent;
pub mod controller;
pub mod desired;
pub mod etcd;
pub mod events;
pub mod fleet;
pub mod host;
pub mod kernel;
pub mod layout;
pub mod lockout;
pub mod metrics;
pub mod rollout;
pub mod routes;
