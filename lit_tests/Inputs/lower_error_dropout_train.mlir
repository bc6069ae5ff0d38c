// Input of lower_aten_to_stablehlo_errors.mlir: dropout in training mode (random, refused).
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<4xf32>):
  %0 = "aten.dropout.default"(%a) {operand_names = ["input"], p = 5.000000e-01 : f64, train = true} : (tensor<4xf32>) -> tensor<4xf32> loc("dropout_train")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
