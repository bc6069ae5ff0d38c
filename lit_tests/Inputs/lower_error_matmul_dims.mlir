// Input of lower_aten_to_stablehlo_errors.mlir: a matmul whose inner dims differ.
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>):
  %0 = "aten.mm.default"(%a, %b) {operand_names = ["self", "mat2"]} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32> loc("mm_bad")
  "func.return"(%0) : (tensor<2x5xf32>) -> ()
}) : () -> ()
