// KNOWN DIVERGENCE (attention.rs): for f16/bf16 inputs the scores are rounded to f16
// after q @ k^T, and the scaling, mask, softmax (max, exp, sum, divide) run in f16.
// PyTorch's math backend upcasts f16/bf16 query/key/value to f32 for the whole
// computation and rounds once at the end (pytorch/pytorch#128922), and tpuc's own
// aten softmax of f16 computes in f32 (reduction.mlir). Expected: the softmax in f32
// and a single convert to f16 after the last contraction. Remove XFAIL once fixed.
//
// XFAIL: *
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// CHECK-LABEL: sym_name = "sdpa_f16"
// CHECK: "stablehlo.exponential"({{%[0-9]+}}) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: "stablehlo.divide"({{.*}}) -> tensor<1x2x4x4xf32>
// CHECK: "stablehlo.convert"({{%[0-9]+}}) : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf16>
// CHECK-NEXT: "func.return"
"func.func"() <{function_type = (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>, sym_name = "sdpa_f16"}> ({
^bb0(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf16>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {is_causal = true, operand_names = ["query", "key", "value"]} : (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16> loc("sdpa_f16")
  "func.return"(%0) : (tensor<1x2x4x8xf16>) -> ()
}) : () -> ()
