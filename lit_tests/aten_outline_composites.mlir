// aten-outline-composites (compiler/src/passes/outline_aten_composites.rs): GELU,
// SiLU, softmax, layer/RMS norm and SDPA nodes become stablehlo.composite ops named
// after their overload, with the node's arguments as composite_attributes. Nodes
// with the same target, arguments, operand types and used results share one
// decomposition; any difference gives another. It must not fire on other ops, on
// nodes none of whose results is read, or inside an existing decomposition.
//
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites | FileCheck %s
// Running it again changes nothing (decompositions are not wrapped again):
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites > %t
// RUN: tpuc opt %t --pass-pipeline=aten-outline-composites | diff %t -
// Lowered, the decompositions are lowered once each and stay private:
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites,lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s --check-prefix=LOWERED

// Two GELUs of one type share a decomposition; a tanh GELU (other attributes) and a
// GELU of another shape get their own. relu is not wrapped.
// CHECK-LABEL: sym_name = "main"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>, [[Y:%arg[0-9]+]]: tensor<4xf32>,
// CHECK-NEXT: [[G0:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {operand_names = ["self"]}, decomposition = @aten.gelu.default.impl_0, name = "aten.gelu.default", version = 0 : i32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: [[G1:%[0-9]+]] = "stablehlo.composite"([[G0]]) {composite_attributes = {operand_names = ["self"]}, decomposition = @aten.gelu.default.impl_0, name = "aten.gelu.default", version = 0 : i32}
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.composite"([[G1]]) {composite_attributes = {approximate = "tanh", operand_names = ["self"]}, decomposition = @aten.gelu.default.impl_1, name = "aten.gelu.default", version = 0 : i32}
// CHECK-NEXT: [[G2:%[0-9]+]] = "stablehlo.composite"([[Y]]) {{.*}}decomposition = @aten.gelu.default.impl_2
// CHECK-NEXT: "aten.relu.default"([[T]])
// Layer norm: only the normalized output is read, so the composite returns one result.
// CHECK-NEXT: [[LN:%[0-9]+]] = "stablehlo.composite"([[T]], {{%arg[0-9]+}}, {{%arg[0-9]+}}) {composite_attributes = {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>, operand_names = ["input", "weight", "bias"]}, decomposition = @aten.native_layer_norm.default.impl_0, name = "aten.native_layer_norm.default", version = 0 : i32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// A softmax whose result nobody reads is left alone.
// CHECK-NEXT: "aten._softmax.default"
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.composite"([[LN]]) {composite_attributes = {dim = -1 : i64, half_to_float = false, operand_names = ["self"]}, decomposition = @aten._softmax.default.impl_0
// SDPA with its causal flag.
// CHECK-NEXT: [[A:%[0-9]+]] = "stablehlo.composite"({{.*}}) {composite_attributes = {is_causal = true, operand_names = ["query", "key", "value"]}, decomposition = @aten.scaled_dot_product_attention.default.impl_0, name = "aten.scaled_dot_product_attention.default", version = 0 : i32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK: "func.return"
// The decompositions, in order of first use, each holding the node itself.
// CHECK-LABEL: sym_name = "aten.gelu.default.impl_0", sym_visibility = "private"
// CHECK: "aten.gelu.default"(%arg{{[0-9]+}}) {operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-LABEL: sym_name = "aten.gelu.default.impl_1", sym_visibility = "private"
// CHECK: "aten.gelu.default"(%arg{{[0-9]+}}) {approximate = "tanh", operand_names = ["self"]}
// CHECK-LABEL: sym_name = "aten.gelu.default.impl_2"
// CHECK-LABEL: sym_name = "aten.native_layer_norm.default.impl_0"
// CHECK: [[N:%[0-9]+]]:3 = "aten.native_layer_norm.default"
// CHECK-NEXT: "func.return"([[N]]#0) : (tensor<2x8xf32>) -> ()
// CHECK-LABEL: sym_name = "aten._softmax.default.impl_0"
// CHECK-LABEL: sym_name = "aten.scaled_dot_product_attention.default.impl_0"
// CHECK-NOT: sym_name

// LOWERED-LABEL: sym_name = "main"
// LOWERED-NOT: "stablehlo.tanh"
// LOWERED: "stablehlo.composite"({{.*}}decomposition = @aten.gelu.default.impl_0
// LOWERED-LABEL: sym_name = "aten.gelu.default.impl_0", sym_visibility = "private"
// LOWERED-NOT: aten.gelu
// LOWERED: "stablehlo.clamp"
// LOWERED-LABEL: sym_name = "aten.gelu.default.impl_1", sym_visibility = "private"
// LOWERED: "stablehlo.tanh"
// LOWERED-LABEL: sym_name = "aten.native_layer_norm.default.impl_0"
// LOWERED: "stablehlo.rsqrt"

"func.func"() <{function_type = (tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x2x4x8xf32>) -> (tensor<2x8xf32>, tensor<4xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<1x2x4x8xf32>), sym_name = "main"}> ({
^bb0(%x: tensor<2x8xf32>, %y: tensor<4xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %q: tensor<1x2x4x8xf32>):
  %g0 = "aten.gelu.default"(%x) {operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %g1 = "aten.gelu.default"(%g0) {operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = "aten.gelu.default"(%g1) {approximate = "tanh", operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %g2 = "aten.gelu.default"(%y) {operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32>
  %r = "aten.relu.default"(%t) {operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %ln:3 = "aten.native_layer_norm.default"(%t, %w, %b) {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>, operand_names = ["input", "weight", "bias"]} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %dead = "aten._softmax.default"(%x) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "aten._softmax.default"(%ln#0) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = "aten.scaled_dot_product_attention.default"(%q, %q, %q) {is_causal = true, operand_names = ["query", "key", "value"]} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  "func.return"(%r, %g2, %s, %g1, %a) : (tensor<2x8xf32>, tensor<4xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<1x2x4x8xf32>) -> ()
}) : () -> ()
