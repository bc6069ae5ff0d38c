// The `tpuc opt` driver the other tests rely on (cli/src/main.rs, compiler/src/driver.rs
// run_opt): an empty pipeline round-trips the module, `builtin.module(...)` wrapping is
// accepted, --debug-locations keeps node names, stdin is read with `-`, unknown pass
// names list the known ones, --list-passes.
//
// RUN: tpuc opt %s | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: tpuc opt %s --pass-pipeline='builtin.module(lower-aten-to-stablehlo,verify-stablehlo)' --debug-locations | FileCheck %s --check-prefix=LOCS
// RUN: cat %s | tpuc opt - --pass-pipeline=lower-aten-to-stablehlo | FileCheck %s --check-prefix=STDIN
// RUN: not tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,nope 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: tpuc opt --list-passes %s | FileCheck %s --check-prefix=LIST
// RUN: not tpuc opt %s --pass-pipeline='stablehlo-dce{x=1}' 2>&1 | FileCheck %s --check-prefix=NOOPTIONS
// RUN: not tpuc opt %s --pass-pipeline='stablehlo-merge-dots{packable=0 size=2}' 2>&1 | FileCheck %s --check-prefix=BADOPTION
// RUN: not tpuc opt %s --pass-pipeline='stablehlo-merge-dots{packable=a}' 2>&1 | FileCheck %s --check-prefix=BADVALUE
// RUN: not tpuc opt %s --pass-pipeline='stablehlo-dce{x=1' 2>&1 | FileCheck %s --check-prefix=SYNTAX

// ROUNDTRIP: "builtin.module"() ({
// ROUNDTRIP: sym_name = "main"
// ROUNDTRIP: "aten.relu.default"(%arg0) {operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32>
// ROUNDTRIP-NOT: stablehlo

// Every op emitted for a node carries the node's location.
// LOCS: ^bb0(%arg0: tensor<4xf32> loc("x")):
// LOCS: "stablehlo.select"({{%[0-9]+}}, {{%[0-9]+}}, %arg0) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc([[RELU:#loc[0-9]+]])
// LOCS: [[RELU]] = loc("relu"({{#loc[0-9]+}}))

// STDIN: "stablehlo.select"
// STDIN-NOT: aten.

// UNKNOWN: error: unknown pass `nope`; known passes: aten-fold-repeat-kv, aten-outline-composites, lower-aten-to-stablehlo, matmul-precision-default, matmul-precision-high, matmul-precision-highest, tpuc-optimizer, stablehlo-fold-constants, stablehlo-simplify, stablehlo-gather-to-slice, stablehlo-fold-transpose, stablehlo-outline-composites, stablehlo-fold-batch-reshape, stablehlo-fold-repeated-dot-operand, stablehlo-merge-dots, stablehlo-dce, stablehlo-cse, tpuc-seed-sharding, stablehlo-propagate-sharding, tpuc-expert-parallel, neuron-legalize, neuron-legalize-keep-int64, neuron-auto-cast-bf16, neuron-auto-cast-fp16, neuron-check, tpu-grouped-mm-to-ragged-dot, verify-stablehlo, tpuc-mark-state-aliases, tpuc-take-records

// Pass options (`name{key=value ...}`): a pass without options refuses any, unknown
// keys and bad values name the pass, and an unclosed brace is a syntax error.
// NOOPTIONS: error: pass `stablehlo-dce`: takes no options (got `x`)
// BADOPTION: error: pass `stablehlo-merge-dots`: unknown option `size` (known: packable)
// BADVALUE: error: pass `stablehlo-merge-dots`: option `packable`: `a` is not an index
// SYNTAX: error: cannot parse the pass pipeline `stablehlo-dce{x=1`: `{` without `}` after `stablehlo-dce`

// LIST: aten-outline-composites
// LIST-NEXT: lower-aten-to-stablehlo
// LIST-NEXT: matmul-precision-default
// LIST-NEXT: matmul-precision-high
// LIST-NEXT: matmul-precision-highest
// LIST-NEXT: tpuc-optimizer
// LIST-NEXT: stablehlo-fold-constants
// LIST-NEXT: stablehlo-simplify
// LIST-NEXT: stablehlo-gather-to-slice
// LIST-NEXT: stablehlo-fold-transpose
// LIST-NEXT: stablehlo-outline-composites
// LIST-NEXT: stablehlo-fold-batch-reshape
// LIST-NEXT: stablehlo-fold-repeated-dot-operand
// LIST-NEXT: stablehlo-merge-dots
// LIST-NEXT: stablehlo-dce
// LIST-NEXT: stablehlo-cse
// LIST-NEXT: tpuc-seed-sharding
// LIST-NEXT: stablehlo-propagate-sharding
// LIST-NEXT: tpuc-expert-parallel
// LIST-NEXT: neuron-legalize
// LIST-NEXT: neuron-legalize-keep-int64
// LIST-NEXT: neuron-auto-cast-bf16
// LIST-NEXT: neuron-auto-cast-fp16
// LIST-NEXT: neuron-check
// LIST-NEXT: tpu-grouped-mm-to-ragged-dot
// LIST-NEXT: verify-stablehlo
// LIST-NEXT: tpuc-mark-state-aliases
// LIST-NEXT: tpuc-take-records

"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<4xf32> loc("x")):
  %0 = "aten.relu.default"(%a) {operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("relu"("model.py":3:0))
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
