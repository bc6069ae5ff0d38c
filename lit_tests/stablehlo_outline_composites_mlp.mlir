// Gated MLPs (SwiGLU, GeGLU) in stablehlo-outline-composites
// (compiler/src/passes/composites/mlp.rs), on the -O2 pipeline from ATen ops:
// down(act(gate(x)) * up(x)) with bias-free Linears becomes one tpuc.gated_mlp
// composite taking x and the three weights ([out, in]). Linears in Core ATen's
// view/mm/view form and as aten.linear both match; so do the SiLU and GELU composites
// of aten-outline-composites and SiLU written out as g * sigmoid(g), and Phi-3's
// fused gate/up projection (fused_gate_up = true). It must not fire on a projection
// with a bias, a weight in [in, out] layout, gate and up reading different inputs or
// swapped halves, or an intermediate read outside.
//
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites,lower-aten-to-stablehlo,stablehlo-fold-constants,stablehlo-simplify,stablehlo-fold-transpose,stablehlo-dce,stablehlo-cse,stablehlo-outline-composites,stablehlo-dce,verify-stablehlo | FileCheck %s

// CHECK-LABEL: sym_name = "swiglu_core_aten"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x8xf32>, [[WG:%arg[0-9]+]]: tensor<16x8xf32>, [[WU:%arg[0-9]+]]: tensor<16x8xf32>, [[WD:%arg[0-9]+]]: tensor<8x16xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[X]], [[WG]], [[WU]], [[WD]]) {composite_attributes = {activation = "silu"}, decomposition = @[[MLP0:tpuc.gated_mlp.impl_[0-9]+]], name = "tpuc.gated_mlp", version = 0 : i32} : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "geglu_linear"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x8xf32>, [[WG:%arg[0-9]+]]: tensor<16x8xf32>, [[WU:%arg[0-9]+]]: tensor<16x8xf32>, [[WD:%arg[0-9]+]]: tensor<8x16xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[X]], [[WG]], [[WU]], [[WD]]) {composite_attributes = {activation = "gelu_tanh"}, decomposition = @tpuc.gated_mlp.impl_{{[0-9]+}}, name = "tpuc.gated_mlp"
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "gate_with_bias"
// CHECK-NOT: tpuc.gated_mlp
// CHECK: "func.return"

// CHECK-LABEL: sym_name = "gate_and_up_read_different_inputs"
// CHECK-NOT: tpuc.gated_mlp
// CHECK: "func.return"

// CHECK-LABEL: sym_name = "product_read_outside"
// CHECK-NOT: tpuc.gated_mlp
// CHECK: "func.return"

// CHECK-LABEL: sym_name = "swiglu_sigmoid_written_out"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x8xf32>, [[WG:%arg[0-9]+]]: tensor<16x8xf32>, [[WU:%arg[0-9]+]]: tensor<16x8xf32>, [[WD:%arg[0-9]+]]: tensor<8x16xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[X]], [[WG]], [[WU]], [[WD]]) {composite_attributes = {activation = "silu"}, decomposition = @tpuc.gated_mlp.impl_{{[0-9]+}}, name = "tpuc.gated_mlp"
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "gate_weight_in_out_layout"
// CHECK-NOT: tpuc.gated_mlp
// CHECK: "func.return"

// Phi-3's fused gate/up projection, split in halves (gate first).
// CHECK-LABEL: sym_name = "fused_gate_up"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x8xf32>, [[WGU:%arg[0-9]+]]: tensor<32x8xf32>, [[WD:%arg[0-9]+]]: tensor<8x16xf32>):
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.composite"([[X]], [[WGU]], [[WD]]) {composite_attributes = {activation = "silu", fused_gate_up = true}, decomposition = @tpuc.gated_mlp.impl_{{[0-9]+}}, name = "tpuc.gated_mlp"
// CHECK-NEXT: "func.return"([[O]])

// CHECK-LABEL: sym_name = "fused_halves_swapped"
// CHECK-NOT: tpuc.gated_mlp
// CHECK: "func.return"

// The decomposition holds the block as it was: the shared reshape of x, both
// projections, the activation composite, the product and the down projection.
// CHECK: sym_name = "[[MLP0]]", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x8xf32>, [[WG:%arg[0-9]+]]: tensor<16x8xf32>, [[WU:%arg[0-9]+]]: tensor<16x8xf32>, [[WD:%arg[0-9]+]]: tensor<8x16xf32>):
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: [[G:%[0-9]+]] = "stablehlo.dot_general"([[R]], [[WG]])
// CHECK-NEXT: [[G3:%[0-9]+]] = "stablehlo.reshape"([[G]])
// CHECK-NEXT: [[A:%[0-9]+]] = "stablehlo.composite"([[G3]]) {{.*}}name = "aten.silu.default"
// CHECK-NEXT: [[U:%[0-9]+]] = "stablehlo.dot_general"([[R]], [[WU]])
// CHECK-NEXT: [[U3:%[0-9]+]] = "stablehlo.reshape"([[U]])
// CHECK-NEXT: [[P:%[0-9]+]] = "stablehlo.multiply"([[A]], [[U3]])
// CHECK-NEXT: [[P2:%[0-9]+]] = "stablehlo.reshape"([[P]])
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[P2]], [[WD]])
// CHECK-NEXT: [[D3:%[0-9]+]] = "stablehlo.reshape"([[D]]) : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: "func.return"([[D3]])

"func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>, sym_name = "swiglu_core_aten"}> ({
^bb0(%x: tensor<2x4x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>):
  %x2 = "aten.view.default"(%x) {operand_names = ["self"], size = array<i64: 8, 8>} : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %wgt = "aten.permute.default"(%wg) {dims = array<i64: 1, 0>, operand_names = ["self"]} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %g = "aten.mm.default"(%x2, %wgt) {operand_names = ["self", "mat2"]} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %g3 = "aten.view.default"(%g) {operand_names = ["self"], size = array<i64: 2, 4, 16>} : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %a = "aten.silu.default"(%g3) {operand_names = ["self"]} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %x2u = "aten.view.default"(%x) {operand_names = ["self"], size = array<i64: 8, 8>} : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %wut = "aten.permute.default"(%wu) {dims = array<i64: 1, 0>, operand_names = ["self"]} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %u = "aten.mm.default"(%x2u, %wut) {operand_names = ["self", "mat2"]} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %u3 = "aten.view.default"(%u) {operand_names = ["self"], size = array<i64: 2, 4, 16>} : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %p = "aten.mul.Tensor"(%a, %u3) {operand_names = ["self", "other"]} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %p2 = "aten.view.default"(%p) {operand_names = ["self"], size = array<i64: 8, 16>} : (tensor<2x4x16xf32>) -> tensor<8x16xf32>
  %wdt = "aten.permute.default"(%wd) {dims = array<i64: 1, 0>, operand_names = ["self"]} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %d = "aten.mm.default"(%p2, %wdt) {operand_names = ["self", "mat2"]} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %d3 = "aten.view.default"(%d) {operand_names = ["self"], size = array<i64: 2, 4, 8>} : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
  "func.return"(%d3) : (tensor<2x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>, sym_name = "geglu_linear"}> ({
^bb0(%x: tensor<2x4x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>):
  %g = "aten.linear.default"(%x, %wg) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %a = "aten.gelu.default"(%g) {approximate = "tanh", operand_names = ["self"]} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %u = "aten.linear.default"(%x, %wu) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %p = "aten.mul.Tensor"(%a, %u) {operand_names = ["self", "other"]} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  "func.return"(%d) : (tensor<2x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>, sym_name = "gate_with_bias"}> ({
^bb0(%x: tensor<2x4x8xf32>, %wg: tensor<16x8xf32>, %bg: tensor<16xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>):
  %g = "aten.linear.default"(%x, %wg, %bg) {operand_names = ["input", "weight", "bias"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %a = "aten.silu.default"(%g) {operand_names = ["self"]} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %u = "aten.linear.default"(%x, %wu) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %p = "aten.mul.Tensor"(%a, %u) {operand_names = ["self", "other"]} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  "func.return"(%d) : (tensor<2x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>, sym_name = "gate_and_up_read_different_inputs"}> ({
^bb0(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>):
  %g = "aten.linear.default"(%x, %wg) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %a = "aten.silu.default"(%g) {operand_names = ["self"]} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %u = "aten.linear.default"(%y, %wu) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %p = "aten.mul.Tensor"(%a, %u) {operand_names = ["self", "other"]} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  "func.return"(%d) : (tensor<2x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x16xf32>), sym_name = "product_read_outside"}> ({
^bb0(%x: tensor<2x4x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>):
  %g = "aten.linear.default"(%x, %wg) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %a = "aten.silu.default"(%g) {operand_names = ["self"]} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %u = "aten.linear.default"(%x, %wu) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %p = "aten.mul.Tensor"(%a, %u) {operand_names = ["self", "other"]} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  "func.return"(%d, %p) : (tensor<2x4x8xf32>, tensor<2x4x16xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>, sym_name = "swiglu_sigmoid_written_out"}> ({
^bb0(%x: tensor<4x8xf32>, %wg: tensor<16x8xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>):
  %g = "aten.linear.default"(%x, %wg) {operand_names = ["input", "weight"]} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %s = "aten.sigmoid.default"(%g) {operand_names = ["self"]} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = "aten.mul.Tensor"(%g, %s) {operand_names = ["self", "other"]} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %u = "aten.linear.default"(%x, %wu) {operand_names = ["input", "weight"]} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %p = "aten.mul.Tensor"(%u, %a) {operand_names = ["self", "other"]} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  "func.return"(%d) : (tensor<4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>, sym_name = "gate_weight_in_out_layout"}> ({
^bb0(%x: tensor<4x8xf32>, %wg: tensor<8x16xf32>, %wu: tensor<16x8xf32>, %wd: tensor<8x16xf32>):
  %g = "aten.mm.default"(%x, %wg) {operand_names = ["self", "mat2"]} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = "aten.silu.default"(%g) {operand_names = ["self"]} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %u = "aten.linear.default"(%x, %wu) {operand_names = ["input", "weight"]} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %p = "aten.mul.Tensor"(%a, %u) {operand_names = ["self", "other"]} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  "func.return"(%d) : (tensor<4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<32x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>, sym_name = "fused_gate_up"}> ({
^bb0(%x: tensor<2x4x8xf32>, %wgu: tensor<32x8xf32>, %wd: tensor<8x16xf32>):
  %y = "aten.linear.default"(%x, %wgu) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<32x8xf32>) -> tensor<2x4x32xf32>
  %g = "aten.slice.Tensor"(%y) {dim = 2 : i64, end = 16 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x32xf32>) -> tensor<2x4x16xf32>
  %u = "aten.slice.Tensor"(%y) {dim = 2 : i64, end = 32 : i64, operand_names = ["self"], start = 16 : i64} : (tensor<2x4x32xf32>) -> tensor<2x4x16xf32>
  %a = "aten.silu.default"(%g) {operand_names = ["self"]} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %p = "aten.mul.Tensor"(%u, %a) {operand_names = ["self", "other"]} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  "func.return"(%d) : (tensor<2x4x8xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x4x8xf32>, tensor<32x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>, sym_name = "fused_halves_swapped"}> ({
^bb0(%x: tensor<2x4x8xf32>, %wgu: tensor<32x8xf32>, %wd: tensor<8x16xf32>):
  %y = "aten.linear.default"(%x, %wgu) {operand_names = ["input", "weight"]} : (tensor<2x4x8xf32>, tensor<32x8xf32>) -> tensor<2x4x32xf32>
  %g = "aten.slice.Tensor"(%y) {dim = 2 : i64, end = 32 : i64, operand_names = ["self"], start = 16 : i64} : (tensor<2x4x32xf32>) -> tensor<2x4x16xf32>
  %u = "aten.slice.Tensor"(%y) {dim = 2 : i64, end = 16 : i64, operand_names = ["self"], start = 0 : i64} : (tensor<2x4x32xf32>) -> tensor<2x4x16xf32>
  %a = "aten.silu.default"(%g) {operand_names = ["self"]} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %p = "aten.mul.Tensor"(%u, %a) {operand_names = ["self", "other"]} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %d = "aten.linear.default"(%p, %wd) {operand_names = ["input", "weight"]} : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  "func.return"(%d) : (tensor<2x4x8xf32>) -> ()
}) : () -> ()
