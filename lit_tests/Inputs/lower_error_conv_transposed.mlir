// Input of lower_aten_to_stablehlo_errors.mlir: a transposed convolution (not supported yet).
"func.func"() <{function_type = (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>, sym_name = "main"}> ({
^bb0(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>):
  %0 = "aten.convolution.default"(%x, %w) {dilation = array<i64: 1, 1>, groups = 1 : i64, operand_names = ["input", "weight"], output_padding = array<i64: 0, 0>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, transposed = true} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32> loc("conv_transpose")
  "func.return"(%0) : (tensor<1x2x7x7xf32>) -> ()
}) : () -> ()
