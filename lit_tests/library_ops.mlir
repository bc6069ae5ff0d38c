// Library ops family (compiler/src/passes/lower_aten_to_stablehlo/library_ops.rs):
// operators registered outside ATen. `transformers.grouped_mm_fallback` and
// `aten._grouped_mm` (input [S, K], weight [E, K, N], offs [E] cumulative row ends).
//
// Each group's row range is bounded as PyTorch's slices bound it (a negative offset
// plus S, clamped into [0, S], an end before its start empty). The routed form (the
// default) is a stablehlo.while over row chunks of C rows (C = the largest power of two
// <= S / 2E, 1 to 128): chunk i's group is the number of groups whose first chunk is
// <= i, minus one; it reads C rows from a start clamped to S - C and weight[group]
// with dynamic_slice, multiplies [C, K] x [K, N], and writes the rows of its range
// (a mask from the clamped start) with dynamic_update_slice. The dense form
// (`grouped-mm=dense`, for Neuron and partitioned programs) multiplies every row by
// every expert ([S, E, N]) and selects each row's group (the last whose range holds
// it) with a one-hot mask, by select (another expert's product may be non-finite).
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s
// RUN: tpuc opt %s --pass-pipeline='lower-aten-to-stablehlo{grouped-mm=dense},verify-stablehlo' | FileCheck %s --check-prefix=DENSE
// RUN: tpuc opt %s --pass-pipeline=aten-outline-composites,lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s --check-prefix=COMPOSITE
// RUN: not tpuc opt %s --pass-pipeline='lower-aten-to-stablehlo{grouped-mm=sparse}' 2>&1 | FileCheck %s --check-prefix=BAD-OPTION

// BAD-OPTION: grouped-mm is `routed` or `dense`, not `sparse`

// S=5, K=3, E=2, N=4: C = 1 (5 / 4 rounds down to 1), so a chunk is one row and
// the chunk count of a group is its row count.
// CHECK-LABEL: sym_name = "grouped_mm_fallback"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<5x3xf32>, [[W:%arg[0-9]+]]: tensor<2x3x4xf32>, [[O:%arg[0-9]+]]: tensor<2xi64>)
// Group starts are [0, offs[0]]; both ends are wrapped (negative + 5) and clamped.
// CHECK: [[ZERO:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<2xi64>}
// CHECK: [[FIVE:%[0-9]+]] = "stablehlo.constant"() {value = dense<5> : tensor<2xi64>}
// CHECK: [[PREV:%[0-9]+]] = "stablehlo.slice"([[O]]) {limit_indices = array<i64: 1>, start_indices = array<i64: 0>
// CHECK: [[STARTS:%[0-9]+]] = "stablehlo.concatenate"({{%[0-9]+}}, [[PREV]])
// CHECK: "stablehlo.add"([[STARTS]], [[FIVE]])
// CHECK: [[LO:%[0-9]+]] = "stablehlo.clamp"([[ZERO]], {{%[0-9]+}}, [[FIVE]])
// CHECK: "stablehlo.add"([[O]], [[FIVE]])
// CHECK: [[END:%[0-9]+]] = "stablehlo.clamp"([[ZERO]], {{%[0-9]+}}, [[FIVE]])
// CHECK: [[HI:%[0-9]+]] = "stablehlo.maximum"([[END]], [[LO]])
// CHECK: [[COUNT:%[0-9]+]] = "stablehlo.subtract"([[HI]], [[LO]])
// The first chunk of each group: an exclusive prefix sum of the counts; the total.
// CHECK: "stablehlo.compare"
// CHECK-SAME: comparison_direction LT
// CHECK-SAME: (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi1>
// CHECK: "stablehlo.broadcast_in_dim"([[COUNT]]) {broadcast_dimensions = array<i64: 1>} : (tensor<2xi64>) -> tensor<2x2xi64>
// CHECK: [[FIRST:%[0-9]+]] = "stablehlo.reduce"
// CHECK: [[TOTAL:%[0-9]+]] = "stablehlo.reduce"([[COUNT]]
// The bounded loop: ceil(S / C) + E = 7 iterations, each doing its chunk if it
// exists (below the total).
// CHECK: [[BOUNDED:%[0-9]+]]:8 = "stablehlo.while"({{%[0-9]+}}, {{%[0-9]+}}, [[FIRST]], [[TOTAL]], [[X]], [[W]], [[LO]], [[HI]])
// CHECK: "stablehlo.constant"() {value = dense<7> : tensor<i64>}
// CHECK: comparison_direction LT
// CHECK: "stablehlo.if"
// The body: the chunk's group and which rows it reads are its own, then its rows
// and its group's weight, one [1, 3] x [3, 4] product.
// CHECK: [[MINE:%[0-9]+]] = "stablehlo.and"
// CHECK: [[ROWS:%[0-9]+]] = "stablehlo.dynamic_slice"({{%arg[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}) {slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<i64>, tensor<i64>) -> tensor<1x3xf32>
// CHECK: [[EXPERT:%[0-9]+]] = "stablehlo.dynamic_slice"({{%arg[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}) {slice_sizes = array<i64: 1, 3, 4>}
// CHECK: [[WK:%[0-9]+]] = "stablehlo.reshape"([[EXPERT]]) : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
// CHECK: [[PRODUCT:%[0-9]+]] = "stablehlo.dot_general"([[ROWS]], [[WK]])
// CHECK-SAME: (tensor<1x3xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
// CHECK: [[MASK:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MINE]]) {broadcast_dimensions = array<i64: 0>} : (tensor<1xi1>) -> tensor<1x4xi1>
// CHECK: [[OLD:%[0-9]+]] = "stablehlo.dynamic_slice"({{%arg[0-9]+}}
// CHECK-SAME: (tensor<5x4xf32>, tensor<i64>, tensor<i64>) -> tensor<1x4xf32>
// CHECK: [[NEW:%[0-9]+]] = "stablehlo.select"([[MASK]], [[PRODUCT]], [[OLD]])
// CHECK: "stablehlo.dynamic_update_slice"({{%arg[0-9]+}}, [[NEW]],
// The loop for chunks past the bound (overlapping groups only) continues from the
// first one's state, while the counter is below the total.
// CHECK: [[LOOP:%[0-9]+]]:8 = "stablehlo.while"([[BOUNDED]]#0, [[BOUNDED]]#1, [[BOUNDED]]#2, [[BOUNDED]]#3
// CHECK: "func.return"([[LOOP]]#1)

// DENSE-LABEL: sym_name = "grouped_mm_fallback"
// DENSE: ^bb0([[X:%arg[0-9]+]]: tensor<5x3xf32>, [[W:%arg[0-9]+]]: tensor<2x3x4xf32>, [[O:%arg[0-9]+]]: tensor<2xi64>)
// DENSE: [[ALL:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[W]])
// DENSE-SAME: lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]
// DENSE-SAME: (tensor<5x3xf32>, tensor<2x3x4xf32>) -> tensor<5x2x4xf32>
// DENSE: [[ROWS:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<5x2xi64>
// DENSE: [[EXPERTS:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<5x2xi64>
// DENSE: [[IN:%[0-9]+]] = "stablehlo.and"
// DENSE: [[CANDIDATE:%[0-9]+]] = "stablehlo.select"([[IN]], [[EXPERTS]], {{%[0-9]+}})
// DENSE: [[OWNER:%[0-9]+]] = "stablehlo.reduce"([[CANDIDATE]]
// DENSE: "stablehlo.maximum"
// DENSE: "stablehlo.broadcast_in_dim"([[OWNER]]) {broadcast_dimensions = array<i64: 0>} : (tensor<5xi64>) -> tensor<5x2xi64>
// DENSE: comparison_direction EQ
// DENSE: [[MASK:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<5x2xi1>) -> tensor<5x2x4xi1>
// DENSE: [[KEPT:%[0-9]+]] = "stablehlo.select"([[MASK]], [[ALL]], {{%[0-9]+}}) : (tensor<5x2x4xi1>, tensor<5x2x4xf32>, tensor<5x2x4xf32>)
// DENSE: [[R:%[0-9]+]] = "stablehlo.reduce"([[KEPT]], {{%[0-9]+}})
// DENSE: -> tensor<5x4xf32>
// DENSE: "func.return"([[R]])
// DENSE-NOT: stablehlo.while

// At -O2 the node becomes a composite named after its overload (never
// `chlo.ragged_dot`, which XLA would turn into the op), decomposed as the loop.
// COMPOSITE-LABEL: sym_name = "grouped_mm_fallback"
// COMPOSITE: [[C:%[0-9]+]] = "stablehlo.composite"(%arg{{[0-9]+}}, %arg{{[0-9]+}}, %arg{{[0-9]+}})
// COMPOSITE-SAME: decomposition = @transformers.grouped_mm_fallback.default.impl_0
// COMPOSITE-SAME: name = "transformers.grouped_mm_fallback.default"
// COMPOSITE: "func.return"([[C]])
"func.func"() <{function_type = (tensor<5x3xf32>, tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x4xf32>, sym_name = "grouped_mm_fallback"}> ({
^bb0(%x: tensor<5x3xf32>, %w: tensor<2x3x4xf32>, %o: tensor<2xi64>):
  %0 = "transformers.grouped_mm_fallback.default"(%x, %w, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<5x3xf32>, tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x4xf32> loc("grouped_mm")
  "func.return"(%0) : (tensor<5x4xf32>) -> ()
}) : () -> ()

// aten._grouped_mm (weight named mat2) in bf16 with i32 offsets, S=64, E=2: C = 16
// (64 / 4), so a group's chunk count is ceil(count / 16) and a chunk starts at most at
// 64 - 16 = 48. The product accumulates in f32 and rounds to bf16 once.
// CHECK-LABEL: sym_name = "grouped_mm_bf16"
// CHECK: ^bb0({{%arg[0-9]+}}: tensor<64x2xbf16>, {{%arg[0-9]+}}: tensor<2x2x5xbf16>, [[O:%arg[0-9]+]]: tensor<2xi32>)
// CHECK: "stablehlo.convert"([[O]]) : (tensor<2xi32>) -> tensor<2xi64>
// CHECK: [[SPARE:%[0-9]+]] = "stablehlo.constant"() {value = dense<15> : tensor<2xi64>}
// CHECK: [[PLUS:%[0-9]+]] = "stablehlo.add"({{%[0-9]+}}, [[SPARE]])
// CHECK: [[C16:%[0-9]+]] = "stablehlo.constant"() {value = dense<16> : tensor<2xi64>}
// CHECK: "stablehlo.divide"([[PLUS]], [[C16]])
// CHECK: "stablehlo.while"
// CHECK: [[LAST:%[0-9]+]] = "stablehlo.constant"() {value = dense<48> : tensor<i64>}
// CHECK: [[START:%[0-9]+]] = "stablehlo.minimum"({{%[0-9]+}}, [[LAST]])
// CHECK: "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<16xi64>
// CHECK: "stablehlo.dynamic_slice"({{%arg[0-9]+}}, [[START]], {{%[0-9]+}}) {slice_sizes = array<i64: 16, 2>}
// CHECK: [[P:%[0-9]+]] = "stablehlo.dot_general"
// CHECK-SAME: (tensor<16x2xbf16>, tensor<2x5xbf16>) -> tensor<16x5xf32>
// CHECK-NEXT: "stablehlo.convert"([[P]]) : (tensor<16x5xf32>) -> tensor<16x5xbf16>

// DENSE-LABEL: sym_name = "grouped_mm_bf16"
// DENSE: [[ALL:%[0-9]+]] = "stablehlo.dot_general"
// DENSE-SAME: (tensor<64x2xbf16>, tensor<2x2x5xbf16>) -> tensor<64x2x5xf32>
// DENSE: "stablehlo.select"({{%[0-9]+}}, [[ALL]]
// DENSE: [[R:%[0-9]+]] = "stablehlo.reduce"
// DENSE: -> tensor<64x5xf32>
// DENSE-NEXT: [[C:%[0-9]+]] = "stablehlo.convert"([[R]]) : (tensor<64x5xf32>) -> tensor<64x5xbf16>
// DENSE-NEXT: "func.return"([[C]])

// COMPOSITE-LABEL: sym_name = "grouped_mm_bf16"
// COMPOSITE: "stablehlo.composite"
// COMPOSITE-SAME: name = "aten._grouped_mm.default"
// The decompositions: private functions holding the loop.
// COMPOSITE-LABEL: sym_name = "transformers.grouped_mm_fallback.default.impl_0"
// COMPOSITE-SAME: sym_visibility = "private"
// COMPOSITE: "stablehlo.while"
// COMPOSITE-LABEL: sym_name = "aten._grouped_mm.default.impl_0"
// COMPOSITE: "stablehlo.while"
"func.func"() <{function_type = (tensor<64x2xbf16>, tensor<2x2x5xbf16>, tensor<2xi32>) -> tensor<64x5xbf16>, sym_name = "grouped_mm_bf16"}> ({
^bb0(%x: tensor<64x2xbf16>, %w: tensor<2x2x5xbf16>, %o: tensor<2xi32>):
  %0 = "aten._grouped_mm.default"(%x, %w, %o) {operand_names = ["self", "mat2", "offs"]} : (tensor<64x2xbf16>, tensor<2x2x5xbf16>, tensor<2xi32>) -> tensor<64x5xbf16> loc("grouped_mm_bf16")
  "func.return"(%0) : (tensor<64x5xbf16>) -> ()
}) : () -> ()

// aten._grouped_mm of two matrices (autograd's weight gradient of a grouped matmul):
// x [K, S] x y [S, N] with offs [E] gives [E, K, N], group e = x[:, lo:hi] @ y[lo:hi].
// S = 8, E = 2: C = 2. Each chunk zeroes the rows outside its range in both operands
// and adds its [3, 2] x [2, 5] product to its group's slot of an f32 buffer, which is
// rounded to bf16 once after the loop. The dense form masks the operands per group and
// multiplies [E, K, S] x [E, S, N] with E as a batch dimension.
// CHECK-LABEL: sym_name = "weight_gradient"
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.if"
// CHECK: [[COLS:%[0-9]+]] = "stablehlo.dynamic_slice"({{%arg[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}) {slice_sizes = array<i64: 3, 2>} : (tensor<3x8xbf16>
// CHECK: [[XM:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, [[COLS]], {{%[0-9]+}}) : (tensor<3x2xi1>
// CHECK: [[ROWS:%[0-9]+]] = "stablehlo.dynamic_slice"({{%arg[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}) {slice_sizes = array<i64: 2, 5>} : (tensor<8x5xbf16>
// CHECK: [[YM:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, [[ROWS]], {{%[0-9]+}}) : (tensor<2x5xi1>
// CHECK: [[P:%[0-9]+]] = "stablehlo.dot_general"([[XM]], [[YM]])
// CHECK-SAME: (tensor<3x2xbf16>, tensor<2x5xbf16>) -> tensor<3x5xf32>
// CHECK: [[SLOT:%[0-9]+]] = "stablehlo.dynamic_slice"([[OUT:%arg[0-9]+]], [[G:%[0-9]+]], {{%[0-9]+}}, {{%[0-9]+}}) {slice_sizes = array<i64: 1, 3, 5>} : (tensor<2x3x5xf32>
// CHECK: [[PR:%[0-9]+]] = "stablehlo.reshape"([[P]]) : (tensor<3x5xf32>) -> tensor<1x3x5xf32>
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.add"([[SLOT]], [[PR]])
// CHECK: "stablehlo.dynamic_update_slice"([[OUT]], [[SUM]], [[G]],
// CHECK: [[SUMS:%[0-9]+]]:8 = "stablehlo.while"
// CHECK: [[R:%[0-9]+]] = "stablehlo.convert"([[SUMS]]#1) : (tensor<2x3x5xf32>) -> tensor<2x3x5xbf16>
// CHECK-NEXT: "func.return"([[R]])

// DENSE-LABEL: sym_name = "weight_gradient"
// DENSE: "stablehlo.broadcast_in_dim"(%arg{{[0-9]+}}) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<3x8xbf16>) -> tensor<2x3x8xbf16>
// DENSE: [[XM:%[0-9]+]] = "stablehlo.select"
// DENSE-SAME: -> tensor<2x3x8xbf16>
// DENSE: [[YM:%[0-9]+]] = "stablehlo.select"
// DENSE-SAME: -> tensor<2x8x5xbf16>
// DENSE: [[P:%[0-9]+]] = "stablehlo.dot_general"([[XM]], [[YM]])
// DENSE-SAME: lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]
// DENSE-SAME: -> tensor<2x3x5xf32>
// DENSE: "stablehlo.convert"([[P]]) : (tensor<2x3x5xf32>) -> tensor<2x3x5xbf16>
"func.func"() <{function_type = (tensor<3x8xbf16>, tensor<8x5xbf16>, tensor<2xi32>) -> tensor<2x3x5xbf16>, sym_name = "weight_gradient"}> ({
^bb0(%x: tensor<3x8xbf16>, %y: tensor<8x5xbf16>, %o: tensor<2xi32>):
  %0 = "aten._grouped_mm.default"(%x, %y, %o) {operand_names = ["self", "mat2", "offs"]} : (tensor<3x8xbf16>, tensor<8x5xbf16>, tensor<2xi32>) -> tensor<2x3x5xbf16> loc("grouped_mm_weight_gradient")
  "func.return"(%0) : (tensor<2x3x5xbf16>) -> ()
}) : () -> ()
