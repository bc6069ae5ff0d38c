// Linear family (compiler/src/passes/lower_aten_to_stablehlo/linear.rs): linear,
// mm/bmm/matmul (batch broadcasting, 1-D operands), addmm/baddbmm (alpha, beta),
// convolution (stride, padding, dilation, groups, "same", unbatched input, bias).
// f32 contractions ask for HIGHEST precision; f16/bf16 ones accumulate in f32 and
// round once.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// linear: contract the last dim of the input with dim 1 of the weight (no
// transpose), then add the broadcast bias.
// CHECK-LABEL: sym_name = "linear_bias"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x16xf32>, [[W:%arg[0-9]+]]: tensor<32x16xf32>, [[B:%arg[0-9]+]]: tensor<32xf32>)
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[W]])
// CHECK-SAME: dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>
// CHECK-SAME: precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
// CHECK-SAME: (tensor<2x16xf32>, tensor<32x16xf32>) -> tensor<2x32xf32>
// CHECK-NEXT: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>) -> tensor<2x32xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.add"([[D]], [[BB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<2x32xf32>, sym_name = "linear_bias"}> ({
^bb0(%x: tensor<2x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>):
  %0 = "aten.linear.default"(%x, %w, %b) {operand_names = ["input", "weight", "bias"]} : (tensor<2x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<2x32xf32> loc("linear")
  "func.return"(%0) : (tensor<2x32xf32>) -> ()
}) : () -> ()

// f16 linear on a 3-D input: contraction on dim 2, accumulated in f32 (no
// precision_config), then one rounding to f16.
// CHECK-LABEL: sym_name = "linear_3d_no_bias_f16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x32xf16>, [[W:%arg[0-9]+]]: tensor<96x32xf16>)
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[W]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x8x32xf16>, tensor<96x32xf16>) -> tensor<2x8x96xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.convert"([[D]]) : (tensor<2x8x96xf32>) -> tensor<2x8x96xf16>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x32xf16>, tensor<96x32xf16>) -> tensor<2x8x96xf16>, sym_name = "linear_3d_no_bias_f16"}> ({
^bb0(%x: tensor<2x8x32xf16>, %w: tensor<96x32xf16>):
  %0 = "aten.linear.default"(%x, %w) {operand_names = ["input", "weight"]} : (tensor<2x8x32xf16>, tensor<96x32xf16>) -> tensor<2x8x96xf16> loc("linear_1")
  "func.return"(%0) : (tensor<2x8x96xf16>) -> ()
}) : () -> ()

// mm and bmm (batch dim 0).
// CHECK-LABEL: sym_name = "mm_bmm"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<3x4xf32>, [[C:%arg[0-9]+]]: tensor<4x2x3xf32>, [[D:%arg[0-9]+]]: tensor<4x3x5xf32>)
// CHECK-NEXT: [[MM:%[0-9]+]] = "stablehlo.dot_general"([[A]], [[B]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
// CHECK-SAME: -> tensor<2x4xf32>
// CHECK-NEXT: [[BMM:%[0-9]+]] = "stablehlo.dot_general"([[C]], [[D]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
// CHECK-SAME: -> tensor<4x2x5xf32>
// CHECK-NEXT: "func.return"([[MM]], [[BMM]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> (tensor<2x4xf32>, tensor<4x2x5xf32>), sym_name = "mm_bmm"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4x2x3xf32>, %d: tensor<4x3x5xf32>):
  %0 = "aten.mm.default"(%a, %b) {operand_names = ["self", "mat2"]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("mm")
  %1 = "aten.bmm.default"(%c, %d) {operand_names = ["self", "mat2"]} : (tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32> loc("bmm")
  "func.return"(%0, %1) : (tensor<2x4xf32>, tensor<4x2x5xf32>) -> ()
}) : () -> ()

// matmul broadcasts batch dims ([2,1] with [5] -> [2,5]) before one dot_general.
// CHECK-LABEL: sym_name = "matmul_broadcast_batch"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x1x3x4xf32>, [[B:%arg[0-9]+]]: tensor<5x4x6xf32>)
// CHECK-NEXT: [[AB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<2x1x3x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1, 2, 3>} : (tensor<5x4x6xf32>) -> tensor<2x5x4x6xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.dot_general"([[AB]], [[BB]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>
// CHECK-SAME: (tensor<2x5x3x4xf32>, tensor<2x5x4x6xf32>) -> tensor<2x5x3x6xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>, sym_name = "matmul_broadcast_batch"}> ({
^bb0(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>):
  %0 = "aten.matmul.default"(%a, %b) {operand_names = ["self", "other"]} : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> loc("matmul")
  "func.return"(%0) : (tensor<2x5x3x6xf32>) -> ()
}) : () -> ()

// matmul with 1-D operands: vector.vector -> 0-d, matrix.vector -> [3],
// vector.matrix -> [3]; the promoted unit dims are reshaped away.
// CHECK-LABEL: sym_name = "matmul_vectors"
// CHECK: ^bb0([[U:%arg[0-9]+]]: tensor<4xf32>, [[V:%arg[0-9]+]]: tensor<4xf32>, [[M:%arg[0-9]+]]: tensor<3x4xf32>, [[N:%arg[0-9]+]]: tensor<4x3xf32>)
// CHECK-NEXT: [[U1:%[0-9]+]] = "stablehlo.reshape"([[U]]) : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: [[V1:%[0-9]+]] = "stablehlo.reshape"([[V]]) : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: [[D0:%[0-9]+]] = "stablehlo.dot_general"([[U1]], [[V1]])
// CHECK-SAME: -> tensor<1x1xf32>
// CHECK-NEXT: [[R0:%[0-9]+]] = "stablehlo.reshape"([[D0]]) : (tensor<1x1xf32>) -> tensor<f32>
// CHECK-NEXT: [[V2:%[0-9]+]] = "stablehlo.reshape"([[V]]) : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: [[D1:%[0-9]+]] = "stablehlo.dot_general"([[M]], [[V2]])
// CHECK-SAME: -> tensor<3x1xf32>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.reshape"([[D1]]) : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK-NEXT: [[U2:%[0-9]+]] = "stablehlo.reshape"([[U]]) : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: [[D2:%[0-9]+]] = "stablehlo.dot_general"([[U2]], [[N]])
// CHECK-SAME: -> tensor<1x3xf32>
// CHECK-NEXT: [[R2:%[0-9]+]] = "stablehlo.reshape"([[D2]]) : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: "func.return"([[R0]], [[R1]], [[R2]])
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4x3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>), sym_name = "matmul_vectors"}> ({
^bb0(%u: tensor<4xf32>, %v: tensor<4xf32>, %m: tensor<3x4xf32>, %n: tensor<4x3xf32>):
  %0 = "aten.matmul.default"(%u, %v) {operand_names = ["self", "other"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32> loc("dot")
  %1 = "aten.matmul.default"(%m, %v) {operand_names = ["self", "other"]} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32> loc("mv")
  %2 = "aten.matmul.default"(%u, %n) {operand_names = ["self", "other"]} : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32> loc("vm")
  "func.return"(%0, %1, %2) : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> ()
}) : () -> ()

// addmm = beta * self + alpha * (mat1 @ mat2), self broadcast to the result.
// CHECK-LABEL: sym_name = "addmm_alpha_beta"
// CHECK: ^bb0([[S:%arg[0-9]+]]: tensor<4xf32>, [[M1:%arg[0-9]+]]: tensor<2x3xf32>, [[M2:%arg[0-9]+]]: tensor<3x4xf32>)
// CHECK-NEXT: [[P:%[0-9]+]] = "stablehlo.dot_general"([[M1]], [[M2]])
// CHECK-NEXT: "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ALPHA:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[AP:%[0-9]+]] = "stablehlo.multiply"([[P]], [[ALPHA]])
// CHECK-NEXT: [[SB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[S]]) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT: [[BETA:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[BS:%[0-9]+]] = "stablehlo.multiply"([[SB]], [[BETA]])
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.add"([[AP]], [[BS]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>, sym_name = "addmm_alpha_beta"}> ({
^bb0(%b: tensor<4xf32>, %m1: tensor<2x3xf32>, %m2: tensor<3x4xf32>):
  %0 = "aten.addmm.default"(%b, %m1, %m2) {alpha = 2.000000e+00 : f64, beta = 5.000000e-01 : f64, operand_names = ["self", "mat1", "mat2"]} : (tensor<4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("addmm")
  "func.return"(%0) : (tensor<2x4xf32>) -> ()
}) : () -> ()

// beta = 0: `self` is ignored entirely (even NaN in it), as in PyTorch.
// CHECK-LABEL: sym_name = "baddbmm_beta_zero"
// CHECK: ^bb0([[S:%arg[0-9]+]]: tensor<4x2x5xf32>, [[B1:%arg[0-9]+]]: tensor<4x2x3xf32>, [[B2:%arg[0-9]+]]: tensor<4x3x5xf32>)
// CHECK-NEXT: [[P:%[0-9]+]] = "stablehlo.dot_general"([[B1]], [[B2]]) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
// CHECK-NEXT: "func.return"([[P]])
"func.func"() <{function_type = (tensor<4x2x5xf32>, tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>, sym_name = "baddbmm_beta_zero"}> ({
^bb0(%s: tensor<4x2x5xf32>, %b1: tensor<4x2x3xf32>, %b2: tensor<4x3x5xf32>):
  %0 = "aten.baddbmm.default"(%s, %b1, %b2) {beta = 0 : i64, operand_names = ["self", "batch1", "batch2"]} : (tensor<4x2x5xf32>, tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32> loc("baddbmm")
  "func.return"(%0) : (tensor<4x2x5xf32>) -> ()
}) : () -> ()

// convolution.default (from the cnn model) with stride 2, padding 1 and a bias
// broadcast along the channel dim.
// CHECK-LABEL: sym_name = "conv2d_stride_pad_bias"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x16x16xf32>, [[W:%arg[0-9]+]]: tensor<8x3x3x3xf32>, [[B:%arg[0-9]+]]: tensor<8xf32>)
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.convolution"([[X]], [[W]])
// CHECK-SAME: batch_group_count = 1 : i64
// CHECK-SAME: dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>
// CHECK-SAME: feature_group_count = 1 : i64
// CHECK-SAME: lhs_dilation = array<i64: 1, 1>
// CHECK-SAME: padding = dense<1> : tensor<2x2xi64>
// CHECK-SAME: precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
// CHECK-SAME: rhs_dilation = array<i64: 1, 1>
// CHECK-SAME: window_strides = array<i64: 2, 2>
// CHECK-SAME: -> tensor<2x8x8x8xf32>
// CHECK-NEXT: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<2x8x8x8xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.add"([[C]], [[BB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>, sym_name = "conv2d_stride_pad_bias"}> ({
^bb0(%x: tensor<2x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>):
  %0 = "aten.convolution.default"(%x, %w, %b) {dilation = array<i64: 1, 1>, groups = 1 : i64, operand_names = ["input", "weight", "bias"], output_padding = array<i64: 0, 0>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, transposed = false} : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32> loc("convolution")
  "func.return"(%0) : (tensor<2x8x8x8xf32>) -> ()
}) : () -> ()

// groups = 4 becomes feature_group_count, dilation rhs_dilation; padding defaults
// to 0 and stride to 1.
// CHECK-LABEL: sym_name = "conv2d_groups_dilation"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x8x10x10xf32>, [[W:%arg[0-9]+]]: tensor<8x2x3x3xf32>)
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.convolution"([[X]], [[W]])
// CHECK-SAME: feature_group_count = 4 : i64
// CHECK-SAME: padding = dense<0> : tensor<2x2xi64>
// CHECK-SAME: rhs_dilation = array<i64: 2, 2>
// CHECK-SAME: window_strides = array<i64: 1, 1>
// CHECK-SAME: (tensor<1x8x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
// CHECK-NEXT: "func.return"([[C]])
"func.func"() <{function_type = (tensor<1x8x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>, sym_name = "conv2d_groups_dilation"}> ({
^bb0(%x: tensor<1x8x10x10xf32>, %w: tensor<8x2x3x3xf32>):
  %0 = "aten.conv2d.default"(%x, %w) {dilation = array<i64: 2, 2>, groups = 4 : i64, operand_names = ["input", "weight"]} : (tensor<1x8x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32> loc("conv2d_grouped")
  "func.return"(%0) : (tensor<1x8x6x6xf32>) -> ()
}) : () -> ()

// conv1d on an unbatched [C, L] input with padding="same" and an even kernel (4):
// a batch dim is added and removed; PyTorch pads 1 low and 2 high.
// CHECK-LABEL: sym_name = "conv1d_unbatched_same"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x9xf32>, [[W:%arg[0-9]+]]: tensor<6x4x4xf32>)
// CHECK-NEXT: [[XB:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<4x9xf32>) -> tensor<1x4x9xf32>
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.convolution"([[XB]], [[W]])
// CHECK-SAME: dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>
// CHECK-SAME: padding = dense<{{\[\[}}1, 2]]> : tensor<1x2xi64>
// CHECK-SAME: -> tensor<1x6x9xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[C]]) : (tensor<1x6x9xf32>) -> tensor<6x9xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4x9xf32>, tensor<6x4x4xf32>) -> tensor<6x9xf32>, sym_name = "conv1d_unbatched_same"}> ({
^bb0(%x: tensor<4x9xf32>, %w: tensor<6x4x4xf32>):
  %0 = "aten.conv1d.padding"(%x, %w) {operand_names = ["input", "weight"], padding = "same"} : (tensor<4x9xf32>, tensor<6x4x4xf32>) -> tensor<6x9xf32> loc("conv1d")
  "func.return"(%0) : (tensor<6x9xf32>) -> ()
}) : () -> ()

// A depthwise bf16 convolution runs in f32 (operands, bias) and rounds once.
// CHECK-LABEL: sym_name = "conv2d_depthwise_bf16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x4x5x5xbf16>, [[W:%arg[0-9]+]]: tensor<4x1x3x3xbf16>, [[B:%arg[0-9]+]]: tensor<4xbf16>)
// CHECK-NEXT: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<1x4x5x5xbf16>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT: [[WF:%[0-9]+]] = "stablehlo.convert"([[W]]) : (tensor<4x1x3x3xbf16>) -> tensor<4x1x3x3xf32>
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.convolution"([[XF]], [[WF]])
// CHECK-SAME: feature_group_count = 4 : i64
// CHECK-SAME: -> tensor<1x4x5x5xf32>
// CHECK-NEXT: [[BF:%[0-9]+]] = "stablehlo.convert"([[B]]) : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK-NEXT: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[BF]]) {broadcast_dimensions = array<i64: 1>}
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.add"([[C]], [[BB]])
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.convert"([[S]]) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xbf16>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<1x4x5x5xbf16>, tensor<4x1x3x3xbf16>, tensor<4xbf16>) -> tensor<1x4x5x5xbf16>, sym_name = "conv2d_depthwise_bf16"}> ({
^bb0(%x: tensor<1x4x5x5xbf16>, %w: tensor<4x1x3x3xbf16>, %b: tensor<4xbf16>):
  %0 = "aten.conv2d.default"(%x, %w, %b) {groups = 4 : i64, operand_names = ["input", "weight", "bias"], padding = array<i64: 1, 1>} : (tensor<1x4x5x5xbf16>, tensor<4x1x3x3xbf16>, tensor<4xbf16>) -> tensor<1x4x5x5xbf16> loc("conv2d_dw")
  "func.return"(%0) : (tensor<1x4x5x5xbf16>) -> ()
}) : () -> ()

// einsum("bij,bjk->bki"): b is a batch label, j is contracted, the result is permuted
// into the output order.
// CHECK-LABEL: sym_name = "einsum"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3x4xf32>, [[B:%arg[0-9]+]]: tensor<2x4x5xf32>)
// CHECK: [[D:%[0-9]+]] = "stablehlo.dot_general"([[A]], [[B]])
// CHECK-SAME: lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]
// CHECK-SAME: -> tensor<2x3x5xf32>
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"([[D]]) {permutation = array<i64: 0, 2, 1>}
// CHECK-NEXT: "func.return"([[T]])
"func.func"() <{function_type = (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x5x3xf32>, sym_name = "einsum"}> ({
^bb0(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>):
  %0 = "aten.einsum.default"(%a, %b) {equation = "bij,bjk->bki", operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x5x3xf32> loc("einsum")
  "func.return"(%0) : (tensor<2x5x3xf32>) -> ()
}) : () -> ()

// Transposed convolution (ConvTranspose2d, stride 2, padding 1, output_padding 1): the
// kernel [Cin, Cout, kh, kw] becomes [Cout, Cin, kh, kw] with its window flipped, the
// input is dilated by the stride, and padding is dilation*(k-1) - padding = 1 low,
// 1 + output_padding = 2 high: (5-1)*2 - 2 + 2 + 1 + 1 = 10.
// CHECK-LABEL: sym_name = "conv_transposed"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x4x5x5xf32>, [[W:%arg[0-9]+]]: tensor<4x2x3x3xf32>)
// CHECK: [[G:%[0-9]+]] = "stablehlo.reshape"([[W]]) : (tensor<4x2x3x3xf32>) -> tensor<1x4x2x3x3xf32>
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"([[G]]) {permutation = array<i64: 0, 2, 1, 3, 4>}
// CHECK: [[K:%[0-9]+]] = "stablehlo.reshape"([[T]]) : (tensor<1x2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
// CHECK: [[F:%[0-9]+]] = "stablehlo.reverse"([[K]]) {dimensions = array<i64: 2, 3>}
// CHECK: "stablehlo.convolution"([[X]], [[F]])
// CHECK-SAME: lhs_dilation = array<i64: 2, 2>
// CHECK-SAME: padding = dense<{{\[\[}}1, 2], [1, 2]]> : tensor<2x2xi64>
// CHECK-SAME: window_strides = array<i64: 1, 1>
// CHECK-SAME: -> tensor<1x2x10x10xf32>
"func.func"() <{function_type = (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x10x10xf32>, sym_name = "conv_transposed"}> ({
^bb0(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>):
  %0 = "aten.convolution.default"(%x, %w) {dilation = array<i64: 1, 1>, groups = 1 : i64, operand_names = ["input", "weight"], output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, transposed = true} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x10x10xf32> loc("conv_transpose")
  "func.return"(%0) : (tensor<1x2x10x10xf32>) -> ()
}) : () -> ()

// convolution_backward of a strided, dilated, grouped convolution (a joint training
// graph's): the input gradient is a convolution of the output gradient dilated by the
// stride (lhs_dilation) with the flipped, per-group transposed kernel; the weight
// gradient correlates the input (batch and channels swapped) with the output gradient
// dilated by the stride (rhs_dilation), the groups as batch groups; the bias gradient
// sums the output gradient over all but the channels.
// CHECK-LABEL: sym_name = "convolution_backward_grouped"
// CHECK: "stablehlo.reverse"({{.*}}) {dimensions = array<i64: 2, 3>}
// CHECK: "stablehlo.convolution"({{.*}}) {{.*}}batch_group_count = 1 : i64{{.*}}feature_group_count = 2 : i64, lhs_dilation = array<i64: 2, 2>{{.*}}padding = dense<{{..}}2, 3], [2, 3]]> : tensor<2x2xi64>{{.*}}rhs_dilation = array<i64: 2, 2>{{.*}} -> tensor<4x8x4x4xf32>
// CHECK: "stablehlo.convolution"({{.*}}) {{.*}}batch_group_count = 2 : i64{{.*}}feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<{{..}}2, 1], [2, 1]]> : tensor<2x2xi64>{{.*}}rhs_dilation = array<i64: 2, 2>, window_strides = array<i64: 2, 2>{{.*}} -> tensor<4x8x3x3xf32>
// CHECK: "stablehlo.transpose"({{.*}}) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<4x8x3x3xf32>) -> tensor<8x4x3x3xf32>
// CHECK: dimensions = array<i64: 0, 2, 3>{{.*}} -> tensor<8xf32>
"func.func"() <{function_type = (tensor<4x8x2x2xf32>, tensor<4x8x4x4xf32>, tensor<8x4x3x3xf32>) -> (tensor<4x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>), sym_name = "convolution_backward_grouped"}> ({
^bb0(%gy: tensor<4x8x2x2xf32>, %x: tensor<4x8x4x4xf32>, %w: tensor<8x4x3x3xf32>):
  %0:3 = "aten.convolution_backward.default"(%gy, %x, %w) {bias_sizes = array<i64: 8>, dilation = array<i64: 2, 2>, groups = 2 : i64, operand_names = ["grad_output", "input", "weight"], output_mask = array<i1: true, true, true>, output_padding = array<i64: 0, 0>, padding = array<i64: 2, 2>, stride = array<i64: 2, 2>, transposed = false} : (tensor<4x8x2x2xf32>, tensor<4x8x4x4xf32>, tensor<8x4x3x3xf32>) -> (tensor<4x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) loc("convolution_backward_grouped")
  "func.return"(%0#0, %0#1, %0#2) : (tensor<4x8x4x4xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> ()
}) : () -> ()

// Outputs output_mask leaves out are not in the graph: here only the weight's.
// CHECK-LABEL: sym_name = "convolution_backward_weight_only"
// CHECK-COUNT-1: "stablehlo.convolution"
// CHECK-NOT: "stablehlo.convolution"
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<2x4x6x6xf32>, tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32>, sym_name = "convolution_backward_weight_only"}> ({
^bb0(%gy: tensor<2x4x6x6xf32>, %x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32>):
  %0 = "aten.convolution_backward.default"(%gy, %x, %w) {bias_sizes = array<i64: 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, operand_names = ["grad_output", "input", "weight"], output_mask = array<i1: false, true, false>, output_padding = array<i64: 0, 0>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, transposed = false} : (tensor<2x4x6x6xf32>, tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> loc("convolution_backward_weight_only")
  "func.return"(%0) : (tensor<4x3x3x3xf32>) -> ()
}) : () -> ()
