// Guards the safe softmax of scaled_dot_product_attention (attention.rs): fully masked rows give 0, not NaN.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// PyTorch's math backend (torch >= 2.5) uses _safe_softmax, as does the core.pt2
// decomposition (any / logical_not / where), so exported.pt2 and core.pt2 agree.
// A fully masked row is all -inf after the select, so its max is -inf and
// exp(-inf - -inf) is NaN; the probabilities of every row whose max is -inf are
// replaced by 0 before the contraction with v (rows with any kept key are unchanged,
// since then the max is finite). D = 4: q and k are each scaled by sqrt(1/2).
// CHECK-LABEL: sym_name = "sdpa_fully_masked_row"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x1x2x4xf32>, [[K:%arg[0-9]+]]: tensor<1x1x3x4xf32>, [[V:%arg[0-9]+]]: tensor<1x1x3x4xf32>, [[M:%arg[0-9]+]]: tensor<2x3xi1>)
// CHECK: "stablehlo.constant"() {value = dense<0.707106769> : tensor<f32>}
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"
// CHECK-SAME: -> tensor<1x1x2x3xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT: [[NINF:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<2x3xi1>) -> tensor<1x1x2x3xi1>
// CHECK-NEXT: [[MASKED:%[0-9]+]] = "stablehlo.select"([[MB]], [[S]], [[NINF]])
// CHECK: [[MAX:%[0-9]+]] = "stablehlo.reduce"([[MASKED]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.maximum"
// CHECK: }) {dimensions = array<i64: 3>} : (tensor<1x1x2x3xf32>, tensor<f32>) -> tensor<1x1x2xf32>
// CHECK-NEXT: [[MAXB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MAX]]) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x1x2xf32>) -> tensor<1x1x2x3xf32>
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"
// CHECK-NEXT: [[EMPTY:%[0-9]+]] = "stablehlo.compare"([[MAXB]], [[NINF]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xi1>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT: [[SAFE:%[0-9]+]] = "stablehlo.select"([[EMPTY]], [[ZERO]], [[P]])
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.dot_general"([[SAFE]], [[V]])
// CHECK-SAME: (tensor<1x1x2x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<2x3xi1>) -> tensor<1x1x2x4xf32>, sym_name = "sdpa_fully_masked_row"}> ({
^bb0(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>, %m: tensor<2x3xi1>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v, %m) {operand_names = ["query", "key", "value", "attn_mask"]} : (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<2x3xi1>) -> tensor<1x1x2x4xf32> loc("sdpa")
  "func.return"(%0) : (tensor<1x1x2x4xf32>) -> ()
}) : () -> ()

// The same for an additive float mask: a row that is -inf everywhere (here possible
// for any row of the [2, 3] mask) is zeroed after the softmax as well.
// CHECK-LABEL: sym_name = "sdpa_additive_mask_rows"
// CHECK: ^bb0({{.*}}, [[V:%arg[0-9]+]]: tensor<1x1x3x4xf32>, [[M:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x2x3xf32>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT: [[ADDED:%[0-9]+]] = "stablehlo.add"({{%[0-9]+}}, [[MB]])
// CHECK: [[MAX:%[0-9]+]] = "stablehlo.reduce"([[ADDED]], {{%[0-9]+}}) ({
// CHECK: [[MAXB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MAX]])
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"
// CHECK-NEXT: [[EMPTY:%[0-9]+]] = "stablehlo.compare"([[MAXB]], [[NINF]])
// CHECK-SAME: comparison_direction EQ
// CHECK: [[SAFE:%[0-9]+]] = "stablehlo.select"([[EMPTY]], {{%[0-9]+}}, [[P]])
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.dot_general"([[SAFE]], [[V]])
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<2x3xf32>) -> tensor<1x1x2x4xf32>, sym_name = "sdpa_additive_mask_rows"}> ({
^bb0(%q: tensor<1x1x2x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>, %m: tensor<2x3xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v, %m) {operand_names = ["query", "key", "value", "attn_mask"]} : (tensor<1x1x2x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<2x3xf32>) -> tensor<1x1x2x4xf32> loc("sdpa_additive")
  "func.return"(%0) : (tensor<1x1x2x4xf32>) -> ()
}) : () -> ()
