// Invalid control flow for verify-stablehlo: a branch of another type, a loop condition that is not a boolean, a dynamic_slice with too few start indices.
"func.func"() <{function_type = (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "bad_if"}> ({
^bb0(%p: tensor<i1>, %x: tensor<3xf32>):
  %0 = "stablehlo.if"(%p) ({
    "stablehlo.return"(%x) : (tensor<3xf32>) -> ()
  }, {
    %c = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    "stablehlo.return"(%c) : (tensor<f32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32> loc("if_branch_type")
  "func.return"(%0) : (tensor<3xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<i64>) -> tensor<i64>, sym_name = "bad_while"}> ({
^bb0(%n: tensor<i64>):
  %0 = "stablehlo.while"(%n) ({
  ^bb0(%i: tensor<i64>):
    "stablehlo.return"(%i) : (tensor<i64>) -> ()
  }, {
  ^bb0(%i: tensor<i64>):
    "stablehlo.return"(%i) : (tensor<i64>) -> ()
  }) : (tensor<i64>) -> tensor<i64> loc("while_cond_not_bool")
  "func.return"(%0) : (tensor<i64>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<5x3xf32>, tensor<i64>) -> tensor<2x3xf32>, sym_name = "bad_dynamic_slice"}> ({
^bb0(%x: tensor<5x3xf32>, %i: tensor<i64>):
  %0 = "stablehlo.dynamic_slice"(%x, %i) {slice_sizes = array<i64: 2, 3>} : (tensor<5x3xf32>, tensor<i64>) -> tensor<2x3xf32> loc("dynamic_slice_one_start")
  "func.return"(%0) : (tensor<2x3xf32>) -> ()
}) : () -> ()
