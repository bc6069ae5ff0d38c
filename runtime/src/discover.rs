//! Finding a PJRT plugin.
//!
//! Order: an explicit path (a `--plugin` flag), then the `TPUC_PJRT_PLUGIN` environment
//! variable, then `.deps/pjrt/pjrt_c_api_cpu_plugin.so` (where `make setup` /
//! `scripts/setup_pjrt_cpu.sh` installs the CPU plugin) relative to the current
//! directory and to every ancestor of the running executable's directory (so test
//! binaries and tools under `target/` find the repository's `.deps`).
//!
//! An explicit path or the environment variable is authoritative: if it names a file
//! that does not exist, that is an error, not a reason to look elsewhere.

use crate::error::{Result, RuntimeError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variable naming the plugin to load.
pub const PLUGIN_ENV: &str = "TPUC_PJRT_PLUGIN";

/// Where the setup script installs the CPU plugin, relative to the repository root.
pub const CPU_PLUGIN_RELATIVE_PATH: &str = ".deps/pjrt/pjrt_c_api_cpu_plugin.so";

/// Finds the plugin to load; see the module docs for the order.
pub fn find_plugin(explicit: Option<&Path>) -> Result<PathBuf> {
    find_plugin_in(
        explicit,
        std::env::var_os(PLUGIN_ENV),
        std::env::current_dir().ok(),
        std::env::current_exe().ok(),
    )
}

/// The implicit candidates (after the explicit path and the environment variable).
pub fn default_candidates() -> Vec<PathBuf> {
    candidates(std::env::current_dir().ok(), std::env::current_exe().ok())
}

fn candidates(cwd: Option<PathBuf>, exe: Option<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    match cwd {
        Some(dir) => push(dir.join(CPU_PLUGIN_RELATIVE_PATH)),
        None => push(Path::new(".").join(CPU_PLUGIN_RELATIVE_PATH)),
    }
    if let Some(exe) = exe {
        if let Some(dir) = exe.parent() {
            for ancestor in dir.ancestors() {
                push(ancestor.join(CPU_PLUGIN_RELATIVE_PATH));
            }
        }
    }
    out
}

fn find_plugin_in(
    explicit: Option<&Path>,
    env: Option<OsString>,
    cwd: Option<PathBuf>,
    exe: Option<PathBuf>,
) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return existing(p.to_path_buf());
    }
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        return existing(PathBuf::from(v));
    }
    let searched = candidates(cwd, exe);
    match searched.iter().find(|p| p.is_file()) {
        Some(p) => Ok(p.clone()),
        None => Err(RuntimeError::PluginNotFound { searched }),
    }
}

fn existing(p: PathBuf) -> Result<PathBuf> {
    if p.is_file() {
        Ok(p)
    } else {
        Err(RuntimeError::PluginNotFound { searched: vec![p] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tpuc-discover-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn explicit_and_env_are_authoritative() {
        let dir = scratch("explicit");
        let plugin = dir.join("p.so");
        std::fs::write(&plugin, b"x").unwrap();
        assert_eq!(
            find_plugin_in(Some(&plugin), None, None, None).unwrap(),
            plugin
        );
        let missing = dir.join("missing.so");
        let e =
            find_plugin_in(Some(&missing), Some(plugin.clone().into()), None, None).unwrap_err();
        assert!(e.to_string().contains("missing.so"), "{e}");
        assert_eq!(
            find_plugin_in(None, Some(plugin.clone().into()), None, None).unwrap(),
            plugin
        );
        let e = find_plugin_in(None, Some(missing.into()), None, None).unwrap_err();
        assert!(e.to_string().contains("TPUC_PJRT_PLUGIN"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn searches_cwd_then_executable_ancestors() {
        let root = scratch("ancestors");
        let exe = root.join("target/debug/deps/test-binary");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        let cwd = root.join("elsewhere");
        std::fs::create_dir_all(&cwd).unwrap();

        let e = find_plugin_in(None, None, Some(cwd.clone()), Some(exe.clone())).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("make setup"), "{msg}");
        assert!(msg.contains(&cwd.join(CPU_PLUGIN_RELATIVE_PATH).display().to_string()));

        let installed = root.join(CPU_PLUGIN_RELATIVE_PATH);
        std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
        std::fs::write(&installed, b"x").unwrap();
        assert_eq!(
            find_plugin_in(None, Some(OsString::new()), Some(cwd.clone()), Some(exe)).unwrap(),
            installed
        );

        let in_cwd = cwd.join(CPU_PLUGIN_RELATIVE_PATH);
        std::fs::create_dir_all(in_cwd.parent().unwrap()).unwrap();
        std::fs::write(&in_cwd, b"x").unwrap();
        assert_eq!(find_plugin_in(None, None, Some(cwd), None).unwrap(), in_cwd);
        std::fs::remove_dir_all(root).unwrap();
    }
}
