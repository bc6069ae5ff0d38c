// Reduction family (compiler/src/passes/lower_aten_to_stablehlo/reduction.rs):
// sum/mean (negative dims, keepdim, dtype, f16 accumulation in f32, bool -> i64),
// amax/max (init values per dtype, NaN-propagating float body), max.dim/argmax/argmin
// (value+index reduce), any/all (an explicit empty dim list reduces nothing), var/std (correction), softmax/log_softmax (f16/bf16 computed in f32),
// logsumexp, cumsum/cumprod (reduce_window).
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// mean over dim -1 with keepdim (reduce, divide by 32, reshape back to rank 3), and
// over dims [0, 1] (divide by 16).
// CHECK-LABEL: sym_name = "mean_keepdim_negative_dim"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x8x32xf32>)
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[X]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: }) {dimensions = array<i64: 2>} : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK: "stablehlo.constant"() {value = dense<3.200000e+01> : tensor<f32>}
// CHECK: [[M:%[0-9]+]] = "stablehlo.divide"([[S]], {{%[0-9]+}}) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: [[K:%[0-9]+]] = "stablehlo.reshape"([[M]]) : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
// CHECK: [[S2:%[0-9]+]] = "stablehlo.reduce"([[X]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 0, 1>} : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<32xf32>
// CHECK: "stablehlo.constant"() {value = dense<1.600000e+01> : tensor<f32>}
// CHECK: [[M2:%[0-9]+]] = "stablehlo.divide"([[S2]], {{%[0-9]+}})
// CHECK: "func.return"([[K]], [[M2]])
"func.func"() <{function_type = (tensor<2x8x32xf32>) -> (tensor<2x8x1xf32>, tensor<32xf32>), sym_name = "mean_keepdim_negative_dim"}> ({
^bb0(%a: tensor<2x8x32xf32>):
  %0 = "aten.mean.dim"(%a) {dim = array<i64: -1>, keepdim = true, operand_names = ["self"]} : (tensor<2x8x32xf32>) -> tensor<2x8x1xf32> loc("mean")
  %1 = "aten.mean.dim"(%a) {dim = array<i64: 0, 1>, operand_names = ["self"]} : (tensor<2x8x32xf32>) -> tensor<32xf32> loc("mean_1")
  "func.return"(%0, %1) : (tensor<2x8x1xf32>, tensor<32xf32>) -> ()
}) : () -> ()

// f16 sums accumulate in f32; with dtype=f32 the result stays f32.
// CHECK-LABEL: sym_name = "sum_f16_accumulates_in_f32"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x6xf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<4x6xf16>) -> tensor<4x6xf32>
// CHECK: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[XF]], [[Z]]) ({
// CHECK: ^bb0({{%arg[0-9]+}}: tensor<f32>, {{%arg[0-9]+}}: tensor<f32>):
// CHECK: }) {dimensions = array<i64: 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: [[SH:%[0-9]+]] = "stablehlo.convert"([[S]]) : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: [[XF2:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<4x6xf16>) -> tensor<4x6xf32>
// CHECK: [[ALL:%[0-9]+]] = "stablehlo.reduce"([[XF2]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 0, 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: "func.return"([[SH]], [[ALL]])
"func.func"() <{function_type = (tensor<4x6xf16>) -> (tensor<4xf16>, tensor<f32>), sym_name = "sum_f16_accumulates_in_f32"}> ({
^bb0(%a: tensor<4x6xf16>):
  %0 = "aten.sum.dim_IntList"(%a) {dim = array<i64: 1>, operand_names = ["self"]} : (tensor<4x6xf16>) -> tensor<4xf16> loc("sum")
  %1 = "aten.sum.default"(%a) {dtype = "f32", operand_names = ["self"]} : (tensor<4x6xf16>) -> tensor<f32> loc("sum_all")
  "func.return"(%0, %1) : (tensor<4xf16>, tensor<f32>) -> ()
}) : () -> ()

// sum of bools counts in i64; any.dim with keepdim is an `or` reduce on i1.
// CHECK-LABEL: sym_name = "bool_reductions"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xi1>)
// CHECK: [[XI:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<2x3xi1>) -> tensor<2x3xi64>
// CHECK: "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[XI]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"({{.*}}) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: }) {dimensions = array<i64: 0>} : (tensor<2x3xi64>, tensor<i64>) -> tensor<3xi64>
// CHECK: "stablehlo.constant"() {value = dense<false> : tensor<i1>}
// CHECK: [[A:%[0-9]+]] = "stablehlo.reduce"([[X]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.or"
// CHECK: }) {dimensions = array<i64: 1>} : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
// CHECK: [[AK:%[0-9]+]] = "stablehlo.reshape"([[A]]) : (tensor<2xi1>) -> tensor<2x1xi1>
// CHECK: "func.return"([[S]], [[AK]])
"func.func"() <{function_type = (tensor<2x3xi1>) -> (tensor<3xi64>, tensor<2x1xi1>), sym_name = "bool_reductions"}> ({
^bb0(%a: tensor<2x3xi1>):
  %0 = "aten.sum.dim_IntList"(%a) {dim = array<i64: 0>, operand_names = ["self"]} : (tensor<2x3xi1>) -> tensor<3xi64> loc("sum_bool")
  %1 = "aten.any.dim"(%a) {dim = -1 : i64, keepdim = true, operand_names = ["self"]} : (tensor<2x3xi1>) -> tensor<2x1xi1> loc("any")
  "func.return"(%0, %1) : (tensor<3xi64>, tensor<2x1xi1>) -> ()
}) : () -> ()

// amax on i32 starts from INT32_MIN (its body is the bare maximum: no NaN for
// integers); a full max of f32 starts from -inf (its body propagates NaN, see
// amax_f32_nan).
// CHECK-LABEL: sym_name = "amax_int_max_full"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x5xi32>, [[B:%arg[0-9]+]]: tensor<2x5xf32>)
// CHECK: [[LO:%[0-9]+]] = "stablehlo.constant"() {value = dense<-2147483648> : tensor<i32>}
// CHECK: [[AM:%[0-9]+]] = "stablehlo.reduce"([[A]], [[LO]]) ({
// CHECK-NEXT: ^bb0({{%arg[0-9]+}}: tensor<i32>, {{%arg[0-9]+}}: tensor<i32>):
// CHECK-NEXT: [[IM:%[0-9]+]] = "stablehlo.maximum"
// CHECK-NEXT: "stablehlo.return"([[IM]]) : (tensor<i32>) -> ()
// CHECK-NEXT: }) {dimensions = array<i64: 1>} : (tensor<2x5xi32>, tensor<i32>) -> tensor<2xi32>
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[M:%[0-9]+]] = "stablehlo.reduce"([[B]], [[NINF]]) ({
// CHECK: "stablehlo.maximum"
// CHECK: }) {dimensions = array<i64: 0, 1>} : (tensor<2x5xf32>, tensor<f32>) -> tensor<f32>
// CHECK: "func.return"([[AM]], [[M]])
"func.func"() <{function_type = (tensor<2x5xi32>, tensor<2x5xf32>) -> (tensor<2xi32>, tensor<f32>), sym_name = "amax_int_max_full"}> ({
^bb0(%a: tensor<2x5xi32>, %b: tensor<2x5xf32>):
  %0 = "aten.amax.default"(%a) {dim = array<i64: 1>, operand_names = ["self"]} : (tensor<2x5xi32>) -> tensor<2xi32> loc("amax")
  %1 = "aten.max.default"(%b) {operand_names = ["self"]} : (tensor<2x5xf32>) -> tensor<f32> loc("max")
  "func.return"(%0, %1) : (tensor<2xi32>, tensor<f32>) -> ()
}) : () -> ()

// amax of f32 propagates NaN like PyTorch (XLA's CPU maximum may drop it): the body
// takes the maximum, then selects b if b is NaN and a if a is NaN (b != b, a != a),
// so a NaN anywhere in the row wins whatever the reduction order.
// CHECK-LABEL: sym_name = "amax_f32_nan"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x5xf32>)
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[R:%[0-9]+]] = "stablehlo.reduce"([[X]], [[NINF]]) ({
// CHECK-NEXT: ^bb0([[LHS:%arg[0-9]+]]: tensor<f32>, [[RHS:%arg[0-9]+]]: tensor<f32>):
// CHECK-NEXT: [[MX:%[0-9]+]] = "stablehlo.maximum"([[LHS]], [[RHS]]) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: [[LNAN:%[0-9]+]] = "stablehlo.compare"([[LHS]], [[LHS]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT: [[RNAN:%[0-9]+]] = "stablehlo.compare"([[RHS]], [[RHS]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.select"([[RNAN]], [[RHS]], [[MX]]) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: [[R2:%[0-9]+]] = "stablehlo.select"([[LNAN]], [[LHS]], [[R1]]) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: "stablehlo.return"([[R2]]) : (tensor<f32>) -> ()
// CHECK-NEXT: }) {dimensions = array<i64: 1>} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: [[K:%[0-9]+]] = "stablehlo.reshape"([[R]]) : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: "func.return"([[K]])
"func.func"() <{function_type = (tensor<2x5xf32>) -> tensor<2x1xf32>, sym_name = "amax_f32_nan"}> ({
^bb0(%a: tensor<2x5xf32>):
  %0 = "aten.amax.default"(%a) {dim = array<i64: -1>, keepdim = true, operand_names = ["self"]} : (tensor<2x5xf32>) -> tensor<2x1xf32> loc("amax_f32")
  "func.return"(%0) : (tensor<2x1xf32>) -> ()
}) : () -> ()

// any.dims / all.dims with an explicit empty dim list reduce nothing (PyTorch: the
// result is x != 0 elementwise, same shape); only an absent dim reduces every dim.
// CHECK-LABEL: sym_name = "any_all_dims_empty"
// CHECK: ^bb0([[I:%arg[0-9]+]]: tensor<2x3xi64>, [[F:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NOT: "stablehlo.reduce"
// CHECK: [[ANY:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction NE
// CHECK-SAME: -> tensor<2x3xi1>
// CHECK-NOT: "stablehlo.reduce"
// CHECK: [[ALL:%[0-9]+]] = "stablehlo.compare"([[F]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction NE
// CHECK-SAME: -> tensor<2x3xi1>
// CHECK-NEXT: "func.return"([[ANY]], [[ALL]])
"func.func"() <{function_type = (tensor<2x3xi64>, tensor<2x3xf32>) -> (tensor<2x3xi1>, tensor<2x3xi1>), sym_name = "any_all_dims_empty"}> ({
^bb0(%a: tensor<2x3xi64>, %b: tensor<2x3xf32>):
  %0 = "aten.any.dims"(%a) {dim = array<i64>, operand_names = ["self"]} : (tensor<2x3xi64>) -> tensor<2x3xi1> loc("any_dims_empty")
  %1 = "aten.all.dims"(%b) {dim = array<i64>, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xi1> loc("all_dims_empty")
  "func.return"(%0, %1) : (tensor<2x3xi1>, tensor<2x3xi1>) -> ()
}) : () -> ()

// max.dim returns values and indices from one variadic reduce over (x, iota), starting
// from (-inf, INT64_MAX) so that any real element wins a tie with the init value.
// The body (checked in full once): a = (av, ai) wins when av > bv or av is NaN, and bv
// is not NaN; on equal values or two NaNs the smaller index is kept (first
// occurrence, as in PyTorch, and commutative as XLA requires). argmin over dim 0 is
// the same with LT and +inf; argmax without dim flattens first.
// CHECK-LABEL: sym_name = "max_dim_argmax"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x4xf32>)
// CHECK: [[I1:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x4xi64>
// CHECK: [[V1:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[Z1:%[0-9]+]] = "stablehlo.constant"() {value = dense<9223372036854775807> : tensor<i64>}
// CHECK: [[MAX:%[0-9]+]]:2 = "stablehlo.reduce"([[X]], [[I1]], [[V1]], [[Z1]]) ({
// CHECK-NEXT: ^bb0([[AV:%arg[0-9]+]]: tensor<f32>, [[AI:%arg[0-9]+]]: tensor<i64>, [[BV:%arg[0-9]+]]: tensor<f32>, [[BI:%arg[0-9]+]]: tensor<i64>):
// CHECK-NEXT: [[GT:%[0-9]+]] = "stablehlo.compare"([[AV]], [[BV]])
// CHECK-SAME: comparison_direction GT
// CHECK-NEXT: [[ANAN:%[0-9]+]] = "stablehlo.compare"([[AV]], [[AV]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: [[BNAN:%[0-9]+]] = "stablehlo.compare"([[BV]], [[BV]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: [[NOTBNAN:%[0-9]+]] = "stablehlo.not"([[BNAN]])
// CHECK-NEXT: [[GTORNAN:%[0-9]+]] = "stablehlo.or"([[GT]], [[ANAN]])
// CHECK-NEXT: [[APICK:%[0-9]+]] = "stablehlo.and"([[GTORNAN]], [[NOTBNAN]])
// CHECK-NEXT: [[BOTHNAN:%[0-9]+]] = "stablehlo.and"([[ANAN]], [[BNAN]])
// CHECK-NEXT: [[EQ:%[0-9]+]] = "stablehlo.compare"([[AV]], [[BV]])
// CHECK-SAME: comparison_direction EQ
// CHECK-NEXT: [[TIE:%[0-9]+]] = "stablehlo.or"([[EQ]], [[BOTHNAN]])
// CHECK-NEXT: [[V:%[0-9]+]] = "stablehlo.select"([[APICK]], [[AV]], [[BV]])
// CHECK-NEXT: [[MINI:%[0-9]+]] = "stablehlo.minimum"([[AI]], [[BI]])
// CHECK-NEXT: [[PICKI:%[0-9]+]] = "stablehlo.select"([[APICK]], [[AI]], [[BI]])
// CHECK-NEXT: [[I:%[0-9]+]] = "stablehlo.select"([[TIE]], [[MINI]], [[PICKI]])
// CHECK-NEXT: "stablehlo.return"([[V]], [[I]]) : (tensor<f32>, tensor<i64>) -> ()
// CHECK-NEXT: }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<3x4xi64>, tensor<f32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xi64>)
// CHECK: [[MV:%[0-9]+]] = "stablehlo.reshape"([[MAX]]#0) : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: [[MI:%[0-9]+]] = "stablehlo.reshape"([[MAX]]#1) : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK: [[I0:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3x4xi64>
// CHECK: [[PINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0x7F800000> : tensor<f32>}
// CHECK: [[Z2:%[0-9]+]] = "stablehlo.constant"() {value = dense<9223372036854775807> : tensor<i64>}
// CHECK: [[MIN:%[0-9]+]]:2 = "stablehlo.reduce"([[X]], [[I0]], [[PINF]], [[Z2]]) ({
// CHECK: comparison_direction LT
// CHECK: "stablehlo.minimum"
// CHECK: }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<3x4xi64>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi64>)
// CHECK: [[FLAT:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<3x4xf32>) -> tensor<12xf32>
// CHECK: [[I3:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<12xi64>
// CHECK: [[AM:%[0-9]+]]:2 = "stablehlo.reduce"([[FLAT]], [[I3]], {{%[0-9]+}}, {{%[0-9]+}}) ({
// CHECK: comparison_direction GT
// CHECK: }) {dimensions = array<i64: 0>} : (tensor<12xf32>, tensor<12xi64>, tensor<f32>, tensor<i64>) -> (tensor<f32>, tensor<i64>)
// CHECK: [[AK:%[0-9]+]] = "stablehlo.reshape"([[AM]]#1) : (tensor<i64>) -> tensor<1x1xi64>
// CHECK: "func.return"([[MV]], [[MI]], [[MIN]]#1, [[AK]])
"func.func"() <{function_type = (tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x1xi64>, tensor<4xi64>, tensor<1x1xi64>), sym_name = "max_dim_argmax"}> ({
^bb0(%a: tensor<3x4xf32>):
  %0:2 = "aten.max.dim"(%a) {dim = -1 : i64, keepdim = true, operand_names = ["self"]} : (tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x1xi64>) loc("max_dim")
  %1 = "aten.argmin.default"(%a) {dim = 0 : i64, operand_names = ["self"]} : (tensor<3x4xf32>) -> tensor<4xi64> loc("argmin")
  %2 = "aten.argmax.default"(%a) {keepdim = true, operand_names = ["self"]} : (tensor<3x4xf32>) -> tensor<1x1xi64> loc("argmax")
  "func.return"(%0#0, %0#1, %1, %2) : (tensor<3x1xf32>, tensor<3x1xi64>, tensor<4xi64>, tensor<1x1xi64>) -> ()
}) : () -> ()

// var with correction=0 divides by N (5); std without a correction uses Bessel's
// (N - 1 = 3) and takes the square root.
// CHECK-LABEL: sym_name = "var_std_correction"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x5xf32>)
// CHECK: }) {dimensions = array<i64: 1>} : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: "stablehlo.constant"() {value = dense<5.000000e+00> : tensor<f32>}
// CHECK: [[MEAN:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MEAN]]) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x5xf32>
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[D]], [[D]])
// CHECK: [[SS:%[0-9]+]] = "stablehlo.reduce"([[SQ]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.constant"() {value = dense<5.000000e+00> : tensor<f32>}
// CHECK: [[VAR:%[0-9]+]] = "stablehlo.divide"([[SS]], {{%[0-9]+}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: }) {dimensions = array<i64: 0>} : (tensor<4x5xf32>, tensor<f32>) -> tensor<5xf32>
// CHECK: "stablehlo.constant"() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK: "stablehlo.constant"() {value = dense<3.000000e+00> : tensor<f32>}
// CHECK: [[V2:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[STD:%[0-9]+]] = "stablehlo.sqrt"([[V2]]) : (tensor<5xf32>) -> tensor<5xf32>
// CHECK: [[STDK:%[0-9]+]] = "stablehlo.reshape"([[STD]]) : (tensor<5xf32>) -> tensor<1x5xf32>
// CHECK: "func.return"([[VAR]], [[STDK]])
"func.func"() <{function_type = (tensor<4x5xf32>) -> (tensor<4xf32>, tensor<1x5xf32>), sym_name = "var_std_correction"}> ({
^bb0(%a: tensor<4x5xf32>):
  %0 = "aten.var.correction"(%a) {correction = 0 : i64, dim = array<i64: 1>, operand_names = ["self"]} : (tensor<4x5xf32>) -> tensor<4xf32> loc("var")
  %1 = "aten.std.correction"(%a) {dim = array<i64: 0>, keepdim = true, operand_names = ["self"]} : (tensor<4x5xf32>) -> tensor<1x5xf32> loc("std")
  "func.return"(%0, %1) : (tensor<4xf32>, tensor<1x5xf32>) -> ()
}) : () -> ()

// Stable softmax along dim -1: exp(x - max) / sum, no conversions for f32. The max is
// a plain maximum, without NaN checks: it is only a shift, and a NaN in the row makes
// the whole row NaN through exp and the sum anyway.
// CHECK-LABEL: sym_name = "softmax_f32"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x8xf32>)
// CHECK-NOT: "stablehlo.convert"
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[MAX:%[0-9]+]] = "stablehlo.reduce"([[X]], [[NINF]]) ({
// CHECK-NEXT: ^bb0([[L:%arg[0-9]+]]: tensor<f32>, [[R:%arg[0-9]+]]: tensor<f32>):
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.maximum"([[L]], [[R]])
// CHECK-NEXT: "stablehlo.return"([[M]])
// CHECK-NEXT: }) {dimensions = array<i64: 2>} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[MAX]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
// CHECK: [[SH:%[0-9]+]] = "stablehlo.subtract"([[X]], [[MB]])
// CHECK: [[EX:%[0-9]+]] = "stablehlo.exponential"([[SH]])
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.reduce"([[EX]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.add"
// CHECK: }) {dimensions = array<i64: 2>}
// CHECK: [[SB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[SUM]]) {broadcast_dimensions = array<i64: 0, 1>}
// CHECK: [[R:%[0-9]+]] = "stablehlo.divide"([[EX]], [[SB]])
// CHECK-NOT: "stablehlo.convert"
// CHECK: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>, sym_name = "softmax_f32"}> ({
^bb0(%a: tensor<2x4x8xf32>):
  %0 = "aten._softmax.default"(%a) {dim = -1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("_softmax")
  "func.return"(%0) : (tensor<2x4x8xf32>) -> ()
}) : () -> ()

// f16 softmax is computed in f32 and rounded back; with dtype=f32 the result stays
// f32. Dim 1 keeps dims [0, 2] in the broadcasts.
// CHECK-LABEL: sym_name = "softmax_f16_in_f32"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x4x8xf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
// CHECK: [[MAX:%[0-9]+]] = "stablehlo.reduce"([[XF]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 1>} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK: "stablehlo.broadcast_in_dim"([[MAX]]) {broadcast_dimensions = array<i64: 0, 2>}
// CHECK: "stablehlo.exponential"
// CHECK: [[P:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[PH:%[0-9]+]] = "stablehlo.convert"([[P]]) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf16>
// CHECK: [[XF2:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
// CHECK: "stablehlo.reduce"([[XF2]], {{%[0-9]+}}) ({
// CHECK: }) {dimensions = array<i64: 2>} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK: [[P2:%[0-9]+]] = "stablehlo.divide"
// CHECK-NEXT: "func.return"([[PH]], [[P2]])
"func.func"() <{function_type = (tensor<2x4x8xf16>) -> (tensor<2x4x8xf16>, tensor<2x4x8xf32>), sym_name = "softmax_f16_in_f32"}> ({
^bb0(%a: tensor<2x4x8xf16>):
  %0 = "aten.softmax.int"(%a) {dim = 1 : i64, operand_names = ["self"]} : (tensor<2x4x8xf16>) -> tensor<2x4x8xf16> loc("softmax")
  %1 = "aten.softmax.int"(%a) {dim = -1 : i64, dtype = "f32", operand_names = ["self"]} : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32> loc("softmax_1")
  "func.return"(%0, %1) : (tensor<2x4x8xf16>, tensor<2x4x8xf32>) -> ()
}) : () -> ()

// bf16 log_softmax in f32: (x - max) - log(sum(exp(x - max))), rounded once.
// CHECK-LABEL: sym_name = "log_softmax_bf16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x5xbf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<3x5xbf16>) -> tensor<3x5xf32>
// CHECK: [[SH:%[0-9]+]] = "stablehlo.subtract"([[XF]], {{%[0-9]+}})
// CHECK: [[EX:%[0-9]+]] = "stablehlo.exponential"([[SH]])
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.reduce"([[EX]], {{%[0-9]+}}) ({
// CHECK: [[SB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[SUM]])
// CHECK: [[LOG:%[0-9]+]] = "stablehlo.log"([[SB]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.subtract"([[SH]], [[LOG]])
// CHECK: [[RH:%[0-9]+]] = "stablehlo.convert"([[R]]) : (tensor<3x5xf32>) -> tensor<3x5xbf16>
// CHECK-NEXT: "func.return"([[RH]])
"func.func"() <{function_type = (tensor<3x5xbf16>) -> tensor<3x5xbf16>, sym_name = "log_softmax_bf16"}> ({
^bb0(%a: tensor<3x5xbf16>):
  %0 = "aten._log_softmax.default"(%a) {dim = 1 : i64, half_to_float = false, operand_names = ["self"]} : (tensor<3x5xbf16>) -> tensor<3x5xbf16> loc("log_softmax")
  "func.return"(%0) : (tensor<3x5xbf16>) -> ()
}) : () -> ()

// logsumexp guards infinite maxima (all -inf rows give -inf, not NaN).
// CHECK-LABEL: sym_name = "logsumexp"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x5xf32>)
// CHECK: [[M:%[0-9]+]] = "stablehlo.reduce"([[X]], {{%[0-9]+}}) ({
// CHECK: "stablehlo.maximum"
// CHECK: }) {dimensions = array<i64: 1>}
// CHECK: [[ABS:%[0-9]+]] = "stablehlo.abs"([[M]])
// CHECK: "stablehlo.constant"() {value = dense<0x7F800000> : tensor<f32>}
// CHECK: [[INF:%[0-9]+]] = "stablehlo.compare"([[ABS]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction EQ
// CHECK: [[SAFE:%[0-9]+]] = "stablehlo.select"([[INF]], {{%[0-9]+}}, [[M]])
// CHECK: "stablehlo.broadcast_in_dim"([[SAFE]]) {broadcast_dimensions = array<i64: 0>}
// CHECK: "stablehlo.exponential"
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"
// CHECK: [[L:%[0-9]+]] = "stablehlo.log"([[S]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.add"([[L]], [[SAFE]])
// CHECK: [[K:%[0-9]+]] = "stablehlo.reshape"([[R]]) : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: "func.return"([[K]])
"func.func"() <{function_type = (tensor<3x5xf32>) -> tensor<3x1xf32>, sym_name = "logsumexp"}> ({
^bb0(%a: tensor<3x5xf32>):
  %0 = "aten.logsumexp.default"(%a) {dim = array<i64: -1>, keepdim = true, operand_names = ["self"]} : (tensor<3x5xf32>) -> tensor<3x1xf32> loc("logsumexp")
  "func.return"(%0) : (tensor<3x1xf32>) -> ()
}) : () -> ()

// cumsum over dim -1 of bools in i64, cumprod over dim 0: an inclusive scan as a
// reduce_window whose window (size n, low padding n - 1) covers every earlier element.
// CHECK-LABEL: sym_name = "cumsum_cumprod"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x8xi1>, [[B:%arg[0-9]+]]: tensor<2x8xf32>)
// CHECK: [[AI:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<2x8xi1>) -> tensor<2x8xi64>
// CHECK: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: [[CS:%[0-9]+]] = "stablehlo.reduce_window"([[AI]], [[Z]]) ({
// CHECK: "stablehlo.add"
// CHECK: }) {base_dilations = array<i64: 1, 1>, padding = dense<{{\[\[}}0, 0], [7, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 8>, window_strides = array<i64: 1, 1>} : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi64>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK: [[CP:%[0-9]+]] = "stablehlo.reduce_window"([[B]], [[ONE]]) ({
// CHECK: "stablehlo.multiply"
// CHECK: }) {base_dilations = array<i64: 1, 1>, padding = dense<{{\[\[}}1, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>}
// CHECK: "func.return"([[CS]], [[CP]])
"func.func"() <{function_type = (tensor<2x8xi1>, tensor<2x8xf32>) -> (tensor<2x8xi64>, tensor<2x8xf32>), sym_name = "cumsum_cumprod"}> ({
^bb0(%a: tensor<2x8xi1>, %b: tensor<2x8xf32>):
  %0 = "aten.cumsum.default"(%a) {dim = -1 : i64, operand_names = ["self"]} : (tensor<2x8xi1>) -> tensor<2x8xi64> loc("cumsum")
  %1 = "aten.cumprod.default"(%b) {dim = 0 : i64, operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("cumprod")
  "func.return"(%0, %1) : (tensor<2x8xi64>, tensor<2x8xf32>) -> ()
}) : () -> ()

// linalg_vector_norm(x, ord=2, dim=-1): sqrt of the sum of squares of |x|.
// CHECK-LABEL: sym_name = "vector_norm"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3x4xf32>)
// CHECK: [[A:%[0-9]+]] = "stablehlo.abs"([[X]])
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[A]], [[A]])
// CHECK: [[S:%[0-9]+]] = "stablehlo.reduce"([[SQ]], {{%[0-9]+}})
// CHECK: "stablehlo.add"
// CHECK: dimensions = array<i64: 2>
// CHECK: [[R:%[0-9]+]] = "stablehlo.sqrt"([[S]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3x4xf32>) -> tensor<2x3xf32>, sym_name = "vector_norm"}> ({
^bb0(%x: tensor<2x3x4xf32>):
  %0 = "aten.linalg_vector_norm.default"(%x) {dim = array<i64: -1>, keepdim = false, operand_names = ["self"], ord = 2.000000e+00 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3xf32> loc("norm")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// _cdist_forward with p = 2: x1 [3, 2] and x2 [4, 2] broadcast to [3, 4, 2] (x1 on
// dims 0 and 2, x2 on dims 1 and 2), and the differences' squares are summed over the
// feature dim before a sqrt.
// CHECK-LABEL: sym_name = "cdist"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<3x2xf32>, [[B:%arg[0-9]+]]: tensor<4x2xf32>)
// CHECK-NEXT: [[AB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<3x2xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<4x2xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.subtract"([[AB]], [[BB]])
// CHECK-NEXT: [[ABS:%[0-9]+]] = "stablehlo.abs"([[D]])
// CHECK-NEXT: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[ABS]], [[ABS]])
// CHECK-NEXT: [[Z:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[SS:%[0-9]+]] = "stablehlo.reduce"([[SQ]], [[Z]])
// CHECK: "stablehlo.add"
// CHECK: dimensions = array<i64: 2>} : (tensor<3x4x2xf32>, tensor<f32>) -> tensor<3x4xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.sqrt"([[SS]]) : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<3x4xf32>, sym_name = "cdist"}> ({
^bb0(%a: tensor<3x2xf32>, %b: tensor<4x2xf32>):
  %0 = "aten._cdist_forward.default"(%a, %b) {operand_names = ["x1", "x2"], p = 2.000000e+00 : f64} : (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<3x4xf32> loc("cdist")
  "func.return"(%0) : (tensor<3x4xf32>) -> ()
}) : () -> ()

// _pdist_forward with p = 1 on [4, 2]: the [4, 4] matrix of summed absolute
// differences, flattened, and the upper triangle i < j read in row-major order with a
// gather of the constant flat indices i * 4 + j = 1, 2, 3, 6, 7, 11.
// CHECK-LABEL: sym_name = "pdist"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4x2xf32>)
// CHECK-NEXT: [[XA:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[X]]) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x2xf32>) -> tensor<4x4x2xf32>
// CHECK-NEXT: [[XB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[X]]) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<4x2xf32>) -> tensor<4x4x2xf32>
// CHECK-NEXT: [[D:%[0-9]+]] = "stablehlo.subtract"([[XA]], [[XB]])
// CHECK-NEXT: [[ABS:%[0-9]+]] = "stablehlo.abs"([[D]])
// CHECK-NOT: "stablehlo.multiply"
// CHECK: [[DIST:%[0-9]+]] = "stablehlo.reduce"([[ABS]], {{%[0-9]+}})
// CHECK: dimensions = array<i64: 2>} : (tensor<4x4x2xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK-NEXT: [[IDX:%[0-9]+]] = "stablehlo.constant"() {value = dense<[1, 2, 3, 6, 7, 11]> : tensor<6xi64>}
// CHECK-NEXT: [[FLAT:%[0-9]+]] = "stablehlo.reshape"([[DIST]]) : (tensor<4x4xf32>) -> tensor<16xf32>
// CHECK: [[G:%[0-9]+]] = "stablehlo.gather"([[FLAT]], {{%[0-9]+}})
// CHECK-SAME: (tensor<16xf32>, tensor<6x1xi64>) -> tensor<6xf32>
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<4x2xf32>) -> tensor<6xf32>, sym_name = "pdist"}> ({
^bb0(%a: tensor<4x2xf32>):
  %0 = "aten._pdist_forward.default"(%a) {operand_names = ["self"], p = 1.000000e+00 : f64} : (tensor<4x2xf32>) -> tensor<6xf32> loc("pdist")
  "func.return"(%0) : (tensor<6xf32>) -> ()
}) : () -> ()

// histc(bins=4, min=0, max=2) of [2, 3]: bin = floor((x - 0) * 4 / (2 - 0)) capped at
// 3 (so x == max falls in the last bin), counted only for 0 <= x <= 2, through a
// one-hot [6, 4] comparison with an iota over bins summed over the elements.
// CHECK-LABEL: sym_name = "histc"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NEXT: [[F:%[0-9]+]] = "stablehlo.reshape"([[X]]) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: [[LOS:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[HIS:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[LO:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[LOS]])
// CHECK-NEXT: [[HI:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[HIS]])
// CHECK-NEXT: [[WID:%[0-9]+]] = "stablehlo.subtract"([[HI]], [[LO]])
// CHECK-NEXT: [[OFF:%[0-9]+]] = "stablehlo.subtract"([[F]], [[LO]])
// CHECK-NEXT: [[NBS:%[0-9]+]] = "stablehlo.constant"() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[NB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[NBS]])
// CHECK-NEXT: [[SC:%[0-9]+]] = "stablehlo.multiply"([[OFF]], [[NB]])
// CHECK-NEXT: [[POS:%[0-9]+]] = "stablehlo.divide"([[SC]], [[WID]])
// CHECK-NEXT: [[FL:%[0-9]+]] = "stablehlo.floor"([[POS]])
// CHECK-NEXT: [[BIN:%[0-9]+]] = "stablehlo.convert"([[FL]]) : (tensor<6xf32>) -> tensor<6xi64>
// CHECK-NEXT: [[LAST:%[0-9]+]] = "stablehlo.constant"() {value = dense<3> : tensor<6xi64>}
// CHECK-NEXT: [[BINC:%[0-9]+]] = "stablehlo.minimum"([[BIN]], [[LAST]])
// CHECK-NEXT: [[GE:%[0-9]+]] = "stablehlo.compare"([[F]], [[LO]])
// CHECK-SAME: comparison_direction GE
// CHECK-NEXT: [[LE:%[0-9]+]] = "stablehlo.compare"([[F]], [[HI]])
// CHECK-SAME: comparison_direction LE
// CHECK-NEXT: [[IN:%[0-9]+]] = "stablehlo.and"([[GE]], [[LE]])
// CHECK-NEXT: [[COL:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<6x4xi64>
// CHECK-NEXT: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[BINC]]) {broadcast_dimensions = array<i64: 0>} : (tensor<6xi64>) -> tensor<6x4xi64>
// CHECK-NEXT: [[HIT:%[0-9]+]] = "stablehlo.compare"([[BB]], [[COL]])
// CHECK-SAME: comparison_direction EQ
// CHECK-NEXT: [[INB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[IN]]) {broadcast_dimensions = array<i64: 0>} : (tensor<6xi1>) -> tensor<6x4xi1>
// CHECK-NEXT: [[H:%[0-9]+]] = "stablehlo.and"([[HIT]], [[INB]])
// CHECK-NEXT: [[HF:%[0-9]+]] = "stablehlo.convert"([[H]]) : (tensor<6x4xi1>) -> tensor<6x4xf32>
// CHECK: [[CNT:%[0-9]+]] = "stablehlo.reduce"([[HF]], {{%[0-9]+}})
// CHECK: dimensions = array<i64: 0>} : (tensor<6x4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: "func.return"([[CNT]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<4xf32>, sym_name = "histc"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.histc.default"(%a) {bins = 4 : i64, max = 2.000000e+00 : f64, min = 0.000000e+00 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<4xf32> loc("histc")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
