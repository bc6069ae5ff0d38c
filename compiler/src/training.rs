//! Training steps (`tpuc compile --train`): a joint forward + backward program
//! (`torch.export.experimental._export_forward_backward`) compiled with its optimizer
//! into one program that runs forward, backward and update.
//!
//! This module is the one home of a training step's layout, which the pipeline
//! (`tpuc-optimizer`, `tpuc-mark-state-aliases`, `tpuc-seed-sharding`), the artifact
//! writer (the manifest's arguments, outputs and `training` section) and the checks
//! all read:
//!
//! - arguments: the graph's inputs (parameters, buffers, user inputs), then each
//!   trained parameter's optimizer state (`exp_avg`, `exp_avg_sq` or
//!   `momentum_buffer`, parameter by parameter), then the step counter;
//! - results: the report (the loss, the gradient norm before clipping and the learning
//!   rate used, as one f32[3]), then the buffers' next values, the parameters', the optimizer state's and the
//!   step counter's: all state the runtime keeps on the device.

use tpuc_artifact::manifest::{Argument, ArgumentKind, TensorSpec};
use tpuc_artifact::training::{Hyperparameters, TrainedParameter, Training, REPORT, REPORT_FIELDS};
use tpuc_artifact::DType;

use crate::error::CompileError;
use crate::frontend::{Graph, InputKind};
use crate::pipeline::PassSpec;

/// What `--train` asks for: the optimizer and the parameters kept fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    pub hyperparameters: Hyperparameters,
    /// `--freeze`: glob patterns over state-dict names (`*` any run, `?` one character).
    pub freeze: Vec<String>,
}

/// A training request as its options were given (`tpuc compile --train` flags, the
/// Python package's keywords), each `None` when not given; [`TrainSettings::resolve`]
/// applies `torch.optim`'s defaults and checks the combination.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainSettings {
    pub train: bool,
    pub optimizer: Option<String>,
    pub lr: Option<f64>,
    pub betas: Option<(f64, f64)>,
    pub eps: Option<f64>,
    pub weight_decay: Option<f64>,
    pub momentum: Option<f64>,
    pub dampening: Option<f64>,
    pub nesterov: bool,
    pub clip_grad_norm: Option<f64>,
    pub schedule: Option<String>,
    pub warmup_steps: Option<u64>,
    pub total_steps: Option<u64>,
    pub min_lr_ratio: Option<f64>,
    pub freeze: Vec<String>,
}

impl TrainSettings {
    /// The training request, or `None` without `train` (then no training option may be
    /// given). Errors name the option as `{prefix}name` (`--lr` for the CLI, `lr` for
    /// Python keywords, with `_` for `-` there).
    pub fn resolve(&self, prefix: &str) -> Result<Option<TrainOptions>, String> {
        use tpuc_artifact::training::{OptimizerKind, Schedule};
        let name = |flag: &str| crate::options::option_name(prefix, flag);
        let given: Vec<&str> = [
            ("optimizer", self.optimizer.is_some()),
            ("lr", self.lr.is_some()),
            ("betas", self.betas.is_some()),
            ("eps", self.eps.is_some()),
            ("weight-decay", self.weight_decay.is_some()),
            ("momentum", self.momentum.is_some()),
            ("dampening", self.dampening.is_some()),
            ("nesterov", self.nesterov),
            ("clip-grad-norm", self.clip_grad_norm.is_some()),
            ("schedule", self.schedule.is_some()),
            ("warmup-steps", self.warmup_steps.is_some()),
            ("total-steps", self.total_steps.is_some()),
            ("min-lr-ratio", self.min_lr_ratio.is_some()),
            ("freeze", !self.freeze.is_empty()),
        ]
        .into_iter()
        .filter(|(_, g)| *g)
        .map(|(f, _)| f)
        .collect();
        if !self.train {
            return match given.first() {
                None => Ok(None),
                Some(flag) => Err(format!(
                    "{} configures a training step; add {} (and a joint forward + backward program)",
                    name(flag),
                    name("train")
                )),
            };
        }
        let optimizer = self.optimizer.as_deref().unwrap_or("adamw");
        let kind = OptimizerKind::parse(optimizer).ok_or_else(|| {
            format!(
                "{}: unknown `{optimizer}` (known: adamw, adam, sgd)",
                name("optimizer")
            )
        })?;
        let adam = kind != OptimizerKind::Sgd;
        for (flag, set, for_adam) in [
            ("betas", self.betas.is_some(), true),
            ("eps", self.eps.is_some(), true),
            ("momentum", self.momentum.is_some(), false),
            ("dampening", self.dampening.is_some(), false),
            ("nesterov", self.nesterov, false),
        ] {
            if set && for_adam != adam {
                return Err(format!(
                    "{} is not an option of optimizer {optimizer}",
                    name(flag)
                ));
            }
        }
        let mut h = Hyperparameters::defaults(kind);
        h.lr = self.lr.unwrap_or(h.lr);
        h.betas = self.betas.unwrap_or(h.betas);
        h.eps = self.eps.unwrap_or(h.eps);
        h.weight_decay = self.weight_decay.unwrap_or(h.weight_decay);
        h.momentum = self.momentum.unwrap_or(h.momentum);
        h.dampening = self.dampening.unwrap_or(h.dampening);
        h.nesterov = self.nesterov;
        h.clip_grad_norm = self.clip_grad_norm;
        let schedule = self.schedule.as_deref().unwrap_or("constant");
        let need = |v: Option<u64>, flag: &str| {
            v.ok_or_else(|| format!("{} {schedule} needs {}", name("schedule"), name(flag)))
        };
        h.schedule = match schedule {
            "constant" => {
                if self.warmup_steps.is_some()
                    || self.total_steps.is_some()
                    || self.min_lr_ratio.is_some()
                {
                    return Err(format!(
                        "{}, {} and {} shape a schedule: add {} warmup-cosine or warmup-linear",
                        name("warmup-steps"),
                        name("total-steps"),
                        name("min-lr-ratio"),
                        name("schedule")
                    ));
                }
                Schedule::Constant
            }
            "warmup-cosine" => Schedule::WarmupCosine {
                warmup: need(self.warmup_steps, "warmup-steps")?,
                total: need(self.total_steps, "total-steps")?,
                min_lr_ratio: self.min_lr_ratio.unwrap_or(0.0),
            },
            "warmup-linear" => Schedule::WarmupLinear {
                warmup: need(self.warmup_steps, "warmup-steps")?,
                total: need(self.total_steps, "total-steps")?,
                min_lr_ratio: self.min_lr_ratio.unwrap_or(0.0),
            },
            other => {
                return Err(format!(
                    "{}: unknown `{other}` (known: constant, warmup-cosine, warmup-linear)",
                    name("schedule")
                ))
            }
        };
        h.check().map_err(|e| {
            if prefix == "--" {
                e
            } else {
                // `--lr: ...` named as the keyword.
                match e.split_once(": ") {
                    Some((flag, rest)) => {
                        format!("{}: {rest}", name(flag.trim_start_matches("--")))
                    }
                    None => e,
                }
            }
        })?;
        Ok(Some(TrainOptions {
            hyperparameters: h,
            freeze: self.freeze.clone(),
        }))
    }
}

/// The argument name of the step counter.
pub const STEP_ARGUMENT: &str = "optimizer.step";

/// Ops that draw random numbers: a training step with one would need seeded
/// randomness on the device, which tpuc does not build.
const RANDOM_OPS: &[&str] = &[
    "aten.native_dropout",
    "aten.dropout",
    "aten.bernoulli",
    "aten.rand",
    "aten.randn",
    "aten.randint",
    "aten.randperm",
    "aten.rand_like",
    "aten.randn_like",
    "aten.randint_like",
    "aten.normal",
    "aten.uniform",
    "aten.exponential",
    "aten.multinomial",
];

/// A trained parameter: its graph input, the result holding its gradient in the
/// imported program, and its state-dict name.
#[derive(Debug, Clone, PartialEq)]
pub struct Trained {
    pub input: usize,
    pub gradient: usize,
    pub key: String,
}

/// The layout of one training step (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub hyperparameters: Hyperparameters,
    pub trained: Vec<Trained>,
    pub frozen: Vec<String>,
    /// Gradient results of the imported program (trained and frozen).
    pub gradients: usize,
    /// Graph inputs; the optimizer's arguments follow them.
    pub inputs: usize,
    /// `(graph input, imported result)` of each buffer the forward updates.
    pub buffers: Vec<usize>,
    /// State-dict names of the buffers registered with `persistent=False`.
    pub non_persistent: Vec<String>,
}

fn glob(pattern: &str, name: &str) -> bool {
    crate::sharding::glob(pattern.as_bytes(), name.as_bytes())
}

fn refuse(message: String) -> CompileError {
    CompileError::Training(message)
}

impl Layout {
    /// The layout of training `graph` with `options`, after checking that the graph is
    /// a joint program tpuc can train exactly.
    pub fn of(graph: &Graph, options: &TrainOptions) -> Result<Layout, CompileError> {
        let joint = graph.joint.as_ref().ok_or_else(|| {
            refuse(
                "--train needs a joint forward + backward program; export it with \
                 `torch.export.experimental._export_forward_backward(torch.export.export(model, args), \
                 joint_loss_index=0)` from a forward that returns `(loss,)`, then torch.export.save"
                    .into(),
            )
        })?;
        options
            .hyperparameters
            .check()
            .map_err(|e| CompileError::Training(format!("bad hyperparameter {e}")))?;
        let loss = &graph.tensors[&graph.outputs[0]];
        if loss.shape.iter().product::<i64>() != 1 || !loss.shape.is_empty() {
            return Err(refuse(format!(
                "the loss `{}` is {:?} {:?}, not a scalar; reduce it (mean or sum) in the forward you export",
                graph.outputs[0], loss.dtype, loss.shape
            )));
        }
        if !loss.dtype.is_float() {
            return Err(refuse(format!(
                "the loss `{}` is {:?}, not a floating-point scalar",
                graph.outputs[0], loss.dtype
            )));
        }
        if let Some(node) = graph.nodes.iter().find(|n| {
            RANDOM_OPS
                .iter()
                .any(|op| n.target.starts_with(&format!("{op}.")))
        }) {
            return Err(CompileError::Node {
                node: node.name.clone(),
                target: node.target.clone(),
                message: "it draws random numbers, which tpuc's training steps do not; hint: set \
                          dropout (and every other random op) to 0 before exporting, as most LLM \
                          pretraining does"
                    .into(),
            });
        }
        for pattern in &options.freeze {
            let any = graph.inputs.iter().any(|s| {
                s.kind == InputKind::Parameter
                    && s.target.as_deref().is_some_and(|t| glob(pattern, t))
            });
            if !any {
                return Err(refuse(format!(
                    "--freeze '{pattern}' matches no parameter (parameters: {})",
                    graph
                        .inputs
                        .iter()
                        .filter(|s| s.kind == InputKind::Parameter)
                        .filter_map(|s| s.target.as_deref())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        let mut trained = Vec::new();
        let mut frozen = Vec::new();
        for (g, name) in joint.parameters.iter().enumerate() {
            let (input, spec) = graph
                .inputs
                .iter()
                .enumerate()
                .find(|(_, s)| &s.name == name)
                .ok_or_else(|| CompileError::Internal(format!("parameter `{name}` is no input")))?;
            let key = spec.target.clone().unwrap_or_else(|| name.clone());
            let (p, grad) = (&graph.tensors[name], &graph.tensors[&graph.outputs[1 + g]]);
            if p.dtype != grad.dtype || p.shape != grad.shape {
                return Err(refuse(format!(
                    "the gradient of `{key}` is {:?} {:?} but the parameter is {:?} {:?}",
                    grad.dtype, grad.shape, p.dtype, p.shape
                )));
            }
            if !p.dtype.is_float() {
                return Err(refuse(format!(
                    "parameter `{key}` is {:?}; tpuc trains floating-point parameters",
                    p.dtype
                )));
            }
            if options.freeze.iter().any(|f| glob(f, &key)) {
                frozen.push(key);
            } else {
                trained.push(Trained {
                    input,
                    gradient: 1 + g,
                    key,
                });
            }
        }
        if trained.is_empty() {
            return Err(refuse(
                "no parameter is trained (every one is frozen or has no gradient)".into(),
            ));
        }
        let buffers = crate::import::state_updates(graph)
            .iter()
            .map(|u| {
                graph
                    .inputs
                    .iter()
                    .position(|s| s.name == u.input)
                    .ok_or_else(|| {
                        CompileError::Internal(format!("state `{}` is no input", u.input))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Layout {
            hyperparameters: options.hyperparameters.clone(),
            trained,
            frozen,
            gradients: joint.parameters.len(),
            inputs: graph.inputs.len(),
            buffers,
            non_persistent: graph
                .inputs
                .iter()
                .filter(|s| !s.persistent)
                .filter_map(|s| s.target.clone())
                .collect(),
        })
    }

    fn slots(&self) -> &'static [&'static str] {
        self.hyperparameters.slots()
    }

    /// The argument index of slot `k` of trained parameter `j`.
    pub fn slot_argument(&self, j: usize, k: usize) -> usize {
        self.inputs + j * self.slots().len() + k
    }

    /// The argument index of the step counter.
    pub fn step_argument(&self) -> usize {
        self.inputs + self.trained.len() * self.slots().len()
    }

    /// `(argument, result)` of every state of the step: buffers, parameters, optimizer
    /// state, the step counter.
    pub fn state_aliases(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut result = 1;
        for &b in &self.buffers {
            out.push((b, result));
            result += 1;
        }
        for t in &self.trained {
            out.push((t.input, result));
            result += 1;
        }
        for j in 0..self.trained.len() {
            for k in 0..self.slots().len() {
                out.push((self.slot_argument(j, k), result));
                result += 1;
            }
        }
        out.push((self.step_argument(), result));
        out
    }

    /// The `tpuc-optimizer` pass of this step.
    pub fn pass(&self) -> PassSpec {
        let h = &self.hyperparameters;
        let params: Vec<String> = self
            .trained
            .iter()
            .map(|t| format!("{}:{}", t.input, t.gradient))
            .collect();
        let mut spec = PassSpec::new(crate::passes::optimizer::NAME)
            .with("optimizer", h.optimizer.name())
            .with("lr", h.lr.to_string());
        spec = match h.optimizer {
            tpuc_artifact::training::OptimizerKind::Sgd => spec
                .with("momentum", h.momentum.to_string())
                .with("dampening", h.dampening.to_string())
                .with("nesterov", h.nesterov.to_string()),
            _ => spec
                .with("betas", format!("{},{}", h.betas.0, h.betas.1))
                .with("eps", h.eps.to_string()),
        };
        spec = spec.with("weight-decay", h.weight_decay.to_string());
        if let Some(c) = h.clip_grad_norm {
            spec = spec.with("clip-grad-norm", c.to_string());
        }
        spec = spec.with("schedule", h.schedule.name());
        match h.schedule {
            tpuc_artifact::training::Schedule::Constant => {}
            tpuc_artifact::training::Schedule::WarmupCosine {
                warmup,
                total,
                min_lr_ratio,
            }
            | tpuc_artifact::training::Schedule::WarmupLinear {
                warmup,
                total,
                min_lr_ratio,
            } => {
                spec = spec
                    .with("warmup-steps", warmup.to_string())
                    .with("total-steps", total.to_string())
                    .with("min-lr-ratio", min_lr_ratio.to_string());
            }
        }
        spec.with("gradients", self.gradients.to_string())
            .with("params", params.join(","))
    }

    /// The manifest's arguments the optimizer adds (after the graph's), with the
    /// sharding of each from `shardings` (all of `@main`'s, when partitioned).
    pub fn arguments(
        &self,
        graph: &Graph,
        shardings: Option<&[tpuc_artifact::sharding::TensorSharding]>,
    ) -> Vec<Argument> {
        let mut out = Vec::new();
        let sharding = |i: usize| shardings.and_then(|s| s.get(i).cloned());
        for (j, t) in self.trained.iter().enumerate() {
            let name = &graph.inputs[t.input].name;
            let meta = &graph.tensors[name];
            for (k, slot) in self.slots().iter().enumerate() {
                out.push(Argument {
                    name: format!("{}.{slot}", t.key),
                    kind: ArgumentKind::OptimizerState,
                    dtype: meta.dtype,
                    shape: meta.shape.clone(),
                    weight: None,
                    zero_filled: false,
                    packed: None,
                    sharding: sharding(self.slot_argument(j, k)),
                });
            }
        }
        out.push(Argument {
            name: STEP_ARGUMENT.into(),
            kind: ArgumentKind::OptimizerState,
            dtype: DType::F32,
            shape: Vec::new(),
            weight: None,
            zero_filled: false,
            packed: None,
            sharding: sharding(self.step_argument()),
        });
        out
    }

    /// The manifest's outputs of the step, given the arguments it wrote (graph inputs
    /// and the optimizer's), with the sharding of each from `shardings`.
    pub fn outputs(
        &self,
        arguments: &[Argument],
        shardings: Option<&[tpuc_artifact::sharding::TensorSharding]>,
    ) -> Vec<TensorSpec> {
        let sharding = |i: usize| shardings.and_then(|s| s.get(i).cloned());
        let mut out = vec![TensorSpec {
            name: REPORT.into(),
            dtype: DType::F32,
            shape: vec![REPORT_FIELDS.len() as i64],
            sharding: sharding(0),
            updates: None,
        }];
        for (arg, result) in self.state_aliases() {
            let a = &arguments[arg];
            out.push(TensorSpec {
                name: a.name.clone(),
                dtype: a.dtype,
                shape: a.shape.clone(),
                sharding: sharding(result),
                updates: Some(a.name.clone()),
            });
        }
        out
    }

    /// The manifest's `training` section, given the arguments it wrote.
    pub fn section(&self, arguments: &[Argument]) -> Training {
        let k = self.slots().len();
        Training {
            hyperparameters: self.hyperparameters.clone(),
            parameters: self
                .trained
                .iter()
                .enumerate()
                .map(|(j, t)| TrainedParameter {
                    key: t.key.clone(),
                    argument: arguments[t.input].name.clone(),
                    state: self
                        .slots()
                        .iter()
                        .enumerate()
                        .map(|(s, slot)| {
                            (
                                slot.to_string(),
                                arguments[self.inputs + j * k + s].name.clone(),
                            )
                        })
                        .collect(),
                })
                .collect(),
            frozen: self.frozen.clone(),
            step: STEP_ARGUMENT.into(),
            non_persistent: self.non_persistent.clone(),
        }
    }
}

/// The sharding seeds of a training step: the graph's (`--shard data-parallel`,
/// `fsdp`, rules) and, for the optimizer's arguments, each parameter's own sharding
/// for its state (the step counter whole). State no seed splits is seeded whole, so
/// that every parameter, its state and their next values keep one sharding.
pub fn seeds(
    layout: &Layout,
    graph: &Graph,
    request: &crate::options::ShardingRequest,
    state: &[(usize, usize)],
) -> Result<crate::passes::seed_sharding::Seeds, CompileError> {
    use crate::options::ShardPreset;
    use tpuc_artifact::sharding::TensorSharding;
    if let Some(p) = request
        .presets
        .iter()
        .find(|p| matches!(p, ShardPreset::Megatron | ShardPreset::Expert))
    {
        return Err(CompileError::Sharding(format!(
            "--shard {} is not built for training steps yet (their optimizer state would \
             have to follow the parameters' in-program decisions); use data-parallel or fsdp",
            match p {
                ShardPreset::Megatron => "megatron",
                _ => "expert",
            }
        )));
    }
    let mut seeds = crate::sharding::seeds_for(graph, request, state)?;
    let rank = |i: usize| graph.tensors[&graph.inputs[i].name].shape.len();
    let slots = layout.slots().len();
    seeds.args.resize(layout.step_argument() + 1, None);
    for (j, t) in layout.trained.iter().enumerate() {
        let s = seeds.args[t.input]
            .clone()
            .unwrap_or_else(|| TensorSharding::replicated(rank(t.input)));
        seeds.args[t.input] = Some(s.clone());
        for k in 0..slots {
            seeds.args[layout.slot_argument(j, k)] = Some(s.clone());
        }
    }
    for &b in &layout.buffers {
        if seeds.args[b].is_none() {
            seeds.args[b] = Some(TensorSharding::replicated(rank(b)));
        }
    }
    seeds.args[layout.step_argument()] = Some(TensorSharding::replicated(0));
    Ok(seeds)
}
