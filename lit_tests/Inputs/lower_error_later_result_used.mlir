// Input of lower_aten_to_stablehlo_errors.mlir: the lowering of
// _native_batch_norm_legit_no_training leaves out the (empty) saved statistics, but
// this graph reads one of them.
"func.func"() <{function_type = (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x4x4xf32>, tensor<0xf32>), sym_name = "main"}> ({
^bb0(%x: tensor<2x8x4x4xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>):
  %0:3 = "aten._native_batch_norm_legit_no_training.default"(%x, %m, %v) {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "running_mean", "running_var"]} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x4x4xf32>, tensor<0xf32>, tensor<0xf32>) loc("bn_saved_mean_used")
  "func.return"(%0#0, %0#1) : (tensor<2x8x4x4xf32>, tensor<0xf32>) -> ()
}) : () -> ()
