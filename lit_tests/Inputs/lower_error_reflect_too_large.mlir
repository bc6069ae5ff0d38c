// Input of lower_aten_to_stablehlo_errors.mlir: reflection padding must be smaller
// than the padded dim (PyTorch's rule); 4 on a dim of size 4 is not.
"func.func"() <{function_type = (tensor<1x2x4xf32>) -> tensor<1x2x9xf32>, sym_name = "main"}> ({
^bb0(%x: tensor<1x2x4xf32>):
  %0 = "aten.reflection_pad1d.default"(%x) {operand_names = ["self"], padding = array<i64: 4, 1>} : (tensor<1x2x4xf32>) -> tensor<1x2x9xf32> loc("reflect_too_large")
  "func.return"(%0) : (tensor<1x2x9xf32>) -> ()
}) : () -> ()
