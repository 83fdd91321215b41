//! The program's settings, decided once in `main` from the command line's
//! leading flags and the environment, then passed down: nothing below
//! reads the environment or a global to learn them.

use crate::via_daemon::Mode;
use std::path::PathBuf;

/// What every subcommand may need to know of how it was asked to run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The engine's own settings (run compilation, retry budget).
    pub engine: keeper::Settings,
    /// How the iptables personalities reach the kernel.
    pub mode: Mode,
    /// Work offline on this state file instead of the kernel
    /// (`NFKEEPER_OFFLINE_STATE`; `.4`/`.6` are appended per family).
    pub offline: Option<PathBuf>,
    /// Where the daemon of this network namespace listens.
    pub socket: PathBuf,
    /// `NFKEEPER_SOCKET`: where clients look and `serve` listens unless
    /// told otherwise.
    pub socket_env: Option<PathBuf>,
}

/// The environment variables read, by name, as the process got them.
pub struct Env {
    pub mode: Option<String>,
    pub compile: Option<String>,
    pub offline: Option<std::ffi::OsString>,
    pub socket: Option<std::ffi::OsString>,
}

impl Env {
    pub fn read() -> Env {
        Env {
            mode: std::env::var("NFKEEPER_MODE").ok(),
            compile: std::env::var("NFKEEPER_COMPILE").ok(),
            offline: std::env::var_os("NFKEEPER_OFFLINE_STATE"),
            socket: std::env::var_os("NFKEEPER_SOCKET"),
        }
    }
}

/// Why the leading flags could not be taken (the message for stderr).
pub type FlagError = String;

impl Settings {
    /// The engine's settings for one short-lived command (the iptables and
    /// ipset personalities): as [`Settings::engine`], and the session's
    /// socket is closed by the namespace's closer, so that the command's
    /// exit never waits a kernel grace period
    /// (`keeper::Settings::close_after_exit`).
    pub fn command_engine(&self) -> keeper::Settings {
        keeper::Settings {
            close_after_exit: true,
            one_shot: true,
            ..self.engine
        }
    }

    /// Settings from the environment, then the leading flags of `args`
    /// (`--direct`, `--daemon`, `--compile-runs[=N]`, `--no-compile-runs`;
    /// flags win). Returns them and how many words the flags took.
    pub fn from(env: &Env, args: &[String]) -> Result<(Settings, usize), FlagError> {
        let mut engine = keeper::Settings::default();
        // An unknown value keeps the default, as before.
        if let Some(c) = env
            .compile
            .as_deref()
            .and_then(keeper::settings::parse_compile)
        {
            engine.compile = c;
        }
        let mut mode = env
            .mode
            .as_deref()
            .and_then(Mode::from_name)
            .unwrap_or(Mode::Auto);
        let mut used = 0;
        for a in args {
            match a.as_str() {
                "--direct" => mode = Mode::Direct,
                "--daemon" => mode = Mode::Daemon,
                "--compile-runs" => engine.compile = Some(Default::default()),
                "--no-compile-runs" => engine.compile = None,
                a if a.starts_with("--compile-runs=") => {
                    let n = &a["--compile-runs=".len()..];
                    engine.compile = keeper::settings::parse_compile(&format!("runs:{n}"))
                        .ok_or_else(|| {
                            format!(
                                "nfkeeper: --compile-runs=N needs a run length of at least 2, not \"{n}\""
                            )
                        })?;
                }
                _ => break,
            }
            used += 1;
        }
        let socket_env = env.socket.clone().map(PathBuf::from);
        Ok((
            Settings {
                engine,
                mode,
                offline: env.offline.clone().map(PathBuf::from),
                socket: socket_env
                    .clone()
                    .unwrap_or_else(proto::client::namespace_path),
                socket_env,
            },
            used,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(mode: Option<&str>, compile: Option<&str>) -> Env {
        Env {
            mode: mode.map(str::to_string),
            compile: compile.map(str::to_string),
            offline: None,
            socket: None,
        }
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_win_over_the_environment() {
        let runs = |n| {
            Some(keeper::settings::RunOpts {
                min_len: n,
                numgen: false,
            })
        };
        let dflt = Some(keeper::settings::RunOpts::default());
        type Case = (
            Env,
            &'static [&'static str],
            Mode,
            Option<keeper::settings::RunOpts>,
            usize,
        );
        let cases: Vec<Case> = vec![
            (env(None, None), &["iptables", "-L"], Mode::Auto, dflt, 0),
            (
                env(Some("direct"), Some("off")),
                &["iptables"],
                Mode::Direct,
                None,
                0,
            ),
            (env(Some("bogus"), Some("bogus")), &[], Mode::Auto, dflt, 0),
            (
                env(Some("direct"), Some("off")),
                &["--daemon", "--compile-runs=4", "iptables"],
                Mode::Daemon,
                runs(4),
                2,
            ),
            (
                env(None, Some("runs:8")),
                &["--no-compile-runs"],
                Mode::Auto,
                None,
                1,
            ),
        ];
        for (e, a, mode, compile, used) in cases {
            let (s, n) = Settings::from(&e, &args(a)).expect("valid");
            assert_eq!(
                (s.mode, s.engine.compile, n),
                (mode, compile, used),
                "{a:?}"
            );
        }
        assert!(Settings::from(&env(None, None), &args(&["--compile-runs=1"])).is_err());
    }
}
