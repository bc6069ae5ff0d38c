// tpuc-optimizer (compiler/src/passes/optimizer.rs): a joint program's @main (loss,
// then gradients) becomes a training step: the optimizer state and the step counter
// are appended to the arguments, and the results are the report (the loss, the gradient
// norm and the learning rate as one f32[3]), then the next parameters, optimizer state
// and step counter.
//
// RUN: tpuc opt %S/Inputs/joint_step.mlir --pass-pipeline='tpuc-optimizer{optimizer=sgd lr=0.1 momentum=0.9 weight-decay=0.01 gradients=1 params=0:1},verify-stablehlo' | FileCheck %s --check-prefix=SGD
// RUN: tpuc opt %S/Inputs/joint_step.mlir --pass-pipeline='tpuc-optimizer{optimizer=adamw lr=0.001 betas=0.9,0.95 eps=1e-8 weight-decay=0.1 clip-grad-norm=1 schedule=warmup-cosine warmup-steps=2 total-steps=10 min-lr-ratio=0.1 gradients=1 params=0:1},verify-stablehlo' | FileCheck %s --check-prefix=ADAMW
// RUN: tpuc opt %S/Inputs/joint_step.mlir --pass-pipeline='tpuc-optimizer{optimizer=sgd gradients=1 params=0:1},verify-stablehlo' | FileCheck %s --check-prefix=PLAIN
// RUN: not tpuc opt %S/Inputs/joint_step.mlir --pass-pipeline='tpuc-optimizer{optimizer=adam betas=0.9,1.5 gradients=1 params=0:1}' 2>&1 | FileCheck %s --check-prefix=BETAS
// RUN: not tpuc opt %S/Inputs/joint_step.mlir --pass-pipeline='tpuc-optimizer{gradients=1 params=5:1}' 2>&1 | FileCheck %s --check-prefix=PARAMS

// SGD with momentum: one momentum buffer (argument 2) and the step counter (3); the
// buffer is the gradient (plus weight decay) on the first step (s == 0), then
// buf * 0.9 + 1 * g; the parameter moves by -lr * buf.
// SGD: function_type = (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>)
// SGD: ^bb0([[P:%arg0]]: tensor<4xf32>, [[G:%arg1]]: tensor<4xf32>, [[BUF:%arg2]]: tensor<4xf32>, [[S:%arg3]]: tensor<f32>)
// SGD: [[NEXT:%[0-9]+]] = "stablehlo.add"([[S]], {{%[0-9]+}})
// SGD: [[FIRST:%[0-9]+]] = "stablehlo.compare"([[S]], {{%[0-9]+}}) {{.*}}comparison_direction EQ
// SGD: [[WD:%[0-9]+]] = "stablehlo.constant"() {value = dense<0.00999999977> : tensor<4xf32>}
// SGD: [[DECAYED:%[0-9]+]] = "stablehlo.multiply"([[WD]], [[P]])
// SGD: [[D:%[0-9]+]] = "stablehlo.add"([[G]], [[DECAYED]])
// SGD: "stablehlo.multiply"([[BUF]], {{%[0-9]+}})
// SGD: [[B:%[0-9]+]] = "stablehlo.select"({{%[0-9]+}}, [[D]], {{%[0-9]+}})
// SGD: [[STEP:%[0-9]+]] = "stablehlo.multiply"({{%[0-9]+}}, [[B]])
// SGD: [[PN:%[0-9]+]] = "stablehlo.add"([[P]], [[STEP]])
// SGD: [[REPORT:%[0-9]+]] = "stablehlo.concatenate"
// SGD: "func.return"([[REPORT]], [[PN]], [[B]], [[NEXT]])

// AdamW with clipping and a warmup-cosine schedule: two moments per parameter; the
// clip coefficient min(1 / (norm + 1e-6), 1) (NaN kept); the schedule's cosine, its
// end (s >= T) and its warmup (s < W) selects; 1 - b^t as -expm1(t ln b), twice.
// ADAMW: function_type = (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>)
// ADAMW: "stablehlo.minimum"
// ADAMW: "stablehlo.cosine"
// ADAMW: comparison_direction GE
// ADAMW: comparison_direction LT
// ADAMW: "stablehlo.exponential_minus_one"
// ADAMW: "stablehlo.exponential_minus_one"
// ADAMW: "func.return"

// Plain SGD keeps no state but the step counter.
// PLAIN: function_type = (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<4xf32>, tensor<f32>)

// BETAS: error: pass `tpuc-optimizer`: --betas: beta2 = 1.5 is not in [0, 1)
// PARAMS: error: pass `tpuc-optimizer`: params: `5:1` names no argument or gradient result
