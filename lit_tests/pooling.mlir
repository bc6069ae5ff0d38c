// Pooling family (compiler/src/passes/lower_aten_to_stablehlo/pooling.rs): max and
// average pooling as reduce_window (padding, stride, dilation, ceil_mode,
// count_include_pad, divisor_override, unbatched input, integer dtype, f16 in f32;
// float max pooling with overlapping windows over integer keys ordered as the floats,
// in f32, f64 and bf16),
// max pooling with indices as a variadic arg-max reduce_window over (x, flat index),
// and adaptive average pooling as contractions with averaging matrices.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// max_pool2d_with_indices (cnn model) whose indices are unused: the lowering sees that
// nothing reads them and emits a max reduce_window from -inf (no index operand). The
// windows are disjoint (2x2, stride 2), so the max is plain (no NaN checks in its
// body): the same variadic reduce_window ORs an is-NaN flag over each window, and a
// select makes windows holding a NaN NaN, as PyTorch propagates NaN.
// CHECK-LABEL: sym_name = "max_pool2d_with_indices_unused"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x16x16xf32>)
// CHECK-NOT: "stablehlo.iota"
// CHECK: [[ISNAN:%[0-9]+]] = "stablehlo.compare"([[X]], [[X]]) {{.*}}comparison_direction NE
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[FALSE:%[0-9]+]] = "stablehlo.constant"() {value = dense<false> : tensor<i1>}
// CHECK: [[P:%[0-9]+]]:2 = "stablehlo.reduce_window"([[X]], [[ISNAN]], [[NINF]], [[FALSE]]) ({
// CHECK-NEXT: ^bb0([[L:%arg[0-9]+]]: tensor<f32>, [[LN:%arg[0-9]+]]: tensor<i1>, [[R:%arg[0-9]+]]: tensor<f32>, [[RN:%arg[0-9]+]]: tensor<i1>):
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.maximum"([[L]], [[R]])
// CHECK-NEXT: [[O:%[0-9]+]] = "stablehlo.or"([[LN]], [[RN]])
// CHECK-NEXT: "stablehlo.return"([[M]], [[O]])
// CHECK-NEXT: }) {base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<2x8x16x16xf32>, tensor<2x8x16x16xi1>, tensor<f32>, tensor<i1>) -> (tensor<2x8x8x8xf32>, tensor<2x8x8x8xi1>)
// CHECK: [[NAN:%[0-9]+]] = "stablehlo.constant"() {value = dense<0x7FC00000> : tensor<f32>}
// CHECK: [[NANB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[NAN]])
// CHECK-NEXT: [[OUT:%[0-9]+]] = "stablehlo.select"([[P]]#1, [[NANB]], [[P]]#0)
// CHECK-NEXT: "func.return"([[OUT]])
"func.func"() <{function_type = (tensor<2x8x16x16xf32>) -> tensor<2x8x8x8xf32>, sym_name = "max_pool2d_with_indices_unused"}> ({
^bb0(%x: tensor<2x8x16x16xf32>):
  %0:2 = "aten.max_pool2d_with_indices.default"(%x) {kernel_size = array<i64: 2, 2>, operand_names = ["self"], stride = array<i64: 2, 2>} : (tensor<2x8x16x16xf32>) -> (tensor<2x8x8x8xf32>, tensor<2x8x8x8xi64>) loc("max_pool2d_with_indices")
  "func.return"(%0#0) : (tensor<2x8x8x8xf32>) -> ()
}) : () -> ()

// Overlapping windows (2x2, stride 1) on f64 and bf16: the max is taken over integers
// ordered as the floats, NaNs made the positive quiet NaN, the bits read as i64 / i16,
// negative ones with every bit but the sign flipped (b ^ ((b >> 63) & 0x7f..f)); the
// window max starts from -inf's key, a literal (the i64 one, 0x800fffffffffffff, is
// not an f64), and is mapped back the same way.
// CHECK-LABEL: sym_name = "max_pool2d_f64"
// CHECK: "stablehlo.bitcast_convert"({{.*}}) : (tensor<1x1x4x4xf64>) -> tensor<1x1x4x4xi64>
// CHECK: value = dense<63> : tensor<1x1x4x4xi64>
// CHECK: value = dense<9223372036854775807> : tensor<1x1x4x4xi64>
// CHECK: value = dense<-9218868437227405313> : tensor<i64>
// CHECK: "stablehlo.bitcast_convert"({{.*}}) : (tensor<1x1x3x3xi64>) -> tensor<1x1x3x3xf64>
"func.func"() <{function_type = (tensor<1x1x4x4xf64>) -> tensor<1x1x3x3xf64>, sym_name = "max_pool2d_f64"}> ({
^bb0(%x: tensor<1x1x4x4xf64>):
  %0 = "aten.max_pool2d.default"(%x) {kernel_size = array<i64: 2, 2>, operand_names = ["self"], stride = array<i64: 1, 1>} : (tensor<1x1x4x4xf64>) -> tensor<1x1x3x3xf64> loc("max_pool2d_f64")
  "func.return"(%0) : (tensor<1x1x3x3xf64>) -> ()
}) : () -> ()

// CHECK-LABEL: sym_name = "max_pool2d_bf16"
// CHECK: value = dense<0x7FC0> : tensor<bf16>
// CHECK: "stablehlo.bitcast_convert"({{.*}}) : (tensor<1x1x4x4xbf16>) -> tensor<1x1x4x4xi16>
// CHECK: value = dense<15> : tensor<1x1x4x4xi16>
// CHECK: value = dense<32767> : tensor<1x1x4x4xi16>
// CHECK: value = dense<-32641> : tensor<i16>
// CHECK: "stablehlo.bitcast_convert"({{.*}}) : (tensor<1x1x3x3xi16>) -> tensor<1x1x3x3xbf16>
"func.func"() <{function_type = (tensor<1x1x4x4xbf16>) -> tensor<1x1x3x3xbf16>, sym_name = "max_pool2d_bf16"}> ({
^bb0(%x: tensor<1x1x4x4xbf16>):
  %0 = "aten.max_pool2d.default"(%x) {kernel_size = array<i64: 2, 2>, operand_names = ["self"], stride = array<i64: 1, 1>} : (tensor<1x1x4x4xbf16>) -> tensor<1x1x3x3xbf16> loc("max_pool2d_bf16")
  "func.return"(%0) : (tensor<1x1x3x3xbf16>) -> ()
}) : () -> ()

// max_pool2d_with_indices with both results used, k=3, s=2, p=1 on 5x5: the index
// operand is each element's flat position in its (unpadded) plane, h * 5 + w
// (iota(3) * 1 + iota(2) * 5). One variadic reduce_window over (x, index) starts from
// (-inf, INT64_MAX) and pads both operands with them, so padding never wins: a real
// -inf ties with it and keeps its own, smaller index. The body is the arg-max body
// (reduction.mlir checks it in full): NaN wins, ties keep the smaller index.
// CHECK-LABEL: sym_name = "max_pool2d_with_indices_padding"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x2x5x5xf32>)
// CHECK: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<1x2x5x5xi64>}
// CHECK: [[IW:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 3 : i64} : () -> tensor<1x2x5x5xi64>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1> : tensor<1x2x5x5xi64>}
// CHECK: [[SW:%[0-9]+]] = "stablehlo.multiply"([[IW]], [[ONE]])
// CHECK: [[A1:%[0-9]+]] = "stablehlo.add"([[Z]], [[SW]])
// CHECK: [[IH:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 2 : i64} : () -> tensor<1x2x5x5xi64>
// CHECK: [[FIVE:%[0-9]+]] = "stablehlo.constant"() {value = dense<5> : tensor<1x2x5x5xi64>}
// CHECK: [[SH:%[0-9]+]] = "stablehlo.multiply"([[IH]], [[FIVE]])
// CHECK: [[FLAT:%[0-9]+]] = "stablehlo.add"([[A1]], [[SH]])
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[IMAX:%[0-9]+]] = "stablehlo.constant"() {value = dense<9223372036854775807> : tensor<i64>}
// CHECK: [[P:%[0-9]+]]:2 = "stablehlo.reduce_window"([[X]], [[FLAT]], [[NINF]], [[IMAX]]) ({
// CHECK-NEXT: ^bb0({{%arg[0-9]+}}: tensor<f32>, {{%arg[0-9]+}}: tensor<i64>, {{%arg[0-9]+}}: tensor<f32>, {{%arg[0-9]+}}: tensor<i64>):
// CHECK: comparison_direction GT
// CHECK: "stablehlo.minimum"
// CHECK: "stablehlo.return"
// CHECK-NEXT: }) {base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<{{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x2x5x5xf32>, tensor<1x2x5x5xi64>, tensor<f32>, tensor<i64>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>)
// CHECK-NEXT: "func.return"([[P]]#0, [[P]]#1)
"func.func"() <{function_type = (tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>), sym_name = "max_pool2d_with_indices_padding"}> ({
^bb0(%x: tensor<1x2x5x5xf32>):
  %0:2 = "aten.max_pool2d_with_indices.default"(%x) {kernel_size = array<i64: 3, 3>, operand_names = ["self"], padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>) loc("pool_with_indices")
  "func.return"(%0#0, %0#1) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>) -> ()
}) : () -> ()

// max_pool1d_with_indices on an unbatched [C, L] i32 input: the index is the
// position along L alone; the value init is INT32_MIN and the comparisons are SIGNED.
// CHECK-LABEL: sym_name = "max_pool1d_with_indices_int_unbatched"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x6xi32>)
// CHECK: "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x6xi64>
// CHECK-NOT: "stablehlo.iota"
// CHECK: [[FLAT:%[0-9]+]] = "stablehlo.add"
// CHECK: [[LO:%[0-9]+]] = "stablehlo.constant"() {value = dense<-2147483648> : tensor<i32>}
// CHECK: [[IMAX:%[0-9]+]] = "stablehlo.constant"() {value = dense<9223372036854775807> : tensor<i64>}
// CHECK: [[P:%[0-9]+]]:2 = "stablehlo.reduce_window"([[X]], [[FLAT]], [[LO]], [[IMAX]]) ({
// CHECK: compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GT>
// CHECK: }) {base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>} : (tensor<3x6xi32>, tensor<3x6xi64>, tensor<i32>, tensor<i64>) -> (tensor<3x3xi32>, tensor<3x3xi64>)
// CHECK-NEXT: "func.return"([[P]]#0, [[P]]#1)
"func.func"() <{function_type = (tensor<3x6xi32>) -> (tensor<3x3xi32>, tensor<3x3xi64>), sym_name = "max_pool1d_with_indices_int_unbatched"}> ({
^bb0(%x: tensor<3x6xi32>):
  %0:2 = "aten.max_pool1d_with_indices.default"(%x) {kernel_size = array<i64: 2>, operand_names = ["self"], stride = array<i64: 2>} : (tensor<3x6xi32>) -> (tensor<3x3xi32>, tensor<3x3xi64>) loc("max_pool1d_with_indices")
  "func.return"(%0#0, %0#1) : (tensor<3x3xi32>, tensor<3x3xi64>) -> ()
}) : () -> ()

// k=3, s=2, p=1 on 8: floor mode gives 4 outputs (padding 1/1); ceil_mode gives 5,
// the last window starting inside the right padding (padding 1/2, filled with -inf's
// key).
// CHECK-LABEL: sym_name = "max_pool2d_padding_ceil_mode"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x3x8x8xf32>)
// CHECK: "stablehlo.reduce_window"({{%[0-9]+}}, {{%[0-9]+}}) ({
// CHECK: }) {base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<{{\[\[}}0, 0], [0, 0], [1, 2], [1, 2]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x3x8x8xi32>, tensor<i32>) -> tensor<1x3x5x5xi32>
// CHECK: "stablehlo.reduce_window"({{%[0-9]+}}, {{%[0-9]+}}) ({
// CHECK: }) {base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<{{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x3x8x8xi32>, tensor<i32>) -> tensor<1x3x4x4xi32>
// CHECK: "func.return"({{%[0-9]+}}, {{%[0-9]+}})
"func.func"() <{function_type = (tensor<1x3x8x8xf32>) -> (tensor<1x3x5x5xf32>, tensor<1x3x4x4xf32>), sym_name = "max_pool2d_padding_ceil_mode"}> ({
^bb0(%x: tensor<1x3x8x8xf32>):
  %0 = "aten.max_pool2d.default"(%x) {ceil_mode = true, kernel_size = array<i64: 3, 3>, operand_names = ["self"], padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x5x5xf32> loc("max_pool_ceil")
  %1 = "aten.max_pool2d.default"(%x) {kernel_size = array<i64: 3, 3>, operand_names = ["self"], padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> loc("max_pool_floor")
  "func.return"(%0, %1) : (tensor<1x3x5x5xf32>, tensor<1x3x4x4xf32>) -> ()
}) : () -> ()

// max_pool1d on an unbatched [C, L] i32 input with dilation 2: init INT32_MIN,
// window (3 - 1) * 2 + 1 = 5, (10 - 5) / 2 + 1 = 3 outputs.
// CHECK-LABEL: sym_name = "max_pool1d_dilation_int_unbatched"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x10xi32>)
// CHECK: [[LO:%[0-9]+]] = "stablehlo.constant"() {value = dense<-2147483648> : tensor<i32>}
// CHECK: [[P:%[0-9]+]] = "stablehlo.reduce_window"([[X]], [[LO]]) ({
// CHECK: "stablehlo.maximum"({{.*}}) : (tensor<i32>, tensor<i32>) -> tensor<i32>
// CHECK: }) {base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 2>, window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 2>} : (tensor<2x10xi32>, tensor<i32>) -> tensor<2x3xi32>
// CHECK-NEXT: "func.return"([[P]])
"func.func"() <{function_type = (tensor<2x10xi32>) -> tensor<2x3xi32>, sym_name = "max_pool1d_dilation_int_unbatched"}> ({
^bb0(%x: tensor<2x10xi32>):
  %0 = "aten.max_pool1d.default"(%x) {dilation = array<i64: 2>, kernel_size = array<i64: 3>, operand_names = ["self"], stride = array<i64: 2>} : (tensor<2x10xi32>) -> tensor<2x3xi32> loc("max_pool1d")
  "func.return"(%0) : (tensor<2x3xi32>) -> ()
}) : () -> ()

// avg_pool2d k=3, s=2, p=1, ceil_mode on 8x8 (5 outputs): the divisor counts the
// explicit padding (ones padded with ones, 1/1) but not the extra ceil_mode padding
// (zeros beyond it, 0/1), as PyTorch does.
// CHECK-LABEL: sym_name = "avg_pool2d_count_include_pad_ceil"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x1x8x8xf32>)
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.reduce_window"([[X]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: }) {base_dilations{{.*}}padding = dense<{{\[\[}}0, 0], [0, 0], [1, 2], [1, 2]]> : tensor<4x2xi64>{{.*}}window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x1x8x8xf32>, tensor<f32>) -> tensor<1x1x5x5xf32>
// CHECK: [[ONES:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<8x8xf32>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK: [[PADDED:%[0-9]+]] = "stablehlo.pad"([[ONES]], [[ONE]]) {edge_padding_high = array<i64: 1, 1>, edge_padding_low = array<i64: 1, 1>, interior_padding = array<i64: 0, 0>} : (tensor<8x8xf32>, tensor<f32>) -> tensor<10x10xf32>
// CHECK: [[CNT:%[0-9]+]] = "stablehlo.reduce_window"([[PADDED]], {{%[0-9]+}}) ({
// CHECK: }) {base_dilations = array<i64: 1, 1>, padding = dense<{{\[\[}}0, 1], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 2, 2>} : (tensor<10x10xf32>, tensor<f32>) -> tensor<5x5xf32>
// CHECK: [[CB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[CNT]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<5x5xf32>) -> tensor<1x1x5x5xf32>
// CHECK: [[R:%[0-9]+]] = "stablehlo.divide"([[SUM]], [[CB]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<1x1x8x8xf32>) -> tensor<1x1x5x5xf32>, sym_name = "avg_pool2d_count_include_pad_ceil"}> ({
^bb0(%x: tensor<1x1x8x8xf32>):
  %0 = "aten.avg_pool2d.default"(%x) {ceil_mode = true, kernel_size = array<i64: 3, 3>, operand_names = ["self"], padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x1x8x8xf32>) -> tensor<1x1x5x5xf32> loc("avg_pool2d")
  "func.return"(%0) : (tensor<1x1x5x5xf32>) -> ()
}) : () -> ()

// count_include_pad=false on f16: summed in f32; the divisor counts only real
// elements (ones padded with zeros by the window's own padding).
// CHECK-LABEL: sym_name = "avg_pool2d_exclude_pad_ceil_f16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x1x6x6xf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<1x1x6x6xf16>) -> tensor<1x1x6x6xf32>
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.reduce_window"([[XF]], {{%[0-9]+}}) ({
// CHECK: }) {base_dilations{{.*}}padding = dense<{{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>{{.*}}window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 3, 3>} : (tensor<1x1x6x6xf32>, tensor<f32>) -> tensor<1x1x3x3xf32>
// CHECK: [[ONES:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<6x6xf32>
// CHECK-NOT: "stablehlo.pad"
// CHECK: [[CNT:%[0-9]+]] = "stablehlo.reduce_window"([[ONES]], {{%[0-9]+}}) ({
// CHECK: }) {base_dilations = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 3, 3>} : (tensor<6x6xf32>, tensor<f32>) -> tensor<3x3xf32>
// CHECK: [[CB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[CNT]])
// CHECK: [[Q:%[0-9]+]] = "stablehlo.divide"([[SUM]], [[CB]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.convert"([[Q]]) : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf16>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<1x1x6x6xf16>) -> tensor<1x1x3x3xf16>, sym_name = "avg_pool2d_exclude_pad_ceil_f16"}> ({
^bb0(%x: tensor<1x1x6x6xf16>):
  %0 = "aten.avg_pool2d.default"(%x) {ceil_mode = true, count_include_pad = false, kernel_size = array<i64: 2, 2>, operand_names = ["self"], padding = array<i64: 1, 1>, stride = array<i64: 3, 3>} : (tensor<1x1x6x6xf16>) -> tensor<1x1x3x3xf16> loc("avg_pool2d_1")
  "func.return"(%0) : (tensor<1x1x3x3xf16>) -> ()
}) : () -> ()

// divisor_override replaces the window count; an empty stride defaults to the kernel.
// CHECK-LABEL: sym_name = "avg_pool2d_divisor_override"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x2x4x4xf32>)
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.reduce_window"([[X]], {{%[0-9]+}}) ({
// CHECK: }) {base_dilations{{.*}}window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
// CHECK: "stablehlo.constant"() {value = dense<3.000000e+00> : tensor<f32>}
// CHECK: [[D:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[R:%[0-9]+]] = "stablehlo.divide"([[SUM]], [[D]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>, sym_name = "avg_pool2d_divisor_override"}> ({
^bb0(%x: tensor<1x2x4x4xf32>):
  %0 = "aten.avg_pool2d.default"(%x) {divisor_override = 3 : i64, kernel_size = array<i64: 2, 2>, operand_names = ["self"], stride = array<i64>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("avg_pool2d_2")
  "func.return"(%0) : (tensor<1x2x2x2xf32>) -> ()
}) : () -> ()

// adaptive_avg_pool2d to 1x1 (cnn model): each spatial dim is contracted with a
// [1, 4] matrix of 0.25 and the new dim moved back in place.
// CHECK-LABEL: sym_name = "adaptive_avg_pool2d_global"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x16x4x4xf32>)
// CHECK: "stablehlo.constant"() {value = dense<2.500000e-01> : tensor<4xf32>}
// CHECK: [[M:%[0-9]+]] = "stablehlo.reshape"({{%[0-9]+}}) : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[M]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
// CHECK-SAME: -> tensor<2x16x4x1xf32>
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"([[D]]) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x16x4x1xf32>) -> tensor<2x16x1x4xf32>
// CHECK: [[R:%[0-9]+]] = "stablehlo.dot_general"([[T]], {{%[0-9]+}}) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>
// CHECK-SAME: -> tensor<2x16x1x1xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x16x4x4xf32>) -> tensor<2x16x1x1xf32>, sym_name = "adaptive_avg_pool2d_global"}> ({
^bb0(%x: tensor<2x16x4x4xf32>):
  %0 = "aten.adaptive_avg_pool2d.default"(%x) {operand_names = ["self"], output_size = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>) -> tensor<2x16x1x1xf32> loc("adaptive_avg_pool2d")
  "func.return"(%0) : (tensor<2x16x1x1xf32>) -> ()
}) : () -> ()

// 5 -> 3 rows: windows [0, 2), [1, 4), [3, 5) (overlapping, PyTorch's floor/ceil
// bounds); the width 4 -> 4 is left alone.
// CHECK-LABEL: sym_name = "adaptive_avg_pool2d_uneven"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<1x2x5x4xf32>)
// CHECK: "stablehlo.constant"() {value = dense<[5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.333333343, 0.333333343, 0.333333343, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01]> : tensor<15xf32>}
// CHECK: [[M:%[0-9]+]] = "stablehlo.reshape"({{%[0-9]+}}) : (tensor<15xf32>) -> tensor<3x5xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.dot_general"([[X]], [[M]]) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
// CHECK-SAME: -> tensor<1x2x4x3xf32>
// CHECK: [[T:%[0-9]+]] = "stablehlo.transpose"([[D]]) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x3xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: "func.return"([[T]])
"func.func"() <{function_type = (tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>, sym_name = "adaptive_avg_pool2d_uneven"}> ({
^bb0(%x: tensor<1x2x5x4xf32>):
  %0 = "aten._adaptive_avg_pool2d.default"(%x) {operand_names = ["self"], output_size = array<i64: 3, 4>} : (tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> loc("adaptive_avg_pool2d_1")
  "func.return"(%0) : (tensor<1x2x3x4xf32>) -> ()
}) : () -> ()

// max_pool2d_with_indices_backward: the output gradient scatter-added into each plane
// at the positions the forward's indices name ([plane, index] pairs).
// CHECK-LABEL: sym_name = "max_pool2d_backward"
// CHECK: "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<32x16x1xi64>
// CHECK: "stablehlo.concatenate"
// CHECK: "stablehlo.scatter"
// CHECK: "stablehlo.add"
// CHECK: (tensor<32x64xf32>, tensor<32x16x2xi64>, tensor<32x16xf32>) -> tensor<32x64xf32>
// CHECK: "stablehlo.reshape"({{.*}}) : (tensor<32x64xf32>) -> tensor<4x8x8x8xf32>
"func.func"() <{function_type = (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>, tensor<4x8x4x4xi64>) -> tensor<4x8x8x8xf32>, sym_name = "max_pool2d_backward"}> ({
^bb0(%gy: tensor<4x8x4x4xf32>, %x: tensor<4x8x8x8xf32>, %i: tensor<4x8x4x4xi64>):
  %0 = "aten.max_pool2d_with_indices_backward.default"(%gy, %x, %i) {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, operand_names = ["grad_output", "self", "indices"], padding = array<i64: 0, 0>, stride = array<i64>} : (tensor<4x8x4x4xf32>, tensor<4x8x8x8xf32>, tensor<4x8x4x4xi64>) -> tensor<4x8x8x8xf32> loc("max_pool2d_backward")
  "func.return"(%0) : (tensor<4x8x8x8xf32>) -> ()
}) : () -> ()
