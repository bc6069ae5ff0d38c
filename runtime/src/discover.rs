//! Finding a PJRT plugin.
//!
//! Order:
//! 1. an explicit path (a `--plugin` flag);
//! 2. the `TPUC_PJRT_PLUGIN` environment variable;
//! 3. `.deps/pjrt/pjrt_c_api_cpu_plugin.so` (where `make setup` /
//!    `scripts/setup_pjrt_cpu.sh` installs the CPU plugin) relative to the current
//!    directory and to every ancestor of the running executable's directory (so test
//!    binaries and tools under `target/` find the repository's `.deps`);
//! 4. plugins installed by pip in Python environments, searched in this order:
//!    `$VIRTUAL_ENV`, `$CONDA_PREFIX`, `~/.local`, `/usr/local`, `/usr`, then pyenv
//!    versions (`$PYENV_ROOT` or `~/.pyenv`, `versions/*`), each at
//!    `lib/python3*/site-packages` (and Debian's `dist-packages`). In each environment
//!    accelerator plugins come before CPU ones, as listed in [`PYTHON_PLUGIN_PATTERNS`]:
//!    someone who installed the CUDA or TPU plugin presumably wants it.
//!
//! An explicit path or the environment variable is authoritative: if it names a file
//! that does not exist, that is an error, not a reason to look elsewhere.
//!
//! Every directory listing is sorted, so the order (and [`all_plugins`]) is
//! deterministic.

use crate::error::{Result, RuntimeError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variable naming the plugin to load.
pub const PLUGIN_ENV: &str = "TPUC_PJRT_PLUGIN";

/// Where the setup script installs the CPU plugin, relative to the repository root.
pub const CPU_PLUGIN_RELATIVE_PATH: &str = ".deps/pjrt/pjrt_c_api_cpu_plugin.so";

/// Environment variable naming the libtpu that TPU compiles use.
pub const LIBTPU_ENV: &str = "TPUC_LIBTPU";

/// Where `make setup` (`scripts/setup_libtpu.sh`) installs libtpu, relative to the
/// repository root.
pub const LIBTPU_RELATIVE_PATH: &str = ".deps/libtpu/libtpu.so";

/// Plugin files inside a Python `site-packages` directory, in order of preference. A `*`
/// matches any part of one path component.
pub const PYTHON_PLUGIN_PATTERNS: &[&str] = &[
    // jax-cuda12-pjrt / jax-cuda13-pjrt.
    "jax_plugins/xla_cuda*/xla_cuda_plugin.so",
    // jax-rocm*-pjrt.
    "jax_plugins/xla_rocm*/xla_rocm_plugin.so",
    // libtpu.
    "libtpu/libtpu.so",
    // AWS Neuron (libneuronxla).
    "libneuronxla/libneuronpjrt.so",
    // CPU plugins packaged on their own (e.g. lammps_jax_pjrt_cpu/).
    "*/pjrt_c_api_cpu_plugin.so",
];

/// Where the implicit search looks. [`SearchRoots::from_env`] reads the process's
/// environment; tests build one by hand (no process-wide state involved).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchRoots {
    /// Current directory (`.deps/` relative to it).
    pub cwd: Option<PathBuf>,
    /// The running executable (`.deps/` relative to its ancestors).
    pub exe: Option<PathBuf>,
    /// `$VIRTUAL_ENV`.
    pub virtual_env: Option<PathBuf>,
    /// `$CONDA_PREFIX`.
    pub conda_prefix: Option<PathBuf>,
    /// `$HOME` (for `~/.local` and `~/.pyenv`).
    pub home: Option<PathBuf>,
    /// `$PYENV_ROOT` (default `~/.pyenv`).
    pub pyenv_root: Option<PathBuf>,
    /// Root of the system prefixes `/usr/local` and `/usr` (`/` normally).
    pub system_root: Option<PathBuf>,
}

impl SearchRoots {
    /// The roots of this process: current directory, executable, `VIRTUAL_ENV`,
    /// `CONDA_PREFIX`, `HOME`, `PYENV_ROOT`, and `/`.
    pub fn from_env() -> SearchRoots {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        SearchRoots {
            cwd: std::env::current_dir().ok(),
            exe: std::env::current_exe().ok(),
            virtual_env: var("VIRTUAL_ENV"),
            conda_prefix: var("CONDA_PREFIX"),
            home: var("HOME"),
            pyenv_root: var("PYENV_ROOT"),
            system_root: Some(PathBuf::from("/")),
        }
    }

    /// The project's `.deps` locations of the CPU plugin (existing or not), in search
    /// order.
    fn deps_candidates(&self) -> Vec<PathBuf> {
        self.deps_candidates_of(CPU_PLUGIN_RELATIVE_PATH)
    }

    /// `relative` under the current directory, then under every ancestor of the
    /// executable's directory.
    fn deps_candidates_of(&self, relative: &str) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        match &self.cwd {
            Some(dir) => push_unique(&mut out, dir.join(relative)),
            None => push_unique(&mut out, Path::new(".").join(relative)),
        }
        if let Some(dir) = self.exe.as_ref().and_then(|e| e.parent()) {
            for ancestor in dir.ancestors() {
                push_unique(&mut out, ancestor.join(relative));
            }
        }
        out
    }

    /// Where libtpu may be: the `.deps` locations, then `libtpu/libtpu.so` in every
    /// Python environment (existing or not, with `*` wildcards).
    fn libtpu_candidates(&self) -> Vec<PathBuf> {
        let mut out = self.deps_candidates_of(LIBTPU_RELATIVE_PATH);
        for site in self.python_site_patterns() {
            push_unique(&mut out, site.join("libtpu/libtpu.so"));
        }
        out
    }

    /// Python environment prefixes (their `lib/python3*/...` holds site-packages), in
    /// search order, each a list of path components with `*` wildcards.
    fn python_site_patterns(&self) -> Vec<PathBuf> {
        let mut prefixes: Vec<PathBuf> = Vec::new();
        prefixes.extend(self.virtual_env.clone());
        prefixes.extend(self.conda_prefix.clone());
        if let Some(home) = &self.home {
            prefixes.push(home.join(".local"));
        }
        if let Some(root) = &self.system_root {
            prefixes.push(root.join("usr/local"));
            prefixes.push(root.join("usr"));
        }
        let pyenv = self
            .pyenv_root
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".pyenv")));
        if let Some(pyenv) = pyenv {
            prefixes.push(pyenv.join("versions/*"));
        }
        let mut out = Vec::new();
        for prefix in prefixes {
            push_unique(&mut out, prefix.join("lib/python3*/site-packages"));
            push_unique(&mut out, prefix.join("lib/python3*/dist-packages"));
            // Debian's system packages: /usr/lib/python3/dist-packages (no minor version,
            // matched by python3* above as well).
        }
        out
    }

    /// Every `site-packages` plugin pattern, for error messages.
    fn python_plugin_patterns(&self) -> Vec<PathBuf> {
        self.python_site_patterns()
            .iter()
            .flat_map(|site| PYTHON_PLUGIN_PATTERNS.iter().map(move |p| site.join(p)))
            .collect()
    }

    /// Plugin files found in Python environments, in search order.
    fn python_plugins(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for site in self.python_site_patterns() {
            for dir in expand(&site) {
                for pattern in PYTHON_PLUGIN_PATTERNS {
                    for file in expand(&dir.join(pattern)) {
                        if file.is_file() {
                            push_unique(&mut out, file);
                        }
                    }
                }
            }
        }
        out
    }

    /// Candidates after the explicit path and the environment variable: the `.deps`
    /// locations (existing or not), then every plugin found in Python environments.
    pub fn candidates(&self) -> Vec<PathBuf> {
        let mut out = self.deps_candidates();
        for p in self.python_plugins() {
            push_unique(&mut out, p);
        }
        out
    }

    /// Every location the implicit search looks at, for a "not found" message: the
    /// `.deps` paths, then the Python patterns (with `*` wildcards).
    pub fn searched(&self) -> Vec<PathBuf> {
        let mut out = self.deps_candidates();
        out.extend(self.python_plugin_patterns());
        out
    }

    /// Every plugin file found under these roots, in search order, each file once
    /// (compared by canonical path).
    pub fn existing_plugins(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for p in self.candidates() {
            if p.is_file() {
                push_canonical_unique(&mut out, &mut seen, p);
            }
        }
        out
    }
}

fn push_unique(out: &mut Vec<PathBuf>, p: PathBuf) {
    if !out.contains(&p) {
        out.push(p);
    }
}

fn push_canonical_unique(out: &mut Vec<PathBuf>, seen: &mut Vec<PathBuf>, p: PathBuf) {
    let canonical = p.canonicalize().unwrap_or_else(|_| p.clone());
    if !seen.contains(&canonical) {
        seen.push(canonical);
        out.push(p);
    }
}

/// Whether `name` matches `pattern`, where each `*` matches any run of characters.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        // No `*` at all: an exact match.
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Expands `*` in the components of `pattern` against the file system; matches of each
/// component are sorted by name. A pattern without `*` expands to itself if it exists.
fn expand(pattern: &Path) -> Vec<PathBuf> {
    let mut current = vec![PathBuf::new()];
    for component in pattern.components() {
        let text = component.as_os_str().to_string_lossy();
        if !text.contains('*') {
            for p in &mut current {
                p.push(component.as_os_str());
            }
            continue;
        }
        let mut next = Vec::new();
        for dir in &current {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut names: Vec<OsString> = entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name())
                .filter(|n| n.to_str().is_some_and(|n| wildcard_match(&text, n)))
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|n| dir.join(n)));
        }
        current = next;
        if current.is_empty() {
            break;
        }
    }
    current.retain(|p| p.exists());
    current
}

/// Finds the plugin to load; see the module docs for the order.
pub fn find_plugin(explicit: Option<&Path>) -> Result<PathBuf> {
    find_plugin_in(
        explicit,
        std::env::var_os(PLUGIN_ENV),
        &SearchRoots::from_env(),
    )
}

/// Finds libtpu for TPU compiles: `explicit` (a `--libtpu` flag), then `TPUC_LIBTPU`,
/// then `.deps/libtpu/libtpu.so` (relative to the current directory and to the
/// executable's ancestors), then pip's `libtpu` package in the Python environments
/// [`find_plugin`] searches.
pub fn find_libtpu(explicit: Option<&Path>) -> Result<PathBuf> {
    find_libtpu_in(
        explicit,
        std::env::var_os(LIBTPU_ENV),
        &SearchRoots::from_env(),
    )
}

/// [`find_libtpu`] with the environment given explicitly.
pub fn find_libtpu_in(
    explicit: Option<&Path>,
    env: Option<OsString>,
    roots: &SearchRoots,
) -> Result<PathBuf> {
    let given = explicit
        .map(Path::to_path_buf)
        .or_else(|| env.filter(|v| !v.is_empty()).map(PathBuf::from));
    if let Some(p) = given {
        return match p.is_file() {
            true => Ok(p),
            false => Err(RuntimeError::LibtpuNotFound { searched: vec![p] }),
        };
    }
    let candidates = roots.libtpu_candidates();
    for c in &candidates {
        if let Some(found) = expand(c).into_iter().find(|p| p.is_file()) {
            return Ok(found);
        }
    }
    Err(RuntimeError::LibtpuNotFound {
        searched: candidates,
    })
}

/// The implicit candidates (after the explicit path and the environment variable):
/// the `.deps` locations, existing or not, then the plugins found in Python
/// environments.
pub fn default_candidates() -> Vec<PathBuf> {
    SearchRoots::from_env().candidates()
}

/// Every location the implicit search looks at (`.deps` paths and Python patterns with
/// `*` wildcards), for a "no plugin found" message.
pub fn searched_locations() -> Vec<PathBuf> {
    SearchRoots::from_env().searched()
}

/// Every plugin that can be found, for listing (`tpuc devices`): the one named by
/// `TPUC_PJRT_PLUGIN` if it exists, then every existing implicit candidate, in search
/// order, each file once. An explicit `--plugin` is the caller's to add.
pub fn all_plugins() -> Vec<PathBuf> {
    all_plugins_in(std::env::var_os(PLUGIN_ENV), &SearchRoots::from_env())
}

/// [`all_plugins`] with the environment given explicitly.
pub fn all_plugins_in(env: Option<OsString>, roots: &SearchRoots) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    if let Some(p) = env.filter(|v| !v.is_empty()).map(PathBuf::from) {
        if p.is_file() {
            push_canonical_unique(&mut out, &mut seen, p);
        }
    }
    for p in roots.existing_plugins() {
        push_canonical_unique(&mut out, &mut seen, p);
    }
    out
}

/// [`find_plugin`] with the environment given explicitly.
pub fn find_plugin_in(
    explicit: Option<&Path>,
    env: Option<OsString>,
    roots: &SearchRoots,
) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return existing(p.to_path_buf());
    }
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        return existing(PathBuf::from(v));
    }
    if let Some(p) = roots.candidates().into_iter().find(|p| p.is_file()) {
        return Ok(p);
    }
    Err(RuntimeError::PluginNotFound {
        searched: roots.searched(),
    })
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

    fn touch(path: &Path) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"x").unwrap();
        path.to_path_buf()
    }

    fn roots(cwd: Option<PathBuf>, exe: Option<PathBuf>) -> SearchRoots {
        SearchRoots {
            cwd,
            exe,
            ..SearchRoots::default()
        }
    }

    #[test]
    fn explicit_and_env_are_authoritative() {
        let dir = scratch("explicit");
        let plugin = touch(&dir.join("p.so"));
        let none = SearchRoots::default();
        assert_eq!(find_plugin_in(Some(&plugin), None, &none).unwrap(), plugin);
        let missing = dir.join("missing.so");
        let e = find_plugin_in(Some(&missing), Some(plugin.clone().into()), &none).unwrap_err();
        assert!(e.to_string().contains("missing.so"), "{e}");
        assert_eq!(
            find_plugin_in(None, Some(plugin.clone().into()), &none).unwrap(),
            plugin
        );
        let e = find_plugin_in(None, Some(missing.into()), &none).unwrap_err();
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

        let e =
            find_plugin_in(None, None, &roots(Some(cwd.clone()), Some(exe.clone()))).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("make setup"), "{msg}");
        assert!(msg.contains(&cwd.join(CPU_PLUGIN_RELATIVE_PATH).display().to_string()));

        let installed = touch(&root.join(CPU_PLUGIN_RELATIVE_PATH));
        assert_eq!(
            find_plugin_in(
                None,
                Some(OsString::new()),
                &roots(Some(cwd.clone()), Some(exe))
            )
            .unwrap(),
            installed
        );

        let in_cwd = touch(&cwd.join(CPU_PLUGIN_RELATIVE_PATH));
        assert_eq!(
            find_plugin_in(None, None, &roots(Some(cwd), None)).unwrap(),
            in_cwd
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("python3*", "python3.12"));
        assert!(wildcard_match("python3*", "python3"));
        assert!(!wildcard_match("python3*", "python2.7"));
        assert!(wildcard_match("xla_cuda*", "xla_cuda12"));
        assert!(wildcard_match("*", "anything"));
        assert!(wildcard_match("a*b*c", "aXXbYYc"));
        assert!(!wildcard_match("a*b*c", "aXXcYYb"));
        assert!(!wildcard_match("ab*ba", "aba"));
        assert!(wildcard_match("exact", "exact"));
        assert!(!wildcard_match("exact", "exactly"));
    }

    /// A fake file system with plugins in every kind of Python environment.
    #[test]
    fn finds_plugins_in_python_environments() {
        let root = scratch("python");
        let sys = root.join("sys");
        let home = root.join("home");
        let venv = root.join("venv");
        let conda = root.join("conda");
        let cwd = root.join("work");
        std::fs::create_dir_all(&cwd).unwrap();
        let r = SearchRoots {
            cwd: Some(cwd.clone()),
            exe: None,
            virtual_env: Some(venv.clone()),
            conda_prefix: Some(conda.clone()),
            home: Some(home.clone()),
            pyenv_root: None,
            system_root: Some(sys.clone()),
        };
        // Nothing installed: the error lists the Python patterns too.
        let msg = find_plugin_in(None, None, &r).unwrap_err().to_string();
        assert!(msg.contains("site-packages/libtpu/libtpu.so"), "{msg}");
        assert!(msg.contains(".pyenv/versions/*/lib/python3*"), "{msg}");
        assert!(all_plugins_in(None, &r).is_empty());

        let pyenv_cpu = touch(&home.join(
            ".pyenv/versions/3.12.9/lib/python3.12/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
        ));
        let debian = touch(&sys.join("usr/lib/python3/dist-packages/libtpu/libtpu.so"));
        let usr_local = touch(
            &sys.join("usr/local/lib/python3.11/dist-packages/libneuronxla/libneuronpjrt.so"),
        );
        let user_cuda =
            touch(&home.join(
                ".local/lib/python3.12/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so",
            ));
        let conda_tpu = touch(&conda.join("lib/python3.10/site-packages/libtpu/libtpu.so"));
        let venv_cpu = touch(
            &venv.join("lib/python3.12/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"),
        );
        let venv_cuda = touch(
            &venv.join("lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"),
        );
        // Not plugins: a directory with the right name, an unrelated .so.
        std::fs::create_dir_all(venv.join("lib/python3.12/site-packages/libtpu/libtpu.so/x"))
            .unwrap();
        touch(&venv.join("lib/python3.12/site-packages/numpy/core/_multiarray.so"));

        let expected = vec![
            venv_cuda.clone(),
            venv_cpu,
            conda_tpu,
            user_cuda,
            usr_local,
            debian,
            pyenv_cpu,
        ];
        assert_eq!(all_plugins_in(None, &r), expected);
        // Accelerator plugins first within an environment.
        assert_eq!(find_plugin_in(None, None, &r).unwrap(), venv_cuda);

        // The project's .deps plugin comes before Python environments, and the
        // environment variable before everything; each file is listed once.
        let deps = touch(&cwd.join(CPU_PLUGIN_RELATIVE_PATH));
        assert_eq!(find_plugin_in(None, None, &r).unwrap(), deps);
        let listed = all_plugins_in(Some(venv_cuda.clone().into()), &r);
        assert_eq!(listed[0], venv_cuda);
        assert_eq!(listed[1], deps);
        assert_eq!(listed.len(), expected.len() + 1);

        // pyenv honours PYENV_ROOT.
        let r2 = SearchRoots {
            cwd: Some(root.clone()),
            pyenv_root: Some(root.join("elsewhere-pyenv")),
            ..SearchRoots::default()
        };
        assert!(all_plugins_in(None, &r2).is_empty());
        let moved =
            touch(&root.join(
                "elsewhere-pyenv/versions/3.13.1/lib/python3.13/site-packages/libtpu/libtpu.so",
            ));
        assert_eq!(all_plugins_in(None, &r2), vec![moved]);
        std::fs::remove_dir_all(root).unwrap();
    }
}
