// Gather family (compiler/src/passes/lower_aten_to_stablehlo/gather.rs): embedding,
// index_select, advanced indexing (index.Tensor, with None entries encoded by the
// `indices_length` attribute), and torch.gather; all become stablehlo.gather with
// negative indices wrapped (select(i < 0, i + size, i)). The scatter family
// (scatter / scatter_add / scatter_reduce, index_put, index_add, select_scatter,
// slice_scatter) becomes stablehlo.scatter, whose body returns the update (plain
// writes) or combines it with the current value; index_put with a boolean mask over
// the leading dims is a select instead (the values broadcast, or picked row by row
// through a prefix sum of the mask).
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// embedding: rows of the table at wrapped indices; index dims lead the result.
// CHECK-LABEL: sym_name = "embedding"
// CHECK: ^bb0([[T:%arg[0-9]+]]: tensor<128x32xf32>, [[I:%arg[0-9]+]]: tensor<2x8xi64>)
// CHECK: [[NEG:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<128> : tensor<i64>}
// CHECK: [[SH:%[0-9]+]] = "stablehlo.add"([[I]], {{%[0-9]+}})
// CHECK: [[W:%[0-9]+]] = "stablehlo.select"([[NEG]], [[SH]], [[I]])
// CHECK: [[IDX:%[0-9]+]] = "stablehlo.reshape"([[W]]) : (tensor<2x8xi64>) -> tensor<2x8x1xi64>
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[T]], [[IDX]]) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>} : (tensor<128x32xf32>, tensor<2x8x1xi64>) -> tensor<2x8x32xf32>
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<128x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>, sym_name = "embedding"}> ({
^bb0(%w: tensor<128x32xf32>, %i: tensor<2x8xi64>):
  %0 = "aten.embedding.default"(%w, %i) {operand_names = ["weight", "indices"]} : (tensor<128x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32> loc("embedding")
  "func.return"(%0) : (tensor<2x8x32xf32>) -> ()
}) : () -> ()

// index_select on dim -1 with i32 indices (converted to i64): the index dim takes
// the place of the selected dim.
// CHECK-LABEL: sym_name = "index_select_negative_dim"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x5x6xf32>, [[I32:%arg[0-9]+]]: tensor<3xi32>)
// CHECK: [[I:%[0-9]+]] = "stablehlo.convert"([[I32]]) : (tensor<3xi32>) -> tensor<3xi64>
// CHECK: [[NEG:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<6> : tensor<i64>}
// CHECK: [[SH:%[0-9]+]] = "stablehlo.add"([[I]], {{%[0-9]+}})
// CHECK: [[W:%[0-9]+]] = "stablehlo.select"([[NEG]], [[SH]], [[I]])
// CHECK: [[IDX:%[0-9]+]] = "stablehlo.reshape"([[W]]) : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[X]], [[IDX]]) {dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], collapsed_slice_dims = [2], start_index_map = [2], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 4, 5, 1>} : (tensor<4x5x6xf32>, tensor<3x1xi64>) -> tensor<4x5x3xf32>
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<4x5x6xf32>, tensor<3xi32>) -> tensor<4x5x3xf32>, sym_name = "index_select_negative_dim"}> ({
^bb0(%x: tensor<4x5x6xf32>, %i: tensor<3xi32>):
  %0 = "aten.index_select.default"(%x, %i) {dim = -1 : i64, operand_names = ["self", "index"]} : (tensor<4x5x6xf32>, tensor<3xi32>) -> tensor<4x5x3xf32> loc("index_select")
  "func.return"(%0) : (tensor<4x5x3xf32>) -> ()
}) : () -> ()

// index.Tensor with two index tensors (the gpt2 attention-mask pattern): both are
// wrapped, broadcast to their common shape and stacked on a new last dim.
// CHECK-LABEL: sym_name = "index_two_tensors_broadcast"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8xi64>, [[I:%arg[0-9]+]]: tensor<2x1x1x1xi64>, [[J:%arg[0-9]+]]: tensor<1x1x8x1xi64>)
// CHECK: [[NEG0:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<2> : tensor<i64>}
// CHECK: [[SH0:%[0-9]+]] = "stablehlo.add"([[I]], {{%[0-9]+}})
// CHECK: [[W0:%[0-9]+]] = "stablehlo.select"([[NEG0]], [[SH0]], [[I]])
// CHECK: [[B0:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W0]]) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<2x1x1x1xi64>) -> tensor<2x1x8x1xi64>
// CHECK: [[C0:%[0-9]+]] = "stablehlo.reshape"([[B0]]) : (tensor<2x1x8x1xi64>) -> tensor<2x1x8x1x1xi64>
// CHECK: [[NEG1:%[0-9]+]] = "stablehlo.compare"([[J]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<8> : tensor<i64>}
// CHECK: [[SH1:%[0-9]+]] = "stablehlo.add"([[J]], {{%[0-9]+}})
// CHECK: [[W1:%[0-9]+]] = "stablehlo.select"([[NEG1]], [[SH1]], [[J]])
// CHECK: [[B1:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W1]]) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<1x1x8x1xi64>) -> tensor<2x1x8x1xi64>
// CHECK: [[C1:%[0-9]+]] = "stablehlo.reshape"([[B1]])
// CHECK: [[ST:%[0-9]+]] = "stablehlo.concatenate"([[C0]], [[C1]]) {dimension = 4 : i64} : (tensor<2x1x8x1x1xi64>, tensor<2x1x8x1x1xi64>) -> tensor<2x1x8x1x2xi64>
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[X]], [[ST]]) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 4>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (tensor<2x8xi64>, tensor<2x1x8x1x2xi64>) -> tensor<2x1x8x1xi64>
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<2x8xi64>, tensor<2x1x1x1xi64>, tensor<1x1x8x1xi64>) -> tensor<2x1x8x1xi64>, sym_name = "index_two_tensors_broadcast"}> ({
^bb0(%x: tensor<2x8xi64>, %i: tensor<2x1x1x1xi64>, %j: tensor<1x1x8x1xi64>):
  %0 = "aten.index.Tensor"(%x, %i, %j) {operand_names = ["self", "indices[0]", "indices[1]"]} : (tensor<2x8xi64>, tensor<2x1x1x1xi64>, tensor<1x1x8x1xi64>) -> tensor<2x1x8x1xi64> loc("index")
  "func.return"(%0) : (tensor<2x1x8x1xi64>) -> ()
}) : () -> ()

// x[:, i] (indices_length = 2, only indices[1] present): the indexed dim is moved
// first for the gather and the result moved back to dim 1.
// CHECK-LABEL: sym_name = "index_leading_none"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x5x6xf32>, [[I:%arg[0-9]+]]: tensor<3xi64>)
// CHECK: [[XT:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 1, 0, 2>} : (tensor<4x5x6xf32>) -> tensor<5x4x6xf32>
// CHECK: [[NEG:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<5> : tensor<i64>}
// CHECK: [[SH:%[0-9]+]] = "stablehlo.add"([[I]], {{%[0-9]+}})
// CHECK: [[W:%[0-9]+]] = "stablehlo.select"([[NEG]], [[SH]], [[I]])
// CHECK: [[IDX:%[0-9]+]] = "stablehlo.reshape"([[W]]) : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[XT]], [[IDX]]) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4, 6>} : (tensor<5x4x6xf32>, tensor<3x1xi64>) -> tensor<3x4x6xf32>
// CHECK: [[R:%[0-9]+]] = "stablehlo.transpose"([[G]]) {permutation = array<i64: 1, 0, 2>} : (tensor<3x4x6xf32>) -> tensor<4x3x6xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4x5x6xf32>, tensor<3xi64>) -> tensor<4x3x6xf32>, sym_name = "index_leading_none"}> ({
^bb0(%x: tensor<4x5x6xf32>, %i: tensor<3xi64>):
  %0 = "aten.index.Tensor"(%x, %i) {indices_length = 2 : i64, operand_names = ["self", "indices[1]"]} : (tensor<4x5x6xf32>, tensor<3xi64>) -> tensor<4x3x6xf32> loc("index_1")
  "func.return"(%0) : (tensor<4x3x6xf32>) -> ()
}) : () -> ()

// x[i, :, j] (indices_length = 3, a None in the middle): indexed dims are not
// adjacent, so the broadcast index dims lead the result (PyTorch's rule).
// CHECK-LABEL: sym_name = "index_separated_by_none"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x5x6xf32>, [[I:%arg[0-9]+]]: tensor<2xi64>, [[J:%arg[0-9]+]]: tensor<2xi64>)
// CHECK: [[XT:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 0, 2, 1>} : (tensor<4x5x6xf32>) -> tensor<4x6x5xf32>
// CHECK: [[NEG0:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<4> : tensor<i64>}
// CHECK: [[SH0:%[0-9]+]] = "stablehlo.add"([[I]], {{%[0-9]+}})
// CHECK: [[W0:%[0-9]+]] = "stablehlo.select"([[NEG0]], [[SH0]], [[I]])
// CHECK: [[NEG1:%[0-9]+]] = "stablehlo.compare"([[J]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<6> : tensor<i64>}
// CHECK: [[SH1:%[0-9]+]] = "stablehlo.add"([[J]], {{%[0-9]+}})
// CHECK: [[W1:%[0-9]+]] = "stablehlo.select"([[NEG1]], [[SH1]], [[J]])
// CHECK: [[ST:%[0-9]+]] = "stablehlo.concatenate"({{%[0-9]+}}, {{%[0-9]+}}) {dimension = 1 : i64} : (tensor<2x1xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[XT]], [[ST]]) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 5>} : (tensor<4x6x5xf32>, tensor<2x2xi64>) -> tensor<2x5xf32>
// CHECK-NOT: "stablehlo.transpose"
// CHECK: "func.return"([[G]])
"func.func"() <{function_type = (tensor<4x5x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x5xf32>, sym_name = "index_separated_by_none"}> ({
^bb0(%x: tensor<4x5x6xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>):
  %0 = "aten.index.Tensor"(%x, %i, %j) {indices_length = 3 : i64, operand_names = ["self", "indices[0]", "indices[2]"]} : (tensor<4x5x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x5xf32> loc("index_2")
  "func.return"(%0) : (tensor<2x5xf32>) -> ()
}) : () -> ()

// torch.gather on dim -1 (gpt2 position ids): full coordinates, iota for the other
// dims and the wrapped index for `dim`.
// CHECK-LABEL: sym_name = "gather"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x32xi64>, [[I:%arg[0-9]+]]: tensor<1x8xi64>)
// CHECK: [[NEG:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: "stablehlo.constant"() {value = dense<32> : tensor<i64>}
// CHECK: [[SH:%[0-9]+]] = "stablehlo.add"([[I]], {{%[0-9]+}})
// CHECK: [[W:%[0-9]+]] = "stablehlo.select"([[NEG]], [[SH]], [[I]])
// CHECK: [[IOTA:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<1x8xi64>
// CHECK: [[C0:%[0-9]+]] = "stablehlo.reshape"([[IOTA]]) : (tensor<1x8xi64>) -> tensor<1x8x1xi64>
// CHECK: [[C1:%[0-9]+]] = "stablehlo.reshape"([[W]]) : (tensor<1x8xi64>) -> tensor<1x8x1xi64>
// CHECK: [[ST:%[0-9]+]] = "stablehlo.concatenate"([[C0]], [[C1]]) {dimension = 2 : i64}
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[X]], [[ST]]) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (tensor<1x32xi64>, tensor<1x8x2xi64>) -> tensor<1x8xi64>
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<1x32xi64>, tensor<1x8xi64>) -> tensor<1x8xi64>, sym_name = "gather"}> ({
^bb0(%x: tensor<1x32xi64>, %i: tensor<1x8xi64>):
  %0 = "aten.gather.default"(%x, %i) {dim = -1 : i64, operand_names = ["self", "index"]} : (tensor<1x32xi64>, tensor<1x8xi64>) -> tensor<1x8xi64> loc("gather")
  "func.return"(%0) : (tensor<1x8xi64>) -> ()
}) : () -> ()

// x[:, i, j] on rank 4 (adjacent indexed dims after a None): the broadcast dim
// goes where the first indexed dim was.
// CHECK-LABEL: sym_name = "index_adjacent_middle"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x4x5x6xf32>, [[I:%arg[0-9]+]]: tensor<2xi64>, [[J:%arg[0-9]+]]: tensor<2xi64>)
// CHECK: [[XT:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 1, 2, 0, 3>} : (tensor<3x4x5x6xf32>) -> tensor<4x5x3x6xf32>
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[XT]], {{%[0-9]+}}) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 3, 6>} : (tensor<4x5x3x6xf32>, tensor<2x2xi64>) -> tensor<2x3x6xf32>
// CHECK: [[R:%[0-9]+]] = "stablehlo.transpose"([[G]]) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x6xf32>) -> tensor<3x2x6xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<3x4x5x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x2x6xf32>, sym_name = "index_adjacent_middle"}> ({
^bb0(%x: tensor<3x4x5x6xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>):
  %0 = "aten.index.Tensor"(%x, %i, %j) {indices_length = 3 : i64, operand_names = ["self", "indices[1]", "indices[2]"]} : (tensor<3x4x5x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x2x6xf32> loc("index_3")
  "func.return"(%0) : (tensor<3x2x6xf32>) -> ()
}) : () -> ()

// scatter_add(self, 1, index, src): full coordinates (row iota, wrapped index) and a
// stablehlo.scatter whose body adds.
// CHECK-LABEL: sym_name = "scatter_add"
// CHECK: ^bb0([[Y:%arg[0-9]+]]: tensor<3x5xf32>, [[IDX:%arg[0-9]+]]: tensor<3x2xi64>, [[SRC:%arg[0-9]+]]: tensor<3x2xf32>)
// CHECK: "stablehlo.constant"() {value = dense<5> : tensor<i64>}
// CHECK: [[W:%[0-9]+]] = "stablehlo.select"
// CHECK: [[ROW:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3x2xi64>
// CHECK: [[C:%[0-9]+]] = "stablehlo.concatenate"
// CHECK-SAME: -> tensor<3x2x2xi64>
// CHECK: [[R:%[0-9]+]] = "stablehlo.scatter"([[Y]], [[C]], [[SRC]])
// CHECK: "stablehlo.add"
// CHECK: scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2>
// CHECK: "func.return"([[R]])
"func.func"() <{function_type = (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>, sym_name = "scatter_add"}> ({
^bb0(%y: tensor<3x5xf32>, %i: tensor<3x2xi64>, %s: tensor<3x2xf32>):
  %0 = "aten.scatter_add.default"(%y, %i, %s) {dim = 1 : i64, operand_names = ["self", "index", "src"]} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32> loc("scatter_add")
  "func.return"(%0) : (tensor<3x5xf32>) -> ()
}) : () -> ()

// x[:, i] = v and x[:, i] += v (index_put with a leading None, indices_length = 2):
// x is transposed so that dim 1 leads, v (shape [6]) is broadcast to x[:, i]'s shape
// [4, 3, 6] and moved to [3, 4, 6] (index dim first), one scatter writes whole
// [4, 6] windows at the wrapped rows, and the result is transposed back. Without
// accumulate the body returns the update; with it, it adds.
// CHECK-LABEL: sym_name = "index_put_leading_none"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x5x6xf32>, [[I:%arg[0-9]+]]: tensor<3xi64>, [[V:%arg[0-9]+]]: tensor<6xf32>)
// CHECK: [[XT:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 1, 0, 2>} : (tensor<4x5x6xf32>) -> tensor<5x4x6xf32>
// CHECK: "stablehlo.constant"() {value = dense<5> : tensor<i64>}
// CHECK: [[W:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, [[I]])
// CHECK: [[IDX:%[0-9]+]] = "stablehlo.reshape"([[W]]) : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK: [[VB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[V]]) {broadcast_dimensions = array<i64: 2>} : (tensor<6xf32>) -> tensor<4x3x6xf32>
// CHECK: [[VT:%[0-9]+]] = "stablehlo.transpose"([[VB]]) {permutation = array<i64: 1, 0, 2>} : (tensor<4x3x6xf32>) -> tensor<3x4x6xf32>
// CHECK: [[S:%[0-9]+]] = "stablehlo.scatter"([[XT]], [[IDX]], [[VT]]) ({
// CHECK-NEXT: ^bb0({{%arg[0-9]+}}: tensor<f32>, [[UPD:%arg[0-9]+]]: tensor<f32>):
// CHECK-NEXT: "stablehlo.return"([[UPD]]) : (tensor<f32>) -> ()
// CHECK-NEXT: }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<5x4x6xf32>, tensor<3x1xi64>, tensor<3x4x6xf32>) -> tensor<5x4x6xf32>
// CHECK: [[R:%[0-9]+]] = "stablehlo.transpose"([[S]]) {permutation = array<i64: 1, 0, 2>} : (tensor<5x4x6xf32>) -> tensor<4x5x6xf32>
// CHECK: [[XT2:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 1, 0, 2>}
// CHECK: [[S2:%[0-9]+]] = "stablehlo.scatter"([[XT2]], {{%[0-9]+}}, {{%[0-9]+}}) ({
// CHECK-NEXT: ^bb0([[CUR:%arg[0-9]+]]: tensor<f32>, [[UPD2:%arg[0-9]+]]: tensor<f32>):
// CHECK-NEXT: [[SUM:%[0-9]+]] = "stablehlo.add"([[CUR]], [[UPD2]])
// CHECK-NEXT: "stablehlo.return"([[SUM]])
// CHECK-NEXT: }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}
// CHECK: [[R2:%[0-9]+]] = "stablehlo.transpose"([[S2]]) {permutation = array<i64: 1, 0, 2>} : (tensor<5x4x6xf32>) -> tensor<4x5x6xf32>
// CHECK-NEXT: "func.return"([[R]], [[R2]])
"func.func"() <{function_type = (tensor<4x5x6xf32>, tensor<3xi64>, tensor<6xf32>) -> (tensor<4x5x6xf32>, tensor<4x5x6xf32>), sym_name = "index_put_leading_none"}> ({
^bb0(%x: tensor<4x5x6xf32>, %i: tensor<3xi64>, %v: tensor<6xf32>):
  %0 = "aten.index_put.default"(%x, %i, %v) {indices_length = 2 : i64, operand_names = ["self", "indices[1]", "values"]} : (tensor<4x5x6xf32>, tensor<3xi64>, tensor<6xf32>) -> tensor<4x5x6xf32> loc("index_put")
  %1 = "aten.index_put.default"(%x, %i, %v) {accumulate = true, indices_length = 2 : i64, operand_names = ["self", "indices[1]", "values"]} : (tensor<4x5x6xf32>, tensor<3xi64>, tensor<6xf32>) -> tensor<4x5x6xf32> loc("index_put_acc")
  "func.return"(%0, %1) : (tensor<4x5x6xf32>, tensor<4x5x6xf32>) -> ()
}) : () -> ()

// x[mask] = v with a boolean mask over the leading dims [2, 3] (static shapes: no
// nonzero): x is viewed as 6 rows of 4 and the mask as 6 flags broadcast along the
// row. A single value (a 0-d f64 tensor, converted to x's f32) is broadcast and
// selected where the mask is true; x[mask] += r with one row r (shape [4]) adds r
// where the mask is true and 0 elsewhere.
// CHECK-LABEL: sym_name = "index_put_bool_mask_broadcast"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x4xf32>, [[M:%arg[0-9]+]]: tensor<2x3xi1>, [[V:%arg[0-9]+]]: tensor<f64>, [[ROW:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NOT: "stablehlo.scatter"
// CHECK: [[XF:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: [[MF:%[0-9]+]] = "stablehlo.reshape"([[M]]) : (tensor<2x3xi1>) -> tensor<6xi1>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MF]]) {broadcast_dimensions = array<i64: 0>} : (tensor<6xi1>) -> tensor<6x4xi1>
// CHECK: [[VC:%[0-9]+]] = "stablehlo.convert"([[V]]) : (tensor<f64>) -> tensor<f32>
// CHECK: [[VB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[VC]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<6x4xf32>
// CHECK: [[SEL:%[0-9]+]] = "stablehlo.select"([[MB]], [[VB]], [[XF]]) : (tensor<6x4xi1>, tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: [[R:%[0-9]+]] = "stablehlo.reshape"([[SEL]]) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK: [[XF2:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: [[MF2:%[0-9]+]] = "stablehlo.reshape"([[M]]) : (tensor<2x3xi1>) -> tensor<6xi1>
// CHECK: [[MB2:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MF2]]) {broadcast_dimensions = array<i64: 0>} : (tensor<6xi1>) -> tensor<6x4xi1>
// CHECK: [[RB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[ROW]]) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<6x4xf32>
// CHECK: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<6x4xf32>}
// CHECK: [[ADDEND:%[0-9]+]] = "stablehlo.select"([[MB2]], [[RB]], [[Z]])
// CHECK: [[ACC:%[0-9]+]] = "stablehlo.add"([[XF2]], [[ADDEND]]) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: [[R2:%[0-9]+]] = "stablehlo.reshape"([[ACC]]) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: "func.return"([[R]], [[R2]])
"func.func"() <{function_type = (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<f64>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>), sym_name = "index_put_bool_mask_broadcast"}> ({
^bb0(%x: tensor<2x3x4xf32>, %m: tensor<2x3xi1>, %v: tensor<f64>, %r: tensor<4xf32>):
  %0 = "aten.index_put.default"(%x, %m, %v) {operand_names = ["self", "indices[0]", "values"]} : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<f64>) -> tensor<2x3x4xf32> loc("mask_put")
  %1 = "aten.index_put.default"(%x, %m, %r) {accumulate = true, operand_names = ["self", "indices[0]", "values"]} : (tensor<2x3x4xf32>, tensor<2x3xi1>, tensor<4xf32>) -> tensor<2x3x4xf32> loc("mask_put_acc")
  "func.return"(%0, %1) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> ()
}) : () -> ()

// x[mask] = v with one row of v per true position (v: [2, 3], mask: [5]): the i-th
// true position takes row i of v. Its row number is the inclusive prefix sum of the
// mask (a reduce_window add over a window of 5 padded by 4 in front) minus 1, clamped
// to [0, 1] (false positions past the last true one would point past v; they are not
// selected anyway); the rows are gathered and selected where the mask is true.
// CHECK-LABEL: sym_name = "index_put_bool_mask_rows"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<5x3xf32>, [[M:%arg[0-9]+]]: tensor<5xi1>, [[V:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NOT: "stablehlo.scatter"
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 0>} : (tensor<5xi1>) -> tensor<5x3xi1>
// CHECK: [[MI:%[0-9]+]] = "stablehlo.convert"([[M]]) : (tensor<5xi1>) -> tensor<5xi64>
// CHECK: [[CS:%[0-9]+]] = "stablehlo.reduce_window"([[MI]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: }) {base_dilations = array<i64: 1>, padding = dense<{{\[\[}}4, 0]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 5>, window_strides = array<i64: 1>} : (tensor<5xi64>, tensor<i64>) -> tensor<5xi64>
// CHECK: "stablehlo.constant"() {value = dense<1> : tensor<5xi64>}
// CHECK: [[POS:%[0-9]+]] = "stablehlo.subtract"([[CS]], {{%[0-9]+}})
// CHECK: [[LO:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: [[HI:%[0-9]+]] = "stablehlo.constant"() {value = dense<1> : tensor<i64>}
// CHECK: [[PC:%[0-9]+]] = "stablehlo.clamp"([[LO]], [[POS]], [[HI]]) : (tensor<i64>, tensor<5xi64>, tensor<i64>) -> tensor<5xi64>
// CHECK: [[IDX:%[0-9]+]] = "stablehlo.reshape"({{%[0-9]+}}) : (tensor<5xi64>) -> tensor<5x1xi64>
// CHECK: [[ROWS:%[0-9]+]] = "stablehlo.gather"([[V]], [[IDX]])
// CHECK-SAME: collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>
// CHECK-SAME: slice_sizes = array<i64: 1, 3>} : (tensor<2x3xf32>, tensor<5x1xi64>) -> tensor<5x3xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.select"([[MB]], [[ROWS]], [[X]]) : (tensor<5x3xi1>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<5x3xf32>, tensor<5xi1>, tensor<2x3xf32>) -> tensor<5x3xf32>, sym_name = "index_put_bool_mask_rows"}> ({
^bb0(%x: tensor<5x3xf32>, %m: tensor<5xi1>, %v: tensor<2x3xf32>):
  %0 = "aten.index_put.default"(%x, %m, %v) {operand_names = ["self", "indices[0]", "values"]} : (tensor<5x3xf32>, tensor<5xi1>, tensor<2x3xf32>) -> tensor<5x3xf32> loc("mask_put_rows")
  "func.return"(%0) : (tensor<5x3xf32>) -> ()
}) : () -> ()

// select_scatter(dim 1, index -2) on 3x5 writes column 3: one run of positions, so
// the untouched columns and the new one are concatenated (no scatter). slice_scatter
// (dim 1, start 1, end INT64_MAX, step 2) writes columns [1, 3]: a scatter of whole
// slices at constant positions with the written dim moved first. slice_scatter with
// step 1 (rows 1..3 of a 4x2) is a concatenation again.
// CHECK-LABEL: sym_name = "select_slice_scatter"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x5xf32>, [[S:%arg[0-9]+]]: tensor<3xf32>, [[T:%arg[0-9]+]]: tensor<3x2xf32>, [[Y:%arg[0-9]+]]: tensor<4x2xf32>, [[Z:%arg[0-9]+]]: tensor<2x2xf32>)
// CHECK: [[SR:%[0-9]+]] = "stablehlo.reshape"([[S]]) : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK-NEXT: [[L1:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 3, 3>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<3x3xf32>
// CHECK-NEXT: [[H1:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 3, 5>, start_indices = array<i64: 0, 4>, strides = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<3x1xf32>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.concatenate"([[L1]], [[SR]], [[H1]]) {dimension = 1 : i64} : (tensor<3x3xf32>, tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
// CHECK: [[P2:%[0-9]+]] = "stablehlo.constant"() {value = dense<[1, 3]> : tensor<2xi64>}
// CHECK: [[W2:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, [[P2]])
// CHECK: [[I2:%[0-9]+]] = "stablehlo.reshape"([[W2]]) : (tensor<2xi64>) -> tensor<2x1xi64>
// CHECK: [[U2:%[0-9]+]] = "stablehlo.transpose"([[T]]) {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK: [[X2:%[0-9]+]] = "stablehlo.transpose"([[X]]) {permutation = array<i64: 1, 0>}
// CHECK: [[SC2:%[0-9]+]] = "stablehlo.scatter"([[X2]], [[I2]], [[U2]]) ({
// CHECK: }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<5x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK: [[R2:%[0-9]+]] = "stablehlo.transpose"([[SC2]]) {permutation = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: [[L3:%[0-9]+]] = "stablehlo.slice"([[Y]]) {limit_indices = array<i64: 1, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<4x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: [[H3:%[0-9]+]] = "stablehlo.slice"([[Y]]) {limit_indices = array<i64: 4, 2>, start_indices = array<i64: 3, 0>, strides = array<i64: 1, 1>} : (tensor<4x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: [[R3:%[0-9]+]] = "stablehlo.concatenate"([[L3]], [[Z]], [[H3]]) {dimension = 0 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: "func.return"([[R1]], [[R2]], [[R3]])
"func.func"() <{function_type = (tensor<3x5xf32>, tensor<3xf32>, tensor<3x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<4x2xf32>), sym_name = "select_slice_scatter"}> ({
^bb0(%x: tensor<3x5xf32>, %s: tensor<3xf32>, %t: tensor<3x2xf32>, %y: tensor<4x2xf32>, %z: tensor<2x2xf32>):
  %0 = "aten.select_scatter.default"(%x, %s) {dim = 1 : i64, index = -2 : i64, operand_names = ["self", "src"]} : (tensor<3x5xf32>, tensor<3xf32>) -> tensor<3x5xf32> loc("select_scatter")
  %1 = "aten.slice_scatter.default"(%x, %t) {dim = 1 : i64, end = 9223372036854775807 : i64, operand_names = ["self", "src"], start = 1 : i64, step = 2 : i64} : (tensor<3x5xf32>, tensor<3x2xf32>) -> tensor<3x5xf32> loc("slice_scatter")
  %2 = "aten.slice_scatter.default"(%y, %z) {dim = 0 : i64, end = 3 : i64, operand_names = ["self", "src"], start = 1 : i64, step = 1 : i64} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32> loc("slice_scatter_run")
  "func.return"(%0, %1, %2) : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<4x2xf32>) -> ()
}) : () -> ()

// index_add(dim 0, alpha 2): source * 2 added at the wrapped rows (duplicates sum).
// CHECK-LABEL: sym_name = "index_add_alpha"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<5x3xf32>, [[I:%arg[0-9]+]]: tensor<2xi64>, [[S:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[A:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<2x3xf32>}
// CHECK: [[SA:%[0-9]+]] = "stablehlo.multiply"([[S]], [[A]])
// CHECK: "stablehlo.constant"() {value = dense<5> : tensor<i64>}
// CHECK: [[W:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, [[I]])
// CHECK: [[IDX:%[0-9]+]] = "stablehlo.reshape"([[W]]) : (tensor<2xi64>) -> tensor<2x1xi64>
// CHECK: [[R:%[0-9]+]] = "stablehlo.scatter"([[X]], [[IDX]], [[SA]]) ({
// CHECK: "stablehlo.add"
// CHECK: }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<5x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>, sym_name = "index_add_alpha"}> ({
^bb0(%x: tensor<5x3xf32>, %i: tensor<2xi64>, %s: tensor<2x3xf32>):
  %0 = "aten.index_add.default"(%x, %i, %s) {alpha = 2 : i64, dim = 0 : i64, operand_names = ["self", "index", "source"]} : (tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32> loc("index_add")
  "func.return"(%0) : (tensor<5x3xf32>) -> ()
}) : () -> ()

// scatter.reduce with reduce = "multiply": the body multiplies. scatter_reduce "mean"
// with include_self = false: positions hit by the index (a 0/1 scatter of ones,
// compared != 0) start from 0 instead of self, the sources are added, and the sum is
// divided by the number of contributions (a scatter-add of ones into zeros, at least
// 1, so untouched positions keep self).
// CHECK-LABEL: sym_name = "scatter_multiply_reduce_mean"
// CHECK: ^bb0([[Y:%arg[0-9]+]]: tensor<3x5xf32>, [[I:%arg[0-9]+]]: tensor<3x2xi64>, [[S:%arg[0-9]+]]: tensor<3x2xf32>)
// CHECK: [[C:%[0-9]+]] = "stablehlo.concatenate"
// CHECK-SAME: -> tensor<3x2x2xi64>
// CHECK: [[MUL:%[0-9]+]] = "stablehlo.scatter"([[Y]], [[C]], [[S]]) ({
// CHECK-NEXT: ^bb0({{%arg[0-9]+}}: tensor<f32>, {{%arg[0-9]+}}: tensor<f32>):
// CHECK-NEXT: "stablehlo.multiply"
// CHECK: }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2>, unique_indices = false}
// CHECK: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<3x5xf32>}
// CHECK: [[ONES:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<3x2xf32>}
// CHECK: [[HIT:%[0-9]+]] = "stablehlo.scatter"([[Z]], {{%[0-9]+}}, [[ONES]]) ({
// CHECK-NEXT: ^bb0({{%arg[0-9]+}}: tensor<f32>, [[UPD:%arg[0-9]+]]: tensor<f32>):
// CHECK-NEXT: "stablehlo.return"([[UPD]])
// CHECK: [[ISHIT:%[0-9]+]] = "stablehlo.compare"([[HIT]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction NE
// CHECK: [[ID:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<3x5xf32>}
// CHECK: [[BASE:%[0-9]+]] = "stablehlo.select"([[ISHIT]], [[ID]], [[Y]])
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.scatter"([[BASE]], {{%[0-9]+}}, [[S]]) ({
// CHECK: "stablehlo.add"
// CHECK: [[ONES2:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<3x2xf32>}
// CHECK: [[START:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<3x5xf32>}
// CHECK: [[CNT:%[0-9]+]] = "stablehlo.scatter"([[START]], {{%[0-9]+}}, [[ONES2]]) ({
// CHECK: "stablehlo.add"
// CHECK: "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<3x5xf32>}
// CHECK: [[CMAX:%[0-9]+]] = "stablehlo.maximum"([[CNT]], {{%[0-9]+}})
// CHECK: [[CNT1:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, [[CNT]], {{%[0-9]+}})
// CHECK-NEXT: [[MEAN:%[0-9]+]] = "stablehlo.divide"([[SUM]], [[CNT1]])
// CHECK-NEXT: "func.return"([[MUL]], [[MEAN]])
"func.func"() <{function_type = (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>), sym_name = "scatter_multiply_reduce_mean"}> ({
^bb0(%y: tensor<3x5xf32>, %i: tensor<3x2xi64>, %s: tensor<3x2xf32>):
  %0 = "aten.scatter.reduce"(%y, %i, %s) {dim = 1 : i64, operand_names = ["self", "index", "src"], reduce = "multiply"} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32> loc("scatter_mul")
  %1 = "aten.scatter_reduce.two"(%y, %i, %s) {dim = 1 : i64, include_self = false, operand_names = ["self", "index", "src"], reduce = "mean"} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32> loc("scatter_mean")
  "func.return"(%0, %1) : (tensor<3x5xf32>, tensor<3x5xf32>) -> ()
}) : () -> ()

// _embedding_bag, sum mode (0): the 5 looked-up rows [5, 3] are summed per bag by a
// one-hot [B, N] = [2, 5] membership matrix. Position i belongs to bag
// #{b : offsets[b] <= i} - 1 (a compare of the broadcast offsets with an iota over
// positions, summed over bags); membership compares that with an iota over bags.
// bag_size (result 2) counts the members of each bag.
// CHECK-LABEL: sym_name = "embedding_bag_sum"
// CHECK: ^bb0([[W:%arg[0-9]+]]: tensor<6x3xf32>, [[I:%arg[0-9]+]]: tensor<5xi64>, [[O:%arg[0-9]+]]: tensor<2xi64>)
// CHECK: [[ROWS:%[0-9]+]] = "stablehlo.gather"([[W]], {{%[0-9]+}})
// CHECK-SAME: -> tensor<5x3xf32>
// CHECK: [[POS:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x5xi64>
// CHECK: [[ST:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[O]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi64>) -> tensor<2x5xi64>
// CHECK: [[LE:%[0-9]+]] = "stablehlo.compare"([[ST]], [[POS]])
// CHECK-SAME: comparison_direction LE
// CHECK: [[LEI:%[0-9]+]] = "stablehlo.convert"([[LE]]) : (tensor<2x5xi1>) -> tensor<2x5xi64>
// CHECK: [[NST:%[0-9]+]] = "stablehlo.reduce"([[LEI]], {{%[0-9]+}})
// CHECK: dimensions = array<i64: 0>} : (tensor<2x5xi64>, tensor<i64>) -> tensor<5xi64>
// CHECK: "stablehlo.constant"() {value = dense<1> : tensor<5xi64>}
// CHECK: [[BAG:%[0-9]+]] = "stablehlo.subtract"([[NST]], {{%[0-9]+}})
// CHECK: [[IDS:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2x5xi64>
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[BAG]]) {broadcast_dimensions = array<i64: 1>} : (tensor<5xi64>) -> tensor<2x5xi64>
// CHECK: [[MEM:%[0-9]+]] = "stablehlo.compare"([[BB]], [[IDS]])
// CHECK-SAME: comparison_direction EQ
// CHECK: [[MEMI:%[0-9]+]] = "stablehlo.convert"([[MEM]]) : (tensor<2x5xi1>) -> tensor<2x5xi64>
// CHECK: [[CNT:%[0-9]+]] = "stablehlo.reduce"([[MEMI]], {{%[0-9]+}})
// CHECK: dimensions = array<i64: 1>} : (tensor<2x5xi64>, tensor<i64>) -> tensor<2xi64>
// CHECK: [[HOT:%[0-9]+]] = "stablehlo.convert"([[MEM]]) : (tensor<2x5xi1>) -> tensor<2x5xf32>
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.dot_general"([[HOT]], [[ROWS]])
// CHECK-SAME: lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]
// CHECK-SAME: (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT: "stablehlo.divide"
// CHECK: "func.return"([[SUM]], [[CNT]])
"func.func"() <{function_type = (tensor<6x3xf32>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2xi64>), sym_name = "embedding_bag_sum"}> ({
^bb0(%w: tensor<6x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>):
  %0:4 = "aten._embedding_bag.default"(%w, %i, %o) {mode = 0 : i64, operand_names = ["weight", "indices", "offsets"]} : (tensor<6x3xf32>, tensor<5xi64>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>) loc("bag_sum")
  "func.return"(%0#0, %0#2) : (tensor<2x3xf32>, tensor<2xi64>) -> ()
}) : () -> ()

// _embedding_bag, mean mode (1) with include_last_offset: the 3 offsets make 2 bags
// (the last offset is only the end, sliced off); each bag sum is divided by
// max(count, 1), so an empty bag gives zeros.
// CHECK-LABEL: sym_name = "embedding_bag_mean"
// CHECK: ^bb0([[W:%arg[0-9]+]]: tensor<6x3xf32>, [[I:%arg[0-9]+]]: tensor<5xi64>, [[O:%arg[0-9]+]]: tensor<3xi64>)
// CHECK: [[ROWS:%[0-9]+]] = "stablehlo.gather"([[W]], {{%[0-9]+}})
// CHECK: [[OFFS:%[0-9]+]] = "stablehlo.slice"([[O]]) {limit_indices = array<i64: 2>, start_indices = array<i64: 0>, strides = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
// CHECK: "stablehlo.broadcast_in_dim"([[OFFS]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi64>) -> tensor<2x5xi64>
// CHECK: [[MEM:%[0-9]+]] = "stablehlo.compare"({{.*}}comparison_direction EQ
// CHECK: [[CNT:%[0-9]+]] = "stablehlo.reduce"
// CHECK: -> tensor<2xi64>
// CHECK: [[HOT:%[0-9]+]] = "stablehlo.convert"([[MEM]]) : (tensor<2x5xi1>) -> tensor<2x5xf32>
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.dot_general"([[HOT]], [[ROWS]])
// CHECK: [[CF:%[0-9]+]] = "stablehlo.convert"([[CNT]]) : (tensor<2xi64>) -> tensor<2xf32>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<2xf32>}
// CHECK: "stablehlo.maximum"([[CF]], [[ONE]])
// The constant 1 is not NaN: only the count's NaN check remains.
// CHECK-NOT: "stablehlo.select"({{%[0-9]+}}, [[ONE]]
// CHECK: [[C:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, [[CF]], {{%[0-9]+}})
// CHECK-NEXT: [[CB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[C]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
// CHECK: [[MEAN:%[0-9]+]] = "stablehlo.divide"([[SUM]], [[CB]])
// CHECK: "func.return"([[MEAN]])
"func.func"() <{function_type = (tensor<6x3xf32>, tensor<5xi64>, tensor<3xi64>) -> tensor<2x3xf32>, sym_name = "embedding_bag_mean"}> ({
^bb0(%w: tensor<6x3xf32>, %i: tensor<5xi64>, %o: tensor<3xi64>):
  %0:4 = "aten._embedding_bag.default"(%w, %i, %o) {include_last_offset = true, mode = 1 : i64, operand_names = ["weight", "indices", "offsets"]} : (tensor<6x3xf32>, tensor<5xi64>, tensor<3xi64>) -> (tensor<2x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>) loc("bag_mean")
  "func.return"(%0#0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// masked_scatter with a [3] mask broadcast over [2, 3] and a 4-element source: the
// flat mask's inclusive prefix sum (reduce_window of size 6 padded 5 on the left)
// minus one, clamped to [0, 3], is the source position of each true element; a gather
// reads it and a select keeps self where the mask is false.
// CHECK-LABEL: sym_name = "masked_scatter"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>, [[M:%arg[0-9]+]]: tensor<3xi1>, [[S:%arg[0-9]+]]: tensor<4xf32>)
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xi1>) -> tensor<2x3xi1>
// CHECK: [[MF:%[0-9]+]] = "stablehlo.reshape"([[MB]]) : (tensor<2x3xi1>) -> tensor<6xi1>
// CHECK: [[MI:%[0-9]+]] = "stablehlo.convert"([[MF]]) : (tensor<6xi1>) -> tensor<6xi64>
// CHECK: [[CS:%[0-9]+]] = "stablehlo.reduce_window"([[MI]], {{%[0-9]+}})
// CHECK: "stablehlo.add"
// CHECK: padding = dense<{{\[\[}}5, 0]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 6>, window_strides = array<i64: 1>} : (tensor<6xi64>, tensor<i64>) -> tensor<6xi64>
// CHECK: "stablehlo.constant"() {value = dense<1> : tensor<6xi64>}
// CHECK: [[P:%[0-9]+]] = "stablehlo.subtract"([[CS]], {{%[0-9]+}})
// CHECK: [[LO:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: [[HI:%[0-9]+]] = "stablehlo.constant"() {value = dense<3> : tensor<i64>}
// CHECK: [[PC:%[0-9]+]] = "stablehlo.clamp"([[LO]], [[P]], [[HI]])
// CHECK: [[PICK:%[0-9]+]] = "stablehlo.gather"([[S]], {{%[0-9]+}})
// CHECK-SAME: (tensor<4xf32>, tensor<6x1xi64>) -> tensor<6xf32>
// CHECK: [[XF:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK: [[SEL:%[0-9]+]] = "stablehlo.select"([[MF]], [[PICK]], [[XF]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.reshape"([[SEL]]) : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3xi1>, tensor<4xf32>) -> tensor<2x3xf32>, sym_name = "masked_scatter"}> ({
^bb0(%x: tensor<2x3xf32>, %m: tensor<3xi1>, %s: tensor<4xf32>):
  %0 = "aten.masked_scatter.default"(%x, %m, %s) {operand_names = ["self", "mask", "source"]} : (tensor<2x3xf32>, tensor<3xi1>, tensor<4xf32>) -> tensor<2x3xf32> loc("masked_scatter")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()
