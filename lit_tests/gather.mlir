// Gather family (compiler/src/passes/lower_aten_to_stablehlo/gather.rs): embedding,
// index_select, advanced indexing (index.Tensor, with None entries encoded by the
// `indices_length` attribute), and torch.gather; all become stablehlo.gather with
// negative indices wrapped (select(i < 0, i + size, i)).
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
