// Guards verify-stablehlo's result-type checks of convolution, pad, gather, reduce_window and iota.
//
// RUN: tpuc opt %s --pass-pipeline=verify-stablehlo | FileCheck %s --check-prefix=VALID
// RUN: not tpuc opt %S/Inputs/verify_bad_inferred_types.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s

// Wrong shapes, each reported with the op's location and the inferred type:
// conv 8x8 with a 3x3 kernel, no padding -> 6x6; pad low 1 -> 9x9; gather of
// [1, 4] slices at 3 indices -> 3x4; max pool 2x2 stride 2 -> 4x4; iota dim 3 > rank 2.
// CHECK: error: the emitted StableHLO does not verify:
// CHECK-NEXT: loc("conv"): stablehlo.convolution: result type tensor<1x4x9x9xf32> should have shape [1, 4, 6, 6]
// CHECK-NEXT: loc("pad"): stablehlo.pad: result type tensor<1x3x10x10xf32> should be tensor<1x3x9x9xf32>
// CHECK-NEXT: loc("gather"): stablehlo.gather: result type tensor<3x5xf32> should be tensor<3x4xf32>
// CHECK-NEXT: loc("iota"): stablehlo.iota: iota_dimension 3 out of range for tensor<3x5xf32>
// CHECK-NEXT: loc("pool"): stablehlo.reduce_window: result type tensor<1x3x5x5xf32> should be tensor<1x3x4x4xf32>

// Correct types with non-trivial parameters pass and the module is printed back:
// conv stride 2, padding 1, dilation 2: (8 + 2 - 5) / 2 + 1 = 3; grouped conv (3
// groups, 6 outputs) -> 6x6; pad low [1, 2], high [2, -1], interior [1, 0]:
// 1 + 2 + 8 + 7 = 18 and 2 - 1 + 8 = 9; pool 3x3 stride 2 padding 1: (8 + 2 - 3) / 2 + 1 = 4.
// VALID-LABEL: sym_name = "valid_inferred"
// VALID: "stablehlo.convolution"{{.*}} -> tensor<1x4x3x3xf32>
// VALID: "stablehlo.convolution"{{.*}} -> tensor<1x6x6x6xf32>
// VALID: "stablehlo.pad"{{.*}} -> tensor<1x3x18x9xf32>
// VALID: "stablehlo.gather"{{.*}} -> tensor<3x4xf32>
// VALID: "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x5xi64>
// VALID: "stablehlo.reduce_window"
// VALID: -> tensor<1x3x4x4xf32>
// VALID: "func.return"
"func.func"() <{function_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<6x1x3x3xf32>, tensor<10x4xf32>, tensor<3x1xi64>) -> (tensor<1x4x3x3xf32>, tensor<1x6x6x6xf32>, tensor<1x3x18x9xf32>, tensor<3x4xf32>, tensor<3x5xi64>, tensor<1x3x4x4xf32>), sym_name = "valid_inferred"}> ({
^bb0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<6x1x3x3xf32>, %t: tensor<10x4xf32>, %i: tensor<3x1xi64>):
  %0 = "stablehlo.convolution"(%x, %w) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, rhs_dilation = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> loc("conv_strided")
  %1 = "stablehlo.convolution"(%x, %g) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 3 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32> loc("conv_grouped")
  %c = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %2 = "stablehlo.pad"(%x, %c) {edge_padding_high = array<i64: 0, 0, 2, -1>, edge_padding_low = array<i64: 0, 0, 1, 2>, interior_padding = array<i64: 0, 0, 1, 0>} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x18x9xf32> loc("pad")
  %3 = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<10x4xf32>, tensor<3x1xi64>) -> tensor<3x4xf32> loc("gather")
  %4 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x5xi64> loc("iota")
  %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %5 = "stablehlo.reduce_window"(%x, %ninf) ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %m = "stablehlo.maximum"(%l, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%m) : (tensor<f32>) -> ()
  }) {base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x4x4xf32> loc("pool")
  "func.return"(%0, %1, %2, %3, %4, %5) : (tensor<1x4x3x3xf32>, tensor<1x6x6x6xf32>, tensor<1x3x18x9xf32>, tensor<3x4xf32>, tensor<3x5xi64>, tensor<1x3x4x4xf32>) -> ()
}) : () -> ()
