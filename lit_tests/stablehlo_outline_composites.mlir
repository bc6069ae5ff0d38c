// stablehlo-outline-composites (compiler/src/passes/composites/): softmax, layer norm,
// RMS norm, GELU (tanh form) and SiLU subgraphs become one stablehlo.composite each,
// whose decomposition is a private function holding the replaced ops. Each pattern
// has its must-not-fire cases: an intermediate read outside the pattern, wrong axes,
// wrong counts or constants, an epsilon that is not a constant, other tensors.
// stablehlo_outline_composites_lowered.mlir covers the forms the lowerings emit.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-outline-composites,stablehlo-dce,verify-stablehlo | FileCheck %s
// Running the pass again changes nothing (decompositions are not matched again):
// RUN: tpuc opt %s --pass-pipeline=stablehlo-outline-composites,stablehlo-dce > %t
// RUN: tpuc opt %t --pass-pipeline=stablehlo-outline-composites,stablehlo-dce,verify-stablehlo | diff %t -

// Softmax over dim 1: max, shift, exp, sum, divide; the -inf and 0 initial values are
// copied into the decomposition.
// CHECK-LABEL: sym_name = "softmax"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {dim = 1 : i64, half_to_float = false}, decomposition = @aten._softmax.default.impl_0, name = "aten._softmax.default", version = 0 : i32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "softmax"}> ({
^bb0(%x: tensor<2x8xf32>):
  %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %m = "stablehlo.reduce"(%x, %ninf) ({
  ^bb0(%ma: tensor<f32>, %mb: tensor<f32>):
    %mm = "stablehlo.maximum"(%ma, %mb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%mm) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "stablehlo.reduce"(%e, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %sb = "stablehlo.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.divide"(%e, %sb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// Must not fire: exp(x - max) is also a result of the function.
// CHECK-LABEL: sym_name = "softmax_exp_also_returned"
// CHECK-NOT: composite
// CHECK: "stablehlo.divide"
"func.func"() <{function_type = (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>), sym_name = "softmax_exp_also_returned"}> ({
^bb0(%x: tensor<2x8xf32>):
  %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %m = "stablehlo.reduce"(%x, %ninf) ({
  ^bb0(%ma: tensor<f32>, %mb: tensor<f32>):
    %mm = "stablehlo.maximum"(%ma, %mb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%mm) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "stablehlo.reduce"(%e, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %sb = "stablehlo.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.divide"(%e, %sb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r, %e) : (tensor<2x8xf32>, tensor<2x8xf32>) -> ()
}) : () -> ()

// Must not fire: the max is over dim 1, the sum over dim 0.
// CHECK-LABEL: sym_name = "softmax_axes_differ"
// CHECK-NOT: composite
// CHECK: "stablehlo.divide"
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "softmax_axes_differ"}> ({
^bb0(%x: tensor<2x8xf32>):
  %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %m = "stablehlo.reduce"(%x, %ninf) ({
  ^bb0(%ma: tensor<f32>, %mb: tensor<f32>):
    %mm = "stablehlo.maximum"(%ma, %mb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%mm) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "stablehlo.reduce"(%e, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<8xf32>
  %sb = "stablehlo.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.divide"(%e, %sb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// Must not fire: a max reduction started at 0 is max(x, 0), not max(x).
// CHECK-LABEL: sym_name = "softmax_max_from_zero"
// CHECK-NOT: composite
// CHECK: "stablehlo.divide"
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "softmax_max_from_zero"}> ({
^bb0(%x: tensor<2x8xf32>):
  %ninf = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %m = "stablehlo.reduce"(%x, %ninf) ({
  ^bb0(%ma: tensor<f32>, %mb: tensor<f32>):
    %mm = "stablehlo.maximum"(%ma, %mb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%mm) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "stablehlo.reduce"(%e, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %sb = "stablehlo.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.divide"(%e, %sb) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// RMS norm as Hugging Face Llama writes it: mean(x*x, -1, keepdim) (a reshape after the
// mean), + eps, rsqrt, x * r, weight * (...).
// CHECK-LABEL: sym_name = "rms_norm"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x16xf32>, [[W:%arg[0-9]+]]: tensor<16xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]], [[W]]) {composite_attributes = {epsilon = 9.99999997E-7 : f32}, decomposition = @odml.rms_norm.impl_0, name = "odml.rms_norm", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>, sym_name = "rms_norm"}> ({
^bb0(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %sq = "stablehlo.multiply"(%x, %x) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %s = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<1.600000e+01> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ms = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %k = "stablehlo.reshape"(%ms) : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8x1xf32>
  %v = "stablehlo.add"(%k, %eps) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %inv = "stablehlo.rsqrt"(%v) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %ib = "stablehlo.broadcast_in_dim"(%inv) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %y = "stablehlo.multiply"(%x, %ib) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 2>} : (tensor<16xf32>) -> tensor<2x8x16xf32>
  %r = "stablehlo.multiply"(%wb, %y) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  "func.return"(%r) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// Must not fire: the epsilon is a function argument, not a splat constant.
// CHECK-LABEL: sym_name = "rms_norm_eps_not_a_constant"
// CHECK-NOT: composite
// CHECK: "stablehlo.rsqrt"
"func.func"() <{function_type = (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>, sym_name = "rms_norm_eps_not_a_constant"}> ({
^bb0(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %e: tensor<2x8x1xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %sq = "stablehlo.multiply"(%x, %x) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %s = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<1.600000e+01> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ms = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %k = "stablehlo.reshape"(%ms) : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
  %v = "stablehlo.add"(%k, %e) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %inv = "stablehlo.rsqrt"(%v) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %ib = "stablehlo.broadcast_in_dim"(%inv) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %y = "stablehlo.multiply"(%x, %ib) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 2>} : (tensor<16xf32>) -> tensor<2x8x16xf32>
  %r = "stablehlo.multiply"(%wb, %y) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  "func.return"(%r) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// Must not fire: the sum over 16 elements is divided by 15.
// CHECK-LABEL: sym_name = "rms_norm_wrong_count"
// CHECK-NOT: composite
// CHECK: "stablehlo.rsqrt"
"func.func"() <{function_type = (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>, sym_name = "rms_norm_wrong_count"}> ({
^bb0(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %sq = "stablehlo.multiply"(%x, %x) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %s = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<1.500000e+01> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ms = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %k = "stablehlo.reshape"(%ms) : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8x1xf32>
  %v = "stablehlo.add"(%k, %eps) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %inv = "stablehlo.rsqrt"(%v) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %ib = "stablehlo.broadcast_in_dim"(%inv) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %y = "stablehlo.multiply"(%x, %ib) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 2>} : (tensor<16xf32>) -> tensor<2x8x16xf32>
  %r = "stablehlo.multiply"(%wb, %y) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  "func.return"(%r) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// Must not fire: the mean is of x*z, not x*x.
// CHECK-LABEL: sym_name = "rms_norm_squares_another_tensor"
// CHECK-NOT: composite
// CHECK: "stablehlo.rsqrt"
"func.func"() <{function_type = (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>, sym_name = "rms_norm_squares_another_tensor"}> ({
^bb0(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %z: tensor<2x8x16xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %sq = "stablehlo.multiply"(%x, %z) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %s = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<1.600000e+01> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ms = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %k = "stablehlo.reshape"(%ms) : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8x1xf32>
  %v = "stablehlo.add"(%k, %eps) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %inv = "stablehlo.rsqrt"(%v) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %ib = "stablehlo.broadcast_in_dim"(%inv) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %y = "stablehlo.multiply"(%x, %ib) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 2>} : (tensor<16xf32>) -> tensor<2x8x16xf32>
  %r = "stablehlo.multiply"(%wb, %y) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  "func.return"(%r) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// Does not fire: odml.rms_norm has a scale operand and there is no weight (the last
// op is an add).
// CHECK-LABEL: sym_name = "rms_norm_without_weight"
// CHECK-NOT: composite
// CHECK: "stablehlo.rsqrt"
"func.func"() <{function_type = (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>, sym_name = "rms_norm_without_weight"}> ({
^bb0(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %sq = "stablehlo.multiply"(%x, %x) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %s = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<1.600000e+01> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ms = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %k = "stablehlo.reshape"(%ms) : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999997E-7> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8x1xf32>
  %v = "stablehlo.add"(%k, %eps) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %inv = "stablehlo.rsqrt"(%v) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %ib = "stablehlo.broadcast_in_dim"(%inv) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %y = "stablehlo.multiply"(%x, %ib) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %r = "stablehlo.add"(%y, %y) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  "func.return"(%r) : (tensor<2x8x16xf32>) -> ()
}) : () -> ()

// Layer norm with one centring pass and a weight, no bias.
// CHECK-LABEL: sym_name = "layer_norm_weight"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x8xf32>, [[W:%arg[0-9]+]]: tensor<8xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]], [[W]]) {composite_attributes = {eps = 9.99999974E-6 : f32, has_bias = false, has_weight = true, normalized_shape = array<i64: 8>}, decomposition = @aten.layer_norm.default.impl_0, name = "aten.layer_norm.default", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>, sym_name = "layer_norm_weight"}> ({
^bb0(%x: tensor<2x8x8xf32>, %w: tensor<8xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %s = "stablehlo.reduce"(%x, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %m = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %dd = "stablehlo.multiply"(%d, %d) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %ss = "stablehlo.reduce"(%dd, %zero) ({
  ^bb0(%ssa: tensor<f32>, %ssb: tensor<f32>):
    %sss = "stablehlo.add"(%ssa, %ssb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%sss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %var = "stablehlo.divide"(%ss, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ve = "stablehlo.add"(%var, %eps) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %rstd = "stablehlo.rsqrt"(%ve) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %rb = "stablehlo.broadcast_in_dim"(%rstd) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %y = "stablehlo.multiply"(%d, %rb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 2>} : (tensor<8xf32>) -> tensor<2x8x8xf32>
  %yw = "stablehlo.multiply"(%y, %wb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  "func.return"(%yw) : (tensor<2x8x8xf32>) -> ()
}) : () -> ()

// With a bias added on the left: the operands are x, weight, bias.
// CHECK-LABEL: sym_name = "layer_norm_weight_bias"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x8xf32>, [[W:%arg[0-9]+]]: tensor<8xf32>, [[B:%arg[0-9]+]]: tensor<8xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]], [[W]], [[B]]) {composite_attributes = {eps = 9.99999974E-6 : f32, has_bias = true, has_weight = true, normalized_shape = array<i64: 8>}, decomposition = @aten.layer_norm.default.impl_1
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>, sym_name = "layer_norm_weight_bias"}> ({
^bb0(%x: tensor<2x8x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %s = "stablehlo.reduce"(%x, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %m = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %dd = "stablehlo.multiply"(%d, %d) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %ss = "stablehlo.reduce"(%dd, %zero) ({
  ^bb0(%ssa: tensor<f32>, %ssb: tensor<f32>):
    %sss = "stablehlo.add"(%ssa, %ssb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%sss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %var = "stablehlo.divide"(%ss, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ve = "stablehlo.add"(%var, %eps) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %rstd = "stablehlo.rsqrt"(%ve) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %rb = "stablehlo.broadcast_in_dim"(%rstd) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %y = "stablehlo.multiply"(%d, %rb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 2>} : (tensor<8xf32>) -> tensor<2x8x8xf32>
  %yw = "stablehlo.multiply"(%y, %wb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %bb = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 2>} : (tensor<8xf32>) -> tensor<2x8x8xf32>
  %yb = "stablehlo.add"(%bb, %yw) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  "func.return"(%yb) : (tensor<2x8x8xf32>) -> ()
}) : () -> ()

// Must not fire: rsqrt(var + eps) is also a result of the function.
// CHECK-LABEL: sym_name = "layer_norm_rstd_also_returned"
// CHECK-NOT: composite
// CHECK: "stablehlo.rsqrt"
"func.func"() <{function_type = (tensor<2x8x8xf32>, tensor<8xf32>) -> (tensor<2x8x8xf32>, tensor<2x8xf32>), sym_name = "layer_norm_rstd_also_returned"}> ({
^bb0(%x: tensor<2x8x8xf32>, %w: tensor<8xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %s = "stablehlo.reduce"(%x, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %m = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %dd = "stablehlo.multiply"(%d, %d) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %ss = "stablehlo.reduce"(%dd, %zero) ({
  ^bb0(%ssa: tensor<f32>, %ssb: tensor<f32>):
    %sss = "stablehlo.add"(%ssa, %ssb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%sss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %var = "stablehlo.divide"(%ss, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ve = "stablehlo.add"(%var, %eps) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %rstd = "stablehlo.rsqrt"(%ve) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %rb = "stablehlo.broadcast_in_dim"(%rstd) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %y = "stablehlo.multiply"(%d, %rb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 2>} : (tensor<8xf32>) -> tensor<2x8x8xf32>
  %yw = "stablehlo.multiply"(%y, %wb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  "func.return"(%yw, %rstd) : (tensor<2x8x8xf32>, tensor<2x8xf32>) -> ()
}) : () -> ()

// The "weight" is broadcast along dim 1, not along the normalized dim 2: only the
// normalization without affine is a layer norm; the multiply stays outside.
// CHECK-LABEL: sym_name = "layer_norm_weight_on_dim_1"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x8xf32>, [[W:%arg[0-9]+]]: tensor<8xf32>)
// CHECK-NEXT: [[N:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {eps = 9.99999974E-6 : f32, has_bias = false, has_weight = false, normalized_shape = array<i64: 8>}, decomposition = @aten.layer_norm.default.impl_2
// CHECK-NEXT: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 1>}
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.multiply"([[N]], [[WB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>, sym_name = "layer_norm_weight_on_dim_1"}> ({
^bb0(%x: tensor<2x8x8xf32>, %w: tensor<8xf32>):
  %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %s = "stablehlo.reduce"(%x, %zero) ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %ss = "stablehlo.add"(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%ss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %nc = "stablehlo.constant"() {value = dense<8.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %n = "stablehlo.broadcast_in_dim"(%nc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %m = "stablehlo.divide"(%s, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %d = "stablehlo.subtract"(%x, %mb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %dd = "stablehlo.multiply"(%d, %d) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %ss = "stablehlo.reduce"(%dd, %zero) ({
  ^bb0(%ssa: tensor<f32>, %ssb: tensor<f32>):
    %sss = "stablehlo.add"(%ssa, %ssb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%sss) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 2>} : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %var = "stablehlo.divide"(%ss, %n) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %epsc = "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %eps = "stablehlo.broadcast_in_dim"(%epsc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %ve = "stablehlo.add"(%var, %eps) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %rstd = "stablehlo.rsqrt"(%ve) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %rb = "stablehlo.broadcast_in_dim"(%rstd) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %y = "stablehlo.multiply"(%d, %rb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %wb = "stablehlo.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<2x8x8xf32>
  %yw = "stablehlo.multiply"(%y, %wb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  "func.return"(%yw) : (tensor<2x8x8xf32>) -> ()
}) : () -> ()

// GELU, tanh form, as GPT-2's NewGELUActivation writes it.
// CHECK-LABEL: sym_name = "gelu_tanh"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {approximate = "tanh"}, decomposition = @aten.gelu.default.impl_0, name = "aten.gelu.default", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "gelu_tanh"}> ({
^bb0(%x: tensor<2x8xf32>):
  %halfc = "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %half = "stablehlo.broadcast_in_dim"(%halfc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %hx = "stablehlo.multiply"(%x, %half) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %x2 = "stablehlo.multiply"(%x, %x) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %x3 = "stablehlo.multiply"(%x2, %x) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %cc = "stablehlo.constant"() {value = dense<4.471500e-02> : tensor<f32>} : () -> tensor<f32>
  %c = "stablehlo.broadcast_in_dim"(%cc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %cx3 = "stablehlo.multiply"(%x3, %c) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %in = "stablehlo.add"(%x, %cx3) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %kc = "stablehlo.constant"() {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %k = "stablehlo.broadcast_in_dim"(%kc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %u = "stablehlo.multiply"(%in, %k) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %th = "stablehlo.tanh"(%u) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %onec = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %one = "stablehlo.broadcast_in_dim"(%onec) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %op = "stablehlo.add"(%th, %one) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.multiply"(%hx, %op) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// Must not fire: 0.044 is not GELU's 0.044715.
// CHECK-LABEL: sym_name = "gelu_tanh_wrong_coefficient"
// CHECK-NOT: composite
// CHECK: "stablehlo.tanh"
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "gelu_tanh_wrong_coefficient"}> ({
^bb0(%x: tensor<2x8xf32>):
  %halfc = "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %half = "stablehlo.broadcast_in_dim"(%halfc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %hx = "stablehlo.multiply"(%x, %half) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %x2 = "stablehlo.multiply"(%x, %x) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %x3 = "stablehlo.multiply"(%x2, %x) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %cc = "stablehlo.constant"() {value = dense<4.400000e-02> : tensor<f32>} : () -> tensor<f32>
  %c = "stablehlo.broadcast_in_dim"(%cc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %cx3 = "stablehlo.multiply"(%x3, %c) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %in = "stablehlo.add"(%x, %cx3) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %kc = "stablehlo.constant"() {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %k = "stablehlo.broadcast_in_dim"(%kc) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %u = "stablehlo.multiply"(%in, %k) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %th = "stablehlo.tanh"(%u) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %onec = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %one = "stablehlo.broadcast_in_dim"(%onec) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x8xf32>
  %op = "stablehlo.add"(%th, %one) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.multiply"(%hx, %op) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// SiLU, logistic on the left.
// CHECK-LABEL: sym_name = "silu"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.composite"([[X]]) {composite_attributes = {}, decomposition = @aten.silu.default.impl_0, name = "aten.silu.default", version = 0 : i32}
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "silu"}> ({
^bb0(%x: tensor<2x8xf32>):
  %l = "stablehlo.logistic"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.multiply"(%l, %x) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// Must not fire: x * logistic(z).
// CHECK-LABEL: sym_name = "silu_of_another_tensor"
// CHECK-NOT: composite
// CHECK: "stablehlo.logistic"
"func.func"() <{function_type = (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>, sym_name = "silu_of_another_tensor"}> ({
^bb0(%x: tensor<2x8xf32>, %z: tensor<2x8xf32>):
  %l = "stablehlo.logistic"(%z) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = "stablehlo.multiply"(%x, %l) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  "func.return"(%r) : (tensor<2x8xf32>) -> ()
}) : () -> ()

// The decompositions, private, in the order they were made, each holding exactly the
// replaced ops (constants copied in).
// CHECK-LABEL: sym_name = "aten._softmax.default.impl_0", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>):
// CHECK-NEXT: [[NINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.reduce"([[X]], [[NINF]])
// CHECK: "stablehlo.maximum"
// CHECK: {dimensions = array<i64: 1>}
// CHECK-NEXT: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 0>}
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK-NEXT: [[E:%[0-9]+]] = "stablehlo.exponential"([[D]])
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.reduce"([[E]], [[ZERO]])
// CHECK: "stablehlo.add"
// CHECK: {dimensions = array<i64: 1>}
// CHECK-NEXT: [[SB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[S]]) {broadcast_dimensions = array<i64: 0>}
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.divide"([[E]], [[SB]])
// CHECK-NEXT: "func.return"([[R]])
// CHECK-LABEL: sym_name = "odml.rms_norm.impl_0", sym_visibility = "private"
// CHECK-NEXT: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x16xf32>, [[W:%arg[0-9]+]]: tensor<16xf32>):
// CHECK: "stablehlo.multiply"([[X]], [[X]])
// CHECK: "stablehlo.rsqrt"
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 2>}
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.multiply"([[WB]], {{%[0-9]+}})
// CHECK-NEXT: "func.return"([[R]])
// CHECK-LABEL: sym_name = "aten.layer_norm.default.impl_0"
// CHECK-LABEL: sym_name = "aten.layer_norm.default.impl_1"
// CHECK-LABEL: sym_name = "aten.layer_norm.default.impl_2"
// CHECK-NEXT: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x8xf32>):
// CHECK-NOT: "stablehlo.broadcast_in_dim"(%arg
// CHECK: [[RSTD:%[0-9]+]] = "stablehlo.rsqrt"
// CHECK-NEXT: [[RB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[RSTD]]) {broadcast_dimensions = array<i64: 0, 1>}
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.multiply"({{%[0-9]+}}, [[RB]])
// CHECK-NEXT: "func.return"([[R]])
// CHECK-LABEL: sym_name = "aten.gelu.default.impl_0"
// CHECK: "stablehlo.tanh"
// CHECK-LABEL: sym_name = "aten.silu.default.impl_0"
// CHECK-NEXT: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xf32>):
// CHECK-NEXT: [[L:%[0-9]+]] = "stablehlo.logistic"([[X]])
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.multiply"([[L]], [[X]])
// CHECK-NEXT: "func.return"([[R]])
