// Input of normalization_rms_norm_errors.mlir: normalized_shape longer than the input's
// rank.
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<2x3xf32>, %w: tensor<3xf32>):
  %0 = "aten.rms_norm.default"(%a, %w) {normalized_shape = array<i64: 1, 2, 3>, operand_names = ["input", "weight"]} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("rms_norm_rank")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()
