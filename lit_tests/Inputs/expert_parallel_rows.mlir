"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x4xbf16>, tensor<4x4x6xbf16>, tensor<4xi32>) -> tensor<256x6xbf16>, sym_name = "main"}> ({
  ^bb0(%x: tensor<256x4xbf16>, %w: tensor<4x4x6xbf16>, %o: tensor<4xi32>):
    %0 = "transformers.grouped_mm_fallback.default"(%x, %w, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<256x4xbf16>, tensor<4x4x6xbf16>, tensor<4xi32>) -> tensor<256x6xbf16> loc("prefill")
    "func.return"(%0) : (tensor<256x6xbf16>) -> ()
  }) : () -> ()
}) : () -> ()
