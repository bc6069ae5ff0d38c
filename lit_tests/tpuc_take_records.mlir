// tpuc-take-records (compiler/src/passes/take_records.rs): the last pass of a compile
// takes the records earlier passes leave for the driver off the module: merge-dots'
// `tpuc.arg_origins`, and with a mesh the sharding decisions (`tpuc.sharding`,
// `tpuc.weight`, `tpuc.mesh`, `tpuc.sharding_format`, `tpuc.megatron`), keeping the
// Shardy/GSPMD attributes XLA reads. Under tpuc opt what it takes is dropped.
//
// RUN: tpuc opt %S/Inputs/state_aliases_packed.mlir --pass-pipeline=tpuc-take-records | FileCheck %s --check-prefix=ORIGINS
// RUN: tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-seed-sharding{mesh="dp=2,tp=2" format=gspmd args="2=[dp]"},stablehlo-propagate-sharding,tpuc-take-records' | FileCheck %s --check-prefix=SHARDED
// RUN: not tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-take-records{all=1}' 2>&1 | FileCheck %s --check-prefix=OPTIONS

// ORIGINS-NOT: tpuc.arg_origins

// SHARDED: arg_attrs = [{mhlo.sharding = "{replicated}"}, {mhlo.sharding = "{replicated}"}, {mhlo.sharding = "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}"}]
// SHARDED-NOT: tpuc.
// SHARDED: mhlo.num_partitions = 4 : i32
// SHARDED-NOT: tpuc.

// OPTIONS: error: pass `tpuc-take-records`: takes no options (got `all`)
