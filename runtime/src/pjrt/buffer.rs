//! [`Buffer`]: a tensor in device memory, and PJRT's element types.

use super::{ffi, Client, ClientInner};
use crate::error::{Result, RuntimeError};
use crate::{DType, HostTensor};
use std::ffi::c_void;
use std::sync::Arc;

/// A tensor in device memory.
pub struct Buffer {
    pub(super) client: Arc<ClientInner>,
    pub(super) raw: *mut ffi::PJRT_Buffer,
    pub(super) element_type: ffi::PJRT_Buffer_Type,
    pub(super) shape: Vec<i64>,
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
    pub(super) fn wrap(client: Arc<ClientInner>, raw: *mut ffi::PJRT_Buffer) -> Result<Buffer> {
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

    /// Whether the buffer was deleted or donated to an execution (its handle stays
    /// valid, its contents are gone).
    pub(crate) fn is_deleted(&self) -> Result<bool> {
        let plugin = &self.client.plugin;
        let f = api_fn!(plugin, PJRT_Buffer_IsDeleted)?;
        let mut a = args!(PJRT_Buffer_IsDeleted_Args { buffer: self.raw });
        // SAFETY: valid args.
        plugin.check("PJRT_Buffer_IsDeleted", unsafe { f(&mut a) })?;
        Ok(a.is_deleted)
    }

    /// Whether `client` is the client this buffer lives on.
    pub fn belongs_to(&self, client: &Client) -> bool {
        client.same_client(&self.client)
    }

    /// Copies the buffer to host memory (dense, row-major).
    pub fn to_host(&self) -> Result<HostTensor> {
        let dtype = self.dtype()?;
        let mut data = vec![0u8; self.host_size()?];
        self.to_host_into(&mut data)?;
        Ok(HostTensor {
            dtype,
            shape: self.shape.clone(),
            data,
        })
    }

    /// The bytes of the buffer in host memory (dense, row-major).
    pub fn host_size(&self) -> Result<usize> {
        let dtype = self.dtype()?;
        self.shape
            .iter()
            .try_fold(dtype.size_in_bytes(), |acc, &d| {
                usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
            })
            .ok_or_else(|| {
                RuntimeError::InvalidArgument(format!("buffer shape {:?} is invalid", self.shape))
            })
    }

    /// Copies the buffer into `data` (dense, row-major), which must hold exactly
    /// [`Buffer::host_size`] bytes: a caller's own array, written without a copy in
    /// between. A buffer in host memory (the CPU plugin's) is read on the calling thread.
    pub fn to_host_into(&self, data: &mut [u8]) -> Result<()> {
        self.copy_to_host(data, true)
    }

    /// [`Buffer::to_host`] always through the plugin's own copy
    /// (`PJRT_Buffer_ToHostBuffer` and its completion event), never reading host memory
    /// directly: what the bench compares the direct read with.
    pub fn to_host_through_plugin(&self) -> Result<HostTensor> {
        let dtype = self.dtype()?;
        let mut data = vec![0u8; self.host_size()?];
        self.copy_to_host(&mut data, false)?;
        Ok(HostTensor {
            dtype,
            shape: self.shape.clone(),
            data,
        })
    }

    fn copy_to_host(&self, data: &mut [u8], direct: bool) -> Result<()> {
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
        if data.len() != expected {
            return Err(RuntimeError::InvalidArgument(format!(
                "a {dtype} {:?} buffer needs {expected} bytes on the host, the destination has {}",
                self.shape,
                data.len()
            )));
        }
        if expected > 0 && direct && self.copy_from_host_memory(data)? {
            return Ok(());
        }
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
        Ok(())
    }

    /// The direct path of [`Buffer::to_host_into`], for a buffer that lives in host memory
    /// (the CPU plugin's), dense and row-major: pins it, waits until it is defined, then
    /// copies its memory into `data` on the calling thread. `Ok(false)` when the buffer or
    /// the plugin does not qualify; the caller then asks the plugin for the copy, which
    /// the CPU plugin hands to one of its worker threads (a thread hand-off of 5-30 us
    /// per output on a small machine, most of a small program's call).
    fn copy_from_host_memory(&self, data: &mut [u8]) -> Result<bool> {
        let plugin = &self.client.plugin;
        let (Ok(is_on_cpu), Ok(layout), Ok(ready), Ok(pointer), Ok(pin), Ok(unpin)) = (
            api_fn!(plugin, PJRT_Buffer_IsOnCpu),
            api_fn!(plugin, PJRT_Buffer_GetMemoryLayout),
            api_fn!(plugin, PJRT_Buffer_ReadyEvent),
            api_fn!(plugin, PJRT_Buffer_UnsafePointer),
            api_fn!(plugin, PJRT_Buffer_IncreaseExternalReferenceCount),
            api_fn!(plugin, PJRT_Buffer_DecreaseExternalReferenceCount),
        ) else {
            return Ok(false);
        };
        let mut a = args!(PJRT_Buffer_IsOnCpu_Args { buffer: self.raw });
        // SAFETY: valid args.
        if plugin
            .check("PJRT_Buffer_IsOnCpu", unsafe { is_on_cpu(&mut a) })
            .is_err()
            || !a.is_on_cpu
        {
            return Ok(false);
        }
        let mut a = args!(PJRT_Buffer_GetMemoryLayout_Args { buffer: self.raw });
        // SAFETY: valid args; the layout's arrays are owned by the buffer and read
        // before it can go away.
        if plugin
            .check("PJRT_Buffer_GetMemoryLayout", unsafe { layout(&mut a) })
            .is_err()
            || !is_dense_row_major(&a.layout, self.shape.len())
        {
            return Ok(false);
        }
        if self.on_device_size_in_bytes()? != data.len() {
            return Ok(false);
        }
        // An external reference pins the memory until it is read: the plugin neither
        // frees nor donates (hands to an execution to overwrite) a buffer that has one.
        let mut a = args!(PJRT_Buffer_ExternalReference_Args { buffer: self.raw });
        // SAFETY: valid args.
        if plugin
            .check("PJRT_Buffer_IncreaseExternalReferenceCount", unsafe {
                pin(&mut a)
            })
            .is_err()
        {
            return Ok(false);
        }
        let copied = (|| -> Result<bool> {
            let mut a = args!(PJRT_Buffer_ReadyEvent_Args { buffer: self.raw });
            // SAFETY: valid args.
            plugin.check("PJRT_Buffer_ReadyEvent", unsafe { ready(&mut a) })?;
            plugin.await_event("PJRT_Buffer_ReadyEvent", a.event)?;
            let mut a = args!(PJRT_Buffer_UnsafePointer_Args { buffer: self.raw });
            // SAFETY: valid args.
            plugin.check("PJRT_Buffer_UnsafePointer", unsafe { pointer(&mut a) })?;
            if a.buffer_pointer == 0 {
                return Ok(false);
            }
            // SAFETY: a CPU buffer's address is host memory of its on-device size
            // (checked to be `data.len()`), defined (its ready event completed) and
            // pinned by the external reference; `data` is the caller's own memory.
            let src =
                unsafe { std::slice::from_raw_parts(a.buffer_pointer as *const u8, data.len()) };
            data.copy_from_slice(src);
            Ok(true)
        })();
        let mut a = args!(PJRT_Buffer_ExternalReference_Args { buffer: self.raw });
        // SAFETY: valid args; releases the reference taken above.
        let released = plugin.check("PJRT_Buffer_DecreaseExternalReferenceCount", unsafe {
            unpin(&mut a)
        });
        let copied = copied?;
        released?;
        Ok(copied)
    }
}

/// Whether a plugin's layout is dense row-major (no tiles, dimensions from the last as
/// the most minor).
fn is_dense_row_major(layout: &ffi::PJRT_Buffer_MemoryLayout, rank: usize) -> bool {
    if layout.type_ != ffi::PJRT_Buffer_MemoryLayout_Type_Tiled {
        return false;
    }
    let tiled = &layout.tiled;
    if tiled.num_tiles != 0 || tiled.minor_to_major_size != rank {
        return false;
    }
    if rank == 0 {
        return true;
    }
    if tiled.minor_to_major.is_null() {
        return false;
    }
    // SAFETY: the plugin's array of `minor_to_major_size` dimension numbers.
    let m2m = unsafe { std::slice::from_raw_parts(tiled.minor_to_major, rank) };
    m2m.iter()
        .enumerate()
        .all(|(i, &d)| d == (rank - 1 - i) as i64)
}

pub(super) fn check_host_data(dtype: DType, shape: &[i64], len: usize) -> Result<()> {
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
        DType::C64 => ffi::PJRT_Buffer_Type_C64,
        DType::C128 => ffi::PJRT_Buffer_Type_C128,
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
        ffi::PJRT_Buffer_Type_C64 => DType::C64,
        ffi::PJRT_Buffer_Type_C128 => DType::C128,
        _ => return None,
    })
}
