"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>, tensor<2x4x1x2xf32>, tensor<1x1xi64>, tensor<i64>) -> (tensor<2x4x1x2xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>), sym_name = "main"}> ({
  ^bb0(%kcache: tensor<2x4x8x2xf32>, %vcache: tensor<2x4x8x2xf32>, %seeded: tensor<2x4x8x2xf32>, %k: tensor<2x4x1x2xf32>, %idx: tensor<1x1xi64>, %pos: tensor<i64>):
    %kt = "stablehlo.transpose"(%kcache) {permutation = array<i64: 2, 0, 1, 3>} : (tensor<2x4x8x2xf32>) -> tensor<8x2x4x2xf32>
    %ut = "stablehlo.transpose"(%k) {permutation = array<i64: 2, 0, 1, 3>} : (tensor<2x4x1x2xf32>) -> tensor<1x2x4x2xf32>
    %s = "stablehlo.scatter"(%kt, %idx, %ut) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      "stablehlo.return"(%q) : (tensor<f32>) -> ()
    }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<8x2x4x2xf32>, tensor<1x1xi64>, tensor<1x2x4x2xf32>) -> tensor<8x2x4x2xf32>
    %knext = "stablehlo.transpose"(%s) {permutation = array<i64: 1, 2, 0, 3>} : (tensor<8x2x4x2xf32>) -> tensor<2x4x8x2xf32>
    %zero = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %vnext = "stablehlo.dynamic_update_slice"(%vcache, %k, %zero, %zero, %pos, %zero) : (tensor<2x4x8x2xf32>, tensor<2x4x1x2xf32>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x4x8x2xf32>
    %snext = "stablehlo.add"(%seeded, %vnext) : (tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>) -> tensor<2x4x8x2xf32>
    "func.return"(%k, %knext, %vnext, %snext) : (tensor<2x4x1x2xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>) -> ()
  }) {arg_attrs = [{tpuc.state = 1 : i64}, {tpuc.state = 2 : i64}, {tpuc.sharding = "[-, -, -, -]", tpuc.state = 3 : i64}, {tpuc.sharding = "[dp, tp, -, -]"}, {}, {}]} : () -> ()
}) {tpuc.mesh = "dp=2,tp=2", tpuc.sharding_format = "gspmd"} : () -> ()
