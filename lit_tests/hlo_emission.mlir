// XLA HLO emission (compiler/src/targets/neuron/hlo/, `tpuc opt --emit-hlo`): the form of a Neuron
// artifact's model.hlo.pb, printed as HLO text. Shown: a size-1 expansion as reshape +
// broadcast (HLO's broadcast cannot expand a dimension), scalar clamp bounds and a
// scalar select predicate broadcast to the operand's shape (XLA takes no implicit
// broadcast there), dot dimensions with operand precision, a two-result reduce as a
// tuple-shaped reduce with get-tuple-element, region computations (callees first),
// a sort comparator with its comparison type, and several results as the root tuple.
//
// RUN: tpuc opt %s --emit-hlo | FileCheck %s

// CHECK: HloModule module, entry_computation_layout={(f32[1,3]{1,0}, f32[2,3]{1,0}, f32[], pred[], f32[4]{0}, s32[4]{0})->(f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,2]{1,0}, f32[], s32[], f32[4]{0})}
// CHECK: [[REDUCER:module.main.region[0-9]+]] {
// CHECK-NEXT: Arg_0.{{.*}} = f32[] parameter(0)
// CHECK: ROOT tuple.{{.*}} = (f32[], s32[]) tuple(
// CHECK: [[CMP:module.main.region[0-9]+]] {
// CHECK: ROOT compare.{{.*}} = pred[] compare({{.*}}), direction=LT, type=TOTALORDER
// CHECK: ENTRY module.main {
// CHECK: [[ROW:Arg_0.1]] = f32[1,3]{1,0} parameter(0)
// CHECK: [[X:Arg_1.2]] = f32[2,3]{1,0} parameter(1)
// CHECK: [[LO:Arg_2.3]] = f32[] parameter(2)
// CHECK: [[P:Arg_3.4]] = pred[] parameter(3)
// CHECK: [[R:reshape.[0-9]+]] = f32[3]{0} reshape([[ROW]]), metadata={op_type="broadcast_in_dim" op_name="expand"}
// CHECK-NEXT: [[B:broadcast.[0-9]+]] = f32[2,3]{1,0} broadcast([[R]]), dimensions={1}
// CHECK-NEXT: [[HI:constant.[0-9]+]] = f32[] constant(6.0)
// CHECK-NEXT: [[LOB:broadcast.[0-9]+]] = f32[2,3]{1,0} broadcast([[LO]]), dimensions={}
// CHECK-NEXT: [[HIB:broadcast.[0-9]+]] = f32[2,3]{1,0} broadcast([[HI]]), dimensions={}
// CHECK-NEXT: clamp.{{[0-9]+}} = f32[2,3]{1,0} clamp([[LOB]], [[X]], [[HIB]])
// CHECK-NEXT: [[PB:broadcast.[0-9]+]] = pred[2,3]{1,0} broadcast([[P]]), dimensions={}
// CHECK-NEXT: select.{{[0-9]+}} = f32[2,3]{1,0} select([[PB]], [[X]], [[B]])
// CHECK-NEXT: dot.{{[0-9]+}} = f32[2,2]{1,0} dot([[X]], [[B]]), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={highest,highest}, metadata={op_type="dot_general" op_name="linear"}
// CHECK: constant.{{[0-9]+}} = f32[] constant(-inf)
// CHECK: [[RED:reduce.[0-9]+]] = (f32[], s32[]) reduce({{.*}}), dimensions={0}, to_apply=[[REDUCER]]
// CHECK-NEXT: get-tuple-element.{{[0-9]+}} = f32[] get-tuple-element([[RED]]), index=0
// CHECK-NEXT: get-tuple-element.{{[0-9]+}} = s32[] get-tuple-element([[RED]]), index=1
// CHECK-NEXT: sort.{{[0-9]+}} = f32[4]{0} sort({{.*}}), dimensions={0}, is_stable=true, to_apply=[[CMP]]
// CHECK-NEXT: ROOT tuple.{{[0-9]+}} = (f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,2]{1,0}, f32[], s32[], f32[4]{0}) tuple(

"func.func"() <{function_type = (tensor<1x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<i1>, tensor<4xf32>, tensor<4xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<f32>, tensor<i32>, tensor<4xf32>), sym_name = "main"}> ({
^bb0(%row: tensor<1x3xf32> loc("row"), %x: tensor<2x3xf32> loc("x"), %lo: tensor<f32> loc("lo"), %p: tensor<i1> loc("p"), %v: tensor<4xf32> loc("v"), %iv: tensor<4xi32> loc("iv")):
  %b = "stablehlo.broadcast_in_dim"(%row) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x3xf32>) -> tensor<2x3xf32> loc("expand")
  %hi = "stablehlo.constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32> loc("clamp")
  %c = "stablehlo.clamp"(%lo, %x, %hi) : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("clamp")
  %s = "stablehlo.select"(%p, %x, %b) : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("where")
  %d = "stablehlo.dot_general"(%x, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32> loc("linear")
  %init = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32> loc("max")
  %iinit = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32> loc("max")
  %m:2 = "stablehlo.reduce"(%v, %iv, %init, %iinit) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %bb: tensor<f32>, %bi: tensor<i32>):
    %gt = "stablehlo.compare"(%a, %bb) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %mv = "stablehlo.select"(%gt, %a, %bb) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %mi = "stablehlo.select"(%gt, %ai, %bi) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%mv, %mi) : (tensor<f32>, tensor<i32>) -> ()
  }) : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>) loc("max")
  %sorted = "stablehlo.sort"(%v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %lt = "stablehlo.compare"(%l, %r) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type TOTALORDER>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32> loc("sort")
  "func.return"(%b, %c, %s, %d, %m#0, %m#1, %sorted) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<f32>, tensor<i32>, tensor<4xf32>) -> ()
}) : () -> ()
