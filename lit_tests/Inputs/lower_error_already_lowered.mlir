// Input of lower_aten_to_stablehlo_errors.mlir: a module that already contains StableHLO.
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<4xf32>):
  %0 = "stablehlo.negate"(%a) : (tensor<4xf32>) -> tensor<4xf32> loc("negate")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
