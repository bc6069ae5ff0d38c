// stablehlo-fold-transpose (compiler/src/passes/fold_transpose.rs): a transpose
// feeding dot_general folds into its dimension numbers when the transpose keeps the
// operand's free dimensions in order (the result lists them in order); otherwise it
// stays. Run with stablehlo-dce, which removes the transposes left unused.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-fold-transpose,stablehlo-dce,verify-stablehlo | FileCheck %s

// nn.Linear: x [2,3] @ W.T with W [4,3]: contract W's dim 1 directly.
// CHECK-LABEL: sym_name = "linear"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>, [[W:%arg[0-9]+]]: tensor<4x3xf32>)
// CHECK-NEXT: "stablehlo.dot_general"([[X]], [[W]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}
// CHECK-NOT: transpose
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>, sym_name = "linear"}> ({
^bb0(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>):
  %t = "stablehlo.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %d = "stablehlo.dot_general"(%x, %t) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "func.return"(%d) : (tensor<2x4xf32>) -> ()
}) : () -> ()

// Attention scores q @ k^T with batch dims: k [B,H,S,D] transposed to [B,H,D,S];
// batching dims 0,1 stay, contracting dim 2 of the transpose is k's dim 3.
// CHECK-LABEL: sym_name = "scores"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x4x5x8xf32>, [[K:%arg[0-9]+]]: tensor<2x4x6x8xf32>)
// CHECK-NEXT: "stablehlo.dot_general"([[Q]], [[K]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}
"func.func"() <{function_type = (tensor<2x4x5x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x5x6xf32>, sym_name = "scores"}> ({
^bb0(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x6x8xf32>):
  %t = "stablehlo.transpose"(%k) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x6x8xf32>) -> tensor<2x4x8x6xf32>
  %d = "stablehlo.dot_general"(%q, %t) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<2x4x5x8xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x5x6xf32>
  "func.return"(%d) : (tensor<2x4x5x6xf32>) -> ()
}) : () -> ()

// Must not fire: the transpose swaps the lhs's two free dims (the result would list
// them in the other order), and a transpose with another user stays for it.
// CHECK-LABEL: sym_name = "reordered_free_dims"
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"
// CHECK-NEXT: "stablehlo.dot_general"([[T]], {{%arg[0-9]+}}) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>}
"func.func"() <{function_type = (tensor<3x2x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>, sym_name = "reordered_free_dims"}> ({
^bb0(%x: tensor<3x2x5xf32>, %y: tensor<5x4xf32>):
  %t = "stablehlo.transpose"(%x) {permutation = array<i64: 1, 0, 2>} : (tensor<3x2x5xf32>) -> tensor<2x3x5xf32>
  %d = "stablehlo.dot_general"(%t, %y) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>} : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  "func.return"(%d) : (tensor<2x3x4xf32>) -> ()
}) : () -> ()

// CHECK-LABEL: sym_name = "shared_transpose"
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"({{%arg[0-9]+}}, {{%arg[0-9]+}})
// CHECK-NEXT: "func.return"([[D]], [[T]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<4x3xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>), sym_name = "shared_transpose"}> ({
^bb0(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>):
  %t = "stablehlo.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %d = "stablehlo.dot_general"(%x, %t) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "func.return"(%d, %t) : (tensor<2x4xf32>, tensor<3x4xf32>) -> ()
}) : () -> ()
