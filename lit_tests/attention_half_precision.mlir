// Guards f16/bf16 scaled_dot_product_attention (attention.rs): computed in f32, rounded once at the end.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s --check-prefix=ONCE

// PyTorch's math backend upcasts f16/bf16 query, key and value to f32 for the whole
// computation (pytorch/pytorch#128922); tpuc's aten softmax of f16 does too.
// Second run: after the input converts, nothing is in a half type until the single
// convert of the result (a bf16 mask is converted to f32 before it is added).
// ONCE-LABEL: sym_name = "sdpa_f16"
// ONCE-COUNT-3: "stablehlo.convert"(%arg{{[0-9]+}}) : (tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf32>
// ONCE-NOT: f16
// ONCE: "stablehlo.convert"({{%[0-9]+}}) : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf16>
// ONCE-NEXT: "func.return"
// ONCE-LABEL: sym_name = "sdpa_bf16"
// ONCE-COUNT-3: "stablehlo.convert"(%arg{{[0-9]+}}) : (tensor<2x{{[35]}}x8xbf16>) -> tensor<2x{{[35]}}x8xf32>
// ONCE: "stablehlo.convert"({{%[0-9]+}}) : (tensor<2x3x5xbf16>) -> tensor<2x3x5xf32>
// ONCE-NOT: bf16
// ONCE: "stablehlo.convert"({{%[0-9]+}}) : (tensor<2x3x8xf32>) -> tensor<2x3x8xbf16>
// ONCE-NEXT: "func.return"

// f16, causal, D = 8: q and k are scaled by 8^(-1/4) = 0.59460356 in f32; the
// scores, causal mask, softmax and the final contraction with v are all f32.
// CHECK-LABEL: sym_name = "sdpa_f16"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x2x4x8xf16>, [[K:%arg[0-9]+]]: tensor<1x2x4x8xf16>, [[V:%arg[0-9]+]]: tensor<1x2x4x8xf16>)
// CHECK-NEXT: [[QF:%[0-9]+]] = "stablehlo.convert"([[Q]]) : (tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: [[KF:%[0-9]+]] = "stablehlo.convert"([[K]]) : (tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: [[VF:%[0-9]+]] = "stablehlo.convert"([[V]]) : (tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0.594603539> : tensor<f32>}
// CHECK: [[QS:%[0-9]+]] = "stablehlo.multiply"([[QF]], {{%[0-9]+}}) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK: "stablehlo.constant"() {value = dense<0.594603539> : tensor<f32>}
// CHECK: [[KS:%[0-9]+]] = "stablehlo.multiply"([[KF]], {{%[0-9]+}}) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK: [[KT:%[0-9]+]] = "stablehlo.transpose"([[KS]])
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"([[QS]], [[KT]])
// CHECK-SAME: (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: [[MASKED:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, [[S]], {{%[0-9]+}}) : (tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: "stablehlo.reduce"([[MASKED]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.maximum"({{.*}}) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: "stablehlo.exponential"({{%[0-9]+}}) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"({{.*}}) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: [[PS:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, [[P]])
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[VF]])
// CHECK-SAME: (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.convert"([[O]]) : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf16>
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>, sym_name = "sdpa_f16"}> ({
^bb0(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf16>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {is_causal = true, operand_names = ["query", "key", "value"]} : (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16> loc("sdpa_f16")
  "func.return"(%0) : (tensor<1x2x4x8xf16>) -> ()
}) : () -> ()

// bf16, rank 3, additive bf16 mask, explicit scale 0.25 (sqrt: 0.5 on q and k): the
// mask is broadcast and converted to f32 (exact) before it is added to the f32 scores.
// CHECK-LABEL: sym_name = "sdpa_bf16"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x3x8xbf16>, [[K:%arg[0-9]+]]: tensor<2x5x8xbf16>, [[V:%arg[0-9]+]]: tensor<2x5x8xbf16>, [[M:%arg[0-9]+]]: tensor<3x5xbf16>)
// CHECK-NEXT: [[QF:%[0-9]+]] = "stablehlo.convert"([[Q]]) : (tensor<2x3x8xbf16>) -> tensor<2x3x8xf32>
// CHECK-NEXT: [[KF:%[0-9]+]] = "stablehlo.convert"([[K]]) : (tensor<2x5x8xbf16>) -> tensor<2x5x8xf32>
// CHECK-NEXT: [[VF:%[0-9]+]] = "stablehlo.convert"([[V]]) : (tensor<2x5x8xbf16>) -> tensor<2x5x8xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK: [[QS:%[0-9]+]] = "stablehlo.multiply"([[QF]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK: [[KS:%[0-9]+]] = "stablehlo.multiply"([[KF]], {{%[0-9]+}})
// CHECK: [[KT:%[0-9]+]] = "stablehlo.transpose"([[KS]]) {permutation = array<i64: 0, 2, 1>}
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"([[QS]], [[KT]])
// CHECK-SAME: -> tensor<2x3x5xf32>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<3x5xbf16>) -> tensor<2x3x5xbf16>
// CHECK-NEXT: [[MF:%[0-9]+]] = "stablehlo.convert"([[MB]]) : (tensor<2x3x5xbf16>) -> tensor<2x3x5xf32>
// CHECK-NEXT: [[ADDED:%[0-9]+]] = "stablehlo.add"([[S]], [[MF]]) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
// CHECK: "stablehlo.reduce"([[ADDED]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.maximum"({{.*}}) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: }) {dimensions = array<i64: 2>} : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: [[PS:%[0-9]+]] = "stablehlo.select"
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[VF]])
// CHECK-SAME: (tensor<2x3x5xf32>, tensor<2x5x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.convert"([[O]]) : (tensor<2x3x8xf32>) -> tensor<2x3x8xbf16>
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<2x3x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x8xbf16>, tensor<3x5xbf16>) -> tensor<2x3x8xbf16>, sym_name = "sdpa_bf16"}> ({
^bb0(%q: tensor<2x3x8xbf16>, %k: tensor<2x5x8xbf16>, %v: tensor<2x5x8xbf16>, %m: tensor<3x5xbf16>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v, %m) {operand_names = ["query", "key", "value", "attn_mask"], scale = 2.500000e-01 : f64} : (tensor<2x3x8xbf16>, tensor<2x5x8xbf16>, tensor<2x5x8xbf16>, tensor<3x5xbf16>) -> tensor<2x3x8xbf16> loc("sdpa_bf16")
  "func.return"(%0) : (tensor<2x3x8xbf16>) -> ()
}) : () -> ()
