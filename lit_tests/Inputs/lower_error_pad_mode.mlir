// Input of lower_aten_to_stablehlo_errors.mlir: aten.pad with a mode that is none of
// constant/reflect/replicate/circular.
"func.func"() <{function_type = (tensor<1x4x5xf32>) -> tensor<1x4x7xf32>, sym_name = "main"}> ({
^bb0(%x: tensor<1x4x5xf32>):
  %0 = "aten.pad.default"(%x) {mode = "bogus", operand_names = ["self"], pad = array<i64: 1, 1>} : (tensor<1x4x5xf32>) -> tensor<1x4x7xf32> loc("bogus_pad")
  "func.return"(%0) : (tensor<1x4x7xf32>) -> ()
}) : () -> ()
