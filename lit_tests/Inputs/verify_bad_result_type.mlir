// Input of verify_stablehlo.mlir: stablehlo.add whose result type differs from its
// operands' type.
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x4xf32>, sym_name = "bad_result_type"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "stablehlo.add"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x4xf32> loc("bad_add")
  "func.return"(%0) : (tensor<2x4xf32>) -> ()
}) : () -> ()
