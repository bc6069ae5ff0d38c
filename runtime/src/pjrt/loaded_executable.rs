//! [`LoadedExecutable`]: a compiled program loaded on a client's devices, and its
//! execution.

use super::{executable, ffi, Buffer, ClientInner, CompiledMemoryStats, Plugin};
use crate::error::{Result, RuntimeError};
use std::ptr;
use std::sync::Arc;

/// A compiled program, loaded on the client's devices.
pub struct LoadedExecutable {
    pub(super) client: Arc<ClientInner>,
    pub(super) raw: *mut ffi::PJRT_LoadedExecutable,
    pub(super) num_outputs: usize,
    pub(super) num_devices: usize,
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

    pub(super) fn query_num_outputs(&self) -> Result<usize> {
        self.with_executable(|plugin, exe| {
            let f = api_fn!(plugin, PJRT_Executable_NumOutputs)?;
            let mut a = args!(PJRT_Executable_NumOutputs_Args { executable: exe });
            // SAFETY: valid args.
            plugin.check("PJRT_Executable_NumOutputs", unsafe { f(&mut a) })?;
            Ok(a.num_outputs)
        })
    }

    /// The plugin's serialization of this executable (`PJRT_Executable_Serialize`), for
    /// [`Client::deserialize`](super::Client::deserialize) in this or a later process. The bytes are only meaningful
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

    pub(super) fn query_num_devices(&self) -> Result<usize> {
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

    /// [`LoadedExecutable::execute_sharded`], donating the arguments at `donate` on
    /// every device (see [`LoadedExecutable::execute_donating`]).
    pub fn execute_sharded_donating(
        &self,
        args: &[&[&Buffer]],
        donate: &[usize],
    ) -> Result<Vec<Vec<Buffer>>> {
        self.execute_on_devices(args, donate)
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
