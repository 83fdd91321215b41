//! The Debian package (contrib/debian/build-deb.sh, docs/packaging.md),
//! built from the nfkeeper this test run built: its files and their modes,
//! its control fields, and its maintainer scripts' alternatives, run
//! against a throwaway root (`update-alternatives --root`), never against
//! this machine's own alternatives. Skips with the reason when dpkg-deb or
//! update-alternatives is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `program` in $PATH, if there.
fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Runs `cmd`; its stdout, or a panic with stderr when it fails.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A directory of its own under the system's temporary directory, removed
/// when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("nfk-deb-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The personalities the package must offer, as update-alternatives
/// groups: master, then slaves.
const GROUPS: [(&str, [&str; 2]); 2] = [
    ("iptables", ["iptables-restore", "iptables-save"]),
    ("ip6tables", ["ip6tables-restore", "ip6tables-save"]),
];

/// Builds the package with the script the docs describe; returns its path
/// and whether nfkeeper-bench went in.
fn build(out: &Path) -> (PathBuf, bool) {
    let nfk = PathBuf::from(env!("CARGO_BIN_EXE_nfkeeper"));
    let bench = nfk.with_file_name("nfkeeper-bench");
    let mut cmd = Command::new("sh");
    cmd.arg(repo().join("contrib/debian/build-deb.sh"))
        .arg("--nfkeeper")
        .arg(&nfk)
        .arg("--out")
        .arg(out);
    let with_bench = bench.is_file();
    if with_bench {
        cmd.arg("--bench").arg(&bench);
    } else {
        eprintln!(
            "note: no nfkeeper-bench beside {}; packaged without it",
            nfk.display()
        );
        cmd.arg("--no-bench");
    }
    let deb = PathBuf::from(run(&mut cmd).trim());
    assert!(deb.is_file(), "{} not written", deb.display());
    (deb, with_bench)
}

/// One line of `dpkg-deb -c`: mode, owner, path, symlink target.
struct Entry {
    mode: String,
    owner: String,
    path: String,
    target: Option<String>,
}

fn contents(deb: &Path) -> Vec<Entry> {
    run(Command::new("dpkg-deb").arg("-c").arg(deb))
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let rest = f[5..].join(" ");
            let (path, target) = match rest.split_once(" -> ") {
                Some((p, t)) => (p.to_string(), Some(t.to_string())),
                None => (rest, None),
            };
            Entry {
                mode: f[0].to_string(),
                owner: f[1].to_string(),
                path: path
                    .trim_end_matches('/')
                    .trim_start_matches('.')
                    .to_string(),
                target,
            }
        })
        .collect()
}

fn skip_without_tools() -> bool {
    for tool in ["dpkg-deb", "dpkg", "update-alternatives"] {
        if which(tool).is_none() {
            eprintln!(
                "SKIP: {tool} not installed (apt-get install dpkg); the package is not built"
            );
            return true;
        }
    }
    false
}

#[test]
fn package_holds_the_files_with_their_modes_and_fields() {
    if skip_without_tools() {
        return;
    }
    let tmp = TempDir::new("contents");
    let (deb, with_bench) = build(&tmp.0);
    let entries = contents(&deb);
    let find = |p: &str| entries.iter().find(|e| e.path == p);

    let mut want: Vec<(String, &str, Option<&str>)> = vec![
        ("/usr/sbin/nfkeeper".into(), "-rwxr-xr-x", None),
        (
            "/usr/lib/systemd/system/nfkeeper.service".into(),
            "-rw-r--r--",
            None,
        ),
        (
            "/usr/share/man/man8/nfkeeper.8.gz".into(),
            "-rw-r--r--",
            None,
        ),
        (
            "/usr/share/bash-completion/completions/nfkeeper".into(),
            "-rw-r--r--",
            None,
        ),
        (
            "/usr/share/doc/nfkeeper/copyright".into(),
            "-rw-r--r--",
            None,
        ),
        (
            "/usr/share/doc/nfkeeper/README.md".into(),
            "-rw-r--r--",
            None,
        ),
        (
            "/usr/share/doc/nfkeeper/docs/packaging.md".into(),
            "-rw-r--r--",
            None,
        ),
    ];
    for (master, slaves) in GROUPS {
        for name in std::iter::once(master).chain(slaves) {
            want.push((
                format!("/usr/lib/nfkeeper/{name}"),
                "lrwxrwxrwx",
                Some("../../sbin/nfkeeper"),
            ));
        }
    }
    if with_bench {
        want.push(("/usr/sbin/nfkeeper-bench".into(), "-rwxr-xr-x", None));
        want.push((
            "/usr/share/man/man8/nfkeeper-bench.8.gz".into(),
            "-rw-r--r--",
            None,
        ));
    }
    for (path, mode, target) in &want {
        let e = find(path).unwrap_or_else(|| panic!("{path} not in the package"));
        assert_eq!(
            (e.mode.as_str(), e.target.as_deref()),
            (*mode, *target),
            "{path}"
        );
    }
    for e in &entries {
        assert_eq!(e.owner, "root/root", "{}", e.path);
        let ok = match e.mode.as_bytes()[0] {
            b'd' => e.mode == "drwxr-xr-x",
            b'l' => e.path.starts_with("/usr/lib/nfkeeper/"),
            _ if e.path.starts_with("/usr/sbin/") => e.mode == "-rwxr-xr-x",
            _ => e.mode == "-rw-r--r--",
        };
        assert!(ok, "{} {}: unexpected mode or place", e.mode, e.path);
    }

    let arch = run(Command::new("dpkg").arg("--print-architecture"));
    let fields = [
        ("Package", "nfkeeper"),
        ("Version", env!("CARGO_PKG_VERSION")),
        ("Architecture", arch.trim()),
        ("Section", "net"),
        ("Priority", "optional"),
        // A static binary: nothing to depend on.
        ("Depends", ""),
    ];
    for (field, value) in fields {
        let got = run(Command::new("dpkg-deb").arg("-f").arg(&deb).arg(field));
        assert_eq!(got.trim(), value, "control field {field}");
    }

    // What the package installs is what the repository holds.
    let root = tmp.0.join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    let unit = std::fs::read_to_string(root.join("usr/lib/systemd/system/nfkeeper.service"))
        .expect("unit");
    assert!(
        unit.contains("\nExecStart=/usr/sbin/nfkeeper serve"),
        "{unit}"
    );
    let man = run(Command::new("gzip")
        .arg("-dc")
        .arg(root.join("usr/share/man/man8/nfkeeper.8.gz")));
    assert_eq!(
        man,
        std::fs::read_to_string(repo().join("docs/man/nfkeeper.8")).expect("page"),
        "packaged nfkeeper.8"
    );
}

/// A throwaway root with the package unpacked, and an `update-alternatives`
/// first in PATH that works only inside it.
struct Root {
    _tmp: TempDir,
    root: PathBuf,
    control: PathBuf,
    path: std::ffi::OsString,
}

impl Root {
    fn new(tag: &str, deb: &Path) -> Root {
        let tmp = TempDir::new(tag);
        let root = tmp.0.join("root");
        let control = tmp.0.join("control");
        run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root));
        run(Command::new("dpkg-deb").arg("-e").arg(deb).arg(&control));
        for d in ["etc/alternatives", "var/lib/dpkg/alternatives", "var/log"] {
            std::fs::create_dir_all(root.join(d)).expect("root dirs");
        }
        let bin = tmp.0.join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        let real = which("update-alternatives").expect("update-alternatives");
        let wrapper = bin.join("update-alternatives");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexec '{}' --root '{}' --log '{}' \"$@\"\n",
                real.display(),
                root.display(),
                tmp.0.join("alternatives.log").display()
            ),
        )
        .expect("wrapper");
        run(Command::new("chmod").arg("0755").arg(&wrapper));
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        let path = std::env::join_paths(dirs).expect("PATH");
        Root {
            _tmp: tmp,
            root,
            control,
            path,
        }
    }

    /// Runs update-alternatives in the root; stdout and whether it succeeded.
    fn ua(&self, args: &[&str]) -> (String, bool) {
        let out = Command::new("update-alternatives")
            .env("PATH", &self.path)
            .args(args)
            .output()
            .expect("update-alternatives");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.success(),
        )
    }

    /// Runs a maintainer script of the package with `arg`.
    fn script(&self, name: &str, arg: &str) {
        run(Command::new("sh")
            .env("PATH", &self.path)
            .arg(self.control.join(name))
            .arg(arg));
    }

    /// Installs stand-ins for Debian's iptables alternatives: legacy at
    /// 10 and nft at 20, with the same slaves.
    fn debian_iptables(&self) {
        let sbin = self.root.join("usr/sbin");
        for (master, slaves) in GROUPS {
            for (variant, prio) in [("legacy", "10"), ("nft", "20")] {
                let mut args = vec!["--install".to_string()];
                for n in std::iter::once(master).chain(slaves) {
                    let (base, tail) = n.split_at(master.len());
                    let alt = format!("{base}-{variant}{tail}");
                    std::fs::write(sbin.join(&alt), "#!/bin/sh\n").expect("stand-in");
                    if n == master {
                        args.extend([
                            format!("/usr/sbin/{n}"),
                            n.into(),
                            format!("/usr/sbin/{alt}"),
                            prio.into(),
                        ]);
                    } else {
                        args.extend([
                            "--slave".into(),
                            format!("/usr/sbin/{n}"),
                            n.into(),
                            format!("/usr/sbin/{alt}"),
                        ]);
                    }
                }
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                assert!(self.ua(&args).1, "stand-in {master}-{variant}");
            }
        }
    }

    /// `(Status, Value)` of a group, or None when there is no such group;
    /// and the priority nfkeeper's alternative has in it.
    fn query(&self, group: &str) -> Option<(String, String, Option<String>)> {
        let (text, ok) = self.ua(&["--query", group]);
        if !ok {
            return None;
        }
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        let ours = format!("Alternative: /usr/lib/nfkeeper/{group}");
        let prio = text
            .split("\n\n")
            .find(|block| block.lines().any(|l| l == ours))
            .and_then(|block| block.lines().find_map(|l| l.strip_prefix("Priority: ")))
            .map(str::to_string);
        Some((field("Status:"), field("Value:"), prio))
    }

    /// What `NAME --version` prints run through the root's own links
    /// (chroot: the binary is static), or None when chroot is not possible.
    fn version_via_links(&self, name: &str) -> Option<String> {
        let out = Command::new("chroot")
            .arg(&self.root)
            .arg(format!("/usr/sbin/{name}"))
            .arg("--version")
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!(
                "note: chroot {name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// This machine's own alternatives for the names the test plays with, to
/// prove they are untouched.
fn host_alternatives() -> Vec<(String, Option<String>, Option<PathBuf>)> {
    GROUPS
        .iter()
        .flat_map(|(m, s)| std::iter::once(*m).chain(s.iter().copied()))
        .map(|n| {
            (
                n.to_string(),
                std::fs::read_to_string(format!("/var/lib/dpkg/alternatives/{n}")).ok(),
                std::fs::read_link(format!("/etc/alternatives/{n}")).ok(),
            )
        })
        .collect()
}

#[test]
fn maintainer_scripts_offer_alternatives_below_debians_and_withdraw_them() {
    if skip_without_tools() {
        return;
    }
    let host_before = host_alternatives();
    let tmp = TempDir::new("scripts");
    let (deb, _) = build(&tmp.0);

    // Beside Debian's iptables: nothing changes until one opts in.
    let r = Root::new("beside", &deb);
    r.debian_iptables();
    r.script("postinst", "configure");
    r.script("postinst", "configure");
    for (master, _) in GROUPS {
        let nft = format!("/usr/sbin/{master}-nft");
        let ours = format!("/usr/lib/nfkeeper/{master}");
        assert_eq!(
            r.query(master),
            Some(("auto".into(), nft.clone(), Some("5".into()))),
            "{master} after install"
        );
        assert!(r.ua(&["--set", master, &ours]).1, "opt in {master}");
        assert_eq!(
            r.query(master),
            Some(("manual".into(), ours.clone(), Some("5".into()))),
            "{master} after --set"
        );
    }
    for (master, slaves) in GROUPS {
        for name in std::iter::once(master).chain(slaves) {
            if let Some(v) = r.version_via_links(name) {
                assert!(v.starts_with(&format!("{name} v")), "{name} --version: {v}");
            }
        }
    }
    assert!(r.ua(&["--auto", "iptables"]).1, "opt out");
    assert_eq!(
        r.query("iptables").map(|q| q.1),
        Some("/usr/sbin/iptables-nft".into())
    );
    r.script("prerm", "upgrade");
    assert_eq!(
        r.query("ip6tables").and_then(|q| q.2),
        Some("5".into()),
        "kept on upgrade"
    );
    r.script("prerm", "remove");
    for (master, _) in GROUPS {
        assert_eq!(
            r.query(master),
            Some(("auto".into(), format!("/usr/sbin/{master}-nft"), None)),
            "{master} after removal (set to nfkeeper before)"
        );
    }

    // Alone: the only alternative is the one in use (docs/packaging.md),
    // and removal takes the links away.
    let r = Root::new("alone", &deb);
    r.script("postinst", "configure");
    assert_eq!(
        r.query("iptables"),
        Some((
            "auto".into(),
            "/usr/lib/nfkeeper/iptables".into(),
            Some("5".into())
        ))
    );
    r.script("prerm", "remove");
    for (master, slaves) in GROUPS {
        assert_eq!(r.query(master), None, "{master} after removal");
        for name in std::iter::once(master).chain(slaves) {
            let link = r.root.join(format!("usr/sbin/{name}"));
            assert!(
                link.symlink_metadata().is_err(),
                "{} left behind",
                link.display()
            );
        }
    }

    assert!(
        host_before == host_alternatives(),
        "this machine's alternatives changed"
    );
}
