"builtin.module"() ({
  "func.func"() <{arg_attrs = [{tpuc.sharding = "[dp, -]"}, {}, {tpuc.sharding = "[dp, tp]"}, {}, {}], function_type = (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xf32>), sym_name = "main"}> ({
  ^bb0(%scores: tensor<4x8xf32>, %ids: tensor<4x8xi32>, %cache: tensor<4x8xf32>, %new: tensor<4x1xf32>, %pos: tensor<i64>):
    %s:2 = "stablehlo.sort"(%scores, %ids) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %gt = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%gt) : (tensor<i1>) -> ()
    }) {dimension = 1 : i64, is_stable = true} : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
    %across = "stablehlo.sort"(%scores) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %gt = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%gt) : (tensor<i1>) -> ()
    }) {dimension = 0 : i64, is_stable = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %zero = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %u = "stablehlo.dynamic_update_slice"(%cache, %new, %zero, %pos) : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<i64>, tensor<i64>) -> tensor<4x8xf32>
    "func.return"(%s#0, %s#1, %across, %u) : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {tpuc.mesh = "dp=2,tp=2", tpuc.sharding_format = "gspmd"} : () -> ()
