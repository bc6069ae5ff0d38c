// Input of lower_aten_to_stablehlo_errors.mlir: a slice with step 0.
"func.func"() <{function_type = (tensor<4x10xf32>) -> tensor<4x10xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<4x10xf32>):
  %0 = "aten.slice.Tensor"(%a) {dim = 1 : i64, operand_names = ["self"], start = 0 : i64, step = 0 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32> loc("slice_zero_step")
  "func.return"(%0) : (tensor<4x10xf32>) -> ()
}) : () -> ()
