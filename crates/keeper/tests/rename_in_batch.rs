//! `-E OLD NEW` and what follows it in the same transaction. nf_tables
//! renames a chain only when the batch commits: until then every message
//! of the batch finds it by its old name (`keeper::plan::names`). So a
//! rule in the renamed chain, a jump or goto to it (in a rule, in a
//! verdict-map element), a flush, a delete, a second rename — each in the
//! same `--noflush` restore, or in another write of the daemon's group —
//! must name it as the kernel does, and the result is that of the model
//! applying the input (iptables' semantics; iptables-legacy-restore gives
//! the same lines), which the kernel agrees with (`verify`). A name a
//! renamed chain still has in the kernel cannot be reused before the
//! commit: refused with a clear error, nothing sent. Each case runs on the
//! fake kernel (no root) and on the real one in a fresh network namespace,
//! with and without compiled runs.

use compile::runs::RunOpts;
use iptables::exec::RestoreOpts;
use keeper::plan::PlanOpts;
use keeper::txn::{apply, Stats, Work, Write};
use keeper::{Session, Settings, State};
use nft::Socket;
use ruleset::{Family, Ruleset, TableKind};

mod rewrite_support;
use rewrite_support::{
    assert_clean, kernel_lines, lines, model_lines, on_fake_kernels, on_the_kernel, restore, write,
    Warm,
};

/// The filter table before each case. With runs compiled, SVC is a set
/// run and DISPATCH a verdict map jumping to T1 and T2.
const SETUP: &str = "*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:OLD - [0:0]
:A - [0:0]
:B - [0:0]
:SVC - [0:0]
:DISPATCH - [0:0]
:T1 - [0:0]
:T2 - [0:0]
-A INPUT -j OLD
-A INPUT -j A
-A INPUT -j B
-A INPUT -j SVC
-A INPUT -j DISPATCH
-A OLD -j ACCEPT
-A A -s 10.1.0.1/32 -j ACCEPT
-A B -s 10.2.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.1/32 -j ACCEPT
-A SVC -s 10.0.0.2/32 -j ACCEPT
-A SVC -s 10.0.0.3/32 -j ACCEPT
-A DISPATCH -s 10.3.0.1/32 -j T1
-A DISPATCH -s 10.3.0.2/32 -j T2
-A DISPATCH -s 10.3.0.3/32 -j T1
-A T1 -j ACCEPT
-A T2 -j DROP
COMMIT
";

/// What a case must give.
enum Want {
    /// What the model makes of the input (see [`eager`]).
    Model,
    /// This error, the kernel left as the setup made it.
    Err(&'static str),
}

/// (name, the lines of a `--noflush` restore of the filter table between
/// `*filter` and `COMMIT`, what it must give).
const CASES: &[(&str, &str, Want)] = &[
    (
        "a rule in the renamed chain and a jump to it",
        "-E OLD NEW\n-A NEW -j DROP\n-A FORWARD -j NEW",
        Want::Model,
    ),
    (
        "insert, replace, delete by spec and by number in the renamed chain",
        "-E OLD NEW
-I NEW 1 -s 10.9.9.9/32 -j DROP
-A NEW -j RETURN
-R NEW 2 -s 10.8.8.8/32 -j ACCEPT
-D NEW -j RETURN
-D NEW 1",
        Want::Model,
    ),
    (
        "renamed twice, then a rule in it and a goto to it",
        "-E OLD MID\n-E MID NEW\n-A NEW -j DROP\n-A FORWARD -g NEW",
        Want::Model,
    ),
    (
        "renamed, then flushed and refilled",
        "-E OLD NEW\n-F NEW\n-A NEW -j DROP",
        Want::Model,
    ),
    (
        "renamed, then deleted, then the old name taken again",
        "-E OLD NEW
-D INPUT -j NEW
-F NEW
-X NEW
-N OLD
-A OLD -j DROP
-A INPUT -j OLD",
        Want::Model,
    ),
    (
        "renamed, then rewritten (:NEW)",
        "-E OLD NEW\n:NEW - [0:0]\n-A NEW -j DROP\n-A NEW -j RETURN",
        Want::Model,
    ),
    (
        "renamed, then a new chain jumping to it",
        "-E OLD NEW\n-N X\n-A X -j NEW\n-A FORWARD -j X",
        Want::Model,
    ),
    (
        "a chain holding a run: renamed, appended to, a member deleted",
        "-A SVC -s 10.0.0.4/32 -j ACCEPT
-E SVC SVC2
-A SVC2 -s 10.0.0.5/32 -j ACCEPT
-D SVC2 -s 10.0.0.1/32 -j ACCEPT",
        Want::Model,
    ),
    (
        "a chain holding a run: renamed, then a rule inside the run",
        "-E SVC SVC2\n-I SVC2 2 -j RETURN",
        Want::Model,
    ),
    (
        "a chain holding a run: renamed, then flushed",
        "-E SVC SVC2\n-F SVC2\n-A SVC2 -j DROP",
        Want::Model,
    ),
    (
        "a chain map elements jump to: renamed, then a new element",
        "-E T1 T1X\n-A DISPATCH -s 10.3.0.9/32 -j T1X",
        Want::Model,
    ),
    (
        "a chain map elements jump to: renamed, then its map zeroed",
        "-E T1 T1X\n-Z DISPATCH",
        Want::Model,
    ),
    (
        "renamed, then a new verdict map jumping to it",
        "-E T1 T1X
:D2 - [0:0]
-A D2 -s 10.4.0.1/32 -j T1X
-A D2 -s 10.4.0.2/32 -j T2
-A D2 -s 10.4.0.3/32 -j T1X
-A FORWARD -j D2",
        Want::Model,
    ),
    (
        "the map's chain and its target both renamed",
        "-E DISPATCH DX\n-E T1 T1X\n-A DX -s 10.3.0.9/32 -j T1X\n-A FORWARD -j DX",
        Want::Model,
    ),
    (
        "renamed back",
        "-E OLD NEW\n-E NEW OLD",
        Want::Err(
            "iptables-restore: line 3 failed: Chain name OLD cannot be reused in the \
             transaction that renamed chain OLD to NEW (the kernel renames at \
             commit).\n",
        ),
    ),
    (
        "the old name reused by a new chain",
        "-E OLD NEW\n-N OLD",
        Want::Err(
            "iptables-restore: line 3 failed: Chain name OLD cannot be reused in the \
             transaction that renamed chain OLD to NEW (the kernel renames at \
             commit).\n",
        ),
    ),
    (
        "names swapped",
        "-E A TMP\n-E B A\n-E TMP B",
        Want::Err(
            "iptables-restore: line 3 failed: Chain name A cannot be reused in the \
             transaction that renamed chain A to TMP (the kernel renames at \
             commit).\n",
        ),
    ),
];

fn run_cases(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    let settings = Settings {
        compile,
        ..Default::default()
    };
    for (name, body, want) in CASES {
        let what = format!("{name} (compile {compile:?})");
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        restore(&mut s, SETUP, false, false).expect("setup");
        let before = kernel_lines(open, settings);
        let input = format!("*filter\n{body}\nCOMMIT\n");
        // A session of its own, as each iptables-restore is.
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        let got = restore(&mut s, &input, true, false);
        match want {
            Want::Model => {
                assert_eq!(got, Ok(()), "{what}");
                assert_eq!(
                    kernel_lines(open, settings),
                    model_lines(SETUP, &input),
                    "{what}"
                );
            }
            Want::Err(e) => {
                assert_eq!(got, Err(e.to_string()), "{what}");
                assert_eq!(kernel_lines(open, settings), before, "{what}");
            }
        }
        assert_clean(&mut open(), &what);
    }
}

#[test]
fn renames_in_a_restore_on_the_fake_kernel() {
    on_fake_kernels(run_cases);
}

#[test]
fn renames_in_a_restore_on_the_kernel() {
    on_the_kernel(run_cases);
}

/// (name, the writes of one group, which of them fail, the batches the
/// group takes).
type Group = (
    &'static str,
    &'static [&'static [&'static str]],
    &'static [usize],
    u32,
);

/// Groups the daemon commits as one batch: a rename in one write, what
/// names the chain in the next ones (and one flush between appends, whose
/// chain end the appends must not reuse). A write giving a chain the name
/// another write renamed away waits for a second batch, and the writes
/// after it with it.
const GROUPS: &[Group] = &[
    (
        "a rule in the renamed chain and a jump to it, from other writes",
        &[&["-E OLD NEW"], &["-A NEW -j DROP"], &["-A FORWARD -j NEW"]],
        &[],
        1,
    ),
    (
        "renamed by two writes, then a rule in it",
        &[&["-E OLD MID"], &["-E MID NEW"], &["-A NEW -j DROP"]],
        &[],
        1,
    ),
    (
        "a chain holding a run: renamed, then appended to",
        &[&["-E SVC SVC2"], &["-A SVC2 -s 10.0.0.5/32 -j ACCEPT"]],
        &[],
        1,
    ),
    (
        "renamed, then an append that makes a run of the chain's end",
        &[&["-E A AX"], &["-A AX -s 10.1.0.2/32 -j ACCEPT"]],
        &[],
        1,
    ),
    (
        "renamed, then appends that make a verdict map jumping to it",
        &[
            &["-E T1 T1X"],
            &["-N M"],
            &["-A M -s 10.5.0.1/32 -j T1X"],
            &["-A M -s 10.5.0.2/32 -j T2"],
            &["-A FORWARD -j M"],
        ],
        &[],
        1,
    ),
    (
        "the old name reused by another write: it and the rest wait a batch",
        &[&["-E OLD NEW"], &["-N OLD"], &["-A OLD -j DROP"]],
        &[],
        2,
    ),
    (
        "the old name reused by the write that renamed it: it fails",
        &[&["-E OLD NEW", "-N OLD"], &["-A OLD -j DROP"]],
        &[0],
        1,
    ),
    (
        "a name renamed away by two writes, reused by a third",
        &[&["-E OLD MID"], &["-E MID NEW"], &["-N OLD"], &["-N MID"]],
        &[],
        2,
    ),
    (
        "a chain holding a run flushed between appends (no rename)",
        &[
            &["-A SVC -s 10.0.0.4/32 -j ACCEPT"],
            &["-F SVC"],
            &["-A SVC -s 10.0.0.5/32 -j ACCEPT"],
            &["-A SVC -s 10.0.0.6/32 -j ACCEPT"],
        ],
        &[],
        1,
    ),
    (
        "a write cut out after its rename: its rename is taken back",
        &[
            &["-E OLD NEW", "-A NOSUCH -j ACCEPT"],
            &["-E OLD OTHER"],
            &["-A OTHER -j DROP"],
        ],
        &[0],
        1,
    ),
];

fn run_groups(open: &dyn Fn() -> Socket, compile: Option<RunOpts>) {
    let opts = PlanOpts {
        echo: true,
        compile,
        whole_model: true,
        plain_appends: false,
    };
    let settings = Settings {
        compile,
        ..Default::default()
    };
    for (name, group, failing, batches) in GROUPS {
        let what = format!("{name} (compile {compile:?})");
        let mut s = Session::with_socket(open(), Family::Ipv4, settings);
        restore(&mut s, SETUP, false, false).expect("setup");
        // The model the group is checked against: each write that must
        // succeed applied alone, in order.
        let mut rs: Ruleset<iptables::Rule> = Ruleset::new();
        let o = RestoreOpts::new(Family::Ipv4, "iptables-restore");
        iptables::exec::restore(&mut rs, SETUP, &o).expect("setup");
        let (mut sock, mut st) = (open(), State::default());
        let writes: Vec<Write> = group.iter().map(|w| write(w)).collect();
        let mut stats = Stats::default();
        let done = apply(
            &mut sock,
            &mut st,
            &mut Warm::default(),
            opts,
            &writes,
            &mut stats,
        );
        for (i, (w, d)) in writes.iter().zip(&done).enumerate() {
            assert_eq!(d.is_ok(), !failing.contains(&i), "{what}: write {i}: {d:?}");
            if let (true, Work::Cmds(cmds)) = (d.is_ok(), &w.work) {
                for p in cmds {
                    let t = rs.table_mut(Family::Ipv4, p.table);
                    iptables::exec::execute(t, p, &mut String::new()).expect("model");
                }
            }
        }
        assert_eq!(stats.commits, *batches, "{what}: batches");
        let mut out = String::new();
        iptables::exec::save_table(rs.table(Family::Ipv4, TableKind::Filter), false, &mut out);
        assert_eq!(kernel_lines(open, settings), lines(&out), "{what}");
        // The daemon's model after the commit is what the kernel holds.
        let mut model = String::new();
        iptables::exec::save_table(
            st.model.table(Family::Ipv4, TableKind::Filter),
            false,
            &mut model,
        );
        assert_eq!(lines(&model), lines(&out), "{what}: model");
        assert_clean(&mut open(), &what);
    }
}

#[test]
fn renames_in_a_group_on_the_fake_kernel() {
    on_fake_kernels(run_groups);
}

#[test]
fn renames_in_a_group_on_the_kernel() {
    on_the_kernel(run_groups);
}
