// Input of lower_aten_to_stablehlo_errors.mlir: select.int with an index past the end of the dim.
"func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<3x4xf32>):
  %0 = "aten.select.int"(%a) {dim = 0 : i64, index = 3 : i64, operand_names = ["self"]} : (tensor<3x4xf32>) -> tensor<4xf32> loc("select_oob")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
