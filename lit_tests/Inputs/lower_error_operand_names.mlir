// Input of lower_aten_to_stablehlo_errors.mlir: an ATen op without its operand_names attribute.
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<4xf32>):
  %0 = "aten.relu.default"(%a) : (tensor<4xf32>) -> tensor<4xf32> loc("relu_unnamed")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
