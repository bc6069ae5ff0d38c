// aten-fold-repeat-kv (compiler/src/passes/fold_repeat_kv.rs): SDPA whose key and value
// are Hugging Face's repeat_kv (unsqueeze at the head dimension + 1, expand along it,
// reshape/view/_unsafe_view into the heads; Core ATen's clone before the view) of the
// same n reads the unrepeated key and value with enable_gqa = true. Left alone: key and
// value repeated a different number of times, a repeat that does not expand only the
// new dimension, an attention already grouped, and anything else.
//
// RUN: tpuc opt %s --pass-pipeline=aten-fold-repeat-kv | FileCheck %s
// Lowered after the fold, the attention never repeats the key or value:
// RUN: tpuc opt %s --pass-pipeline=aten-fold-repeat-kv,lower-aten-to-stablehlo,stablehlo-dce,verify-stablehlo | FileCheck %s --check-prefix=LOWERED

// The as-exported form (reshape), 4 query heads over 2 kv heads.
// CHECK-LABEL: sym_name = "repeat_kv_reshape"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<1x4x3x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x5x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x5x8xf32>)
// CHECK: "aten.scaled_dot_product_attention.default"([[Q]], [[K]], [[V]]) {enable_gqa = true, operand_names = ["query", "key", "value"], scale = 1.250000e-01 : f64} : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32>
// LOWERED-LABEL: sym_name = "repeat_kv_reshape"
// LOWERED: ^bb0({{%arg[0-9]+}}: tensor<1x4x3x8xf32>, [[K:%arg[0-9]+]]: tensor<1x2x5x8xf32>, [[V:%arg[0-9]+]]: tensor<1x2x5x8xf32>)
// LOWERED-NOT: tensor<1x4x5x8xf32>
// LOWERED: "stablehlo.dot_general"({{%[0-9]+}}, {{%[0-9]+}}) {{.*}} : (tensor<1x2x2x3x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x2x3x5xf32>
// LOWERED-NOT: tensor<1x4x5x8xf32>
// LOWERED: "stablehlo.dot_general"({{%[0-9]+}}, [[V]]) {{.*}} : (tensor<1x2x2x3x5xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x2x3x8xf32>
// LOWERED: "func.return"
"func.func"() <{function_type = (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32>, sym_name = "repeat_kv_reshape"}> ({
^bb0(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>):
  %ku = "aten.unsqueeze.default"(%k) {dim = 2 : i64, operand_names = ["self"]} : (tensor<1x2x5x8xf32>) -> tensor<1x2x1x5x8xf32> loc("unsqueeze")
  %ke = "aten.expand.default"(%ku) {operand_names = ["self"], size = array<i64: 1, 2, 2, 5, 8>} : (tensor<1x2x1x5x8xf32>) -> tensor<1x2x2x5x8xf32> loc("expand")
  %kr = "aten.reshape.default"(%ke) {operand_names = ["self"], shape = array<i64: 1, 4, 5, 8>} : (tensor<1x2x2x5x8xf32>) -> tensor<1x4x5x8xf32> loc("reshape")
  %vu = "aten.unsqueeze.default"(%v) {dim = 2 : i64, operand_names = ["self"]} : (tensor<1x2x5x8xf32>) -> tensor<1x2x1x5x8xf32> loc("unsqueeze_1")
  %ve = "aten.expand.default"(%vu) {operand_names = ["self"], size = array<i64: 1, 2, 2, 5, 8>} : (tensor<1x2x1x5x8xf32>) -> tensor<1x2x2x5x8xf32> loc("expand_1")
  %vr = "aten.reshape.default"(%ve) {operand_names = ["self"], shape = array<i64: 1, 4, 5, 8>} : (tensor<1x2x2x5x8xf32>) -> tensor<1x4x5x8xf32> loc("reshape_1")
  %0 = "aten.scaled_dot_product_attention.default"(%q, %kr, %vr) {operand_names = ["query", "key", "value"], scale = 1.250000e-01 : f64} : (tensor<1x4x3x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>) -> tensor<1x4x3x8xf32> loc("sdpa")
  "func.return"(%0) : (tensor<1x4x3x8xf32>) -> ()
}) : () -> ()

// Core ATen's form: clone, then _unsafe_view (negative unsqueeze dim); with a mask.
// CHECK-LABEL: sym_name = "repeat_kv_core_aten"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x6x1x4xf32>, [[K:%arg[0-9]+]]: tensor<2x2x7x4xf32>, [[V:%arg[0-9]+]]: tensor<2x2x7x4xf32>, [[M:%arg[0-9]+]]: tensor<2x1x1x7xi1>)
// CHECK: "aten.scaled_dot_product_attention.default"([[Q]], [[K]], [[V]], [[M]]) {enable_gqa = true, operand_names = ["query", "key", "value", "attn_mask"]}
"func.func"() <{function_type = (tensor<2x6x1x4xf32>, tensor<2x2x7x4xf32>, tensor<2x2x7x4xf32>, tensor<2x1x1x7xi1>) -> tensor<2x6x1x4xf32>, sym_name = "repeat_kv_core_aten"}> ({
^bb0(%q: tensor<2x6x1x4xf32>, %k: tensor<2x2x7x4xf32>, %v: tensor<2x2x7x4xf32>, %m: tensor<2x1x1x7xi1>):
  %ku = "aten.unsqueeze.default"(%k) {dim = -3 : i64, operand_names = ["self"]} : (tensor<2x2x7x4xf32>) -> tensor<2x2x1x7x4xf32> loc("unsqueeze")
  %ke = "aten.expand.default"(%ku) {operand_names = ["self"], size = array<i64: 2, 2, 3, 7, 4>} : (tensor<2x2x1x7x4xf32>) -> tensor<2x2x3x7x4xf32> loc("expand")
  %kc = "aten.clone.default"(%ke) {memory_format = 0 : i64, operand_names = ["self"]} : (tensor<2x2x3x7x4xf32>) -> tensor<2x2x3x7x4xf32> loc("clone")
  %kr = "aten._unsafe_view.default"(%kc) {operand_names = ["self"], size = array<i64: 2, 6, 7, 4>} : (tensor<2x2x3x7x4xf32>) -> tensor<2x6x7x4xf32> loc("view")
  %vu = "aten.unsqueeze.default"(%v) {dim = 2 : i64, operand_names = ["self"]} : (tensor<2x2x7x4xf32>) -> tensor<2x2x1x7x4xf32> loc("unsqueeze_1")
  %ve = "aten.expand.default"(%vu) {operand_names = ["self"], size = array<i64: 2, 2, 3, 7, 4>} : (tensor<2x2x1x7x4xf32>) -> tensor<2x2x3x7x4xf32> loc("expand_1")
  %vc = "aten.clone.default"(%ve) {memory_format = 0 : i64, operand_names = ["self"]} : (tensor<2x2x3x7x4xf32>) -> tensor<2x2x3x7x4xf32> loc("clone_1")
  %vr = "aten.view.default"(%vc) {operand_names = ["self"], size = array<i64: 2, 6, 7, 4>} : (tensor<2x2x3x7x4xf32>) -> tensor<2x6x7x4xf32> loc("view_1")
  %0 = "aten.scaled_dot_product_attention.default"(%q, %kr, %vr, %m) {operand_names = ["query", "key", "value", "attn_mask"]} : (tensor<2x6x1x4xf32>, tensor<2x6x7x4xf32>, tensor<2x6x7x4xf32>, tensor<2x1x1x7xi1>) -> tensor<2x6x1x4xf32> loc("sdpa")
  "func.return"(%0) : (tensor<2x6x1x4xf32>) -> ()
}) : () -> ()

// The key repeated twice, the value used as it is (4 heads): not folded.
// CHECK-LABEL: sym_name = "only_key_repeated"
// CHECK: "aten.scaled_dot_product_attention.default"
// CHECK-NOT: enable_gqa
// CHECK-SAME: (tensor<1x4x3x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>)
"func.func"() <{function_type = (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x4x5x8xf32>) -> tensor<1x4x3x8xf32>, sym_name = "only_key_repeated"}> ({
^bb0(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x4x5x8xf32>):
  %ku = "aten.unsqueeze.default"(%k) {dim = 2 : i64, operand_names = ["self"]} : (tensor<1x2x5x8xf32>) -> tensor<1x2x1x5x8xf32> loc("unsqueeze")
  %ke = "aten.expand.default"(%ku) {operand_names = ["self"], size = array<i64: 1, 2, 2, 5, 8>} : (tensor<1x2x1x5x8xf32>) -> tensor<1x2x2x5x8xf32> loc("expand")
  %kr = "aten.reshape.default"(%ke) {operand_names = ["self"], shape = array<i64: 1, 4, 5, 8>} : (tensor<1x2x2x5x8xf32>) -> tensor<1x4x5x8xf32> loc("reshape")
  %0 = "aten.scaled_dot_product_attention.default"(%q, %kr, %v) {operand_names = ["query", "key", "value"]} : (tensor<1x4x3x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>) -> tensor<1x4x3x8xf32> loc("sdpa")
  "func.return"(%0) : (tensor<1x4x3x8xf32>) -> ()
}) : () -> ()

// Unsqueezed after the sequence dimension ([B, H, S, 1, D] expanded): another layout
// (head h does not read kv head h / n), not folded.
// CHECK-LABEL: sym_name = "other_layout"
// CHECK: "aten.scaled_dot_product_attention.default"
// CHECK-NOT: enable_gqa
"func.func"() <{function_type = (tensor<1x4x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>) -> tensor<1x4x2x8xf32>, sym_name = "other_layout"}> ({
^bb0(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x2x8xf32>, %v: tensor<1x2x2x8xf32>):
  %ku = "aten.unsqueeze.default"(%k) {dim = 3 : i64, operand_names = ["self"]} : (tensor<1x2x2x8xf32>) -> tensor<1x2x2x1x8xf32> loc("unsqueeze")
  %ke = "aten.expand.default"(%ku) {operand_names = ["self"], size = array<i64: 1, 2, 2, 2, 8>} : (tensor<1x2x2x1x8xf32>) -> tensor<1x2x2x2x8xf32> loc("expand")
  %kr = "aten.reshape.default"(%ke) {operand_names = ["self"], shape = array<i64: 1, 4, 2, 8>} : (tensor<1x2x2x2x8xf32>) -> tensor<1x4x2x8xf32> loc("reshape")
  %vu = "aten.unsqueeze.default"(%v) {dim = 3 : i64, operand_names = ["self"]} : (tensor<1x2x2x8xf32>) -> tensor<1x2x2x1x8xf32> loc("unsqueeze_1")
  %ve = "aten.expand.default"(%vu) {operand_names = ["self"], size = array<i64: 1, 2, 2, 2, 8>} : (tensor<1x2x2x1x8xf32>) -> tensor<1x2x2x2x8xf32> loc("expand_1")
  %vr = "aten.reshape.default"(%ve) {operand_names = ["self"], shape = array<i64: 1, 4, 2, 8>} : (tensor<1x2x2x2x8xf32>) -> tensor<1x4x2x8xf32> loc("reshape_1")
  %0 = "aten.scaled_dot_product_attention.default"(%q, %kr, %vr) {operand_names = ["query", "key", "value"]} : (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32> loc("sdpa")
  "func.return"(%0) : (tensor<1x4x2x8xf32>) -> ()
}) : () -> ()
