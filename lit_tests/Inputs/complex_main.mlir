// A complex @main for neuron-check (see complex.mlir).
"func.func"() <{function_type = (tensor<2x4x2xf32>) -> tensor<2x4xf32>, sym_name = "main"}> ({
^bb0(%x: tensor<2x4x2xf32>):
  %0 = "aten.view_as_complex.default"(%x) {operand_names = ["self"]} : (tensor<2x4x2xf32>) -> tensor<2x4xcomplex<f32>> loc("view_as_complex")
  %1 = "aten.abs.default"(%0) {operand_names = ["self"]} : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xf32> loc("abs")
  "func.return"(%1) : (tensor<2x4xf32>) -> ()
}) : () -> ()
