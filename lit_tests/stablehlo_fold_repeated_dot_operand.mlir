// stablehlo-fold-repeated-dot-operand (compiler/src/passes/fold_repeated_dot_operand.rs):
// eager grouped-query attention repeats each key/value head G times
// (reshape(broadcast_in_dim(k))) before its products; the dot then runs over k itself,
// the query (or probabilities) split [H] -> [H/G, G], and the result is merged back.
// It must not fire when the repeat is not over a batch dimension of the dot, when
// the broadcast expands more than the repeated dimension, or when the result is at
// least as large as the repeated operand (a prefill's square scores).
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-fold-repeated-dot-operand,stablehlo-dce,verify-stablehlo | FileCheck %s

// Scores q [2,4,3,8] . k^T with k [2,2,6,8] repeated twice: q split to [2,2,2,3,8].
// CHECK-LABEL: sym_name = "scores"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x4x3x8xbf16>, [[K:%arg[0-9]+]]: tensor<2x2x1x6x8xbf16>)
// CHECK-DAG: [[KR:%[0-9]+]] = "stablehlo.reshape"([[K]]) : (tensor<2x2x1x6x8xbf16>) -> tensor<2x2x6x8xbf16>
// CHECK-DAG: [[QS:%[0-9]+]] = "stablehlo.reshape"([[Q]]) : (tensor<2x4x3x8xbf16>) -> tensor<2x2x2x3x8xbf16>
// CHECK: [[D:%[0-9]+]] = "stablehlo.dot_general"([[QS]], [[KR]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x2x2x3x8xbf16>, tensor<2x2x6x8xbf16>) -> tensor<2x2x2x3x6xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[D]]) : (tensor<2x2x2x3x6xf32>) -> tensor<2x4x3x6xf32>
// CHECK-NEXT: "func.return"([[R]])
// CHECK-NOT: broadcast_in_dim
"func.func"() <{function_type = (tensor<2x4x3x8xbf16>, tensor<2x2x1x6x8xbf16>) -> tensor<2x4x3x6xf32>, sym_name = "scores"}> ({
^bb0(%q: tensor<2x4x3x8xbf16>, %k: tensor<2x2x1x6x8xbf16>):
  %b = "stablehlo.broadcast_in_dim"(%k) {broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>} : (tensor<2x2x1x6x8xbf16>) -> tensor<2x2x2x6x8xbf16>
  %r = "stablehlo.reshape"(%b) : (tensor<2x2x2x6x8xbf16>) -> tensor<2x4x6x8xbf16>
  %d = "stablehlo.dot_general"(%q, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<2x4x3x8xbf16>, tensor<2x4x6x8xbf16>) -> tensor<2x4x3x6xf32>
  "func.return"(%d) : (tensor<2x4x3x6xf32>) -> ()
}) : () -> ()

// Probabilities p [2,4,3,6] . v with v [2,1,6,8] repeated four times (one key/value
// head: multi-query), broadcast without the size-one dimension.
// CHECK-LABEL: sym_name = "values_multi_query"
// CHECK: ^bb0([[P:%arg[0-9]+]]: tensor<2x4x3x6xf32>, [[V:%arg[0-9]+]]: tensor<2x1x6x8xf32>)
// CHECK: [[PS:%[0-9]+]] = "stablehlo.reshape"([[P]]) : (tensor<2x4x3x6xf32>) -> tensor<2x1x4x3x6xf32>
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[V]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [2]>} : (tensor<2x1x4x3x6xf32>, tensor<2x1x6x8xf32>) -> tensor<2x1x4x3x8xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[D]]) : (tensor<2x1x4x3x8xf32>) -> tensor<2x4x3x8xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x4x3x6xf32>, tensor<2x1x6x8xf32>) -> tensor<2x4x3x8xf32>, sym_name = "values_multi_query"}> ({
^bb0(%p: tensor<2x4x3x6xf32>, %v: tensor<2x1x6x8xf32>):
  %b = "stablehlo.broadcast_in_dim"(%v) {broadcast_dimensions = array<i64: 0, 1, 3, 4>} : (tensor<2x1x6x8xf32>) -> tensor<2x1x4x6x8xf32>
  %r = "stablehlo.reshape"(%b) : (tensor<2x1x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  %d = "stablehlo.dot_general"(%p, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<2x4x3x6xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x3x8xf32>
  "func.return"(%d) : (tensor<2x4x3x8xf32>) -> ()
}) : () -> ()

// The repeat on the left (k . q^T): the group dimension lands after k's free
// dimension and is transposed next to the heads before the merge.
// CHECK-LABEL: sym_name = "repeat_on_the_left"
// CHECK: ^bb0([[K:%arg[0-9]+]]: tensor<2x2x6x8xf32>, [[Q:%arg[0-9]+]]: tensor<2x4x3x8xf32>)
// CHECK: [[QS:%[0-9]+]] = "stablehlo.reshape"([[Q]]) : (tensor<2x4x3x8xf32>) -> tensor<2x2x2x3x8xf32>
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[K]], [[QS]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [4]>} : (tensor<2x2x6x8xf32>, tensor<2x2x2x3x8xf32>) -> tensor<2x2x6x2x3xf32>
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.transpose"([[D]]) {permutation = array<i64: 0, 1, 3, 2, 4>} : (tensor<2x2x6x2x3xf32>) -> tensor<2x2x2x6x3xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[T]]) : (tensor<2x2x2x6x3xf32>) -> tensor<2x4x6x3xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x2x6x8xf32>, tensor<2x4x3x8xf32>) -> tensor<2x4x6x3xf32>, sym_name = "repeat_on_the_left"}> ({
^bb0(%k: tensor<2x2x6x8xf32>, %q: tensor<2x4x3x8xf32>):
  %b = "stablehlo.broadcast_in_dim"(%k) {broadcast_dimensions = array<i64: 0, 1, 3, 4>} : (tensor<2x2x6x8xf32>) -> tensor<2x2x2x6x8xf32>
  %r = "stablehlo.reshape"(%b) : (tensor<2x2x2x6x8xf32>) -> tensor<2x4x6x8xf32>
  %d = "stablehlo.dot_general"(%r, %q) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x4x6x8xf32>, tensor<2x4x3x8xf32>) -> tensor<2x4x6x3xf32>
  "func.return"(%d) : (tensor<2x4x6x3xf32>) -> ()
}) : () -> ()

// The repeated dimension is contracted, not a batch dimension: unchanged.
// CHECK-LABEL: sym_name = "repeat_contracted"
// CHECK: "stablehlo.broadcast_in_dim"
// CHECK: lhs_contracting_dimensions = [1]
"func.func"() <{function_type = (tensor<3x8xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>, sym_name = "repeat_contracted"}> ({
^bb0(%a: tensor<3x8xf32>, %w: tensor<4x5xf32>):
  %b = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x5xf32>) -> tensor<4x2x5xf32>
  %r = "stablehlo.reshape"(%b) : (tensor<4x2x5xf32>) -> tensor<8x5xf32>
  %d = "stablehlo.dot_general"(%a, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  "func.return"(%d) : (tensor<3x5xf32>) -> ()
}) : () -> ()

// The broadcast also expands the batch (k of one sequence for two): unchanged.
// CHECK-LABEL: sym_name = "two_dimensions_expanded"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x4x3x8xf32>
// CHECK: "stablehlo.broadcast_in_dim"
// CHECK: "stablehlo.dot_general"([[Q]], %{{[0-9]+}})
"func.func"() <{function_type = (tensor<2x4x3x8xf32>, tensor<1x2x6x8xf32>) -> tensor<2x4x3x6xf32>, sym_name = "two_dimensions_expanded"}> ({
^bb0(%q: tensor<2x4x3x8xf32>, %k: tensor<1x2x6x8xf32>):
  %b = "stablehlo.broadcast_in_dim"(%k) {broadcast_dimensions = array<i64: 0, 1, 3, 4>} : (tensor<1x2x6x8xf32>) -> tensor<2x2x2x6x8xf32>
  %r = "stablehlo.reshape"(%b) : (tensor<2x2x2x6x8xf32>) -> tensor<2x4x6x8xf32>
  %d = "stablehlo.dot_general"(%q, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x4x3x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x3x6xf32>
  "func.return"(%d) : (tensor<2x4x3x6xf32>) -> ()
}) : () -> ()

// Core ATen's bmm form: the reshape merges batch, heads and the repeat,
// [1,2,2,32,16] -> [4,32,16]; the probabilities [4,1,32] split into [2,2,1,32].
// CHECK-LABEL: sym_name = "core_aten_bmm"
// CHECK: ^bb0([[P:%arg[0-9]+]]: tensor<4x1x32xf32>, [[V:%arg[0-9]+]]: tensor<1x2x1x32x16xf32>)
// CHECK-DAG: [[VR:%[0-9]+]] = "stablehlo.reshape"([[V]]) : (tensor<1x2x1x32x16xf32>) -> tensor<2x32x16xf32>
// CHECK-DAG: [[PS:%[0-9]+]] = "stablehlo.reshape"([[P]]) : (tensor<4x1x32xf32>) -> tensor<2x2x1x32xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.dot_general"([[PS]], [[VR]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x2x1x32xf32>, tensor<2x32x16xf32>) -> tensor<2x2x1x16xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[D]]) : (tensor<2x2x1x16xf32>) -> tensor<4x1x16xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4x1x32xf32>, tensor<1x2x1x32x16xf32>) -> tensor<4x1x16xf32>, sym_name = "core_aten_bmm"}> ({
^bb0(%p: tensor<4x1x32xf32>, %v: tensor<1x2x1x32x16xf32>):
  %b = "stablehlo.broadcast_in_dim"(%v) {broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>} : (tensor<1x2x1x32x16xf32>) -> tensor<1x2x2x32x16xf32>
  %r = "stablehlo.reshape"(%b) : (tensor<1x2x2x32x16xf32>) -> tensor<4x32x16xf32>
  %d = "stablehlo.dot_general"(%p, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<4x1x32xf32>, tensor<4x32x16xf32>) -> tensor<4x1x16xf32>
  "func.return"(%d) : (tensor<4x1x16xf32>) -> ()
}) : () -> ()

// A transpose between the repeat and the dot (k^T before the scores) is read through:
// the dot contracts k's last dimension directly.
// CHECK-LABEL: sym_name = "transposed_repeat"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x1x16xf32>, [[K:%arg[0-9]+]]: tensor<1x2x1x32x16xf32>)
// CHECK-DAG: [[KR:%[0-9]+]] = "stablehlo.reshape"([[K]]) : (tensor<1x2x1x32x16xf32>) -> tensor<1x2x32x16xf32>
// CHECK-DAG: [[QS:%[0-9]+]] = "stablehlo.reshape"([[Q]]) : (tensor<1x4x1x16xf32>) -> tensor<1x2x2x1x16xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.dot_general"([[QS]], [[KR]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [3]>} : (tensor<1x2x2x1x16xf32>, tensor<1x2x32x16xf32>) -> tensor<1x2x2x1x32xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[D]]) : (tensor<1x2x2x1x32xf32>) -> tensor<1x4x1x32xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<1x4x1x16xf32>, tensor<1x2x1x32x16xf32>) -> tensor<1x4x1x32xf32>, sym_name = "transposed_repeat"}> ({
^bb0(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x1x32x16xf32>):
  %b = "stablehlo.broadcast_in_dim"(%k) {broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>} : (tensor<1x2x1x32x16xf32>) -> tensor<1x2x2x32x16xf32>
  %r = "stablehlo.reshape"(%b) : (tensor<1x2x2x32x16xf32>) -> tensor<1x4x32x16xf32>
  %t = "stablehlo.transpose"(%r) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x4x32x16xf32>) -> tensor<1x4x16x32xf32>
  %d = "stablehlo.dot_general"(%q, %t) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<1x4x1x16xf32>, tensor<1x4x16x32xf32>) -> tensor<1x4x1x32xf32>
  "func.return"(%d) : (tensor<1x4x1x32xf32>) -> ()
}) : () -> ()

// A prefill's scores: q [1,4,6,2] . k^T with k [1,2,6,2] repeated twice gives
// [1,4,6,6], larger than the repeated k [1,4,6,2]: unchanged (the fold pays only where
// the repeat dominates, as in decode).
// CHECK-LABEL: sym_name = "prefill_scores"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x6x2xf32>
// CHECK: "stablehlo.broadcast_in_dim"
// CHECK: "stablehlo.dot_general"([[Q]], %{{[0-9]+}}){{.*}} : (tensor<1x4x6x2xf32>, tensor<1x4x6x2xf32>) -> tensor<1x4x6x6xf32>
"func.func"() <{function_type = (tensor<1x4x6x2xf32>, tensor<1x2x6x2xf32>) -> tensor<1x4x6x6xf32>, sym_name = "prefill_scores"}> ({
^bb0(%q: tensor<1x4x6x2xf32>, %k: tensor<1x2x6x2xf32>):
  %b = "stablehlo.broadcast_in_dim"(%k) {broadcast_dimensions = array<i64: 0, 1, 3, 4>} : (tensor<1x2x6x2xf32>) -> tensor<1x2x2x6x2xf32>
  %r = "stablehlo.reshape"(%b) : (tensor<1x2x2x6x2xf32>) -> tensor<1x4x6x2xf32>
  %d = "stablehlo.dot_general"(%q, %r) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<1x4x6x2xf32>, tensor<1x4x6x2xf32>) -> tensor<1x4x6x6xf32>
  "func.return"(%d) : (tensor<1x4x6x6xf32>) -> ()
}) : () -> ()
