// Creation family (compiler/src/passes/lower_aten_to_stablehlo/creation.rs): arange
// (int, negative step, f32, f64), full/scalar_tensor (bool, fill truncated for ints,
// -inf), full_like/new_ones/zeros, triu/tril masks from iotas, eye, one_hot.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// arange(8) and arange(10, -2, -3) = [10, 7, 4, 1]: start + step * iota in i64.
// CHECK-LABEL: sym_name = "arange_int"
// CHECK: [[I0:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8xi64>
// CHECK: "stablehlo.constant"() {value = dense<1> : tensor<i64>}
// CHECK: [[S0:%[0-9]+]] = "stablehlo.multiply"([[I0]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<0> : tensor<i64>}
// CHECK: [[A0:%[0-9]+]] = "stablehlo.add"([[S0]], {{%[0-9]+}}) : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>
// CHECK: [[I1:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi64>
// CHECK: "stablehlo.constant"() {value = dense<-3> : tensor<i64>}
// CHECK: [[S1:%[0-9]+]] = "stablehlo.multiply"([[I1]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<10> : tensor<i64>}
// CHECK: [[A1:%[0-9]+]] = "stablehlo.add"([[S1]], {{%[0-9]+}})
// CHECK-NEXT: "func.return"([[A0]], [[A1]])
"func.func"() <{function_type = () -> (tensor<8xi64>, tensor<4xi64>), sym_name = "arange_int"}> ({
  %0 = "aten.arange.default"() {end = 8 : i64, operand_names = [], pin_memory = false} : () -> tensor<8xi64> loc("arange")
  %1 = "aten.arange.start_step"() {end = -2 : i64, operand_names = [], pin_memory = false, start = 10 : i64, step = -3 : i64} : () -> tensor<4xi64> loc("arange_1")
  "func.return"(%0, %1) : (tensor<8xi64>, tensor<4xi64>) -> ()
}) : () -> ()

// Float aranges: f32 results computed in f32, f64 results in f64.
// CHECK-LABEL: sym_name = "arange_float"
// CHECK: [[I0:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xf32>
// CHECK: "stablehlo.constant"() {value = dense<2.500000e-01> : tensor<f32>}
// CHECK: [[S0:%[0-9]+]] = "stablehlo.multiply"([[I0]], {{%[0-9]+}})
// CHECK: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK: [[A0:%[0-9]+]] = "stablehlo.add"([[S0]], {{%[0-9]+}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: [[I1:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3xf64>
// CHECK: "stablehlo.constant"() {value = dense<5.000000e-01> : tensor<f64>}
// CHECK: [[S1:%[0-9]+]] = "stablehlo.multiply"([[I1]], {{%[0-9]+}})
// CHECK: [[A1:%[0-9]+]] = "stablehlo.add"([[S1]], {{%[0-9]+}}) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
// CHECK-NEXT: "func.return"([[A0]], [[A1]])
"func.func"() <{function_type = () -> (tensor<4xf32>, tensor<3xf64>), sym_name = "arange_float"}> ({
  %0 = "aten.arange.start_step"() {dtype = "f32", end = 1.000000e+00 : f64, operand_names = [], pin_memory = false, start = 0.000000e+00 : f64, step = 2.500000e-01 : f64} : () -> tensor<4xf32> loc("arange_f32")
  %1 = "aten.arange.start_step"() {dtype = "f64", end = 2.000000e+00 : f64, operand_names = [], pin_memory = false, start = 5.000000e-01 : f64, step = 5.000000e-01 : f64} : () -> tensor<3xf64> loc("arange_f64")
  "func.return"(%0, %1) : (tensor<4xf32>, tensor<3xf64>) -> ()
}) : () -> ()

// full of bools (rank 2 and rank 0), full of 2.7 into i32 (truncated to 2),
// scalar_tensor(-inf).
// CHECK-LABEL: sym_name = "full_scalar_tensor"
// CHECK: [[T:%[0-9]+]] = "stablehlo.constant"() {value = dense<true> : tensor<i1>}
// CHECK: [[F0:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[T]]) {broadcast_dimensions = array<i64>} : (tensor<i1>) -> tensor<8x8xi1>
// CHECK: [[F1:%[0-9]+]] = "stablehlo.constant"() {value = dense<true> : tensor<i1>}
// CHECK: [[TWO:%[0-9]+]] = "stablehlo.constant"() {value = dense<2> : tensor<i32>}
// CHECK: [[F2:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[TWO]]) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<2x3xi32>
// CHECK: [[NINF:%[0-9]+]] = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT: "func.return"([[F0]], [[F1]], [[F2]], [[NINF]])
"func.func"() <{function_type = () -> (tensor<8x8xi1>, tensor<i1>, tensor<2x3xi32>, tensor<f32>), sym_name = "full_scalar_tensor"}> ({
  %0 = "aten.full.default"() {dtype = "bool", fill_value = true, operand_names = [], pin_memory = false, size = array<i64: 8, 8>} : () -> tensor<8x8xi1> loc("full")
  %1 = "aten.full.default"() {dtype = "bool", fill_value = true, operand_names = [], pin_memory = false, size = array<i64>} : () -> tensor<i1> loc("full_1")
  %2 = "aten.full.default"() {dtype = "i32", fill_value = 2.700000e+00 : f64, operand_names = [], size = array<i64: 2, 3>} : () -> tensor<2x3xi32> loc("full_2")
  %3 = "aten.scalar_tensor.default"() {dtype = "f32", operand_names = [], s = 0xFFF0000000000000 : f64} : () -> tensor<f32> loc("scalar_tensor")
  "func.return"(%0, %1, %2, %3) : (tensor<8x8xi1>, tensor<i1>, tensor<2x3xi32>, tensor<f32>) -> ()
}) : () -> ()

// full_like (int fill into f32), new_ones with dtype=bool and size=[], zeros in f16.
// CHECK-LABEL: sym_name = "like_and_new"
// CHECK: ^bb0({{%arg[0-9]+}}: tensor<2x2x8x8xf32>, {{%arg[0-9]+}}: tensor<1x1x8x1xi64>)
// CHECK: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK: [[Z:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2x2x8x8xf32>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<true> : tensor<i1>}
// CHECK: "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f16>}
// CHECK: [[ZH:%[0-9]+]] = "stablehlo.broadcast_in_dim"({{%[0-9]+}}) {broadcast_dimensions = array<i64>} : (tensor<f16>) -> tensor<3x4xf16>
// CHECK-NEXT: "func.return"([[Z]], [[ONE]], [[ZH]])
"func.func"() <{function_type = (tensor<2x2x8x8xf32>, tensor<1x1x8x1xi64>) -> (tensor<2x2x8x8xf32>, tensor<i1>, tensor<3x4xf16>), sym_name = "like_and_new"}> ({
^bb0(%a: tensor<2x2x8x8xf32>, %b: tensor<1x1x8x1xi64>):
  %0 = "aten.full_like.default"(%a) {fill_value = 0 : i64, operand_names = ["self"], pin_memory = false} : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> loc("full_like")
  %1 = "aten.new_ones.default"(%b) {dtype = "bool", operand_names = ["self"], pin_memory = false, size = array<i64>} : (tensor<1x1x8x1xi64>) -> tensor<i1> loc("new_ones")
  %2 = "aten.zeros.default"() {dtype = "f16", operand_names = [], size = array<i64: 3, 4>} : () -> tensor<3x4xf16> loc("zeros")
  "func.return"(%0, %1, %2) : (tensor<2x2x8x8xf32>, tensor<i1>, tensor<3x4xf16>) -> ()
}) : () -> ()

// triu(diagonal=1) on a bool mask (gpt2's causal mask) keeps col - row >= 1;
// tril(diagonal=-1) on a batched f32 tensor keeps col - row <= -1, broadcast over the
// batch dim; everything else becomes zero/false.
// CHECK-LABEL: sym_name = "triu_tril"
// CHECK: ^bb0([[M:%arg[0-9]+]]: tensor<8x8xi1>, [[X:%arg[0-9]+]]: tensor<2x3x4xf32>)
// CHECK: [[R0:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8x8xi64>
// CHECK: [[C0:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<8x8xi64>
// CHECK: [[D0:%[0-9]+]] = "stablehlo.subtract"([[C0]], [[R0]])
// CHECK: "stablehlo.constant"() {value = dense<1> : tensor<i64>}
// CHECK: [[K0:%[0-9]+]] = "stablehlo.compare"([[D0]], {{%[0-9]+}}) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}
// CHECK: "stablehlo.constant"() {value = dense<false> : tensor<i1>}
// CHECK: [[TRIU:%[0-9]+]] = "stablehlo.select"([[K0]], [[M]], {{%[0-9]+}}) : (tensor<8x8xi1>, tensor<8x8xi1>, tensor<8x8xi1>) -> tensor<8x8xi1>
// CHECK: [[R1:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3x4xi64>
// CHECK: [[C1:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x4xi64>
// CHECK: [[D1:%[0-9]+]] = "stablehlo.subtract"([[C1]], [[R1]])
// CHECK: "stablehlo.constant"() {value = dense<-1> : tensor<i64>}
// CHECK: [[K1:%[0-9]+]] = "stablehlo.compare"([[D1]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LE
// CHECK: [[KB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[K1]]) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<3x4xi1>) -> tensor<2x3x4xi1>
// CHECK: [[TRIL:%[0-9]+]] = "stablehlo.select"([[KB]], [[X]], {{%[0-9]+}})
// CHECK-NEXT: "func.return"([[TRIU]], [[TRIL]])
"func.func"() <{function_type = (tensor<8x8xi1>, tensor<2x3x4xf32>) -> (tensor<8x8xi1>, tensor<2x3x4xf32>), sym_name = "triu_tril"}> ({
^bb0(%m: tensor<8x8xi1>, %x: tensor<2x3x4xf32>):
  %0 = "aten.triu.default"(%m) {diagonal = 1 : i64, operand_names = ["self"]} : (tensor<8x8xi1>) -> tensor<8x8xi1> loc("triu")
  %1 = "aten.tril.default"(%x) {diagonal = -1 : i64, operand_names = ["self"]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("tril")
  "func.return"(%0, %1) : (tensor<8x8xi1>, tensor<2x3x4xf32>) -> ()
}) : () -> ()

// eye(3, 4): row iota == column iota, converted to f32.
// CHECK-LABEL: sym_name = "eye"
// CHECK: [[R:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<3x4xi64>
// CHECK: [[C:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x4xi64>
// CHECK: [[EQ:%[0-9]+]] = "stablehlo.compare"([[R]], [[C]])
// CHECK-SAME: comparison_direction EQ
// CHECK: [[F:%[0-9]+]] = "stablehlo.convert"([[EQ]]) : (tensor<3x4xi1>) -> tensor<3x4xf32>
// CHECK-NEXT: "func.return"([[F]])
"func.func"() <{function_type = () -> tensor<3x4xf32>, sym_name = "eye"}> ({
  %0 = "aten.eye.m"() {dtype = "f32", m = 4 : i64, n = 3 : i64, operand_names = []} : () -> tensor<3x4xf32> loc("eye")
  "func.return"(%0) : (tensor<3x4xf32>) -> ()
}) : () -> ()

// linspace(0, 1, 5): the first half counts up from start (0 + 0.25 i), the second half
// down from end (1 - 0.25 (4 - i)), as PyTorch does, so both ends are exact.
// CHECK-LABEL: sym_name = "linspace"
// CHECK: [[I:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<5xf32>
// CHECK: [[UP:%[0-9]+]] = "stablehlo.add"
// CHECK: "stablehlo.constant"() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK: [[REV:%[0-9]+]] = "stablehlo.subtract"({{%[0-9]+}}, [[I]])
// CHECK: [[DOWN:%[0-9]+]] = "stablehlo.subtract"
// CHECK: "stablehlo.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK: [[LT:%[0-9]+]] = "stablehlo.compare"([[I]], {{%[0-9]+}})
// CHECK-SAME: comparison_direction LT
// CHECK: [[R:%[0-9]+]] = "stablehlo.select"([[LT]], [[UP]], [[DOWN]])
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = () -> tensor<5xf32>, sym_name = "linspace"}> ({
  %0 = "aten.linspace.default"() {end = 1.000000e+00 : f64, operand_names = [], start = 0.000000e+00 : f64, steps = 5 : i64} : () -> tensor<5xf32> loc("linspace")
  "func.return"(%0) : (tensor<5xf32>) -> ()
}) : () -> ()

// one_hot(x, 5): x broadcast along a new last dim compared with an iota over the five
// classes, the bools converted to the i64 result.
// CHECK-LABEL: sym_name = "one_hot"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x4xi64>)
// CHECK: [[XB:%[0-9]+]] = "stablehlo.broadcast_in_dim"([[X]]) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<3x4xi64>) -> tensor<3x4x5xi64>
// CHECK: [[C:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 2 : i64} : () -> tensor<3x4x5xi64>
// CHECK: [[EQ:%[0-9]+]] = "stablehlo.compare"([[XB]], [[C]]) {{.*}}comparison_direction = #stablehlo<comparison_direction EQ>
// CHECK: [[R:%[0-9]+]] = "stablehlo.convert"([[EQ]]) : (tensor<3x4x5xi1>) -> tensor<3x4x5xi64>
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<3x4xi64>) -> tensor<3x4x5xi64>, sym_name = "one_hot"}> ({
^bb0(%arg0: tensor<3x4xi64>):
  %0 = "aten.one_hot.default"(%arg0) {num_classes = 5 : i64, operand_names = ["self"]} : (tensor<3x4xi64>) -> tensor<3x4x5xi64> loc("one_hot")
  "func.return"(%0) : (tensor<3x4x5xi64>) -> ()
}) : () -> ()
