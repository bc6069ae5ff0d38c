"builtin.module"() ({
  "func.func"() <{arg_attrs = [{tpuc.sharding = "[dp, -]"}], function_type = (tensor<3x4xf32>) -> tensor<3x4xf32>, sym_name = "main"}> ({
  ^bb0(%x: tensor<3x4xf32>):
    "func.return"(%x) : (tensor<3x4xf32>) -> ()
  }) : () -> ()
}) {tpuc.mesh = "dp=2"} : () -> ()
