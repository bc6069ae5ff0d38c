// Normalization family (compiler/src/passes/lower_aten_to_stablehlo/normalization.rs):
// batch norm with running statistics (eval) and with batch statistics (training
// mode: saved mean / invstd results; empty ones in eval mode), layer norm (one and
// two normalized dims, the mean with one correction pass, native_layer_norm's
// mean/rstd outputs), group norm, RMS norm and instance norm. f16/bf16 inputs
// are normalized in f32 (CHECK the converts in and out).
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// (x - mean) * rsqrt(var + eps) * weight + bias, per channel (dim 1).
// CHECK-LABEL: sym_name = "batch_norm_eval"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x4x4xf32>, [[W:%arg[0-9]+]]: tensor<8xf32>, [[B:%arg[0-9]+]]: tensor<8xf32>, [[M:%arg[0-9]+]]: tensor<8xf32>, [[V:%arg[0-9]+]]: tensor<8xf32>)
// CHECK-NOT: "stablehlo.convert"
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<2x8x4x4xf32>
// CHECK: [[VB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[V]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: "stablehlo.constant"() {value = dense<1.000000e-03> : tensor<f32>}
// CHECK: [[VE:%[0-9]+]] = "stablehlo.add"([[VB]], {{%[0-9]+}})
// CHECK: [[INV:%[0-9]+]] = "stablehlo.rsqrt"([[VE]])
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"([[D]], [[INV]])
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[NW:%[0-9]+]] = "stablehlo.multiply"([[N]], [[WB]])
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[R:%[0-9]+]] = "stablehlo.add"([[NW]], [[BB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>, sym_name = "batch_norm_eval"}> ({
^bb0(%x: tensor<2x8x4x4xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>):
  %0 = "aten.batch_norm.default"(%x, %w, %b, %m, %v) {cudnn_enabled = false, eps = 1.000000e-03 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "weight", "bias", "running_mean", "running_var"], training = false} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32> loc("batch_norm")
  "func.return"(%0) : (tensor<2x8x4x4xf32>) -> ()
}) : () -> ()

// _native_batch_norm_legit_no_training on f16: every operand converted to f32, the
// result rounded to f16; the saved-statistics results are empty f16 constants (shape
// [0], as PyTorch returns in eval mode), unused here.
// CHECK-LABEL: sym_name = "native_batch_norm_no_training_f16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x4x4xf16>, [[W:%arg[0-9]+]]: tensor<8xf16>, [[B:%arg[0-9]+]]: tensor<8xf16>, [[M:%arg[0-9]+]]: tensor<8xf16>, [[V:%arg[0-9]+]]: tensor<8xf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<2x8x4x4xf16>) -> tensor<2x8x4x4xf32>
// CHECK: "stablehlo.convert"([[M]]) : (tensor<8xf16>) -> tensor<8xf32>
// CHECK: "stablehlo.convert"([[V]]) : (tensor<8xf16>) -> tensor<8xf32>
// CHECK: "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>}
// CHECK: "stablehlo.rsqrt"
// CHECK: "stablehlo.subtract"([[XF]], {{%[0-9]+}})
// CHECK: "stablehlo.convert"([[W]]) : (tensor<8xf16>) -> tensor<8xf32>
// CHECK: "stablehlo.convert"([[B]]) : (tensor<8xf16>) -> tensor<8xf32>
// CHECK: [[Y:%[0-9]+]] = "stablehlo.add"
// CHECK: [[YH:%[0-9]+]] = "stablehlo.convert"([[Y]]) : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf16>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<0xf16>} : () -> tensor<0xf16>
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<0xf16>} : () -> tensor<0xf16>
// CHECK-NEXT: "func.return"([[YH]])
"func.func"() <{function_type = (tensor<2x8x4x4xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x8x4x4xf16>, sym_name = "native_batch_norm_no_training_f16"}> ({
^bb0(%x: tensor<2x8x4x4xf16>, %w: tensor<8xf16>, %b: tensor<8xf16>, %m: tensor<8xf16>, %v: tensor<8xf16>):
  %0:3 = "aten._native_batch_norm_legit_no_training.default"(%x, %w, %b, %m, %v) {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "weight", "bias", "running_mean", "running_var"]} : (tensor<2x8x4x4xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x8x4x4xf16>, tensor<0xf16>, tensor<0xf16>) loc("_native_batch_norm_legit_no_training")
  "func.return"(%0#0) : (tensor<2x8x4x4xf16>) -> ()
}) : () -> ()

// The saved statistics of _native_batch_norm_legit_no_training may be read (a graph
// that returns them): they are empty tensors (shape [0]), as PyTorch returns in eval
// mode, not the running statistics.
// CHECK-LABEL: sym_name = "native_batch_norm_no_training_saved_stats"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x4x4xf32>, [[M:%arg[0-9]+]]: tensor<8xf32>, [[V:%arg[0-9]+]]: tensor<8xf32>)
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[Y:%[0-9]+]] = "stablehlo.multiply"([[D]], {{%[0-9]+}}) : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
// CHECK-NEXT: [[SM:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<0xf32>} : () -> tensor<0xf32>
// CHECK-NEXT: [[SR:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<0xf32>} : () -> tensor<0xf32>
// CHECK-NEXT: "func.return"([[Y]], [[SM]], [[SR]])
"func.func"() <{function_type = (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x4x4xf32>, tensor<0xf32>, tensor<0xf32>), sym_name = "native_batch_norm_no_training_saved_stats"}> ({
^bb0(%x: tensor<2x8x4x4xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>):
  %0:3 = "aten._native_batch_norm_legit_no_training.default"(%x, %m, %v) {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "running_mean", "running_var"]} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x4x4xf32>, tensor<0xf32>, tensor<0xf32>) loc("bn_saved_stats_used")
  "func.return"(%0#0, %0#1, %0#2) : (tensor<2x8x4x4xf32>, tensor<0xf32>, tensor<0xf32>) -> ()
}) : () -> ()

// _native_batch_norm_legit.no_stats in training mode: batch statistics per channel
// over every dim but 1 (N*H*W = 32 elements), the biased variance (divide by 32, not
// 31), and the three results of native_batch_norm: the output, save_mean and
// save_invstd = rsqrt(var + eps).
// CHECK-LABEL: sym_name = "native_batch_norm_no_stats_training"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x4x4xf32>, [[W:%arg[0-9]+]]: tensor<3xf32>, [[B:%arg[0-9]+]]: tensor<3xf32>)
// CHECK-NOT: "stablehlo.convert"
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[X]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: }) {dimensions = array<i64: 0, 2, 3>} : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: "stablehlo.constant"() {value = dense<3.200000e+01> : tensor<f32>}
// CHECK: [[MEAN:%[0-9]+]] = "stablehlo.divide"([[S]], {{%[0-9]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MEAN]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4x4xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[D]], [[D]])
// CHECK: [[SS:%[0-9]+]] = "stablehlo.reduce"([[SQ]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 0, 2, 3>} : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: "stablehlo.constant"() {value = dense<3.200000e+01> : tensor<f32>}
// CHECK: [[VAR:%[0-9]+]] = "stablehlo.divide"([[SS]], {{%[0-9]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: [[VB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[VAR]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>}
// CHECK: [[VE:%[0-9]+]] = "stablehlo.add"([[VB]], {{%[0-9]+}})
// CHECK: [[INV:%[0-9]+]] = "stablehlo.rsqrt"([[VE]]) : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
// CHECK: [[D2:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"([[D2]], [[INV]])
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[NW:%[0-9]+]] = "stablehlo.multiply"([[N]], [[WB]])
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[Y:%[0-9]+]] = "stablehlo.add"([[NW]], [[BB]])
// CHECK: "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>}
// CHECK: [[VE3:%[0-9]+]] = "stablehlo.add"([[VAR]], {{%[0-9]+}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: [[RSTD:%[0-9]+]] = "stablehlo.rsqrt"([[VE3]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: "func.return"([[Y]], [[MEAN]], [[RSTD]])
"func.func"() <{function_type = (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>), sym_name = "native_batch_norm_no_stats_training"}> ({
^bb0(%x: tensor<2x3x4x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>):
  %0:3 = "aten._native_batch_norm_legit.no_stats"(%x, %w, %b) {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "weight", "bias"], training = true} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) loc("bn_no_stats")
  "func.return"(%0#0, %0#1, %0#2) : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> ()
}) : () -> ()

// _native_batch_norm_legit with training = true normalizes with the batch's own
// statistics even though running statistics are given (they are never read); bf16
// is computed in f32, statistics over dims [0, 2] (4 * 5 = 20 elements).
// CHECK-LABEL: sym_name = "native_batch_norm_training_bf16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x3x5xbf16>, [[M:%arg[0-9]+]]: tensor<3xbf16>, [[V:%arg[0-9]+]]: tensor<3xbf16>)
// CHECK-NOT: [[M]]{{[^0-9]}}
// CHECK-NOT: [[V]]{{[^0-9]}}
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<4x3x5xbf16>) -> tensor<4x3x5xf32>
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[XF]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 0, 2>} : (tensor<4x3x5xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: "stablehlo.constant"() {value = dense<2.000000e+01> : tensor<f32>}
// CHECK: [[MEAN:%[0-9]+]] = "stablehlo.divide"([[S]], {{%[0-9]+}})
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MEAN]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<4x3x5xf32>
// CHECK: "stablehlo.reduce"
// CHECK: }) {dimensions = array<i64: 0, 2>}
// CHECK: "stablehlo.constant"() {value = dense<1.000000e-03> : tensor<f32>}
// CHECK: [[INV:%[0-9]+]] = "stablehlo.rsqrt"
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[XF]], [[MB]])
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"([[D]], [[INV]])
// CHECK: [[Y:%[0-9]+]] = "stablehlo.convert"([[N]]) : (tensor<4x3x5xf32>) -> tensor<4x3x5xbf16>
// CHECK-NOT: [[M]]{{[^0-9]}}
// CHECK-NOT: [[V]]{{[^0-9]}}
// CHECK: "func.return"([[Y]])
"func.func"() <{function_type = (tensor<4x3x5xbf16>, tensor<3xbf16>, tensor<3xbf16>) -> tensor<4x3x5xbf16>, sym_name = "native_batch_norm_training_bf16"}> ({
^bb0(%x: tensor<4x3x5xbf16>, %m: tensor<3xbf16>, %v: tensor<3xbf16>):
  %0:3 = "aten._native_batch_norm_legit.default"(%x, %m, %v) {eps = 1.000000e-03 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "running_mean", "running_var"], training = true} : (tensor<4x3x5xbf16>, tensor<3xbf16>, tensor<3xbf16>) -> (tensor<4x3x5xbf16>, tensor<3xf32>, tensor<3xf32>) loc("bn_training")
  "func.return"(%0#0) : (tensor<4x3x5xbf16>) -> ()
}) : () -> ()

// layer_norm over the last dim (32) with the bert model's eps = 1e-12. The data are
// shifted by each row's first element x0 (a slice): a = sum(x - x0) / 32 and
// d = (x - x0) - a, which keeps the low bits of the deviations when the values share a
// large offset, at the cost of no extra reduction.
// CHECK-LABEL: sym_name = "layer_norm"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x32xf32>, [[W:%arg[0-9]+]]: tensor<32xf32>, [[B:%arg[0-9]+]]: tensor<32xf32>)
// CHECK: [[X0:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 2, 8, 1>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>}
// CHECK: [[X0R:%[0-9]+]] = "stablehlo.reshape"([[X0]]) : (tensor<2x8x1xf32>) -> tensor<2x8xf32>
// CHECK: [[X0B:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[X0R]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x32xf32>
// CHECK: [[SH:%[0-9]+]] = "stablehlo.subtract"([[X]], [[X0B]])
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[SH]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: }) {dimensions = array<i64: 2>} : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK: "stablehlo.constant"() {value = dense<3.200000e+01> : tensor<f32>}
// CHECK: [[A:%[0-9]+]] = "stablehlo.divide"([[S]], {{%[0-9]+}})
// CHECK: [[AB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x8x32xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[SH]], [[AB]])
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[D]], [[D]])
// CHECK: "stablehlo.reduce"([[SQ]], {{%[0-9]+}}) ({
// CHECK: [[VAR:%[0-9]+]] = "stablehlo.divide"
// CHECK: "stablehlo.constant"() {value = dense<9.99999996E-13> : tensor<f32>}
// CHECK: [[VE:%[0-9]+]] = "stablehlo.add"([[VAR]], {{%[0-9]+}})
// CHECK: [[RSTD:%[0-9]+]] = "stablehlo.rsqrt"([[VE]]) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: [[RB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[RSTD]]) {broadcast_dimensions = array<i64: 0, 1>}
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"([[D]], [[RB]])
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 2>} : (tensor<32xf32>) -> tensor<2x8x32xf32>
// CHECK: [[NW:%[0-9]+]] = "stablehlo.multiply"([[N]], [[WB]])
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 2>}
// CHECK: [[R:%[0-9]+]] = "stablehlo.add"([[NW]], [[BB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>, sym_name = "layer_norm"}> ({
^bb0(%x: tensor<2x8x32xf32>, %w: tensor<32xf32>, %b: tensor<32xf32>):
  %0 = "aten.layer_norm.default"(%x, %w, %b) {cudnn_enable = true, eps = 9.9999999999999998E-13 : f64, normalized_shape = array<i64: 32>, operand_names = ["input", "weight", "bias"]} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32> loc("layer_norm")
  "func.return"(%0) : (tensor<2x8x32xf32>) -> ()
}) : () -> ()

// native_layer_norm over the two trailing dims of a bf16 input, without weight or
// bias: computed in f32, the output rounded to bf16, the mean (x0 + a) and rstd
// (f32, keepdim shape [2, 1, 1]) returned as well.
// CHECK-LABEL: sym_name = "native_layer_norm_bf16_two_dims"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x6xbf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<2x4x6xbf16>) -> tensor<2x4x6xf32>
// CHECK: [[X0:%[0-9]+]] = "stablehlo.slice"([[XF]]) {limit_indices = array<i64: 2, 1, 1>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>}
// CHECK: [[X0R:%[0-9]+]] = "stablehlo.reshape"([[X0]]) : (tensor<2x1x1xf32>) -> tensor<2xf32>
// CHECK: [[X0B:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[X0R]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x4x6xf32>
// CHECK: [[SH:%[0-9]+]] = "stablehlo.subtract"([[XF]], [[X0B]])
// CHECK: "stablehlo.reduce"([[SH]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 1, 2>} : (tensor<2x4x6xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK: "stablehlo.constant"() {value = dense<2.400000e+01> : tensor<f32>}
// CHECK: [[A:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[AB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x4x6xf32>
// CHECK: "stablehlo.subtract"([[SH]], [[AB]])
// CHECK: "stablehlo.reduce"
// CHECK: [[MEAN:%[0-9]+]] = "stablehlo.add"([[X0R]], [[A]])
// CHECK: [[RSTD:%[0-9]+]] = "stablehlo.rsqrt"
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"
// CHECK: [[NH:%[0-9]+]] = "stablehlo.convert"([[N]]) : (tensor<2x4x6xf32>) -> tensor<2x4x6xbf16>
// CHECK: [[MK:%[0-9]+]] = "stablehlo.reshape"([[MEAN]]) : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK: [[RK:%[0-9]+]] = "stablehlo.reshape"([[RSTD]]) : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT: "func.return"([[NH]], [[MK]], [[RK]])
"func.func"() <{function_type = (tensor<2x4x6xbf16>) -> (tensor<2x4x6xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>), sym_name = "native_layer_norm_bf16_two_dims"}> ({
^bb0(%x: tensor<2x4x6xbf16>):
  %0:3 = "aten.native_layer_norm.default"(%x) {eps = 1.000000e-05 : f64, normalized_shape = array<i64: 4, 6>, operand_names = ["input"]} : (tensor<2x4x6xbf16>) -> (tensor<2x4x6xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) loc("native_layer_norm")
  "func.return"(%0#0, %0#1, %0#2) : (tensor<2x4x6xbf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) -> ()
}) : () -> ()

// group_norm with 3 groups of 2 channels: statistics over [N, G, C/G * HW].
// CHECK-LABEL: sym_name = "group_norm"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x6x5xf32>, [[W:%arg[0-9]+]]: tensor<6xf32>, [[B:%arg[0-9]+]]: tensor<6xf32>)
// CHECK: [[G:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<2x6x5xf32>) -> tensor<2x3x10xf32>
// CHECK: "stablehlo.reduce"([[G]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 2>} : (tensor<2x3x10xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: "stablehlo.constant"() {value = dense<1.000000e+01> : tensor<f32>}
// CHECK: "stablehlo.rsqrt"({{%[0-9]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"({{%[0-9]+}}, {{%[0-9]+}}) : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
// CHECK: [[NR:%[0-9]+]] = "stablehlo.reshape"([[N]]) : (tensor<2x3x10xf32>) -> tensor<2x6x5xf32>
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>) -> tensor<2x6x5xf32>
// CHECK: [[NW:%[0-9]+]] = "stablehlo.multiply"([[NR]], [[WB]])
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[R:%[0-9]+]] = "stablehlo.add"([[NW]], [[BB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>, sym_name = "group_norm"}> ({
^bb0(%x: tensor<2x6x5xf32>, %w: tensor<6xf32>, %b: tensor<6xf32>):
  %0 = "aten.group_norm.default"(%x, %w, %b) {cudnn_enabled = true, eps = 1.000000e-05 : f64, num_groups = 3 : i64, operand_names = ["input", "weight", "bias"]} : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32> loc("group_norm")
  "func.return"(%0) : (tensor<2x6x5xf32>) -> ()
}) : () -> ()

// rms_norm on f16 (llama): x * rsqrt(mean(x^2) + eps) * weight in f32, rounded once.
// CHECK-LABEL: sym_name = "rms_norm_f16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x16xf16>, [[W:%arg[0-9]+]]: tensor<16xf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<2x8x16xf16>) -> tensor<2x8x16xf32>
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[XF]], [[XF]])
// CHECK: "stablehlo.reduce"([[SQ]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 2>} : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK: "stablehlo.constant"() {value = dense<1.600000e+01> : tensor<f32>}
// CHECK: "stablehlo.constant"() {value = dense<9.99999997E-7> : tensor<f32>}
// CHECK: [[INV:%[0-9]+]] = "stablehlo.rsqrt"
// CHECK: [[IB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[INV]]) {broadcast_dimensions = array<i64: 0, 1>}
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"([[XF]], [[IB]])
// CHECK: [[WF:%[0-9]+]] = "stablehlo.convert"([[W]]) : (tensor<16xf16>) -> tensor<16xf32>
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[WF]]) {broadcast_dimensions = array<i64: 2>}
// CHECK: [[Y:%[0-9]+]] = "stablehlo.multiply"([[N]], [[WB]])
// CHECK: [[YH:%[0-9]+]] = "stablehlo.convert"([[Y]]) : (tensor<2x8x16xf32>) -> tensor<2x8x16xf16>
// CHECK-NEXT: "func.return"([[YH]])
"func.func"() <{function_type = (tensor<2x8x16xf16>, tensor<16xf16>) -> tensor<2x8x16xf16>, sym_name = "rms_norm_f16"}> ({
^bb0(%x: tensor<2x8x16xf16>, %w: tensor<16xf16>):
  %0 = "aten.rms_norm.default"(%x, %w) {eps = 9.9999999999999995E-7 : f64, normalized_shape = array<i64: 16>, operand_names = ["input", "weight"]} : (tensor<2x8x16xf16>, tensor<16xf16>) -> tensor<2x8x16xf16> loc("rms_norm")
  "func.return"(%0) : (tensor<2x8x16xf16>) -> ()
}) : () -> ()

// instance_norm (use_input_stats): each (sample, channel) plane normalized by its
// own mean and biased variance over dims [2, 3] (4 * 5 = 20 elements), broadcast
// back along [0, 1]; weight and bias per channel.
// CHECK-LABEL: sym_name = "instance_norm"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x4x5xf32>, [[W:%arg[0-9]+]]: tensor<3xf32>, [[B:%arg[0-9]+]]: tensor<3xf32>)
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[X]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 2, 3>} : (tensor<2x3x4x5xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: "stablehlo.constant"() {value = dense<2.000000e+01> : tensor<f32>}
// CHECK: [[MEAN:%[0-9]+]] = "stablehlo.divide"([[S]], {{%[0-9]+}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MEAN]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3x4x5xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[D]], [[D]])
// CHECK: [[SS:%[0-9]+]] = "stablehlo.reduce"([[SQ]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 2, 3>}
// CHECK: "stablehlo.constant"() {value = dense<2.000000e+01> : tensor<f32>}
// CHECK: [[VAR:%[0-9]+]] = "stablehlo.divide"([[SS]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<9.99999974E-6> : tensor<f32>}
// CHECK: [[VE:%[0-9]+]] = "stablehlo.add"([[VAR]], {{%[0-9]+}})
// CHECK: [[RSTD:%[0-9]+]] = "stablehlo.rsqrt"([[VE]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: [[RB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[RSTD]]) {broadcast_dimensions = array<i64: 0, 1>}
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"([[D]], [[RB]])
// CHECK: [[WB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[W]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[NW:%[0-9]+]] = "stablehlo.multiply"([[N]], [[WB]])
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[R:%[0-9]+]] = "stablehlo.add"([[NW]], [[BB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>, sym_name = "instance_norm"}> ({
^bb0(%x: tensor<2x3x4x5xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>):
  %0 = "aten.instance_norm.default"(%x, %w, %b) {cudnn_enabled = false, eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "weight", "bias"], use_input_stats = true} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32> loc("instance_norm")
  "func.return"(%0) : (tensor<2x3x4x5xf32>) -> ()
}) : () -> ()

// instance_norm with use_input_stats = false uses the running statistics, like batch
// norm in eval mode: no reduce.
// CHECK-LABEL: sym_name = "instance_norm_running_stats"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x4xf32>, [[M:%arg[0-9]+]]: tensor<3xf32>, [[V:%arg[0-9]+]]: tensor<3xf32>)
// CHECK-NOT: "stablehlo.reduce"
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32>
// CHECK: [[VB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[V]]) {broadcast_dimensions = array<i64: 1>}
// CHECK: [[VE:%[0-9]+]] = "stablehlo.add"([[VB]], {{%[0-9]+}})
// CHECK: [[INV:%[0-9]+]] = "stablehlo.rsqrt"([[VE]])
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[N:%[0-9]+]] = "stablehlo.multiply"([[D]], [[INV]])
// CHECK-NOT: "stablehlo.reduce"
// CHECK: "func.return"([[N]])
"func.func"() <{function_type = (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>, sym_name = "instance_norm_running_stats"}> ({
^bb0(%x: tensor<2x3x4xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>):
  %0 = "aten.instance_norm.default"(%x, %m, %v) {cudnn_enabled = false, eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "running_mean", "running_var"], use_input_stats = false} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32> loc("instance_norm_1")
  "func.return"(%0) : (tensor<2x3x4xf32>) -> ()
}) : () -> ()

// _weight_norm(v, g, dim=0): w = v * (g / ||v||), the L2 norm of v taken over every dim
// but 0 ([4]), broadcast back along dim 0; g [4, 1, 1] broadcasts to v's shape.
// CHECK-LABEL: sym_name = "weight_norm_dim0"
// CHECK: ^bb0([[V:%arg[0-9]+]]: tensor<4x3x2xf32>, [[G:%arg[0-9]+]]: tensor<4x1x1xf32>)
// CHECK-NEXT: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[V]], [[V]])
// CHECK-NEXT: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[SS:%[0-9]+]] = "stablehlo.reduce"([[SQ]], [[Z]])
// CHECK: "stablehlo.add"
// CHECK: dimensions = array<i64: 1, 2>} : (tensor<4x3x2xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: [[N:%[0-9]+]] = "stablehlo.sqrt"([[SS]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[NB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[N]]) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: [[GB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[G]]) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<4x1x1xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.divide"([[GB]], [[NB]])
// CHECK-NEXT: [[W:%[0-9]+]] = "stablehlo.multiply"([[V]], [[S]])
// CHECK-NEXT: "func.return"([[W]])
"func.func"() <{function_type = (tensor<4x3x2xf32>, tensor<4x1x1xf32>) -> tensor<4x3x2xf32>, sym_name = "weight_norm_dim0"}> ({
^bb0(%v: tensor<4x3x2xf32>, %g: tensor<4x1x1xf32>):
  %0 = "aten._weight_norm.default"(%v, %g) {dim = 0 : i64, operand_names = ["v", "g"]} : (tensor<4x3x2xf32>, tensor<4x1x1xf32>) -> tensor<4x3x2xf32> loc("weight_norm")
  "func.return"(%0) : (tensor<4x3x2xf32>) -> ()
}) : () -> ()

// _weight_norm_interface also returns the norm, reshaped to g's shape [4, 1, 1].
// CHECK-LABEL: sym_name = "weight_norm_interface"
// CHECK: ^bb0([[V:%arg[0-9]+]]: tensor<4x3x2xf32>, [[G:%arg[0-9]+]]: tensor<4x1x1xf32>)
// CHECK: [[N:%[0-9]+]] = "stablehlo.sqrt"({{%[0-9]+}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: [[W:%[0-9]+]] = "stablehlo.multiply"([[V]], {{%[0-9]+}})
// CHECK-NEXT: [[NR:%[0-9]+]] = "stablehlo.reshape"([[N]]) : (tensor<4xf32>) -> tensor<4x1x1xf32>
// CHECK-NEXT: "func.return"([[W]], [[NR]])
"func.func"() <{function_type = (tensor<4x3x2xf32>, tensor<4x1x1xf32>) -> (tensor<4x3x2xf32>, tensor<4x1x1xf32>), sym_name = "weight_norm_interface"}> ({
^bb0(%v: tensor<4x3x2xf32>, %g: tensor<4x1x1xf32>):
  %0:2 = "aten._weight_norm_interface.default"(%v, %g) {dim = 0 : i64, operand_names = ["v", "g"]} : (tensor<4x3x2xf32>, tensor<4x1x1xf32>) -> (tensor<4x3x2xf32>, tensor<4x1x1xf32>) loc("weight_norm_interface")
  "func.return"(%0#0, %0#1) : (tensor<4x3x2xf32>, tensor<4x1x1xf32>) -> ()
}) : () -> ()

// The functional batch norm of a training graph also returns the running statistics'
// next values: 0.1 * batch mean + 0.9 * running mean, and the variance unbiased
// (0.1 * 256/255 on the batch's).
// CHECK-LABEL: sym_name = "batch_norm_functional"
// CHECK: dense<1.000000e-01> : tensor<f32>
// CHECK: dense<0.899999976> : tensor<f32>
// CHECK: dense<0.100392155> : tensor<f32>
// CHECK: "func.return"
"func.func"() <{function_type = (tensor<4x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>), sym_name = "batch_norm_functional"}> ({
^bb0(%x: tensor<4x8x8x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %rm: tensor<8xf32>, %rv: tensor<8xf32>):
  %0:5 = "aten._native_batch_norm_legit_functional.default"(%x, %w, %b, %rm, %rv) {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, operand_names = ["input", "weight", "bias", "running_mean", "running_var"], training = true} : (tensor<4x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) loc("batch_norm_functional")
  "func.return"(%0#0, %0#3, %0#4) : (tensor<4x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> ()
}) : () -> ()
