// stablehlo-fold-constants (compiler/src/passes/fold_constants.rs): values that depend
// on no argument are computed at compile time, exactly, and each one a run-time op
// reads becomes a constant (the ops behind it are left for stablehlo-dce). It must not
// fire on values that depend on an argument, on f16/bf16, on transcendental functions,
// on float sums (their order is XLA's choice), on a float max with NaN, or on
// integer division by zero.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-fold-constants,stablehlo-dce | FileCheck %s

// A causal mask from two iotas: compare(iota1 <= iota0) selects 0 or -inf; the select
// is the value the add reads, so it becomes one constant (floats as bit patterns).
// CHECK-LABEL: sym_name = "causal_mask"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x3xf32>)
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.constant"() {value = dense<{{\[\[}}0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>}
// CHECK-NEXT: [[A:%[0-9]+]] = "stablehlo.add"([[X]], [[M]])
// CHECK-NEXT: "func.return"([[A]])
"func.func"() <{function_type = (tensor<3x3xf32>) -> tensor<3x3xf32>, sym_name = "causal_mask"}> ({
^bb0(%x: tensor<3x3xf32>):
  %r = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3x3xi64>
  %c = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x3xi64>
  %le = "stablehlo.compare"(%c, %r) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>} : (tensor<3x3xi64>, tensor<3x3xi64>) -> tensor<3x3xi1>
  %z = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %zb = "stablehlo.broadcast_in_dim"(%z) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3x3xf32>
  %n = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %nb = "stablehlo.broadcast_in_dim"(%n) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3x3xf32>
  %m = "stablehlo.select"(%le, %zb, %nb) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %a = "stablehlo.add"(%x, %m) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  "func.return"(%a) : (tensor<3x3xf32>) -> ()
}) : () -> ()

// Position ids: cumsum (a reduce_window of add) of ones, minus one, sliced and
// concatenated, gathered, and an integer-to-f32 convert. Booleans that a run-time op
// reads are written as an i8 constant and a convert (XLA cannot read bit-packed i1
// constants). Integer arithmetic wraps: 127 + 1 in i8 is -128.
// CHECK-LABEL: sym_name = "positions"
// CHECK: ^bb0([[Y:%arg[0-9]+]]: tensor<4xf32>, [[P:%arg[0-9]+]]: tensor<4xi1>)
// CHECK-DAG: "stablehlo.constant"() {value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>}
// CHECK-DAG: "stablehlo.constant"() {value = dense<[3, 0, 2, 2]> : tensor<4xi64>}
// CHECK-DAG: [[B8:%[0-9]+]] = "stablehlo.constant"() {value = dense<[0, 1, 1, 1]> : tensor<4xi8>}
// CHECK-DAG: [[B:%[0-9]+]] = "stablehlo.convert"([[B8]]) : (tensor<4xi8>) -> tensor<4xi1>
// CHECK-DAG: "stablehlo.constant"() {value = dense<-128> : tensor<i8>}
// CHECK-NOT: "stablehlo.reduce_window"
// CHECK-NOT: "stablehlo.gather"
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xi1>, tensor<i8>), sym_name = "positions"}> ({
^bb0(%y: tensor<4xf32>, %p: tensor<4xi1>):
  %one = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %ones = "stablehlo.broadcast_in_dim"(%one) {broadcast_dimensions = array<i64>} : (tensor<i64>) -> tensor<4xi64>
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %cs = "stablehlo.reduce_window"(%ones, %zero) ({
  ^bb0(%l: tensor<i64>, %r: tensor<i64>):
    %s = "stablehlo.add"(%l, %r) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%s) : (tensor<i64>) -> ()
  }) {padding = dense<[[3, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 4>} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %pos = "stablehlo.subtract"(%cs, %ones) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %f = "stablehlo.convert"(%pos) : (tensor<4xi64>) -> tensor<4xf32>
  %yf = "stablehlo.add"(%y, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %hi = "stablehlo.slice"(%pos) {limit_indices = array<i64: 4>, start_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<4xi64>) -> tensor<1xi64>
  %lo = "stablehlo.slice"(%pos) {limit_indices = array<i64: 3>, start_indices = array<i64: 0>, strides = array<i64: 1>} : (tensor<4xi64>) -> tensor<3xi64>
  %cat = "stablehlo.concatenate"(%hi, %lo) {dimension = 0 : i64} : (tensor<1xi64>, tensor<3xi64>) -> tensor<4xi64>
  %idx = "stablehlo.constant"() {value = dense<[[0], [1], [3], [3]]> : tensor<4x1xi64>} : () -> tensor<4x1xi64>
  %g = "stablehlo.gather"(%cat, %idx) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>} : (tensor<4xi64>, tensor<4x1xi64>) -> tensor<4xi64>
  %ne = "stablehlo.compare"(%pos, %ones) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %pb = "stablehlo.and"(%ne, %p) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %c127 = "stablehlo.constant"() {value = dense<127> : tensor<i8>} : () -> tensor<i8>
  %c1 = "stablehlo.constant"() {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %w = "stablehlo.add"(%c127, %c1) : (tensor<i8>, tensor<i8>) -> tensor<i8>
  "func.return"(%yf, %g, %pb, %w) : (tensor<4xf32>, tensor<4xi64>, tensor<4xi1>, tensor<i8>) -> ()
}) : () -> ()

// Not folded: an f16 computation, exp of a constant, a float sum (reduce_window of f32),
// a float max with a NaN, an integer division by zero; and anything reading an argument.
// CHECK-LABEL: sym_name = "not_folded"
// CHECK: "stablehlo.add"({{.*}}) : (tensor<2xf16>, tensor<2xf16>)
// CHECK: "stablehlo.exponential"
// CHECK: "stablehlo.reduce_window"
// CHECK: "stablehlo.maximum"
// CHECK: "stablehlo.divide"
// CHECK: "stablehlo.multiply"(%arg{{[0-9]+}}, {{%[0-9]+}})
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2xf32>) -> (tensor<2xf16>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>), sym_name = "not_folded"}> ({
^bb0(%x: tensor<2xf32>):
  %h = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf16>} : () -> tensor<2xf16>
  %hh = "stablehlo.add"(%h, %h) : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  %c = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %e = "stablehlo.exponential"(%c) : (tensor<2xf32>) -> tensor<2xf32>
  %z = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %s = "stablehlo.reduce_window"(%c, %z) ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %t = "stablehlo.add"(%l, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) {padding = dense<[[1, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 2>} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %nan = "stablehlo.constant"() {value = dense<[0x7FC00000, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mx = "stablehlo.maximum"(%nan, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %i = "stablehlo.constant"() {value = dense<[4, 6]> : tensor<2xi32>} : () -> tensor<2xi32>
  %i0 = "stablehlo.constant"() {value = dense<[2, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %d = "stablehlo.divide"(%i, %i0) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %xm = "stablehlo.multiply"(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  "func.return"(%hh, %e, %s, %mx, %d, %xm) : (tensor<2xf16>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi32>, tensor<2xf32>) -> ()
}) : () -> ()

// Malformed ops (attributes that do not fit the shapes) are left alone, never a crash:
// the verifier reports them later.
// CHECK-LABEL: sym_name = "malformed"
// CHECK: "stablehlo.slice"
// CHECK: "stablehlo.broadcast_in_dim"
// CHECK: "func.return"
"func.func"() <{function_type = () -> (tensor<2xi64>, tensor<2x2xi64>), sym_name = "malformed"}> ({
  %i = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi64>
  %s = "stablehlo.slice"(%i) {limit_indices = array<i64: 9>, start_indices = array<i64: 7>, strides = array<i64: 1>} : (tensor<4xi64>) -> tensor<2xi64>
  %b = "stablehlo.broadcast_in_dim"(%i) {broadcast_dimensions = array<i64: 5>} : (tensor<4xi64>) -> tensor<2x2xi64>
  "func.return"(%s, %b) : (tensor<2xi64>, tensor<2x2xi64>) -> ()
}) : () -> ()
