// KNOWN BUG (elementwise.rs): aten.round.decimals ignores `decimals`; it lowers to a
// plain round_nearest_even, so torch.round(x, decimals=2) returns whole numbers
// (1.2345 -> 1.0 instead of 1.23). A correct lowering scales by 10^decimals, rounds
// half to even and divides back (PyTorch's formula). Remove XFAIL once fixed.
//
// XFAIL: *
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// CHECK-LABEL: sym_name = "round_decimals"
// CHECK: "stablehlo.constant"() {value = dense<1.000000e+02> : tensor<f32>}
// CHECK: "stablehlo.round_nearest_even"
// CHECK: "stablehlo.divide"
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "round_decimals"}> ({
^bb0(%a: tensor<4xf32>):
  %0 = "aten.round.decimals"(%a) {decimals = 2 : i64, operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("round")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
