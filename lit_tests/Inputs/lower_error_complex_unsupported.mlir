// A reduction meeting a complex value: refused at its node (see complex.mlir).
"func.func"() <{function_type = (tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>>, sym_name = "main"}> ({
^bb0(%z: tensor<2x3xcomplex<f32>>):
  %0 = "aten.sum.dim_IntList"(%z) {dim = array<i64: 1>, keepdim = false, operand_names = ["self"]} : (tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>> loc("sum_complex")
  "func.return"(%0) : (tensor<2xcomplex<f32>>) -> ()
}) : () -> ()
