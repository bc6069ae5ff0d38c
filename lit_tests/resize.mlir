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

// grid_sampler_2d, bilinear (mode 0) with zeros padding and align_corners = false:
// the grid's x (last dim, index 0) unnormalizes with W = 4 as ((x + 1) * 4 - 1) / 2 and
// its y (index 1) with H = 3 as ((y + 1) * 3 - 1) / 2. The four corner taps read the
// [N, H, W, C] transposed input with a gather of (n, y, x) triples (index_vector_dim 3),
// each clamped into range and zeroed outside [0, W-1] x [0, H-1].
// CHECK-LABEL: sym_name = "grid_sampler_bilinear_zeros"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x2x3x4xf32>, [[G:%arg[0-9]+]]: tensor<1x1x2x2xf32>)
// CHECK: [[GX:%[0-9]+]] = "stablehlo.slice"([[G]]) {limit_indices = array<i64: 1, 1, 2, 1>, start_indices = array<i64: 0, 0, 0, 0>
// CHECK: [[GXR:%[0-9]+]] = "stablehlo.reshape"([[GX]]) : (tensor<1x1x2x1xf32>) -> tensor<1x1x2xf32>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[A:%[0-9]+]] = "stablehlo.add"([[GXR]], [[ONE]])
// CHECK: [[WC:%[0-9]+]] = "stablehlo.constant"() {value = dense<4.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[M:%[0-9]+]] = "stablehlo.multiply"([[A]], [[WC]])
// CHECK: [[S:%[0-9]+]] = "stablehlo.subtract"([[M]], [[ONE]])
// CHECK: [[TWO:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[IX:%[0-9]+]] = "stablehlo.divide"([[S]], [[TWO]])
// CHECK: [[GY:%[0-9]+]] = "stablehlo.slice"([[G]]) {limit_indices = array<i64: 1, 1, 2, 2>, start_indices = array<i64: 0, 0, 0, 1>
// CHECK: "stablehlo.constant"() {value = dense<3.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[IY:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[XT:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
// CHECK: [[X0:%[0-9]+]] = "stablehlo.floor"([[IX]])
// CHECK: [[Y0:%[0-9]+]] = "stablehlo.floor"([[IY]])
// CHECK: "stablehlo.compare"([[X0]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction GE
// CHECK: "stablehlo.constant"() {value = dense<3.000000e+00> : tensor<1x1x2xf32>}
// CHECK: "stablehlo.compare"([[X0]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LE
// CHECK: "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<1x1x2xf32>}
// CHECK: "stablehlo.compare"([[Y0]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LE
// CHECK: [[XC:%[0-9]+]] = "stablehlo.clamp"({{%[0-9]+}}, [[X0]], {{%[0-9]+}})
// CHECK: [[XI:%[0-9]+]] = "stablehlo.convert"([[XC]]) : (tensor<1x1x2xf32>) -> tensor<1x1x2xi64>
// CHECK: [[YC:%[0-9]+]] = "stablehlo.clamp"({{%[0-9]+}}, [[Y0]], {{%[0-9]+}})
// CHECK: [[YI:%[0-9]+]] = "stablehlo.convert"([[YC]]) : (tensor<1x1x2xf32>) -> tensor<1x1x2xi64>
// CHECK: [[NI:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<1x1x2xi64>
// CHECK: [[NC:%[0-9]+]] = "stablehlo.reshape"([[NI]]) : (tensor<1x1x2xi64>) -> tensor<1x1x2x1xi64>
// CHECK: [[YR:%[0-9]+]] = "stablehlo.reshape"([[YI]]) : (tensor<1x1x2xi64>) -> tensor<1x1x2x1xi64>
// CHECK: [[XR:%[0-9]+]] = "stablehlo.reshape"([[XI]]) : (tensor<1x1x2xi64>) -> tensor<1x1x2x1xi64>
// CHECK: [[IDX:%[0-9]+]] = "stablehlo.concatenate"([[NC]], [[YR]], [[XR]]) {dimension = 3 : i64} {{.*}} -> tensor<1x1x2x3xi64>
// CHECK: "stablehlo.gather"([[XT]], [[IDX]]) {dimension_numbers = #stablehlo.gather<offset_dims = [3], collapsed_slice_dims = [0, 1, 2], start_index_map = [0, 1, 2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1, 2>} : (tensor<1x3x4x2xf32>, tensor<1x1x2x3xi64>) -> tensor<1x1x2x2xf32>
// CHECK-COUNT-3: "stablehlo.gather"([[XT]], {{%[0-9]+}})
// CHECK-NOT: "stablehlo.gather"
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.add"({{%[0-9]+}}, {{%[0-9]+}}) : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>)
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.transpose"([[SUM]]) {permutation = array<i64: 0, 3, 1, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x2x1x2xf32>
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<1x2x3x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x1x2xf32>, sym_name = "grid_sampler_bilinear_zeros"}> ({
^bb0(%x: tensor<1x2x3x4xf32>, %g: tensor<1x1x2x2xf32>):
  %0 = "aten.grid_sampler_2d.default"(%x, %g) {align_corners = false, interpolation_mode = 0 : i64, operand_names = ["input", "grid"], padding_mode = 0 : i64} : (tensor<1x2x3x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x1x2xf32> loc("grid_bilinear")
  "func.return"(%0) : (tensor<1x2x1x2xf32>) -> ()
}) : () -> ()

// grid_sampler_2d, bicubic (mode 2) with border padding and align_corners = true:
// x unnormalizes as (x + 1) * (4 - 1) / 2, y as (y + 1) * (3 - 1) / 2. The weights of
// the taps at offsets -1..2 from the floor, with t the fractional part and A = -0.75,
// are conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t), where
// conv1(s) = ((A + 2) s - (A + 3)) s^2 + 1 (constants 1.25, 2.25) and
// conv2(s) = ((A s - 5A) s + 8A) s - 4A (constants -0.75, -3.75, -6, -3).
// Each tap coordinate is clipped to [0, size - 1] (border), truncated through i64,
// and read with a gather: 16 taps in all.
// CHECK-LABEL: sym_name = "grid_sampler_bicubic"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x2x3x4xf32>, [[G:%arg[0-9]+]]: tensor<1x1x2x2xf32>)
// CHECK: "stablehlo.constant"() {value = dense<1.500000e+00> : tensor<1x1x2xf32>}
// CHECK: [[IX:%[0-9]+]] = "stablehlo.multiply"
// CHECK: "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[IY:%[0-9]+]] = "stablehlo.multiply"
// CHECK: [[XT:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 0, 2, 3, 1>}
// CHECK: [[X0:%[0-9]+]] = "stablehlo.floor"([[IX]])
// CHECK: [[Y0:%[0-9]+]] = "stablehlo.floor"([[IY]])
// CHECK: [[T:%[0-9]+]] = "stablehlo.subtract"([[IX]], [[X0]])
// conv2(t + 1)
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[T1:%[0-9]+]] = "stablehlo.add"([[T]], [[ONE]])
// CHECK: [[A:%[0-9]+]] = "stablehlo.constant"() {value = dense<-7.500000e-01> : tensor<1x1x2xf32>}
// CHECK: [[P:%[0-9]+]] = "stablehlo.multiply"([[A]], [[T1]])
// CHECK: [[A5:%[0-9]+]] = "stablehlo.constant"() {value = dense<-3.750000e+00> : tensor<1x1x2xf32>}
// CHECK: [[P1:%[0-9]+]] = "stablehlo.subtract"([[P]], [[A5]])
// CHECK: [[P2:%[0-9]+]] = "stablehlo.multiply"([[P1]], [[T1]])
// CHECK: [[A8:%[0-9]+]] = "stablehlo.constant"() {value = dense<-6.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[P3:%[0-9]+]] = "stablehlo.add"([[P2]], [[A8]])
// CHECK: [[P4:%[0-9]+]] = "stablehlo.multiply"([[P3]], [[T1]])
// CHECK: [[A4:%[0-9]+]] = "stablehlo.constant"() {value = dense<-3.000000e+00> : tensor<1x1x2xf32>}
// CHECK: "stablehlo.subtract"([[P4]], [[A4]])
// conv1(t)
// CHECK: [[B2:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.250000e+00> : tensor<1x1x2xf32>}
// CHECK: [[Q:%[0-9]+]] = "stablehlo.multiply"([[B2]], [[T]])
// CHECK: [[B3:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.250000e+00> : tensor<1x1x2xf32>}
// CHECK: [[Q1:%[0-9]+]] = "stablehlo.subtract"([[Q]], [[B3]])
// CHECK: [[Q2:%[0-9]+]] = "stablehlo.multiply"([[Q1]], [[T]])
// CHECK: [[Q3:%[0-9]+]] = "stablehlo.multiply"([[Q2]], [[T]])
// CHECK: "stablehlo.add"([[Q3]], {{%[0-9]+}})
// conv1(1 - t)
// CHECK: [[U:%[0-9]+]] = "stablehlo.subtract"([[ONE]], [[T]])
// CHECK: "stablehlo.constant"() {value = dense<1.250000e+00> : tensor<1x1x2xf32>}
// CHECK: "stablehlo.multiply"({{%[0-9]+}}, [[U]])
// conv2(2 - t)
// CHECK: "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<1x1x2xf32>}
// CHECK: [[V:%[0-9]+]] = "stablehlo.subtract"({{%[0-9]+}}, [[T]])
// CHECK: "stablehlo.constant"() {value = dense<-7.500000e-01> : tensor<1x1x2xf32>}
// CHECK: "stablehlo.multiply"({{%[0-9]+}}, [[V]])
// the y weights, from y's fractional part
// CHECK: [[TY:%[0-9]+]] = "stablehlo.subtract"([[IY]], [[Y0]])
// first tap row: y0 - 1 clipped to [0, 2]
// CHECK: "stablehlo.constant"() {value = dense<-1.000000e+00> : tensor<1x1x2xf32>}
// CHECK: "stablehlo.add"([[Y0]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<1x1x2xf32>}
// CHECK: "stablehlo.maximum"
// CHECK: "stablehlo.minimum"
// CHECK: "stablehlo.convert"({{%[0-9]+}}) : (tensor<1x1x2xf32>) -> tensor<1x1x2xi64>
// CHECK: "stablehlo.gather"([[XT]], {{%[0-9]+}}) {dimension_numbers = #stablehlo.gather<offset_dims = [3], collapsed_slice_dims = [0, 1, 2], start_index_map = [0, 1, 2], index_vector_dim = 3>
// CHECK-COUNT-15: "stablehlo.gather"([[XT]], {{%[0-9]+}})
// CHECK-NOT: "stablehlo.gather"
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.add"({{%[0-9]+}}, {{%[0-9]+}}) : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>)
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.transpose"([[SUM]]) {permutation = array<i64: 0, 3, 1, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x2x1x2xf32>
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<1x2x3x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x1x2xf32>, sym_name = "grid_sampler_bicubic"}> ({
^bb0(%x: tensor<1x2x3x4xf32>, %g: tensor<1x1x2x2xf32>):
  %0 = "aten.grid_sampler_2d.default"(%x, %g) {align_corners = true, interpolation_mode = 2 : i64, operand_names = ["input", "grid"], padding_mode = 1 : i64} : (tensor<1x2x3x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x1x2xf32> loc("grid_bicubic")
  "func.return"(%0) : (tensor<1x2x1x2xf32>) -> ()
}) : () -> ()
