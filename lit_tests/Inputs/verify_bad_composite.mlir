// Composites verify-stablehlo refuses (verify_stablehlo.mlir, prefix COMPOSITE).
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({
^bb0(%x: tensor<4xf32>):
  %0 = "stablehlo.composite"(%x) {composite_attributes = {}, decomposition = @missing, name = "my.op", version = 0 : i32} : (tensor<4xf32>) -> tensor<4xf32> loc("no_function")
  %1 = "stablehlo.composite"(%0) {decomposition = @impl_f16, name = "my.op"} : (tensor<4xf32>) -> tensor<4xf32> loc("wrong_type")
  %2 = "stablehlo.composite"(%1) {decomposition = @impl, name = "my.op", version = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> loc("i64_version")
  %3 = "stablehlo.composite"(%2) {decomposition = @impl, name = 3 : i32} : (tensor<4xf32>) -> tensor<4xf32> loc("name_not_string")
  %4 = "stablehlo.composite"(%3) {decomposition = @impl, name = "my.op", version = 0 : i32} : (tensor<4xf32>) -> tensor<4xf32> loc("valid")
  "func.return"(%4) : (tensor<4xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "impl", sym_visibility = "private"}> ({
^bb0(%x: tensor<4xf32>):
  "func.return"(%x) : (tensor<4xf32>) -> ()
}) : () -> ()
"func.func"() <{function_type = (tensor<4xf16>) -> tensor<4xf16>, sym_name = "impl_f16", sym_visibility = "private"}> ({
^bb0(%x: tensor<4xf16>):
  "func.return"(%x) : (tensor<4xf16>) -> ()
}) : () -> ()
