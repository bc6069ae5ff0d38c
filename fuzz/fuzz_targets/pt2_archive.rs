//! The `.pt2` archive reader: zip directory, entry layout, weight configs, strided
//! weight views and their CRC-32, then the ExportedProgram inside. Any input may be
//! refused with an error; none may panic, hang or read out of bounds.
#![no_main]

#[path = "libfuzzer_main.rs"]
mod libfuzzer_main;

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(model) = tpuc_compiler::frontend::load_pt2_bytes(Path::new("fuzz.pt2"), data.to_vec())
    else {
        return;
    };
    // Stream every weight, as the artifact writer does.
    for spec in &model.graph.inputs {
        let mut bytes = 0usize;
        let _ = model.stream_weight(&spec.name, &mut |chunk| {
            bytes += chunk.len();
            Ok(())
        });
    }
});
