// Input of verify_stablehlo.mlir: an op in the stablehlo namespace that does not exist.
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "unknown_op"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "stablehlo.foo"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("foo_node")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()
