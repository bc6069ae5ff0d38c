// An int64 tensor reinterpreted as f64 bits (read by neuron_legalize.mlir).
"func.func"() <{function_type = (tensor<2xi64>) -> tensor<2xf64>, sym_name = "main"}> ({
^bb0(%p: tensor<2xi64> loc("p")):
  %b = "stablehlo.bitcast_convert"(%p) : (tensor<2xi64>) -> tensor<2xf64> loc("view_dtype")
  "func.return"(%b) : (tensor<2xf64>) -> ()
}) : () -> ()
