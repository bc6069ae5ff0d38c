//! Compiling for a device topology without the devices (PJRT's deviceless path): libtpu
//! compiles StableHLO for a named TPU slice (`v5e:2x2`) on a machine with no TPU.
//!
//! [`Plugin::topology`] describes the slice (`PJRT_TopologyDescription_Create`),
//! [`Topology::compile`] compiles for it (`PJRT_Compile` with no client), and the
//! resulting [`Executable`] is not loaded anywhere: it can be serialized (a TPU VM loads
//! it), and asked for XLA's cost and memory figures per chip.

use std::ffi::c_char;
use std::ptr;
use std::sync::Arc;

use super::{executable, ffi, string_from_raw, CompiledMemoryStats, NamedValue, Plugin};
use crate::compile_options::CompileOptions;
use crate::error::{Result, RuntimeError};

/// A device topology described by a plugin (for libtpu: a TPU slice by name).
pub struct Topology {
    plugin: Arc<Plugin>,
    raw: *mut ffi::PJRT_TopologyDescription,
    name: String,
}

// SAFETY: a topology description is immutable after creation; PJRT's functions on it are
// thread-safe, and it is destroyed only in `Drop`.
unsafe impl Send for Topology {}
unsafe impl Sync for Topology {}

impl Plugin {
    /// The topology `name` (`"v5e:2x2"`), as the plugin understands it. Plugins that
    /// cannot compile without devices (the CPU plugin) refuse.
    pub fn topology(self: &Arc<Self>, name: &str) -> Result<Topology> {
        let f = api_fn!(self, PJRT_TopologyDescription_Create)?;
        let mut a = args!(PJRT_TopologyDescription_Create_Args {
            topology_name: name.as_ptr().cast::<c_char>(),
            topology_name_size: name.len(),
        });
        // SAFETY: valid args; the name outlives the call.
        self.check("PJRT_TopologyDescription_Create", unsafe { f(&mut a) })?;
        if a.topology.is_null() {
            return Err(RuntimeError::Plugin {
                path: self.path.clone(),
                message: format!("PJRT_TopologyDescription_Create({name}) returned nothing"),
            });
        }
        Ok(Topology {
            plugin: self.clone(),
            raw: a.topology,
            name: name.to_string(),
        })
    }
}

impl Topology {
    /// The name it was created with.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    fn string(
        &self,
        call: &'static str,
        f: Option<ffi::PjrtFn<ffi::PJRT_TopologyDescription_String_Args>>,
    ) -> Result<String> {
        let f = f.ok_or_else(|| self.plugin.missing(call))?;
        let mut a = args!(PJRT_TopologyDescription_String_Args { topology: self.raw });
        // SAFETY: valid args; the string is owned by the topology and copied here.
        self.plugin.check(call, unsafe { f(&mut a) })?;
        // SAFETY: `value_size` bytes at `value`.
        Ok(unsafe { string_from_raw(a.value, a.value_size) })
    }

    /// The platform compiled for (`"tpu"`).
    pub fn platform_name(&self) -> Result<String> {
        let f = api_fn!(&self.plugin, PJRT_TopologyDescription_PlatformName).ok();
        self.string("PJRT_TopologyDescription_PlatformName", f)
    }

    /// The compiler's version string (for libtpu, its build).
    pub fn platform_version(&self) -> Result<String> {
        let f = api_fn!(&self.plugin, PJRT_TopologyDescription_PlatformVersion).ok();
        self.string("PJRT_TopologyDescription_PlatformVersion", f)
    }

    /// How many devices (for TPUs: chips, or cores where a chip has several) the
    /// topology has.
    pub fn num_devices(&self) -> Result<usize> {
        let f = api_fn!(&self.plugin, PJRT_TopologyDescription_GetDeviceDescriptions)?;
        let mut a =
            args!(PJRT_TopologyDescription_GetDeviceDescriptions_Args { topology: self.raw });
        // SAFETY: valid args.
        self.plugin
            .check("PJRT_TopologyDescription_GetDeviceDescriptions", unsafe {
                f(&mut a)
            })?;
        Ok(a.num_descriptions)
    }

    /// The topology's attributes (for libtpu: chip kind, bounds, cores per chip...).
    pub fn attributes(&self) -> Result<Vec<(String, NamedValue)>> {
        let f = api_fn!(&self.plugin, PJRT_TopologyDescription_Attributes)?;
        let mut a = args!(PJRT_TopologyDescription_Attributes_Args { topology: self.raw });
        // SAFETY: valid args; the values live as long as the topology and are copied.
        self.plugin
            .check("PJRT_TopologyDescription_Attributes", unsafe { f(&mut a) })?;
        // SAFETY: `num_attributes` values at `attributes`, live with the topology.
        Ok(unsafe { super::named_values_from_raw(a.attributes, a.num_attributes) })
    }

    /// Compiles `code` (format `"mlir"`: StableHLO text or bytecode) for this topology.
    pub fn compile(
        &self,
        code: &[u8],
        format: &str,
        options: &CompileOptions,
    ) -> Result<Executable> {
        let plugin = &self.plugin;
        let compile = api_fn!(plugin, PJRT_Compile)?;
        let options = super::encode_options(options)?;
        let program = super::program_of(code, format);
        let mut a = args!(PJRT_Compile_Args {
            topology: self.raw,
            program: &program,
            compile_options: options.as_ptr().cast(),
            compile_options_size: options.len(),
            client: ptr::null_mut(),
        });
        // SAFETY: valid args; the program and options outlive the call.
        plugin.check("PJRT_Compile", unsafe { compile(&mut a) })?;
        if a.executable.is_null() {
            return Err(RuntimeError::Plugin {
                path: plugin.path.clone(),
                message: "PJRT_Compile returned no executable".into(),
            });
        }
        Ok(Executable {
            plugin: plugin.clone(),
            raw: a.executable,
        })
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        if let Ok(f) = api_fn!(&self.plugin, PJRT_TopologyDescription_Destroy) {
            let mut a = args!(PJRT_TopologyDescription_Destroy_Args { topology: self.raw });
            // SAFETY: our handle, destroyed once.
            let e = unsafe { f(&mut a) };
            let _ = self.plugin.check("PJRT_TopologyDescription_Destroy", e);
        }
    }
}

/// A program compiled for a topology, loaded on no device.
pub struct Executable {
    plugin: Arc<Plugin>,
    raw: *mut ffi::PJRT_Executable,
}

// SAFETY: as for `LoadedExecutable`: a compiled executable is immutable, PJRT's queries
// on it are thread-safe, and it is destroyed only in `Drop`.
unsafe impl Send for Executable {}
unsafe impl Sync for Executable {}

impl Executable {
    /// The plugin's serialization (for libtpu: what a TPU VM's `DeserializeAndLoad`
    /// takes, with the same libtpu build).
    pub fn serialize(&self) -> Result<Vec<u8>> {
        executable::serialize(&self.plugin, self.raw)
    }

    /// XLA's memory account per device.
    pub fn compiled_memory_stats(&self) -> Result<CompiledMemoryStats> {
        executable::compiled_memory_stats(&self.plugin, self.raw)
    }

    /// XLA's cost figures (`flops`, `transcendentals`, `bytes accessed`, ...).
    pub fn cost_analysis(&self) -> Result<Vec<(String, NamedValue)>> {
        executable::cost_analysis(&self.plugin, self.raw)
    }

    /// The size of the generated code (0 where the plugin does not say).
    pub fn generated_code_size(&self) -> Result<i64> {
        executable::generated_code_size(&self.plugin, self.raw)
    }

    /// The optimized program (`(format, bytes)`, see [`crate::hlo`]).
    pub fn optimized_program(&self) -> Result<(String, Vec<u8>)> {
        executable::optimized_program(&self.plugin, self.raw)
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        if let Ok(f) = api_fn!(&self.plugin, PJRT_Executable_Destroy) {
            let mut a = args!(PJRT_Executable_Destroy_Args {
                executable: self.raw
            });
            // SAFETY: our handle, destroyed once.
            let e = unsafe { f(&mut a) };
            let _ = self.plugin.check("PJRT_Executable_Destroy", e);
        }
    }
}
