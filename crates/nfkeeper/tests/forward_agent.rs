//! `nfkeeper agent|fleet|controller` run nfkeeper-agent with the arguments
//! from the subcommand on (a stand-in script on PATH prints what it got),
//! and say why, with exit code 2, when there is none.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const NFKEEPER: &str = env!("CARGO_BIN_EXE_nfkeeper");

fn run(path: &str, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(NFKEEPER)
        .args(args)
        .env("PATH", path)
        .output()
        .expect("nfkeeper runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn agent_subcommands_run_nfkeeper_agent() {
    let beside = Path::new(NFKEEPER).with_file_name("nfkeeper-agent");
    if beside.exists() {
        eprintln!(
            "SKIP: a real nfkeeper-agent is beside nfkeeper ({}); it would be run instead of the stand-in",
            beside.display()
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("nfk-forward-agent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stand_in = dir.join("nfkeeper-agent");
    std::fs::write(&stand_in, "#!/bin/sh\necho \"$@\"\nexit 7\n").unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", dir.display());
    let cases: &[(&[&str], &str)] = &[
        (
            &["fleet", "status", "--endpoints", "a:2379"],
            "fleet status --endpoints a:2379\n",
        ),
        (&["agent", "--host", "web1"], "agent --host web1\n"),
        (
            &["--direct", "controller", "--name", "c"],
            "controller --name c\n",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = run(&path, args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (7, *want, ""),
            "{args:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let (code, out, err) = run("/nonexistent", &["fleet", "status"]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "nfkeeper fleet: nfkeeper-agent is neither beside nfkeeper nor on PATH; build it in crates/agent (README.md there)\n"
    );
}
