// stablehlo-merge-dots (compiler/src/passes/merge_dots.rs): dots of one left operand by
// weights of their own (arguments listed in `tpuc.packable`) become one dot over a
// packed weight argument, concatenated along dimension 0, and a slice per result. The
// new signature's origins are left in `tpuc.arg_origins` for the artifact writer.
//
// RUN: tpuc opt %s --pass-pipeline=stablehlo-merge-dots | FileCheck %s

// Q, K and V projections of one input (K narrower): one [40, 8] weight at the first
// weight's place, one dot, three slices along the result's last dimension.
// CHECK-LABEL: function_type = (tensor<40x8xf32>, tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>), sym_name = "qkv"
// CHECK-NEXT: ^bb0([[W:%arg[0-9]+]]: tensor<40x8xf32>, [[X:%arg[0-9]+]]: tensor<4x8xf32>)
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[W]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<4x8xf32>, tensor<40x8xf32>) -> tensor<4x40xf32>
// CHECK-NEXT: [[Q:%[0-9]+]] = "stablehlo.slice"([[D]]) {limit_indices = array<i64: 4, 16>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<4x40xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: [[K:%[0-9]+]] = "stablehlo.slice"([[D]]) {limit_indices = array<i64: 4, 24>, start_indices = array<i64: 0, 16>, strides = array<i64: 1, 1>} : (tensor<4x40xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: [[V:%[0-9]+]] = "stablehlo.slice"([[D]]) {limit_indices = array<i64: 4, 40>, start_indices = array<i64: 0, 24>, strides = array<i64: 1, 1>} : (tensor<4x40xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: "func.return"([[Q]], [[K]], [[V]])
// CHECK-NEXT: }) {tpuc.arg_origins = [array<i64: 0, 1, 2>, array<i64: 3>]}
"func.func"() <{function_type = (tensor<16x8xf32>, tensor<8x8xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>), sym_name = "qkv"}> ({
^bb0(%wq: tensor<16x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<16x8xf32>, %x: tensor<4x8xf32>):
  %q = "stablehlo.dot_general"(%x, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %k = "stablehlo.dot_general"(%x, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %v = "stablehlo.dot_general"(%x, %wv) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  "func.return"(%q, %k, %v) : (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>) -> ()
}) {tpuc.packable = array<i64: 0, 1, 2>} : () -> ()

// Cross-attention K and V of a [2, 5, 8] encoder output, the user input first: the
// packed weight takes the place of the first weight (argument 1), the slices run along
// the result's dimension 2.
// CHECK-LABEL: function_type = (tensor<2x5x8xf32>, tensor<12x8xf32>) -> (tensor<2x5x6xf32>, tensor<2x5x6xf32>), sym_name = "cross_kv"
// CHECK-NEXT: ^bb0([[E:%arg[0-9]+]]: tensor<2x5x8xf32>, [[W:%arg[0-9]+]]: tensor<12x8xf32>)
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[E]], [[W]]) {{.*}} : (tensor<2x5x8xf32>, tensor<12x8xf32>) -> tensor<2x5x12xf32>
// CHECK-NEXT: "stablehlo.slice"([[D]]) {limit_indices = array<i64: 2, 5, 6>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>}
// CHECK-NEXT: "stablehlo.slice"([[D]]) {limit_indices = array<i64: 2, 5, 12>, start_indices = array<i64: 0, 0, 6>, strides = array<i64: 1, 1, 1>}
// CHECK: {tpuc.arg_origins = [array<i64: 0>, array<i64: 1, 2>]}
"func.func"() <{function_type = (tensor<2x5x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) -> (tensor<2x5x6xf32>, tensor<2x5x6xf32>), sym_name = "cross_kv"}> ({
^bb0(%enc: tensor<2x5x8xf32>, %wk: tensor<6x8xf32>, %wv: tensor<6x8xf32>):
  %k = "stablehlo.dot_general"(%enc, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x5x8xf32>, tensor<6x8xf32>) -> tensor<2x5x6xf32>
  %v = "stablehlo.dot_general"(%enc, %wv) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x5x8xf32>, tensor<6x8xf32>) -> tensor<2x5x6xf32>
  "func.return"(%k, %v) : (tensor<2x5x6xf32>, tensor<2x5x6xf32>) -> ()
}) {tpuc.packable = array<i64: 1, 2>} : () -> ()

// Must not fire: without `tpuc.packable` (what every StableHLO-only output is), the
// function is left as it was.
// CHECK-LABEL: sym_name = "not_marked"
// CHECK-NOT: stablehlo.slice
// CHECK-NOT: tpuc.arg_origins
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<16x8xf32>, tensor<16x8xf32>, tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>), sym_name = "not_marked"}> ({
^bb0(%wq: tensor<16x8xf32>, %wk: tensor<16x8xf32>, %x: tensor<4x8xf32>):
  %q = "stablehlo.dot_general"(%x, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %k = "stablehlo.dot_general"(%x, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  "func.return"(%q, %k) : (tensor<4x16xf32>, tensor<4x16xf32>) -> ()
}) : () -> ()

// Must not fire on what does not hold: a weight with another user (%wa, also
// returned), an argument not listed (%wb), a weight
// whose dimension 0 is contracted (x·W with W as [in, out]), a batched dot; %wq's dot
// differs from %wy's in its left operand and from %wp's in precision. Each dot stays
// its own; the marker is removed and no origins are recorded.
// CHECK-LABEL: sym_name = "not_packed"
// CHECK-NOT: stablehlo.slice
// CHECK-NOT: tpuc.arg_origins
// CHECK: "func.return"
// CHECK-NOT: tpuc.packable
"func.func"() <{function_type = (tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<2x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>), sym_name = "not_packed"}> ({
^bb0(%wa: tensor<16x8xf32>, %wb: tensor<16x8xf32>, %win: tensor<8x16xf32>, %wbatch: tensor<2x16x8xf32>, %wy: tensor<16x8xf32>, %wp: tensor<16x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %xb: tensor<2x4x8xf32>, %wq: tensor<16x8xf32>):
  %a = "stablehlo.dot_general"(%x, %wa) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %b = "stablehlo.dot_general"(%x, %wb) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %c = "stablehlo.dot_general"(%x, %win) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %d = "stablehlo.dot_general"(%xb, %wbatch) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>} : (tensor<2x4x8xf32>, tensor<2x16x8xf32>) -> tensor<2x4x16xf32>
  %e = "stablehlo.dot_general"(%y, %wy) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %f = "stablehlo.dot_general"(%x, %wp) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %g = "stablehlo.dot_general"(%x, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  "func.return"(%wa, %a, %b, %c, %d, %e, %f, %g) : (tensor<16x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> ()
}) {tpuc.packable = array<i64: 0, 2, 3, 4, 5, 9>} : () -> ()

// ALBERT: two layers share their projections. One packed weight, read by both
// layers' dots.
// CHECK-LABEL: function_type = (tensor<16x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>), sym_name = "shared_layers"
// CHECK-NEXT: ^bb0([[W:%arg[0-9]+]]: tensor<16x8xf32>, [[X1:%arg[0-9]+]]: tensor<4x8xf32>, [[X2:%arg[0-9]+]]: tensor<4x8xf32>)
// CHECK-NEXT: [[D1:%[0-9]+]] = "stablehlo.dot_general"([[X1]], [[W]])
// CHECK-NEXT: "stablehlo.slice"([[D1]])
// CHECK-NEXT: "stablehlo.slice"([[D1]])
// CHECK-NEXT: [[D2:%[0-9]+]] = "stablehlo.dot_general"([[X2]], [[W]])
// CHECK-NEXT: "stablehlo.slice"([[D2]])
// CHECK-NEXT: "stablehlo.slice"([[D2]])
// CHECK: {tpuc.arg_origins = [array<i64: 0, 1>, array<i64: 2>, array<i64: 3>]}
"func.func"() <{function_type = (tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>), sym_name = "shared_layers"}> ({
^bb0(%wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>):
  %q1 = "stablehlo.dot_general"(%x1, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k1 = "stablehlo.dot_general"(%x1, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %q2 = "stablehlo.dot_general"(%x2, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k2 = "stablehlo.dot_general"(%x2, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  "func.return"(%q1, %k1, %q2, %k2) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
}) {tpuc.packable = array<i64: 0, 1>} : () -> ()

// Must not fire: %wk is also returned (packing would store it twice); in the second
// function the layers use the shared weights in different orders, and %wv pairs %wq
// with a different partner in another group.
// CHECK-LABEL: sym_name = "used_elsewhere"
// CHECK-NOT: stablehlo.slice
// CHECK: "func.return"
// CHECK-LABEL: sym_name = "different_partners"
// CHECK-NOT: stablehlo.slice
// CHECK-NOT: tpuc.arg_origins
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>), sym_name = "used_elsewhere"}> ({
^bb0(%wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %x: tensor<4x8xf32>):
  %q = "stablehlo.dot_general"(%x, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k = "stablehlo.dot_general"(%x, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  "func.return"(%q, %k, %wk) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) -> ()
}) {tpuc.packable = array<i64: 0, 1>} : () -> ()
"func.func"() <{function_type = (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>), sym_name = "different_partners"}> ({
^bb0(%wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>, %x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %x3: tensor<4x8xf32>):
  %q1 = "stablehlo.dot_general"(%x1, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k1 = "stablehlo.dot_general"(%x1, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k2 = "stablehlo.dot_general"(%x2, %wk) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %q2 = "stablehlo.dot_general"(%x2, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %q3 = "stablehlo.dot_general"(%x3, %wq) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %v3 = "stablehlo.dot_general"(%x3, %wv) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  "func.return"(%q1, %k1, %k2, %q2, %q3, %v3) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
}) {tpuc.packable = array<i64: 0, 1, 2>} : () -> ()
