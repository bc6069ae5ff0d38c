// Elementwise family (compiler/src/passes/lower_aten_to_stablehlo/elementwise.rs):
// arithmetic with broadcasting, alpha and scalar attributes, integer division modes,
// comparisons with PyTorch type promotion, where/masked_fill, activations, pow
// special cases, clamps, NaN-propagating maximum/minimum, sign (NaN -> 0) and
// abs/sign of u8/bool, logical ops, dtype conversions, remainder/fmod, dropout,
// inverse trig / hyperbolic forms (asin, acos, sinh), trunc and log2.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// add.Tensor: `other` is broadcast along the leading dim, alpha becomes a splat that
// scales `other` (not `self`).
// CHECK-LABEL: sym_name = "add_broadcast_alpha"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<3xf32>)
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: [[ALPHA:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK: [[ALPHAB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[ALPHA]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK: [[SCALED:%[0-9]+]] = "stablehlo.multiply"([[BB]], [[ALPHAB]])
// CHECK: [[SUM:%[0-9]+]] = "stablehlo.add"([[A]], [[SCALED]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "func.return"([[SUM]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>, sym_name = "add_broadcast_alpha"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
  %0 = "aten.add.Tensor"(%a, %b) {alpha = 2 : i64, operand_names = ["self", "other"]} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("add")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// A scalar operand given as an f64 attribute becomes a constant of the result dtype.
// CHECK-LABEL: sym_name = "mul_scalar_attr"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[C:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK: [[CB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[C]])
// CHECK: [[M:%[0-9]+]] = "stablehlo.multiply"([[A]], [[CB]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "func.return"([[M]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "mul_scalar_attr"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.mul.Scalar"(%a) {operand_names = ["self"], other = 2.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// rsub(self, other, alpha) = other - alpha * self, in i64.
// CHECK-LABEL: sym_name = "rsub_int"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xi64>)
// CHECK: [[OTHER:%[0-9]+]] = "stablehlo.constant"() {value = dense<10> : tensor<i64>}
// CHECK: [[OTHERB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[OTHER]])
// CHECK: [[ALPHA:%[0-9]+]] = "stablehlo.constant"() {value = dense<3> : tensor<i64>}
// CHECK: [[ALPHAB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[ALPHA]])
// CHECK: [[SCALED:%[0-9]+]] = "stablehlo.multiply"([[A]], [[ALPHAB]]) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: [[R:%[0-9]+]] = "stablehlo.subtract"([[OTHERB]], [[SCALED]])
// CHECK: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4xi64>) -> tensor<4xi64>, sym_name = "rsub_int"}> ({
^bb0(%a: tensor<4xi64>):
  %0 = "aten.rsub.Scalar"(%a) {alpha = 3 : i64, operand_names = ["self"], other = 10 : i64} : (tensor<4xi64>) -> tensor<4xi64> loc("rsub")
  "func.return"(%0) : (tensor<4xi64>) -> ()
}) : () -> ()

// True division of integers happens in floating point (the graph's result dtype).
// CHECK-LABEL: sym_name = "div_int_true"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xi64>, [[B:%arg[0-9]+]]: tensor<4xi64>)
// CHECK: [[AF:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<4xi64>) -> tensor<4xf32>
// CHECK: [[BF:%[0-9]+]] = "stablehlo.convert"([[B]]) : (tensor<4xi64>) -> tensor<4xf32>
// CHECK: [[Q:%[0-9]+]] = "stablehlo.divide"([[AF]], [[BF]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: "func.return"([[Q]])
"func.func"() <{function_type = (tensor<4xi64>, tensor<4xi64>) -> tensor<4xf32>, sym_name = "div_int_true"}> ({
^bb0(%a: tensor<4xi64>, %b: tensor<4xi64>):
  %0 = "aten.div.Tensor"(%a, %b) {operand_names = ["self", "other"]} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xf32> loc("div")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()

// Floor division of integers: truncating divide, then subtract one where the
// remainder is non-zero and its sign differs from the divisor's.
// CHECK-LABEL: sym_name = "div_int_floor"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xi32>, [[B:%arg[0-9]+]]: tensor<4xi32>)
// CHECK: [[Q:%[0-9]+]] = "stablehlo.divide"([[A]], [[B]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK: [[R:%[0-9]+]] = "stablehlo.remainder"([[A]], [[B]])
// CHECK: [[NZ:%[0-9]+]] = "stablehlo.compare"([[R]], [[ZERO:%[0-9]+]])
// CHECK-SAME: comparison_type SIGNED
// CHECK-SAME: comparison_direction NE
// CHECK: [[RNEG:%[0-9]+]] = "stablehlo.compare"([[R]], [[ZERO]])
// CHECK-SAME: comparison_direction LT
// CHECK: [[BNEG:%[0-9]+]] = "stablehlo.compare"([[B]], [[ZERO]])
// CHECK-SAME: comparison_direction LT
// CHECK: [[DIFF:%[0-9]+]] = "stablehlo.compare"([[RNEG]], [[BNEG]])
// CHECK-SAME: comparison_direction NE
// CHECK: [[ADJ:%[0-9]+]] = "stablehlo.and"([[NZ]], [[DIFF]])
// CHECK: [[QM1:%[0-9]+]] = "stablehlo.subtract"([[Q]], {{%[0-9]+}})
// CHECK: [[SEL:%[0-9]+]] = "stablehlo.select"([[ADJ]], [[QM1]], [[Q]]) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK: "func.return"([[SEL]])
"func.func"() <{function_type = (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>, sym_name = "div_int_floor"}> ({
^bb0(%a: tensor<4xi32>, %b: tensor<4xi32>):
  %0 = "aten.div.Tensor_mode"(%a, %b) {operand_names = ["self", "other"], rounding_mode = "floor"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32> loc("div_floor")
  "func.return"(%0) : (tensor<4xi32>) -> ()
}) : () -> ()

// Float trunc division: floor(|q|) * sign(q).
// CHECK-LABEL: sym_name = "div_float_trunc"
// CHECK: [[Q:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[ABS:%[0-9]+]] = "stablehlo.abs"([[Q]])
// CHECK: [[FL:%[0-9]+]] = "stablehlo.floor"([[ABS]])
// CHECK: [[SG:%[0-9]+]] = "stablehlo.sign"([[Q]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.multiply"([[FL]], [[SG]])
// CHECK: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "div_float_trunc"}> ({
^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
  %0 = "aten.div.Tensor_mode"(%a, %b) {operand_names = ["self", "other"], rounding_mode = "trunc"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("div_trunc")
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()

// An integer scalar compared with an i64 tensor stays integral (SIGNED compare).
// CHECK-LABEL: sym_name = "ne_scalar_int"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x8xi64>)
// CHECK: "stablehlo.constant"() {value = dense<1> : tensor<i64>}
// CHECK: [[C:%[0-9]+]] = "stablehlo.compare"([[A]], {{%[0-9]+}}) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi1>
// CHECK: "func.return"([[C]])
"func.func"() <{function_type = (tensor<2x8xi64>) -> tensor<2x8xi1>, sym_name = "ne_scalar_int"}> ({
^bb0(%a: tensor<2x8xi64>):
  %0 = "aten.ne.Scalar"(%a) {operand_names = ["self"], other = 1 : i64} : (tensor<2x8xi64>) -> tensor<2x8xi1> loc("ne")
  "func.return"(%0) : (tensor<2x8xi1>) -> ()
}) : () -> ()

// A float scalar promotes an integer tensor to the default float dtype (f32).
// CHECK-LABEL: sym_name = "gt_int_float_scalar"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<3xi64>)
// CHECK: [[AF:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<3xi64>) -> tensor<3xf32>
// CHECK: "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK: [[C:%[0-9]+]] = "stablehlo.compare"([[AF]], {{%[0-9]+}}) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
// CHECK: "func.return"([[C]])
"func.func"() <{function_type = (tensor<3xi64>) -> tensor<3xi1>, sym_name = "gt_int_float_scalar"}> ({
^bb0(%a: tensor<3xi64>):
  %0 = "aten.gt.Scalar"(%a) {operand_names = ["self"], other = 5.000000e-01 : f64} : (tensor<3xi64>) -> tensor<3xi1> loc("gt")
  "func.return"(%0) : (tensor<3xi1>) -> ()
}) : () -> ()

// A 0-d f32 tensor does not promote a dimensioned f16 tensor: compare in f16.
// CHECK-LABEL: sym_name = "lt_f16_zero_dim_f32"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf16>, [[B:%arg[0-9]+]]: tensor<f32>)
// CHECK: [[BH:%[0-9]+]] = "stablehlo.convert"([[B]]) : (tensor<f32>) -> tensor<f16>
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[BH]]) {broadcast_dimensions = array<i64>} : (tensor<f16>) -> tensor<2x3xf16>
// CHECK: [[C:%[0-9]+]] = "stablehlo.compare"([[A]], [[BB]])
// CHECK-SAME: comparison_type FLOAT
// CHECK-SAME: comparison_direction LT
// CHECK-SAME: (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
// CHECK: "func.return"([[C]])
"func.func"() <{function_type = (tensor<2x3xf16>, tensor<f32>) -> tensor<2x3xi1>, sym_name = "lt_f16_zero_dim_f32"}> ({
^bb0(%a: tensor<2x3xf16>, %b: tensor<f32>):
  %0 = "aten.lt.Tensor"(%a, %b) {operand_names = ["self", "other"]} : (tensor<2x3xf16>, tensor<f32>) -> tensor<2x3xi1> loc("lt")
  "func.return"(%0) : (tensor<2x3xi1>) -> ()
}) : () -> ()

// where.self: condition and `other` are both broadcast to the result shape.
// CHECK-LABEL: sym_name = "where_broadcast"
// CHECK: ^bb0([[C:%arg[0-9]+]]: tensor<2x1xi1>, [[A:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<3xf32>)
// CHECK: [[CB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[C]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x1xi1>) -> tensor<2x3xi1>
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: [[S:%[0-9]+]] = "stablehlo.select"([[CB]], [[A]], [[BB]])
// CHECK: "func.return"([[S]])
"func.func"() <{function_type = (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>, sym_name = "where_broadcast"}> ({
^bb0(%c: tensor<2x1xi1>, %a: tensor<2x3xf32>, %b: tensor<3xf32>):
  %0 = "aten.where.self"(%c, %a, %b) {operand_names = ["condition", "self", "other"]} : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("where")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// where.ScalarOther (from the bert model): a 0-d `self` and an f64 `other` (the
// lowest f32) become splats of the result shape.
// CHECK-LABEL: sym_name = "where_scalar_other"
// CHECK: ^bb0([[C:%arg[0-9]+]]: tensor<2x1x8x8xi1>, [[A:%arg[0-9]+]]: tensor<f32>)
// CHECK: [[AB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[A]]) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x1x8x8xf32>
// CHECK: "stablehlo.constant"() {value = dense<-3.40282347E+38> : tensor<f32>}
// CHECK: [[OB:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[S:%[0-9]+]] = "stablehlo.select"([[C]], [[AB]], [[OB]])
// CHECK: "func.return"([[S]])
"func.func"() <{function_type = (tensor<2x1x8x8xi1>, tensor<f32>) -> tensor<2x1x8x8xf32>, sym_name = "where_scalar_other"}> ({
^bb0(%c: tensor<2x1x8x8xi1>, %a: tensor<f32>):
  %0 = "aten.where.ScalarOther"(%c, %a) {operand_names = ["condition", "self"], other = -3.402823466385289E+38 : f64} : (tensor<2x1x8x8xi1>, tensor<f32>) -> tensor<2x1x8x8xf32> loc("where_1")
  "func.return"(%0) : (tensor<2x1x8x8xf32>) -> ()
}) : () -> ()

// masked_fill with -inf (hex f64 attribute) and a mask broadcast over leading dims.
// CHECK-LABEL: sym_name = "masked_fill_neg_inf"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x2x8x8xf32>, [[M:%arg[0-9]+]]: tensor<8x8xi1>)
// CHECK: [[MB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[M]]) {broadcast_dimensions = array<i64: 2, 3>} : (tensor<8x8xi1>) -> tensor<2x2x8x8xi1>
// CHECK: "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK: [[V:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[S:%[0-9]+]] = "stablehlo.select"([[MB]], [[V]], [[A]])
// CHECK: "func.return"([[S]])
"func.func"() <{function_type = (tensor<2x2x8x8xf32>, tensor<8x8xi1>) -> tensor<2x2x8x8xf32>, sym_name = "masked_fill_neg_inf"}> ({
^bb0(%a: tensor<2x2x8x8xf32>, %m: tensor<8x8xi1>):
  %0 = "aten.masked_fill.Scalar"(%a, %m) {operand_names = ["self", "mask"], value = 0xFFF0000000000000 : f64} : (tensor<2x2x8x8xf32>, tensor<8x8xi1>) -> tensor<2x2x8x8xf32> loc("masked_fill")
  "func.return"(%0) : (tensor<2x2x8x8xf32>) -> ()
}) : () -> ()

// relu = x <= 0 ? 0 : x: one compare and one select, no maximum. A NaN compares false
// and stays NaN (relu(NaN) is NaN in PyTorch) whatever the backend's maximum does.
// sigmoid = logistic; silu = x * logistic(x); rsqrt.
// CHECK-LABEL: sym_name = "activations"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[LE:%[0-9]+]] = "stablehlo.compare"([[X]], [[ZERO]])
// CHECK-SAME: comparison_direction LE
// CHECK-NEXT: [[RELU:%[0-9]+]] = "stablehlo.select"([[LE]], [[ZERO]], [[X]])
// CHECK-NOT: "stablehlo.maximum"
// CHECK: [[SIG:%[0-9]+]] = "stablehlo.logistic"([[X]])
// CHECK: [[L:%[0-9]+]] = "stablehlo.logistic"([[X]])
// CHECK: [[SILU:%[0-9]+]] = "stablehlo.multiply"([[X]], [[L]])
// CHECK: [[RS:%[0-9]+]] = "stablehlo.rsqrt"([[X]])
// CHECK: "func.return"([[RELU]], [[SIG]], [[SILU]], [[RS]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>), sym_name = "activations"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.relu.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu")
  %1 = "aten.sigmoid.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sigmoid")
  %2 = "aten.silu.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("silu")
  %3 = "aten.rsqrt.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("rsqrt")
  "func.return"(%0, %1, %2, %3) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
}) : () -> ()

// The composites of as-exported graphs: square = x * x; log_sigmoid = min(x, 0) -
// log1p(exp(-|x|)) (no overflow in either tail); mish = x * tanh(log1p(exp(x))).
// CHECK-LABEL: sym_name = "exported_composites"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[X]], [[X]])
// CHECK: [[LT:%[0-9]+]] = "stablehlo.compare"([[X]], [[Z:%[0-9]+]])
// CHECK-SAME: comparison_direction LT
// CHECK-NEXT: [[MIN:%[0-9]+]] = "stablehlo.select"([[LT]], [[X]], [[Z]])
// CHECK-NEXT: [[ABS:%[0-9]+]] = "stablehlo.abs"([[X]])
// CHECK-NEXT: [[NEG:%[0-9]+]] = "stablehlo.negate"([[ABS]])
// CHECK-NEXT: [[EXP:%[0-9]+]] = "stablehlo.exponential"([[NEG]])
// CHECK-NEXT: [[TAIL:%[0-9]+]] = "stablehlo.log_plus_one"([[EXP]])
// CHECK-NEXT: [[LOGSIG:%[0-9]+]] = "stablehlo.subtract"([[MIN]], [[TAIL]])
// CHECK: [[E:%[0-9]+]] = "stablehlo.exponential"([[X]])
// CHECK-NEXT: [[SP:%[0-9]+]] = "stablehlo.log_plus_one"([[E]])
// CHECK-NEXT: [[T:%[0-9]+]] = "stablehlo.tanh"([[SP]])
// CHECK-NEXT: [[MISH:%[0-9]+]] = "stablehlo.multiply"([[X]], [[T]])
// CHECK: "func.return"([[SQ]], [[LOGSIG]], [[MISH]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>), sym_name = "exported_composites"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.square.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("square")
  %1 = "aten.log_sigmoid.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("log_sigmoid")
  %2 = "aten.mish.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("mish")
  "func.return"(%0, %1, %2) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
}) : () -> ()

// glu: the first half of the last dimension (dim's default) times the sigmoid of the
// second half.
// CHECK-LABEL: sym_name = "glu"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x8xf32>)
// CHECK-NEXT: [[A:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 3, 4>, start_indices = array<i64: 0, 0>
// CHECK-NEXT: [[B:%[0-9]+]] = "stablehlo.slice"([[X]]) {limit_indices = array<i64: 3, 8>, start_indices = array<i64: 0, 4>
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.logistic"([[B]])
// CHECK-NEXT: [[G:%[0-9]+]] = "stablehlo.multiply"([[A]], [[S]])
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<3x8xf32>) -> tensor<3x4xf32>, sym_name = "glu"}> ({
^bb0(%a: tensor<3x8xf32>):
  %0 = "aten.glu.default"(%a) {operand_names = ["self"]} : (tensor<3x8xf32>) -> tensor<3x4xf32> loc("glu")
  "func.return"(%0) : (tensor<3x4xf32>) -> ()
}) : () -> ()

// Exact gelu: 0.5 x (1 + erf(x / sqrt(2))), erf as a clamped rational polynomial.
// The formula gives NaN for -inf (-inf * 0) and +inf for +inf; PyTorch's CPU kernel for
// the exact form in f32/bf16 returns NaN for +inf too, so x == +inf selects NaN here.
// CHECK-LABEL: sym_name = "gelu_erf"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: "stablehlo.constant"() {value = dense<0.707106769> : tensor<f32>}
// CHECK: [[T:%[0-9]+]] = "stablehlo.multiply"([[X]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<-4.000000e+00> : tensor<f32>}
// CHECK: "stablehlo.constant"() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK: [[CL:%[0-9]+]] = "stablehlo.clamp"({{%[0-9]+}}, [[T]], {{%[0-9]+}}) : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: [[ERF:%[0-9]+]] = "stablehlo.divide"
// CHECK: [[HALFX:%[0-9]+]] = "stablehlo.multiply"([[X]], {{%[0-9]+}})
// CHECK: [[ONEP:%[0-9]+]] = "stablehlo.add"({{%[0-9]+}}, [[ERF]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.multiply"([[HALFX]], [[ONEP]])
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0x7F800000> : tensor<f32>}
// CHECK-NEXT: [[INFB:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[ISINF:%[0-9]+]] = "stablehlo.compare"([[X]], [[INFB]])
// CHECK-SAME: comparison_direction EQ
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0x7FC00000> : tensor<f32>}
// CHECK-NEXT: [[NANB:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[G:%[0-9]+]] = "stablehlo.select"([[ISINF]], [[NANB]], [[R]])
// CHECK-NEXT: "func.return"([[G]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "gelu_erf"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.gelu.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()

// Tanh-approximate gelu on f16: computed in f32 (as PyTorch's opmath does) and
// rounded to f16 once at the end:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// CHECK-LABEL: sym_name = "gelu_tanh_f16"
// CHECK: ^bb0([[XH:%arg[0-9]+]]: tensor<2x3xf16>)
// CHECK: [[X:%[0-9]+]] = "stablehlo.convert"([[XH]]) : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK: [[X2:%[0-9]+]] = "stablehlo.multiply"([[X]], [[X]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: [[X3:%[0-9]+]] = "stablehlo.multiply"([[X2]], [[X]])
// CHECK: "stablehlo.constant"() {value = dense<4.471500e-02> : tensor<f32>}
// CHECK: "stablehlo.constant"() {value = dense<0.797884583> : tensor<f32>}
// CHECK: [[TH:%[0-9]+]] = "stablehlo.tanh"({{%[0-9]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "stablehlo.add"({{%[0-9]+}}, [[TH]])
// CHECK: "stablehlo.multiply"
// (+inf stays +inf in the tanh form: see gelu_positive_inf.mlir.)
// CHECK: [[RH:%[0-9]+]] = "stablehlo.convert"({{%[0-9]+}}) : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK-NEXT: "func.return"([[RH]])
"func.func"() <{function_type = (tensor<2x3xf16>) -> tensor<2x3xf16>, sym_name = "gelu_tanh_f16"}> ({
^bb0(%a: tensor<2x3xf16>):
  %0 = "aten.gelu.default"(%a) {approximate = "tanh", operand_names = ["self"]} : (tensor<2x3xf16>) -> tensor<2x3xf16> loc("gelu_tanh")
  "func.return"(%0) : (tensor<2x3xf16>) -> ()
}) : () -> ()

// pow with exponent 2 / 3 / 0.5 becomes multiply / multiply^2 / sqrt; others power.
// CHECK-LABEL: sym_name = "pow_special_exponents"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK: [[SQ:%[0-9]+]] = "stablehlo.multiply"([[X]], [[X]])
// CHECK: [[T:%[0-9]+]] = "stablehlo.multiply"([[X]], [[X]])
// CHECK: [[CUBE:%[0-9]+]] = "stablehlo.multiply"([[T]], [[X]])
// CHECK: [[SQRT:%[0-9]+]] = "stablehlo.sqrt"([[X]])
// CHECK: "stablehlo.constant"() {value = dense<1.500000e+00> : tensor<f32>}
// CHECK: [[POW:%[0-9]+]] = "stablehlo.power"([[X]], {{%[0-9]+}})
// CHECK: "func.return"([[SQ]], [[CUBE]], [[SQRT]], [[POW]])
"func.func"() <{function_type = (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>), sym_name = "pow_special_exponents"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.pow.Tensor_Scalar"(%a) {exponent = 2 : i64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("pow_2")
  %1 = "aten.pow.Tensor_Scalar"(%a) {exponent = 3.000000e+00 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("pow_3")
  %2 = "aten.pow.Tensor_Scalar"(%a) {exponent = 5.000000e-01 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("pow_half")
  %3 = "aten.pow.Tensor_Scalar"(%a) {exponent = 1.500000e+00 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("pow_general")
  "func.return"(%0, %1, %2, %3) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
}) : () -> ()

// clamp to numbers = (x < lo ? lo : x), then (y > hi ? hi : y); clamp_min only applies
// the lower bound. No maximum or minimum: a NaN compares false and stays NaN, as in
// PyTorch (clamp(NaN) is NaN). hardtanh is the same clamp with its own bounds. A NaN
// bound goes through the NaN-propagating maximum instead (every element NaN).
// CHECK-LABEL: sym_name = "clamp_scalars"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>)
// CHECK-NOT: "stablehlo.maximum"
// CHECK: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[BELOW:%[0-9]+]] = "stablehlo.compare"([[X]], [[ZERO]])
// CHECK-SAME: comparison_direction LT
// CHECK-NEXT: [[LO:%[0-9]+]] = "stablehlo.select"([[BELOW]], [[ZERO]], [[X]])
// CHECK: "stablehlo.constant"() {value = dense<6.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[SIX:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[ABOVE:%[0-9]+]] = "stablehlo.compare"([[LO]], [[SIX]])
// CHECK-SAME: comparison_direction GT
// CHECK-NEXT: [[HI:%[0-9]+]] = "stablehlo.select"([[ABOVE]], [[SIX]], [[LO]])
// CHECK-NOT: "stablehlo.minimum"
// CHECK: "stablehlo.constant"() {value = dense<-1.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[M1:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[BELOW2:%[0-9]+]] = "stablehlo.compare"([[X]], [[M1]])
// CHECK-NEXT: [[MIN:%[0-9]+]] = "stablehlo.select"([[BELOW2]], [[M1]], [[X]])
// CHECK-NOT: "stablehlo.minimum"
// CHECK: "stablehlo.compare"([[X]],
// CHECK-SAME: comparison_direction LT
// CHECK: [[HT:%[0-9]+]] = "stablehlo.select"
// CHECK: "stablehlo.compare"([[HT]],
// CHECK-SAME: comparison_direction GT
// CHECK: [[HT2:%[0-9]+]] = "stablehlo.select"
// CHECK: "stablehlo.constant"() {value = dense<0x7FC00000> : tensor<f32>}
// CHECK: [[NANMAX:%[0-9]+]] = "stablehlo.maximum"([[X]],
// CHECK: "func.return"([[HI]], [[MIN]], [[HT2]], {{%[0-9]+}})
"func.func"() <{function_type = (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>), sym_name = "clamp_scalars"}> ({
^bb0(%a: tensor<2x3xf32>):
  %0 = "aten.clamp.default"(%a) {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("clamp")
  %1 = "aten.clamp_min.default"(%a) {min = -1.000000e+00 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("clamp_min")
  %2 = "aten.hardtanh.default"(%a) {min_val = -2.000000e+00 : f64, max_val = 2.000000e+00 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("hardtanh")
  %3 = "aten.clamp_min.default"(%a) {min = 0x7FF8000000000000 : f64, operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("clamp_min_nan")
  "func.return"(%0, %1, %2, %3) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
}) : () -> ()

// aten.maximum / aten.minimum propagate NaN as PyTorch does (XLA's CPU maximum may
// return the other operand): after the (broadcast) maximum, each float operand is
// compared with itself (NE: only NaN differs) and a NaN operand is selected, the
// second one first so that the first NaN wins. Integers have no NaN: the bare maximum.
// CHECK-LABEL: sym_name = "maximum_minimum_nan"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xf32>, [[B:%arg[0-9]+]]: tensor<3xf32>, [[I:%arg[0-9]+]]: tensor<4xi32>, [[J:%arg[0-9]+]]: tensor<4xi32>)
// CHECK: [[BB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]]) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[MX:%[0-9]+]] = "stablehlo.maximum"([[A]], [[BB]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[ANAN:%[0-9]+]] = "stablehlo.compare"([[A]], [[A]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: [[BNAN:%[0-9]+]] = "stablehlo.compare"([[BB]], [[BB]]) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}
// CHECK-NEXT: [[M1:%[0-9]+]] = "stablehlo.select"([[BNAN]], [[BB]], [[MX]])
// CHECK-NEXT: [[MAX:%[0-9]+]] = "stablehlo.select"([[ANAN]], [[A]], [[M1]])
// CHECK-NEXT: [[BB2:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[B]])
// CHECK-NEXT: [[MN:%[0-9]+]] = "stablehlo.minimum"([[A]], [[BB2]])
// CHECK-NEXT: [[ANAN2:%[0-9]+]] = "stablehlo.compare"([[A]], [[A]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: [[BNAN2:%[0-9]+]] = "stablehlo.compare"([[BB2]], [[BB2]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: [[N1:%[0-9]+]] = "stablehlo.select"([[BNAN2]], [[BB2]], [[MN]])
// CHECK-NEXT: [[MIN:%[0-9]+]] = "stablehlo.select"([[ANAN2]], [[A]], [[N1]])
// CHECK-NEXT: [[IMAX:%[0-9]+]] = "stablehlo.maximum"([[I]], [[J]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: "func.return"([[MAX]], [[MIN]], [[IMAX]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<3xf32>, tensor<4xi32>, tensor<4xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>), sym_name = "maximum_minimum_nan"}> ({
^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>):
  %0 = "aten.maximum.default"(%a, %b) {operand_names = ["self", "other"]} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("maximum")
  %1 = "aten.minimum.default"(%a, %b) {operand_names = ["self", "other"]} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("minimum")
  %2 = "aten.maximum.default"(%i, %j) {operand_names = ["self", "other"]} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32> loc("maximum_int")
  "func.return"(%0, %1, %2) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>) -> ()
}) : () -> ()

// sign of a float is 0 for NaN in PyTorch (stablehlo.sign returns NaN): x != x
// selects 0. Integer sign is the bare stablehlo.sign.
// CHECK-LABEL: sym_name = "sign_nan"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>, [[I:%arg[0-9]+]]: tensor<4xi32>)
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.sign"([[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[ISNAN:%[0-9]+]] = "stablehlo.compare"([[X]], [[X]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: [[ZERO:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.select"([[ISNAN]], [[ZERO]], [[S]]) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[SI:%[0-9]+]] = "stablehlo.sign"([[I]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: "func.return"([[R]], [[SI]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>), sym_name = "sign_nan"}> ({
^bb0(%a: tensor<2x3xf32>, %i: tensor<4xi32>):
  %0 = "aten.sign.default"(%a) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sign")
  %1 = "aten.sign.default"(%i) {operand_names = ["self"]} : (tensor<4xi32>) -> tensor<4xi32> loc("sign_int")
  "func.return"(%0, %1) : (tensor<2x3xf32>, tensor<4xi32>) -> ()
}) : () -> ()

// StableHLO's abs and sign take signed (or float) types only. abs of u8 is the value
// itself; sign of u8 is (x != 0) as u8 (0 or 1); sign of bool is the value itself.
// CHECK-LABEL: sym_name = "abs_sign_u8_bool"
// CHECK: ^bb0([[U:%arg[0-9]+]]: tensor<5xui8>, [[P:%arg[0-9]+]]: tensor<5xi1>)
// CHECK-NOT: "stablehlo.abs"
// CHECK-NOT: "stablehlo.sign"
// CHECK: "stablehlo.constant"() {value = dense<0> : tensor<ui8>}
// CHECK-NEXT: [[Z:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK-NEXT: [[NZ:%[0-9]+]] = "stablehlo.compare"([[U]], [[Z]]) {compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<5xui8>, tensor<5xui8>) -> tensor<5xi1>
// CHECK-NEXT: [[SU:%[0-9]+]] = "stablehlo.convert"([[NZ]]) : (tensor<5xi1>) -> tensor<5xui8>
// CHECK-NEXT: "func.return"([[U]], [[SU]], [[P]])
"func.func"() <{function_type = (tensor<5xui8>, tensor<5xi1>) -> (tensor<5xui8>, tensor<5xui8>, tensor<5xi1>), sym_name = "abs_sign_u8_bool"}> ({
^bb0(%u: tensor<5xui8>, %p: tensor<5xi1>):
  %0 = "aten.abs.default"(%u) {operand_names = ["self"]} : (tensor<5xui8>) -> tensor<5xui8> loc("abs_u8")
  %1 = "aten.sign.default"(%u) {operand_names = ["self"]} : (tensor<5xui8>) -> tensor<5xui8> loc("sign_u8")
  %2 = "aten.sign.default"(%p) {operand_names = ["self"]} : (tensor<5xi1>) -> tensor<5xi1> loc("sign_bool")
  "func.return"(%0, %1, %2) : (tensor<5xui8>, tensor<5xui8>, tensor<5xi1>) -> ()
}) : () -> ()

// logical ops compare integers against zero; bool operands are used as is.
// CHECK-LABEL: sym_name = "logical_and_bitwise"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xi64>, [[P:%arg[0-9]+]]: tensor<4xi1>, [[Q:%arg[0-9]+]]: tensor<4xi1>)
// CHECK: [[NOT:%[0-9]+]] = "stablehlo.compare"([[A]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction EQ
// CHECK: [[PI:%[0-9]+]] = "stablehlo.convert"([[P]]) : (tensor<4xi1>) -> tensor<4xi64>
// CHECK: [[ANZ:%[0-9]+]] = "stablehlo.compare"([[A]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction NE
// CHECK: [[PNZ:%[0-9]+]] = "stablehlo.compare"([[PI]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction NE
// CHECK: [[AND:%[0-9]+]] = "stablehlo.and"([[ANZ]], [[PNZ]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK: [[BAND:%[0-9]+]] = "stablehlo.and"([[P]], [[Q]])
// CHECK: "func.return"([[NOT]], [[AND]], [[BAND]])
"func.func"() <{function_type = (tensor<4xi64>, tensor<4xi1>, tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>), sym_name = "logical_and_bitwise"}> ({
^bb0(%a: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>):
  %0 = "aten.logical_not.default"(%a) {operand_names = ["self"]} : (tensor<4xi64>) -> tensor<4xi1> loc("logical_not")
  %1 = "aten.logical_and.default"(%a, %p) {operand_names = ["self", "other"]} : (tensor<4xi64>, tensor<4xi1>) -> tensor<4xi1> loc("logical_and")
  %2 = "aten.bitwise_and.Tensor"(%p, %q) {operand_names = ["self", "other"]} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1> loc("bitwise_and")
  "func.return"(%0, %1, %2) : (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) -> ()
}) : () -> ()

// _to_copy / to.dtype: one convert, none when the dtype does not change.
// CHECK-LABEL: sym_name = "dtype_conversions"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x8xf32>, [[I:%arg[0-9]+]]: tensor<2x8xi64>)
// CHECK: [[H:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<2x8xf32>) -> tensor<2x8xf16>
// CHECK: [[B:%[0-9]+]] = "stablehlo.convert"([[I]]) : (tensor<2x8xi64>) -> tensor<2x8xi1>
// CHECK-NEXT: "func.return"([[H]], [[B]], [[A]])
"func.func"() <{function_type = (tensor<2x8xf32>, tensor<2x8xi64>) -> (tensor<2x8xf16>, tensor<2x8xi1>, tensor<2x8xf32>), sym_name = "dtype_conversions"}> ({
^bb0(%a: tensor<2x8xf32>, %i: tensor<2x8xi64>):
  %0 = "aten._to_copy.default"(%a) {dtype = "f16", operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf16> loc("to_f16")
  %1 = "aten._to_copy.default"(%i) {dtype = "bool", operand_names = ["self"]} : (tensor<2x8xi64>) -> tensor<2x8xi1> loc("to_bool")
  %2 = "aten.to.dtype"(%a) {dtype = "f32", operand_names = ["self"]} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("to_same")
  "func.return"(%0, %1, %2) : (tensor<2x8xf16>, tensor<2x8xi1>, tensor<2x8xf32>) -> ()
}) : () -> ()

// remainder follows the divisor's sign (Python %): fix up with r + b; fmod is the
// plain C remainder.
// CHECK-LABEL: sym_name = "remainder_fmod"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xi64>, [[F:%arg[0-9]+]]: tensor<4xf32>)
// CHECK: "stablehlo.constant"() {value = dense<-3> : tensor<i64>}
// CHECK: [[B:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[R:%[0-9]+]] = "stablehlo.remainder"([[A]], [[B]]) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: [[FIX:%[0-9]+]] = "stablehlo.and"
// CHECK: [[RB:%[0-9]+]] = "stablehlo.add"([[R]], [[B]])
// CHECK: [[REM:%[0-9]+]] = "stablehlo.select"([[FIX]], [[RB]], [[R]])
// CHECK: "stablehlo.constant"() {value = dense<2.500000e+00> : tensor<f32>}
// CHECK: [[FMOD:%[0-9]+]] = "stablehlo.remainder"([[F]], {{%[0-9]+}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: "func.return"([[REM]], [[FMOD]])
"func.func"() <{function_type = (tensor<4xi64>, tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>), sym_name = "remainder_fmod"}> ({
^bb0(%a: tensor<4xi64>, %b: tensor<4xf32>):
  %0 = "aten.remainder.Scalar"(%a) {operand_names = ["self"], other = -3 : i64} : (tensor<4xi64>) -> tensor<4xi64> loc("remainder")
  %1 = "aten.fmod.Scalar"(%b) {operand_names = ["self"], other = 2.500000e+00 : f64} : (tensor<4xf32>) -> tensor<4xf32> loc("fmod")
  "func.return"(%0, %1) : (tensor<4xi64>, tensor<4xf32>) -> ()
}) : () -> ()

// Eval-mode dropout is the identity; isnan is x != x for floats and false for ints.
// CHECK-LABEL: sym_name = "dropout_eval_and_isnan"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<4xf32>, [[I:%arg[0-9]+]]: tensor<4xi32>)
// CHECK: [[NAN:%[0-9]+]] = "stablehlo.compare"([[A]], [[A]])
// CHECK-SAME: comparison_direction NE
// CHECK: "stablehlo.constant"() {value = dense<false> : tensor<i1>}
// CHECK: [[NO:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: "func.return"([[A]], [[NAN]], [[NO]])
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xi1>), sym_name = "dropout_eval_and_isnan"}> ({
^bb0(%a: tensor<4xf32>, %i: tensor<4xi32>):
  %0 = "aten.dropout.default"(%a) {operand_names = ["input"], p = 1.000000e-01 : f64, train = false} : (tensor<4xf32>) -> tensor<4xf32> loc("dropout")
  %1 = "aten.isnan.default"(%a) {operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xi1> loc("isnan")
  %2 = "aten.isnan.default"(%i) {operand_names = ["self"]} : (tensor<4xi32>) -> tensor<4xi1> loc("isnan_int")
  "func.return"(%0, %1, %2) : (tensor<4xf32>, tensor<4xi1>, tensor<4xi1>) -> ()
}) : () -> ()

// bf16 arithmetic is computed in f32 and rounded once.
// CHECK-LABEL: sym_name = "sub_bf16"
// CHECK: ^bb0([[A:%arg[0-9]+]]: tensor<2x3xbf16>, [[B:%arg[0-9]+]]: tensor<2x3xbf16>)
// CHECK-NEXT: [[AF:%[0-9]+]] = "stablehlo.convert"([[A]]) : (tensor<2x3xbf16>) -> tensor<2x3xf32>
// CHECK-NEXT: [[BF:%[0-9]+]] = "stablehlo.convert"([[B]]) : (tensor<2x3xbf16>) -> tensor<2x3xf32>
// CHECK-NEXT: [[S:%[0-9]+]] = "stablehlo.subtract"([[AF]], [[BF]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[R:%[0-9]+]] = "stablehlo.convert"([[S]]) : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>, sym_name = "sub_bf16"}> ({
^bb0(%a: tensor<2x3xbf16>, %b: tensor<2x3xbf16>):
  %0 = "aten.sub.Tensor"(%a, %b) {operand_names = ["self", "other"]} : (tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16> loc("sub")
  "func.return"(%0) : (tensor<2x3xbf16>) -> ()
}) : () -> ()

// asin(x) = atan2(x, sqrt((1 - x) * (1 + x))) and acos(x) = atan2(sqrt(...), x): the
// right quadrant everywhere (acos(-1) = atan2(0, -1) = pi) and NaN for |x| > 1 (the
// square root of a negative number).
// CHECK-LABEL: sym_name = "asin_acos"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf32>)
// CHECK: "stablehlo.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[OM:%[0-9]+]] = "stablehlo.subtract"([[ONE]], [[X]])
// CHECK: [[OP:%[0-9]+]] = "stablehlo.add"([[ONE]], [[X]])
// CHECK: [[P:%[0-9]+]] = "stablehlo.multiply"([[OM]], [[OP]])
// CHECK: [[C:%[0-9]+]] = "stablehlo.sqrt"([[P]])
// CHECK: [[ASIN:%[0-9]+]] = "stablehlo.atan2"([[X]], [[C]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: [[ONE2:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[OM2:%[0-9]+]] = "stablehlo.subtract"([[ONE2]], [[X]])
// CHECK: [[OP2:%[0-9]+]] = "stablehlo.add"([[ONE2]], [[X]])
// CHECK: [[P2:%[0-9]+]] = "stablehlo.multiply"([[OM2]], [[OP2]])
// CHECK: [[C2:%[0-9]+]] = "stablehlo.sqrt"([[P2]])
// CHECK: [[ACOS:%[0-9]+]] = "stablehlo.atan2"([[C2]], [[X]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: "func.return"([[ASIN]], [[ACOS]])
"func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>), sym_name = "asin_acos"}> ({
^bb0(%x: tensor<4xf32>):
  %0 = "aten.asin.default"(%x) {operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("asin")
  %1 = "aten.acos.default"(%x) {operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("acos")
  "func.return"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> ()
}) : () -> ()

// sinh(x) = (expm1(x) - expm1(-x)) / 2, exact near 0; f16 is computed in f32.
// CHECK-LABEL: sym_name = "sinh_f16"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<4xf16>)
// CHECK: [[XF:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: [[A:%[0-9]+]] = "stablehlo.exponential_minus_one"([[XF]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: [[N:%[0-9]+]] = "stablehlo.negate"([[XF]])
// CHECK: [[B:%[0-9]+]] = "stablehlo.exponential_minus_one"([[N]])
// CHECK: [[D:%[0-9]+]] = "stablehlo.subtract"([[A]], [[B]])
// CHECK: "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK: [[H:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[S:%[0-9]+]] = "stablehlo.multiply"([[D]], [[H]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.convert"([[S]]) : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<4xf16>) -> tensor<4xf16>, sym_name = "sinh_f16"}> ({
^bb0(%x: tensor<4xf16>):
  %0 = "aten.sinh.default"(%x) {operand_names = ["self"]} : (tensor<4xf16>) -> tensor<4xf16> loc("sinh")
  "func.return"(%0) : (tensor<4xf16>) -> ()
}) : () -> ()

// trunc(x) = floor(|x|) * sign(x) (toward zero, keeping -0, inf and NaN) and the
// identity on integers; log2(x) = log(x) / ln 2, integer inputs converted to the
// float result type first.
// CHECK-LABEL: sym_name = "trunc_log2"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<2x3xf32>, [[I:%arg[0-9]+]]: tensor<2x3xi32>, [[Y:%arg[0-9]+]]: tensor<2x3xf32>, [[J:%arg[0-9]+]]: tensor<2x3xi64>)
// CHECK: [[ABS:%[0-9]+]] = "stablehlo.abs"([[X]])
// CHECK: [[FL:%[0-9]+]] = "stablehlo.floor"([[ABS]])
// CHECK: [[SG:%[0-9]+]] = "stablehlo.sign"([[X]])
// CHECK: [[T:%[0-9]+]] = "stablehlo.multiply"([[FL]], [[SG]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT: [[I]]{{[^0-9]}}
// CHECK: [[L:%[0-9]+]] = "stablehlo.log"([[Y]])
// CHECK: "stablehlo.constant"() {value = dense<0.693147182> : tensor<f32>}
// CHECK: [[LN2:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[L2:%[0-9]+]] = "stablehlo.divide"([[L]], [[LN2]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: [[JF:%[0-9]+]] = "stablehlo.convert"([[J]]) : (tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK: [[LJ:%[0-9]+]] = "stablehlo.log"([[JF]])
// CHECK: [[LN2J:%[0-9]+]] = "stablehlo.broadcast_in_dim"
// CHECK: [[L2J:%[0-9]+]] = "stablehlo.divide"([[LJ]], [[LN2J]])
// CHECK-NEXT: "func.return"([[T]], [[I]], [[L2]], [[L2J]])
"func.func"() <{function_type = (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x3xf32>), sym_name = "trunc_log2"}> ({
^bb0(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>, %y: tensor<2x3xf32>, %j: tensor<2x3xi64>):
  %0 = "aten.trunc.default"(%x) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("trunc")
  %1 = "aten.trunc.default"(%i) {operand_names = ["self"]} : (tensor<2x3xi32>) -> tensor<2x3xi32> loc("trunc_int")
  %2 = "aten.log2.default"(%y) {operand_names = ["self"]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("log2")
  %3 = "aten.log2.default"(%j) {operand_names = ["self"]} : (tensor<2x3xi64>) -> tensor<2x3xf32> loc("log2_int")
  "func.return"(%0, %1, %2, %3) : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
}) : () -> ()
