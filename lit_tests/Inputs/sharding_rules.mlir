"builtin.module"() ({
  "func.func"() <{arg_attrs = [{tpuc.sharding = "[dp, -]"}, {tpuc.sharding = "[-, tp]"}, {tpuc.sharding = "[dp, tp]"}, {}, {tpuc.sharding = "[tp, -]"}], function_type = (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x6xf32>, tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<8xf32>, tensor<4x6xf32>, tensor<8x8xf32>, tensor<2x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>), sym_name = "main"}> ({
  ^bb0(%a0: tensor<4x8xf32>, %a2: tensor<4x8xf32>, %a3: tensor<4x8xf32>, %w: tensor<8x6xf32>, %a4: tensor<4x8xf32>):
    %r0 = "stablehlo.transpose"(%a0) {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %r1 = "stablehlo.reshape"(%a0) : (tensor<4x8xf32>) -> tensor<32xf32>
    %r2 = "stablehlo.reshape"(%a2) : (tensor<4x8xf32>) -> tensor<32xf32>
    %zero = "stablehlo.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
    %r3 = "stablehlo.reduce"(%a2, %zero) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %r4 = "stablehlo.dot_general"(%a3, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
    %r5 = "stablehlo.concatenate"(%a0, %a0) {dimension = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %r6 = "stablehlo.slice"(%a0) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
    %r7 = "stablehlo.add"(%a0, %a4) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %r8 = "stablehlo.custom_call"(%a0) {call_target_name = "opaque"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8) : (tensor<8x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<8xf32>, tensor<4x6xf32>, tensor<8x8xf32>, tensor<2x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {tpuc.mesh = "dp=2,tp=2", tpuc.sharding_format = "gspmd"} : () -> ()
