// stablehlo-propagate-sharding (compiler/src/passes/propagate_sharding.rs): argument
// shardings (`tpuc.sharding`, seeded by `tpuc compile --shard`) carried forward to
// @main's results, written as GSPMD strings or Shardy's round-trip attributes. Without
// `tpuc.mesh` the pass must not fire.
//
// RUN: tpuc opt %S/Inputs/sharding_gspmd.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=GSPMD
// RUN: tpuc opt %S/Inputs/sharding_shardy.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=SHARDY
// RUN: tpuc opt %S/Inputs/sharding_rules.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=RULES
// RUN: tpuc opt %S/Inputs/sharding_more_rules.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=MORE
// RUN: tpuc opt %S/Inputs/sharding_none.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=NONE
// RUN: tpuc opt %S/Inputs/sharding_megatron.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=MEGATRON
// RUN: tpuc opt %S/Inputs/sharding_router.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=ROUTER
// RUN: tpuc opt %S/Inputs/sharding_sort_update.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=SORT
// RUN: tpuc opt %S/Inputs/sharding_megatron_fsdp.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=FSDP
// RUN: tpuc opt %S/Inputs/sharding_state.mlir --pass-pipeline=stablehlo-propagate-sharding | FileCheck %s --check-prefix=STATE
// RUN: not tpuc opt %S/Inputs/sharding_bad.mlir --pass-pipeline=stablehlo-propagate-sharding 2>&1 | FileCheck %s --check-prefix=BAD

// x [dp, -] through a Linear (dot_general with a replicated weight, broadcast bias add)
// and an elementwise op: the result is [dp, -]; weights stay replicated.
// GSPMD: arg_attrs = [{mhlo.sharding = "{replicated}", tpuc.sharding = "[-, -]"}, {mhlo.sharding = "{replicated}", tpuc.sharding = "[-]"}, {mhlo.sharding = "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", tpuc.sharding = "[dp, -]"}]
// GSPMD-SAME: res_attrs = [{mhlo.sharding = "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", tpuc.sharding = "[dp, -]"}]
// GSPMD: mhlo.num_partitions = 4 : i32
// GSPMD-NOT: xla.sdy

// The same program in Shardy's form: the mesh in the module's frontend attributes,
// each sharding as #sdy.sharding text (with the GSPMD string beside it, which this
// XLA needs to keep a result's sharding).
// SHARDY: {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22dp\22}, {}]>"}, mhlo.sharding = "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", tpuc.sharding = "[dp, -]"}]
// SHARDY-SAME: res_attrs = [{mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22dp\22}, {}]>"}
// SHARDY: mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22dp\22=2, \22tp\22=2]>}"}, mhlo.num_partitions = 4 : i32

// One result per rule: transpose moves the split dimension; reshape keeps a split
// major dimension of a merge and drops a split minor one; reduce drops the reduced
// dimension; a contracting split dimension is summed (not split in the result);
// concatenate drops the concatenated dimension; slice drops a sliced one; for two
// operands split on different axes of one dimension the first operand wins; an op
// without a rule (a custom call) leaves its result to XLA (written replicated).
// RULES: res_attrs = [
// RULES-SAME: tpuc.sharding = "[-, dp]"}
// RULES-SAME: tpuc.sharding = "[dp]"}
// RULES-SAME: tpuc.sharding = "[-]"}
// RULES-SAME: tpuc.sharding = "[tp]"}
// RULES-SAME: tpuc.sharding = "[dp, -]"}
// RULES-SAME: tpuc.sharding = "[-, -]"}
// RULES-SAME: tpuc.sharding = "[-, -]"}
// RULES-SAME: tpuc.sharding = "[dp, -]"}
// RULES-SAME: tpuc.sharding = "[-, -]"}]

// More rules, one result each: a convolution takes the batch from its input and the
// output features from its kernel; a pooling window keeps the dimensions it does not
// span; an embedding gather takes its batch from the indices and drops the table's
// vocabulary split (XLA combines the partial lookups) but keeps a feature split; when
// the indices and the table's features ask for the same axis, the batch dimensions
// (first in the result) keep it; a scatter keeps the operand's split except on the
// dimension its indices address; a norm composite keeps the leading dimensions and
// makes the normalized one whole; broadcast_in_dim moves the split to the mapped
// dimension.
// MORE: res_attrs = [
// MORE-SAME: tpuc.sharding = "[dp, tp, -, -]"}
// MORE-SAME: tpuc.sharding = "[dp, -, -, -]"}
// MORE-SAME: tpuc.sharding = "[dp, -, -]"}
// MORE-SAME: tpuc.sharding = "[dp, -, tp]"}
// MORE-SAME: tpuc.sharding = "[dp, -, -]"}
// MORE-SAME: tpuc.sharding = "[-, tp]"}
// MORE-SAME: tpuc.sharding = "[dp, -, -]"}
// MORE-SAME: tpuc.sharding = "[-, tp]"}]

// Megatron (tpuc.megatron): weights decided at their first use. The first Linear
// sees whole features: column-parallel (W1 [16, 8] split on its outputs); the second
// sees them split: row-parallel (W2 split on its inputs; XLA sums; W2 reaches its dot
// through a transpose, as at -O0, and is split as the weight itself), its output whole;
// the third sees whole features again: column-parallel, output split; the input x,
// not a weight, stays whole.
// MEGATRON: arg_attrs = [{mhlo.sharding = "{devices=[2,1]0,1}", tpuc.sharding = "[tp, -]"}, {mhlo.sharding = "{devices=[1,2]0,1}", tpuc.sharding = "[-, tp]"}, {mhlo.sharding = "{devices=[2,1]0,1}", tpuc.sharding = "[tp, -]"}, {mhlo.sharding = "{replicated}", tpuc.sharding = "[-, -]"}]
// MEGATRON-SAME: res_attrs = [{mhlo.sharding = "{replicated}", tpuc.sharding = "[-, -]"}, {mhlo.sharding = "{devices=[1,2]0,1}", tpuc.sharding = "[-, tp]"}]

// No mesh: nothing is added.
// NONE-NOT: sharding
// NONE-NOT: num_partitions

// A seed the mesh cannot hold: the argument, the dimension and the sizes named.
// BAD: error: sharding: argument 0: dimension 0 (size 3) cannot be split in 2 equal parts over dp

// State (`tpuc.state = RESULT`, a KV cache): an unseeded state argument is split like
// the first update written into it, seen through a transpose (index_copy along the
// sequence, a scatter on the transposed cache) or directly (dynamic_update_slice); the
// keys are [dp, tp, -, -], so both caches are. A seeded state argument keeps its seed,
// and the result holding each state's next value is declared with the argument's
// sharding (the last result would otherwise follow the split cache it adds).
// STATE: arg_attrs = [{mhlo.sharding = "{devices=[2,2,1,1]0,1,2,3}", tpuc.sharding = "[dp, tp, -, -]"}, {mhlo.sharding = "{devices=[2,2,1,1]0,1,2,3}", tpuc.sharding = "[dp, tp, -, -]"}, {mhlo.sharding = "{replicated}", tpuc.sharding = "[-, -, -, -]"}
// STATE-SAME: res_attrs = [{{.*}}tpuc.sharding = "[dp, tp, -, -]"}, {{.*}}tpuc.sharding = "[dp, tp, -, -]"}, {{.*}}tpuc.sharding = "[dp, tp, -, -]"}, {mhlo.sharding = "{replicated}", tpuc.sharding = "[-, -, -, -]"}]

// Megatron leaves a mixture-of-experts router whole (a Linear whose scores reach a
// top-k sort through no other matmul) and splits the Linear beside it.
// ROUTER: arg_attrs = [{mhlo.sharding = "{replicated}", tpuc.sharding = "[-, -]"}, {mhlo.sharding = "{devices=[2,1]0,1}", tpuc.sharding = "[tp, -]"}

// A sort (top-k routing) keeps its operands' split except along the sorted dimension,
// for every result (the scores and their indices); sorting along the split dimension
// leaves it whole. A dynamic_update_slice keeps the operand's split except where the
// update covers part of a dimension.
// SORT: res_attrs = [{{.*}}tpuc.sharding = "[dp, -]"}, {{.*}}tpuc.sharding = "[dp, -]"}, {{.*}}tpuc.sharding = "[-, -]"}, {{.*}}tpuc.sharding = "[dp, -]"}]

// fsdp with megatron: the parameters marked `tpuc.fsdp` are split on `fsdp` after
// megatron decided them, on the first dimension it left whole: the column-parallel
// weight becomes [tp, fsdp], the row-parallel one [fsdp, tp]; an unmarked weight (a
// rule decided it) keeps megatron's split alone.
// FSDP: arg_attrs = [{{.*}}tpuc.sharding = "[tp, fsdp]"}, {{.*}}tpuc.sharding = "[fsdp, tp]"}, {{.*}}tpuc.sharding = "[tp, -]"}, {{.*}}tpuc.sharding = "[-, -]"}]
