//! Queries of a compiled (not necessarily loaded) `PJRT_Executable`, shared by
//! [`super::LoadedExecutable`] (through `PJRT_LoadedExecutable_GetExecutable`) and the
//! topology-compiled [`super::topology::Executable`].

use super::{ffi, NamedValue, Plugin};
use crate::compile_options::CompileOptions;
use crate::error::{Result, RuntimeError};

pub(super) fn serialize(plugin: &Plugin, exe: *mut ffi::PJRT_Executable) -> Result<Vec<u8>> {
    let f = api_fn!(plugin, PJRT_Executable_Serialize)?;
    let mut a = args!(PJRT_Executable_Serialize_Args { executable: exe });
    // SAFETY: valid args; on success the plugin fills the out fields.
    plugin.check("PJRT_Executable_Serialize", unsafe { f(&mut a) })?;
    let bytes = if a.serialized_bytes.is_null() || a.serialized_bytes_size == 0 {
        None
    } else {
        // SAFETY: the plugin returned `serialized_bytes_size` readable bytes that
        // live until the deleter below runs; they are copied before that.
        Some(
            unsafe {
                std::slice::from_raw_parts(a.serialized_bytes.cast::<u8>(), a.serialized_bytes_size)
            }
            .to_vec(),
        )
    };
    if let Some(deleter) = a.serialized_executable_deleter {
        if !a.serialized_executable.is_null() {
            // SAFETY: called exactly once on the object the plugin returned.
            unsafe { deleter(a.serialized_executable) };
        }
    }
    bytes.ok_or_else(|| RuntimeError::Plugin {
        path: plugin.path.clone(),
        message: "PJRT_Executable_Serialize returned no bytes".into(),
    })
}

pub(super) fn optimized_program(
    plugin: &Plugin,
    exe: *mut ffi::PJRT_Executable,
) -> Result<(String, Vec<u8>)> {
    let f = api_fn!(plugin, PJRT_Executable_OptimizedProgram)?;
    // SAFETY: all-zero is a valid PJRT_Program; the plugin fills code_size and
    // format on the first call, the code into our buffer on the second.
    let mut program: ffi::PJRT_Program = unsafe { std::mem::zeroed() };
    program.struct_size = ffi::PJRT_Program::STRUCT_SIZE;
    let mut a = args!(PJRT_Executable_OptimizedProgram_Args {
        executable: exe,
        program: &mut program
    });
    plugin.check("PJRT_Executable_OptimizedProgram", unsafe { f(&mut a) })?;
    let mut code = vec![0u8; program.code_size];
    program.code = code.as_mut_ptr().cast();
    let mut a = args!(PJRT_Executable_OptimizedProgram_Args {
        executable: exe,
        program: &mut program
    });
    plugin.check("PJRT_Executable_OptimizedProgram", unsafe { f(&mut a) })?;
    code.truncate(program.code_size);
    let format = if program.format.is_null() {
        String::new()
    } else {
        // SAFETY: the plugin's format string, `format_size` bytes.
        String::from_utf8_lossy(unsafe {
            std::slice::from_raw_parts(program.format.cast::<u8>(), program.format_size)
        })
        .into_owned()
    };
    Ok((format, code))
}

pub(super) fn compiled_memory_stats(
    plugin: &Plugin,
    exe: *mut ffi::PJRT_Executable,
) -> Result<CompiledMemoryStats> {
    let f = api_fn!(plugin, PJRT_Executable_GetCompiledMemoryStats)?;
    let mut a = args!(PJRT_Executable_GetCompiledMemoryStats_Args { executable: exe });
    // SAFETY: valid args; the plugin fills the out fields it knows.
    plugin.check("PJRT_Executable_GetCompiledMemoryStats", unsafe {
        f(&mut a)
    })?;
    Ok(CompiledMemoryStats {
        generated_code_size_in_bytes: a.generated_code_size_in_bytes,
        argument_size_in_bytes: a.argument_size_in_bytes,
        output_size_in_bytes: a.output_size_in_bytes,
        alias_size_in_bytes: a.alias_size_in_bytes,
        temp_size_in_bytes: a.temp_size_in_bytes,
        peak_memory_in_bytes: a.peak_memory_in_bytes,
    })
}

/// `PJRT_Executable_SizeOfGeneratedCodeInBytes` (some plugins report 0).
pub(super) fn generated_code_size(plugin: &Plugin, exe: *mut ffi::PJRT_Executable) -> Result<i64> {
    let f = api_fn!(plugin, PJRT_Executable_SizeOfGeneratedCodeInBytes)?;
    let mut a = args!(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args { executable: exe });
    // SAFETY: valid args; the plugin fills `size_in_bytes`.
    plugin.check("PJRT_Executable_SizeOfGeneratedCodeInBytes", unsafe {
        f(&mut a)
    })?;
    Ok(a.size_in_bytes)
}

/// `PJRT_Executable_GetCostAnalysis`: the plugin's named cost figures (`flops`,
/// `transcendentals`, `bytes accessed`, ...), copied.
pub(super) fn cost_analysis(
    plugin: &Plugin,
    exe: *mut ffi::PJRT_Executable,
) -> Result<Vec<(String, NamedValue)>> {
    let f = api_fn!(plugin, PJRT_Executable_GetCostAnalysis)?;
    let mut a = args!(PJRT_Executable_GetCostAnalysis_Args { executable: exe });
    // SAFETY: valid args; the properties live as long as the executable and are
    // copied before this returns.
    plugin.check("PJRT_Executable_GetCostAnalysis", unsafe { f(&mut a) })?;
    // SAFETY: the plugin returned `num_properties` values, live with the executable.
    Ok(unsafe { super::named_values_from_raw(a.properties, a.num_properties) })
}

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

/// Compile options as a plugin takes them: never empty (empty options abort the
/// plugin process on a `replica_count > 0` CHECK).
pub(super) fn encode_options(options: &CompileOptions) -> Result<Vec<u8>> {
    let bytes = options.encode()?;
    if bytes.is_empty() {
        return Err(RuntimeError::CompileOptions(
            "refusing to send empty compile options".into(),
        ));
    }
    Ok(bytes)
}

/// `code` in `format` (`"mlir"`, `"hlo"`) as a `PJRT_Program`; it borrows both.
pub(super) fn program_of(code: &[u8], format: &str) -> ffi::PJRT_Program {
    args!(PJRT_Program {
        // The plugin does not write through `code` (the header lacks `const`).
        code: code.as_ptr().cast_mut().cast(),
        code_size: code.len(),
        format: format.as_ptr().cast(),
        format_size: format.len(),
    })
}
