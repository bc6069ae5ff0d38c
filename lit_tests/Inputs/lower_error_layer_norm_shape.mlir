// Input of lower_aten_to_stablehlo_errors.mlir: layer_norm whose normalized_shape is not the trailing dims.
"func.func"() <{function_type = (tensor<2x8x32xf32>) -> tensor<2x8x32xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<2x8x32xf32>):
  %0 = "aten.layer_norm.default"(%a) {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 16>, operand_names = ["input"]} : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32> loc("layer_norm_bad")
  "func.return"(%0) : (tensor<2x8x32xf32>) -> ()
}) : () -> ()
