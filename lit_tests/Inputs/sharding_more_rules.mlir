"builtin.module"() ({
  "func.func"() <{arg_attrs = [{tpuc.sharding = "[dp, -, -, -]"}, {tpuc.sharding = "[tp, -, -, -]"}, {tpuc.sharding = "[tp, -]"}, {tpuc.sharding = "[-, tp]"}, {tpuc.sharding = "[-, dp]"}, {tpuc.sharding = "[dp, -]"}, {}, {}, {tpuc.sharding = "[dp, -, tp]"}, {}, {tpuc.sharding = "[tp]"}], function_type = (tensor<4x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x5xi64>, tensor<2x1xi64>, tensor<2x4xf32>, tensor<4x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x6x6x6xf32>, tensor<4x3x4x4xf32>, tensor<4x5x4xf32>, tensor<4x5x4xf32>, tensor<4x5x4xf32>, tensor<8x4xf32>, tensor<4x5x4xf32>, tensor<3x4xf32>), sym_name = "main"}> ({
  ^bb0(%x: tensor<4x3x8x8xf32>, %k: tensor<6x3x3x3xf32>, %vocab: tensor<8x4xf32>, %features: tensor<8x4xf32>, %clash: tensor<8x4xf32>, %ids: tensor<4x5xi64>, %si: tensor<2x1xi64>, %su: tensor<2x4xf32>, %h: tensor<4x5x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>):
    %r0 = "stablehlo.convolution"(%x, %k) {dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, window_strides = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, lhs_dilation = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<4x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<4x6x6x6xf32>
    %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %r1 = "stablehlo.reduce_window"(%x, %ninf) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %m = "stablehlo.maximum"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%m) : (tensor<f32>) -> ()
    }) {window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>} : (tensor<4x3x8x8xf32>, tensor<f32>) -> tensor<4x3x4x4xf32>
    %r2 = "stablehlo.gather"(%vocab, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 4>, indices_are_sorted = false} : (tensor<8x4xf32>, tensor<4x5xi64>) -> tensor<4x5x4xf32>
    %r3 = "stablehlo.gather"(%features, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 4>, indices_are_sorted = false} : (tensor<8x4xf32>, tensor<4x5xi64>) -> tensor<4x5x4xf32>
    %r4 = "stablehlo.gather"(%clash, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 4>, indices_are_sorted = false} : (tensor<8x4xf32>, tensor<4x5xi64>) -> tensor<4x5x4xf32>
    %r5 = "stablehlo.scatter"(%features, %si, %su) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      "stablehlo.return"(%q) : (tensor<f32>) -> ()
    }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<8x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<8x4xf32>
    %r6 = "stablehlo.composite"(%h, %w) {name = "odml.rms_norm", decomposition = @norm, composite_attributes = {epsilon = 1.000000e-06 : f32}, version = 0 : i32} : (tensor<4x5x4xf32>, tensor<4xf32>) -> tensor<4x5x4xf32>
    %r7 = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
    "func.return"(%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7) : (tensor<4x6x6x6xf32>, tensor<4x3x4x4xf32>, tensor<4x5x4xf32>, tensor<4x5x4xf32>, tensor<4x5x4xf32>, tensor<8x4xf32>, tensor<4x5x4xf32>, tensor<3x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x5x4xf32>, tensor<4xf32>) -> tensor<4x5x4xf32>, sym_name = "norm", sym_visibility = "private"}> ({
  ^bb0(%a: tensor<4x5x4xf32>, %c: tensor<4xf32>):
    "func.return"(%a) : (tensor<4x5x4xf32>) -> ()
  }) : () -> ()
}) {tpuc.mesh = "dp=2,tp=2", tpuc.sharding_format = "gspmd"} : () -> ()
