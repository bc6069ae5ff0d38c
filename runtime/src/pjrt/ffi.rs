//! The subset of the PJRT C API (`xla/pjrt/c/pjrt_c_api.h`) that tpuc uses, declared by
//! hand. Layouts follow header version 0.114 (plugins we load report 0.81 .. 0.117); the
//! executable serialization structs (`PJRT_Executable_Serialize_Args`,
//! `PJRT_Executable_DeserializeAndLoad_Args`) and `PJRT_Client_PlatformVersion_Args` were
//! taken from the 0.113 header text, where a serialized executable is freed through the
//! `serialized_executable_deleter` returned with it (the separate
//! `PJRT_SerializedExecutable_Destroy`/`_Data` functions of early headers are gone).
//!
//! Rules of the C API that these declarations rely on:
//! - Every args struct starts with `struct_size` and `extension_start`. `struct_size` is
//!   `offsetof(last field) + sizeof(last field)` of the header the caller was built with
//!   (trailing padding excluded). A plugin rejects structs *smaller* than its own and
//!   accepts larger ones (it ignores the fields it does not know), so declaring the
//!   newest layout we know works for older and newer plugins alike.
//! - `PJRT_Api` is a table of function pointers that only ever grows at the end. We
//!   declare it up to the last function we call; the plugin's `struct_size` tells
//!   whether a slot exists in its table (see [`PJRT_Api::has_slot`]).
//! - C enums are passed as `int`; they are plain integer aliases here so that a value
//!   this crate does not know can never be an invalid Rust enum.
//!
//! Names keep the header's spelling so they can be compared with it line by line.

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code
)]

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};

/// Implements `STRUCT_SIZE` = offsetof(last) + sizeof(last), as `PJRT_DEFINE_STRUCT_TRAITS`.
macro_rules! struct_size {
    ($ty:ident, $last:ident : $last_ty:ty) => {
        impl $ty {
            pub const STRUCT_SIZE: usize = offset_of!($ty, $last) + size_of::<$last_ty>();
        }
    };
}

// ------------------------------------ Opaque types ------------------------------------

macro_rules! opaque {
    ($($name:ident),* $(,)?) => {
        $(
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*
    };
}

opaque!(
    PJRT_Error,
    PJRT_Event,
    PJRT_Client,
    PJRT_Device,
    PJRT_Memory,
    PJRT_DeviceDescription,
    PJRT_Executable,
    PJRT_LoadedExecutable,
    PJRT_Buffer,
    PJRT_ExecuteContext,
    PJRT_Extension_Base,
    PJRT_SerializedExecutable,
    PJRT_MultiSlice_Config,
    PJRT_TopologyDescription,
);

// --------------------------------------- Enums ----------------------------------------

pub type PJRT_Error_Code = c_int;

pub type PJRT_NamedValue_Type = c_int;
pub const PJRT_NamedValue_kString: PJRT_NamedValue_Type = 0;
pub const PJRT_NamedValue_kInt64: PJRT_NamedValue_Type = 1;
pub const PJRT_NamedValue_kInt64List: PJRT_NamedValue_Type = 2;
pub const PJRT_NamedValue_kFloat: PJRT_NamedValue_Type = 3;
pub const PJRT_NamedValue_kBool: PJRT_NamedValue_Type = 4;

pub type PJRT_Buffer_Type = c_int;
pub const PJRT_Buffer_Type_INVALID: PJRT_Buffer_Type = 0;
pub const PJRT_Buffer_Type_PRED: PJRT_Buffer_Type = 1;
pub const PJRT_Buffer_Type_S8: PJRT_Buffer_Type = 2;
pub const PJRT_Buffer_Type_S16: PJRT_Buffer_Type = 3;
pub const PJRT_Buffer_Type_S32: PJRT_Buffer_Type = 4;
pub const PJRT_Buffer_Type_S64: PJRT_Buffer_Type = 5;
pub const PJRT_Buffer_Type_U8: PJRT_Buffer_Type = 6;
pub const PJRT_Buffer_Type_U16: PJRT_Buffer_Type = 7;
pub const PJRT_Buffer_Type_U32: PJRT_Buffer_Type = 8;
pub const PJRT_Buffer_Type_U64: PJRT_Buffer_Type = 9;
pub const PJRT_Buffer_Type_F16: PJRT_Buffer_Type = 10;
pub const PJRT_Buffer_Type_F32: PJRT_Buffer_Type = 11;
pub const PJRT_Buffer_Type_F64: PJRT_Buffer_Type = 12;
pub const PJRT_Buffer_Type_BF16: PJRT_Buffer_Type = 13;
pub const PJRT_Buffer_Type_C64: PJRT_Buffer_Type = 14;
pub const PJRT_Buffer_Type_C128: PJRT_Buffer_Type = 15;

pub type PJRT_HostBufferSemantics = c_int;
/// The plugin copies (or finishes using) the host data before the call returns.
pub const PJRT_HostBufferSemantics_kImmutableOnlyDuringCall: PJRT_HostBufferSemantics = 0;
pub const PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes: PJRT_HostBufferSemantics = 1;
pub const PJRT_HostBufferSemantics_kImmutableZeroCopy: PJRT_HostBufferSemantics = 2;
pub const PJRT_HostBufferSemantics_kMutableZeroCopy: PJRT_HostBufferSemantics = 3;

// ------------------------------------- Version ----------------------------------------

/// Header version these declarations were taken from.
pub const HEADER_API_MAJOR: i32 = 0;
pub const HEADER_API_MINOR: i32 = 114;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PJRT_Api_Version {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub major_version: c_int,
    pub minor_version: c_int,
}
struct_size!(PJRT_Api_Version, minor_version: c_int);

// -------------------------------------- Errors ----------------------------------------

#[repr(C)]
pub struct PJRT_Error_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub error: *mut PJRT_Error,
}
struct_size!(PJRT_Error_Destroy_Args, error: *mut PJRT_Error);

#[repr(C)]
pub struct PJRT_Error_Message_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub error: *const PJRT_Error,
    pub message: *const c_char,
    pub message_size: usize,
}
struct_size!(PJRT_Error_Message_Args, message_size: usize);

#[repr(C)]
pub struct PJRT_Error_GetCode_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub error: *const PJRT_Error,
    pub code: PJRT_Error_Code,
}
struct_size!(PJRT_Error_GetCode_Args, code: PJRT_Error_Code);

// ----------------------------------- Named values -------------------------------------

#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_NamedValue_Value {
    pub string_value: *const c_char,
    pub int64_value: i64,
    pub int64_array_value: *const i64,
    pub float_value: f32,
    pub bool_value: bool,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PJRT_NamedValue {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub name: *const c_char,
    pub name_size: usize,
    pub type_: PJRT_NamedValue_Type,
    pub value: PJRT_NamedValue_Value,
    /// Number of elements for strings and lists, 1 for scalars.
    pub value_size: usize,
}
struct_size!(PJRT_NamedValue, value_size: usize);

// -------------------------------------- Plugin ----------------------------------------

#[repr(C)]
pub struct PJRT_Plugin_Initialize_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
}
struct_size!(PJRT_Plugin_Initialize_Args, extension_start: *mut PJRT_Extension_Base);

#[repr(C)]
pub struct PJRT_Plugin_Attributes_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    /// Out; lives as long as the process.
    pub attributes: *const PJRT_NamedValue,
    pub num_attributes: usize,
}
struct_size!(PJRT_Plugin_Attributes_Args, num_attributes: usize);

// -------------------------------------- Events ----------------------------------------

#[repr(C)]
pub struct PJRT_Event_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub event: *mut PJRT_Event,
}
struct_size!(PJRT_Event_Destroy_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Event_IsReady_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub event: *mut PJRT_Event,
    pub is_ready: bool,
}
struct_size!(PJRT_Event_IsReady_Args, is_ready: bool);

#[repr(C)]
pub struct PJRT_Event_Error_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub event: *mut PJRT_Event,
}
struct_size!(PJRT_Event_Error_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Event_Await_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub event: *mut PJRT_Event,
}
struct_size!(PJRT_Event_Await_Args, event: *mut PJRT_Event);

// -------------------------------------- Client ----------------------------------------

#[repr(C)]
pub struct PJRT_Client_Create_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub create_options: *const PJRT_NamedValue,
    pub num_options: usize,
    pub kv_get_callback: *mut c_void,
    pub kv_get_user_arg: *mut c_void,
    pub kv_put_callback: *mut c_void,
    pub kv_put_user_arg: *mut c_void,
    /// Out.
    pub client: *mut PJRT_Client,
    pub kv_try_get_callback: *mut c_void,
    pub kv_try_get_user_arg: *mut c_void,
}
struct_size!(PJRT_Client_Create_Args, kv_try_get_user_arg: *mut c_void);

#[repr(C)]
pub struct PJRT_Client_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
}
struct_size!(PJRT_Client_Destroy_Args, client: *mut PJRT_Client);

#[repr(C)]
pub struct PJRT_Client_PlatformName_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    /// Out; owned by the client.
    pub platform_name: *const c_char,
    pub platform_name_size: usize,
}
struct_size!(PJRT_Client_PlatformName_Args, platform_name_size: usize);

#[repr(C)]
pub struct PJRT_Client_PlatformVersion_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    /// Out; owned by the client.
    pub platform_version: *const c_char,
    pub platform_version_size: usize,
}
struct_size!(PJRT_Client_PlatformVersion_Args, platform_version_size: usize);

#[repr(C)]
pub struct PJRT_Client_Devices_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    /// Out; owned by the client.
    pub devices: *const *mut PJRT_Device,
    pub num_devices: usize,
}
struct_size!(PJRT_Client_Devices_Args, num_devices: usize);

#[repr(C)]
pub struct PJRT_Client_AddressableDevices_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    /// Out; owned by the client.
    pub addressable_devices: *const *mut PJRT_Device,
    pub num_addressable_devices: usize,
}
struct_size!(PJRT_Client_AddressableDevices_Args, num_addressable_devices: usize);

#[repr(C)]
pub struct PJRT_Program {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    /// Serialized program; for format "mlir": MLIR text or bytecode.
    pub code: *mut c_char,
    pub code_size: usize,
    /// "mlir" or "hlo".
    pub format: *const c_char,
    pub format_size: usize,
}
struct_size!(PJRT_Program, format_size: usize);

#[repr(C)]
pub struct PJRT_Client_Compile_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub program: *const PJRT_Program,
    /// A serialized `xla.CompileOptionsProto`. Never empty (an empty proto aborts).
    pub compile_options: *const c_char,
    pub compile_options_size: usize,
    /// Out.
    pub executable: *mut PJRT_LoadedExecutable,
}
struct_size!(PJRT_Client_Compile_Args, executable: *mut PJRT_LoadedExecutable);

#[repr(C)]
pub struct PJRT_Client_BufferFromHostBuffer_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub data: *const c_void,
    pub type_: PJRT_Buffer_Type,
    pub dims: *const i64,
    pub num_dims: usize,
    /// Null means dense, major-to-minor.
    pub byte_strides: *const i64,
    pub num_byte_strides: usize,
    pub host_buffer_semantics: PJRT_HostBufferSemantics,
    pub device: *mut PJRT_Device,
    pub memory: *mut PJRT_Memory,
    pub device_layout: *mut PJRT_Buffer_MemoryLayout,
    /// Out; must be destroyed by the caller.
    pub done_with_host_buffer: *mut PJRT_Event,
    /// Out.
    pub buffer: *mut PJRT_Buffer,
}
struct_size!(PJRT_Client_BufferFromHostBuffer_Args, buffer: *mut PJRT_Buffer);

// ---------------------------------- Device descriptions -------------------------------

#[repr(C)]
pub struct PJRT_DeviceDescription_Id_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device_description: *mut PJRT_DeviceDescription,
    pub id: c_int,
}
struct_size!(PJRT_DeviceDescription_Id_Args, id: c_int);

#[repr(C)]
pub struct PJRT_DeviceDescription_Kind_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device_description: *mut PJRT_DeviceDescription,
    /// Out; owned by the description.
    pub device_kind: *const c_char,
    pub device_kind_size: usize,
}
struct_size!(PJRT_DeviceDescription_Kind_Args, device_kind_size: usize);

#[repr(C)]
pub struct PJRT_Device_GetDescription_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device: *mut PJRT_Device,
    /// Out; owned by the device.
    pub device_description: *mut PJRT_DeviceDescription,
}
struct_size!(PJRT_Device_GetDescription_Args, device_description: *mut PJRT_DeviceDescription);

// ------------------------------------ Executables -------------------------------------

#[repr(C)]
pub struct PJRT_Executable_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
}
struct_size!(PJRT_Executable_Destroy_Args, executable: *mut PJRT_Executable);

#[repr(C)]
pub struct PJRT_Executable_NumOutputs_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub num_outputs: usize,
}
struct_size!(PJRT_Executable_NumOutputs_Args, num_outputs: usize);

#[repr(C)]
pub struct PJRT_LoadedExecutable_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_LoadedExecutable,
}
struct_size!(PJRT_LoadedExecutable_Destroy_Args, executable: *mut PJRT_LoadedExecutable);

#[repr(C)]
pub struct PJRT_LoadedExecutable_GetExecutable_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub loaded_executable: *mut PJRT_LoadedExecutable,
    /// Out; the caller destroys it with `PJRT_Executable_Destroy`.
    pub executable: *mut PJRT_Executable,
}
struct_size!(PJRT_LoadedExecutable_GetExecutable_Args, executable: *mut PJRT_Executable);

#[repr(C)]
pub struct PJRT_LoadedExecutable_AddressableDevices_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_LoadedExecutable,
    /// Out; owned by the executable.
    pub addressable_devices: *const *mut PJRT_Device,
    pub num_addressable_devices: usize,
}
struct_size!(PJRT_LoadedExecutable_AddressableDevices_Args, num_addressable_devices: usize);

#[repr(C)]
pub struct PJRT_ExecuteOptions {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub send_callbacks: *mut c_void,
    pub recv_callbacks: *mut c_void,
    pub num_send_ops: usize,
    pub num_recv_ops: usize,
    pub launch_id: c_int,
    /// Inputs that must not be donated (aliased into outputs) even if the program
    /// declares them donatable.
    pub non_donatable_input_indices: *const i64,
    pub num_non_donatable_input_indices: usize,
    pub context: *mut PJRT_ExecuteContext,
    pub call_location: *const c_char,
    pub num_tasks: usize,
    pub task_ids: *mut c_int,
    pub incarnation_ids: *mut i64,
    pub multi_slice_config: *const c_void,
    pub use_major_to_minor_data_layout_for_callbacks: bool,
    pub hlo_output_callbacks: *mut c_void,
    pub num_hlo_output_callbacks: usize,
}
struct_size!(PJRT_ExecuteOptions, num_hlo_output_callbacks: usize);

#[repr(C)]
pub struct PJRT_LoadedExecutable_Execute_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_LoadedExecutable,
    pub options: *mut PJRT_ExecuteOptions,
    /// `num_devices` lists of `num_args` buffers.
    pub argument_lists: *const *const *mut PJRT_Buffer,
    pub num_devices: usize,
    pub num_args: usize,
    /// `num_devices` caller-allocated arrays of `num_outputs` slots, filled by the plugin.
    pub output_lists: *const *mut *mut PJRT_Buffer,
    /// Optional caller-allocated array of `num_devices` slots, filled with events.
    pub device_complete_events: *mut *mut PJRT_Event,
    /// Optional: run a single-device program on this device.
    pub execute_device: *mut PJRT_Device,
}
struct_size!(PJRT_LoadedExecutable_Execute_Args, execute_device: *mut PJRT_Device);

/// `program` is ours: with `code` null the plugin sets `code_size`; with a buffer of
/// that size it fills it. It sets `format` (owned by the plugin): `"hlo"`, a serialized
/// `HloModuleProto` of the optimized (for SPMD: partitioned) program.
#[repr(C)]
pub struct PJRT_Executable_OptimizedProgram_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub program: *mut PJRT_Program,
}
struct_size!(PJRT_Executable_OptimizedProgram_Args, program: *mut PJRT_Program);

#[repr(C)]
pub struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub size_in_bytes: i64,
}
struct_size!(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes: i64);

/// `properties` (owned by the executable) lists `num_properties` values: note the count
/// comes first.
#[repr(C)]
pub struct PJRT_Executable_GetCostAnalysis_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub num_properties: usize,
    pub properties: *const PJRT_NamedValue,
}
struct_size!(PJRT_Executable_GetCostAnalysis_Args, properties: *const PJRT_NamedValue);

// ------------------------------ Topologies (deviceless) ------------------------------

#[repr(C)]
pub struct PJRT_TopologyDescription_Create_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub topology_name: *const c_char,
    pub topology_name_size: usize,
    pub create_options: *const PJRT_NamedValue,
    pub num_options: usize,
    pub topology: *mut PJRT_TopologyDescription,
}
struct_size!(PJRT_TopologyDescription_Create_Args, topology: *mut PJRT_TopologyDescription);

#[repr(C)]
pub struct PJRT_TopologyDescription_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub topology: *mut PJRT_TopologyDescription,
}
struct_size!(PJRT_TopologyDescription_Destroy_Args, topology: *mut PJRT_TopologyDescription);

/// For `PlatformName` and `PlatformVersion` (the same layout): the string is owned by
/// the topology.
#[repr(C)]
pub struct PJRT_TopologyDescription_String_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub topology: *mut PJRT_TopologyDescription,
    pub value: *const c_char,
    pub value_size: usize,
}
struct_size!(PJRT_TopologyDescription_String_Args, value_size: usize);

#[repr(C)]
pub struct PJRT_TopologyDescription_GetDeviceDescriptions_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub topology: *mut PJRT_TopologyDescription,
    pub descriptions: *const *mut PJRT_DeviceDescription,
    pub num_descriptions: usize,
}
struct_size!(PJRT_TopologyDescription_GetDeviceDescriptions_Args, num_descriptions: usize);

#[repr(C)]
pub struct PJRT_TopologyDescription_Attributes_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub topology: *mut PJRT_TopologyDescription,
    pub attributes: *const PJRT_NamedValue,
    pub num_attributes: usize,
}
struct_size!(PJRT_TopologyDescription_Attributes_Args, num_attributes: usize);

/// Compiles for a topology without a client (`client` may be null): the result is an
/// unloaded executable, destroyed with `PJRT_Executable_Destroy`.
#[repr(C)]
pub struct PJRT_Compile_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub topology: *const PJRT_TopologyDescription,
    pub program: *const PJRT_Program,
    pub compile_options: *const c_char,
    pub compile_options_size: usize,
    pub client: *mut PJRT_Client,
    pub executable: *mut PJRT_Executable,
}
struct_size!(PJRT_Compile_Args, executable: *mut PJRT_Executable);

/// What XLA allocates for one device's copy of an executable (`xla::CompiledMemoryStats`),
/// in bytes. Header 0.110's layout; a plugin writes the fields it knows (the CPU plugin
/// of API 0.115 requires at least the first 112 bytes).
#[repr(C)]
pub struct PJRT_Executable_GetCompiledMemoryStats_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub generated_code_size_in_bytes: i64,
    pub argument_size_in_bytes: i64,
    pub output_size_in_bytes: i64,
    /// Argument memory reused for outputs.
    pub alias_size_in_bytes: i64,
    pub temp_size_in_bytes: i64,
    pub host_generated_code_size_in_bytes: i64,
    pub host_argument_size_in_bytes: i64,
    pub host_output_size_in_bytes: i64,
    pub host_alias_size_in_bytes: i64,
    pub host_temp_size_in_bytes: i64,
    pub peak_memory_in_bytes: i64,
    pub total_size_in_bytes: i64,
    pub total_allocation_bytes: i64,
    pub indefinite_allocations: i64,
    pub peak_unpadded_heap_bytes: i64,
}
struct_size!(PJRT_Executable_GetCompiledMemoryStats_Args, peak_unpadded_heap_bytes: i64);

/// Frees the memory behind `PJRT_Executable_Serialize_Args::serialized_bytes`.
pub type PJRT_SerializedExecutable_Deleter =
    unsafe extern "C" fn(exec: *mut PJRT_SerializedExecutable);

#[repr(C)]
pub struct PJRT_Executable_Serialize_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *const PJRT_Executable,
    /// Out; lives as long as `serialized_executable`.
    pub serialized_bytes: *const c_char,
    pub serialized_bytes_size: usize,
    /// Out; backs `serialized_bytes`.
    pub serialized_executable: *mut PJRT_SerializedExecutable,
    /// Out; must be called exactly once on `serialized_executable`.
    pub serialized_executable_deleter: Option<PJRT_SerializedExecutable_Deleter>,
}
struct_size!(
    PJRT_Executable_Serialize_Args,
    serialized_executable_deleter: Option<PJRT_SerializedExecutable_Deleter>
);

/// Optional load options of `PJRT_Executable_DeserializeAndLoad` (no `extension_start`).
#[repr(C)]
pub struct PJRT_LoadOptions {
    pub struct_size: usize,
    pub computation_origin: *const i32,
    pub computation_origin_size: usize,
    pub multi_slice_config: *mut PJRT_MultiSlice_Config,
}
struct_size!(PJRT_LoadOptions, multi_slice_config: *mut PJRT_MultiSlice_Config);

#[repr(C)]
pub struct PJRT_Executable_DeserializeAndLoad_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    /// Bytes produced by `PJRT_Executable_Serialize` of the same platform and version.
    pub serialized_executable: *const c_char,
    pub serialized_executable_size: usize,
    /// Out.
    pub loaded_executable: *mut PJRT_LoadedExecutable,
    /// A serialized `CompileOptionsProto`, or null to keep the serialized options.
    pub overridden_serialized_compile_options: *const c_char,
    pub overridden_serialized_compile_options_size: usize,
    /// Null for defaults.
    pub load_options: *mut PJRT_LoadOptions,
}
struct_size!(
    PJRT_Executable_DeserializeAndLoad_Args,
    load_options: *mut PJRT_LoadOptions
);

// -------------------------------------- Buffers ---------------------------------------

#[repr(C)]
pub struct PJRT_Buffer_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
}
struct_size!(PJRT_Buffer_Destroy_Args, buffer: *mut PJRT_Buffer);

#[repr(C)]
pub struct PJRT_Buffer_ElementType_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub type_: PJRT_Buffer_Type,
}
struct_size!(PJRT_Buffer_ElementType_Args, type_: PJRT_Buffer_Type);

#[repr(C)]
pub struct PJRT_Buffer_Dimensions_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    /// Out; owned by the buffer.
    pub dims: *const i64,
    pub num_dims: usize,
}
struct_size!(PJRT_Buffer_Dimensions_Args, num_dims: usize);

#[repr(C)]
pub struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub on_device_size_in_bytes: usize,
}
struct_size!(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes: usize);

#[repr(C)]
pub struct PJRT_Buffer_IsDeleted_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    /// Out.
    pub is_deleted: bool,
}
struct_size!(PJRT_Buffer_IsDeleted_Args, is_deleted: bool);

#[repr(C)]
pub struct PJRT_Buffer_ToHostBuffer_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub src: *mut PJRT_Buffer,
    /// Null means dense, major-to-minor.
    pub host_layout: *mut PJRT_Buffer_MemoryLayout,
    /// Null to query the size needed (returned in `dst_size`).
    pub dst: *mut c_void,
    pub dst_size: usize,
    /// Out; the copy is complete when it is ready.
    pub event: *mut PJRT_Event,
}
struct_size!(PJRT_Buffer_ToHostBuffer_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Buffer_IsOnCpu_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    /// Out.
    pub is_on_cpu: bool,
}
struct_size!(PJRT_Buffer_IsOnCpu_Args, is_on_cpu: bool);

#[repr(C)]
pub struct PJRT_Buffer_ReadyEvent_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    /// Out; must be destroyed by the caller.
    pub event: *mut PJRT_Event,
}
struct_size!(PJRT_Buffer_ReadyEvent_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Buffer_UnsafePointer_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    /// Out: the address of the buffer's memory (host memory for a CPU buffer).
    pub buffer_pointer: usize,
}
struct_size!(PJRT_Buffer_UnsafePointer_Args, buffer_pointer: usize);

/// Args of `PJRT_Buffer_IncreaseExternalReferenceCount` and
/// `PJRT_Buffer_DecreaseExternalReferenceCount` (the same fields).
#[repr(C)]
pub struct PJRT_Buffer_ExternalReference_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
}
struct_size!(PJRT_Buffer_ExternalReference_Args, buffer: *mut PJRT_Buffer);

pub type PJRT_Buffer_MemoryLayout_Type = c_int;
pub const PJRT_Buffer_MemoryLayout_Type_Tiled: PJRT_Buffer_MemoryLayout_Type = 0;

/// `PJRT_Buffer_MemoryLayout_Tiled`, the union member tpuc reads (the strided member
/// is no larger).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PJRT_Buffer_MemoryLayout_Tiled {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    /// Physical dimensions from the most minor, as logical dimension numbers.
    pub minor_to_major: *const i64,
    pub minor_to_major_size: usize,
    pub tile_dims: *const i64,
    pub tile_dim_sizes: *const usize,
    pub num_tiles: usize,
}

#[repr(C)]
pub struct PJRT_Buffer_MemoryLayout {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub tiled: PJRT_Buffer_MemoryLayout_Tiled,
    pub type_: PJRT_Buffer_MemoryLayout_Type,
}

#[repr(C)]
pub struct PJRT_Buffer_GetMemoryLayout_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    /// Out; its arrays are owned by the buffer.
    pub layout: PJRT_Buffer_MemoryLayout,
}
struct_size!(PJRT_Buffer_GetMemoryLayout_Args, layout: PJRT_Buffer_MemoryLayout);

// ------------------------------------ The API table -----------------------------------

pub type PJRT_Error_Destroy = unsafe extern "C" fn(args: *mut PJRT_Error_Destroy_Args);
pub type PJRT_Error_Message = unsafe extern "C" fn(args: *mut PJRT_Error_Message_Args);
/// Functions that return a `PJRT_Error*` (null on success).
pub type PjrtFn<A> = unsafe extern "C" fn(args: *mut A) -> *mut PJRT_Error;
/// A slot of the table this crate does not call (kept for the layout).
pub type Unused = Option<unsafe extern "C" fn()>;

/// `PJRT_Api` up to the last function tpuc calls (`PJRT_Executable_GetCompiledMemoryStats`,
/// slot 96; slots counted from `PJRT_Error_Destroy`, each one pointer, at offset 40 + 8 i).
#[repr(C)]
pub struct PJRT_Api {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub pjrt_api_version: PJRT_Api_Version,

    pub PJRT_Error_Destroy: Option<PJRT_Error_Destroy>,
    pub PJRT_Error_Message: Option<PJRT_Error_Message>,
    pub PJRT_Error_GetCode: Option<PjrtFn<PJRT_Error_GetCode_Args>>,

    pub PJRT_Plugin_Initialize: Option<PjrtFn<PJRT_Plugin_Initialize_Args>>,
    pub PJRT_Plugin_Attributes: Option<PjrtFn<PJRT_Plugin_Attributes_Args>>,

    pub PJRT_Event_Destroy: Option<PjrtFn<PJRT_Event_Destroy_Args>>,
    pub PJRT_Event_IsReady: Option<PjrtFn<PJRT_Event_IsReady_Args>>,
    pub PJRT_Event_Error: Option<PjrtFn<PJRT_Event_Error_Args>>,
    pub PJRT_Event_Await: Option<PjrtFn<PJRT_Event_Await_Args>>,
    pub PJRT_Event_OnReady: Unused,

    pub PJRT_Client_Create: Option<PjrtFn<PJRT_Client_Create_Args>>,
    pub PJRT_Client_Destroy: Option<PjrtFn<PJRT_Client_Destroy_Args>>,
    pub PJRT_Client_PlatformName: Option<PjrtFn<PJRT_Client_PlatformName_Args>>,
    pub PJRT_Client_ProcessIndex: Unused,
    pub PJRT_Client_PlatformVersion: Option<PjrtFn<PJRT_Client_PlatformVersion_Args>>,
    pub PJRT_Client_Devices: Option<PjrtFn<PJRT_Client_Devices_Args>>,
    pub PJRT_Client_AddressableDevices: Option<PjrtFn<PJRT_Client_AddressableDevices_Args>>,
    pub PJRT_Client_LookupDevice: Unused,
    pub PJRT_Client_LookupAddressableDevice: Unused,
    pub PJRT_Client_AddressableMemories: Unused,
    pub PJRT_Client_Compile: Option<PjrtFn<PJRT_Client_Compile_Args>>,
    pub PJRT_Client_DefaultDeviceAssignment: Unused,
    pub PJRT_Client_BufferFromHostBuffer: Option<PjrtFn<PJRT_Client_BufferFromHostBuffer_Args>>,

    pub PJRT_DeviceDescription_Id: Option<PjrtFn<PJRT_DeviceDescription_Id_Args>>,
    pub PJRT_DeviceDescription_ProcessIndex: Unused,
    pub PJRT_DeviceDescription_Attributes: Unused,
    pub PJRT_DeviceDescription_Kind: Option<PjrtFn<PJRT_DeviceDescription_Kind_Args>>,
    pub PJRT_DeviceDescription_DebugString: Unused,
    pub PJRT_DeviceDescription_ToString: Unused,

    pub PJRT_Device_GetDescription: Option<PjrtFn<PJRT_Device_GetDescription_Args>>,
    pub PJRT_Device_IsAddressable: Unused,
    pub PJRT_Device_LocalHardwareId: Unused,
    pub PJRT_Device_AddressableMemories: Unused,
    pub PJRT_Device_DefaultMemory: Unused,
    pub PJRT_Device_MemoryStats: Unused,

    pub PJRT_Memory_Id: Unused,
    pub PJRT_Memory_Kind: Unused,
    pub PJRT_Memory_DebugString: Unused,
    pub PJRT_Memory_ToString: Unused,
    pub PJRT_Memory_AddressableByDevices: Unused,

    pub PJRT_Executable_Destroy: Option<PjrtFn<PJRT_Executable_Destroy_Args>>,
    pub PJRT_Executable_Name: Unused,
    pub PJRT_Executable_NumReplicas: Unused,
    pub PJRT_Executable_NumPartitions: Unused,
    pub PJRT_Executable_NumOutputs: Option<PjrtFn<PJRT_Executable_NumOutputs_Args>>,
    pub PJRT_Executable_SizeOfGeneratedCodeInBytes:
        Option<PjrtFn<PJRT_Executable_SizeOfGeneratedCodeInBytes_Args>>,
    pub PJRT_Executable_GetCostAnalysis: Option<PjrtFn<PJRT_Executable_GetCostAnalysis_Args>>,
    pub PJRT_Executable_OutputMemoryKinds: Unused,
    pub PJRT_Executable_OptimizedProgram: Option<PjrtFn<PJRT_Executable_OptimizedProgram_Args>>,
    pub PJRT_Executable_Serialize: Option<PjrtFn<PJRT_Executable_Serialize_Args>>,

    pub PJRT_LoadedExecutable_Destroy: Option<PjrtFn<PJRT_LoadedExecutable_Destroy_Args>>,
    pub PJRT_LoadedExecutable_GetExecutable:
        Option<PjrtFn<PJRT_LoadedExecutable_GetExecutable_Args>>,
    pub PJRT_LoadedExecutable_AddressableDevices:
        Option<PjrtFn<PJRT_LoadedExecutable_AddressableDevices_Args>>,
    pub PJRT_LoadedExecutable_Delete: Unused,
    pub PJRT_LoadedExecutable_IsDeleted: Unused,
    pub PJRT_LoadedExecutable_Execute: Option<PjrtFn<PJRT_LoadedExecutable_Execute_Args>>,
    pub PJRT_Executable_DeserializeAndLoad: Option<PjrtFn<PJRT_Executable_DeserializeAndLoad_Args>>,
    pub PJRT_LoadedExecutable_Fingerprint: Unused,

    pub PJRT_Buffer_Destroy: Option<PjrtFn<PJRT_Buffer_Destroy_Args>>,
    pub PJRT_Buffer_ElementType: Option<PjrtFn<PJRT_Buffer_ElementType_Args>>,
    pub PJRT_Buffer_Dimensions: Option<PjrtFn<PJRT_Buffer_Dimensions_Args>>,
    pub PJRT_Buffer_UnpaddedDimensions: Unused,
    pub PJRT_Buffer_DynamicDimensionIndices: Unused,
    pub PJRT_Buffer_GetMemoryLayout: Option<PjrtFn<PJRT_Buffer_GetMemoryLayout_Args>>,
    pub PJRT_Buffer_OnDeviceSizeInBytes: Option<PjrtFn<PJRT_Buffer_OnDeviceSizeInBytes_Args>>,
    pub PJRT_Buffer_Device: Unused,
    pub PJRT_Buffer_Memory: Unused,
    pub PJRT_Buffer_Delete: Unused,
    pub PJRT_Buffer_IsDeleted: Option<PjrtFn<PJRT_Buffer_IsDeleted_Args>>,
    pub PJRT_Buffer_CopyToDevice: Unused,
    pub PJRT_Buffer_ToHostBuffer: Option<PjrtFn<PJRT_Buffer_ToHostBuffer_Args>>,

    pub PJRT_Buffer_IsOnCpu: Option<PjrtFn<PJRT_Buffer_IsOnCpu_Args>>,
    pub PJRT_Buffer_ReadyEvent: Option<PjrtFn<PJRT_Buffer_ReadyEvent_Args>>,
    pub PJRT_Buffer_UnsafePointer: Option<PjrtFn<PJRT_Buffer_UnsafePointer_Args>>,
    pub PJRT_Buffer_IncreaseExternalReferenceCount:
        Option<PjrtFn<PJRT_Buffer_ExternalReference_Args>>,
    pub PJRT_Buffer_DecreaseExternalReferenceCount:
        Option<PjrtFn<PJRT_Buffer_ExternalReference_Args>>,
    pub PJRT_Buffer_OpaqueDeviceMemoryDataPointer: Unused,

    pub PJRT_CopyToDeviceStream_Destroy: Unused,
    pub PJRT_CopyToDeviceStream_AddChunk: Unused,
    pub PJRT_CopyToDeviceStream_TotalBytes: Unused,
    pub PJRT_CopyToDeviceStream_GranuleSize: Unused,
    pub PJRT_CopyToDeviceStream_CurrentBytes: Unused,

    pub PJRT_TopologyDescription_Create: Option<PjrtFn<PJRT_TopologyDescription_Create_Args>>,
    pub PJRT_TopologyDescription_Destroy: Option<PjrtFn<PJRT_TopologyDescription_Destroy_Args>>,
    pub PJRT_TopologyDescription_PlatformName: Option<PjrtFn<PJRT_TopologyDescription_String_Args>>,
    pub PJRT_TopologyDescription_PlatformVersion:
        Option<PjrtFn<PJRT_TopologyDescription_String_Args>>,
    pub PJRT_TopologyDescription_GetDeviceDescriptions:
        Option<PjrtFn<PJRT_TopologyDescription_GetDeviceDescriptions_Args>>,
    pub PJRT_TopologyDescription_Serialize: Unused,
    pub PJRT_TopologyDescription_Attributes:
        Option<PjrtFn<PJRT_TopologyDescription_Attributes_Args>>,

    pub PJRT_Compile: Option<PjrtFn<PJRT_Compile_Args>>,

    pub PJRT_Executable_OutputElementTypes: Unused,
    pub PJRT_Executable_OutputDimensions: Unused,
    pub PJRT_Buffer_CopyToMemory: Unused,
    pub PJRT_Client_CreateViewOfDeviceBuffer: Unused,
    pub PJRT_Executable_Fingerprint: Unused,
    pub PJRT_Client_TopologyDescription: Unused,
    pub PJRT_Executable_GetCompiledMemoryStats:
        Option<PjrtFn<PJRT_Executable_GetCompiledMemoryStats_Args>>,
}

impl PJRT_Api {
    /// Offset of the first function pointer in the table.
    pub const TABLE_OFFSET: usize = offset_of!(PJRT_Api, PJRT_Error_Destroy);

    /// Whether a table of `struct_size` bytes contains the slot that starts at
    /// `field_offset` (a plugin older than the function does not have it).
    pub fn has_slot(struct_size: usize, field_offset: usize) -> bool {
        field_offset + size_of::<usize>() <= struct_size
    }
}

/// `const PJRT_Api* GetPjrtApi(void)`, the one symbol a plugin exports.
pub type GetPjrtApiFn = unsafe extern "C" fn() -> *const PJRT_Api;

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes and offsets as computed by a C compiler from pjrt_c_api.h 0.114 (x86-64 /
    /// aarch64 Linux, LP64).
    #[test]
    fn struct_sizes_match_the_header() {
        assert_eq!(PJRT_Api_Version::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Error_Destroy_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Error_Message_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Error_GetCode_Args::STRUCT_SIZE, 28);
        assert_eq!(PJRT_NamedValue::STRUCT_SIZE, 56);
        assert_eq!(offset_of!(PJRT_NamedValue, value), 40);
        assert_eq!(PJRT_Plugin_Initialize_Args::STRUCT_SIZE, 16);
        assert_eq!(PJRT_Plugin_Attributes_Args::STRUCT_SIZE, 32);
        assert_eq!(PJRT_Event_Destroy_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Event_IsReady_Args::STRUCT_SIZE, 25);
        assert_eq!(PJRT_Event_Error_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Event_Await_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Client_Create_Args::STRUCT_SIZE, 88);
        assert_eq!(PJRT_Client_Destroy_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Client_PlatformName_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Client_PlatformVersion_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Client_Devices_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Client_AddressableDevices_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Program::STRUCT_SIZE, 48);
        assert_eq!(PJRT_Client_Compile_Args::STRUCT_SIZE, 56);
        assert_eq!(PJRT_Client_BufferFromHostBuffer_Args::STRUCT_SIZE, 120);
        assert_eq!(offset_of!(PJRT_Client_BufferFromHostBuffer_Args, dims), 40);
        assert_eq!(
            offset_of!(PJRT_Client_BufferFromHostBuffer_Args, device),
            80
        );
        assert_eq!(PJRT_DeviceDescription_Id_Args::STRUCT_SIZE, 28);
        assert_eq!(PJRT_DeviceDescription_Kind_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Device_GetDescription_Args::STRUCT_SIZE, 32);
        assert_eq!(PJRT_Executable_Destroy_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Executable_NumOutputs_Args::STRUCT_SIZE, 32);
        assert_eq!(PJRT_LoadedExecutable_Destroy_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_LoadedExecutable_GetExecutable_Args::STRUCT_SIZE, 32);
        assert_eq!(
            PJRT_LoadedExecutable_AddressableDevices_Args::STRUCT_SIZE,
            40
        );
        assert_eq!(PJRT_ExecuteOptions::STRUCT_SIZE, 144);
        assert_eq!(offset_of!(PJRT_ExecuteOptions, launch_id), 48);
        assert_eq!(
            offset_of!(PJRT_ExecuteOptions, non_donatable_input_indices),
            56
        );
        assert_eq!(PJRT_LoadedExecutable_Execute_Args::STRUCT_SIZE, 80);
        assert_eq!(PJRT_Executable_Serialize_Args::STRUCT_SIZE, 56);
        assert_eq!(PJRT_Executable_OptimizedProgram_Args::STRUCT_SIZE, 32);
        assert_eq!(
            offset_of!(PJRT_Executable_Serialize_Args, serialized_bytes_size),
            32
        );
        assert_eq!(PJRT_LoadOptions::STRUCT_SIZE, 32);
        assert_eq!(PJRT_Executable_DeserializeAndLoad_Args::STRUCT_SIZE, 72);
        assert_eq!(
            offset_of!(PJRT_Executable_DeserializeAndLoad_Args, loaded_executable),
            40
        );
        assert_eq!(PJRT_Buffer_Destroy_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Buffer_ElementType_Args::STRUCT_SIZE, 28);
        assert_eq!(PJRT_Buffer_Dimensions_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Buffer_OnDeviceSizeInBytes_Args::STRUCT_SIZE, 32);
        assert_eq!(PJRT_Buffer_IsDeleted_Args::STRUCT_SIZE, 25);
        assert_eq!(PJRT_Buffer_ToHostBuffer_Args::STRUCT_SIZE, 56);
        assert_eq!(PJRT_Buffer_IsOnCpu_Args::STRUCT_SIZE, 25);
        assert_eq!(PJRT_Buffer_ReadyEvent_Args::STRUCT_SIZE, 32);
        assert_eq!(PJRT_Buffer_UnsafePointer_Args::STRUCT_SIZE, 32);
        assert_eq!(PJRT_Buffer_ExternalReference_Args::STRUCT_SIZE, 24);
        // Layout: 16 bytes of header, the 56-byte tiled member, the type (4 bytes).
        assert_eq!(offset_of!(PJRT_Buffer_MemoryLayout, type_), 72);
        assert_eq!(PJRT_Buffer_GetMemoryLayout_Args::STRUCT_SIZE, 24 + 80);
        // Header 0.110.
        assert_eq!(
            PJRT_Executable_SizeOfGeneratedCodeInBytes_Args::STRUCT_SIZE,
            32
        );
        assert_eq!(PJRT_Executable_GetCostAnalysis_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_TopologyDescription_Create_Args::STRUCT_SIZE, 56);
        assert_eq!(PJRT_TopologyDescription_Destroy_Args::STRUCT_SIZE, 24);
        assert_eq!(PJRT_TopologyDescription_String_Args::STRUCT_SIZE, 40);
        assert_eq!(
            PJRT_TopologyDescription_GetDeviceDescriptions_Args::STRUCT_SIZE,
            40
        );
        assert_eq!(PJRT_TopologyDescription_Attributes_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Compile_Args::STRUCT_SIZE, 64);
        assert_eq!(
            PJRT_Executable_GetCompiledMemoryStats_Args::STRUCT_SIZE,
            144
        );
        assert_eq!(
            offset_of!(
                PJRT_Executable_GetCompiledMemoryStats_Args,
                argument_size_in_bytes
            ),
            32
        );
        assert_eq!(
            offset_of!(
                PJRT_Executable_GetCompiledMemoryStats_Args,
                peak_memory_in_bytes
            ),
            104
        );
    }

    #[test]
    fn api_table_slots_match_the_header() {
        let slot = |offset: usize| (offset - PJRT_Api::TABLE_OFFSET) / 8;
        assert_eq!(PJRT_Api::TABLE_OFFSET, 40);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Client_Create)), 10);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Client_PlatformName)), 12);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Client_PlatformVersion)), 14);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Client_Compile)), 20);
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_Client_BufferFromHostBuffer)),
            22
        );
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Device_GetDescription)), 29);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Executable_Destroy)), 40);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Executable_NumOutputs)), 44);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Executable_Serialize)), 49);
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_LoadedExecutable_Destroy)),
            50
        );
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_LoadedExecutable_GetExecutable)),
            51
        );
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_LoadedExecutable_Execute)),
            55
        );
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_Executable_DeserializeAndLoad)),
            56
        );
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Buffer_Destroy)), 58);
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_Buffer_OnDeviceSizeInBytes)),
            64
        );
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Buffer_GetMemoryLayout)), 63);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Buffer_ToHostBuffer)), 70);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Buffer_IsOnCpu)), 71);
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Buffer_UnsafePointer)), 73);
        assert_eq!(
            slot(offset_of!(
                PJRT_Api,
                PJRT_Buffer_DecreaseExternalReferenceCount
            )),
            75
        );
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_TopologyDescription_Create)),
            82
        );
        assert_eq!(slot(offset_of!(PJRT_Api, PJRT_Compile)), 89);
        assert_eq!(
            slot(offset_of!(PJRT_Api, PJRT_Executable_GetCompiledMemoryStats)),
            96
        );
        assert_eq!(size_of::<PJRT_Api>(), 40 + 97 * 8);
    }
}
