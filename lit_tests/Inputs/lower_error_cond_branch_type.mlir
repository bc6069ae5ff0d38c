// A branch that yields another shape than the cond's result.
"func.func"() <{function_type = (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "cond_branch_shape"}> ({
^bb0(%p: tensor<i1>, %x: tensor<3xf32>):
  %0 = "higher_order.cond"(%p, %x) ({
  ^bb0(%a: tensor<3xf32>):
    "tpuc.yield"(%a) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%a: tensor<3xf32>):
    %1 = "aten.sum.dim_IntList"(%a) {dim = array<i64>, operand_names = ["self"]} : (tensor<3xf32>) -> tensor<f32> loc("cond/false_graph_0/sum")
    "tpuc.yield"(%1) : (tensor<f32>) -> ()
  }) {tpuc.operand_segments = array<i64: 1, 1>} : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32> loc("cond")
  "func.return"(%0) : (tensor<3xf32>) -> ()
}) : () -> ()
