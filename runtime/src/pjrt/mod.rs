//! Safe wrappers over the PJRT C API: load a plugin, create a client, compile StableHLO,
//! move tensors to and from devices, execute.
//!
//! Ownership and lifetimes:
//! - [`Plugin`]s live for the rest of the process once loaded. `Plugin::load` keeps
//!   every plugin in a process-wide registry (loading the same file twice gives the same
//!   `Arc<Plugin>`, initialized once) and never unloads it: XLA plugins start threads and
//!   register static destructors, and `dlclose` under them is not safe.
//! - A [`Client`] holds an `Arc<Plugin>`; [`LoadedExecutable`]s and [`Buffer`]s hold the
//!   client (an `Arc` of its inner state), so a client is destroyed only after the last
//!   buffer and executable made from it.
//!
//! Thread safety: the PJRT C API requires its functions to be thread-safe, and the
//! objects behind the handles (XLA's `PjRtClient`, `PjRtLoadedExecutable`,
//! `PjRtBuffer`) are designed for concurrent use: clients compile and transfer from many
//! threads, executables run concurrently, buffers can be read by several threads.
//! Destruction happens only in `Drop`, which Rust makes exclusive. Hence every wrapper
//! here is `Send + Sync`; the `unsafe impl`s below state this per type.

pub mod ffi;

use crate::compile_options::CompileOptions;
use crate::error::{ErrorCode, Result, RuntimeError};
use crate::{DType, HostTensor};
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::mem::offset_of;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Arc, Mutex, OnceLock};

/// Reads function `$name` from a plugin's API table, checking that the plugin's table is
/// long enough to have the slot and that the slot is filled.
macro_rules! api_fn {
    ($plugin:expr, $name:ident) => {{
        let plugin: &Plugin = $plugin;
        let offset = offset_of!(ffi::PJRT_Api, $name);
        if ffi::PJRT_Api::has_slot(plugin.api_struct_size, offset) {
            // SAFETY: the table is at least `api_struct_size` bytes long (the plugin says
            // so) and the slot lies inside it; it is read through a raw pointer so that no
            // reference to a possibly shorter table is ever formed.
            let f = unsafe { ptr::addr_of!((*plugin.api).$name).read() };
            f.ok_or_else(|| plugin.missing(stringify!($name)))
        } else {
            Err(plugin.missing(stringify!($name)))
        }
    }};
}

/// Zero-initialized args struct with `struct_size` set.
macro_rules! args {
    ($ty:ident { $($field:ident : $value:expr),* $(,)? }) => {{
        // SAFETY: every PJRT args struct is plain old data (integers, bools, raw pointers
        // and nullable function pointers), for which all-zero bytes is a valid value.
        let mut a: ffi::$ty = unsafe { std::mem::zeroed() };
        a.struct_size = ffi::$ty::STRUCT_SIZE;
        $(a.$field = $value;)*
        a
    }};
}

// After the macros, which they use.
mod executable;
pub mod topology;

// ----------------------------------------------------------------------------------------
// Plugin
// ----------------------------------------------------------------------------------------

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

/// A value of a plugin attribute or a client create option (`PJRT_NamedValue`).
#[derive(Clone, Debug, PartialEq)]
pub enum NamedValue {
    String(String),
    Int64(i64),
    Int64List(Vec<i64>),
    Float(f32),
    Bool(bool),
}

impl NamedValue {
    /// A number (a float or an integer) as `f64`; other kinds give `None`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            NamedValue::Float(f) => Some(*f as f64),
            NamedValue::Int64(i) => Some(*i as f64),
            _ => None,
        }
    }

    /// Versions are reported as int lists (`[1, 20, 0]`) or strings; both read `1.20.0`.
    fn as_version(&self) -> Option<String> {
        match self {
            NamedValue::String(s) => Some(s.clone()),
            NamedValue::Int64List(v) => Some(
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            NamedValue::Int64(v) => Some(v.to_string()),
            _ => None,
        }
    }
}

/// A loaded and initialized PJRT plugin.
pub struct Plugin {
    path: PathBuf,
    /// Kept so the code stays mapped; never unloaded (see the module docs).
    _library: libloading::Library,
    api: *const ffi::PJRT_Api,
    api_struct_size: usize,
    version: ApiVersion,
    attributes: Vec<(String, NamedValue)>,
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

/// Copies a (pointer, length) string owned by the plugin.
///
/// # Safety
/// `ptr` must be null or point to `len` readable bytes.
unsafe fn string_from_raw(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() || len == 0 {
        return String::new();
    }
    let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
    String::from_utf8_lossy(bytes).into_owned()
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

    fn missing(&self, name: &str) -> RuntimeError {
        RuntimeError::Plugin {
            path: self.path.clone(),
            message: format!(
                "the plugin (PJRT C API {}) does not implement {name}",
                self.version
            ),
        }
    }

    /// Turns a returned `PJRT_Error*` into a result, destroying the error.
    fn check(&self, call: &'static str, error: *mut ffi::PJRT_Error) -> Result<()> {
        if error.is_null() {
            return Ok(());
        }
        let mut message = String::new();
        if let Ok(f) = api_fn!(self, PJRT_Error_Message) {
            let mut a = args!(PJRT_Error_Message_Args { error: error });
            // SAFETY: `error` is a live error; the message lives as long as it does and
            // is copied before the error is destroyed.
            unsafe {
                f(&mut a);
                message = string_from_raw(a.message, a.message_size);
            }
        }
        let mut code = ErrorCode::Unknown;
        if let Ok(f) = api_fn!(self, PJRT_Error_GetCode) {
            let mut a = args!(PJRT_Error_GetCode_Args { error: error });
            // SAFETY: `error` is a live error.
            let e = unsafe { f(&mut a) };
            if e.is_null() {
                code = ErrorCode::from_raw(a.code);
            } else {
                self.destroy_error(e);
            }
        }
        self.destroy_error(error);
        Err(RuntimeError::Pjrt {
            call,
            code,
            message,
        })
    }

    fn destroy_error(&self, error: *mut ffi::PJRT_Error) {
        if let Ok(f) = api_fn!(self, PJRT_Error_Destroy) {
            let mut a = args!(PJRT_Error_Destroy_Args { error: error });
            // SAFETY: `error` is live and destroyed exactly once.
            unsafe { f(&mut a) };
        }
    }

    /// Waits for `event` (null is a no-op), destroys it and reports its error.
    fn await_event(&self, call: &'static str, event: *mut ffi::PJRT_Event) -> Result<()> {
        if event.is_null() {
            return Ok(());
        }
        let result = match api_fn!(self, PJRT_Event_Await) {
            Ok(f) => {
                let mut a = args!(PJRT_Event_Await_Args { event: event });
                // SAFETY: `event` is a live event owned by us.
                self.check(call, unsafe { f(&mut a) })
            }
            Err(e) => Err(e),
        };
        self.destroy_event(event);
        result
    }

    fn destroy_event(&self, event: *mut ffi::PJRT_Event) {
        if event.is_null() {
            return;
        }
        if let Ok(f) = api_fn!(self, PJRT_Event_Destroy) {
            let mut a = args!(PJRT_Event_Destroy_Args { event: event });
            // SAFETY: `event` is live and destroyed exactly once.
            let e = unsafe { f(&mut a) };
            if !e.is_null() {
                self.destroy_error(e);
            }
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

/// Compile options as a plugin takes them: never empty (empty options abort the
/// plugin process on a `replica_count > 0` CHECK).
fn encode_options(options: &CompileOptions) -> Result<Vec<u8>> {
    let bytes = options.encode()?;
    if bytes.is_empty() {
        return Err(RuntimeError::CompileOptions(
            "refusing to send empty compile options".into(),
        ));
    }
    Ok(bytes)
}

/// `code` in `format` (`"mlir"`, `"hlo"`) as a `PJRT_Program`; it borrows both.
fn program_of(code: &[u8], format: &str) -> ffi::PJRT_Program {
    args!(PJRT_Program {
        // The plugin does not write through `code` (the header lacks `const`).
        code: code.as_ptr().cast_mut().cast(),
        code_size: code.len(),
        format: format.as_ptr().cast(),
        format_size: format.len(),
    })
}

/// The `n` named values at `values` (a plugin's array), copied; null reads as none.
///
/// # Safety
/// `values` must be null or point to `n` valid `PJRT_NamedValue`s whose pointers are live.
unsafe fn named_values_from_raw(
    values: *const ffi::PJRT_NamedValue,
    n: usize,
) -> Vec<(String, NamedValue)> {
    if values.is_null() {
        return Vec::new();
    }
    std::slice::from_raw_parts(values, n)
        .iter()
        .filter_map(|v| named_value_from_raw(v))
        .collect()
}

/// # Safety
/// `v` must be a valid `PJRT_NamedValue` whose pointers are live.
unsafe fn named_value_from_raw(v: &ffi::PJRT_NamedValue) -> Option<(String, NamedValue)> {
    let name = string_from_raw(v.name, v.name_size);
    let value = match v.type_ {
        ffi::PJRT_NamedValue_kString => {
            NamedValue::String(string_from_raw(v.value.string_value, v.value_size))
        }
        ffi::PJRT_NamedValue_kInt64 => NamedValue::Int64(v.value.int64_value),
        ffi::PJRT_NamedValue_kInt64List => {
            let p = v.value.int64_array_value;
            if p.is_null() || v.value_size == 0 {
                NamedValue::Int64List(Vec::new())
            } else {
                NamedValue::Int64List(std::slice::from_raw_parts(p, v.value_size).to_vec())
            }
        }
        ffi::PJRT_NamedValue_kFloat => NamedValue::Float(v.value.float_value),
        // Read the byte, not a `bool`, so a value other than 0/1 cannot be UB.
        ffi::PJRT_NamedValue_kBool => {
            NamedValue::Bool(ptr::addr_of!(v.value).cast::<u8>().read() != 0)
        }
        _ => return None,
    };
    Some((name, value))
}

// ----------------------------------------------------------------------------------------
// Client
// ----------------------------------------------------------------------------------------

/// Options for [`Plugin::create_client`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientOptions {
    /// Number of CPU devices of the CPU plugin (it defaults to 4). Several devices are
    /// how sharded programs run on CPU.
    pub cpu_device_count: Option<i64>,
    /// Further plugin-specific create options, passed as they are.
    pub extra: Vec<(String, NamedValue)>,
}

impl ClientOptions {
    /// Options for a client with `n` CPU devices.
    pub fn cpu(n: i64) -> ClientOptions {
        ClientOptions {
            cpu_device_count: Some(n),
            extra: Vec::new(),
        }
    }
}

/// A device of a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Global device id.
    pub id: i32,
    /// Device kind (`"cpu"`, `"TPU v5 lite"`, ...).
    pub kind: String,
    /// Whether this process can put buffers on it and run programs there.
    pub addressable: bool,
}

struct ClientInner {
    plugin: Arc<Plugin>,
    raw: *mut ffi::PJRT_Client,
    platform_name: String,
    /// Empty when the plugin does not say.
    platform_version: String,
    devices: Vec<Device>,
    addressable: Vec<Device>,
    /// Raw handles of `addressable`, same order; owned by the client.
    addressable_raw: Vec<*mut ffi::PJRT_Device>,
}

// SAFETY: a PJRT_Client (XLA's PjRtClient) is thread-safe: compile, transfers and
// queries may be issued from any thread concurrently. Device handles are immutable and
// owned by the client. The client is destroyed only when the last Arc goes away.
unsafe impl Send for ClientInner {}
unsafe impl Sync for ClientInner {}

impl Drop for ClientInner {
    fn drop(&mut self) {
        if let Ok(f) = api_fn!(&self.plugin, PJRT_Client_Destroy) {
            let mut a = args!(PJRT_Client_Destroy_Args { client: self.raw });
            // SAFETY: the client is live and no buffer/executable refers to it any more
            // (they hold this Arc). Errors are reported by nobody: Drop cannot fail.
            let e = unsafe { f(&mut a) };
            let _ = self.plugin.check("PJRT_Client_Destroy", e);
        }
    }
}

/// A PJRT client. Cheap to clone (shared handle).
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("platform", &self.inner.platform_name)
            .field("devices", &self.inner.devices)
            .finish_non_exhaustive()
    }
}

impl Client {
    fn create(plugin: Arc<Plugin>, options: &ClientOptions) -> Result<Client> {
        let create = api_fn!(&plugin, PJRT_Client_Create)?;

        // Owned copies of names and values that the raw NamedValues point into; they
        // outlive the call below.
        let mut named: Vec<(String, NamedValue)> = Vec::new();
        if let Some(n) = options.cpu_device_count {
            named.push(("cpu_device_count".into(), NamedValue::Int64(n)));
        }
        named.extend(options.extra.iter().cloned());
        let raw_values: Vec<ffi::PJRT_NamedValue> = named
            .iter()
            .map(|(name, value)| {
                let (type_, value, value_size) = match value {
                    NamedValue::String(s) => (
                        ffi::PJRT_NamedValue_kString,
                        ffi::PJRT_NamedValue_Value {
                            string_value: s.as_ptr().cast(),
                        },
                        s.len(),
                    ),
                    NamedValue::Int64(v) => (
                        ffi::PJRT_NamedValue_kInt64,
                        ffi::PJRT_NamedValue_Value { int64_value: *v },
                        1,
                    ),
                    NamedValue::Int64List(v) => (
                        ffi::PJRT_NamedValue_kInt64List,
                        ffi::PJRT_NamedValue_Value {
                            int64_array_value: v.as_ptr(),
                        },
                        v.len(),
                    ),
                    NamedValue::Float(v) => (
                        ffi::PJRT_NamedValue_kFloat,
                        ffi::PJRT_NamedValue_Value { float_value: *v },
                        1,
                    ),
                    NamedValue::Bool(v) => (
                        ffi::PJRT_NamedValue_kBool,
                        ffi::PJRT_NamedValue_Value { bool_value: *v },
                        1,
                    ),
                };
                args!(PJRT_NamedValue {
                    name: name.as_ptr().cast(),
                    name_size: name.len(),
                    type_: type_,
                    value: value,
                    value_size: value_size,
                })
            })
            .collect();

        let mut a = args!(PJRT_Client_Create_Args {
            create_options: if raw_values.is_empty() {
                ptr::null()
            } else {
                raw_values.as_ptr()
            },
            num_options: raw_values.len(),
        });
        // SAFETY: valid args; the option array and what it points to outlive the call.
        plugin.check("PJRT_Client_Create", unsafe { create(&mut a) })?;
        if a.client.is_null() {
            return Err(RuntimeError::Plugin {
                path: plugin.path.clone(),
                message: "PJRT_Client_Create returned no client".into(),
            });
        }
        // From here on the client is owned by `inner` and destroyed on any error.
        let mut inner = ClientInner {
            plugin,
            raw: a.client,
            platform_name: String::new(),
            platform_version: String::new(),
            devices: Vec::new(),
            addressable: Vec::new(),
            addressable_raw: Vec::new(),
        };
        inner.platform_name = inner.query_platform_name()?;
        // Informational (cache keys, `tpuc devices`): a plugin that cannot say is fine.
        inner.platform_version = inner.query_platform_version().unwrap_or_default();
        for d in inner.raw_devices(false)? {
            let device = inner.describe(d, false)?;
            inner.devices.push(device);
        }
        for d in inner.raw_devices(true)? {
            let device = inner.describe(d, true)?;
            inner.addressable.push(device);
            inner.addressable_raw.push(d);
        }
        for d in &mut inner.devices {
            d.addressable = inner.addressable.iter().any(|a| a.id == d.id);
        }
        Ok(Client {
            inner: Arc::new(inner),
        })
    }

    /// The plugin this client belongs to.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.inner.plugin
    }

    /// `"cpu"`, `"cuda"`, `"tpu"`, ...
    pub fn platform_name(&self) -> &str {
        &self.inner.platform_name
    }

    /// Platform-specific version (the CUDA version, the libtpu version, ...); empty when
    /// the plugin does not report one.
    pub fn platform_version(&self) -> &str {
        &self.inner.platform_version
    }

    /// All devices the client knows, addressable or not.
    pub fn devices(&self) -> &[Device] {
        &self.inner.devices
    }

    /// Devices this process can use; `device_index` arguments index this list.
    pub fn addressable_devices(&self) -> &[Device] {
        &self.inner.addressable
    }

    /// Compiles a StableHLO program in MLIR text (generic or pretty form), MLIR bytecode
    /// or a StableHLO portable artifact.
    pub fn compile_mlir(&self, text: &str, options: &CompileOptions) -> Result<LoadedExecutable> {
        self.compile(text.as_bytes(), "mlir", options)
    }

    /// Compiles a program in the given PJRT format (`"mlir"` or `"hlo"`, a serialized
    /// `HloModuleProto`).
    pub fn compile(
        &self,
        code: &[u8],
        format: &str,
        options: &CompileOptions,
    ) -> Result<LoadedExecutable> {
        let plugin = &self.inner.plugin;
        let compile = api_fn!(plugin, PJRT_Client_Compile)?;
        let options = encode_options(options)?;
        let program = program_of(code, format);
        let mut a = args!(PJRT_Client_Compile_Args {
            client: self.inner.raw,
            program: &program,
            compile_options: options.as_ptr().cast(),
            compile_options_size: options.len(),
        });
        // SAFETY: valid args; program text and options outlive the call.
        plugin.check("PJRT_Client_Compile", unsafe { compile(&mut a) })?;
        self.wrap_executable("PJRT_Client_Compile", a.executable)
    }

    /// Loads an executable serialized by [`LoadedExecutable::serialize`] (with the same
    /// plugin build and platform) onto this client's devices, without compiling.
    ///
    /// Bytes the plugin cannot read are an error. They are handed to the plugin as they
    /// are: pass only bytes that came from `serialize` (the session's cache checks a
    /// SHA-256 of each entry before calling this).
    pub fn deserialize(&self, bytes: &[u8]) -> Result<LoadedExecutable> {
        if bytes.is_empty() {
            return Err(RuntimeError::InvalidArgument(
                "cannot deserialize an executable from empty bytes".into(),
            ));
        }
        let plugin = &self.inner.plugin;
        let f = api_fn!(plugin, PJRT_Executable_DeserializeAndLoad)?;
        let mut a = args!(PJRT_Executable_DeserializeAndLoad_Args {
            client: self.inner.raw,
            serialized_executable: bytes.as_ptr().cast(),
            serialized_executable_size: bytes.len(),
        });
        // SAFETY: valid args; `bytes` outlives the call; null compile options and load
        // options mean "as serialized" and "defaults".
        plugin.check("PJRT_Executable_DeserializeAndLoad", unsafe { f(&mut a) })?;
        self.wrap_executable("PJRT_Executable_DeserializeAndLoad", a.loaded_executable)
    }

    /// Takes ownership of a loaded executable returned by `call` and reads its shape.
    fn wrap_executable(
        &self,
        call: &str,
        raw: *mut ffi::PJRT_LoadedExecutable,
    ) -> Result<LoadedExecutable> {
        if raw.is_null() {
            return Err(RuntimeError::Plugin {
                path: self.inner.plugin.path.clone(),
                message: format!("{call} returned no executable"),
            });
        }
        // Owned from here on: destroyed by Drop if a query below fails.
        let mut exe = LoadedExecutable {
            client: self.inner.clone(),
            raw,
            num_outputs: 0,
            num_devices: 0,
        };
        exe.num_outputs = exe.query_num_outputs()?;
        exe.num_devices = exe.query_num_devices()?;
        Ok(exe)
    }

    /// Copies a host tensor to addressable device `device_index`.
    pub fn buffer_from_host(&self, tensor: &HostTensor, device_index: usize) -> Result<Buffer> {
        self.buffer_from_slice(tensor.dtype, &tensor.shape, &tensor.data, device_index)
    }

    /// Copies dense row-major little-endian bytes (for example a view into a mapped
    /// weights file; no alignment required) to addressable device `device_index`.
    pub fn buffer_from_slice(
        &self,
        dtype: DType,
        shape: &[i64],
        data: &[u8],
        device_index: usize,
    ) -> Result<Buffer> {
        let inner = &self.inner;
        let plugin = &inner.plugin;
        let device = *inner.addressable_raw.get(device_index).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "device index {device_index} out of range: the client has {} addressable device(s)",
                inner.addressable_raw.len()
            ))
        })?;
        check_host_data(dtype, shape, data.len())?;
        let f = api_fn!(plugin, PJRT_Client_BufferFromHostBuffer)?;
        let mut a = args!(PJRT_Client_BufferFromHostBuffer_Args {
            client: inner.raw,
            data: data.as_ptr().cast::<c_void>(),
            type_: buffer_type(dtype),
            dims: shape.as_ptr(),
            num_dims: shape.len(),
            host_buffer_semantics: ffi::PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
            device: device,
        });
        // SAFETY: valid args; with kImmutableOnlyDuringCall the plugin is done with the
        // host data when the call returns (we still wait for the event below).
        let error = unsafe { f(&mut a) };
        let done = a.done_with_host_buffer;
        if let Err(e) = plugin.check("PJRT_Client_BufferFromHostBuffer", error) {
            plugin.destroy_event(done);
            return Err(e);
        }
        // Own the buffer first, so that it is destroyed if waiting fails.
        let buffer = Buffer::wrap(inner.clone(), a.buffer)?;
        plugin.await_event(
            "PJRT_Client_BufferFromHostBuffer (done_with_host_buffer)",
            done,
        )?;
        Ok(buffer)
    }

    /// Creates a client of `plugin` with default options; see [`Plugin::create_client`].
    pub fn new(plugin: &Arc<Plugin>) -> Result<Client> {
        plugin.create_client(&ClientOptions::default())
    }

    fn same_client(&self, other: &Arc<ClientInner>) -> bool {
        Arc::ptr_eq(&self.inner, other)
    }
}

impl ClientInner {
    fn query_platform_name(&self) -> Result<String> {
        let f = api_fn!(&self.plugin, PJRT_Client_PlatformName)?;
        let mut a = args!(PJRT_Client_PlatformName_Args { client: self.raw });
        // SAFETY: valid args; the name is owned by the client and copied right away.
        self.plugin
            .check("PJRT_Client_PlatformName", unsafe { f(&mut a) })?;
        Ok(unsafe { string_from_raw(a.platform_name, a.platform_name_size) })
    }

    fn query_platform_version(&self) -> Result<String> {
        let f = api_fn!(&self.plugin, PJRT_Client_PlatformVersion)?;
        let mut a = args!(PJRT_Client_PlatformVersion_Args { client: self.raw });
        // SAFETY: valid args; the version is owned by the client and copied right away.
        self.plugin
            .check("PJRT_Client_PlatformVersion", unsafe { f(&mut a) })?;
        Ok(unsafe { string_from_raw(a.platform_version, a.platform_version_size) })
    }

    fn raw_devices(&self, addressable: bool) -> Result<Vec<*mut ffi::PJRT_Device>> {
        let (list, n) = if addressable {
            let f = api_fn!(&self.plugin, PJRT_Client_AddressableDevices)?;
            let mut a = args!(PJRT_Client_AddressableDevices_Args { client: self.raw });
            // SAFETY: valid args.
            self.plugin
                .check("PJRT_Client_AddressableDevices", unsafe { f(&mut a) })?;
            (a.addressable_devices, a.num_addressable_devices)
        } else {
            let f = api_fn!(&self.plugin, PJRT_Client_Devices)?;
            let mut a = args!(PJRT_Client_Devices_Args { client: self.raw });
            // SAFETY: valid args.
            self.plugin
                .check("PJRT_Client_Devices", unsafe { f(&mut a) })?;
            (a.devices, a.num_devices)
        };
        if list.is_null() || n == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: the client owns an array of `n` device handles.
        Ok(unsafe { std::slice::from_raw_parts(list, n) }.to_vec())
    }

    fn describe(&self, device: *mut ffi::PJRT_Device, addressable: bool) -> Result<Device> {
        let plugin = &self.plugin;
        let get = api_fn!(plugin, PJRT_Device_GetDescription)?;
        let mut a = args!(PJRT_Device_GetDescription_Args { device: device });
        // SAFETY: valid args; the description is owned by the device.
        plugin.check("PJRT_Device_GetDescription", unsafe { get(&mut a) })?;
        let desc = a.device_description;

        let id_fn = api_fn!(plugin, PJRT_DeviceDescription_Id)?;
        let mut a = args!(PJRT_DeviceDescription_Id_Args {
            device_description: desc
        });
        // SAFETY: valid args.
        plugin.check("PJRT_DeviceDescription_Id", unsafe { id_fn(&mut a) })?;
        let id = a.id;

        let kind_fn = api_fn!(plugin, PJRT_DeviceDescription_Kind)?;
        let mut a = args!(PJRT_DeviceDescription_Kind_Args {
            device_description: desc
        });
        // SAFETY: valid args; the kind string is copied right away.
        plugin.check("PJRT_DeviceDescription_Kind", unsafe { kind_fn(&mut a) })?;
        let kind = unsafe { string_from_raw(a.device_kind, a.device_kind_size) };
        Ok(Device {
            id,
            kind,
            addressable,
        })
    }
}

fn check_host_data(dtype: DType, shape: &[i64], len: usize) -> Result<()> {
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(RuntimeError::InvalidArgument(format!(
            "tensor shape {shape:?} has a negative dimension {d}"
        )));
    }
    let expected = shape
        .iter()
        .try_fold(dtype.size_in_bytes(), |acc, &d| acc.checked_mul(d as usize));
    if expected != Some(len) {
        return Err(RuntimeError::InvalidArgument(format!(
            "tensor of dtype {dtype} and shape {shape:?} needs {} bytes, has {len}",
            expected.map_or_else(|| "too many".to_string(), |n| n.to_string()),
        )));
    }
    Ok(())
}

/// PJRT element type of a dtype.
pub fn buffer_type(dtype: DType) -> ffi::PJRT_Buffer_Type {
    match dtype {
        DType::F64 => ffi::PJRT_Buffer_Type_F64,
        DType::F32 => ffi::PJRT_Buffer_Type_F32,
        DType::F16 => ffi::PJRT_Buffer_Type_F16,
        DType::Bf16 => ffi::PJRT_Buffer_Type_BF16,
        DType::I64 => ffi::PJRT_Buffer_Type_S64,
        DType::I32 => ffi::PJRT_Buffer_Type_S32,
        DType::I16 => ffi::PJRT_Buffer_Type_S16,
        DType::I8 => ffi::PJRT_Buffer_Type_S8,
        DType::U8 => ffi::PJRT_Buffer_Type_U8,
        DType::Bool => ffi::PJRT_Buffer_Type_PRED,
    }
}

/// Dtype of a PJRT element type, if tpuc has one.
pub fn dtype_of_buffer_type(t: ffi::PJRT_Buffer_Type) -> Option<DType> {
    Some(match t {
        ffi::PJRT_Buffer_Type_F64 => DType::F64,
        ffi::PJRT_Buffer_Type_F32 => DType::F32,
        ffi::PJRT_Buffer_Type_F16 => DType::F16,
        ffi::PJRT_Buffer_Type_BF16 => DType::Bf16,
        ffi::PJRT_Buffer_Type_S64 => DType::I64,
        ffi::PJRT_Buffer_Type_S32 => DType::I32,
        ffi::PJRT_Buffer_Type_S16 => DType::I16,
        ffi::PJRT_Buffer_Type_S8 => DType::I8,
        ffi::PJRT_Buffer_Type_U8 => DType::U8,
        ffi::PJRT_Buffer_Type_PRED => DType::Bool,
        _ => return None,
    })
}

// ----------------------------------------------------------------------------------------
// Executables
// ----------------------------------------------------------------------------------------

/// XLA's memory account of a compiled program on one device (`xla::CompiledMemoryStats`,
/// device memory), in bytes. A plugin that leaves a field unset reports 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompiledMemoryStats {
    pub generated_code_size_in_bytes: i64,
    pub argument_size_in_bytes: i64,
    pub output_size_in_bytes: i64,
    /// Argument memory reused for outputs.
    pub alias_size_in_bytes: i64,
    pub temp_size_in_bytes: i64,
    pub peak_memory_in_bytes: i64,
}

/// A compiled program, loaded on the client's devices.
pub struct LoadedExecutable {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_LoadedExecutable,
    num_outputs: usize,
    num_devices: usize,
}

// SAFETY: XLA's PjRtLoadedExecutable may be executed from several threads at once; the
// handle is destroyed only in Drop.
unsafe impl Send for LoadedExecutable {}
unsafe impl Sync for LoadedExecutable {}

impl std::fmt::Debug for LoadedExecutable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedExecutable")
            .field("num_outputs", &self.num_outputs)
            .field("num_devices", &self.num_devices)
            .finish_non_exhaustive()
    }
}

impl Drop for LoadedExecutable {
    fn drop(&mut self) {
        let plugin = &self.client.plugin;
        if let Ok(f) = api_fn!(plugin, PJRT_LoadedExecutable_Destroy) {
            let mut a = args!(PJRT_LoadedExecutable_Destroy_Args {
                executable: self.raw
            });
            // SAFETY: live handle, destroyed once. Errors cannot be reported from Drop.
            let e = unsafe { f(&mut a) };
            let _ = plugin.check("PJRT_LoadedExecutable_Destroy", e);
        }
    }
}

impl LoadedExecutable {
    /// Runs `f` on the `PJRT_Executable` behind this loaded executable (obtained with
    /// `PJRT_LoadedExecutable_GetExecutable` and destroyed afterwards on every path).
    fn with_executable<T>(
        &self,
        f: impl FnOnce(&Plugin, *mut ffi::PJRT_Executable) -> Result<T>,
    ) -> Result<T> {
        let plugin = &self.client.plugin;
        let get = api_fn!(plugin, PJRT_LoadedExecutable_GetExecutable)?;
        let mut a = args!(PJRT_LoadedExecutable_GetExecutable_Args {
            loaded_executable: self.raw
        });
        // SAFETY: valid args.
        plugin.check("PJRT_LoadedExecutable_GetExecutable", unsafe {
            get(&mut a)
        })?;
        let exe = a.executable;
        if exe.is_null() {
            return Err(RuntimeError::Plugin {
                path: plugin.path.clone(),
                message: "PJRT_LoadedExecutable_GetExecutable returned no executable".into(),
            });
        }
        let result = f(plugin, exe);
        // The PJRT_Executable returned by GetExecutable is ours to destroy.
        let destroyed = match api_fn!(plugin, PJRT_Executable_Destroy) {
            Ok(destroy) => {
                let mut a = args!(PJRT_Executable_Destroy_Args { executable: exe });
                // SAFETY: live handle, destroyed once.
                let e = unsafe { destroy(&mut a) };
                plugin.check("PJRT_Executable_Destroy", e)
            }
            Err(e) => Err(e),
        };
        let value = result?;
        destroyed?;
        Ok(value)
    }

    fn query_num_outputs(&self) -> Result<usize> {
        self.with_executable(|plugin, exe| {
            let f = api_fn!(plugin, PJRT_Executable_NumOutputs)?;
            let mut a = args!(PJRT_Executable_NumOutputs_Args { executable: exe });
            // SAFETY: valid args.
            plugin.check("PJRT_Executable_NumOutputs", unsafe { f(&mut a) })?;
            Ok(a.num_outputs)
        })
    }

    /// The plugin's serialization of this executable (`PJRT_Executable_Serialize`), for
    /// [`Client::deserialize`] in this or a later process. The bytes are only meaningful
    /// to the same plugin build on the same kind of device; they are not stable across
    /// plugin versions.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        self.with_executable(executable::serialize)
    }

    /// The program as the plugin compiled it (optimized; for SPMD, one partition's
    /// program with its collectives): `(format, bytes)`, format `"hlo"` being a
    /// serialized `HloModuleProto` (see [`crate::hlo`]).
    pub fn optimized_program(&self) -> Result<(String, Vec<u8>)> {
        self.with_executable(executable::optimized_program)
    }

    /// What XLA allocated for one device's copy of this executable
    /// (`PJRT_Executable_GetCompiledMemoryStats`): for a partitioned program, one
    /// partition's arguments, outputs and temporaries.
    pub fn compiled_memory_stats(&self) -> Result<CompiledMemoryStats> {
        self.with_executable(executable::compiled_memory_stats)
    }

    fn query_num_devices(&self) -> Result<usize> {
        let plugin = &self.client.plugin;
        let f = api_fn!(plugin, PJRT_LoadedExecutable_AddressableDevices)?;
        let mut a = args!(PJRT_LoadedExecutable_AddressableDevices_Args {
            executable: self.raw
        });
        // SAFETY: valid args.
        plugin.check("PJRT_LoadedExecutable_AddressableDevices", unsafe {
            f(&mut a)
        })?;
        Ok(a.num_addressable_devices)
    }

    /// Number of results of the program (per device).
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// Number of devices the program runs on (replicas x partitions in this process).
    pub fn num_devices(&self) -> usize {
        self.num_devices
    }

    /// Runs a single-device program. Inputs are never donated: the same buffers can be
    /// passed to any number of calls.
    pub fn execute(&self, args: &[&Buffer]) -> Result<Vec<Buffer>> {
        self.execute_donating(args, &[])
    }

    /// [`LoadedExecutable::execute`], letting the program reuse the arguments at
    /// `donate` for the outputs it aliases them to (`tf.aliasing_output`): those
    /// buffers are consumed and must not be used again. Every other argument is kept.
    pub fn execute_donating(&self, args: &[&Buffer], donate: &[usize]) -> Result<Vec<Buffer>> {
        if self.num_devices != 1 {
            return Err(RuntimeError::InvalidArgument(format!(
                "the program runs on {} devices: use execute_sharded with one argument list per device",
                self.num_devices
            )));
        }
        let mut per_device = self.execute_on_devices(&[args], donate)?;
        Ok(per_device.pop().unwrap_or_default())
    }

    /// Runs the program on all its devices: `args[d]` are the arguments for device `d`,
    /// and the result's `[d]` its outputs.
    pub fn execute_sharded(&self, args: &[&[&Buffer]]) -> Result<Vec<Vec<Buffer>>> {
        self.execute_on_devices(args, &[])
    }

    fn execute_on_devices(
        &self,
        args: &[&[&Buffer]],
        donate: &[usize],
    ) -> Result<Vec<Vec<Buffer>>> {
        let plugin = &self.client.plugin;
        if args.len() != self.num_devices {
            return Err(RuntimeError::InvalidArgument(format!(
                "the program runs on {} device(s) but {} argument list(s) were given",
                self.num_devices,
                args.len()
            )));
        }
        let num_args = args.first().map_or(0, |a| a.len());
        for (d, list) in args.iter().enumerate() {
            if list.len() != num_args {
                return Err(RuntimeError::InvalidArgument(format!(
                    "argument list {d} has {} buffers, list 0 has {num_args}",
                    list.len()
                )));
            }
            if let Some(i) = list
                .iter()
                .position(|b| !Arc::ptr_eq(&b.client, &self.client))
            {
                return Err(RuntimeError::InvalidArgument(format!(
                    "argument {i} of list {d} belongs to another client"
                )));
            }
        }
        let execute = api_fn!(plugin, PJRT_LoadedExecutable_Execute)?;

        let arg_raw: Vec<Vec<*mut ffi::PJRT_Buffer>> = args
            .iter()
            .map(|list| list.iter().map(|b| b.raw).collect())
            .collect();
        let arg_lists: Vec<*const *mut ffi::PJRT_Buffer> =
            arg_raw.iter().map(|l| l.as_ptr()).collect();
        let mut out_raw: Vec<Vec<*mut ffi::PJRT_Buffer>> =
            vec![vec![ptr::null_mut(); self.num_outputs]; self.num_devices];
        let out_lists: Vec<*mut *mut ffi::PJRT_Buffer> =
            out_raw.iter_mut().map(|l| l.as_mut_ptr()).collect();
        let mut events: Vec<*mut ffi::PJRT_Event> = vec![ptr::null_mut(); self.num_devices];
        let non_donatable: Vec<i64> = (0..num_args)
            .filter(|i| !donate.contains(i))
            .map(|i| i as i64)
            .collect();
        let mut options = args!(PJRT_ExecuteOptions {
            non_donatable_input_indices: non_donatable.as_ptr(),
            num_non_donatable_input_indices: non_donatable.len(),
        });
        let mut a = args!(PJRT_LoadedExecutable_Execute_Args {
            executable: self.raw,
            options: &mut options,
            argument_lists: arg_lists.as_ptr(),
            num_devices: self.num_devices,
            num_args: num_args,
            output_lists: out_lists.as_ptr(),
            device_complete_events: events.as_mut_ptr(),
        });
        // SAFETY: valid args; every array has the sizes announced in `a` and outlives
        // the call; the plugin fills `out_raw` and `events`.
        let error = unsafe { execute(&mut a) };
        let launched = plugin.check("PJRT_LoadedExecutable_Execute", error);

        // Take ownership of whatever the plugin returned before looking at errors, so
        // that nothing leaks on any path.
        let mut outputs: Vec<Vec<Buffer>> = Vec::with_capacity(self.num_devices);
        let mut wrap_error = None;
        for list in out_raw {
            let mut device_outputs = Vec::with_capacity(list.len());
            for raw in list {
                if raw.is_null() {
                    continue;
                }
                match Buffer::wrap(self.client.clone(), raw) {
                    Ok(b) => device_outputs.push(b),
                    Err(e) => {
                        wrap_error.get_or_insert(e);
                    }
                }
            }
            outputs.push(device_outputs);
        }
        let mut completion = Ok(());
        for event in events {
            let r = plugin.await_event("PJRT_LoadedExecutable_Execute (completion)", event);
            if completion.is_ok() {
                completion = r;
            }
        }
        launched?;
        completion?;
        if let Some(e) = wrap_error {
            return Err(e);
        }
        if let Some((d, list)) = outputs
            .iter()
            .enumerate()
            .find(|(_, l)| l.len() != self.num_outputs)
        {
            return Err(RuntimeError::Plugin {
                path: plugin.path.clone(),
                message: format!(
                    "execute returned {} outputs on device {d}, expected {}",
                    list.len(),
                    self.num_outputs
                ),
            });
        }
        Ok(outputs)
    }
}

// ----------------------------------------------------------------------------------------
// Buffers
// ----------------------------------------------------------------------------------------

/// A tensor in device memory.
pub struct Buffer {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_Buffer,
    element_type: ffi::PJRT_Buffer_Type,
    shape: Vec<i64>,
}

// SAFETY: XLA's PjRtBuffer supports concurrent reads (transfers to host, use as an
// execute argument) from several threads; it is destroyed only in Drop.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("element_type", &self.element_type)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let plugin = &self.client.plugin;
        if let Ok(f) = api_fn!(plugin, PJRT_Buffer_Destroy) {
            let mut a = args!(PJRT_Buffer_Destroy_Args { buffer: self.raw });
            // SAFETY: live handle, destroyed once. Errors cannot be reported from Drop.
            let e = unsafe { f(&mut a) };
            let _ = plugin.check("PJRT_Buffer_Destroy", e);
        }
    }
}

impl Buffer {
    /// Takes ownership of `raw` and reads its element type and dimensions.
    fn wrap(client: Arc<ClientInner>, raw: *mut ffi::PJRT_Buffer) -> Result<Buffer> {
        if raw.is_null() {
            return Err(RuntimeError::Plugin {
                path: client.plugin.path.clone(),
                message: "the plugin returned a null buffer".into(),
            });
        }
        let mut b = Buffer {
            client,
            raw,
            element_type: ffi::PJRT_Buffer_Type_INVALID,
            shape: Vec::new(),
        };
        let plugin = &b.client.plugin;
        let f = api_fn!(plugin, PJRT_Buffer_ElementType)?;
        let mut a = args!(PJRT_Buffer_ElementType_Args { buffer: raw });
        // SAFETY: valid args.
        plugin.check("PJRT_Buffer_ElementType", unsafe { f(&mut a) })?;
        let element_type = a.type_;

        let f = api_fn!(plugin, PJRT_Buffer_Dimensions)?;
        let mut a = args!(PJRT_Buffer_Dimensions_Args { buffer: raw });
        // SAFETY: valid args; the dims array is owned by the buffer and copied.
        plugin.check("PJRT_Buffer_Dimensions", unsafe { f(&mut a) })?;
        let shape = if a.dims.is_null() || a.num_dims == 0 {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(a.dims, a.num_dims) }.to_vec()
        };
        b.element_type = element_type;
        b.shape = shape;
        Ok(b)
    }

    /// Element type; an error for PJRT types tpuc has no dtype for (u32, f8, ...).
    pub fn dtype(&self) -> Result<DType> {
        dtype_of_buffer_type(self.element_type)
            .ok_or(RuntimeError::UnsupportedElementType(self.element_type))
    }

    /// The raw `PJRT_Buffer_Type`.
    pub fn element_type(&self) -> ffi::PJRT_Buffer_Type {
        self.element_type
    }

    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// Bytes the buffer occupies on its device (may include padding).
    pub fn on_device_size_in_bytes(&self) -> Result<usize> {
        let plugin = &self.client.plugin;
        let f = api_fn!(plugin, PJRT_Buffer_OnDeviceSizeInBytes)?;
        let mut a = args!(PJRT_Buffer_OnDeviceSizeInBytes_Args { buffer: self.raw });
        // SAFETY: valid args.
        plugin.check("PJRT_Buffer_OnDeviceSizeInBytes", unsafe { f(&mut a) })?;
        Ok(a.on_device_size_in_bytes)
    }

    /// Whether `client` is the client this buffer lives on.
    pub fn belongs_to(&self, client: &Client) -> bool {
        client.same_client(&self.client)
    }

    /// Copies the buffer to host memory (dense, row-major).
    pub fn to_host(&self) -> Result<HostTensor> {
        let dtype = self.dtype()?;
        let plugin = &self.client.plugin;
        let f = api_fn!(plugin, PJRT_Buffer_ToHostBuffer)?;
        let expected = self
            .shape
            .iter()
            .try_fold(dtype.size_in_bytes(), |acc, &d| {
                usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
            })
            .ok_or_else(|| {
                RuntimeError::InvalidArgument(format!("buffer shape {:?} is invalid", self.shape))
            })?;

        // First ask for the size the plugin will write (dst = null).
        let mut a = args!(PJRT_Buffer_ToHostBuffer_Args { src: self.raw });
        // SAFETY: valid args; with a null dst the plugin only reports the size.
        plugin.check("PJRT_Buffer_ToHostBuffer (size)", unsafe { f(&mut a) })?;
        plugin.destroy_event(a.event);
        if a.dst_size != expected {
            return Err(RuntimeError::Plugin {
                path: plugin.path.clone(),
                message: format!(
                    "buffer of {dtype} {:?} needs {} bytes on the host, expected {expected}",
                    self.shape, a.dst_size
                ),
            });
        }
        let mut data = vec![0u8; expected];
        if expected > 0 {
            let mut a = args!(PJRT_Buffer_ToHostBuffer_Args {
                src: self.raw,
                dst: data.as_mut_ptr().cast::<c_void>(),
                dst_size: data.len(),
            });
            // SAFETY: valid args; `data` has `dst_size` writable bytes and stays alive
            // (and unused) until the event below is complete.
            let error = unsafe { f(&mut a) };
            let event = a.event;
            if let Err(e) = plugin.check("PJRT_Buffer_ToHostBuffer", error) {
                // The copy may still be running into `data`: wait before freeing it.
                let _ = plugin.await_event("PJRT_Buffer_ToHostBuffer", event);
                return Err(e);
            }
            plugin.await_event("PJRT_Buffer_ToHostBuffer", event)?;
        }
        Ok(HostTensor {
            dtype,
            shape: self.shape.clone(),
            data,
        })
    }
}
