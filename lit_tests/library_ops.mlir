// Library ops family (compiler/src/passes/lower_aten_to_stablehlo/library_ops.rs):
// operators registered outside ATen. `transformers.grouped_mm_fallback` and
// `aten._grouped_mm` (input [S, K], weight [E, K, N], offs [E] cumulative row ends)
// multiply every row by every expert with one dense dot_general to [S, E, N]; the
// row's expert is the number of offsets <= row (E, i.e. no expert and a zero row, past
// offs[E-1]), turned into a one-hot [S, E] mask that selects it with a reduce over E.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// S=5, K=3, E=2, N=4: with offs = [2, 4], rows 0-1 take expert 0, rows 2-3 expert 1
// and row 4 none (its one-hot row is all zeros).
// CHECK-LABEL: sym_name = "grouped_mm_fallback"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<5x3xf32>, [[W:%arg[0-9]+]]: tensor<2x3x4xf32>, [[O:%arg[0-9]+]]: tensor<2xi64>)
// CHECK: [[ALL:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[W]])
// CHECK-SAME: lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]
// CHECK-SAME: (tensor<5x3xf32>, tensor<2x3x4xf32>) -> tensor<5x2x4xf32>
// CHECK: [[ROWS:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<5x2xi64>
// CHECK: [[ENDS:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[O]]) {broadcast_dimensions = array<i64: 1>} : (tensor<2xi64>) -> tensor<5x2xi64>
// CHECK: [[LE:%[0-9]+]] = "stablehlo.compare"([[ENDS]], [[ROWS]])
// CHECK-SAME: comparison_direction LE
// CHECK: [[PAST:%[0-9]+]] = "stablehlo.convert"([[LE]]) : (tensor<5x2xi1>) -> tensor<5x2xi64>
// CHECK: [[GROUP:%[0-9]+]] = "stablehlo.reduce"([[PAST]], {{%[0-9]+}})
// CHECK: "stablehlo.add"
// CHECK: dimensions = array<i64: 1>} : (tensor<5x2xi64>, tensor<i64>) -> tensor<5xi64>
// CHECK: [[EXP:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<5x2xi64>
// CHECK: [[GB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[GROUP]]) {broadcast_dimensions = array<i64: 0>} : (tensor<5xi64>) -> tensor<5x2xi64>
// CHECK: [[HOT:%[0-9]+]] = "stablehlo.compare"([[GB]], [[EXP]])
// CHECK-SAME: comparison_direction EQ
// CHECK: [[HOTF:%[0-9]+]] = "stablehlo.convert"([[HOT]]) : (tensor<5x2xi1>) -> tensor<5x2xf32>
// CHECK: [[MASK:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[HOTF]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<5x2xf32>) -> tensor<5x2x4xf32>
// CHECK: [[PROD:%[0-9]+]] = "stablehlo.multiply"([[ALL]], [[MASK]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.reduce"([[PROD]], {{%[0-9]+}})
// CHECK: "stablehlo.add"
// CHECK: dimensions = array<i64: 1>} : (tensor<5x2x4xf32>, tensor<f32>) -> tensor<5x4xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<5x3xf32>, tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x4xf32>, sym_name = "grouped_mm_fallback"}> ({
^bb0(%x: tensor<5x3xf32>, %w: tensor<2x3x4xf32>, %o: tensor<2xi64>):
  %0 = "transformers.grouped_mm_fallback.default"(%x, %w, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<5x3xf32>, tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x4xf32> loc("grouped_mm")
  "func.return"(%0) : (tensor<5x4xf32>) -> ()
}) : () -> ()

// aten._grouped_mm (weight named mat2) in bf16 with i32 offsets: the dot accumulates
// in f32, the offsets are widened to i64, and only the selected sum rounds to bf16.
// CHECK-LABEL: sym_name = "grouped_mm_bf16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x2xbf16>, [[W:%arg[0-9]+]]: tensor<3x2x5xbf16>, [[O:%arg[0-9]+]]: tensor<3xi32>)
// CHECK: [[ALL:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[W]])
// CHECK-SAME: (tensor<4x2xbf16>, tensor<3x2x5xbf16>) -> tensor<4x3x5xf32>
// CHECK: [[O64:%[0-9]+]] = "stablehlo.convert"([[O]]) : (tensor<3xi32>) -> tensor<3xi64>
// CHECK: "stablehlo.broadcast_in_dim"([[O64]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xi64>) -> tensor<4x3xi64>
// CHECK: [[PROD:%[0-9]+]] = "stablehlo.multiply"([[ALL]], {{%[0-9]+}}) : (tensor<4x3x5xf32>, tensor<4x3x5xf32>)
// CHECK: [[R:%[0-9]+]] = "stablehlo.reduce"([[PROD]], {{%[0-9]+}})
// CHECK: -> tensor<4x5xf32>
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.convert"([[R]]) : (tensor<4x5xf32>) -> tensor<4x5xbf16>
// CHECK-NEXT: "func.return"([[C]])
"func.func"() <{function_type = (tensor<4x2xbf16>, tensor<3x2x5xbf16>, tensor<3xi32>) -> tensor<4x5xbf16>, sym_name = "grouped_mm_bf16"}> ({
^bb0(%x: tensor<4x2xbf16>, %w: tensor<3x2x5xbf16>, %o: tensor<3xi32>):
  %0 = "aten._grouped_mm.default"(%x, %w, %o) {operand_names = ["self", "mat2", "offs"]} : (tensor<4x2xbf16>, tensor<3x2x5xbf16>, tensor<3xi32>) -> tensor<4x5xbf16> loc("grouped_mm_bf16")
  "func.return"(%0) : (tensor<4x5xbf16>) -> ()
}) : () -> ()
