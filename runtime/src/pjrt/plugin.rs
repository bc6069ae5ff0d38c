//! [`Plugin`]: a PJRT plugin, loaded once per process and never unloaded.

use super::{ffi, named_values_from_raw, Client, ClientOptions, NamedValue};
use crate::error::{Result, RuntimeError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Arc, Mutex, OnceLock};

/// PJRT C API version a plugin implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ApiVersion {
    pub major: i32,
    pub minor: i32,
}

impl std::fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A loaded and initialized PJRT plugin.
pub struct Plugin {
    pub(super) path: PathBuf,
    /// Kept so the code stays mapped; never unloaded (see the module docs).
    pub(super) _library: libloading::Library,
    pub(super) api: *const ffi::PJRT_Api,
    pub(super) api_struct_size: usize,
    pub(super) version: ApiVersion,
    pub(super) attributes: Vec<(String, NamedValue)>,
}

// SAFETY: `api` points to the plugin's function table, which is immutable after
// `GetPjrtApi` and lives as long as the library (forever: plugins are never unloaded).
// The C API requires its functions to be callable from any thread.
unsafe impl Send for Plugin {}
unsafe impl Sync for Plugin {}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Arc<Plugin>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<PathBuf, Arc<Plugin>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The environment variable that keeps libtpu from polling the cloud metadata server
/// (for minutes, off a TPU VM) when it initializes.
pub(crate) const SKIP_MDS_QUERY_VAR: &str = "TPU_SKIP_MDS_QUERY";

/// Sets the environment plugins read when they initialize, once per process, before
/// the first plugin is loaded: `TPU_SKIP_MDS_QUERY=1` unless the user set it. Returns
/// whether this call did it (the first one).
///
/// Why this is safe(r) than setting it when libtpu itself is loaded, as before:
/// `std::env::set_var` is only sound while no other thread reads the environment
/// through C's `getenv` (Rust's own readers take std's environment lock; C code in a
/// plugin does not). Plugins start threads and call `getenv` from them, so a write
/// after a plugin (say the CPU plugin, in a test binary that later loads libtpu) was
/// loaded races with them. Here the write happens at most once, under a `Once`, before
/// any plugin's code has run in this process; what remains is the caller's promise
/// that no other C code reads the environment concurrently with its first
/// `Plugin::load` (a PJRT setting could not replace the variable: libtpu reads it
/// during `PJRT_Plugin_Initialize`, which takes no options).
pub(crate) fn prepare_environment() -> bool {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let mut did = false;
    ONCE.call_once(|| {
        did = true;
        if std::env::var_os(SKIP_MDS_QUERY_VAR).is_none() {
            std::env::set_var(SKIP_MDS_QUERY_VAR, "1");
        }
    });
    did
}

impl Plugin {
    /// Loads (once per process) and initializes the PJRT plugin at `path`.
    ///
    /// Returns an `Arc` because clients keep their plugin alive; loading the same file
    /// again returns the same plugin.
    pub fn load(path: impl AsRef<Path>) -> Result<Arc<Plugin>> {
        let path = path.as_ref();
        let canonical = path.canonicalize().map_err(|e| RuntimeError::io(path, e))?;
        prepare_environment();
        let mut plugins = registry()
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(p) = plugins.get(&canonical) {
            return Ok(p.clone());
        }
        let plugin = Arc::new(Plugin::open(canonical.clone())?);
        plugins.insert(canonical, plugin.clone());
        Ok(plugin)
    }

    fn open(path: PathBuf) -> Result<Plugin> {
        // SAFETY: loading a shared library runs its initializers. That is inherent to
        // using a plugin; the path is one the user chose as a PJRT plugin.
        let library = unsafe { libloading::Library::new(&path) }.map_err(|source| {
            RuntimeError::PluginLoad {
                path: path.clone(),
                source,
            }
        })?;
        // SAFETY: `GetPjrtApi` has this signature in every PJRT plugin.
        let get_api: ffi::GetPjrtApiFn = unsafe {
            *library
                .get::<ffi::GetPjrtApiFn>(b"GetPjrtApi\0")
                .map_err(|e| RuntimeError::Plugin {
                    path: path.clone(),
                    message: format!("not a PJRT plugin (no GetPjrtApi symbol): {e}"),
                })?
        };
        // SAFETY: FFI call without arguments.
        let api = unsafe { get_api() };
        if api.is_null() {
            return Err(RuntimeError::Plugin {
                path,
                message: "GetPjrtApi returned null".into(),
            });
        }
        // SAFETY: every PJRT_Api starts with struct_size, extension_start and the version.
        let (api_struct_size, version) = unsafe {
            let size = ptr::addr_of!((*api).struct_size).read();
            let v = ptr::addr_of!((*api).pjrt_api_version).read();
            (
                size,
                ApiVersion {
                    major: v.major_version,
                    minor: v.minor_version,
                },
            )
        };
        if api_struct_size < ffi::PJRT_Api::TABLE_OFFSET {
            return Err(RuntimeError::Plugin {
                path,
                message: format!("PJRT_Api struct_size {api_struct_size} is implausibly small"),
            });
        }
        if version.major != ffi::HEADER_API_MAJOR {
            return Err(RuntimeError::Plugin {
                path,
                message: format!(
                    "PJRT C API {version} is not supported (this runtime speaks {}.x)",
                    ffi::HEADER_API_MAJOR
                ),
            });
        }
        let mut plugin = Plugin {
            path,
            _library: library,
            api,
            api_struct_size,
            version,
            attributes: Vec::new(),
        };
        // Error reporting must work before anything else is called.
        api_fn!(&plugin, PJRT_Error_Destroy)?;
        api_fn!(&plugin, PJRT_Error_Message)?;
        api_fn!(&plugin, PJRT_Error_GetCode)?;

        let init = api_fn!(&plugin, PJRT_Plugin_Initialize)?;
        let mut a = args!(PJRT_Plugin_Initialize_Args {});
        // SAFETY: valid args struct; called once per process for this plugin (registry).
        plugin.check("PJRT_Plugin_Initialize", unsafe { init(&mut a) })?;

        plugin.attributes = plugin.read_attributes()?;
        Ok(plugin)
    }

    fn read_attributes(&self) -> Result<Vec<(String, NamedValue)>> {
        // Optional: older plugins have no attributes.
        let Ok(f) = api_fn!(self, PJRT_Plugin_Attributes) else {
            return Ok(Vec::new());
        };
        let mut a = args!(PJRT_Plugin_Attributes_Args {});
        // SAFETY: valid args struct.
        self.check("PJRT_Plugin_Attributes", unsafe { f(&mut a) })?;
        // SAFETY: the plugin returned an array of `num_attributes` values that lives as
        // long as the process.
        Ok(unsafe { named_values_from_raw(a.attributes, a.num_attributes) })
    }

    pub(super) fn missing(&self, name: &str) -> RuntimeError {
        RuntimeError::Plugin {
            path: self.path.clone(),
            message: format!(
                "the plugin (PJRT C API {}) does not implement {name}",
                self.version
            ),
        }
    }

    /// Path the plugin was loaded from (canonical).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// PJRT C API version the plugin implements.
    pub fn api_version(&self) -> ApiVersion {
        self.version
    }

    /// Attributes the plugin reports (`xla_version`, `stablehlo_current_version`, ...).
    pub fn attributes(&self) -> &[(String, NamedValue)] {
        &self.attributes
    }

    pub fn attribute(&self, name: &str) -> Option<&NamedValue> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// Newest StableHLO version the plugin accepts (`"1.20.0"`), if it says.
    pub fn stablehlo_current_version(&self) -> Option<String> {
        self.attribute("stablehlo_current_version")
            .and_then(NamedValue::as_version)
    }

    /// Oldest StableHLO version the plugin accepts, if it says.
    pub fn stablehlo_minimum_version(&self) -> Option<String> {
        self.attribute("stablehlo_minimum_version")
            .and_then(NamedValue::as_version)
    }

    /// Creates a client (for the CPU plugin: a set of CPU devices).
    pub fn create_client(self: &Arc<Self>, options: &ClientOptions) -> Result<Client> {
        Client::create(self.clone(), options)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs the test `name` of this binary in a child process with `env` added, and
    /// returns its stdout: environment tests must not write the test process's
    /// environment, which other tests' threads read.
    pub(crate) fn in_child(name: &str, env: &[(&str, &str)], remove: &[&str]) -> String {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env("TPUC_ENV_TEST_CHILD", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        for k in remove {
            cmd.env_remove(k);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// In a child process (see `in_child`): prepares the environment twice and prints
    /// what each call did and the value that results.
    #[test]
    fn child_prepare_environment() {
        if std::env::var_os("TPUC_ENV_TEST_CHILD").is_none() {
            return;
        }
        let first = prepare_environment();
        let second = prepare_environment();
        let value = std::env::var(SKIP_MDS_QUERY_VAR).unwrap_or_default();
        println!("RESULT first={first} second={second} value={value}");
    }

    #[test]
    fn plugin_environment_is_set_once_and_a_users_value_wins() {
        let name = "pjrt::plugin::tests::child_prepare_environment";
        let unset = in_child(name, &[], &[SKIP_MDS_QUERY_VAR]);
        assert!(
            unset.contains("RESULT first=true second=false value=1"),
            "{unset}"
        );
        let user = in_child(name, &[(SKIP_MDS_QUERY_VAR, "0")], &[]);
        assert!(
            user.contains("RESULT first=true second=false value=0"),
            "{user}"
        );
    }
}
