// tpuc-mark-state-aliases (compiler/src/passes/mark_state_aliases.rs): each
// `input:result` pair puts `tf.aliasing_output = result` on the state input's argument
// of @main, through stablehlo-merge-dots' `tpuc.arg_origins` when packing renumbered
// the arguments; other arguments get empty dictionaries. Without pairs it does nothing;
// a pair naming no argument is an error.
//
// RUN: tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-mark-state-aliases{inputs=1:1}' | FileCheck %s --check-prefix=PLAIN
// RUN: tpuc opt %S/Inputs/state_aliases_packed.mlir --pass-pipeline='tpuc-mark-state-aliases{inputs=2:1}' | FileCheck %s --check-prefix=PACKED
// RUN: tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline=tpuc-mark-state-aliases | FileCheck %s --check-prefix=NONE
// RUN: not tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-mark-state-aliases{inputs=7:1}' 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tpuc opt %S/Inputs/state_aliases.mlir --pass-pipeline='tpuc-mark-state-aliases{inputs=1}' 2>&1 | FileCheck %s --check-prefix=BAD

// PLAIN: arg_attrs = [{}, {tf.aliasing_output = 1 : i32}, {}]

// Graph input 2 (the cache) is argument 1 once inputs 0 and 1 are packed into one.
// PACKED: arg_attrs = [{}, {tf.aliasing_output = 1 : i32}, {}]

// NONE-NOT: tf.aliasing_output

// MISSING: error: internal compiler error: state input 7 is not an argument of @main
// BAD: error: pass `tpuc-mark-state-aliases`: inputs: `1` is not `input:result`
