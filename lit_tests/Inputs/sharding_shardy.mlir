"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}, {tpuc.sharding = "[dp, -]"}], function_type = (tensor<8x16xf32>, tensor<8xf32>, tensor<4x16xf32>) -> tensor<4x8xf32>, sym_name = "main"}> ({
  ^bb0(%w: tensor<8x16xf32>, %b: tensor<8xf32>, %x: tensor<4x16xf32>):
    %0 = "stablehlo.dot_general"(%x, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    %1 = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
    %2 = "stablehlo.add"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = "stablehlo.tanh"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%3) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {tpuc.mesh = "dp=2,tp=2"} : () -> ()
