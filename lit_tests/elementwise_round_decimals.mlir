// Guards aten.round.decimals (elementwise.rs): scale by 10^decimals, round half to even, scale back.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// decimals = 2: 1.2345 -> round(123.45) / 100 = 1.23.
// CHECK-LABEL: sym_name = "round_decimals"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: "stablehlo.constant"() {value = dense<1.000000e+02> : tensor<f32>}
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.multiply"([[X]], [[S]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.round_nearest_even"([[M]])
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.divide"([[R]], [[S]])
// CHECK-NEXT: "func.return"([[D]])
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "round_decimals"}> ({
^bb0(%a: tensor<4xf32>):
  %0 = "aten.round.decimals"(%a) {decimals = 2 : i64, operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("round")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()

// decimals = -1: 1234.5 -> round(123.45) * 10 = 1230.
// CHECK-LABEL: sym_name = "round_negative_decimals"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: "stablehlo.constant"() {value = dense<1.000000e+01> : tensor<f32>}
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.divide"([[X]], [[S]])
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.round_nearest_even"([[D]])
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.multiply"([[R]], [[S]])
// CHECK-NEXT: "func.return"([[M]])
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "round_negative_decimals"}> ({
^bb0(%a: tensor<4xf32>):
  %0 = "aten.round.decimals"(%a) {decimals = -1 : i64, operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("round_neg")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()

// decimals = 0 is a plain round half to even.
// CHECK-LABEL: sym_name = "round_zero_decimals"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.round_nearest_even"([[X]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "round_zero_decimals"}> ({
^bb0(%a: tensor<4xf32>):
  %0 = "aten.round.decimals"(%a) {decimals = 0 : i64, operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("round_zero")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()

// bf16 is scaled, rounded and divided in f32, then rounded to bf16 once.
// CHECK-LABEL: sym_name = "round_decimals_bf16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xbf16>)
// CHECK-NEXT: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<1.000000e+03> : tensor<f32>}
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.multiply"([[XF]], [[S]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.round_nearest_even"([[M]])
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.divide"([[R]], [[S]])
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.convert"([[D]]) : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<4xbf16>) -> tensor<4xbf16>, sym_name = "round_decimals_bf16"}> ({
^bb0(%a: tensor<4xbf16>):
  %0 = "aten.round.decimals"(%a) {decimals = 3 : i64, operand_names = ["self"]} : (tensor<4xbf16>) -> tensor<4xbf16> loc("round_bf16")
  "func.return"(%0) : (tensor<4xbf16>) -> ()
}) : () -> ()
