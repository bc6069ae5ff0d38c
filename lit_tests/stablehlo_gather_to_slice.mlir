// stablehlo-gather-to-slice (compiler/src/passes/gather_to_slice.rs): gathers at
// constant indices that step by one along batch dimensions become slice +
// broadcast_in_dim. Uses are redirected and the dead gathers left for stablehlo-dce,
// which runs here too.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-gather-to-slice,stablehlo-dce | FileCheck %s

// BART's learned positions: rows 2..9 of the table for each of the 2 sequences.
// CHECK-LABEL: sym_name = "position_embedding"
// CHECK: ^bb0([[T:%arg[0-9]+]]: tensor<34x16xf32>)
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.slice"([[T]]) {limit_indices = array<i64: 10, 16>, start_indices = array<i64: 2, 0>, strides = array<i64: 1, 1>} : (tensor<34x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: [[B:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[S]]) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<8x16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT: "func.return"([[B]])
"func.func"() <{function_type = (tensor<34x16xf32>) -> tensor<2x8x16xf32>, sym_name = "position_embedding"}> ({
^bb0(%t: tensor<34x16xf32>):
  %i = "stablehlo.constant"() {value = dense<[[[2], [3], [4], [5], [6], [7], [8], [9]], [[2], [3], [4], [5], [6], [7], [8], [9]]]> : tensor<2x8x1xi64>} : () -> tensor<2x8x1xi64>
  %g = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>} : (tensor<34x16xf32>, tensor<2x8x1xi64>) -> tensor<2x8x16xf32>
  "func.return"(%g) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// A [2, 8] mask read as mask[arange(2)[:, None, None, None], arange(8)]: the whole
// operand (no slice), placed on result dims 0 and 3.
// CHECK-LABEL: sym_name = "expanded_mask"
// CHECK: ^bb0([[M:%arg[0-9]+]]: tensor<2x8xi1>)
// CHECK-NEXT: [[B:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x8xi1>) -> tensor<2x1x1x8xi1>
// CHECK-NEXT: "func.return"([[B]])
"func.func"() <{function_type = (tensor<2x8xi1>) -> tensor<2x1x1x8xi1>, sym_name = "expanded_mask"}> ({
^bb0(%m: tensor<2x8xi1>):
  %i = "stablehlo.constant"() {value = dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6], [0, 7]]]], [[[[1, 0], [1, 1], [1, 2], [1, 3], [1, 4], [1, 5], [1, 6], [1, 7]]]]]> : tensor<2x1x1x8x2xi64>} : () -> tensor<2x1x1x8x2xi64>
  %g = "stablehlo.gather"(%m, %i) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 4>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (tensor<2x8xi1>, tensor<2x1x1x8x2xi64>) -> tensor<2x1x1x8xi1>
  "func.return"(%g) : (tensor<2x1x1x8xi1>) -> ()
}) : () -> ()

// Index components in the other order (x[arange(4)[None, :], arange(3)[:, None]] of a
// [4, 3] x gives a [3, 4] result): a transpose of the slice, nothing to broadcast; and a fixed row (x[1, :]
// with an implicit index vector dimension) as a slice and reshape.
// CHECK-LABEL: sym_name = "transposed_and_fixed"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x3xf32>)
// CHECK-NEXT: [[P:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 2, 3>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: [[RR:%[0-9]+]] = "stablehlo.reshape"([[R]]) : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: "func.return"([[P]], [[RR]])
"func.func"() <{function_type = (tensor<4x3xf32>) -> (tensor<3x4xf32>, tensor<3xf32>), sym_name = "transposed_and_fixed"}> ({
^bb0(%x: tensor<4x3xf32>):
  %i = "stablehlo.constant"() {value = dense<[[[0, 0], [1, 0], [2, 0], [3, 0]], [[0, 1], [1, 1], [2, 1], [3, 1]], [[0, 2], [1, 2], [2, 2], [3, 2]]]> : tensor<3x4x2xi32>} : () -> tensor<3x4x2xi32>
  %g = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (tensor<4x3xf32>, tensor<3x4x2xi32>) -> tensor<3x4xf32>
  %r = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %h = "stablehlo.gather"(%x, %r) {dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32>
  "func.return"(%g, %h) : (tensor<3x4xf32>, tensor<3xf32>) -> ()
}) : () -> ()

// Must not fire: a repeated index, reversed indices, a start past the end (gather
// would clamp it), a diagonal (both components walk one batch dimension), indices
// that are an argument.
// CHECK-LABEL: sym_name = "stays_a_gather"
// CHECK-NOT: stablehlo.slice
// CHECK-COUNT-5: "stablehlo.gather"
// CHECK-NOT: stablehlo.slice
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<8x4xf32>, tensor<3x1xi64>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x4xf32>), sym_name = "stays_a_gather"}> ({
^bb0(%t: tensor<8x4xf32>, %a: tensor<3x1xi64>):
  %rep = "stablehlo.constant"() {value = dense<[[1], [2], [2]]> : tensor<3x1xi64>} : () -> tensor<3x1xi64>
  %g0 = "stablehlo.gather"(%t, %rep) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<8x4xf32>, tensor<3x1xi64>) -> tensor<3x4xf32>
  %rev = "stablehlo.constant"() {value = dense<[[3], [2], [1]]> : tensor<3x1xi64>} : () -> tensor<3x1xi64>
  %g1 = "stablehlo.gather"(%t, %rev) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<8x4xf32>, tensor<3x1xi64>) -> tensor<3x4xf32>
  %far = "stablehlo.constant"() {value = dense<[[6], [7], [8]]> : tensor<3x1xi64>} : () -> tensor<3x1xi64>
  %g2 = "stablehlo.gather"(%t, %far) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<8x4xf32>, tensor<3x1xi64>) -> tensor<3x4xf32>
  %diag = "stablehlo.constant"() {value = dense<[[0, 0], [1, 1], [2, 2]]> : tensor<3x2xi64>} : () -> tensor<3x2xi64>
  %g3 = "stablehlo.gather"(%t, %diag) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (tensor<8x4xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  %g4 = "stablehlo.gather"(%t, %a) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<8x4xf32>, tensor<3x1xi64>) -> tensor<3x4xf32>
  "func.return"(%g0, %g1, %g2, %g3, %g4) : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x4xf32>) -> ()
}) : () -> ()
