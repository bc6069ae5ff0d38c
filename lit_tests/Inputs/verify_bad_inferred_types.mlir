// Input of verify_stablehlo_inferred_types.mlir: convolution, pad, gather and
// reduce_window with wrong result shapes, and an iota whose dimension is out of range.
"func.func"() <{function_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<10x4xf32>, tensor<3x1xi64>) -> (tensor<1x4x9x9xf32>, tensor<1x3x10x10xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<1x3x5x5xf32>), sym_name = "main"}> ({
^bb0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %t: tensor<10x4xf32>, %i: tensor<3x1xi64>):
  %0 = "stablehlo.convolution"(%x, %w) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x9x9xf32> loc("conv")
  %c = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %1 = "stablehlo.pad"(%x, %c) {edge_padding_high = array<i64: 0, 0, 0, 0>, edge_padding_low = array<i64: 0, 0, 1, 1>, interior_padding = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x10x10xf32> loc("pad")
  %2 = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>} : (tensor<10x4xf32>, tensor<3x1xi64>) -> tensor<3x5xf32> loc("gather")
  %3 = "stablehlo.iota"() {iota_dimension = 3 : i64} : () -> tensor<3x5xf32> loc("iota")
  %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %4 = "stablehlo.reduce_window"(%x, %ninf) ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %m = "stablehlo.maximum"(%l, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%m) : (tensor<f32>) -> ()
  }) {base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x5x5xf32> loc("pool")
  "func.return"(%0, %1, %2, %3, %4) : (tensor<1x4x9x9xf32>, tensor<1x3x10x10xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<1x3x5x5xf32>) -> ()
}) : () -> ()
