// An op without a lowering inside a loop body is reported by its path.
"func.func"() <{function_type = (tensor<i64>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "while_unknown_op"}> ({
^bb0(%n: tensor<i64>, %x: tensor<4xf32>):
  %0:2 = "higher_order.while_loop"(%n, %x) ({
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    %2 = "aten.gt.Scalar"(%i) {operand_names = ["self"], other = 0 : i64} : (tensor<i64>) -> tensor<i1> loc("while_loop/while_loop_cond_graph_0/gt")
    "tpuc.yield"(%2) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    %2 = "aten.sub.Tensor"(%i) {operand_names = ["self"], other = 1 : i64} : (tensor<i64>) -> tensor<i64> loc("while_loop/while_loop_body_graph_0/sub")
    %3 = "aten.kthvalue.default"(%v) {k = 1 : i64, operand_names = ["self"]} : (tensor<4xf32>) -> tensor<4xf32> loc("while_loop/while_loop_body_graph_0/kthvalue")
    "tpuc.yield"(%2, %3) : (tensor<i64>, tensor<4xf32>) -> ()
  }) {tpuc.operand_segments = array<i64: 2, 0>} : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) loc("while_loop")
  "func.return"(%0#1) : (tensor<4xf32>) -> ()
}) : () -> ()
