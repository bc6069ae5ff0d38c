"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8x4xbf16>, tensor<4x4x6xbf16>, tensor<4x6x4xbf16>, tensor<4x4x6xbf16>, tensor<4xi32>) -> (tensor<8x6xbf16>, tensor<8x6xbf16>, tensor<8x6xbf16>), sym_name = "main"}> ({
  ^bb0(%x: tensor<8x4xbf16>, %w: tensor<4x4x6xbf16>, %v: tensor<4x6x4xbf16>, %r: tensor<4x4x6xbf16>, %o: tensor<4xi32>):
    %0 = "transformers.grouped_mm_fallback.default"(%x, %w, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<8x4xbf16>, tensor<4x4x6xbf16>, tensor<4xi32>) -> tensor<8x6xbf16> loc("up")
    %vt = "aten.transpose.int"(%v) {dim0 = 1 : i64, dim1 = 2 : i64, operand_names = ["self"]} : (tensor<4x6x4xbf16>) -> tensor<4x4x6xbf16>
    %1 = "transformers.grouped_mm_fallback.default"(%x, %vt, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<8x4xbf16>, tensor<4x4x6xbf16>, tensor<4xi32>) -> tensor<8x6xbf16> loc("split_features")
    %3 = "transformers.grouped_mm_fallback.default"(%x, %r, %o) {operand_names = ["input", "weight", "offs"]} : (tensor<8x4xbf16>, tensor<4x4x6xbf16>, tensor<4xi32>) -> tensor<8x6xbf16> loc("replicated")
    "func.return"(%0, %1, %3) : (tensor<8x6xbf16>, tensor<8x6xbf16>, tensor<8x6xbf16>) -> ()
  }) : () -> ()
}) : () -> ()
