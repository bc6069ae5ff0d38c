// stablehlo-outline-composites on what the lowerings emit: ATen ops lowered and
// cleaned up as at -O2, then outlined (stablehlo_outline_composites.mlir has the
// hand-written forms and the cases that must not fire).
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,stablehlo-simplify,stablehlo-fold-transpose,stablehlo-dce,stablehlo-cse,stablehlo-outline-composites,stablehlo-dce,verify-stablehlo | FileCheck %s

// aten._softmax over the middle axis of a rank-3 tensor.
// CHECK-LABEL: sym_name = "softmax_middle_axis"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {dim = 1 : i64, half_to_float = false}, decomposition = @aten._softmax.default.impl_0, name = "aten._softmax.default", version = 0 : i32} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>, sym_name = "softmax_middle_axis"}> ({
^bb0(%a: tensor<2x3x4xf32>):
  %0 = "aten._softmax.default"(%a) {dim = 1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("softmax")
  "func.return"(%0) : (tensor<2x3x4xf32>) -> ()
}) : () -> ()

// aten.layer_norm with weight and bias (two centring passes); eps is the f32 constant
// the lowering wrote.
// CHECK-LABEL: sym_name = "layer_norm_affine"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x32xf32>, [[W:%arg[0-9]+]]: tensor<32xf32>, [[B:%arg[0-9]+]]: tensor<32xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]], [[W]], [[B]]) {composite_attributes = {eps = 9.99999996E-13 : f32, has_bias = true, has_weight = true, normalized_shape = array<i64: 32>}, decomposition = @aten.layer_norm.default.impl_0, name = "aten.layer_norm.default", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>, sym_name = "layer_norm_affine"}> ({
^bb0(%x: tensor<2x8x32xf32>, %w: tensor<32xf32>, %b: tensor<32xf32>):
  %0 = "aten.layer_norm.default"(%x, %w, %b) {cudnn_enable = true, eps = 9.9999999999999998E-13 : f64, normalized_shape = array<i64: 32>, operand_names = ["input", "weight", "bias"]} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32> loc("layer_norm")
  "func.return"(%0) : (tensor<2x8x32xf32>) -> ()
}) : () -> ()

// Two normalized dims, no weight or bias.
// CHECK-LABEL: sym_name = "layer_norm_two_dims_no_affine"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x5xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {eps = 9.99999974E-6 : f32, has_bias = false, has_weight = false, normalized_shape = array<i64: 4, 5>}, decomposition = @aten.layer_norm.default.impl_1
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x4x5xf32>) -> tensor<2x4x5xf32>, sym_name = "layer_norm_two_dims_no_affine"}> ({
^bb0(%x: tensor<2x4x5xf32>):
  %0 = "aten.layer_norm.default"(%x) {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 4, 5>, operand_names = ["input"]} : (tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("layer_norm")
  "func.return"(%0) : (tensor<2x4x5xf32>) -> ()
}) : () -> ()

// aten.rms_norm with a weight.
// CHECK-LABEL: sym_name = "rms_norm_op"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x16xf32>, [[W:%arg[0-9]+]]: tensor<16xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]], [[W]]) {composite_attributes = {epsilon = 9.99999997E-7 : f32}, decomposition = @odml.rms_norm.impl_0, name = "odml.rms_norm", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>, sym_name = "rms_norm_op"}> ({
^bb0(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>):
  %0 = "aten.rms_norm.default"(%x, %w) {eps = 9.9999999999999995E-7 : f64, normalized_shape = array<i64: 16>, operand_names = ["input", "weight"]} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32> loc("rms_norm")
  "func.return"(%0) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// Llama's RMSNorm written out: pow 2, mean keepdim, + eps, rsqrt, x * r, weight * (...).
// CHECK-LABEL: sym_name = "rms_norm_llama"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x16xf32>, [[W:%arg[0-9]+]]: tensor<16xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]], [[W]]) {composite_attributes = {epsilon = 9.99999997E-7 : f32}, decomposition = @odml.rms_norm.impl_1, name = "odml.rms_norm", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>, sym_name = "rms_norm_llama"}> ({
^bb0(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>):
  %0 = "aten.pow.Tensor_Scalar"(%x) {exponent = 2 : i64, operand_names = ["self"]} : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32> loc("pow")
  %1 = "aten.mean.dim"(%0) {dim = array<i64: -1>, keepdim = true, operand_names = ["self"]} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32> loc("mean")
  %2 = "aten.add.Scalar"(%1) {operand_names = ["self"], other = 9.9999999999999995E-7 : f64} : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32> loc("add")
  %3 = "aten.rsqrt.default"(%2) {operand_names = ["self"]} : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32> loc("rsqrt")
  %4 = "aten.mul.Tensor"(%x, %3) {operand_names = ["self", "other"]} : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32> loc("mul")
  %5 = "aten.mul.Tensor"(%w, %4) {operand_names = ["self", "other"]} : (tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32> loc("mul_1")
  "func.return"(%5) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// aten.gelu(approximate="tanh").
// CHECK-LABEL: sym_name = "gelu_tanh"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {approximate = "tanh"}, decomposition = @aten.gelu.default.impl_0, name = "aten.gelu.default", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "gelu_tanh"}> ({
^bb0(%a: tensor<2x8xf32>):
  %0 = "aten.gelu.default"(%a) {approximate = "tanh", operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("gelu")
  "func.return"(%0) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// The exact (erf) GELU is not matched (its erf is a rational approximation).
// CHECK-LABEL: sym_name = "gelu_erf"
// CHECK-NOT: composite
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "gelu_erf"}> ({
^bb0(%a: tensor<2x8xf32>):
  %0 = "aten.gelu.default"(%a) {operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("gelu")
  "func.return"(%0) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// aten.silu.
// CHECK-LABEL: sym_name = "silu"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {}, decomposition = @aten.silu.default.impl_0, name = "aten.silu.default", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "silu"}> ({
^bb0(%a: tensor<2x8xf32>):
  %0 = "aten.silu.default"(%a) {operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("silu")
  "func.return"(%0) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// f16 softmax is computed in f32: the composite is the f32 softmax, the converts stay
// outside it (a composite never changes dtypes).
// CHECK-LABEL: sym_name = "softmax_f16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf16>)
// CHECK-NEXT: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<2x8xf16>) -> tensor<2x8xf32>
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.composite"([[XF]]) {composite_attributes = {dim = 1 : i64, half_to_float = false}, decomposition = @aten._softmax.default.impl_1, name = "aten._softmax.default", version = 0 : i32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.convert"([[S]]) : (tensor<2x8xf32>) -> tensor<2x8xf16>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8xf16>) -> tensor<2x8xf16>, sym_name = "softmax_f16"}> ({
^bb0(%a: tensor<2x8xf16>):
  %0 = "aten._softmax.default"(%a) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<2x8xf16>) -> tensor<2x8xf16> loc("softmax")
  "func.return"(%0) : (tensor<2x8xf16>) -> ()
}) : () -> ()

// The layer norm's decomposition: the lowering's two centring passes, then weight and bias.
// CHECK-LABEL: sym_name = "aten.layer_norm.default.impl_0", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x32xf32>, [[W:%arg[0-9]+]]: tensor<32xf32>, [[B:%arg[0-9]+]]: tensor<32xf32>):
// CHECK: [[D0:%[0-9]+]] = "stablehlo.subtract"([[X]], {{%[0-9]+}})
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[D0]], {{%[0-9]+}})
// CHECK: "stablehlo.multiply"([[D]], [[D]])
// CHECK: "stablehlo.rsqrt"
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 2>}
// CHECK-NEXT: [[Y:%[0-9]+]] = "stablehlo.multiply"({{%[0-9]+}}, [[WB]])
// CHECK-NEXT: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 2>}
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.add"([[Y]], [[BB]])
// CHECK-NEXT: "func.return"([[R]])
