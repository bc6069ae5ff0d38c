// Guards the normalized_shape check of aten.rms_norm (normalization.rs): node-named errors, no panic.
//
// RUN: not tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=MISMATCH
// RUN: not tpuc opt %S/Inputs/rms_norm_too_many_dims.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=RANK

// Like layer_norm (lower_aten_to_stablehlo_errors.mlir, LAYERNORM): a normalized_shape
// that is not the trailing dims (here [2] for a trailing dim of 3) would divide the
// mean square by the wrong count, and one longer than the rank
// (Inputs/rms_norm_too_many_dims.mlir) would underflow and panic.
// MISMATCH: error: node `rms_norm_mismatch` (aten.rms_norm.default): normalized_shape [2] does not match the trailing dims of tensor<2x3xf32>
// RANK-NOT: panicked
// RANK: error: node `rms_norm_rank` (aten.rms_norm.default): normalized_shape [1, 2, 3] does not match the trailing dims of tensor<2x3xf32>
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<2x3xf32>, %w: tensor<3xf32>):
  %0 = "aten.rms_norm.default"(%a, %w) {normalized_shape = array<i64: 2>, operand_names = ["input", "weight"]} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("rms_norm_mismatch")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()
