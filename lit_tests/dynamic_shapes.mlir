// A program exported with dynamic_shapes (testdata/dynamic/mlp: batch s77 in 1..=64).
// Without --specialize, --emit mlir writes shape-polymorphic StableHLO: `?` in @main's
// signature, the batch read with get_dimension_size, shaped ops in dynamic form.
// RUN: tpuc compile %S/../testdata/dynamic/mlp/core.pt2 --emit mlir -o %t.poly.mlir
// RUN: FileCheck %s --check-prefix=POLY < %t.poly.mlir
// POLY: function_type = ({{.*}}tensor<?x16xf32>) -> tensor<?x8xf32>, sym_name = "main"
// POLY: "stablehlo.get_dimension_size"(%arg4) {dimension = 0 : i64} : (tensor<?x16xf32>) -> tensor<i32>
// POLY: "stablehlo.dot_general"{{.*}} -> tensor<?x32xf32>
// POLY: "stablehlo.dynamic_broadcast_in_dim"(%arg1, %{{[0-9]+}}) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
// POLY-NOT: tensor<7x
// POLY: "func.return"({{.*}}) : (tensor<?x8xf32>) -> ()

// With --specialize, the program for those sizes: static types throughout.
// RUN: tpuc compile %S/../testdata/dynamic/mlp/core.pt2 --emit mlir --specialize s77=3 -o %t.s3.mlir
// RUN: FileCheck %s --check-prefix=SPEC < %t.s3.mlir
// SPEC: function_type = ({{.*}}tensor<3x16xf32>) -> tensor<3x8xf32>, sym_name = "main"
// SPEC-NOT: ?x
// SPEC-NOT: get_dimension_size

// A size outside the range, and --emit aten without a size, are refused by name.
// RUN: not tpuc compile %S/../testdata/dynamic/mlp/core.pt2 --emit mlir --specialize s77=65 -o %t.bad.mlir 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: s77=65 is outside the range of `s77`, 1..=64
// RUN: not tpuc compile %S/../testdata/dynamic/mlp/core.pt2 --emit aten -o %t.bad.mlir 2>&1 | FileCheck %s --check-prefix=ATEN
// ATEN: s77 (dimension 0 of `x`) in 1..=64{{.*}}--specialize s77=7
