// A position offset beyond int32 (read by neuron_legalize.mlir).
"func.func"() <{function_type = (tensor<2xi64>) -> tensor<2xi64>, sym_name = "main"}> ({
^bb0(%p: tensor<2xi64> loc("p")):
  %c = "stablehlo.constant"() {value = dense<4294967296> : tensor<2xi64>} : () -> tensor<2xi64> loc("position")
  %s = "stablehlo.add"(%p, %c) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64> loc("position")
  "func.return"(%s) : (tensor<2xi64>) -> ()
}) : () -> ()
