//! The artifact reader of the runtime: the first byte picks the file kind, the rest is
//! its contents: 0 manifest.json, 1 weights.safetensors (every tensor read back),
//! 2 a .npy input or reference file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    match kind % 3 {
        0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = tpuc_runtime::session::parse_manifest(text, Path::new("fuzz.tpuc"));
            }
        }
        1 => {
            if let Ok(st) =
                tpuc_runtime::safetensors::SafeTensors::from_bytes(rest.to_vec(), "fuzz")
            {
                let names: Vec<String> = st.names().map(str::to_string).collect();
                for n in names {
                    let _ = st.tensor(&n);
                }
            }
        }
        _ => {
            let _ = tpuc_runtime::npy::decode_npy(rest, "fuzz.npy");
        }
    }
});
