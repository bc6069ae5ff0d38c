// stablehlo-fold-batch-reshape (compiler/src/passes/fold_batch_reshape.rs): Core ATen's
// matmul of [B, H, S, D] tensors (view to [B*H, S, D], a dot with one batch
// dimension, view back) becomes one dot_general with B and H as batch dimensions;
// the reshapes are left to stablehlo-dce. It must not fire when the reshapes do not
// merge the same leading dimensions, or when the merged result is read elsewhere.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-fold-batch-reshape,stablehlo-dce,verify-stablehlo | FileCheck %s

// q [2,4,5,8] @ k^T [2,4,8,6]: contracting dimensions shift by one; the precision is kept.
// CHECK-LABEL: sym_name = "scores"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x4x5x8xf32>, [[K:%arg[0-9]+]]: tensor<2x4x8x6xf32>)
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[Q]], [[K]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x4x5x8xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x5x6xf32>
// CHECK-NEXT: "func.return"([[D]])
// CHECK-NOT: reshape
"func.func"() <{function_type = (tensor<2x4x5x8xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x5x6xf32>, sym_name = "scores"}> ({
^bb0(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x8x6xf32>):
  %a = "stablehlo.reshape"(%q) : (tensor<2x4x5x8xf32>) -> tensor<8x5x8xf32>
  %b = "stablehlo.reshape"(%k) : (tensor<2x4x8x6xf32>) -> tensor<8x8x6xf32>
  %d = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<8x5x8xf32>, tensor<8x8x6xf32>) -> tensor<8x5x6xf32>
  %r = "stablehlo.reshape"(%d) : (tensor<8x5x6xf32>) -> tensor<2x4x5x6xf32>
  "func.return"(%r) : (tensor<2x4x5x6xf32>) -> ()
}) : () -> ()

// The operands merge [2,4] and [4,2]: different batches, nothing changes.
// CHECK-LABEL: sym_name = "different_batches"
// CHECK: lhs_batching_dimensions = [0], rhs_batching_dimensions = [0]
// CHECK: "stablehlo.reshape"
"func.func"() <{function_type = (tensor<2x4x5x8xf32>, tensor<4x2x8x6xf32>) -> tensor<2x4x5x6xf32>, sym_name = "different_batches"}> ({
^bb0(%q: tensor<2x4x5x8xf32>, %k: tensor<4x2x8x6xf32>):
  %a = "stablehlo.reshape"(%q) : (tensor<2x4x5x8xf32>) -> tensor<8x5x8xf32>
  %b = "stablehlo.reshape"(%k) : (tensor<4x2x8x6xf32>) -> tensor<8x8x6xf32>
  %d = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<8x5x8xf32>, tensor<8x8x6xf32>) -> tensor<8x5x6xf32>
  %r = "stablehlo.reshape"(%d) : (tensor<8x5x6xf32>) -> tensor<2x4x5x6xf32>
  "func.return"(%r) : (tensor<2x4x5x6xf32>) -> ()
}) : () -> ()

// The merged product is also returned: it stays as it is.
// CHECK-LABEL: sym_name = "merged_result_read"
// CHECK: lhs_batching_dimensions = [0], rhs_batching_dimensions = [0]
// CHECK-NOT: lhs_batching_dimensions = [0, 1]
"func.func"() <{function_type = (tensor<2x4x5x8xf32>, tensor<2x4x8x6xf32>) -> (tensor<2x4x5x6xf32>, tensor<8x5x6xf32>), sym_name = "merged_result_read"}> ({
^bb0(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x8x6xf32>):
  %a = "stablehlo.reshape"(%q) : (tensor<2x4x5x8xf32>) -> tensor<8x5x8xf32>
  %b = "stablehlo.reshape"(%k) : (tensor<2x4x8x6xf32>) -> tensor<8x8x6xf32>
  %d = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<8x5x8xf32>, tensor<8x8x6xf32>) -> tensor<8x5x6xf32>
  %r = "stablehlo.reshape"(%d) : (tensor<8x5x6xf32>) -> tensor<2x4x5x6xf32>
  "func.return"(%r, %d) : (tensor<2x4x5x6xf32>, tensor<8x5x6xf32>) -> ()
}) : () -> ()
