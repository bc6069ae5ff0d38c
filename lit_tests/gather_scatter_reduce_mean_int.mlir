// Guards scatter_reduce mean on integers (gather.rs): PyTorch floors the division of the
// sum by the count (out.div_(count, "floor")), e.g. the mean of -3 and -4 is -4, so
// the truncating divide is corrected where the remainder is negative.
//
// RUN: tpuc opt %s --pass-pipeline=lower-aten-to-stablehlo,verify-stablehlo | FileCheck %s

// CHECK-LABEL: sym_name = "scatter_reduce_mean_int"
// CHECK: ^bb0([[Y:%arg[0-9]+]]: tensor<3x5xi32>, [[I:%arg[0-9]+]]: tensor<3x2xi64>, [[S:%arg[0-9]+]]: tensor<3x2xi32>)
// CHECK: [[CNT:%[0-9]+]] = "stablehlo.maximum"
// CHECK: [[Q:%[0-9]+]] = "stablehlo.divide"([[SUM:%[0-9]+]], [[CNT]]) : (tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<3x5xi32>
// CHECK: "stablehlo.remainder"([[SUM]], [[CNT]])
// CHECK: [[R:%[0-9]+]] = "stablehlo.select"
// CHECK-NEXT: "func.return"([[R]])
"func.func"() <{function_type = (tensor<3x5xi32>, tensor<3x2xi64>, tensor<3x2xi32>) -> tensor<3x5xi32>, sym_name = "scatter_reduce_mean_int"}> ({
^bb0(%y: tensor<3x5xi32>, %i: tensor<3x2xi64>, %s: tensor<3x2xi32>):
  %0 = "aten.scatter_reduce.two"(%y, %i, %s) {dim = 1 : i64, include_self = true, operand_names = ["self", "index", "src"], reduce = "mean"} : (tensor<3x5xi32>, tensor<3x2xi64>, tensor<3x2xi32>) -> tensor<3x5xi32> loc("scatter_mean_int")
  "func.return"(%0) : (tensor<3x5xi32>) -> ()
}) : () -> ()
