// tpuc-seed-sharding (compiler/src/passes/seed_sharding.rs): the shardings `tpuc compile
// --mesh --shard` decided, carried in the pass's options, written onto the module for
// stablehlo-propagate-sharding: the mesh and format on the module, `tpuc.sharding` on
// seeded arguments, `tpuc.weight` and `tpuc.megatron` for Megatron's first-use choice,
// `tpuc.state` on state arguments (split like their first update).
// Seeded and propagated, the program is what `tpuc compile --print-pipeline` replays.
//
// RUN: tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh="dp=2,tp=2" format=gspmd args="2=[dp]"}' | FileCheck %s --check-prefix=SEED
// RUN: tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh=tp=2 format=shardy megatron=tp weights=0}' | FileCheck %s --check-prefix=MEGATRON
// RUN: tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh="dp=2,tp=2" format=gspmd args="2=[dp]"},stablehlo-propagate-sharding' | FileCheck %s --check-prefix=PROPAGATED
// RUN: tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh=tp=2 state=1:1}' | FileCheck %s --check-prefix=STATE
// RUN: not tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh=tp=2 state=1}' 2>&1 | FileCheck %s --check-prefix=BADSTATE
// RUN: not tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline=tpuc-seed-sharding 2>&1 | FileCheck %s --check-prefix=NOOPTIONS
// RUN: not tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh=dp=2 args="9=[dp]"}' 2>&1 | FileCheck %s --check-prefix=NOARG
// RUN: not tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh=dp=2 format=xla}' 2>&1 | FileCheck %s --check-prefix=FORMAT

// SEED: arg_attrs = [{}, {}, {tpuc.sharding = "[dp]"}]
// SEED: tpuc.mesh = "dp=2,tp=2", tpuc.sharding_format = "gspmd"

// MEGATRON: arg_attrs = [{tpuc.weight}, {}, {}]
// MEGATRON: tpuc.megatron = "tp", tpuc.mesh = "tp=2", tpuc.sharding_format = "shardy"

// x [dp] through the add and multiply: both results split on dp.
// PROPAGATED: res_attrs = [{mhlo.sharding = "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}", tpuc.sharding = "[dp]"}, {mhlo.sharding = "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}", tpuc.sharding = "[dp]"}]

// State argument 1 (the cache) and the result holding its next value.
// STATE: arg_attrs = [{}, {tpuc.state = 1 : i64}, {}]
// BADSTATE: error: pass `tpuc-seed-sharding`: state: `1` is not `argument:result`

// NOOPTIONS: error: pass `tpuc-seed-sharding`: needs its options (`tpuc compile --print-pipeline` writes them)
// NOARG: error: pass `tpuc-seed-sharding`: args: @main has no argument 9
// FORMAT: error: pass `tpuc-seed-sharding`: format `xla` (known: shardy, gspmd)
