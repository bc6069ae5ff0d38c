"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>), sym_name = "main"}> ({
  ^bb0(%w: tensor<4xf32>, %cache: tensor<4xf32>, %x: tensor<4xf32>):
    %0 = "stablehlo.add"(%x, %cache) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.multiply"(%0, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%1, %0) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
