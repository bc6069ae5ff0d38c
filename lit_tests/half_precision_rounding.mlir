// Half-precision arithmetic (dialects/src/stablehlo.rs, `rounds_result`): every
// rounding elementwise op on f16/bf16 is emitted as the f32 op between two converts,
// one rounding per op, so no backend can fuse a half multiply and add into one
// rounding or keep a chain in half (XLA's CPU backend did both on hosts with
// AVX512-FP16, and grid_sampler_2d f16 mismatched PyTorch there). PyTorch's CPU
// grid_sampler rounds to the input dtype after every op, which this reproduces.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// The grid's x unnormalizes as ((x + 1) * 4 - 1) / 2, each step rounded to f16.
// CHECK-LABEL: sym_name = "grid_sampler_f16"
// CHECK: [[GX:%[0-9]+]] = "stablehlo.reshape"({{%[0-9]+}}) : (tensor<1x1x2x1xf16>) -> tensor<1x1x2xf16>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<1x1x2xf16>}
// CHECK: [[GXF:%[0-9]+]] = "stablehlo.convert"([[GX]]) : (tensor<1x1x2xf16>) -> tensor<1x1x2xf32>
// CHECK: [[ONEF:%[0-9]+]] = "stablehlo.convert"([[ONE]]) : (tensor<1x1x2xf16>) -> tensor<1x1x2xf32>
// CHECK: [[A:%[0-9]+]] = "stablehlo.add"([[GXF]], [[ONEF]]) : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
// CHECK: [[AH:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf16>
// CHECK: [[AF:%[0-9]+]] = "stablehlo.convert"([[AH]]) : (tensor<1x1x2xf16>) -> tensor<1x1x2xf32>
// CHECK: [[M:%[0-9]+]] = "stablehlo.multiply"([[AF]], {{%[0-9]+}}) : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
// CHECK: "stablehlo.convert"([[M]]) : (tensor<1x1x2xf32>) -> tensor<1x1x2xf16>
// No rounding op is left in f16 anywhere in the function.
// CHECK-NOT: "stablehlo.{{(add|subtract|multiply|divide)}}"{{.*}}-> tensor<{{[0-9x]*}}f16>
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<1x2x3x4xf16>, tensor<1x1x2x2xf16>) -> tensor<1x2x1x2xf16>, sym_name = "grid_sampler_f16"}> ({
^bb0(%x: tensor<1x2x3x4xf16>, %g: tensor<1x1x2x2xf16>):
  %0 = "aten.grid_sampler_2d.default"(%x, %g) {align_corners = false, interpolation_mode = 0 : i64, operand_names = ["input", "grid"], padding_mode = 0 : i64} : (tensor<1x2x3x4xf16>, tensor<1x1x2x2xf16>) -> tensor<1x2x1x2xf16> loc("grid_f16")
  "func.return"(%0) : (tensor<1x2x1x2xf16>) -> ()
}) : () -> ()

// bf16 remainder: the remainder itself is exact and stays in bf16; the sign
// correction (r + b where the signs differ) is an add, computed in f32 and rounded.
// CHECK-LABEL: sym_name = "remainder_bf16"
// CHECK: "stablehlo.remainder"({{%arg[0-9]+}}, {{%arg[0-9]+}}) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
// CHECK: "stablehlo.add"({{%[0-9]+}}, {{%[0-9]+}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: "stablehlo.add"{{.*}}-> tensor<4xbf16>
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>, sym_name = "remainder_bf16"}> ({
^bb0(%a: tensor<4xbf16>, %b: tensor<4xbf16>):
  %0 = "aten.remainder.Tensor"(%a, %b) {operand_names = ["self", "other"]} : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16> loc("rem_bf16")
  "func.return"(%0) : (tensor<4xbf16>) -> ()
}) : () -> ()
