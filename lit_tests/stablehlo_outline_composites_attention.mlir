// Scaled dot-product attention in stablehlo-outline-composites
// (compiler/src/passes/composites/attention.rs), on the -O2 pipeline from ATen ops
// written as Hugging Face's eager attention does: Q K^T * scale + mask, softmax, @ V.
// A constant lower-triangular mask becomes is_causal = true and no operand; a
// repeat_kv of K and V becomes enable_gqa = true with the unrepeated key and value as
// operands, and the decomposition computes it over groups of query heads without
// repeating K and V; any other mask is an operand. Core ATen's bmm form (3-d matmuls
// between reshapes) matches too, and so does GPT-2's key transpose merged with its
// head transpose (the key operand is then a new transpose to [B, H, S, D]). It must
// not fire on a softmax over another axis, when an intermediate is read outside, or on
// a bmm whose reshapes do not restore the batch.
//
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites,lower-aten-to-stablehlo,stablehlo-fold-constants,stablehlo-simplify,stablehlo-fold-transpose,stablehlo-dce,stablehlo-cse,stablehlo-outline-composites,stablehlo-dce,verify-stablehlo | FileCheck %s

// CHECK-LABEL: sym_name = "gqa_causal"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x4x8xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[Q]], [[K]], [[V]]) {composite_attributes = {enable_gqa = true, is_causal = true, operand_names = ["query", "key", "value"], scale = 0.35355338454246521 : f64}, decomposition = @[[GQA:aten.scaled_dot_product_attention.default.impl_[0-9]+]], name = "aten.scaled_dot_product_attention.default", version = 0 : i32} : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "padding_mask"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[K:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[V:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[M:%arg[0-9]+]]: tensor<1x4x4x4xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[Q]], [[K]], [[V]], [[M]]) {composite_attributes = {operand_names = ["query", "key", "value", "attn_mask"], scale = 0.35355338454246521 : f64}
// CHECK-NEXT: "func.return"([[O]])

// A constant mask that is not the causal one stays inside, as a constant.
// CHECK-LABEL: sym_name = "not_causal_constant"
// CHECK: "stablehlo.composite"(%arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}}) {composite_attributes = {operand_names = ["query", "key", "value"], scale = 0.35355338454246521 : f64}
// CHECK-NEXT: "func.return"

// CHECK-LABEL: sym_name = "softmax_not_last"
// CHECK-NOT: scaled_dot_product_attention
// CHECK: "func.return"

// CHECK-LABEL: sym_name = "scores_read_outside"
// CHECK-NOT: scaled_dot_product_attention
// CHECK: "func.return"

"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>, sym_name = "gqa_causal"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>):
  %kr = "aten.unsqueeze.default"(%k) {dim = 2 : i64, operand_names = ["self"]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %ke = "aten.expand.default"(%kr) {size = array<i64: 1, 2, 2, 4, 8>, operand_names = ["self"]} : (tensor<1x2x1x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %k4 = "aten.reshape.default"(%ke) {shape = array<i64: 1, 4, 4, 8>, operand_names = ["self"]} : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %vr = "aten.unsqueeze.default"(%v) {dim = 2 : i64, operand_names = ["self"]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %ve = "aten.expand.default"(%vr) {size = array<i64: 1, 2, 2, 4, 8>, operand_names = ["self"]} : (tensor<1x2x1x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %v4 = "aten.reshape.default"(%ve) {shape = array<i64: 1, 4, 4, 8>, operand_names = ["self"]} : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %kt = "aten.transpose.int"(%k4) {dim0 = 2 : i64, dim1 = 3 : i64, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %s = "aten.matmul.default"(%q, %kt) {operand_names = ["self", "other"]} : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = "aten.full.default"() {size = array<i64: 4, 4>, fill_value = -3.4028234663852886E+38 : f64, dtype = "f32", operand_names = []} : () -> tensor<4x4xf32>
  %mt = "aten.triu.default"(%m) {diagonal = 1 : i64, operand_names = ["self"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = "aten.add.Tensor"(%sc, %mt) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%a) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %o = "aten.matmul.default"(%p, %v4) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  "func.return"(%o) : (tensor<1x4x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x8xf32>, sym_name = "padding_mask"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %k: tensor<1x4x4x8xf32>, %v: tensor<1x4x4x8xf32>, %pad: tensor<1x4x4x4xf32>):
  %kt = "aten.transpose.int"(%k) {dim0 = 2 : i64, dim1 = 3 : i64, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %s = "aten.matmul.default"(%q, %kt) {operand_names = ["self", "other"]} : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = "aten.full.default"() {size = array<i64: 4, 4>, fill_value = -3.4028234663852886E+38 : f64, dtype = "f32", operand_names = []} : () -> tensor<4x4xf32>
  %mt = "aten.triu.default"(%m) {diagonal = 1 : i64, operand_names = ["self"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = "aten.add.Tensor"(%sc, %pad) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%a) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %o = "aten.matmul.default"(%p, %v) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  "func.return"(%o) : (tensor<1x4x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>, sym_name = "not_causal_constant"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %k: tensor<1x4x4x8xf32>, %v: tensor<1x4x4x8xf32>):
  %kt = "aten.transpose.int"(%k) {dim0 = 2 : i64, dim1 = 3 : i64, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %s = "aten.matmul.default"(%q, %kt) {operand_names = ["self", "other"]} : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = "aten.full.default"() {size = array<i64: 4, 4>, fill_value = -3.4028234663852886E+38 : f64, dtype = "f32", operand_names = []} : () -> tensor<4x4xf32>
  %mt = "aten.triu.default"(%m) {diagonal = 2 : i64, operand_names = ["self"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = "aten.add.Tensor"(%sc, %mt) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%a) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %o = "aten.matmul.default"(%p, %v) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  "func.return"(%o) : (tensor<1x4x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>, sym_name = "softmax_not_last"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %k: tensor<1x4x4x8xf32>, %v: tensor<1x4x4x8xf32>):
  %kt = "aten.transpose.int"(%k) {dim0 = 2 : i64, dim1 = 3 : i64, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %s = "aten.matmul.default"(%q, %kt) {operand_names = ["self", "other"]} : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = "aten.full.default"() {size = array<i64: 4, 4>, fill_value = -3.4028234663852886E+38 : f64, dtype = "f32", operand_names = []} : () -> tensor<4x4xf32>
  %mt = "aten.triu.default"(%m) {diagonal = 1 : i64, operand_names = ["self"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = "aten.add.Tensor"(%sc, %mt) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%a) {dim = 2 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %o = "aten.matmul.default"(%p, %v) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  "func.return"(%o) : (tensor<1x4x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x4xf32>), sym_name = "scores_read_outside"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %k: tensor<1x4x4x8xf32>, %v: tensor<1x4x4x8xf32>):
  %kt = "aten.transpose.int"(%k) {dim0 = 2 : i64, dim1 = 3 : i64, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %s = "aten.matmul.default"(%q, %kt) {operand_names = ["self", "other"]} : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = "aten.full.default"() {size = array<i64: 4, 4>, fill_value = -3.4028234663852886E+38 : f64, dtype = "f32", operand_names = []} : () -> tensor<4x4xf32>
  %mt = "aten.triu.default"(%m) {diagonal = 1 : i64, operand_names = ["self"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = "aten.add.Tensor"(%sc, %mt) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%a) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %o = "aten.matmul.default"(%p, %v) {operand_names = ["self", "other"]} : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  "func.return"(%o, %sc) : (tensor<1x4x4x8xf32>, tensor<1x4x4x4xf32>) -> ()
}) : () -> ()

// CHECK-LABEL: sym_name = "bmm_gqa"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x4x8xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[Q]], [[K]], [[V]]) {composite_attributes = {enable_gqa = true, operand_names = ["query", "key", "value"], scale = 0.35355338454246521 : f64}, decomposition = @[[BMM:aten.scaled_dot_product_attention.default.impl_[0-9]+]]
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "bmm_output_left_collapsed"
// CHECK-NOT: scaled_dot_product_attention
// CHECK: "func.return"

// CHECK-LABEL: sym_name = "merged_key_transpose"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[KB:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[V:%arg[0-9]+]]: tensor<1x4x4x8xf32>):
// CHECK-NEXT: [[K:%[0-9]+]] = "stablehlo.transpose"([[KB]]) {permutation = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[Q]], [[K]], [[V]]) {composite_attributes = {operand_names = ["query", "key", "value"], scale = 0.35355338454246521 : f64}, decomposition = @[[MKT:aten.scaled_dot_product_attention.default.impl_[0-9]+]]
// CHECK-NEXT: "func.return"([[O]])

// With enable_gqa, the decomposition holds no repeat of K or V: both products run
// over groups of query heads ([B, Hkv, G, S, D]) and the unrepeated key and value.
// CHECK: sym_name = "[[GQA]]", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[DQ:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[DK:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[DV:%arg[0-9]+]]: tensor<1x2x4x8xf32>):
// CHECK-NEXT: [[QG:%[0-9]+]] = "stablehlo.reshape"([[DQ]]) : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x4x8xf32>
// CHECK-NEXT: "stablehlo.dot_general"([[QG]], [[DK]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [3]>
// CHECK-NOT: "stablehlo.broadcast_in_dim"({{.*}}-> tensor<1x2x2x4x8xf32>
// CHECK: "stablehlo.dot_general"(%{{[0-9]+}}, [[DV]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [2]>
// CHECK-NEXT: "stablehlo.reshape"({{.*}}) : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT: "func.return"
// CHECK: sym_name = "[[BMM]]", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[DQ:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[DK:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[DV:%arg[0-9]+]]: tensor<1x2x4x8xf32>):
// CHECK-NEXT: [[QG:%[0-9]+]] = "stablehlo.reshape"([[DQ]]) : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x4x8xf32>
// CHECK-NEXT: "stablehlo.dot_general"([[QG]], [[DK]])
// CHECK-NOT: "stablehlo.broadcast_in_dim"({{.*}}-> tensor<1x2x2x4x8xf32>
// CHECK: "stablehlo.dot_general"(%{{[0-9]+}}, [[DV]])
// CHECK-NEXT: "stablehlo.reshape"({{.*}}) : (tensor<1x2x2x4x8xf32>) -> tensor<4x4x8xf32>

// The merged transpose's remaining swap is inside the decomposition.
// CHECK: sym_name = "[[MKT]]", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[DQ:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[DK:%arg[0-9]+]]: tensor<1x4x4x8xf32>, [[DV:%arg[0-9]+]]: tensor<1x4x4x8xf32>):
// CHECK: "stablehlo.transpose"([[DK]]) {permutation = array<i64: 0, 1, 3, 2>}

// Core ATen's bmm form: reshapes around 3-d matmuls, K transposed before its reshape,
// the repeat_kv of V reshaped straight to 3-d.
"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>, sym_name = "bmm_gqa"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>):
  %kr = "aten.unsqueeze.default"(%k) {dim = 2 : i64, operand_names = ["self"]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %ke = "aten.expand.default"(%kr) {size = array<i64: 1, 2, 2, 4, 8>, operand_names = ["self"]} : (tensor<1x2x1x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %k4 = "aten.view.default"(%ke) {size = array<i64: 1, 4, 4, 8>, operand_names = ["self"]} : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %vr = "aten.unsqueeze.default"(%v) {dim = 2 : i64, operand_names = ["self"]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %ve = "aten.expand.default"(%vr) {size = array<i64: 1, 2, 2, 4, 8>, operand_names = ["self"]} : (tensor<1x2x1x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %v3 = "aten.view.default"(%ve) {size = array<i64: 4, 4, 8>, operand_names = ["self"]} : (tensor<1x2x2x4x8xf32>) -> tensor<4x4x8xf32>
  %kt = "aten.transpose.int"(%k4) {dim0 = -2 : i64, dim1 = -1 : i64, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %q3 = "aten.view.default"(%q) {size = array<i64: 4, 4, 8>, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<4x4x8xf32>
  %kt3 = "aten.view.default"(%kt) {size = array<i64: 4, 8, 4>, operand_names = ["self"]} : (tensor<1x4x8x4xf32>) -> tensor<4x8x4xf32>
  %s3 = "aten.bmm.default"(%q3, %kt3) {operand_names = ["self", "mat2"]} : (tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<4x4x4xf32>
  %s = "aten.view.default"(%s3) {size = array<i64: 1, 4, 4, 4>, operand_names = ["self"]} : (tensor<4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%sc) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p3 = "aten.view.default"(%p) {size = array<i64: 4, 4, 4>, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<4x4x4xf32>
  %o3 = "aten.bmm.default"(%p3, %v3) {operand_names = ["self", "mat2"]} : (tensor<4x4x4xf32>, tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  %o = "aten.view.default"(%o3) {size = array<i64: 1, 4, 4, 8>, operand_names = ["self"]} : (tensor<4x4x8xf32>) -> tensor<1x4x4x8xf32>
  "func.return"(%o) : (tensor<1x4x4x8xf32>) -> ()
}) : () -> ()

// The bmm form with a reshape that does not restore the batch dimensions.
"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<4x4x8xf32>, sym_name = "bmm_output_left_collapsed"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %k: tensor<1x4x4x8xf32>, %v: tensor<1x4x4x8xf32>):
  %kt = "aten.transpose.int"(%k) {dim0 = -2 : i64, dim1 = -1 : i64, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %q3 = "aten.view.default"(%q) {size = array<i64: 4, 4, 8>, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<4x4x8xf32>
  %kt3 = "aten.view.default"(%kt) {size = array<i64: 4, 8, 4>, operand_names = ["self"]} : (tensor<1x4x8x4xf32>) -> tensor<4x8x4xf32>
  %s3 = "aten.bmm.default"(%q3, %kt3) {operand_names = ["self", "mat2"]} : (tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<4x4x4xf32>
  %s = "aten.view.default"(%s3) {size = array<i64: 1, 4, 4, 4>, operand_names = ["self"]} : (tensor<4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%sc) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p3 = "aten.view.default"(%p) {size = array<i64: 4, 4, 4>, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<4x4x4xf32>
  %v3 = "aten.view.default"(%v) {size = array<i64: 4, 4, 8>, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<4x4x8xf32>
  %o3 = "aten.bmm.default"(%p3, %v3) {operand_names = ["self", "mat2"]} : (tensor<4x4x4xf32>, tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  "func.return"(%o3) : (tensor<4x4x8xf32>) -> ()
}) : () -> ()

// GPT-2's form: K as [B, S, H, D], its head transpose and the transpose of the
// product merged into one ([0, 2, 3, 1]): the key operand is a new transpose of it
// to [B, H, S, D].
"func.func"() <{function_type = (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>, sym_name = "merged_key_transpose"}> ({
^bb0(%q: tensor<1x4x4x8xf32>, %kbshd: tensor<1x4x4x8xf32>, %v: tensor<1x4x4x8xf32>):
  %kt = "aten.permute.default"(%kbshd) {dims = array<i64: 0, 2, 3, 1>, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %q3 = "aten.view.default"(%q) {size = array<i64: 4, 4, 8>, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<4x4x8xf32>
  %kt3 = "aten.view.default"(%kt) {size = array<i64: 4, 8, 4>, operand_names = ["self"]} : (tensor<1x4x8x4xf32>) -> tensor<4x8x4xf32>
  %s3 = "aten.bmm.default"(%q3, %kt3) {operand_names = ["self", "mat2"]} : (tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<4x4x4xf32>
  %s = "aten.view.default"(%s3) {size = array<i64: 1, 4, 4, 4>, operand_names = ["self"]} : (tensor<4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %sc = "aten.mul.Tensor"(%s) {other = 0.35355339059327379 : f64, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "aten._softmax.default"(%sc) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p3 = "aten.view.default"(%p) {size = array<i64: 4, 4, 4>, operand_names = ["self"]} : (tensor<1x4x4x4xf32>) -> tensor<4x4x4xf32>
  %v3 = "aten.view.default"(%v) {size = array<i64: 4, 4, 8>, operand_names = ["self"]} : (tensor<1x4x4x8xf32>) -> tensor<4x4x8xf32>
  %o3 = "aten.bmm.default"(%p3, %v3) {operand_names = ["self", "mat2"]} : (tensor<4x4x4xf32>, tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  %o = "aten.view.default"(%o3) {size = array<i64: 1, 4, 4, 8>, operand_names = ["self"]} : (tensor<4x4x8xf32>) -> tensor<1x4x4x8xf32>
  "func.return"(%o) : (tensor<1x4x4x8xf32>) -> ()
}) : () -> ()
