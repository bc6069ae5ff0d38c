// Guards gelu at +inf (elementwise.rs): +inf gives +inf in the tanh form and in the
// exact form on f64/f16; only the exact form on f32/bf16 gives NaN (PyTorch's CPU kernel).
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// CHECK-LABEL: sym_name = "gelu_tanh_f32"
// CHECK: "stablehlo.tanh"
// CHECK-NOT: 0x7F800000
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "gelu_tanh_f32"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.gelu.default"(%a) {approximate = "tanh", operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu_tanh")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// CHECK-LABEL: sym_name = "gelu_erf_f64"
// CHECK-NOT: 0x7FF0000000000000
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x3xf64>) -> tensor<2x3xf64>, sym_name = "gelu_erf_f64"}> ({
^bb0(%a: tensor<2x3xf64>):
  %0 = "aten.gelu.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf64>) -> tensor<2x3xf64> loc("gelu_f64")
  "func.return"(%0) : (tensor<2x3xf64>) -> ()
}) : () -> ()

// CHECK-LABEL: sym_name = "gelu_erf_f16"
// CHECK-NOT: 0x7F800000
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x3xf16>) -> tensor<2x3xf16>, sym_name = "gelu_erf_f16"}> ({
^bb0(%a: tensor<2x3xf16>):
  %0 = "aten.gelu.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf16>) -> tensor<2x3xf16> loc("gelu_f16")
  "func.return"(%0) : (tensor<2x3xf16>) -> ()
}) : () -> ()
