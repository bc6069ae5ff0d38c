// Attention family (compiler/src/passes/lower_aten_to_stablehlo/attention.rs):
// scaled_dot_product_attention as softmax(q @ k^T * scale + mask) @ v, with the
// default scale 1/sqrt(D), an explicit scale, is_causal (top-left aligned, L != S),
// boolean and additive masks (broadcast), and grouped-query heads (enable_gqa).
// Known divergences from PyTorch's math backend are in xfail_sdpa_*.mlir.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// D = 16: scale 0.25; softmax over the last dim; f32 contractions at HIGHEST.
// CHECK-LABEL: sym_name = "sdpa_default_scale"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x2x8x16xf32>, [[K:%arg[0-9]+]]: tensor<2x2x8x16xf32>, [[V:%arg[0-9]+]]: tensor<2x2x8x16xf32>)
// CHECK: [[KT:%[0-9]+]] = "stablehlo.transpose"([[K]]) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x2x8x16xf32>) -> tensor<2x2x16x8xf32>
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"([[Q]], [[KT]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK: "stablehlo.constant"() {value = dense<2.500000e-01> : tensor<f32>}
// CHECK: [[SS:%[0-9]+]] = "stablehlo.multiply"([[S]], {{%[0-9]+}})
// CHECK-NOT: "stablehlo.select"
// CHECK: [[MAX:%[0-9]+]] = "stablehlo.reduce"([[SS]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.maximum"
// CHECK: }) {dimensions = array<i64: 3>} : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8xf32>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MAX]]) {broadcast_dimensions = array<i64: 0, 1, 2>}
// CHECK: [[SH:%[0-9]+]] = "stablehlo.subtract"([[SS]], [[MB]])
// CHECK: [[EX:%[0-9]+]] = "stablehlo.exponential"([[SH]])
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.reduce"([[EX]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: [[SB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[SUM]])
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"([[EX]], [[SB]])
// CHECK: [[O:%[0-9]+]] = "stablehlo.dot_general"([[P]], [[V]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>
// CHECK-SAME: (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>, sym_name = "sdpa_default_scale"}> ({
^bb0(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {operand_names = ["query", "key", "value"]} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> loc("scaled_dot_product_attention")
  "func.return"(%0) : (tensor<2x2x8x16xf32>) -> ()
}) : () -> ()

// is_causal with L = 4 queries and S = 6 keys: keep row >= col (PyTorch's
// tril(ones(L, S)), top-left aligned), -inf elsewhere; scale = 0.125 as given.
// CHECK-LABEL: sym_name = "sdpa_causal_explicit_scale"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x6x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x6x8xf32>)
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"
// CHECK-SAME: -> tensor<1x2x4x6xf32>
// CHECK: "stablehlo.constant"() {value = dense<1.250000e-01> : tensor<f32>}
// CHECK: [[SS:%[0-9]+]] = "stablehlo.multiply"([[S]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[ROW:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4x6xi64>
// CHECK: [[COL:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4x6xi64>
// CHECK: [[KEEP:%[0-9]+]] = "stablehlo.compare"([[ROW]], [[COL]])
// CHECK-SAME: comparison_direction GE
// CHECK: [[KB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[KEEP]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<4x6xi1>) -> tensor<1x2x4x6xi1>
// CHECK: [[MASKED:%[0-9]+]] = "stablehlo.select"([[KB]], [[SS]], [[NINF]])
// CHECK: "stablehlo.reduce"([[MASKED]], {{%[0-9]+}}) ({
// CHECK: [[O:%[0-9]+]] = "stablehlo.dot_general"({{%[0-9]+}}, [[V]])
// CHECK-SAME: (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>, sym_name = "sdpa_causal_explicit_scale"}> ({
^bb0(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {dropout_p = 0.000000e+00 : f64, is_causal = true, operand_names = ["query", "key", "value"], scale = 1.250000e-01 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> loc("sdpa_causal")
  "func.return"(%0) : (tensor<1x2x4x8xf32>) -> ()
}) : () -> ()

// A boolean mask selects the score (true) or -inf (false), broadcast from [L, S];
// D = 8 gives scale 1/sqrt(8).
// CHECK-LABEL: sym_name = "sdpa_bool_mask"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[K:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[V:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[M:%arg[0-9]+]]: tensor<4x4xi1>)
// CHECK: "stablehlo.constant"() {value = dense<0.353553385> : tensor<f32>}
// CHECK: [[SS:%[0-9]+]] = "stablehlo.multiply"
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<4x4xi1>) -> tensor<2x2x4x4xi1>
// CHECK: [[MASKED:%[0-9]+]] = "stablehlo.select"([[MB]], [[SS]], [[NINF]])
// CHECK: "stablehlo.reduce"([[MASKED]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.dot_general"({{%[0-9]+}}, [[V]])
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x2x4x8xf32>, sym_name = "sdpa_bool_mask"}> ({
^bb0(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<4x4xi1>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v, %m) {operand_names = ["query", "key", "value", "attn_mask"]} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x2x4x8xf32> loc("sdpa_bool_mask")
  "func.return"(%0) : (tensor<2x2x4x8xf32>) -> ()
}) : () -> ()

// An additive float mask [2, 1, 1, 4] is broadcast and added to the scaled scores.
// CHECK-LABEL: sym_name = "sdpa_float_mask"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[K:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[V:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[M:%arg[0-9]+]]: tensor<2x1x1x4xf32>)
// CHECK: [[SS:%[0-9]+]] = "stablehlo.multiply"
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
// CHECK: [[ADDED:%[0-9]+]] = "stablehlo.add"([[SS]], [[MB]])
// CHECK-NOT: "stablehlo.select"
// CHECK: "stablehlo.reduce"([[ADDED]], {{%[0-9]+}}) ({
// CHECK: [[O:%[0-9]+]] = "stablehlo.dot_general"({{%[0-9]+}}, [[V]])
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32>, sym_name = "sdpa_float_mask"}> ({
^bb0(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x1x1x4xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v, %m) {operand_names = ["query", "key", "value", "attn_mask"]} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> loc("sdpa_float_mask")
  "func.return"(%0) : (tensor<2x2x4x8xf32>) -> ()
}) : () -> ()

// enable_gqa with 4 query heads and 2 key/value heads: each kv head is repeated
// (repeat_interleave: [1, 2, 3, 8] -> [1, 2, 2, 3, 8] -> [1, 4, 3, 8]).
// CHECK-LABEL: sym_name = "sdpa_gqa"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x3x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x3x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x3x8xf32>)
// CHECK: [[KB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[K]]) {broadcast_dimensions = array<i64: 0, 1, 3, 4>} : (tensor<1x2x3x8xf32>) -> tensor<1x2x2x3x8xf32>
// CHECK: [[KR:%[0-9]+]] = "stablehlo.reshape"([[KB]]) : (tensor<1x2x2x3x8xf32>) -> tensor<1x4x3x8xf32>
// CHECK: [[VB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[V]]) {broadcast_dimensions = array<i64: 0, 1, 3, 4>}
// CHECK: [[VR:%[0-9]+]] = "stablehlo.reshape"([[VB]]) : (tensor<1x2x2x3x8xf32>) -> tensor<1x4x3x8xf32>
// CHECK: [[KT:%[0-9]+]] = "stablehlo.transpose"([[KR]]) {permutation = array<i64: 0, 1, 3, 2>}
// CHECK: "stablehlo.dot_general"([[Q]], [[KT]])
// CHECK-SAME: -> tensor<1x4x3x3xf32>
// CHECK: [[O:%[0-9]+]] = "stablehlo.dot_general"({{%[0-9]+}}, [[VR]])
// CHECK-SAME: -> tensor<1x4x3x8xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32>, sym_name = "sdpa_gqa"}> ({
^bb0(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {enable_gqa = true, operand_names = ["query", "key", "value"]} : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> loc("sdpa_gqa")
  "func.return"(%0) : (tensor<1x4x3x8xf32>) -> ()
}) : () -> ()
