// neuron-legalize (compiler/src/targets/neuron/legalize.rs): inside @main every i64
// value becomes i32 and every f64 value f32 (op results, region arguments,
// constants), with one convert at each argument and result so the signature keeps
// PyTorch's types. A reduction's int64 identity (the type's minimum) becomes int32's
// minimum. neuron-legalize-keep-int64 narrows f64 only. A constant that does not fit
// in int32 and a 64-bit bitcast are errors naming the node.
//
// RUN: tpuc opt %s --pass-pipeline=neuron-legalize | FileCheck %s
// RUN: tpuc opt %s --pass-pipeline=neuron-legalize-keep-int64 | FileCheck %s --check-prefix=KEEP
// RUN: tpuc opt %s --pass-pipeline=neuron-legalize,neuron-check --emit-hlo | FileCheck %s --check-prefix=HLO
// RUN: not tpuc opt %S/Inputs/neuron_legalize_big_constant.mlir --pass-pipeline=neuron-legalize 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: tpuc opt %S/Inputs/neuron_legalize_big_constant.mlir --pass-pipeline=neuron-legalize-keep-int64 | FileCheck %s --check-prefix=BIGKEEP
// RUN: not tpuc opt %S/Inputs/neuron_legalize_bitcast.mlir --pass-pipeline=neuron-legalize 2>&1 | FileCheck %s --check-prefix=BITCAST

// CHECK: ^bb0([[IDX:%arg[0-9]+]]: tensor<4xi64>, [[X:%arg[0-9]+]]: tensor<4xf64>)
// CHECK-DAG: [[XN:%[0-9]+]] = "stablehlo.convert"([[X]]) : (tensor<4xf64>) -> tensor<4xf32>
// CHECK-DAG: [[IN:%[0-9]+]] = "stablehlo.convert"([[IDX]]) : (tensor<4xi64>) -> tensor<4xi32>
// CHECK: [[ONE:%[0-9]+]] = "stablehlo.constant"() {value = dense<1> : tensor<4xi32>}
// CHECK-NEXT: [[NEXT:%[0-9]+]] = "stablehlo.add"([[IN]], [[ONE]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: [[C:%[0-9]+]] = "stablehlo.constant"() {value = dense<2.500000e+00> : tensor<4xf32>}
// CHECK-NEXT: [[Y:%[0-9]+]] = "stablehlo.multiply"([[XN]], [[C]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[INIT:%[0-9]+]] = "stablehlo.constant"() {value = dense<-2147483648> : tensor<i32>}
// CHECK-NEXT: [[M:%[0-9]+]] = "stablehlo.reduce"([[NEXT]], [[INIT]])
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>):
// CHECK-NEXT: "stablehlo.maximum"{{.*}} -> tensor<i32>
// CHECK: }) : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
// CHECK-NEXT: [[R0:%[0-9]+]] = "stablehlo.convert"([[NEXT]]) : (tensor<4xi32>) -> tensor<4xi64>
// CHECK-NEXT: [[R2:%[0-9]+]] = "stablehlo.convert"([[M]]) : (tensor<i32>) -> tensor<i64>
// CHECK-NEXT: [[R1:%[0-9]+]] = "stablehlo.convert"([[Y]]) : (tensor<4xf32>) -> tensor<4xf64>
// CHECK-NEXT: "func.return"([[R0]], [[R1]], [[R2]])
// CHECK: tpuc.neuron_narrowed = ["i64", "f64"]

// KEEP: "stablehlo.constant"() {value = dense<1> : tensor<4xi64>}
// KEEP: "stablehlo.add"{{.*}} -> tensor<4xi64>
// KEEP: "stablehlo.multiply"{{.*}} -> tensor<4xf32>
// KEEP: }) : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
// KEEP: tpuc.neuron_narrowed = ["f64"]

// The narrowed program passes neuron-check (the f64 and s64 edges are only
// converts), and the converts carry the argument's and the producer's node.
// HLO: ENTRY
// HLO: convert.{{[0-9]+}} = f32[4]{0} convert(Arg_1.2), metadata={op_type="convert" op_name="x"}
// HLO: convert.{{[0-9]+}} = s32[4]{0} convert(Arg_0.1), metadata={op_type="convert" op_name="idx"}
// HLO: reduce.{{[0-9]+}} = s32[] reduce(
// HLO: convert.{{[0-9]+}} = s64[4]{0} convert(add.{{[0-9]+}}), metadata={op_type="convert" op_name="add"}
// HLO: ROOT tuple.{{[0-9]+}} = (s64[4]{0}, f64[4]{0}, s64[]) tuple(

// BIG: error: node `position` (stablehlo.constant): the int64 constant 4294967296 does not fit in int32, which Neuron devices compute in; compile with --keep-int64 to keep 64-bit integers
// BIGKEEP: dense<4294967296> : tensor<2xi64>

// BITCAST: error: node `view_dtype` (stablehlo.bitcast_convert): a bitcast of f64 values cannot be narrowed to f32 for Neuron devices

"func.func"() <{function_type = (tensor<4xi64>, tensor<4xf64>) -> (tensor<4xi64>, tensor<4xf64>, tensor<i64>), sym_name = "main"}> ({
^bb0(%idx: tensor<4xi64> loc("idx"), %x: tensor<4xf64> loc("x")):
  %one = "stablehlo.constant"() {value = dense<1> : tensor<4xi64>} : () -> tensor<4xi64> loc("add")
  %next = "stablehlo.add"(%idx, %one) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64> loc("add")
  %two = "stablehlo.constant"() {value = dense<2.5> : tensor<4xf64>} : () -> tensor<4xf64> loc("mul")
  %y = "stablehlo.multiply"(%x, %two) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64> loc("mul")
  %init = "stablehlo.constant"() {value = dense<-9223372036854775808> : tensor<i64>} : () -> tensor<i64> loc("amax")
  %m = "stablehlo.reduce"(%next, %init) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %r = "stablehlo.maximum"(%a, %b) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%r) : (tensor<i64>) -> ()
  }) : (tensor<4xi64>, tensor<i64>) -> tensor<i64> loc("amax")
  "func.return"(%next, %y, %m) : (tensor<4xi64>, tensor<4xf64>, tensor<i64>) -> ()
}) : () -> ()
