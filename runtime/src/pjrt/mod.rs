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
//! here is `Send + Sync`; the `unsafe impl`s next to each type state this per type.
//!
//! One type per file: [`Plugin`] (`plugin.rs`; its `PJRT_Error` and `PJRT_Event`
//! handling in `error.rs`), [`NamedValue`] (`named_value.rs`), [`Client`]
//! (`client.rs`), [`Device`] (`device.rs`), [`Buffer`] (`buffer.rs`),
//! [`LoadedExecutable`] (`loaded_executable.rs`); `executable.rs` holds the queries
//! shared with the topology-compiled [`topology::Executable`], `ffi.rs` the C API.

pub mod ffi;

use std::ffi::c_char;

/// Reads function `$name` from a plugin's API table, checking that the plugin's table is
/// long enough to have the slot and that the slot is filled. Paths are absolute so
/// that every file of this module can use it.
macro_rules! api_fn {
    ($plugin:expr, $name:ident) => {{
        let plugin: &$crate::pjrt::Plugin = $plugin;
        let offset = ::std::mem::offset_of!($crate::pjrt::ffi::PJRT_Api, $name);
        if $crate::pjrt::ffi::PJRT_Api::has_slot(plugin.api_struct_size, offset) {
            // SAFETY: the table is at least `api_struct_size` bytes long (the plugin says
            // so) and the slot lies inside it; it is read through a raw pointer so that no
            // reference to a possibly shorter table is ever formed.
            let f = unsafe { ::std::ptr::addr_of!((*plugin.api).$name).read() };
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
        let mut a: $crate::pjrt::ffi::$ty = unsafe { ::std::mem::zeroed() };
        a.struct_size = $crate::pjrt::ffi::$ty::STRUCT_SIZE;
        $(a.$field = $value;)*
        a
    }};
}

mod buffer;
mod client;
mod device;
mod error;
mod executable;
mod loaded_executable;
mod named_value;
mod plugin;
pub mod topology;

pub use buffer::{buffer_type, dtype_of_buffer_type, Buffer};
pub use client::{Client, ClientOptions};
pub use device::Device;
pub use executable::CompiledMemoryStats;
pub use loaded_executable::LoadedExecutable;
pub use named_value::NamedValue;
pub use plugin::{ApiVersion, Plugin};

use client::ClientInner;
use executable::{encode_options, program_of};
use named_value::named_values_from_raw;
#[cfg(test)]
pub(crate) use plugin::tests::in_child as plugin_env_test_child;

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
