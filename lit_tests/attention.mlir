// Attention family (compiler/src/passes/lower_aten_to_stablehlo/attention.rs):
// scaled_dot_product_attention as PyTorch's math backend computes it:
// softmax((q * sqrt(scale)) @ (k * sqrt(scale))^T + mask) @ v, with the default scale
// 1/sqrt(D), an explicit scale, is_causal (top-left aligned, L != S), boolean and
// additive masks (broadcast), grouped-query heads (enable_gqa), and the safe softmax
// (_safe_softmax: rows whose max is -inf, i.e. fully masked, become 0, not NaN).
// Fully masked rows and f16/bf16 inputs (computed in f32) have their own files,
// attention_masked_rows.mlir and attention_half_precision.mlir.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// D = 16: scale 1/sqrt(16) = 0.25; q and k are each multiplied by sqrt(0.25) = 0.5
// before the product (0.5 q . 0.5 k = 0.25 q . k), and the scores are not scaled
// again. f32 stays f32 (no convert); softmax over the last dim; contractions at
// HIGHEST; the probabilities of rows whose max is -inf are replaced by 0. The row
// max propagates NaN as PyTorch does (a NaN operand is selected over the maximum).
// CHECK-LABEL: sym_name = "sdpa_default_scale"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x2x8x16xf32>, [[K:%arg[0-9]+]]: tensor<2x2x8x16xf32>, [[V:%arg[0-9]+]]: tensor<2x2x8x16xf32>)
// CHECK-NOT: "stablehlo.convert"
// CHECK: [[RQ:%[0-9]+]] = "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT: [[RQB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[RQ]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2x8x16xf32>
// CHECK-NEXT: [[QS:%[0-9]+]] = "stablehlo.multiply"([[Q]], [[RQB]])
// CHECK-NEXT: [[RK:%[0-9]+]] = "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT: [[RKB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[RK]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2x8x16xf32>
// CHECK-NEXT: [[KS:%[0-9]+]] = "stablehlo.multiply"([[K]], [[RKB]])
// CHECK-NEXT: [[KT:%[0-9]+]] = "stablehlo.transpose"([[KS]]) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x2x8x16xf32>) -> tensor<2x2x16x8xf32>
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.dot_general"([[QS]], [[KT]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>) -> tensor<2x2x8x8xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT: [[NINF:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2x8x8xf32>
// CHECK-NOT: "stablehlo.multiply"
// CHECK-NOT: "stablehlo.select"
// CHECK: [[MAX:%[0-9]+]] = "stablehlo.reduce"([[S]], {{%[0-9]+}}) ({
// CHECK-NEXT: ^bb0([[LHS:%arg[0-9]+]]: tensor<f32>, [[RHS:%arg[0-9]+]]: tensor<f32>):
// CHECK-NEXT: [[MX:%[0-9]+]] = "stablehlo.maximum"([[LHS]], [[RHS]])
// CHECK-NEXT: [[LNAN:%[0-9]+]] = "stablehlo.compare"([[LHS]], [[LHS]]) {{.*}}comparison_direction NE>
// CHECK-NEXT: [[RNAN:%[0-9]+]] = "stablehlo.compare"([[RHS]], [[RHS]]) {{.*}}comparison_direction NE>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.select"([[RNAN]], [[RHS]], [[MX]])
// CHECK-NEXT: [[R2:%[0-9]+]] = "stablehlo.select"([[LNAN]], [[LHS]], [[R1]])
// CHECK-NEXT: "stablehlo.return"([[R2]])
// CHECK-NEXT: }) {dimensions = array<i64: 3>} : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8xf32>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MAX]]) {broadcast_dimensions = array<i64: 0, 1, 2>}
// CHECK: [[SH:%[0-9]+]] = "stablehlo.subtract"([[S]], [[MB]])
// CHECK: [[EX:%[0-9]+]] = "stablehlo.exponential"([[SH]])
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.reduce"([[EX]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: [[SB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[SUM]])
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"([[EX]], [[SB]])
// CHECK: [[EMPTY:%[0-9]+]] = "stablehlo.compare"([[MB]], [[NINF]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xi1>
// CHECK: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[PS:%[0-9]+]] = "stablehlo.select"([[EMPTY]], [[ZERO]], [[P]])
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[V]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>
// CHECK-SAME: (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>, sym_name = "sdpa_default_scale"}> ({
^bb0(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {operand_names = ["query", "key", "value"]} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> loc("scaled_dot_product_attention")
  "func.return"(%0) : (tensor<2x2x8x16xf32>) -> ()
}) : () -> ()

// is_causal with L = 4 queries and S = 6 keys: keep row >= col (PyTorch's
// tril(ones(L, S)), top-left aligned), -inf elsewhere. The given scale 0.125 becomes
// sqrt(0.125) = 0.35355339 on q and on k.
// CHECK-LABEL: sym_name = "sdpa_causal_explicit_scale"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x6x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x6x8xf32>)
// CHECK: "stablehlo.constant"() {value = dense<0.353553385> : tensor<f32>}
// CHECK: [[QS:%[0-9]+]] = "stablehlo.multiply"([[Q]], {{%[0-9]+}}) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK: "stablehlo.constant"() {value = dense<0.353553385> : tensor<f32>}
// CHECK: [[KS:%[0-9]+]] = "stablehlo.multiply"([[K]], {{%[0-9]+}}) : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
// CHECK: [[KT:%[0-9]+]] = "stablehlo.transpose"([[KS]])
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"([[QS]], [[KT]])
// CHECK-SAME: -> tensor<1x2x4x6xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT: [[NINF:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[ROW:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4x6xi64>
// CHECK-NEXT: [[COL:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4x6xi64>
// CHECK-NEXT: [[KEEP:%[0-9]+]] = "stablehlo.compare"([[ROW]], [[COL]])
// CHECK-SAME: comparison_direction GE
// CHECK-NEXT: [[KB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[KEEP]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<4x6xi1>) -> tensor<1x2x4x6xi1>
// CHECK-NEXT: [[MASKED:%[0-9]+]] = "stablehlo.select"([[KB]], [[S]], [[NINF]])
// CHECK: [[MAX:%[0-9]+]] = "stablehlo.reduce"([[MASKED]], {{%[0-9]+}}) ({
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MAX]])
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[EMPTY:%[0-9]+]] = "stablehlo.compare"([[MB]], [[NINF]])
// CHECK-SAME: comparison_direction EQ
// CHECK: [[PS:%[0-9]+]] = "stablehlo.select"([[EMPTY]], {{%[0-9]+}}, [[P]])
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[V]])
// CHECK-SAME: (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>, sym_name = "sdpa_causal_explicit_scale"}> ({
^bb0(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {dropout_p = 0.000000e+00 : f64, is_causal = true, operand_names = ["query", "key", "value"], scale = 1.250000e-01 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> loc("sdpa_causal")
  "func.return"(%0) : (tensor<1x2x4x8xf32>) -> ()
}) : () -> ()

// A boolean mask selects the score (true) or -inf (false), broadcast from [L, S];
// D = 8 gives scale 1/sqrt(8), so q and k are each scaled by 8^(-1/4) = 0.59460356.
// CHECK-LABEL: sym_name = "sdpa_bool_mask"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[K:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[V:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[M:%arg[0-9]+]]: tensor<4x4xi1>)
// CHECK: "stablehlo.constant"() {value = dense<0.594603539> : tensor<f32>}
// CHECK: [[QS:%[0-9]+]] = "stablehlo.multiply"([[Q]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<0.594603539> : tensor<f32>}
// CHECK: [[KS:%[0-9]+]] = "stablehlo.multiply"([[K]], {{%[0-9]+}})
// CHECK: [[KT:%[0-9]+]] = "stablehlo.transpose"([[KS]])
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"([[QS]], [[KT]])
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<4x4xi1>) -> tensor<2x2x4x4xi1>
// CHECK: [[MASKED:%[0-9]+]] = "stablehlo.select"([[MB]], [[S]], [[NINF]])
// CHECK: "stablehlo.reduce"([[MASKED]], {{%[0-9]+}}) ({
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[EMPTY:%[0-9]+]] = "stablehlo.compare"({{%[0-9]+}}, [[NINF]])
// CHECK: [[PS:%[0-9]+]] = "stablehlo.select"([[EMPTY]], {{%[0-9]+}}, [[P]])
// CHECK: [[O:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[V]])
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x2x4x8xf32>, sym_name = "sdpa_bool_mask"}> ({
^bb0(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<4x4xi1>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v, %m) {operand_names = ["query", "key", "value", "attn_mask"]} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x2x4x8xf32> loc("sdpa_bool_mask")
  "func.return"(%0) : (tensor<2x2x4x8xf32>) -> ()
}) : () -> ()

// An additive float mask [2, 1, 1, 4] is broadcast and added to the scores (which
// already carry the scale, through q and k).
// CHECK-LABEL: sym_name = "sdpa_float_mask"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[K:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[V:%arg[0-9]+]]: tensor<2x2x4x8xf32>, [[M:%arg[0-9]+]]: tensor<2x1x1x4xf32>)
// CHECK: [[QS:%[0-9]+]] = "stablehlo.multiply"([[Q]], {{%[0-9]+}})
// CHECK: [[KS:%[0-9]+]] = "stablehlo.multiply"([[K]], {{%[0-9]+}})
// CHECK: [[S:%[0-9]+]] = "stablehlo.dot_general"([[QS]], {{%[0-9]+}})
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
// CHECK-NEXT: [[ADDED:%[0-9]+]] = "stablehlo.add"([[S]], [[MB]])
// CHECK-NOT: "stablehlo.select"
// CHECK: "stablehlo.reduce"([[ADDED]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.maximum"
// CHECK: }) {dimensions = array<i64: 3>}
// CHECK: [[PS:%[0-9]+]] = "stablehlo.select"
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[V]])
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32>, sym_name = "sdpa_float_mask"}> ({
^bb0(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x1x1x4xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v, %m) {operand_names = ["query", "key", "value", "attn_mask"]} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> loc("sdpa_float_mask")
  "func.return"(%0) : (tensor<2x2x4x8xf32>) -> ()
}) : () -> ()

// enable_gqa with 4 query heads and 2 key/value heads: query head h reads kv head
// h / 2. No repeated copy of k or v: k is scaled like q (D = 8: 8^(-1/4)) as it is,
// the query is viewed as [1, 2 kv heads, 2, 3, 8] and each product batches over the
// batch and kv-head dimensions, its result viewed back as [1, 4, ...].
// CHECK-LABEL: sym_name = "sdpa_gqa"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x3x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x3x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x3x8xf32>)
// CHECK-NOT: "stablehlo.broadcast_in_dim"([[K]])
// CHECK: "stablehlo.constant"() {value = dense<0.594603539> : tensor<f32>}
// CHECK: [[QS:%[0-9]+]] = "stablehlo.multiply"([[Q]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<0.594603539> : tensor<f32>}
// CHECK: [[KS:%[0-9]+]] = "stablehlo.multiply"([[K]], {{%[0-9]+}}) : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
// CHECK-NEXT: [[QG:%[0-9]+]] = "stablehlo.reshape"([[QS]]) : (tensor<1x4x3x8xf32>) -> tensor<1x2x2x3x8xf32>
// CHECK-NEXT: [[SG:%[0-9]+]] = "stablehlo.dot_general"([[QG]], [[KS]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [3]>{{.*}}} : (tensor<1x2x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x2x3x3xf32>
// CHECK-NEXT: "stablehlo.reshape"([[SG]]) : (tensor<1x2x2x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK: [[PG:%[0-9]+]] = "stablehlo.reshape"({{%[0-9]+}}) : (tensor<1x4x3x3xf32>) -> tensor<1x2x2x3x3xf32>
// CHECK-NEXT: [[OG:%[0-9]+]] = "stablehlo.dot_general"([[PG]], [[V]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [2]>{{.*}}} : (tensor<1x2x2x3x3xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x2x3x8xf32>
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.reshape"([[OG]]) : (tensor<1x2x2x3x8xf32>) -> tensor<1x4x3x8xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32>, sym_name = "sdpa_gqa"}> ({
^bb0(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {enable_gqa = true, operand_names = ["query", "key", "value"]} : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> loc("sdpa_gqa")
  "func.return"(%0) : (tensor<1x4x3x8xf32>) -> ()
}) : () -> ()

// enable_gqa where the key and value broadcast along the batch (1 against the
// query's 2): the kv heads are repeated (broadcast_in_dim + reshape) and the products
// broadcast as matmul does.
// CHECK-LABEL: sym_name = "sdpa_gqa_broadcast_batch"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x4x3x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x3x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x3x8xf32>)
// CHECK: "stablehlo.broadcast_in_dim"([[K]]) {broadcast_dimensions = array<i64: 0, 1, 3, 4>} : (tensor<1x2x3x8xf32>) -> tensor<1x2x2x3x8xf32>
// CHECK: "stablehlo.broadcast_in_dim"([[V]]) {broadcast_dimensions = array<i64: 0, 1, 3, 4>} : (tensor<1x2x3x8xf32>) -> tensor<1x2x2x3x8xf32>
// CHECK: "stablehlo.dot_general"({{.*}}tensor<2x4x3x8xf32>
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<2x4x3x8xf32>, sym_name = "sdpa_gqa_broadcast_batch"}> ({
^bb0(%q: tensor<2x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {enable_gqa = true, operand_names = ["query", "key", "value"]} : (tensor<2x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<2x4x3x8xf32> loc("sdpa_gqa_broadcast_batch")
  "func.return"(%0) : (tensor<2x4x3x8xf32>) -> ()
}) : () -> ()

// Long prompts: 2,048 queries against 2,048 keys over 4 heads make 64 MiB of f32
// scores, more than the 32 MiB computed in one piece: the output is computed in a
// stablehlo.while over 2 blocks of 1,024 query rows (an i32 counter, block i starting
// at row min(i * 1024, 2048 - 1024)), each block's rows read with dynamic_slice, its
// causal mask offset by the block's first row, its output written with
// dynamic_update_slice. No 2048x2048 value is made.
// CHECK-LABEL: sym_name = "sdpa_long_causal"
// CHECK-NOT: tensor<1x4x2048x2048xf32>
// CHECK: "stablehlo.while"
// CHECK: [[N:%[0-9]+]] = "stablehlo.constant"() {value = dense<2> : tensor<i32>}
// CHECK-NEXT: "stablehlo.compare"({{%arg[0-9]+}}, [[N]]) {{.*}}comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK: "stablehlo.constant"() {value = dense<1024> : tensor<i32>}
// CHECK: "stablehlo.dynamic_slice"({{.*}}) {slice_sizes = array<i64: 1, 4, 1024, 8>} : (tensor<1x4x2048x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x1024x8xf32>
// CHECK-NOT: tensor<1x4x2048x2048xf32>
// CHECK: "stablehlo.convert"({{%[0-9a-z]+}}) : (tensor<i32>) -> tensor<i64>
// CHECK: "stablehlo.add"({{.*}}) : (tensor<1024x2048xi64>, tensor<1024x2048xi64>) -> tensor<1024x2048xi64>
// CHECK: -> tensor<1x4x1024x2048xf32>
// CHECK: "stablehlo.dynamic_update_slice"({{.*}}) : (tensor<1x4x2048x8xf32>, tensor<1x4x1024x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x2048x8xf32>
// CHECK-NOT: tensor<1x4x2048x2048xf32>
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<1x4x2048x8xf32>, tensor<1x4x2048x8xf32>, tensor<1x4x2048x8xf32>) -> tensor<1x4x2048x8xf32>, sym_name = "sdpa_long_causal"}> ({
^bb0(%q: tensor<1x4x2048x8xf32>, %k: tensor<1x4x2048x8xf32>, %v: tensor<1x4x2048x8xf32>):
  %0 = "aten.scaled_dot_product_attention.default"(%q, %k, %v) {is_causal = true, operand_names = ["query", "key", "value"]} : (tensor<1x4x2048x8xf32>, tensor<1x4x2048x8xf32>, tensor<1x4x2048x8xf32>) -> tensor<1x4x2048x8xf32> loc("sdpa_long_causal")
  "func.return"(%0) : (tensor<1x4x2048x8xf32>) -> ()
}) : () -> ()
