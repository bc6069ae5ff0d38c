//! The wheel's glibc floor. Debian's LLVM/MLIR libraries, linked in statically, were
//! built against glibc 2.36 and call `arc4random` (glibc 2.36; LLVM's
//! `sys::Process::GetRandomNumber`), the module's only symbol newer than glibc 2.34.
//! Defined here, the link resolves it to this definition instead of glibc's, so the
//! wheel installs where glibc is 2.35 (Ubuntu 22.04, which TPU VMs and Neuron images
//! run) instead of requiring 2.36. Exported from this module only: Python loads
//! extension modules with RTLD_LOCAL, so nothing else in the process resolves to it.

/// arc4random(3): 32 random bits from the kernel (getrandom(2), glibc 2.25), falling
/// back to std's per-process random keys if the kernel refuses.
#[no_mangle]
pub extern "C" fn arc4random() -> u32 {
    let mut bytes = [0u8; 4];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: writes at most `bytes.len() - filled` bytes from `bytes[filled]` on.
        let n = unsafe {
            libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0)
        };
        if n > 0 {
            filled += n as usize;
        } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(filled);
            return h.finish() as u32;
        }
    }
    u32::from_ne_bytes(bytes)
}
