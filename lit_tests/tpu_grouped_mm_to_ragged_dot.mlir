// tpu-grouped-mm-to-ragged-dot (compiler/src/passes/grouped_mm_to_ragged_dot.rs): the
// grouped-matmul composites `aten-outline-composites` made are decomposed as
// chlo.ragged_dot for libtpu (the driver runs it on the program of `--topology` only;
// program.mlir keeps the loop). The groups are bounded like PyTorch's slices; where
// they tile the rows in order (monotone offsets: each group's end is the next one's
// start) a `stablehlo.if` takes the ragged dot, group sizes end - start, rows from the
// last end on zero; otherwise the portable loop. The composite keeps its name; the old
// decomposition is erased.
//
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites,lower-aten-to-stablehlo,tpu-grouped-mm-to-ragged-dot | FileCheck %s

// Two identical nodes share one decomposition, and so one ragged one.
// CHECK-LABEL: sym_name = "two_layers"
// CHECK: [[A:%[0-9]+]] = "stablehlo.composite"({{.*}}) {{{.*}}decomposition = @tpuc.ragged_dot.impl_0, name = "transformers.grouped_mm_fallback.default"
// CHECK: "stablehlo.composite"([[A]], {{.*}}) {{{.*}}decomposition = @tpuc.ragged_dot.impl_0, name = "transformers.grouped_mm_fallback.default"
// f32 (below) asks for the precision the loop's dot_general asked for.
// CHECK-LABEL: sym_name = "f32"
// CHECK: decomposition = @tpuc.ragged_dot.impl_1, name = "aten._grouped_mm.default"
// The weight-gradient form (two matrices, a ragged contraction) keeps its loop: libtpu
// compiles a ragged dot of that kind as a dense masked matmul (E times the FLOPs).
// CHECK-LABEL: sym_name = "weight_gradient"
// CHECK: decomposition = @aten._grouped_mm.default.impl_1, name = "aten._grouped_mm.default"
// CHECK-NOT: grouped_mm_fallback.default.impl_0
// CHECK-LABEL: sym_name = "aten._grouped_mm.default.impl_1"
// CHECK: "stablehlo.while"
// CHECK-NOT: chlo.ragged_dot
// CHECK-LABEL: sym_name = "tpuc.ragged_dot.impl_0"
// CHECK-SAME: sym_visibility = "private"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<8x4xbf16>, [[W:%arg[0-9]+]]: tensor<2x4x4xbf16>, [[O:%arg[0-9]+]]: tensor<2xi32>)
// CHECK: "stablehlo.convert"([[O]]) : (tensor<2xi32>) -> tensor<2xi64>
// Whether the groups tile the rows: each end at most the next start, all of them.
// CHECK: [[HI:%[0-9]+]] = "stablehlo.maximum"([[END:%[0-9]+]], [[LO:%[0-9]+]])
// CHECK: [[BEFORE:%[0-9]+]] = "stablehlo.slice"([[HI]]) {limit_indices = array<i64: 1>, start_indices = array<i64: 0>
// CHECK: [[AFTER:%[0-9]+]] = "stablehlo.slice"([[LO]]) {limit_indices = array<i64: 2>, start_indices = array<i64: 1>
// CHECK: [[ORDERED:%[0-9]+]] = "stablehlo.compare"([[BEFORE]], [[AFTER]])
// CHECK-SAME: comparison_direction LE
// CHECK: [[TILED:%[0-9]+]] = "stablehlo.reduce"([[ORDERED]]
// CHECK: "stablehlo.and"
// CHECK: [[RESULT:%[0-9]+]] = "stablehlo.if"([[TILED]]) ({
// CHECK: [[SIZES64:%[0-9]+]] = "stablehlo.subtract"([[HI]], [[LO]])
// CHECK: [[SIZES:%[0-9]+]] = "stablehlo.convert"([[SIZES64]]) : (tensor<2xi64>) -> tensor<2xi32>
// CHECK: [[R:%[0-9]+]] = "chlo.ragged_dot"({{%arg[0-9]+}}, {{%arg[0-9]+}}, [[SIZES]]) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<8x4xbf16>, tensor<2x4x4xbf16>, tensor<2xi32>) -> tensor<8x4xbf16>
// CHECK: [[LAST:%[0-9]+]] = "stablehlo.slice"([[HI]]) {limit_indices = array<i64: 2>, start_indices = array<i64: 1>
// CHECK: [[COVERED:%[0-9]+]] = "stablehlo.compare"
// CHECK-SAME: comparison_direction LT
// CHECK: [[MASK:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[COVERED]]) {broadcast_dimensions = array<i64: 0>} : (tensor<8xi1>) -> tensor<8x4xi1>
// CHECK: [[OUT:%[0-9]+]] = "stablehlo.select"([[MASK]], [[R]], {{%[0-9]+}})
// CHECK: "stablehlo.return"([[OUT]])
// Groups that overlap: the portable loop, exact for any offsets.
// CHECK: }, {
// CHECK-NOT: chlo.ragged_dot
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.while"
// CHECK: "func.return"([[RESULT]])
"func.func"() <{function_type = (tensor<8x4xbf16>, tensor<2x4x4xbf16>, tensor<2xi32>) -> tensor<8x4xbf16>, sym_name = "two_layers"}> ({
^bb0(%x: tensor<8x4xbf16>, %w: tensor<2x4x4xbf16>, %o: tensor<2xi32>):
  %0 = "transformers.grouped_mm_fallback.default"(%x, %w, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<8x4xbf16>, tensor<2x4x4xbf16>, tensor<2xi32>) -> tensor<8x4xbf16> loc("grouped_mm")
  %1 = "transformers.grouped_mm_fallback.default"(%0, %w, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<8x4xbf16>, tensor<2x4x4xbf16>, tensor<2xi32>) -> tensor<8x4xbf16> loc("grouped_mm_1")
  "func.return"(%1) : (tensor<8x4xbf16>) -> ()
}) : () -> ()

// CHECK-NOT: grouped_mm.default.impl_0
// CHECK-LABEL: sym_name = "tpuc.ragged_dot.impl_1"
// CHECK: "chlo.ragged_dot"
// CHECK-SAME: precision_config = [#chlo<precision HIGHEST>, #chlo<precision HIGHEST>]
// CHECK-SAME: (tensor<6x3xf32>, tensor<3x3x2xf32>, tensor<3xi32>) -> tensor<6x2xf32>
// The loop for overlapping groups asks for it too.
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dot_general"
// CHECK-SAME: precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
// CHECK-NOT: sym_name
"func.func"() <{function_type = (tensor<6x3xf32>, tensor<3x3x2xf32>, tensor<3xi32>) -> tensor<6x2xf32>, sym_name = "f32"}> ({
^bb0(%x: tensor<6x3xf32>, %w: tensor<3x3x2xf32>, %o: tensor<3xi32>):
  %0 = "aten._grouped_mm.default"(%x, %w, %o) {operand_names = ["self", "mat2", "offs"]} : (tensor<6x3xf32>, tensor<3x3x2xf32>, tensor<3xi32>) -> tensor<6x2xf32> loc("grouped_mm_f32")
  "func.return"(%0) : (tensor<6x2xf32>) -> ()
}) : () -> ()

"func.func"() <{function_type = (tensor<3x8xbf16>, tensor<8x5xbf16>, tensor<2xi32>) -> tensor<2x3x5xbf16>, sym_name = "weight_gradient"}> ({
^bb0(%x: tensor<3x8xbf16>, %y: tensor<8x5xbf16>, %o: tensor<2xi32>):
  %0 = "aten._grouped_mm.default"(%x, %y, %o) {operand_names = ["self", "mat2", "offs"]} : (tensor<3x8xbf16>, tensor<8x5xbf16>, tensor<2xi32>) -> tensor<2x3x5xbf16> loc("grouped_mm_weight_gradient")
  "func.return"(%0) : (tensor<2x3x5xbf16>) -> ()
}) : () -> ()
