// Complex family (compiler/src/passes/lower_aten_to_stablehlo/complex.rs): complex
// tensors built and taken apart with stablehlo.complex/real/imag, the FFTs on
// stablehlo.fft (dims moved to the end, PyTorch's normalization applied on top of XLA's
// 1/n inverse), and ops outside the complex-safe list refused.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s
// RUN: not tpuc opt %S/Inputs/lower_error_complex_unsupported.mlir --pass-pipeline=lower-aten-to-stablehlo 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not tpuc opt %S/Inputs/complex_main.mlir --pass-pipeline=lower-aten-to-stablehlo,neuron-check 2>&1 | FileCheck %s --check-prefix=NEURON

// view_as_complex: the last dimension's halves become the parts.
// CHECK-LABEL: sym_name = "rotary"
// CHECK: [[RE:%[0-9]+]] = "stablehlo.slice"({{%arg[0-9]+}}) {limit_indices = array<i64: 2, 4, 1>, start_indices = array<i64: 0, 0, 0>
// CHECK: [[IM:%[0-9]+]] = "stablehlo.slice"({{%arg[0-9]+}}) {limit_indices = array<i64: 2, 4, 2>, start_indices = array<i64: 0, 0, 1>
// CHECK: "stablehlo.complex"({{.*}}) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xcomplex<f32>>
// polar(1, t) = cos t + i sin t
// CHECK: "stablehlo.cosine"
// CHECK: "stablehlo.sine"
// CHECK: "stablehlo.complex"
// complex multiply, then view_as_real stacks real and imaginary parts.
// CHECK: "stablehlo.multiply"({{.*}}) : (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
// CHECK: "stablehlo.real"({{.*}}) : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xf32>
// CHECK: "stablehlo.imag"({{.*}}) : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xf32>
// CHECK: "stablehlo.concatenate"
// CHECK-SAME: -> tensor<2x4x2xf32>
"func.func"() <{function_type = (tensor<2x4x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4x2xf32>, sym_name = "rotary"}> ({
^bb0(%x: tensor<2x4x2xf32>, %r: tensor<2x4xf32>, %t: tensor<2x4xf32>):
  %0 = "aten.view_as_complex.default"(%x) {operand_names = ["self"]} : (tensor<2x4x2xf32>) -> tensor<2x4xcomplex<f32>> loc("view_as_complex")
  %1 = "aten.polar.default"(%r, %t) {operand_names = ["abs", "angle"]} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xcomplex<f32>> loc("polar")
  %2 = "aten.mul.Tensor"(%0, %1) {operand_names = ["self", "other"]} : (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> loc("mul")
  %3 = "aten.view_as_real.default"(%2) {operand_names = ["self"]} : (tensor<2x4xcomplex<f32>>) -> tensor<2x4x2xf32> loc("view_as_real")
  "func.return"(%3) : (tensor<2x4x2xf32>) -> ()
}) : () -> ()

// A scalar times a complex tensor: the scalar becomes a complex constant (s, 0).
// CHECK-LABEL: sym_name = "scalar_mul"
// CHECK: stablehlo.constant{{.*}}dense<(2.500000e+00,0.000000e+00)> : tensor<complex<f64>>
"func.func"() <{function_type = (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>>, sym_name = "scalar_mul"}> ({
^bb0(%z: tensor<3xcomplex<f64>>):
  %0 = "aten.mul.Tensor"(%z) {operand_names = ["self"], other = 2.500000e+00 : f64} : (tensor<3xcomplex<f64>>) -> tensor<3xcomplex<f64>> loc("mul")
  "func.return"(%0) : (tensor<3xcomplex<f64>>) -> ()
}) : () -> ()

// abs of a complex tensor is real.
// CHECK-LABEL: sym_name = "abs"
// CHECK: "stablehlo.abs"({{%arg[0-9]+}}) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
"func.func"() <{function_type = (tensor<3xcomplex<f32>>) -> tensor<3xf32>, sym_name = "abs"}> ({
^bb0(%z: tensor<3xcomplex<f32>>):
  %0 = "aten.abs.default"(%z) {operand_names = ["self"]} : (tensor<3xcomplex<f32>>) -> tensor<3xf32> loc("abs")
  "func.return"(%0) : (tensor<3xf32>) -> ()
}) : () -> ()

// rfft over dim 0 with normalization 2 (1/n): transposed to the end, RFFT, back, scaled.
// CHECK-LABEL: sym_name = "r2c"
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"({{%arg[0-9]+}}) {permutation = array<i64: 1, 0>} : (tensor<8x3xf32>) -> tensor<3x8xf32>
// CHECK: [[F:%[0-9]+]] = "stablehlo.fft"([[T]]) {fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type RFFT>} : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>
// CHECK: "stablehlo.transpose"([[F]]) {permutation = array<i64: 1, 0>} : (tensor<3x5xcomplex<f32>>) -> tensor<5x3xcomplex<f32>>
// CHECK: dense<(1.250000e-01,0.000000e+00)> : tensor<complex<f32>>
// CHECK: "stablehlo.multiply"
"func.func"() <{function_type = (tensor<8x3xf32>) -> tensor<5x3xcomplex<f32>>, sym_name = "r2c"}> ({
^bb0(%x: tensor<8x3xf32>):
  %0 = "aten._fft_r2c.default"(%x) {dim = array<i64: 0>, normalization = 2 : i64, onesided = true, operand_names = ["self"]} : (tensor<8x3xf32>) -> tensor<5x3xcomplex<f32>> loc("rfft")
  "func.return"(%0) : (tensor<5x3xcomplex<f32>>) -> ()
}) : () -> ()

// irfft with normalization 0: XLA's IRFFT divides by n, so the result is multiplied by n.
// CHECK-LABEL: sym_name = "c2r"
// CHECK: "stablehlo.fft"({{%arg[0-9]+}}) {fft_length = array<i64: 6>, fft_type = #stablehlo<fft_type IRFFT>} : (tensor<2x4xcomplex<f32>>) -> tensor<2x6xf32>
// CHECK: dense<6.000000e+00> : tensor<f32>
"func.func"() <{function_type = (tensor<2x4xcomplex<f32>>) -> tensor<2x6xf32>, sym_name = "c2r"}> ({
^bb0(%z: tensor<2x4xcomplex<f32>>):
  %0 = "aten._fft_c2r.default"(%z) {dim = array<i64: 1>, normalization = 0 : i64, last_dim_size = 6 : i64, operand_names = ["self"]} : (tensor<2x4xcomplex<f32>>) -> tensor<2x6xf32> loc("irfft")
  "func.return"(%0) : (tensor<2x6xf32>) -> ()
}) : () -> ()

// REFUSED: error: {{.*}}node `sum_complex`{{.*}}`aten.sum.dim_IntList` on complex values is not supported by tpuc

// NEURON: cannot run on Neuron devices
// NEURON: node `view_as_complex` (stablehlo.complex): tensor<2x4xcomplex<f32>> is complex, which neuronx-cc has no type for
