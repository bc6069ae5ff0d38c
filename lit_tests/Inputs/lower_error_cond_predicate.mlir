// A cond whose predicate holds two elements: torch.cond takes one boolean.
"func.func"() <{function_type = (tensor<2xi1>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "cond_two_element_predicate"}> ({
^bb0(%p: tensor<2xi1>, %x: tensor<3xf32>):
  %0 = "higher_order.cond"(%p, %x) ({
  ^bb0(%a: tensor<3xf32>):
    "tpuc.yield"(%a) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%a: tensor<3xf32>):
    %1 = "aten.neg.default"(%a) {operand_names = ["self"]} : (tensor<3xf32>) -> tensor<3xf32> loc("cond/false_graph_0/neg")
    "tpuc.yield"(%1) : (tensor<3xf32>) -> ()
  }) {tpuc.operand_segments = array<i64: 1, 1>} : (tensor<2xi1>, tensor<3xf32>) -> tensor<3xf32> loc("cond")
  "func.return"(%0) : (tensor<3xf32>) -> ()
}) : () -> ()
