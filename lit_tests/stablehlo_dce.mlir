// stablehlo-dce (compiler/src/passes/dce.rs): side-effect-free StableHLO ops whose
// results nobody uses are removed, whole dead chains in one pass; ops with side
// effects (custom calls) and everything the function returns stay.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-dce | FileCheck %s

// CHECK-LABEL: sym_name = "dead_chain"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: [[NEG:%[0-9]+]] = "stablehlo.negate"([[X]])
// CHECK-NEXT: "stablehlo.custom_call"([[X]]) {call_target_name = "tpuc.keep_me"}
// CHECK-NEXT: "func.return"([[NEG]])
// CHECK-NOT: stablehlo
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "dead_chain"}> ({
^bb0(%x: tensor<4xf32>):
  %c = "stablehlo.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = "stablehlo.add"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = "stablehlo.multiply"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = "stablehlo.negate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %k = "stablehlo.custom_call"(%x) {call_target_name = "tpuc.keep_me"} : (tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%n) : (tensor<4xf32>) -> ()
}) : () -> ()

// A dead reduce goes with its body; a used one stays.
// CHECK-LABEL: sym_name = "dead_reduce"
// CHECK: "stablehlo.reduce"
// CHECK-NOT: "stablehlo.reduce"
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<f32>, sym_name = "dead_reduce"}> ({
^bb0(%x: tensor<4xf32>):
  %z = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %dead = "stablehlo.reduce"(%x, %z) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %live = "stablehlo.reduce"(%x, %z) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = "stablehlo.maximum"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  "func.return"(%live) : (tensor<f32>) -> ()
}) : () -> ()
