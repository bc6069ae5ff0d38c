//! `main` for fuzz targets that link tpuc-compiler: MLIR's static libraries include
//! mlir-opt's own `main` (libMLIRMlirOptMain.a), which the linker may pick instead of
//! libFuzzer's, so these targets define `main` themselves and hand over to libFuzzer.

use std::os::raw::{c_char, c_int};

extern "C" {
    fn LLVMFuzzerRunDriver(
        argc: *mut c_int,
        argv: *mut *mut *mut c_char,
        callback: extern "C" fn(*const u8, usize) -> c_int,
    ) -> c_int;
    fn LLVMFuzzerTestOneInput(data: *const u8, size: usize) -> c_int;
}

extern "C" fn one_input(data: *const u8, size: usize) -> c_int {
    // SAFETY: libFuzzer passes a valid buffer of `size` bytes.
    unsafe { LLVMFuzzerTestOneInput(data, size) }
}

#[no_mangle]
pub extern "C" fn main(mut argc: c_int, mut argv: *mut *mut c_char) -> c_int {
    // SAFETY: argc/argv are the process's own, as the C runtime passed them.
    unsafe { LLVMFuzzerRunDriver(&mut argc, &mut argv, one_input) }
}
