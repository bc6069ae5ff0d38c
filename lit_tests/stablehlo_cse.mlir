// stablehlo-cse (compiler/src/passes/cse.rs): side-effect-free StableHLO ops with the
// same name, operands, attributes and result types are merged into the first one;
// chains merge as their operands do. It must not fire on different attributes or
// types, on ops with side effects (custom calls) or on ops with regions.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-cse | FileCheck %s

// Two copies of the same splat constant + broadcast + add become one.
// CHECK-LABEL: sym_name = "duplicates"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[B:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[C]])
// CHECK-NEXT: [[A:%[0-9]+]] = "stablehlo.add"([[X]], [[B]])
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.multiply"([[A]], [[A]])
// CHECK-NEXT: "func.return"([[M]])
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "duplicates"}> ({
^bb0(%x: tensor<4xf32>):
  %c1 = "stablehlo.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %b1 = "stablehlo.broadcast_in_dim"(%c1) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %a1 = "stablehlo.add"(%x, %b1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c2 = "stablehlo.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %b2 = "stablehlo.broadcast_in_dim"(%c2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %a2 = "stablehlo.add"(%x, %b2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = "stablehlo.multiply"(%a1, %a2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%m) : (tensor<4xf32>) -> ()
}) : () -> ()

// Not merged: different values, different attributes, different result types,
// custom calls, ops with regions, and operands in a different order.
// CHECK-LABEL: sym_name = "distinct"
// CHECK-COUNT-2: "stablehlo.constant"
// CHECK-COUNT-2: "stablehlo.transpose"
// CHECK-COUNT-2: "stablehlo.convert"
// CHECK-COUNT-2: "stablehlo.custom_call"
// CHECK-COUNT-2: "stablehlo.reduce"
// CHECK-COUNT-2: "stablehlo.subtract"
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf16>, tensor<2x2xbf16>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>), sym_name = "distinct"}> ({
^bb0(%x: tensor<2x2xf32>):
  %c1 = "stablehlo.constant"() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %c2 = "stablehlo.constant"() {value = dense<3.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %t1 = "stablehlo.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %t2 = "stablehlo.transpose"(%x) {permutation = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %v1 = "stablehlo.convert"(%x) : (tensor<2x2xf32>) -> tensor<2x2xf16>
  %v2 = "stablehlo.convert"(%x) : (tensor<2x2xf32>) -> tensor<2x2xbf16>
  %k1 = "stablehlo.custom_call"(%x) {call_target_name = "tpuc.effect"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %k2 = "stablehlo.custom_call"(%x) {call_target_name = "tpuc.effect"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %z = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %r1 = "stablehlo.reduce"(%x, %z) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
  %r2 = "stablehlo.reduce"(%x, %z) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
  %s1 = "stablehlo.subtract"(%x, %c1) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %s2 = "stablehlo.subtract"(%c1, %x) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  "func.return"(%c1, %c2, %t1, %t2, %v1, %v2, %k1, %k2, %r1, %r2, %s1, %s2) : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf16>, tensor<2x2xbf16>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> ()
}) : () -> ()
