// KNOWN GAP (dialects/src/verify.rs): verify-stablehlo only checks result types of
// elementwise ops, convert, compare, select, reshape, transpose, broadcast_in_dim,
// slice, concatenate, dot_general, reduce and reverse. Wrong result types on
// convolution, pad, gather, reduce_window and iota (all emitted by tpuc) pass, although
// the inference rules exist (infer_convolution, infer_gather, infer_reduce_window in
// dialects/src/stablehlo.rs). Remove XFAIL once they are checked.
//
// XFAIL: *
// RUN: not tpuc opt %S/Inputs/verify_unchecked_result_types.mlir --pass-pipeline=verify-stablehlo 2>&1 | FileCheck %s

// CHECK: error: the emitted StableHLO does not verify:
// CHECK: loc("conv"): stablehlo.convolution:
// CHECK: loc("pad"): stablehlo.pad:
// CHECK: loc("gather"): stablehlo.gather:
// CHECK: loc("iota"): stablehlo.iota:
