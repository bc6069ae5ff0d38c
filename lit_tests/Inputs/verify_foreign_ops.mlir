// Input of verify_stablehlo.mlir: an op name without its dialect (what a custom lowering
// passing "sqrt" instead of "stablehlo.sqrt" emits) and an ATen op left unlowered.
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "foreign_ops"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "sqrt"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sqrt_node")
  %1 = "aten.relu.default"(%0) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu_node")
  "func.return"(%1) : (tensor<2x3xf32>) -> ()
}) : () -> ()
