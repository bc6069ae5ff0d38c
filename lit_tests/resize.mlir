// Resize family (compiler/src/passes/lower_aten_to_stablehlo/resize.rs): each spatial
// dim is resized by a constant [out, in] interpolation matrix built with PyTorch's index
// formulas, applied with one dot_general per dim.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// Nearest x2 along H (W unchanged, no op for it): output row i reads input row floor(i/2),
// so the 4x2 matrix is [[1,0],[1,0],[0,1],[0,1]]. Bilinear with align_corners along W,
// 3 -> 5: src = i * (3-1)/(5-1) = i/2, rows [1,0,0],[.5,.5,0],[0,1,0],[0,.5,.5],[0,0,1].
// CHECK-LABEL: sym_name = "resize"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x1x2x3xf32>)
// CHECK: "stablehlo.constant"() {value = dense<[1.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<8xf32>}
// CHECK: [[M:%[0-9]+]] = "stablehlo.reshape"({{%[0-9]+}}) : (tensor<8xf32>) -> tensor<4x2xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[M]])
// CHECK-SAME: lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]
// CHECK: [[N:%[0-9]+]] = "stablehlo.transpose"([[D]]) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
// CHECK: "stablehlo.constant"() {value = dense<[1.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<15xf32>}
// CHECK: [[W:%[0-9]+]] = "stablehlo.reshape"({{%[0-9]+}}) : (tensor<15xf32>) -> tensor<5x3xf32>
// CHECK: [[B:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[W]])
// CHECK-SAME: lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]
// CHECK-SAME: -> tensor<1x1x2x5xf32>
// CHECK-NEXT: "func.return"([[N]], [[B]])
"func.func"() <{function_type = (tensor<1x1x2x3xf32>) -> (tensor<1x1x4x3xf32>, tensor<1x1x2x5xf32>), sym_name = "resize"}> ({
^bb0(%x: tensor<1x1x2x3xf32>):
  %0 = "aten.upsample_nearest2d.vec"(%x) {operand_names = ["input"], scale_factors = array<f64: 2.000000e+00, 1.000000e+00>} : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x3xf32> loc("nearest")
  %1 = "aten.upsample_bilinear2d.vec"(%x) {align_corners = true, operand_names = ["input"], output_size = array<i64: 2, 5>} : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x5xf32> loc("bilinear")
  "func.return"(%0, %1) : (tensor<1x1x4x3xf32>, tensor<1x1x2x5xf32>) -> ()
}) : () -> ()
