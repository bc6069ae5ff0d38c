// matmul-precision-{default,high} (compiler/src/passes/matmul_precision.rs): f32
// dot_general and convolution get the precision the user chose; f64 keeps HIGHEST and
// half-precision contractions (which accumulate in f32) get none.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,matmul-precision-default | FileCheck %s --check-prefix=DEFAULT
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,matmul-precision-high | FileCheck %s --check-prefix=HIGH
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo | FileCheck %s --check-prefix=LOWERED

// LOWERED-LABEL: sym_name = "mm_f32"
// LOWERED: "stablehlo.dot_general"{{.*}}precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
// DEFAULT-LABEL: sym_name = "mm_f32"
// DEFAULT: "stablehlo.dot_general"{{.*}}precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
// HIGH-LABEL: sym_name = "mm_f32"
// HIGH: "stablehlo.dot_general"{{.*}}precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision HIGH>]
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>, sym_name = "mm_f32"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>):
  %0 = "aten.mm.default"(%a, %b) {operand_names = ["self", "mat2"]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("mm")
  "func.return"(%0) : (tensor<2x4xf32>) -> ()
}) : () -> ()

// DEFAULT-LABEL: sym_name = "mm_f64"
// DEFAULT: "stablehlo.dot_general"{{.*}}precision HIGHEST
// DEFAULT-LABEL: sym_name = "mm_bf16"
// DEFAULT-NOT: precision
// DEFAULT: "func.return"
"func.func"() <{function_type = (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>, sym_name = "mm_f64"}> ({
^bb0(%a: tensor<2x3xf64>, %b: tensor<3x4xf64>):
  %0 = "aten.mm.default"(%a, %b) {operand_names = ["self", "mat2"]} : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64> loc("mm64")
  "func.return"(%0) : (tensor<2x4xf64>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>, sym_name = "mm_bf16"}> ({
^bb0(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>):
  %0 = "aten.mm.default"(%a, %b) {operand_names = ["self", "mat2"]} : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16> loc("mmbf16")
  "func.return"(%0) : (tensor<2x4xbf16>) -> ()
}) : () -> ()

// Convolutions too.
// DEFAULT-LABEL: sym_name = "conv_f32"
// DEFAULT: "stablehlo.convolution"{{.*}}precision DEFAULT
"func.func"() <{function_type = (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>, sym_name = "conv_f32"}> ({
^bb0(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>):
  %0 = "aten.convolution.default"(%x, %w) {operand_names = ["input", "weight"], stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> loc("conv")
  "func.return"(%0) : (tensor<1x1x2x2xf32>) -> ()
}) : () -> ()
