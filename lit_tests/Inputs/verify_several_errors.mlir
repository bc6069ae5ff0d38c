// Input of verify_stablehlo.mlir: four bad ops (dot_general, transpose, slice,
// broadcast_in_dim) next to valid ones (convert, reduce); every problem is reported.
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4x4xf32>) -> (tensor<2x5xf32>, tensor<3x2xf32>, tensor<2x3xi32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>), sym_name = "several_errors"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %m: tensor<4x4xf32>):
  %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32> loc("dot")
  %1 = "stablehlo.transpose"(%a) {permutation = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("transpose")
  %2 = "stablehlo.convert"(%a) : (tensor<2x3xf32>) -> tensor<2x3xi32> loc("convert_ok")
  %3 = "stablehlo.slice"(%m) {limit_indices = array<i64: 5, 4>, start_indices = array<i64: 3, 0>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<2x4xf32> loc("slice")
  %4 = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("bcast")
  %c = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%m, %c) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32> loc("reduce_ok")
  "func.return"(%0, %1, %2, %3, %4, %5) : (tensor<2x5xf32>, tensor<3x2xf32>, tensor<2x3xi32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> ()
}) : () -> ()
