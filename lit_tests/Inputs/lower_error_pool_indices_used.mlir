// Input of lower_aten_to_stablehlo_errors.mlir: max_pool2d_with_indices whose indices result is used.
"func.func"() <{function_type = (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>), sym_name = "main"}> ({
^bb0(%a: tensor<1x1x4x4xf32>):
  %0:2 = "aten.max_pool2d_with_indices.default"(%a) {kernel_size = array<i64: 2, 2>, operand_names = ["self"], stride = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) loc("pool_with_indices")
  "func.return"(%0#0, %0#1) : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> ()
}) : () -> ()
