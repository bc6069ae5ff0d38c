// Control flow (compiler/src/passes/lower_aten_to_stablehlo/control_flow.rs): the
// importer's higher_order.cond / while_loop / scan ops (one region per subgraph, operands
// grouped by tpuc.operand_segments) lowered to stablehlo.if and stablehlo.while.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s
// RUN: not tpuc opt %S/Inputs/lower_error_cond_predicate.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=PRED
// RUN: not tpuc opt %S/Inputs/lower_error_cond_branch_type.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=BRANCH
// RUN: not tpuc opt %S/Inputs/lower_error_while_unknown_op.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tpuc opt %S/Inputs/verify_bad_control_flow.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s --check-prefix=VERIFY

// PRED: error: node `cond` (higher_order.cond): the predicate is tensor<2xi1>; it must hold exactly one element
// BRANCH: error: node `cond` (higher_order.cond): the false branch yields tensor<f32> where tensor<3xf32> is expected
// UNKNOWN: aten.kthvalue.default x1 (first at node `while_loop/while_loop_body_graph_0/kthvalue`)
// VERIFY: error: the emitted StableHLO does not verify:
// VERIFY-NEXT: loc("if_branch_type"): stablehlo.if: the false branch yields (tensor<f32>) but the op returns (tensor<3xf32>)
// VERIFY-NEXT: loc("while_cond_not_bool"): stablehlo.while: the condition yields (tensor<i64>), not one tensor<i1>
// VERIFY-NEXT: loc("dynamic_slice_one_start"): stablehlo.dynamic_slice: expected 2 integer scalar start indices, found (tensor<i64>)

// cond: the branches' block arguments become the captured operands (stablehlo.if
// regions take no arguments); the true branch is the first region.
// CHECK-LABEL: sym_name = "cond_captures_operands"
// CHECK: ^bb0([[P:%arg[0-9]+]]: tensor<i1>, [[X:%arg[0-9]+]]: tensor<3x4xf32>, [[Y:%arg[0-9]+]]: tensor<3x4xf32>)
// CHECK: [[R:%[0-9]+]] = "stablehlo.if"([[P]]) ({
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.multiply"([[X]], [[Y]])
// CHECK-NEXT: "stablehlo.return"([[M]])
// CHECK-NEXT: }, {
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.subtract"([[X]], [[Y]])
// CHECK-NEXT: "stablehlo.return"([[S]])
// CHECK-NEXT: }) : (tensor<i1>) -> tensor<3x4xf32>
// CHECK: "func.return"([[R]])
"func.func"() <{function_type = (tensor<i1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>, sym_name = "cond_captures_operands"}> ({
^bb0(%p: tensor<i1>, %x: tensor<3x4xf32>, %y: tensor<3x4xf32>):
  %0 = "higher_order.cond"(%p, %x, %y) ({
  ^bb0(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>):
    %1 = "aten.mul.Tensor"(%a, %b) {operand_names = ["self", "other"]} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc("cond/true_graph_0/mul")
    "tpuc.yield"(%1) : (tensor<3x4xf32>) -> ()
  }, {
  ^bb0(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>):
    %1 = "aten.sub.Tensor"(%a, %b) {operand_names = ["self", "other"]} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc("cond/false_graph_0/sub")
    "tpuc.yield"(%1) : (tensor<3x4xf32>) -> ()
  }) {tpuc.operand_segments = array<i64: 1, 2>} : (tensor<i1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> loc("cond")
  "func.return"(%0) : (tensor<3x4xf32>) -> ()
}) : () -> ()

// while_loop: the additional input (the trip count) is carried unchanged through a
// closed stablehlo.while; only the carried values are results.
// CHECK-LABEL: sym_name = "while_loop_with_additional_input"
// CHECK: ^bb0([[N:%arg[0-9]+]]: tensor<i64>, [[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: [[W:%[0-9]+]]:3 = "stablehlo.while"([[Z]], [[X]], [[N]]) ({
// CHECK-NEXT: ^bb0([[I:%arg[0-9]+]]: tensor<i64>, {{%arg[0-9]+}}: tensor<2x3xf32>, [[M:%arg[0-9]+]]: tensor<i64>):
// CHECK-NEXT: [[LT:%[0-9]+]] = "stablehlo.compare"([[I]], [[M]]) {{.*}}comparison_direction LT
// CHECK-NEXT: "stablehlo.return"([[LT]]) : (tensor<i1>) -> ()
// CHECK-NEXT: }, {
// CHECK-NEXT: ^bb0([[I2:%arg[0-9]+]]: tensor<i64>, [[V2:%arg[0-9]+]]: tensor<2x3xf32>, [[M2:%arg[0-9]+]]: tensor<i64>):
// CHECK: [[INC:%[0-9]+]] = "stablehlo.add"([[I2]], {{%[0-9]+}})
// CHECK: [[MUL:%[0-9]+]] = "stablehlo.multiply"([[V2]], {{%[0-9]+}})
// CHECK-NEXT: "stablehlo.return"([[INC]], [[MUL]], [[M2]])
// CHECK: "func.return"([[W]]#0, [[W]]#1)
"func.func"() <{function_type = (tensor<i64>, tensor<2x3xf32>) -> (tensor<i64>, tensor<2x3xf32>), sym_name = "while_loop_with_additional_input"}> ({
^bb0(%n: tensor<i64>, %x: tensor<2x3xf32>):
  %0 = "aten.full.default"() {dtype = "i64", fill_value = 0 : i64, operand_names = [], pin_memory = false, size = array<i64>} : () -> tensor<i64> loc("full")
  %1:2 = "higher_order.while_loop"(%0, %x, %n) ({
  ^bb0(%i: tensor<i64>, %v: tensor<2x3xf32>, %m: tensor<i64>):
    %2 = "aten.lt.Tensor"(%i, %m) {operand_names = ["self", "other"]} : (tensor<i64>, tensor<i64>) -> tensor<i1> loc("while_loop/cond/lt")
    "tpuc.yield"(%2) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i64>, %v: tensor<2x3xf32>, %m: tensor<i64>):
    %2 = "aten.add.Tensor"(%i) {operand_names = ["self"], other = 1 : i64} : (tensor<i64>) -> tensor<i64> loc("while_loop/body/add")
    %3 = "aten.mul.Tensor"(%v) {operand_names = ["self"], other = 1.500000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("while_loop/body/mul")
    "tpuc.yield"(%2, %3) : (tensor<i64>, tensor<2x3xf32>) -> ()
  }) {tpuc.operand_segments = array<i64: 2, 1>} : (tensor<i64>, tensor<2x3xf32>, tensor<i64>) -> (tensor<i64>, tensor<2x3xf32>) loc("while_loop")
  "func.return"(%1#0, %1#1) : (tensor<i64>, tensor<2x3xf32>) -> ()
}) : () -> ()

// scan over dim 0: a while over an i64 counter (5 steps) carrying the carry, the stacked
// output buffer and the scanned input; each step reads slice i with dynamic_slice and
// writes its output with dynamic_update_slice.
// CHECK-LABEL: sym_name = "scan_carry_and_stacked_outputs"
// CHECK: ^bb0([[XS:%arg[0-9]+]]: tensor<5x2x3xf32>, [[H0:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[C0:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: [[BUF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<5x2x3xf32>}
// CHECK: [[W:%[0-9]+]]:4 = "stablehlo.while"([[C0]], [[H0]], [[BUF]], [[XS]]) ({
// CHECK: "stablehlo.constant"() {value = dense<5> : tensor<i64>}
// CHECK: comparison_direction LT
// CHECK: }, {
// CHECK-NEXT: ^bb0([[I:%arg[0-9]+]]: tensor<i64>, [[H:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<5x2x3xf32>, [[X:%arg[0-9]+]]: tensor<5x2x3xf32>):
// CHECK: [[SL:%[0-9]+]] = "stablehlo.dynamic_slice"([[X]], [[I]], [[ZERO:%[0-9]+]], [[ZERO]]) {slice_sizes = array<i64: 1, 2, 3>}
// CHECK: [[STEP:%[0-9]+]] = "stablehlo.reshape"([[SL]]) : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
// CHECK: [[ADD:%[0-9]+]] = "stablehlo.add"([[H]], [[STEP]])
// CHECK: [[T:%[0-9]+]] = "stablehlo.tanh"([[ADD]])
// CHECK: [[NEXT:%[0-9]+]] = "stablehlo.add"([[I]], {{%[0-9]+}})
// CHECK: [[ROW:%[0-9]+]] = "stablehlo.reshape"([[ADD]]) : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
// CHECK: [[UPD:%[0-9]+]] = "stablehlo.dynamic_update_slice"([[B]], [[ROW]], [[I]], [[ZERO]], [[ZERO]])
// CHECK: "stablehlo.return"([[NEXT]], [[T]], [[UPD]], [[X]])
// CHECK: "func.return"([[W]]#1, [[W]]#2)
"func.func"() <{function_type = (tensor<5x2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>), sym_name = "scan_carry_and_stacked_outputs"}> ({
^bb0(%xs: tensor<5x2x3xf32>, %h0: tensor<2x3xf32>):
  %0:2 = "higher_order.scan"(%h0, %xs) ({
  ^bb0(%h: tensor<2x3xf32>, %x: tensor<2x3xf32>):
    %1 = "aten.add.Tensor"(%h, %x) {operand_names = ["self", "other"]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("scan/combine/add")
    %2 = "aten.tanh.default"(%1) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("scan/combine/tanh")
    "tpuc.yield"(%2, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  }) {tpuc.operand_segments = array<i64: 1, 1, 0>} : (tensor<2x3xf32>, tensor<5x2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>) loc("scan")
  "func.return"(%0#0, %0#1) : (tensor<2x3xf32>, tensor<5x2x3xf32>) -> ()
}) : () -> ()
