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

impl Plugin {
    /// Loads (once per process) and initializes the PJRT plugin at `path`.
    ///
    /// Returns an `Arc` because clients keep their plugin alive; loading the same file
    /// again returns the same plugin.
    pub fn load(path: impl AsRef<Path>) -> Result<Arc<Plugin>> {
        let path = path.as_ref();
        let canonical = path.canonicalize().map_err(|e| RuntimeError::io(path, e))?;
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

        if plugin.is_libtpu() && std::env::var_os("TPU_SKIP_MDS_QUERY").is_none() {
            // libtpu otherwise polls the cloud metadata server for minutes. It reads the
            // variable during initialization, so it must be set in-process, here.
            std::env::set_var("TPU_SKIP_MDS_QUERY", "1");
        }
        let init = api_fn!(&plugin, PJRT_Plugin_Initialize)?;
        let mut a = args!(PJRT_Plugin_Initialize_Args {});
        // SAFETY: valid args struct; called once per process for this plugin (registry).
        plugin.check("PJRT_Plugin_Initialize", unsafe { init(&mut a) })?;

        plugin.attributes = plugin.read_attributes()?;
        Ok(plugin)
    }

    fn is_libtpu(&self) -> bool {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().contains("libtpu"))
            .unwrap_or(false)
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
