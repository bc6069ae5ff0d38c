// neuron-check (compiler/src/targets/neuron/check.rs): what Neuron devices cannot run,
// one diagnostic per node, all reported at once: dynamic (`?`) sizes, f64 arithmetic
// (an f64 argument that is not only converted), integer matmuls, ops outside Neuron's
// set (a custom call) and composites. A legalized program passes (neuron_legalize.mlir).
//
// RUN: not tpuc opt %s --pass-pipeline=neuron-check 2>&1 | FileCheck %s
// The op table of one generation (`tpuc compile --target trn2` runs this form):
// RUN: not tpuc opt %s --pass-pipeline='neuron-check{chip=trn2}' 2>&1 | FileCheck %s
// RUN: not tpuc opt %s --pass-pipeline='neuron-check{chip=trn9}' 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: pass `neuron-check`: unknown chip `trn9` (known: trn1, trn2, trn3, inf2)

// CHECK: error: 7 node(s) cannot run on Neuron devices:
// CHECK-NEXT: node `x` (argument 0): tensor<?x4xf32> has a dynamic size; Neuron devices run static shapes only
// CHECK-NEXT: node `y` (argument 1): tensor<4xf64> is f64, which Neuron devices do not compute
// CHECK-NEXT: node `neg` (stablehlo.negate): tensor<?x4xf32> has a dynamic size
// CHECK-NEXT: node `add_f64` (stablehlo.add): tensor<4xf64> is f64
// CHECK-NEXT: node `mm` (stablehlo.dot_general): an integer dot_general; Neuron's matmul engines multiply floats
// CHECK-NEXT: node `my_op` (stablehlo.custom_call): stablehlo.custom_call is not among the ops Neuron's XLA frontend takes
// CHECK-NEXT: node `gelu` (stablehlo.composite): a composite; the Neuron pipeline inlines composites, so none may remain
// CHECK-NOT: node

"func.func"() <{function_type = (tensor<?x4xf32>, tensor<4xf64>, tensor<2x3xi32>, tensor<3x4xi32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf64>, tensor<2x4xi32>, tensor<4xf32>, tensor<4xf32>), sym_name = "main"}> ({
^bb0(%dyn: tensor<?x4xf32> loc("x"), %x64: tensor<4xf64> loc("y"), %ai: tensor<2x3xi32> loc("a"), %bi: tensor<3x4xi32> loc("b"), %v: tensor<4xf32> loc("v")):
  %n = "stablehlo.negate"(%dyn) : (tensor<?x4xf32>) -> tensor<?x4xf32> loc("neg")
  %s = "stablehlo.add"(%x64, %x64) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64> loc("add_f64")
  %d = "stablehlo.dot_general"(%ai, %bi) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32> loc("mm")
  %cc = "stablehlo.custom_call"(%v) <{call_target_name = "my_kernel"}> : (tensor<4xf32>) -> tensor<4xf32> loc("my_op")
  %g = "stablehlo.composite"(%v) <{decomposition = @gelu_impl, name = "tpuc.gelu"}> : (tensor<4xf32>) -> tensor<4xf32> loc("gelu")
  "func.return"(%n, %s, %d, %cc, %g) : (tensor<?x4xf32>, tensor<4xf64>, tensor<2x4xi32>, tensor<4xf32>, tensor<4xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "gelu_impl", sym_visibility = "private"}> ({
^bb0(%a: tensor<4xf32>):
  %t = "stablehlo.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%t) : (tensor<4xf32>) -> ()
}) : () -> ()
