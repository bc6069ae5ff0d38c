// Rotary position embeddings in stablehlo-outline-composites
// (compiler/src/passes/composites/rotary.rs), on the -O2 pipeline from ATen ops as
// Hugging Face's apply_rotary_pos_emb writes them: q * cos + rotate_half(q) * sin,
// rotate_half(q) = cat(-q[..., d/2:], q[..., :d/2]), and GPT-J's interleaved form
// (interleaved = true). The composite takes q and the cos/sin tables broadcast to q's
// shape (the broadcasts stay outside). Partial
// rotary embeddings match on the rotated slice. It must not fire when the negation is
// on the other half, the split is off the middle, or the rotation is read outside.
//
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites,lower-aten-to-stablehlo,stablehlo-fold-constants,stablehlo-simplify,stablehlo-fold-transpose,stablehlo-dce,stablehlo-cse,stablehlo-outline-composites,stablehlo-dce,verify-stablehlo | FileCheck %s

// CHECK-LABEL: sym_name = "rope_rotate_half"
// CHECK: ^bb0([[Q:%arg[0-9]+]]: tensor<2x4x8x8xf32>, [[COS:%arg[0-9]+]]: tensor<1x8x8xf32>, [[SIN:%arg[0-9]+]]: tensor<1x8x8xf32>):
// CHECK-DAG: [[C4:%[0-9]+]] = "stablehlo.reshape"([[COS]])
// CHECK-DAG: [[S4:%[0-9]+]] = "stablehlo.reshape"([[SIN]])
// CHECK-DAG: [[C:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[C4]]) {{.*}} -> tensor<2x4x8x8xf32>
// CHECK-DAG: [[S:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[S4]]) {{.*}} -> tensor<2x4x8x8xf32>
// CHECK: [[O:%[0-9]+]] = "stablehlo.composite"([[Q]], [[C]], [[S]]) {composite_attributes = {interleaved = false}, decomposition = @[[ROPE0:tpuc.rotary_embedding.impl_[0-9]+]], name = "tpuc.rotary_embedding", version = 0 : i32} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "partial_rotary"
// CHECK: [[QR:%[0-9]+]] = "stablehlo.slice"(%arg{{[0-9]+}}) {limit_indices = array<i64: 2, 4, 8, 4>
// CHECK: [[E:%[0-9]+]] = "stablehlo.composite"([[QR]], %{{[0-9]+}}, %{{[0-9]+}}) {composite_attributes = {interleaved = false}, {{.*}}name = "tpuc.rotary_embedding"{{.*}} -> tensor<2x4x8x4xf32>
// CHECK: "stablehlo.concatenate"([[E]],

// CHECK-LABEL: sym_name = "negation_on_the_other_half"
// CHECK-NOT: tpuc.rotary_embedding
// CHECK: "func.return"

// CHECK-LABEL: sym_name = "split_off_center"
// CHECK-NOT: tpuc.rotary_embedding
// CHECK: "func.return"

// CHECK-LABEL: sym_name = "rotation_read_outside"
// CHECK-NOT: tpuc.rotary_embedding
// CHECK: "func.return"

// GPT-J's interleaved rotation: stack((-x[..., 1::2], x[..., ::2]), -1) flattened.
// CHECK-LABEL: sym_name = "rope_every_two"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[COS:%arg[0-9]+]]: tensor<1x2x4x8xf32>, [[SIN:%arg[0-9]+]]: tensor<1x2x4x8xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[X]], [[COS]], [[SIN]]) {composite_attributes = {interleaved = true}, decomposition = @tpuc.rotary_embedding.impl_{{[0-9]+}}, name = "tpuc.rotary_embedding"
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "every_two_negation_on_even"
// CHECK-NOT: tpuc.rotary_embedding
// CHECK: "func.return"

// The decomposition is the block as it was.
// CHECK: sym_name = "[[ROPE0]]", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x8x8xf32>, [[C:%arg[0-9]+]]: tensor<2x4x8x8xf32>, [[S:%arg[0-9]+]]: tensor<2x4x8x8xf32>):
// CHECK-NEXT: [[XC:%[0-9]+]] = "stablehlo.multiply"([[X]], [[C]])
// CHECK-NEXT: [[LO:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 2, 4, 8, 4>, start_indices = array<i64: 0, 0, 0, 0>
// CHECK-NEXT: [[HI:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 2, 4, 8, 8>, start_indices = array<i64: 0, 0, 0, 4>
// CHECK-NEXT: [[N:%[0-9]+]] = "stablehlo.negate"([[HI]])
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.concatenate"([[N]], [[LO]]) {dimension = 3 : i64}
// CHECK-NEXT: [[RS:%[0-9]+]] = "stablehlo.multiply"([[R]], [[S]])
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.add"([[XC]], [[RS]])
// CHECK-NEXT: "func.return"([[O]])

"func.func"() <{function_type = (tensor<2x4x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<2x4x8x8xf32>, sym_name = "rope_rotate_half"}> ({
^bb0(%q: tensor<2x4x8x8xf32>, %cos: tensor<1x8x8xf32>, %sin: tensor<1x8x8xf32>):
  %c = "aten.unsqueeze.default"(%cos) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %s = "aten.unsqueeze.default"(%sin) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %qc = "aten.mul.Tensor"(%q, %c) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %x1 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 4 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %x2 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 4 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %n = "aten.neg.default"(%x2) {operand_names = ["self"]} : (tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  %r = "aten.cat.default"(%n, %x1) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %rs = "aten.mul.Tensor"(%r, %s) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o = "aten.add.Tensor"(%qc, %rs) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  "func.return"(%o) : (tensor<2x4x8x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8x8xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<2x4x8x8xf32>, sym_name = "partial_rotary"}> ({
^bb0(%q: tensor<2x4x8x8xf32>, %cos: tensor<1x8x4xf32>, %sin: tensor<1x8x4xf32>):
  %c = "aten.unsqueeze.default"(%cos) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x4xf32>) -> tensor<1x1x8x4xf32>
  %s = "aten.unsqueeze.default"(%sin) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x4xf32>) -> tensor<1x1x8x4xf32>
  %qr = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 4 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %qp = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 4 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %qc = "aten.mul.Tensor"(%qr, %c) {operand_names = ["self", "other"]} : (tensor<2x4x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<2x4x8x4xf32>
  %x1 = "aten.slice.Tensor"(%qr) {dim = 3 : i64, end = 2 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x8x4xf32>) -> tensor<2x4x8x2xf32>
  %x2 = "aten.slice.Tensor"(%qr) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 2 : i64} : (tensor<2x4x8x4xf32>) -> tensor<2x4x8x2xf32>
  %n = "aten.neg.default"(%x2) {operand_names = ["self"]} : (tensor<2x4x8x2xf32>) -> tensor<2x4x8x2xf32>
  %r = "aten.cat.default"(%n, %x1) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>) -> tensor<2x4x8x4xf32>
  %rs = "aten.mul.Tensor"(%r, %s) {operand_names = ["self", "other"]} : (tensor<2x4x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<2x4x8x4xf32>
  %e = "aten.add.Tensor"(%qc, %rs) {operand_names = ["self", "other"]} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  %o = "aten.cat.default"(%e, %qp) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  "func.return"(%o) : (tensor<2x4x8x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<2x4x8x8xf32>, sym_name = "negation_on_the_other_half"}> ({
^bb0(%q: tensor<2x4x8x8xf32>, %cos: tensor<1x8x8xf32>, %sin: tensor<1x8x8xf32>):
  %c = "aten.unsqueeze.default"(%cos) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %s = "aten.unsqueeze.default"(%sin) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %qc = "aten.mul.Tensor"(%q, %c) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %x1 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 4 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %x2 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 4 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %n = "aten.neg.default"(%x1) {operand_names = ["self"]} : (tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  %r = "aten.cat.default"(%n, %x2) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %rs = "aten.mul.Tensor"(%r, %s) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o = "aten.add.Tensor"(%qc, %rs) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  "func.return"(%o) : (tensor<2x4x8x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<2x4x8x8xf32>, sym_name = "split_off_center"}> ({
^bb0(%q: tensor<2x4x8x8xf32>, %cos: tensor<1x8x8xf32>, %sin: tensor<1x8x8xf32>):
  %c = "aten.unsqueeze.default"(%cos) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %s = "aten.unsqueeze.default"(%sin) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %qc = "aten.mul.Tensor"(%q, %c) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %x1 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 3 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x3xf32>
  %x2 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 3 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x5xf32>
  %n = "aten.neg.default"(%x2) {operand_names = ["self"]} : (tensor<2x4x8x5xf32>) -> tensor<2x4x8x5xf32>
  %r = "aten.cat.default"(%n, %x1) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x4x8x5xf32>, tensor<2x4x8x3xf32>) -> tensor<2x4x8x8xf32>
  %rs = "aten.mul.Tensor"(%r, %s) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o = "aten.add.Tensor"(%qc, %rs) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  "func.return"(%o) : (tensor<2x4x8x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>), sym_name = "rotation_read_outside"}> ({
^bb0(%q: tensor<2x4x8x8xf32>, %cos: tensor<1x8x8xf32>, %sin: tensor<1x8x8xf32>):
  %c = "aten.unsqueeze.default"(%cos) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %s = "aten.unsqueeze.default"(%sin) {dim = 1 : i64, operand_names = ["self"]} : (tensor<1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %qc = "aten.mul.Tensor"(%q, %c) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %x1 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 4 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %x2 = "aten.slice.Tensor"(%q) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 4 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x4xf32>
  %n = "aten.neg.default"(%x2) {operand_names = ["self"]} : (tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  %r = "aten.cat.default"(%n, %x1) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
  %rs = "aten.mul.Tensor"(%r, %s) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %o = "aten.add.Tensor"(%qc, %rs) {operand_names = ["self", "other"]} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  "func.return"(%o, %r) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>, sym_name = "rope_every_two"}> ({
^bb0(%x: tensor<1x2x4x8xf32>, %cos: tensor<1x2x4x8xf32>, %sin: tensor<1x2x4x8xf32>):
  %xc = "aten.mul.Tensor"(%x, %cos) {operand_names = ["self", "other"]} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = "aten.slice.Tensor"(%x) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 0 : i64, step = 2 : i64} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %x2 = "aten.slice.Tensor"(%x) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 1 : i64, step = 2 : i64} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %n = "aten.neg.default"(%x2) {operand_names = ["self"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %nu = "aten.unsqueeze.default"(%n) {dim = 4 : i64, operand_names = ["self"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x1xf32>
  %x1u = "aten.unsqueeze.default"(%x1) {dim = 4 : i64, operand_names = ["self"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x1xf32>
  %st = "aten.cat.default"(%nu, %x1u) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<1x2x4x4x1xf32>, tensor<1x2x4x4x1xf32>) -> tensor<1x2x4x4x2xf32>
  %r = "aten.view.default"(%st) {size = array<i64: 1, 2, 4, 8>, operand_names = ["self"]} : (tensor<1x2x4x4x2xf32>) -> tensor<1x2x4x8xf32>
  %rs = "aten.mul.Tensor"(%r, %sin) {operand_names = ["self", "other"]} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = "aten.add.Tensor"(%xc, %rs) {operand_names = ["self", "other"]} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  "func.return"(%o) : (tensor<1x2x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>, sym_name = "every_two_negation_on_even"}> ({
^bb0(%x: tensor<1x2x4x8xf32>, %cos: tensor<1x2x4x8xf32>, %sin: tensor<1x2x4x8xf32>):
  %xc = "aten.mul.Tensor"(%x, %cos) {operand_names = ["self", "other"]} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = "aten.slice.Tensor"(%x) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 0 : i64, step = 2 : i64} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %x2 = "aten.slice.Tensor"(%x) {dim = 3 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = 1 : i64, step = 2 : i64} : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %n = "aten.neg.default"(%x1) {operand_names = ["self"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %nu = "aten.unsqueeze.default"(%n) {dim = 4 : i64, operand_names = ["self"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x1xf32>
  %x2u = "aten.unsqueeze.default"(%x2) {dim = 4 : i64, operand_names = ["self"]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x1xf32>
  %st = "aten.cat.default"(%nu, %x2u) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<1x2x4x4x1xf32>, tensor<1x2x4x4x1xf32>) -> tensor<1x2x4x4x2xf32>
  %r = "aten.view.default"(%st) {size = array<i64: 1, 2, 4, 8>, operand_names = ["self"]} : (tensor<1x2x4x4x2xf32>) -> tensor<1x2x4x8xf32>
  %rs = "aten.mul.Tensor"(%r, %sin) {operand_names = ["self", "other"]} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = "aten.add.Tensor"(%xc, %rs) {operand_names = ["self", "other"]} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  "func.return"(%o) : (tensor<1x2x4x8xf32>) -> ()
}) : () -> ()
