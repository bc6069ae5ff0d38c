"builtin.module"() ({
  "func.func"() <{arg_attrs = [{tpuc.weight}, {tpuc.weight}, {}], function_type = (tensor<4x8xf32>, tensor<16x8xf32>, tensor<6x8xf32>) -> (tensor<6x4xf32>, tensor<6x16xf32>), sym_name = "main"}> ({
  ^bb0(%router: tensor<4x8xf32>, %up: tensor<16x8xf32>, %x: tensor<6x8xf32>):
    %0 = "stablehlo.dot_general"(%x, %router) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<6x8xf32>, tensor<4x8xf32>) -> tensor<6x4xf32>
    %1 = "stablehlo.logistic"(%0) : (tensor<6x4xf32>) -> tensor<6x4xf32>
    %2 = "stablehlo.sort"(%1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%c) : (tensor<i1>) -> ()
    }) {dimension = 1 : i64, is_stable = true} : (tensor<6x4xf32>) -> tensor<6x4xf32>
    %3 = "stablehlo.dot_general"(%x, %up) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<6x8xf32>, tensor<16x8xf32>) -> tensor<6x16xf32>
    "func.return"(%2, %3) : (tensor<6x4xf32>, tensor<6x16xf32>) -> ()
  }) : () -> ()
}) {tpuc.megatron = "tp", tpuc.mesh = "tp=2", tpuc.sharding_format = "gspmd"} : () -> ()
