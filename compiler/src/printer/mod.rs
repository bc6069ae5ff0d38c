//! Printing modules: the generic MLIR form PJRT plugins parse without our dialects.
//!
//! [`print_program`] writes a compile's program with [`generic`], tpuc's own printer of
//! exactly MLIR's generic form (MLIR's printer was the largest stage on big graphs),
//! falling back to MLIR's for anything outside the IR the pipeline builds;
//! [`print_module`] and [`print_module_with_locations`] are MLIR's own;
//! [`program_with_node_locations`] locates each op at its graph node for a target
//! compiler's diagnostics.

pub mod generic;

use melior::ir::Module;

use crate::error::CompileError;
use crate::frontend;

/// Prints a module in generic form (what PJRT plugins parse without our dialects).
pub fn print_module(module: &Module<'_>) -> Result<String, CompileError> {
    print_generic(module, false)
}

/// The program text of a compile: [`print_module`]'s text, written by [`generic`]
/// when the module is within what it handles (everything the pipeline builds).
pub fn print_program(module: &Module<'_>) -> Result<String, CompileError> {
    match generic::print(module) {
        Some(text) => Ok(text),
        None => print_module(module),
    }
}

/// Prints with locations (node names), for `--emit mlir --debug-locations` and lit tests.
pub fn print_module_with_locations(module: &Module<'_>) -> Result<String, CompileError> {
    print_generic(module, true)
}

/// The program with each op located at its graph node, for a target compiler's
/// diagnostics: `loc("addmm"("model.py":12:0))` where the export kept the node's source
/// line, else `loc("addmm"("<model file>":N:0))` with `N` the node's position in the
/// graph (1-based; 0 for inputs). libtpu reports a rejected op by such a location
/// ("Suspected Python Code Location: model.pt2:5 [addmm]"). Rewrites `module`'s
/// locations: print the artifact's program first.
pub fn program_with_node_locations(
    module: &Module<'_>,
    model: &frontend::ExportedModel,
) -> Result<String, CompileError> {
    let file = model
        .source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let positions: std::collections::HashMap<&str, u32> = model
        .graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32 + 1))
        .collect();
    let mut state = (file, positions);
    unsafe extern "C" fn relocate(
        op: mlir_sys::MlirOperation,
        data: *mut std::ffi::c_void,
    ) -> mlir_sys::MlirWalkResult {
        // SAFETY: `data` is the `state` tuple lent for the walk; `op` is live, and its
        // location's parts are read only after the kind tests.
        unsafe {
            let (file, positions) =
                &*(data as *const (String, std::collections::HashMap<&str, u32>));
            let loc = mlir_sys::mlirOperationGetLocation(op);
            if mlir_sys::mlirLocationIsAName(loc) {
                let ctx = mlir_sys::mlirLocationGetContext(loc);
                let child = mlir_sys::mlirLocationNameGetChildLoc(loc);
                if mlir_sys::mlirLocationEqual(child, mlir_sys::mlirLocationUnknownGet(ctx)) {
                    let name = mlir_sys::mlirIdentifierStr(mlir_sys::mlirLocationNameGetName(loc));
                    let text = std::str::from_utf8(std::slice::from_raw_parts(
                        name.data as *const u8,
                        name.length,
                    ))
                    .unwrap_or("");
                    let line = positions.get(text).copied().unwrap_or(0);
                    let file_ref = mlir_sys::MlirStringRef {
                        data: file.as_ptr() as *const std::os::raw::c_char,
                        length: file.len(),
                    };
                    let child = mlir_sys::mlirLocationFileLineColGet(ctx, file_ref, line, 0);
                    let new = mlir_sys::mlirLocationNameGet(ctx, name, child);
                    mlir_sys::mlirOperationSetLocation(op, new);
                }
            }
        }
        mlir_sys::MlirWalkResult_MlirWalkResultAdvance
    }
    // SAFETY: the walk visits the module's own ops; the callback only replaces each
    // op's location, and `state` outlives the walk.
    unsafe {
        mlir_sys::mlirOperationWalk(
            module.as_operation().to_raw(),
            Some(relocate),
            &mut state as *mut _ as *mut std::ffi::c_void,
            mlir_sys::MlirWalkOrder_MlirWalkPreOrder,
        );
    }
    print_module_with_locations(module)
}

/// Appends each piece MLIR prints to the `Vec<u8>` behind `data`.
unsafe extern "C" fn append_bytes(piece: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the `Vec<u8>` `print_generic` lends for the call; the piece is
    // valid for `length` bytes during the callback.
    unsafe {
        let out = &mut *(data as *mut Vec<u8>);
        out.extend_from_slice(std::slice::from_raw_parts(
            piece.data as *const u8,
            piece.length,
        ));
    }
}

/// The generic form of `module`, printed through the C API into one buffer. The
/// printer is told the module is verified: that only decides whether MLIR falls back
/// from custom to generic form, and the generic form is asked for anyway (the
/// `verify-stablehlo` pass is where modules are verified).
fn print_generic(module: &Module<'_>, debug_info: bool) -> Result<String, CompileError> {
    let mut out: Vec<u8> = Vec::new();
    // SAFETY: the flags are created and destroyed here; the callback only appends to
    // `out`, which outlives the call.
    unsafe {
        let flags = mlir_sys::mlirOpPrintingFlagsCreate();
        mlir_sys::mlirOpPrintingFlagsPrintGenericOpForm(flags);
        mlir_sys::mlirOpPrintingFlagsAssumeVerified(flags);
        if debug_info {
            mlir_sys::mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
        }
        mlir_sys::mlirOperationPrintWithFlags(
            module.as_operation().to_raw(),
            flags,
            Some(append_bytes),
            &mut out as *mut Vec<u8> as *mut std::ffi::c_void,
        );
        mlir_sys::mlirOpPrintingFlagsDestroy(flags);
    }
    String::from_utf8(out).map_err(|e| CompileError::Internal(format!("printing the module: {e}")))
}
