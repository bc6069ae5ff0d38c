//! [`Client`]: a PJRT client of a plugin, its devices; compiling, loading serialized
//! executables, and copying host data to its devices.

use super::buffer::check_host_data;
use super::{
    buffer_type, ffi, string_from_raw, Buffer, Device, LoadedExecutable, NamedValue, Plugin,
};
use super::{encode_options, program_of};
use crate::compile_options::CompileOptions;
use crate::error::{Result, RuntimeError};
use crate::{DType, HostTensor};
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

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

    /// What tpuc's tools create a client of the plugin at `plugin_path` with: for the
    /// CPU plugin `devices` devices (one, or as many as a partitioned artifact's mesh
    /// has) executed synchronously on the calling thread (`asynchronous = false`: its
    /// default hand-off to a worker thread costs more than a small program, see
    /// BENCH.md); other plugins get their defaults.
    pub fn for_plugin(plugin_path: &std::path::Path, devices: usize) -> ClientOptions {
        let is_cpu = plugin_path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().contains("cpu"));
        if !is_cpu {
            return ClientOptions::default();
        }
        let mut o = ClientOptions::cpu(devices.max(1) as i64);
        o.extra
            .push(("asynchronous".to_string(), NamedValue::Bool(false)));
        o
    }
}

pub(super) struct ClientInner {
    pub(super) plugin: Arc<Plugin>,
    pub(super) raw: *mut ffi::PJRT_Client,
    pub(super) platform_name: String,
    /// Empty when the plugin does not say.
    pub(super) platform_version: String,
    pub(super) devices: Vec<Device>,
    pub(super) addressable: Vec<Device>,
    /// Raw handles of `addressable`, same order; owned by the client.
    pub(super) addressable_raw: Vec<*mut ffi::PJRT_Device>,
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
    pub(super) fn create(plugin: Arc<Plugin>, options: &ClientOptions) -> Result<Client> {
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

    pub(super) fn same_client(&self, other: &Arc<ClientInner>) -> bool {
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
}
