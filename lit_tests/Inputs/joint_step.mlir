// A joint program's @main after lowering: the loss sum(p * x) and its gradient x.
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>), sym_name = "main"}> ({
^bb0(%p: tensor<4xf32>, %x: tensor<4xf32>):
  %0 = "stablehlo.multiply"(%p, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %1 = "stablehlo.reduce"(%0, %c) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  "func.return"(%1, %x) : (tensor<f32>, tensor<4xf32>) -> ()
}) : () -> ()
