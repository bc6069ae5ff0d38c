// verify-stablehlo (compiler/src/passes/verify_stablehlo.rs, dialects/src/verify.rs):
// a valid hand-written StableHLO module goes through unchanged; invalid ones fail
// with one line per problem, each with the op's location.
//
// RUN: tpuc opt %s --pass-pipeline=verify-stablehlo | FileCheck %s
// RUN: not tpuc opt %S/Inputs/verify_bad_result_type.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s --check-prefix=BADTYPE
// RUN: not tpuc opt %S/Inputs/verify_unknown_op.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tpuc opt %S/Inputs/verify_foreign_ops.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s --check-prefix=FOREIGN
// RUN: not tpuc opt %S/Inputs/verify_several_errors.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s --check-prefix=SEVERAL
// RUN: not tpuc opt %S/Inputs/verify_bad_structure.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s --check-prefix=STRUCT
// RUN: not tpuc opt %S/Inputs/verify_bad_composite.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s --check-prefix=COMPOSITE

// A composite's decomposition must be a function of the module with the composite's
// types; `name` is a string, `version` an i32. The last composite is valid.
// COMPOSITE: error: the emitted StableHLO does not verify:
// COMPOSITE-NEXT: loc("no_function"): stablehlo.composite: decomposition @missing is not a function of the module
// COMPOSITE-NEXT: loc("wrong_type"): stablehlo.composite: decomposition @impl_f16 has type (tensor<4xf16>) -> (tensor<4xf16>), the composite (tensor<4xf32>) -> (tensor<4xf32>)
// COMPOSITE-NEXT: loc("i64_version"): stablehlo.composite: `version` must be an i32, found 1 : i64
// COMPOSITE-NEXT: loc("name_not_string"): stablehlo.composite: `name` must be a string
// COMPOSITE-NOT: loc(

// BADTYPE: error: the emitted StableHLO does not verify:
// BADTYPE-NEXT: loc("bad_add"): stablehlo.add: result type tensor<2x4xf32> should be tensor<2x3xf32>
// BADTYPE-NOT: loc(

// UNKNOWN: error: the emitted StableHLO does not verify:
// UNKNOWN-NEXT: loc("foo_node"): stablehlo.foo: not a StableHLO operation tpuc knows

// Ops outside StableHLO and func: PJRT plugins reject them at compile time with an MLIR
// parse error; the verifier names the node.
// FOREIGN: error: the emitted StableHLO does not verify:
// FOREIGN-NEXT: loc("sqrt_node"): sqrt: not an operation of StableHLO or func: no PJRT plugin takes it
// FOREIGN-NEXT: loc("relu_node"): aten.relu.default: not an operation of StableHLO or func: no PJRT plugin takes it

// The convert and the reduce are valid and not reported.
// SEVERAL: error: the emitted StableHLO does not verify:
// SEVERAL-NEXT: loc("dot"): stablehlo.dot_general: result type tensor<2x5xf32> should have shape [2, 4]
// SEVERAL-NEXT: loc("transpose"): stablehlo.transpose: result type tensor<3x2xf32> should be tensor<2x3xf32>
// SEVERAL-NEXT: loc("slice"): stablehlo.slice: {{.*}}slice [3:5:1] out of range for dim 0 of tensor<4x4xf32>
// SEVERAL-NEXT: loc("bcast"): stablehlo.broadcast_in_dim: {{.*}}cannot broadcast tensor<4x4xf32> to tensor<4x4xf32> with [0]
// SEVERAL-NOT: convert_ok
// SEVERAL-NOT: reduce_ok

// STRUCT: error: 'func.return' op has 2 operands, but enclosing function (@bad_structure) returns 1
// STRUCT: error: cannot parse MLIR in `{{.*}}verify_bad_structure.mlir`

// A valid module covering the ops tpuc emits; printed back unchanged.
// CHECK-LABEL: sym_name = "valid"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<3x4xf32>, [[P:%arg[0-9]+]]: tensor<2x3xi1>)
// CHECK-NEXT: [[ADD:%[0-9]+]] = "stablehlo.add"([[A]], [[A]])
// CHECK-NEXT: [[DOT:%[0-9]+]] = "stablehlo.dot_general"([[ADD]], [[B]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: [[TR:%[0-9]+]] = "stablehlo.transpose"([[DOT]]) {permutation = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: [[RS:%[0-9]+]] = "stablehlo.reshape"([[TR]]) : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: [[SL:%[0-9]+]] = "stablehlo.slice"([[RS]])
// CHECK-NEXT: [[CAT:%[0-9]+]] = "stablehlo.concatenate"([[SL]], [[A]]) {dimension = 1 : i64}
// CHECK-NEXT: [[CMP:%[0-9]+]] = "stablehlo.compare"([[A]], [[ADD]])
// CHECK-NEXT: [[AND:%[0-9]+]] = "stablehlo.and"([[CMP]], [[P]])
// CHECK-NEXT: [[SEL:%[0-9]+]] = "stablehlo.select"([[AND]], [[A]], [[ADD]])
// CHECK-NEXT: [[CV:%[0-9]+]] = "stablehlo.convert"([[SEL]]) : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[RED:%[0-9]+]] = "stablehlo.reduce"([[CAT]], [[ZERO]]) ({
// CHECK: }) {dimensions = array<i64: 1>} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: [[BC:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[RED]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[REV:%[0-9]+]] = "stablehlo.reverse"([[BC]]) {dimensions = array<i64: 1>}
// CHECK-NEXT: [[IOTA:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi64>
// CHECK-NEXT: "func.return"([[REV]], [[CV]], [[IOTA]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xi64>), sym_name = "valid"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %p: tensor<2x3xi1>):
  %0 = "stablehlo.add"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "stablehlo.dot_general"(%0, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = "stablehlo.transpose"(%1) {permutation = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %3 = "stablehlo.reshape"(%2) : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %4 = "stablehlo.slice"(%3) {limit_indices = array<i64: 2, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %5 = "stablehlo.concatenate"(%4, %a) {dimension = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %6 = "stablehlo.compare"(%a, %0) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %7 = "stablehlo.and"(%6, %p) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %8 = "stablehlo.select"(%7, %a, %0) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "stablehlo.convert"(%8) : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %10 = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %11 = "stablehlo.reduce"(%5, %10) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
  %12 = "stablehlo.broadcast_in_dim"(%11) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
  %13 = "stablehlo.reverse"(%12) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %14 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi64>
  "func.return"(%13, %9, %14) : (tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xi64>) -> ()
}) : () -> ()
