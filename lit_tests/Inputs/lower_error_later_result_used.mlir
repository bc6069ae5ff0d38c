// Input of lower_aten_to_stablehlo_errors.mlir: the lowering of _fused_rms_norm
// (normalization.rs, rms_norm) returns only the normalized output, not the rstd that
// the op also returns, but this graph reads the rstd.
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>), sym_name = "main"}> ({
^bb0(%x: tensor<2x3xf32>, %w: tensor<3xf32>):
  %0:2 = "aten._fused_rms_norm.default"(%x, %w) {eps = 1.000000e-06 : f64, normalized_shape = array<i64: 3>, operand_names = ["input", "weight"]} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>) loc("rms_rstd_used")
  "func.return"(%0#0, %0#1) : (tensor<2x3xf32>, tensor<2x1xf32>) -> ()
}) : () -> ()
