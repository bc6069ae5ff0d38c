//! The ExportedProgram JSON reader (`models/model.json`, or a bare model.json given to
//! `tpuc compile`), and for graphs it accepts, import to ATen-level MLIR and lowering
//! to StableHLO: what `tpuc compile model.json` runs before writing anything.
#![no_main]

#[path = "libfuzzer_main.rs"]
mod libfuzzer_main;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(graph) = tpuc_compiler::frontend::json::parse_exported_program(data, "fuzz.json") else {
        return;
    };
    let model = tpuc_compiler::frontend::ExportedModel {
        source: "fuzz.json".into(),
        graph,
        weights: tpuc_compiler::frontend::WeightSet::None,
        dynamic: None,
    };
    let ctx = tpuc_compiler::new_context();
    let printed = tpuc_compiler::lower_to_stablehlo(&ctx, &model)
        .and_then(|module| tpuc_compiler::print_module(&module));
    drop(printed);
});
