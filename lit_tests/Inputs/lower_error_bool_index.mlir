// Input of lower_aten_to_stablehlo_errors.mlir: indexing with a boolean mask (data-dependent shape).
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xi1>) -> tensor<2xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<4xf32>, %m: tensor<4xi1>):
  %0 = "aten.index.Tensor"(%a, %m) {operand_names = ["self", "indices[0]"]} : (tensor<4xf32>, tensor<4xi1>) -> tensor<2xf32> loc("mask_index")
  "func.return"(%0) : (tensor<2xf32>) -> ()
}) : () -> ()
