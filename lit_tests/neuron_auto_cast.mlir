// neuron-auto-cast-bf16 / -fp16 (compiler/src/targets/neuron/auto_cast.rs): tpuc's
// `--auto-cast`, done in the program so the CPU check computes what the device will:
// the inputs of every f32 dot_general and convolution are converted to bf16 (fp16),
// the result stays f32. Half-precision and integer contractions are left alone.
//
// RUN: tpuc opt %s --pass-pipeline=neuron-auto-cast-bf16 | FileCheck %s
// RUN: tpuc opt %s --pass-pipeline=neuron-auto-cast-fp16 | FileCheck %s --check-prefix=FP16

// CHECK: ^bb0([[A:%arg0]]: tensor<2x3xf32>, [[B:%arg1]]: tensor<3x4xf32>, [[IMG:%arg2]]: tensor<1x1x4x4xf32>, [[K:%arg3]]: tensor<1x1x3x3xf32>, [[AH:%arg4]]: tensor<2x3xf16>, [[BH:%arg5]]: tensor<3x4xf16>, [[AI:%arg6]]: tensor<2x3xi32>, [[BI:%arg7]]: tensor<3x4xi32>)
// CHECK-NEXT: [[A16:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: [[B16:%[0-9]+]] = "stablehlo.convert"([[B]]) : (tensor<3x4xf32>) -> tensor<3x4xbf16>
// CHECK-NEXT: "stablehlo.dot_general"([[A16]], [[B16]]) {{.*}} : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xf32>
// CHECK-NEXT: [[I16:%[0-9]+]] = "stablehlo.convert"([[IMG]]) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xbf16>
// CHECK-NEXT: [[K16:%[0-9]+]] = "stablehlo.convert"([[K]]) : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xbf16>
// CHECK-NEXT: "stablehlo.convolution"([[I16]], [[K16]]) {{.*}} : (tensor<1x1x4x4xbf16>, tensor<1x1x3x3xbf16>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT: "stablehlo.dot_general"([[AH]], [[BH]]) {{.*}} : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16>
// CHECK-NEXT: "stablehlo.dot_general"([[AI]], [[BI]]) {{.*}} : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
// CHECK-NEXT: "func.return"

// FP16: "stablehlo.dot_general"{{.*}} : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf32>
// FP16: "stablehlo.convolution"{{.*}} : (tensor<1x1x4x4xf16>, tensor<1x1x3x3xf16>) -> tensor<1x1x2x2xf32>
// FP16: "stablehlo.dot_general"{{.*}} : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16>
// FP16-NOT: bf16

"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<2x3xf16>, tensor<3x4xf16>, tensor<2x3xi32>, tensor<3x4xi32>) -> (tensor<2x4xf32>, tensor<1x1x2x2xf32>, tensor<2x4xf16>, tensor<2x4xi32>), sym_name = "main"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %img: tensor<1x1x4x4xf32>, %k: tensor<1x1x3x3xf32>, %ah: tensor<2x3xf16>, %bh: tensor<3x4xf16>, %ai: tensor<2x3xi32>, %bi: tensor<3x4xi32>):
  %d = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("linear")
  %c = "stablehlo.convolution"(%img, %k) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64}> : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> loc("conv2d")
  %dh = "stablehlo.dot_general"(%ah, %bh) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16> loc("linear_half")
  %di = "stablehlo.dot_general"(%ai, %bi) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32> loc("mm_int")
  "func.return"(%d, %c, %dh, %di) : (tensor<2x4xf32>, tensor<1x1x2x2xf32>, tensor<2x4xf16>, tensor<2x4xi32>) -> ()
}) : () -> ()
