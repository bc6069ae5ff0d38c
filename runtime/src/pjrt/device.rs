//! [`Device`]: a device of a client, as its description reads.

use super::{ffi, string_from_raw, ClientInner};
use crate::error::Result;

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

impl ClientInner {
    pub(super) fn describe(
        &self,
        device: *mut ffi::PJRT_Device,
        addressable: bool,
    ) -> Result<Device> {
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
