// Errors of lower-aten-to-stablehlo (compiler/src/passes/lower_aten_to_stablehlo/mod.rs).
//
// Unknown targets are collected over the whole module (every function) and reported
// together, sorted by target, each with its count and the first node that uses it.
// Ops that only consume the result of an unknown op are not reported, and an invalid
// op elsewhere does not hide the unknown ones.
// RUN: not tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s
//
// A lowering that exists but rejects its arguments names the node and its target.
// RUN: not tpuc opt %S/Inputs/lower_error_slice_step.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=SLICE
// RUN: not tpuc opt %S/Inputs/lower_error_select_index.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=SELECT
// RUN: not tpuc opt %S/Inputs/lower_error_dropout_train.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=DROPOUT
// RUN: not tpuc opt %S/Inputs/lower_error_later_result_used.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=LATER
// RUN: not tpuc opt %S/Inputs/lower_error_layer_norm_shape.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=LAYERNORM
// RUN: not tpuc opt %S/Inputs/lower_error_pad_mode.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=PADMODE
// RUN: not tpuc opt %S/Inputs/lower_error_reflect_too_large.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=REFLECT
// RUN: not tpuc opt %S/Inputs/lower_error_bool_index.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=BOOLIDX
// RUN: not tpuc opt %S/Inputs/lower_error_matmul_dims.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=MATMUL
// RUN: not tpuc opt %S/Inputs/lower_error_operand_names.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=NAMES
// RUN: not tpuc opt %S/Inputs/lower_error_already_lowered.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=LOWERED

// CHECK: error: 3 unsupported op target(s) (5 node(s)); no lowering to StableHLO exists for:
// CHECK-NEXT: {{^}}  aten.kthvalue.default x3 (first at node `kth`)
// CHECK-NEXT: {{^}}  aten.mode.default x1 (first at node `mode`)
// CHECK-NEXT: {{^}}  aten.nonzero.default x1 (first at node `nonzero`)
// CHECK-NEXT: hint: `tpuc inspect MODEL` lists every op
// CHECK-NOT: add_after_kth
// CHECK-NOT: slice_zero_step

// SLICE: error: node `slice_zero_step` (aten.slice.Tensor): slice step must be positive
// SELECT: error: node `select_oob` (aten.select.int): index 3 out of range for dimension of size 3
// DROPOUT: error: node `dropout_train` (aten.dropout.default): dropout in training mode is random; export the model in eval mode (model.eval())
// LATER: error: node `rms_rstd_used` (aten._fused_rms_norm.default): only the first 1 result(s) of this op are supported, but a later one is used
// LAYERNORM: error: node `layer_norm_bad` (aten.layer_norm.default): normalized_shape [16] does not match the trailing dims of tensor<2x8x32xf32>
// PADMODE: error: node `bogus_pad` (aten.pad.default): unknown padding mode `bogus`
// REFLECT: error: node `reflect_too_large` (aten.reflection_pad1d.default): reflection padding 4/1 must be smaller than the dim size 4
// BOOLIDX: error: node `mask_index` (aten.index.Tensor): boolean mask indexing has a data-dependent shape
// MATMUL: error: node `mm_bad` (aten.mm.default): matmul: inner dimensions differ (tensor<2x3xf32> vs tensor<4x5xf32>)
// NAMES: error: node `relu_unnamed` (aten.relu.default): `operand_names` attribute missing or malformed
// LOWERED: error: node `negate` (stablehlo.negate): input already contains StableHLO; run lower-aten-to-stablehlo on ATen-level modules

"func.func"() <{function_type = (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x8xf32>), sym_name = "first"}> ({
^bb0(%a: tensor<2x8xf32>):
  %0:2 = "aten.kthvalue.default"(%a) {k = 3 : i64, operand_names = ["self"]} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) loc("kth")
  %1 = "aten.add.Tensor"(%0#0, %0#0) {operand_names = ["self", "other"]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add_after_kth")
  %2:2 = "aten.kthvalue.default"(%a) {k = 3 : i64, operand_names = ["self"]} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) loc("kth_1")
  %3:2 = "aten.mode.default"(%a) {operand_names = ["self"]} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi64>) loc("mode")
  %4 = "aten.slice.Tensor"(%a) {dim = 1 : i64, operand_names = ["self"], step = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("slice_zero_step")
  "func.return"(%1, %2#1, %3#0) : (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x8xf32>) -> ()
}) : () -> ()

"func.func"() <{function_type = (tensor<2x8xf32>, tensor<6xi1>) -> (tensor<2x3xf32>, tensor<3x1xi64>), sym_name = "second"}> ({
^bb0(%a: tensor<2x8xf32>, %m: tensor<6xi1>):
  %0:2 = "aten.kthvalue.default"(%a) {k = 3 : i64, operand_names = ["self"]} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) loc("kth_2")
  %1 = "aten.nonzero.default"(%m) {operand_names = ["self"]} : (tensor<6xi1>) -> tensor<3x1xi64> loc("nonzero")
  "func.return"(%0#0, %1) : (tensor<2x3xf32>, tensor<3x1xi64>) -> ()
}) : () -> ()
