// Sorting family (compiler/src/passes/lower_aten_to_stablehlo/sorting.rs): one stable
// stablehlo.sort of (values, iota indices); topk slices the first k.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// topk(k=2, largest): descending comparator (b < a), NaN first (a is NaN, b is not).
// CHECK-LABEL: sym_name = "topk"
// CHECK: ^bb0([[X:%arg[0-9]+]]: tensor<3x4xf32>)
// CHECK: [[I:%[0-9]+]] = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<3x4xi64>
// CHECK: [[S:%[0-9]+]]:2 = "stablehlo.sort"([[X]], [[I]])
// CHECK-NEXT: ^bb0([[A:%arg[0-9]+]]: tensor<f32>, [[B:%arg[0-9]+]]: tensor<f32>, {{%arg[0-9]+}}: tensor<i64>, {{%arg[0-9]+}}: tensor<i64>):
// CHECK-NEXT: [[LT:%[0-9]+]] = "stablehlo.compare"([[B]], [[A]])
// CHECK-SAME: comparison_direction LT
// CHECK-NEXT: [[ANAN:%[0-9]+]] = "stablehlo.compare"([[A]], [[A]])
// CHECK-SAME: comparison_direction NE
// CHECK-NEXT: [[BNUM:%[0-9]+]] = "stablehlo.compare"([[B]], [[B]])
// CHECK-SAME: comparison_direction EQ
// CHECK: {dimension = 1 : i64, is_stable = true}
// CHECK: [[V:%[0-9]+]] = "stablehlo.slice"([[S]]#0) {limit_indices = array<i64: 3, 2>
// CHECK: [[IX:%[0-9]+]] = "stablehlo.slice"([[S]]#1) {limit_indices = array<i64: 3, 2>
// CHECK: "func.return"([[V]], [[IX]])
"func.func"() <{function_type = (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>), sym_name = "topk"}> ({
^bb0(%x: tensor<3x4xf32>):
  %0:2 = "aten.topk.default"(%x) {k = 2 : i64, dim = -1 : i64, operand_names = ["self"]} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) loc("topk")
  "func.return"(%0#0, %0#1) : (tensor<3x2xf32>, tensor<3x2xi64>) -> ()
}) : () -> ()
