// View-like family (compiler/src/passes/lower_aten_to_stablehlo/view_like.rs):
// reshapes, permutations, expand, slice (steps, negative and clamped bounds), select,
// narrow, cat, stack, meshgrid, pixel_shuffle, split (result shapes), unbind, pad, repeat, squeeze, diff, flip, unfold;
// reflect / replicate / circular padding as one gather per padded dim at constant
// source positions.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// view / unflatten (and every other shape-only op) are one reshape to the graph's
// result type.
// CHECK-LABEL: sym_name = "reshapes"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<8x2x48xf32>)
// CHECK-NEXT: [[U:%[0-9]+]] = "stablehlo.reshape"([[A]]) : (tensor<8x2x48xf32>) -> tensor<8x2x3x16xf32>
// CHECK-NEXT: [[V:%[0-9]+]] = "stablehlo.reshape"([[A]]) : (tensor<8x2x48xf32>) -> tensor<16x48xf32>
// CHECK-NEXT: "func.return"([[U]], [[V]])
"func.func"() <{function_type = (tensor<8x2x48xf32>) -> (tensor<8x2x3x16xf32>, tensor<16x48xf32>), sym_name = "reshapes"}> ({
^bb0(%a: tensor<8x2x48xf32>):
  %0 = "aten.unflatten.int"(%a) {dim = -1 : i64, operand_names = ["self"], sizes = array<i64: 3, 16>} : (tensor<8x2x48xf32>) -> tensor<8x2x3x16xf32> loc("unflatten")
  %1 = "aten.view.default"(%a) {operand_names = ["self"], size = array<i64: -1, 48>} : (tensor<8x2x48xf32>) -> tensor<16x48xf32> loc("view")
  "func.return"(%0, %1) : (tensor<8x2x3x16xf32>, tensor<16x48xf32>) -> ()
}) : () -> ()

// permute / transpose / movedim with negative dims.
// CHECK-LABEL: sym_name = "permutations"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: [[P:%[0-9]+]] = "stablehlo.transpose"([[A]]) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.transpose"([[A]]) {permutation = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.transpose"([[A]]) {permutation = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT: "func.return"([[P]], [[T]], [[M]])
"func.func"() <{function_type = (tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x4x3xf32>, tensor<3x4x2xf32>), sym_name = "permutations"}> ({
^bb0(%a: tensor<2x3x4xf32>):
  %0 = "aten.permute.default"(%a) {dims = array<i64: -1, 0, 1>, operand_names = ["self"]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32> loc("permute")
  %1 = "aten.transpose.int"(%a) {dim0 = -1 : i64, dim1 = -2 : i64, operand_names = ["self"]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32> loc("transpose")
  %2 = "aten.movedim.int"(%a) {destination = array<i64: -1>, operand_names = ["self"], source = array<i64: 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32> loc("movedim")
  "func.return"(%0, %1, %2) : (tensor<4x2x3xf32>, tensor<2x4x3xf32>, tensor<3x4x2xf32>) -> ()
}) : () -> ()

// expand with -1 (keep the size) and with a new leading dim.
// CHECK-LABEL: sym_name = "expand"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<1x8xi64>, [[B:%arg[0-9]+]]: tensor<3x1xf32>)
// CHECK-NEXT: [[E:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x8xi64>) -> tensor<2x8xi64>
// CHECK-NEXT: [[F:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: "func.return"([[E]], [[F]])
"func.func"() <{function_type = (tensor<1x8xi64>, tensor<3x1xf32>) -> (tensor<2x8xi64>, tensor<2x3x5xf32>), sym_name = "expand"}> ({
^bb0(%a: tensor<1x8xi64>, %b: tensor<3x1xf32>):
  %0 = "aten.expand.default"(%a) {operand_names = ["self"], size = array<i64: 2, -1>} : (tensor<1x8xi64>) -> tensor<2x8xi64> loc("expand")
  %1 = "aten.expand.default"(%b) {operand_names = ["self"], size = array<i64: 2, -1, 5>} : (tensor<3x1xf32>) -> tensor<2x3x5xf32> loc("expand_new_dim")
  "func.return"(%0, %1) : (tensor<2x8xi64>, tensor<2x3x5xf32>) -> ()
}) : () -> ()

// slice: step, negative start/end, bounds clamped to the dim (a slice of the whole
// dim is no op at all), start past end (empty), absent end.
// CHECK-LABEL: sym_name = "slices"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4x10xf32>)
// CHECK-NEXT: [[S0:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 4, 9>, start_indices = array<i64: 0, 2>, strides = array<i64: 1, 3>} : (tensor<4x10xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[S1:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 4, 9>, start_indices = array<i64: 0, 6>, strides = array<i64: 1, 1>} : (tensor<4x10xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[S3:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 4, 7>, start_indices = array<i64: 0, 7>, strides = array<i64: 1, 1>} : (tensor<4x10xf32>) -> tensor<4x0xf32>
// CHECK-NEXT: [[S4:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 4, 10>, start_indices = array<i64: 1, 0>, strides = array<i64: 2, 1>} : (tensor<4x10xf32>) -> tensor<2x10xf32>
// CHECK-NEXT: "func.return"([[S0]], [[S1]], [[A]], [[S3]], [[S4]])
"func.func"() <{function_type = (tensor<4x10xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x10xf32>, tensor<4x0xf32>, tensor<2x10xf32>), sym_name = "slices"}> ({
^bb0(%a: tensor<4x10xf32>):
  %0 = "aten.slice.Tensor"(%a) {dim = 1 : i64, end = 9 : i64, operand_names = ["self"], start = 2 : i64, step = 3 : i64} : (tensor<4x10xf32>) -> tensor<4x3xf32> loc("slice_step")
  %1 = "aten.slice.Tensor"(%a) {dim = -1 : i64, end = -1 : i64, operand_names = ["self"], start = -4 : i64} : (tensor<4x10xf32>) -> tensor<4x3xf32> loc("slice_negative")
  %2 = "aten.slice.Tensor"(%a) {dim = 1 : i64, end = 9223372036854775807 : i64, operand_names = ["self"], start = -100 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32> loc("slice_clamped")
  %3 = "aten.slice.Tensor"(%a) {dim = 1 : i64, end = 2 : i64, operand_names = ["self"], start = 7 : i64} : (tensor<4x10xf32>) -> tensor<4x0xf32> loc("slice_empty")
  %4 = "aten.slice.Tensor"(%a) {dim = 0 : i64, operand_names = ["self"], start = 1 : i64, step = 2 : i64} : (tensor<4x10xf32>) -> tensor<2x10xf32> loc("slice_no_end")
  "func.return"(%0, %1, %2, %3, %4) : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x10xf32>, tensor<4x0xf32>, tensor<2x10xf32>) -> ()
}) : () -> ()

// select with a negative index and a negative dim: a size-1 slice then a reshape
// that drops the dim; narrow with a negative start.
// CHECK-LABEL: sym_name = "select_narrow"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<3x8x2x16xf32>)
// CHECK-NEXT: [[S0:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 3, 8, 2, 16>, start_indices = array<i64: 2, 0, 0, 0>, strides = array<i64: 1, 1, 1, 1>} : (tensor<3x8x2x16xf32>) -> tensor<1x8x2x16xf32>
// CHECK-NEXT: [[R0:%[0-9]+]] = "stablehlo.reshape"([[S0]]) : (tensor<1x8x2x16xf32>) -> tensor<8x2x16xf32>
// CHECK-NEXT: [[S1:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 3, 8, 2, 16>, start_indices = array<i64: 0, 0, 1, 0>, strides = array<i64: 1, 1, 1, 1>} : (tensor<3x8x2x16xf32>) -> tensor<3x8x1x16xf32>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.reshape"([[S1]]) : (tensor<3x8x1x16xf32>) -> tensor<3x8x16xf32>
// CHECK-NEXT: [[N:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 3, 8, 2, 14>, start_indices = array<i64: 0, 0, 0, 10>, strides = array<i64: 1, 1, 1, 1>} : (tensor<3x8x2x16xf32>) -> tensor<3x8x2x4xf32>
// CHECK-NEXT: "func.return"([[R0]], [[R1]], [[N]])
"func.func"() <{function_type = (tensor<3x8x2x16xf32>) -> (tensor<8x2x16xf32>, tensor<3x8x16xf32>, tensor<3x8x2x4xf32>), sym_name = "select_narrow"}> ({
^bb0(%a: tensor<3x8x2x16xf32>):
  %0 = "aten.select.int"(%a) {dim = 0 : i64, index = -1 : i64, operand_names = ["self"]} : (tensor<3x8x2x16xf32>) -> tensor<8x2x16xf32> loc("select")
  %1 = "aten.select.int"(%a) {dim = -2 : i64, index = 1 : i64, operand_names = ["self"]} : (tensor<3x8x2x16xf32>) -> tensor<3x8x16xf32> loc("select_1")
  %2 = "aten.narrow.default"(%a) {dim = 3 : i64, length = 4 : i64, operand_names = ["self"], start = -6 : i64} : (tensor<3x8x2x16xf32>) -> tensor<3x8x2x4xf32> loc("narrow")
  "func.return"(%0, %1, %2) : (tensor<8x2x16xf32>, tensor<3x8x16xf32>, tensor<3x8x2x4xf32>) -> ()
}) : () -> ()

// cat with a negative dim; operands of another dtype are converted to the result's.
// CHECK-LABEL: sym_name = "cat"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x1xi64>, [[B:%arg[0-9]+]]: tensor<2x8xi64>, [[C:%arg[0-9]+]]: tensor<2x4xi32>)
// CHECK-NEXT: [[R0:%[0-9]+]] = "stablehlo.concatenate"([[A]], [[B]]) {dimension = 1 : i64} : (tensor<2x1xi64>, tensor<2x8xi64>) -> tensor<2x9xi64>
// CHECK-NEXT: [[CC:%[0-9]+]] = "stablehlo.convert"([[C]]) : (tensor<2x4xi32>) -> tensor<2x4xi64>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.concatenate"([[B]], [[CC]]) {dimension = 1 : i64} : (tensor<2x8xi64>, tensor<2x4xi64>) -> tensor<2x12xi64>
// CHECK-NEXT: "func.return"([[R0]], [[R1]])
"func.func"() <{function_type = (tensor<2x1xi64>, tensor<2x8xi64>, tensor<2x4xi32>) -> (tensor<2x9xi64>, tensor<2x12xi64>), sym_name = "cat"}> ({
^bb0(%a: tensor<2x1xi64>, %b: tensor<2x8xi64>, %c: tensor<2x4xi32>):
  %0 = "aten.cat.default"(%a, %b) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x1xi64>, tensor<2x8xi64>) -> tensor<2x9xi64> loc("cat")
  %1 = "aten.cat.default"(%b, %c) {dim = 1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x8xi64>, tensor<2x4xi32>) -> tensor<2x12xi64> loc("cat_promote")
  "func.return"(%0, %1) : (tensor<2x9xi64>, tensor<2x12xi64>) -> ()
}) : () -> ()

// meshgrid: each input broadcast along its own grid dimension; with indexing "xy" the
// first two swap (the first input varies along columns); a 0-d input is a size-1 axis.
// CHECK-LABEL: sym_name = "meshgrids"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<3xf32>, [[B:%arg[0-9]+]]: tensor<4xf32>, [[S:%arg[0-9]+]]: tensor<f32>)
// CHECK-NEXT: [[XA:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[XB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[IA:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<3x4x1xf32>
// CHECK-NEXT: [[IB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<3x4x1xf32>
// CHECK-NEXT: [[RS:%[0-9]+]] = "stablehlo.reshape"([[S]]) : (tensor<f32>) -> tensor<1xf32>
// CHECK-NEXT: [[IS:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[RS]]) {broadcast_dimensions = array<i64: 2>} : (tensor<1xf32>) -> tensor<3x4x1xf32>
// CHECK: "func.return"([[XA]], [[XB]], [[IA]], [[IB]], [[IS]])
"func.func"() <{function_type = (tensor<3xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3x4x1xf32>, tensor<3x4x1xf32>, tensor<3x4x1xf32>), sym_name = "meshgrids"}> ({
^bb0(%a: tensor<3xf32>, %b: tensor<4xf32>, %s: tensor<f32>):
  %0:2 = "aten.meshgrid.indexing"(%a, %b) {indexing = "xy", operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<3xf32>, tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) loc("meshgrid_xy")
  %1:3 = "aten.meshgrid.indexing"(%a, %b, %s) {indexing = "ij", operand_names = ["tensors[0]", "tensors[1]", "tensors[2]"]} : (tensor<3xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<3x4x1xf32>, tensor<3x4x1xf32>, tensor<3x4x1xf32>) loc("meshgrid_ij")
  "func.return"(%0#0, %0#1, %1#0, %1#1, %1#2) : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3x4x1xf32>, tensor<3x4x1xf32>, tensor<3x4x1xf32>) -> ()
}) : () -> ()

// pixel_shuffle by 2: [1, 8, 3, 3] as [1, 2, 2, 2, 3, 3], each 2x2 channel group moved
// next to its pixel, [1, 2, 6, 6].
// CHECK-LABEL: sym_name = "pixel_shuffle"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x8x3x3xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<1x8x3x3xf32>) -> tensor<1x2x2x2x3x3xf32>
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.transpose"([[R]]) {permutation = array<i64: 0, 1, 4, 2, 5, 3>}
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.reshape"([[T]]) : (tensor<1x2x3x2x3x2xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NEXT: "func.return"([[O]])
"func.func"() <{function_type = (tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32>, sym_name = "pixel_shuffle"}> ({
^bb0(%p: tensor<1x8x3x3xf32>):
  %0 = "aten.pixel_shuffle.default"(%p) {operand_names = ["self"], upscale_factor = 2 : i64} : (tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32> loc("pixel_shuffle")
  "func.return"(%0) : (tensor<1x2x6x6xf32>) -> ()
}) : () -> ()

// stack at dim -1 of the result (rank 3): reshape each input, concatenate on dim 2.
// CHECK-LABEL: sym_name = "stack_negative_dim"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NEXT: [[RA:%[0-9]+]] = "stablehlo.reshape"([[A]]) : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: [[RB:%[0-9]+]] = "stablehlo.reshape"([[B]]) : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.concatenate"([[RA]], [[RB]]) {dimension = 2 : i64} : (tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x2xf32>
// CHECK-NEXT: "func.return"([[C]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x2xf32>, sym_name = "stack_negative_dim"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
  %0 = "aten.stack.default"(%a, %b) {dim = -1 : i64, operand_names = ["tensors[0]", "tensors[1]"]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x2xf32> loc("stack")
  "func.return"(%0) : (tensor<2x3x2xf32>) -> ()
}) : () -> ()

// split_with_sizes and an uneven split.Tensor (5 = 3 + 2, default dim 0): one
// slice per result, at consecutive offsets; the result types give the sizes.
// CHECK-LABEL: sym_name = "splits"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x8x96xf32>, [[B:%arg[0-9]+]]: tensor<5x4xf32>)
// CHECK-NEXT: [[P0:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 2, 8, 32>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
// CHECK-NEXT: [[P1:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 2, 8, 96>, start_indices = array<i64: 0, 0, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x96xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: [[Q0:%[0-9]+]] = "stablehlo.slice"([[B]]) {limit_indices = array<i64: 3, 4>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<5x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: [[Q1:%[0-9]+]] = "stablehlo.slice"([[B]]) {limit_indices = array<i64: 5, 4>, start_indices = array<i64: 3, 0>, strides = array<i64: 1, 1>} : (tensor<5x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: "func.return"([[P0]], [[P1]], [[Q0]], [[Q1]])
"func.func"() <{function_type = (tensor<2x8x96xf32>, tensor<5x4xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x64xf32>, tensor<3x4xf32>, tensor<2x4xf32>), sym_name = "splits"}> ({
^bb0(%a: tensor<2x8x96xf32>, %b: tensor<5x4xf32>):
  %0:2 = "aten.split_with_sizes.default"(%a) {dim = 2 : i64, operand_names = ["self"], split_sizes = array<i64: 32, 64>} : (tensor<2x8x96xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x64xf32>) loc("split_with_sizes")
  %1:2 = "aten.split.Tensor"(%b) {operand_names = ["self"], split_size = 3 : i64} : (tensor<5x4xf32>) -> (tensor<3x4xf32>, tensor<2x4xf32>) loc("split_uneven")
  "func.return"(%0#0, %0#1, %1#0, %1#1) : (tensor<2x8x32xf32>, tensor<2x8x64xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> ()
}) : () -> ()

// unbind: one size-1 slice + reshape per result.
// CHECK-LABEL: sym_name = "unbind"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<3x2xf32>)
// CHECK-NEXT: [[S0:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 1, 2>, start_indices = array<i64: 0, 0>
// CHECK-NEXT: [[R0:%[0-9]+]] = "stablehlo.reshape"([[S0]]) : (tensor<1x2xf32>) -> tensor<2xf32>
// CHECK-NEXT: [[S1:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 2, 2>, start_indices = array<i64: 1, 0>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.reshape"([[S1]])
// CHECK-NEXT: [[S2:%[0-9]+]] = "stablehlo.slice"([[A]]) {limit_indices = array<i64: 3, 2>, start_indices = array<i64: 2, 0>
// CHECK-NEXT: [[R2:%[0-9]+]] = "stablehlo.reshape"([[S2]])
// CHECK-NEXT: "func.return"([[R0]], [[R1]], [[R2]])
"func.func"() <{function_type = (tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>), sym_name = "unbind"}> ({
^bb0(%a: tensor<3x2xf32>):
  %0:3 = "aten.unbind.int"(%a) {operand_names = ["self"]} : (tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) loc("unbind")
  "func.return"(%0#0, %0#1, %0#2) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> ()
}) : () -> ()

// constant_pad_nd: pairs apply from the last dim; the value is converted to the
// operand dtype (default 0); negative padding crops.
// CHECK-LABEL: sym_name = "pad"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<4x4xi64>)
// CHECK-NEXT: [[V:%[0-9]+]] = "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT: [[P:%[0-9]+]] = "stablehlo.pad"([[A]], [[V]]) {edge_padding_high = array<i64: 0, 2>, edge_padding_low = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x6xf32>
// CHECK-NEXT: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.pad"([[B]], [[Z]]) {edge_padding_high = array<i64: 0, -1>, edge_padding_low = array<i64: 0, -1>, interior_padding = array<i64: 0, 0>} : (tensor<4x4xi64>, tensor<i64>) -> tensor<4x2xi64>
// CHECK-NEXT: "func.return"([[P]], [[C]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<4x4xi64>) -> (tensor<2x6xf32>, tensor<4x2xi64>), sym_name = "pad"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<4x4xi64>):
  %0 = "aten.constant_pad_nd.default"(%a) {operand_names = ["self"], pad = array<i64: 1, 2>, value = 5.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x6xf32> loc("pad")
  %1 = "aten.constant_pad_nd.default"(%b) {operand_names = ["self"], pad = array<i64: -1, -1, 0, 0>} : (tensor<4x4xi64>) -> tensor<4x2xi64> loc("pad_crop")
  "func.return"(%0, %1) : (tensor<2x6xf32>, tensor<4x2xi64>) -> ()
}) : () -> ()

// Reflection padding: each padded dim is a gather at constant source positions
// (the constant goes through the usual negative-index wrap, a no-op here). Size 4
// padded (2, 1): [2, 1, 0, 1, 2, 3, 2], i.e. [c, b, | a, b, c, d, | c]. 2-D pads
// (1, 1) on W = 4 and (2, 0) on H = 3: W first ([1, 0, 1, 2, 3, 2]), then H
// ([2, 1, 0, 1, 2]) on the W-padded tensor.
// CHECK-LABEL: sym_name = "reflection_pad"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x4xf32>, [[B:%arg[0-9]+]]: tensor<1x2x3x4xf32>)
// CHECK: [[I1:%[0-9]+]] = "stablehlo.constant"() {value = dense<[2, 1, 0, 1, 2, 3, 2]> : tensor<7xi64>}
// CHECK: [[W1:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, [[I1]])
// CHECK: [[R1:%[0-9]+]] = "stablehlo.reshape"([[W1]]) : (tensor<7xi64>) -> tensor<7x1xi64>
// CHECK: [[P1:%[0-9]+]] = "stablehlo.gather"([[A]], [[R1]]) {dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 1>} : (tensor<2x4xf32>, tensor<7x1xi64>) -> tensor<2x7xf32>
// CHECK: [[IW:%[0-9]+]] = "stablehlo.constant"() {value = dense<[1, 0, 1, 2, 3, 2]> : tensor<6xi64>}
// CHECK: [[WW:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, [[IW]])
// CHECK: [[RW:%[0-9]+]] = "stablehlo.reshape"([[WW]]) : (tensor<6xi64>) -> tensor<6x1xi64>
// CHECK: [[GW:%[0-9]+]] = "stablehlo.gather"([[B]], [[RW]]) {dimension_numbers = #stablehlo.gather<offset_dims = [0, 1, 2], collapsed_slice_dims = [3], start_index_map = [3], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 3, 1>} : (tensor<1x2x3x4xf32>, tensor<6x1xi64>) -> tensor<1x2x3x6xf32>
// CHECK: [[IH:%[0-9]+]] = "stablehlo.constant"() {value = dense<[2, 1, 0, 1, 2]> : tensor<5xi64>}
// CHECK: [[WH:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, [[IH]])
// CHECK: [[RH:%[0-9]+]] = "stablehlo.reshape"([[WH]]) : (tensor<5xi64>) -> tensor<5x1xi64>
// CHECK: [[GH:%[0-9]+]] = "stablehlo.gather"([[GW]], [[RH]]) {dimension_numbers = #stablehlo.gather<offset_dims = [0, 1, 3], collapsed_slice_dims = [2], start_index_map = [2], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 1, 6>} : (tensor<1x2x3x6xf32>, tensor<5x1xi64>) -> tensor<1x2x5x6xf32>
// CHECK-NEXT: "func.return"([[P1]], [[GH]])
"func.func"() <{function_type = (tensor<2x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<2x7xf32>, tensor<1x2x5x6xf32>), sym_name = "reflection_pad"}> ({
^bb0(%a: tensor<2x4xf32>, %b: tensor<1x2x3x4xf32>):
  %0 = "aten.reflection_pad1d.default"(%a) {operand_names = ["self"], padding = array<i64: 2, 1>} : (tensor<2x4xf32>) -> tensor<2x7xf32> loc("reflection_pad1d")
  %1 = "aten.reflection_pad2d.default"(%b) {operand_names = ["self"], padding = array<i64: 1, 1, 2, 0>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x5x6xf32> loc("reflection_pad2d")
  "func.return"(%0, %1) : (tensor<2x7xf32>, tensor<1x2x5x6xf32>) -> ()
}) : () -> ()

// replication_pad2d (2, 0, 1, 3) on a 3x3 i32 plane: edge positions repeat, W
// [0, 0, 0, 1, 2] and H [0, 0, 1, 2, 2, 2, 2].
// CHECK-LABEL: sym_name = "replication_pad2d"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<1x1x3x3xi32>)
// CHECK: [[IW:%[0-9]+]] = "stablehlo.constant"() {value = dense<[0, 0, 0, 1, 2]> : tensor<5xi64>}
// CHECK: [[GW:%[0-9]+]] = "stablehlo.gather"([[A]], {{%[0-9]+}})
// CHECK-SAME: collapsed_slice_dims = [3]
// CHECK-SAME: (tensor<1x1x3x3xi32>, tensor<5x1xi64>) -> tensor<1x1x3x5xi32>
// CHECK: [[IH:%[0-9]+]] = "stablehlo.constant"() {value = dense<[0, 0, 1, 2, 2, 2, 2]> : tensor<7xi64>}
// CHECK: [[GH:%[0-9]+]] = "stablehlo.gather"([[GW]], {{%[0-9]+}})
// CHECK-SAME: collapsed_slice_dims = [2]
// CHECK-SAME: (tensor<1x1x3x5xi32>, tensor<7x1xi64>) -> tensor<1x1x7x5xi32>
// CHECK-NEXT: "func.return"([[GH]])
"func.func"() <{function_type = (tensor<1x1x3x3xi32>) -> tensor<1x1x7x5xi32>, sym_name = "replication_pad2d"}> ({
^bb0(%a: tensor<1x1x3x3xi32>):
  %0 = "aten.replication_pad2d.default"(%a) {operand_names = ["self"], padding = array<i64: 2, 0, 1, 3>} : (tensor<1x1x3x3xi32>) -> tensor<1x1x7x5xi32> loc("replication_pad2d")
  "func.return"(%0) : (tensor<1x1x7x5xi32>) -> ()
}) : () -> ()

// aten.pad with mode "circular" (1, 2) on size 4: [3, | 0, 1, 2, 3, | 0, 1]; mode
// "replicate" with a negative low pad (-1, 2) crops first: [1, 2, 3, 3, 3].
// CHECK-LABEL: sym_name = "pad_circular_replicate"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<1x2x4xf32>)
// CHECK: [[IC:%[0-9]+]] = "stablehlo.constant"() {value = dense<[3, 0, 1, 2, 3, 0, 1]> : tensor<7xi64>}
// CHECK: [[C:%[0-9]+]] = "stablehlo.gather"([[A]], {{%[0-9]+}}) {dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], collapsed_slice_dims = [2], start_index_map = [2], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 1>} : (tensor<1x2x4xf32>, tensor<7x1xi64>) -> tensor<1x2x7xf32>
// CHECK: [[IR:%[0-9]+]] = "stablehlo.constant"() {value = dense<[1, 2, 3, 3, 3]> : tensor<5xi64>}
// CHECK: [[R:%[0-9]+]] = "stablehlo.gather"([[A]], {{%[0-9]+}})
// CHECK-SAME: (tensor<1x2x4xf32>, tensor<5x1xi64>) -> tensor<1x2x5xf32>
// CHECK-NEXT: "func.return"([[C]], [[R]])
"func.func"() <{function_type = (tensor<1x2x4xf32>) -> (tensor<1x2x7xf32>, tensor<1x2x5xf32>), sym_name = "pad_circular_replicate"}> ({
^bb0(%a: tensor<1x2x4xf32>):
  %0 = "aten.pad.default"(%a) {mode = "circular", operand_names = ["self"], pad = array<i64: 1, 2>} : (tensor<1x2x4xf32>) -> tensor<1x2x7xf32> loc("pad_circular")
  %1 = "aten.pad.default"(%a) {mode = "replicate", operand_names = ["self"], pad = array<i64: -1, 2>} : (tensor<1x2x4xf32>) -> tensor<1x2x5xf32> loc("pad_replicate_crop")
  "func.return"(%0, %1) : (tensor<1x2x7xf32>, tensor<1x2x5xf32>) -> ()
}) : () -> ()

// repeat [4, 1, 3] on 2x3: a leading 1 is added, each dim d becomes (rep, size)
// via broadcast_in_dim, then flattened.
// CHECK-LABEL: sym_name = "repeat"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[A]]) : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT: [[B:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[R]]) {broadcast_dimensions = array<i64: 1, 3, 5>} : (tensor<1x2x3xf32>) -> tensor<4x1x1x2x3x3xf32>
// CHECK-NEXT: [[F:%[0-9]+]] = "stablehlo.reshape"([[B]]) : (tensor<4x1x1x2x3x3xf32>) -> tensor<4x2x9xf32>
// CHECK-NEXT: "func.return"([[F]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<4x2x9xf32>, sym_name = "repeat"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.repeat.default"(%a) {operand_names = ["self"], repeats = array<i64: 4, 1, 3>} : (tensor<2x3xf32>) -> tensor<4x2x9xf32> loc("repeat")
  "func.return"(%0) : (tensor<4x2x9xf32>) -> ()
}) : () -> ()

// squeeze/unsqueeze with negative dims are reshapes; t of a 1-D tensor is a no-op.
// CHECK-LABEL: sym_name = "squeeze_unsqueeze_t"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<3x8x2x1x16xf32>, [[B:%arg[0-9]+]]: tensor<5xf32>)
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.reshape"([[A]]) : (tensor<3x8x2x1x16xf32>) -> tensor<3x8x2x16xf32>
// CHECK-NEXT: [[U0:%[0-9]+]] = "stablehlo.reshape"([[B]]) : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK-NEXT: [[U1:%[0-9]+]] = "stablehlo.reshape"([[U0]]) : (tensor<1x5xf32>) -> tensor<1x5x1xf32>
// CHECK-NEXT: "func.return"([[S]], [[U1]], [[B]])
"func.func"() <{function_type = (tensor<3x8x2x1x16xf32>, tensor<5xf32>) -> (tensor<3x8x2x16xf32>, tensor<1x5x1xf32>, tensor<5xf32>), sym_name = "squeeze_unsqueeze_t"}> ({
^bb0(%a: tensor<3x8x2x1x16xf32>, %b: tensor<5xf32>):
  %0 = "aten.squeeze.dims"(%a) {dim = array<i64: -2>, operand_names = ["self"]} : (tensor<3x8x2x1x16xf32>) -> tensor<3x8x2x16xf32> loc("squeeze")
  %1 = "aten.unsqueeze.default"(%b) {dim = 0 : i64, operand_names = ["self"]} : (tensor<5xf32>) -> tensor<1x5xf32> loc("unsqueeze")
  %2 = "aten.unsqueeze.default"(%1) {dim = -1 : i64, operand_names = ["self"]} : (tensor<1x5xf32>) -> tensor<1x5x1xf32> loc("unsqueeze_1")
  %3 = "aten.t.default"(%b) {operand_names = ["self"]} : (tensor<5xf32>) -> tensor<5xf32> loc("t")
  "func.return"(%0, %2, %3) : (tensor<3x8x2x16xf32>, tensor<1x5x1xf32>, tensor<5xf32>) -> ()
}) : () -> ()

// diff with prepend (from the gpt2 model's position ids): concat, then x[1:] - x[:-1].
// CHECK-LABEL: sym_name = "diff_prepend"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x8xi64>, [[P:%arg[0-9]+]]: tensor<2x1xi64>)
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.concatenate"([[P]], [[A]]) {dimension = 1 : i64} : (tensor<2x1xi64>, tensor<2x8xi64>) -> tensor<2x9xi64>
// CHECK-NEXT: [[LO:%[0-9]+]] = "stablehlo.slice"([[C]]) {limit_indices = array<i64: 2, 8>, start_indices = array<i64: 0, 0>
// CHECK-NEXT: [[HI:%[0-9]+]] = "stablehlo.slice"([[C]]) {limit_indices = array<i64: 2, 9>, start_indices = array<i64: 0, 1>
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.subtract"([[HI]], [[LO]]) : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
// CHECK-NEXT: "func.return"([[D]])
"func.func"() <{function_type = (tensor<2x8xi64>, tensor<2x1xi64>) -> tensor<2x8xi64>, sym_name = "diff_prepend"}> ({
^bb0(%a: tensor<2x8xi64>, %p: tensor<2x1xi64>):
  %0 = "aten.diff.default"(%a, %p) {dim = -1 : i64, n = 1 : i64, operand_names = ["self", "prepend"]} : (tensor<2x8xi64>, tensor<2x1xi64>) -> tensor<2x8xi64> loc("diff")
  "func.return"(%0) : (tensor<2x8xi64>) -> ()
}) : () -> ()

// flip over dims 0 and -1: one reverse (accepted by verify-stablehlo).
// CHECK-LABEL: sym_name = "flip"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reverse"([[A]]) {dimensions = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>, sym_name = "flip"}> ({
^bb0(%a: tensor<2x3x4xf32>):
  %0 = "aten.flip.default"(%a) {dims = array<i64: 0, -1>, operand_names = ["self"]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("flip")
  "func.return"(%0) : (tensor<2x3x4xf32>) -> ()
}) : () -> ()

// roll by -3 along dim 1 (size 5) is roll by 2: out[:, i] = x[:, (i + 3) % 5], the
// tail x[:, 3:5] followed by the head x[:, 0:3]. With no dims the tensor rolls
// flattened: shift 1 over 6 elements puts element 5 first.
// CHECK-LABEL: sym_name = "roll"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x5xf32>, [[Y:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[T:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 2, 5>, start_indices = array<i64: 0, 3>, strides = array<i64: 1, 1>} : (tensor<2x5xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: [[H:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x5xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.concatenate"([[T]], [[H]]) {dimension = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: [[F:%[0-9]+]] = "stablehlo.reshape"([[Y]]) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: [[FT:%[0-9]+]] = "stablehlo.slice"([[F]]) {limit_indices = array<i64: 6>, start_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<6xf32>) -> tensor<1xf32>
// CHECK-NEXT: [[FH:%[0-9]+]] = "stablehlo.slice"([[F]]) {limit_indices = array<i64: 5>, start_indices = array<i64: 0>, strides = array<i64: 1>} : (tensor<6xf32>) -> tensor<5xf32>
// CHECK-NEXT: [[FC:%[0-9]+]] = "stablehlo.concatenate"([[FT]], [[FH]]) {dimension = 0 : i64} : (tensor<1xf32>, tensor<5xf32>) -> tensor<6xf32>
// CHECK-NEXT: [[FR:%[0-9]+]] = "stablehlo.reshape"([[FC]]) : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: "func.return"([[R]], [[FR]])
"func.func"() <{function_type = (tensor<2x5xf32>, tensor<2x3xf32>) -> (tensor<2x5xf32>, tensor<2x3xf32>), sym_name = "roll"}> ({
^bb0(%x: tensor<2x5xf32>, %y: tensor<2x3xf32>):
  %0 = "aten.roll.default"(%x) {dims = array<i64: 1>, operand_names = ["self"], shifts = array<i64: -3>} : (tensor<2x5xf32>) -> tensor<2x5xf32> loc("roll")
  %1 = "aten.roll.default"(%y) {dims = array<i64>, operand_names = ["self"], shifts = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("roll_flat")
  "func.return"(%0, %1) : (tensor<2x5xf32>, tensor<2x3xf32>) -> ()
}) : () -> ()

// repeat_interleave(repeats=3, dim=0) on [2, 3]: a new dim of 3 copies after dim 0
// ([2, 3, 3], broadcast dims 0 and 2), merged into it: rows x0, x0, x0, x1, x1, x1.
// CHECK-LABEL: sym_name = "repeat_interleave"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NEXT: [[B:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[X]]) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x3x3xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.reshape"([[B]]) : (tensor<2x3x3xf32>) -> tensor<6x3xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<6x3xf32>, sym_name = "repeat_interleave"}> ({
^bb0(%x: tensor<2x3xf32>):
  %0 = "aten.repeat_interleave.self_int"(%x) {dim = 0 : i64, operand_names = ["self"], repeats = 3 : i64} : (tensor<2x3xf32>) -> tensor<6x3xf32> loc("repeat_interleave")
  "func.return"(%0) : (tensor<6x3xf32>) -> ()
}) : () -> ()

// diagonal(offset=1, dim1=0, dim2=1) of [3, 4, 2]: the two dims move last
// ([2, 3, 4]) and the diagonal, of length min(3, 4 - 1) = 3, is a gather of the
// constant (row, col) pairs (0,1), (1,2), (2,3); the kept dim leads the result.
// CHECK-LABEL: sym_name = "diagonal"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x4x2xf32>)
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.constant"() {value = dense<[0, 1, 1, 2, 2, 3]> : tensor<6xi64>}
// CHECK-NEXT: [[I:%[0-9]+]] = "stablehlo.reshape"([[C]]) : (tensor<6xi64>) -> tensor<3x2xi64>
// CHECK-NEXT: [[G:%[0-9]+]] = "stablehlo.gather"([[T]], [[I]]) {dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 1, 1>} : (tensor<2x3x4xf32>, tensor<3x2xi64>) -> tensor<2x3xf32>
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<3x4x2xf32>) -> tensor<2x3xf32>, sym_name = "diagonal"}> ({
^bb0(%x: tensor<3x4x2xf32>):
  %0 = "aten.diagonal.default"(%x) {dim1 = 0 : i64, dim2 = 1 : i64, offset = 1 : i64, operand_names = ["self"]} : (tensor<3x4x2xf32>) -> tensor<2x3xf32> loc("diagonal")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// as_strided(size=[2, 2], stride=[4, 2], storage_offset=1) of [3, 4]: flat index
// 1 + 4i + 2j (elements 1, 3, 5, 7) from iotas, gathered from the flattened input.
// CHECK-LABEL: sym_name = "as_strided"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x4xf32>)
// CHECK-NEXT: [[OFF:%[0-9]+]] = "stablehlo.constant"() {value = dense<1> : tensor<2x2xi64>}
// CHECK-NEXT: [[I0:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2x2xi64>
// CHECK-NEXT: [[S0:%[0-9]+]] = "stablehlo.constant"() {value = dense<4> : tensor<2x2xi64>}
// CHECK-NEXT: [[M0:%[0-9]+]] = "stablehlo.multiply"([[I0]], [[S0]])
// CHECK-NEXT: [[A0:%[0-9]+]] = "stablehlo.add"([[OFF]], [[M0]])
// CHECK-NEXT: [[I1:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x2xi64>
// CHECK-NEXT: [[S1:%[0-9]+]] = "stablehlo.constant"() {value = dense<2> : tensor<2x2xi64>}
// CHECK-NEXT: [[M1:%[0-9]+]] = "stablehlo.multiply"([[I1]], [[S1]])
// CHECK-NEXT: [[IDX:%[0-9]+]] = "stablehlo.add"([[A0]], [[M1]])
// CHECK-NEXT: [[FLAT:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<3x4xf32>) -> tensor<12xf32>
// CHECK: "stablehlo.compare"([[IDX]], {{%[0-9]+}})
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[FLAT]], {{%[0-9]+}}) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1>} : (tensor<12xf32>, tensor<2x2x1xi64>) -> tensor<2x2xf32>
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<2x2xf32>, sym_name = "as_strided"}> ({
^bb0(%x: tensor<3x4xf32>):
  %0 = "aten.as_strided.default"(%x) {operand_names = ["self"], size = array<i64: 2, 2>, storage_offset = 1 : i64, stride = array<i64: 4, 2>} : (tensor<3x4xf32>) -> tensor<2x2xf32> loc("as_strided")
  "func.return"(%0) : (tensor<2x2xf32>) -> ()
}) : () -> ()

// unfold(dimension=1, size=2, step=3) of [2, 8, 3]: windows starting at 0, 3, 6 (as
// many as fit), gathered with indices 3 * i + j, the window dim moved last.
// CHECK-LABEL: sym_name = "unfold"
// CHECK: [[I:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3x2xi64>
// CHECK: "stablehlo.constant"() {value = dense<3> : tensor<i64>}
// CHECK: [[S:%[0-9]+]] = "stablehlo.multiply"([[I]], {{%[0-9]+}})
// CHECK: [[J:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x2xi64>
// CHECK: "stablehlo.add"([[S]], [[J]])
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"({{.*}}collapsed_slice_dims = [1], start_index_map = [1]{{.*}} -> tensor<2x3x2x3xf32>
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"([[G]]) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x3x2x3xf32>) -> tensor<2x3x3x2xf32>
// CHECK-NEXT: "func.return"([[T]])
"func.func"() <{function_type = (tensor<2x8x3xf32>) -> tensor<2x3x3x2xf32>, sym_name = "unfold"}> ({
^bb0(%arg0: tensor<2x8x3xf32>):
  %0 = "aten.unfold.default"(%arg0) {dimension = 1 : i64, operand_names = ["self"], size = 2 : i64, step = 3 : i64} : (tensor<2x8x3xf32>) -> tensor<2x3x3x2xf32> loc("unfold")
  "func.return"(%0) : (tensor<2x3x3x2xf32>) -> ()
}) : () -> ()
