// stablehlo-simplify (compiler/src/passes/simplify.rs): rewrites exact in IEEE
// arithmetic. Uses are redirected; the dead ops stay for stablehlo-dce, so this file
// runs both and checks what is left.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-simplify,stablehlo-dce | FileCheck %s

// iota * 1 + 0 over integers (what index lowerings write), x / 1 and x - (+0) on
// floats, and a broadcast scalar 1: all identities.
// CHECK-LABEL: sym_name = "identities"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: [[I:%[0-9]+]] = "stablehlo.iota"()
// CHECK-NEXT: "func.return"([[I]], [[X]], [[X]], [[X]])
"func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>), sym_name = "identities"}> ({
^bb0(%x: tensor<4xf32>):
  %i = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi64>
  %one = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %ones = "stablehlo.broadcast_in_dim"(%one) {broadcast_dimensions = array<i64>} : (tensor<i64>) -> tensor<4xi64>
  %m = "stablehlo.multiply"(%i, %ones) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<4xi64>} : () -> tensor<4xi64>
  %a = "stablehlo.add"(%m, %zero) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %f1 = "stablehlo.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %d = "stablehlo.divide"(%x, %f1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %f0 = "stablehlo.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %s = "stablehlo.subtract"(%x, %f0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %fm0 = "stablehlo.constant"() {value = dense<-0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %p = "stablehlo.add"(%fm0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%a, %d, %s, %p) : (tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
}) : () -> ()

// Must not fire: float x + (+0) (turns -0 into +0), x - (-0), 1 / x, x * 2.
// CHECK-LABEL: sym_name = "not_identities"
// CHECK: "stablehlo.add"
// CHECK: "stablehlo.subtract"
// CHECK: "stablehlo.divide"
// CHECK: "stablehlo.multiply"
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>), sym_name = "not_identities"}> ({
^bb0(%x: tensor<4xf32>):
  %f0 = "stablehlo.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = "stablehlo.add"(%x, %f0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %fm0 = "stablehlo.constant"() {value = dense<-0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %s = "stablehlo.subtract"(%x, %fm0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %f1 = "stablehlo.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %d = "stablehlo.divide"(%f1, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %f2 = "stablehlo.constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %m = "stablehlo.multiply"(%x, %f2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%a, %s, %d, %m) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
}) : () -> ()

// Chains: an exact convert round trip (f16 -> f32 -> f16) goes, a lossy one
// (f32 -> f16 -> f32) stays; reshape of reshape reads the source; two transposes
// compose (here to the identity, so both go); a different composition stays one op.
// CHECK-LABEL: sym_name = "chains"
// CHECK: ^bb0([[H:%arg[0-9]+]]: tensor<2x3xf16>, [[F:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NEXT: [[DOWN:%[0-9]+]] = "stablehlo.convert"([[F]]) : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK-NEXT: [[UP:%[0-9]+]] = "stablehlo.convert"([[DOWN]]) : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[F]]) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.transpose"([[F]]) {permutation = array<i64: 1, 0>}
// CHECK-NEXT: "func.return"([[H]], [[UP]], [[R]], [[F]], [[T]])
"func.func"() <{function_type = (tensor<2x3xf16>, tensor<2x3xf32>) -> (tensor<2x3xf16>, tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<3x2xf32>), sym_name = "chains"}> ({
^bb0(%h: tensor<2x3xf16>, %f: tensor<2x3xf32>):
  %w = "stablehlo.convert"(%h) : (tensor<2x3xf16>) -> tensor<2x3xf32>
  %n = "stablehlo.convert"(%w) : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %down = "stablehlo.convert"(%f) : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %up = "stablehlo.convert"(%down) : (tensor<2x3xf16>) -> tensor<2x3xf32>
  %r1 = "stablehlo.reshape"(%f) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r2 = "stablehlo.reshape"(%r1) : (tensor<3x2xf32>) -> tensor<6xf32>
  %t1 = "stablehlo.transpose"(%f) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t2 = "stablehlo.transpose"(%t1) {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %t3 = "stablehlo.transpose"(%t2) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  "func.return"(%n, %up, %r2, %t2, %t3) : (tensor<2x3xf16>, tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<3x2xf32>) -> ()
}) : () -> ()

// Three transposes of a rank-3 tensor compose into one permutation.
// CHECK-LABEL: sym_name = "compose3"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: "func.return"([[T]])
"func.func"() <{function_type = (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>, sym_name = "compose3"}> ({
^bb0(%x: tensor<2x3x4xf32>):
  %a = "stablehlo.transpose"(%x) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %b = "stablehlo.transpose"(%a) {permutation = array<i64: 0, 2, 1>} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  %c = "stablehlo.transpose"(%b) {permutation = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  "func.return"(%c) : (tensor<4x2x3xf32>) -> ()
}) : () -> ()
