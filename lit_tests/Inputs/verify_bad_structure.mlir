// Input of verify_stablehlo.mlir: structurally invalid MLIR (func.return with two
// operands in a function returning one value); rejected when the file is parsed.
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "bad_structure"}> ({
^bb0(%a: tensor<2x3xf32>):
  "func.return"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
}) : () -> ()
