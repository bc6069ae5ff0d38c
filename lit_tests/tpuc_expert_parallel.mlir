// tpuc-expert-parallel (compiler/src/passes/expert_parallel.rs): grouped-matmul
// composites whose weight is split on its expert dimension become a GSPMD manual
// computation: x, the local weight shard, the offsets and an iota of the expert shards
// go in; the body moves the rows of the device's experts to the top, runs the local
// grouped matmul (a composite whose decomposition is the routed loop) and puts back the
// rows whose owner is a local expert; the [shards, S, N] partial results are summed outside. A weight left
// whole keeps its composite and dense decomposition.
//
// RUN: tpuc opt %S/Inputs/expert_parallel.mlir --pass-pipeline='aten-outline-composites,lower-aten-to-stablehlo{grouped-mm=dense},tpuc-seed-sharding{mesh="ep=2,tp=2" format=gspmd args="1=[ep, -, -];2=[ep, tp, -]"},stablehlo-propagate-sharding,tpuc-expert-parallel' | FileCheck %s
// 256 rows (over 128): the local grouped matmul is the routed loop.
// RUN: tpuc opt %S/Inputs/expert_parallel_rows.mlir --pass-pipeline='aten-outline-composites,lower-aten-to-stablehlo{grouped-mm=dense},tpuc-seed-sharding{mesh=ep=4 format=shardy args="1=[ep, -, -]"},stablehlo-propagate-sharding,tpuc-expert-parallel' | FileCheck %s --check-prefix=ROWS
// Without a mesh the pass does nothing.
// RUN: tpuc opt %S/Inputs/expert_parallel.mlir --pass-pipeline='aten-outline-composites,lower-aten-to-stablehlo{grouped-mm=dense},tpuc-expert-parallel' | FileCheck %s --check-prefix=NOMESH

// The weight split on ep only: [4, 4, 6] -> [2, 4, 6] per device; the expert-shard
// index is an iota [2] split on ep; the result [2, 8, 6] split on ep (replicated on tp)
// is summed over its first dimension.
// CHECK-LABEL: sym_name = "main"
// CHECK: [[I:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2xi32>
// CHECK: "stablehlo.custom_call"(%{{.*}}) {call_target_name = "Sharding", mhlo.sharding = "{replicated}"} : (tensor<8x4xbf16>)
// CHECK: [[X:%[0-9]+]] = "stablehlo.custom_call"(%{{.*}}) {call_target_name = "SPMDFullToShardShape", mhlo.sharding = "{manual}"} : (tensor<8x4xbf16>) -> tensor<8x4xbf16>
// CHECK: "stablehlo.custom_call"(%{{.*}}) {call_target_name = "Sharding", mhlo.sharding = "{devices=[2,1,1,2]0,1,2,3 last_tile_dim_replicate}"} : (tensor<4x4x6xbf16>)
// CHECK: [[W:%[0-9]+]] = "stablehlo.custom_call"(%{{.*}}) {call_target_name = "SPMDFullToShardShape", mhlo.sharding = "{manual}"} : (tensor<4x4x6xbf16>) -> tensor<2x4x6xbf16>
// CHECK: [[O:%[0-9]+]] = "stablehlo.custom_call"(%{{.*}}) {call_target_name = "SPMDFullToShardShape", mhlo.sharding = "{manual}"} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK: "stablehlo.custom_call"([[I]]) {call_target_name = "Sharding", mhlo.sharding = "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}"}
// CHECK: [[N:%[0-9]+]] = "stablehlo.custom_call"(%{{.*}}) {call_target_name = "SPMDFullToShardShape", mhlo.sharding = "{manual}"} : (tensor<2xi32>) -> tensor<1xi32>
// CHECK: [[B:%[0-9]+]] = "func.call"([[X]], [[W]], [[O]], [[N]]) <{callee = @tpuc.expert_parallel.body.impl_0}> : (tensor<8x4xbf16>, tensor<2x4x6xbf16>, tensor<4xi32>, tensor<1xi32>) -> tensor<1x8x6xbf16>
// CHECK: [[M:%[0-9]+]] = "stablehlo.custom_call"([[B]]) {call_target_name = "Sharding", mhlo.sharding = "{manual}"}
// CHECK: [[P:%[0-9]+]] = "stablehlo.custom_call"([[M]]) {call_target_name = "SPMDShardToFullShape", mhlo.sharding = "{devices=[2,1,1,2]0,1,2,3 last_tile_dim_replicate}"} : (tensor<1x8x6xbf16>) -> tensor<2x8x6xbf16>
// CHECK: "stablehlo.reduce"([[P]], %{{.*}})
// CHECK: dimensions = array<i64: 0>
// The weight seen through a transpose of an argument split [ep, tp, -]: the argument
// enters as stored ([4, 6, 4] -> [2, 3, 4] per device; the body transposes its shard);
// the weight's N dimension is split on tp, so each device computes [8, 3] and the
// partial result is split on ep then tp. The transpose in @main is gone.
// CHECK-NOT: "stablehlo.transpose"
// CHECK: "stablehlo.custom_call"(%{{.*}}) {call_target_name = "SPMDFullToShardShape", mhlo.sharding = "{manual}"} : (tensor<4x6x4xbf16>) -> tensor<2x3x4xbf16>
// CHECK: "func.call"({{.*}}) <{callee = @tpuc.expert_parallel.body.impl_1}> : (tensor<8x4xbf16>, tensor<2x3x4xbf16>, tensor<4xi32>, tensor<1xi32>) -> tensor<1x8x3xbf16>
// CHECK: call_target_name = "SPMDShardToFullShape", mhlo.sharding = "{devices=[2,1,2]0,1,2,3}"} : (tensor<1x8x3xbf16>) -> tensor<2x8x6xbf16>
// The replicated weight keeps its composite and the dense decomposition.
// CHECK: "stablehlo.composite"({{.*}}) {{{.*}}decomposition = @transformers.grouped_mm_fallback.default.impl_0, name = "transformers.grouped_mm_fallback.default"
// CHECK: sym_name = "transformers.grouped_mm_fallback.default.impl_0"
// The local grouped matmul of 8 rows (at most 128): every row times each local expert
// ([8, 2, 6]), then a select; no loop.
// CHECK: sym_name = "tpuc.expert_parallel.grouped_mm.impl_0"
// CHECK-NOT: "stablehlo.while"
// CHECK: "stablehlo.dot_general"
// CHECK-SAME: -> tensor<8x2x6xf32>
// CHECK-NOT: "stablehlo.while"
// The body: the device's first expert at index * 2; its window starts at the lowest
// slice bound of its groups (the 3 bounds around its 2 groups, their minimum: the
// first group's start for monotone offsets); the rows from there on (x over zeros),
// the local offsets from that row.
// CHECK: sym_name = "tpuc.expert_parallel.body.impl_0"
// CHECK: ^bb0([[BX:%arg[0-9]+]]: tensor<8x4xbf16>, [[BW:%arg[0-9]+]]: tensor<2x4x6xbf16>, [[BO:%arg[0-9]+]]: tensor<4xi32>, [[BI:%arg[0-9]+]]: tensor<1xi32>)
// CHECK: "stablehlo.convert"([[BI]]) : (tensor<1xi32>) -> tensor<1xi64>
// CHECK: [[AROUND:%[0-9]+]] = "stablehlo.dynamic_slice"({{.*}}) {slice_sizes = array<i64: 3>}
// CHECK: "stablehlo.reduce"([[AROUND]]
// CHECK: "stablehlo.minimum"
// CHECK: [[PAD:%[0-9]+]] = "stablehlo.concatenate"([[BX]], %{{.*}}) {dimension = 0 : i64} : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<16x4xbf16>
// CHECK: [[LX:%[0-9]+]] = "stablehlo.dynamic_slice"([[PAD]], {{.*}}) {slice_sizes = array<i64: 8, 4>}
// CHECK: [[Y:%[0-9]+]] = "stablehlo.composite"([[LX]], [[BW]], %{{.*}}) {{{.*}}decomposition = @tpuc.expert_parallel.grouped_mm.impl_0, name = "transformers.grouped_mm_fallback.default"
// The rows put back, and only those whose owner (the last group covering them, an
// [8, 4] compare and max-reduce) is one of the device's experts kept.
// CHECK: "stablehlo.concatenate"(%{{.*}}, [[Y]]) {dimension = 0 : i64} : (tensor<8x6xbf16>, tensor<8x6xbf16>) -> tensor<16x6xbf16>
// CHECK: [[BACK:%[0-9]+]] = "stablehlo.dynamic_slice"({{.*}}) {slice_sizes = array<i64: 8, 6>}
// CHECK: [[MINE:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{.*}}) {broadcast_dimensions = array<i64: 0>} : (tensor<8xi1>) -> tensor<8x6xi1>
// CHECK: "stablehlo.select"([[MINE]], [[BACK]], {{.*}})
// CHECK: "stablehlo.reshape"({{.*}}) : (tensor<8x6xbf16>) -> tensor<1x8x6xbf16>
// CHECK: sym_name = "tpuc.expert_parallel.body.impl_1"
// CHECK: "stablehlo.transpose"(%arg{{[0-9]+}}) {permutation = array<i64: 0, 2, 1>} : (tensor<2x3x4xbf16>) -> tensor<2x4x3xbf16>

// ROWS: call_target_name = "SPMDFullToShardShape", mhlo.sharding = "{manual}"} : (tensor<4x4x6xbf16>) -> tensor<1x4x6xbf16>
// ROWS: call_target_name = "SPMDShardToFullShape", mhlo.sharding = "{devices=[4,1,1]0,1,2,3}"} : (tensor<1x256x6xbf16>) -> tensor<4x256x6xbf16>
// ROWS: sym_name = "tpuc.expert_parallel.grouped_mm.impl_0"
// ROWS: "stablehlo.while"
// ROWS: "stablehlo.if"
// ROWS: "stablehlo.while"
// ROWS: sym_name = "tpuc.expert_parallel.body.impl_0"

// NOMESH-NOT: SPMDFullToShardShape
// NOMESH-NOT: tpuc.expert_parallel
