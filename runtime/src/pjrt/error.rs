//! How a [`Plugin`] turns the `PJRT_Error`s its calls return into [`RuntimeError`]s,
//! and waits for and destroys `PJRT_Event`s.

use super::{ffi, string_from_raw, Plugin};
use crate::error::{ErrorCode, Result, RuntimeError};

impl Plugin {
    /// Turns a returned `PJRT_Error*` into a result, destroying the error.
    pub(super) fn check(&self, call: &'static str, error: *mut ffi::PJRT_Error) -> Result<()> {
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

    pub(super) fn destroy_error(&self, error: *mut ffi::PJRT_Error) {
        if let Ok(f) = api_fn!(self, PJRT_Error_Destroy) {
            let mut a = args!(PJRT_Error_Destroy_Args { error: error });
            // SAFETY: `error` is live and destroyed exactly once.
            unsafe { f(&mut a) };
        }
    }

    /// Waits for `event` (null is a no-op), destroys it and reports its error.
    pub(super) fn await_event(
        &self,
        call: &'static str,
        event: *mut ffi::PJRT_Event,
    ) -> Result<()> {
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

    pub(super) fn destroy_event(&self, event: *mut ffi::PJRT_Event) {
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
}
