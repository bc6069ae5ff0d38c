// Guards float floor division (elementwise.rs, div with rounding_mode = "floor"): PyTorch's div_floor_floating.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// PyTorch (c10 div_floor_floating):
//   if b == 0: return a / b
//   mod = fmod(a, b); div = (a - mod) / b
//   if mod != 0 and (b < 0) != (mod < 0): div -= 1
//   if div != 0: fl = floor(div); if div - fl > 0.5: fl += 1; return fl
//   else: return copysign(0, a / b)
// e.g. 1.0 // 0.1 = 9.0 (floor(1.0 / 0.1) would be 10.0). stablehlo.remainder is fmod
// (the sign of the dividend); copysign(0, a / b) is 0 * sign(a / b).
// CHECK-LABEL: sym_name = "div_floor_float"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xf32>, [[B:%arg[0-9]+]]: tensor<4xf32>)
// CHECK-NEXT: [[Q:%[0-9]+]] = "stablehlo.divide"([[A]], [[B]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ONE:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[MOD:%[0-9]+]] = "stablehlo.remainder"([[A]], [[B]])
// CHECK-NEXT: [[AMM:%[0-9]+]] = "stablehlo.subtract"([[A]], [[MOD]])
// CHECK-NEXT: [[DIV:%[0-9]+]] = "stablehlo.divide"([[AMM]], [[B]])
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[Z2:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[MNZ:%[0-9]+]] = "stablehlo.compare"([[MOD]], [[Z2]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: [[MNEG:%[0-9]+]] = "stablehlo.compare"([[MOD]], [[Z2]])
// CHECK-SAME: comparison_direction LT
// CHECK-NEXT: [[BNEG:%[0-9]+]] = "stablehlo.compare"([[B]], [[Z2]])
// CHECK-SAME: comparison_direction LT
// CHECK-NEXT: [[DIFF:%[0-9]+]] = "stablehlo.compare"([[MNEG]], [[BNEG]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: [[FIX:%[0-9]+]] = "stablehlo.and"([[MNZ]], [[DIFF]])
// CHECK-NEXT: [[DM1:%[0-9]+]] = "stablehlo.subtract"([[DIV]], [[ONE]])
// CHECK-NEXT: [[DIV2:%[0-9]+]] = "stablehlo.select"([[FIX]], [[DM1]], [[DIV]])
// CHECK-NEXT: [[FL:%[0-9]+]] = "stablehlo.floor"([[DIV2]])
// CHECK-NEXT: [[FRAC:%[0-9]+]] = "stablehlo.subtract"([[DIV2]], [[FL]])
// CHECK-NEXT: "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT: [[HALF:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[UP:%[0-9]+]] = "stablehlo.compare"([[FRAC]], [[HALF]])
// CHECK-SAME: comparison_direction GT
// CHECK-NEXT: [[FLP1:%[0-9]+]] = "stablehlo.add"([[FL]], [[ONE]])
// CHECK-NEXT: [[FL2:%[0-9]+]] = "stablehlo.select"([[UP]], [[FLP1]], [[FL]])
// CHECK-NEXT: [[SGN:%[0-9]+]] = "stablehlo.sign"([[Q]])
// CHECK-NEXT: [[SZERO:%[0-9]+]] = "stablehlo.multiply"([[ZERO]], [[SGN]])
// CHECK-NEXT: [[DZ:%[0-9]+]] = "stablehlo.compare"([[DIV2]], [[ZERO]])
// CHECK-SAME: comparison_direction EQ
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.select"([[DZ]], [[SZERO]], [[FL2]])
// CHECK-NEXT: [[BZ:%[0-9]+]] = "stablehlo.compare"([[B]], [[ZERO]])
// CHECK-SAME: comparison_direction EQ
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.select"([[BZ]], [[Q]], [[R]])
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "div_floor_float"}> ({
^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
  %0 = "aten.div.Tensor_mode"(%a, %b) {operand_names = ["self", "other"], rounding_mode = "floor"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("floordiv")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()

// f16 is computed in f32 (PyTorch's opmath) and rounded once at the end.
// CHECK-LABEL: sym_name = "div_floor_f16"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xf16>, [[B:%arg[0-9]+]]: tensor<4xf16>)
// CHECK-NEXT: [[AF:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT: [[BF:%[0-9]+]] = "stablehlo.convert"([[B]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT: "stablehlo.divide"([[AF]], [[BF]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: "stablehlo.remainder"([[AF]], [[BF]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: f16
// CHECK: [[BZ:%[0-9]+]] = "stablehlo.compare"([[BF]], {{%[0-9]+}}) {{.*}}comparison_direction EQ>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.select"([[BZ]], {{%[0-9]+}}, {{%[0-9]+}}) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.convert"([[R]]) : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>, sym_name = "div_floor_f16"}> ({
^bb0(%a: tensor<4xf16>, %b: tensor<4xf16>):
  %0 = "aten.div.Tensor_mode"(%a, %b) {operand_names = ["self", "other"], rounding_mode = "floor"} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16> loc("floordiv16")
  "func.return"(%0) : (tensor<4xf16>) -> ()
}) : () -> ()
