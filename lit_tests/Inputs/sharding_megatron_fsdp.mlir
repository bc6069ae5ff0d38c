"builtin.module"() ({
  "func.func"() <{arg_attrs = [{tpuc.weight, tpuc.fsdp}, {tpuc.weight, tpuc.fsdp}, {tpuc.weight}, {}], function_type = (tensor<16x8xf32>, tensor<8x16xf32>, tensor<6x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x6xf32>), sym_name = "main"}> ({
  ^bb0(%w1: tensor<16x8xf32>, %w2: tensor<8x16xf32>, %w3: tensor<6x8xf32>, %x: tensor<4x8xf32>):
    %0 = "stablehlo.dot_general"(%x, %w1) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %1 = "stablehlo.tanh"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %t = "stablehlo.transpose"(%w2) {permutation = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %2 = "stablehlo.dot_general"(%1, %t) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %3 = "stablehlo.dot_general"(%2, %w3) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
    "func.return"(%2, %3) : (tensor<4x8xf32>, tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {tpuc.megatron = "tp", tpuc.mesh = "fsdp=2,tp=2", tpuc.sharding_format = "gspmd"} : () -> ()
