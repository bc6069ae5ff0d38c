//! `tpuc-optimizer`: the optimizer of a training step, inside the program.
//!
//! Input: a joint program's `@main` after lowering, returning the loss, then
//! `gradients` gradients, then the buffers' next values. Output: `@main` also takes
//! each trained parameter's optimizer state and the step counter `s` (f32, the steps
//! taken before this one), and returns its report (the loss, the gradient norm before
//! clipping and the learning rate used, one f32[3]), the buffers' next values, then the next values of the
//! parameters, of the optimizer state and of `s` (the layout of
//! [`crate::training::Layout`]).
//!
//! `tpuc-optimizer{optimizer=adamw lr=0.001 betas=0.9,0.999 eps=1e-8 weight-decay=0.01
//! clip-grad-norm=1 schedule=warmup-cosine warmup-steps=5 total-steps=30 min-lr-ratio=0.1
//! gradients=4 params=0:1,1:2}`: `params` pairs each trained parameter's argument with
//! its gradient's result; a gradient not listed (a frozen parameter) is dropped.
//!
//! The updates are `torch.optim`'s single-tensor formulas, op for op in the parameter's
//! dtype:
//! - clipping (`clip_grad_norm_`): `n = sqrt(sum_i ||g_i||^2)`, every gradient times
//!   `min(max / (n + 1e-6), 1)`;
//! - learning rate `lr * f(s)` of the schedule;
//! - Adam: `g += wd * p`; AdamW: `p *= 1 - lr * wd`; then `m = lerp(m, g, 1 - b1)`,
//!   `v = v * b2 + (1 - b2) * g * g`, `p += -(lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)`
//!   with `t = s + 1` (`1 - b^t` computed as `-expm1(t * ln b)`, exact where f32's `b^t`
//!   loses bits for `b` near 1);
//! - SGD: `g += wd * p`; with momentum `buf = g` on the first step, else
//!   `buf = buf * momentum + (1 - dampening) * g`, and `g = g + momentum * buf`
//!   (Nesterov) or `g = buf`; `p += -lr * g`.

use melior::ir::{BlockRef, Location, Module};
use melior::Context;
use tpuc_artifact::training::{Hyperparameters, OptimizerKind, Schedule};
use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{Cmp, ReduceKind};
use tpuc_dialects::{Emitter, TValue};

use super::{ir, Pass};
use crate::error::CompileError;
use crate::pipeline::PassSpec;

pub const NAME: &str = "tpuc-optimizer";

pub struct Optimizer {
    pub hyperparameters: Hyperparameters,
    /// Gradient results following the loss.
    pub gradients: usize,
    /// `(argument, gradient result)` of each trained parameter.
    pub params: Vec<(usize, usize)>,
}

fn bad(message: String) -> CompileError {
    CompileError::PassOption {
        pass: NAME.into(),
        message,
    }
}

fn number(spec: &PassSpec, key: &str, default: f64) -> Result<f64, CompileError> {
    match spec.option(key) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| bad(format!("{key}: `{v}` is not a number"))),
    }
}

impl Optimizer {
    pub fn from_spec(spec: &PassSpec) -> Result<Optimizer, CompileError> {
        spec.expect_options(&[
            "optimizer",
            "lr",
            "betas",
            "eps",
            "weight-decay",
            "momentum",
            "dampening",
            "nesterov",
            "clip-grad-norm",
            "schedule",
            "warmup-steps",
            "total-steps",
            "min-lr-ratio",
            "gradients",
            "params",
        ])?;
        let kind = spec.option("optimizer").unwrap_or("adamw");
        let kind = OptimizerKind::parse(kind)
            .ok_or_else(|| bad(format!("optimizer: `{kind}` is not adam, adamw or sgd")))?;
        let mut h = Hyperparameters::defaults(kind);
        h.lr = number(spec, "lr", h.lr)?;
        if let Some(b) = spec.option("betas") {
            h.betas = tpuc_artifact::training::parse_betas(b)
                .ok_or_else(|| bad(format!("betas: `{b}` is not `B1,B2`")))?;
        }
        h.eps = number(spec, "eps", h.eps)?;
        h.weight_decay = number(spec, "weight-decay", h.weight_decay)?;
        h.momentum = number(spec, "momentum", h.momentum)?;
        h.dampening = number(spec, "dampening", h.dampening)?;
        h.nesterov = match spec.option("nesterov") {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => return Err(bad(format!("nesterov: `{v}` is not true or false"))),
        };
        h.clip_grad_norm = match spec.option("clip-grad-norm") {
            None => None,
            Some(_) => Some(number(spec, "clip-grad-norm", 0.0)?),
        };
        let steps = |key: &str| -> Result<u64, CompileError> {
            let v = spec
                .option(key)
                .ok_or_else(|| bad(format!("the schedule needs {key}")))?;
            v.parse()
                .map_err(|_| bad(format!("{key}: `{v}` is not a step count")))
        };
        h.schedule = match spec.option("schedule").unwrap_or("constant") {
            "constant" => Schedule::Constant,
            "warmup-cosine" => Schedule::WarmupCosine {
                warmup: steps("warmup-steps")?,
                total: steps("total-steps")?,
                min_lr_ratio: number(spec, "min-lr-ratio", 0.0)?,
            },
            "warmup-linear" => Schedule::WarmupLinear {
                warmup: steps("warmup-steps")?,
                total: steps("total-steps")?,
                min_lr_ratio: number(spec, "min-lr-ratio", 0.0)?,
            },
            other => return Err(bad(format!("schedule: unknown `{other}`"))),
        };
        h.check().map_err(bad)?;
        let gradients = number(spec, "gradients", 0.0)? as usize;
        let mut params = Vec::new();
        for pair in spec.option("params").unwrap_or("").split(',') {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let parsed = pair
                .split_once(':')
                .and_then(|(a, r)| Some((a.trim().parse().ok()?, r.trim().parse().ok()?)));
            params.push(parsed.ok_or_else(|| {
                bad(format!(
                    "params: `{pair}` is not `argument:gradient-result`"
                ))
            })?);
        }
        Ok(Optimizer {
            hyperparameters: h,
            gradients,
            params,
        })
    }
}

impl Pass for Optimizer {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "a joint program's gradients applied by torch.optim's Adam, AdamW or SGD in @main (options: see tpuc compile --train)"
    }
    fn run<'c>(&self, ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let block = ir::main_block(&module)
            .ok_or_else(|| CompileError::Internal("the program has no @main".into()))?;
        let func = ir::block_parent(block);
        let ret = *ir::block_ops(block)
            .last()
            .ok_or_else(|| CompileError::Internal("@main is empty".into()))?;
        if ir::op_name(ret) != "func.return" {
            return Err(CompileError::Internal(
                "@main does not end in a return".into(),
            ));
        }
        let returned = ir::operands(ret);
        if returned.len() < 1 + self.gradients {
            return Err(bad(format!(
                "@main returns {} values, fewer than the loss and {} gradients",
                returned.len(),
                self.gradients
            )));
        }
        let args = ir::block_arguments(block);
        for &(arg, grad) in &self.params {
            if arg >= args.len() || grad == 0 || grad > self.gradients {
                return Err(bad(format!(
                    "params: `{arg}:{grad}` names no argument or gradient result"
                )));
            }
            if !ir::same_type(args[arg], returned[grad]) {
                return Err(bad(format!(
                    "argument {arg} and its gradient (result {grad}) differ in type"
                )));
            }
        }
        let loc = ir::location(ret);
        // The optimizer state, parameter by parameter, then the step counter.
        let slots = self.hyperparameters.slots().len();
        let mut state = Vec::new();
        for &(arg, _) in &self.params {
            for _ in 0..slots {
                let at = ir::block_arguments(block).len();
                state.push(ir::insert_block_argument(
                    block,
                    at,
                    ir::value_type(args[arg]),
                    loc,
                ));
            }
        }
        let f32_scalar = ir::parse_type(ir::context(func), "tensor<f32>")
            .ok_or_else(|| CompileError::Internal("cannot make tensor<f32>".into()))?;
        let at = ir::block_arguments(block).len();
        let step = ir::insert_block_argument(block, at, f32_scalar, loc);
        ir::erase(ret);

        // SAFETY: the block and location belong to `module`, which outlives the emitter.
        let block_ref = unsafe { BlockRef::from_raw(block) };
        let e = Emitter::new(ctx, &block_ref, unsafe { Location::from_raw(loc) });
        let value = |v| TValue::from_value(unsafe { melior::ir::Value::from_raw(v) });
        let wrap = |r: Result<TValue, tpuc_dialects::DialectError>| {
            r.map_err(|err| CompileError::Internal(format!("{NAME}: {err}")))
        };
        let params: Vec<TValue> = self
            .params
            .iter()
            .map(|&(a, _)| wrap(value(args[a])))
            .collect::<Result<_, _>>()?;
        let grads: Vec<TValue> = self
            .params
            .iter()
            .map(|&(_, g)| wrap(value(returned[g])))
            .collect::<Result<_, _>>()?;
        let state: Vec<TValue> = state
            .into_iter()
            .map(|v| wrap(value(v)))
            .collect::<Result<_, _>>()?;
        let step = wrap(value(step))?;
        let update = emit_update(&e, &self.hyperparameters, &params, &grads, &state, &step)
            .map_err(|err| CompileError::Internal(format!("{NAME}: {err}")))?;

        let loss = wrap(value(returned[0]))?;
        let report = report(&e, &loss, &update.grad_norm, &update.lr)
            .map_err(|err| CompileError::Internal(format!("{NAME}: {err}")))?;
        let mut results = vec![report];
        for &v in &returned[1 + self.gradients..] {
            results.push(wrap(value(v))?);
        }
        results.extend(update.params);
        results.extend(update.state);
        results.push(update.step);
        let refs: Vec<&TValue> = results.iter().collect();
        e.func_return(&refs)
            .map_err(|err| CompileError::Internal(format!("{NAME}: {err}")))?;
        let types: Vec<_> = results.iter().map(|v| ir::value_type(v.raw())).collect();
        if !ir::set_function_argument_types(func, block)
            || !ir::set_function_result_types(func, &types)
        {
            return Err(CompileError::Internal(
                "cannot update @main's function type".into(),
            ));
        }
        let num_args = ir::block_arguments(block).len();
        if ir::attribute(func, "arg_attrs").is_some() {
            ir::edit_attribute_dictionaries(func, "arg_attrs", num_args, |_, entries| entries);
        }
        if ir::attribute(func, "res_attrs").is_some() {
            ir::edit_attribute_dictionaries(func, "res_attrs", results.len(), |_, _| Vec::new());
        }
        Ok(module)
    }
}

/// The step's report: the loss (in f32), the gradient norm and the learning rate as one
/// f32[3], so that one transfer brings it to the host.
fn report(e: &Emitter, loss: &TValue, grad_norm: &TValue, lr: &TValue) -> R<TValue> {
    let one = |v: &TValue| e.reshape(&e.convert(v, DType::F32)?, &[1]);
    let (a, b, c) = (one(loss)?, one(grad_norm)?, one(lr)?);
    e.concatenate(&[&a, &b, &c], 0)
}

/// What [`emit_update`] computes.
struct Update {
    grad_norm: TValue,
    lr: TValue,
    params: Vec<TValue>,
    state: Vec<TValue>,
    step: TValue,
}

type R<T> = Result<T, tpuc_dialects::DialectError>;

/// A rank-0 f32 value broadcast to `like` in `like`'s dtype.
fn spread(e: &Emitter, x: &TValue, like: &TValue) -> R<TValue> {
    let x = e.convert(x, like.dtype())?;
    e.broadcast_in_dim(&x, like.shape(), &[])
}

/// A constant of `like`'s type.
fn splat(e: &Emitter, like: &TValue, v: f64) -> R<TValue> {
    e.constant(&like.ty, v)
}

/// The schedule's factor `f(s)` as an f32 scalar.
fn schedule_factor(e: &Emitter, schedule: &Schedule, s: &TValue) -> R<TValue> {
    let c = |v: f64| e.scalar(DType::F32, v);
    let (warmup, total, r, cosine) = match *schedule {
        Schedule::Constant => return c(1.0),
        Schedule::WarmupCosine {
            warmup,
            total,
            min_lr_ratio,
        } => (warmup as f64, total as f64, min_lr_ratio, true),
        Schedule::WarmupLinear {
            warmup,
            total,
            min_lr_ratio,
        } => (warmup as f64, total as f64, min_lr_ratio, false),
    };
    let decay = if cosine {
        // R + (1 - R) * 0.5 * (1 + cos(pi * (s - W) / (T - W)))
        let phase = e.div(
            &e.mul(&c(std::f64::consts::PI)?, &e.sub(s, &c(warmup)?)?)?,
            &c(total - warmup)?,
        )?;
        let wave = e.add(&c(1.0)?, &e.unary("stablehlo.cosine", &phase)?)?;
        e.add(&c(r)?, &e.mul(&c((1.0 - r) * 0.5)?, &wave)?)?
    } else {
        // R + (1 - R) * (T - s) / (T - W)
        let left = e.div(&e.sub(&c(total)?, s)?, &c(total - warmup)?)?;
        e.add(&c(r)?, &e.mul(&c(1.0 - r)?, &left)?)?
    };
    let after = e.select(&e.compare(Cmp::Ge, s, &c(total)?)?, &c(r)?, &decay)?;
    if warmup == 0.0 {
        return Ok(after);
    }
    let warm = e.div(&e.add(s, &c(1.0)?)?, &c(warmup)?)?;
    e.select(&e.compare(Cmp::Lt, s, &c(warmup)?)?, &warm, &after)
}

/// `1 - b^t` for the f32 scalar `t`, as `-expm1(t * ln b)`.
fn one_minus_power(e: &Emitter, b: f64, t: &TValue) -> R<TValue> {
    if b == 0.0 {
        return e.scalar(DType::F32, 1.0);
    }
    let x = e.mul(t, &e.scalar(DType::F32, b.ln())?)?;
    let em1 = e.unary("stablehlo.exponential_minus_one", &x)?;
    e.unary("stablehlo.negate", &em1)
}

fn emit_update(
    e: &Emitter,
    h: &Hyperparameters,
    params: &[TValue],
    grads: &[TValue],
    state: &[TValue],
    s: &TValue,
) -> R<Update> {
    let c = |v: f64| e.scalar(DType::F32, v);
    // The gradient norm, as clip_grad_norm_ computes it: the norm of the per-tensor
    // norms, in f32.
    let mut sum_sq = c(0.0)?;
    for g in grads {
        let gf = e.convert(g, DType::F32)?;
        let dims: Vec<i64> = (0..gf.rank() as i64).collect();
        let sq = e.reduce(&e.mul(&gf, &gf)?, 0.0, &dims, ReduceKind::Add)?;
        let norm = e.unary("stablehlo.sqrt", &sq)?;
        sum_sq = e.add(&sum_sq, &e.mul(&norm, &norm)?)?;
    }
    let grad_norm = e.unary("stablehlo.sqrt", &sum_sq)?;
    let mut grads: Vec<TValue> = grads.to_vec();
    if let Some(max) = h.clip_grad_norm {
        let coef = e.div(&c(max)?, &e.add(&grad_norm, &c(1e-6)?)?)?;
        let coef = e.min(&coef, &c(1.0)?)?;
        grads = grads
            .iter()
            .map(|g| e.mul(g, &spread(e, &coef, g)?))
            .collect::<R<_>>()?;
    }
    let lr = e.mul(&c(h.lr)?, &schedule_factor(e, &h.schedule, s)?)?;
    let t = e.add(s, &c(1.0)?)?;
    let neg_lr = e.unary("stablehlo.negate", &lr)?;
    let mut new_params = Vec::new();
    let mut new_state = Vec::new();
    match h.optimizer {
        OptimizerKind::Adam | OptimizerKind::AdamW => {
            let (b1, b2) = h.betas;
            let bc1 = one_minus_power(e, b1, &t)?;
            let bc2 = one_minus_power(e, b2, &t)?;
            let neg_step_size = e.unary("stablehlo.negate", &e.div(&lr, &bc1)?)?;
            let bc2_sqrt = e.unary("stablehlo.sqrt", &bc2)?;
            let decay = e.sub(&c(1.0)?, &e.mul(&lr, &c(h.weight_decay)?)?)?;
            for (i, (p, g)) in params.iter().zip(&grads).enumerate() {
                let (m, v) = (&state[2 * i], &state[2 * i + 1]);
                let mut p = p.clone();
                let mut g = g.clone();
                if h.weight_decay != 0.0 {
                    match h.optimizer {
                        OptimizerKind::AdamW => p = e.mul(&p, &spread(e, &decay, &p)?)?,
                        _ => g = e.add(&g, &e.mul(&splat(e, &p, h.weight_decay)?, &p)?)?,
                    }
                }
                // exp_avg.lerp_(grad, 1 - beta1), torch's two-sided formula.
                let w = 1.0 - b1;
                let diff = e.sub(&g, m)?;
                let m_next = if w < 0.5 {
                    e.add(m, &e.mul(&splat(e, m, w)?, &diff)?)?
                } else {
                    e.sub(&g, &e.mul(&diff, &splat(e, m, 1.0 - w)?)?)?
                };
                // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                let v_next = e.add(
                    &e.mul(v, &splat(e, v, b2)?)?,
                    &e.mul(&e.mul(&splat(e, &g, 1.0 - b2)?, &g)?, &g)?,
                )?;
                // denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
                let denom = e.add(
                    &e.div(
                        &e.unary("stablehlo.sqrt", &v_next)?,
                        &spread(e, &bc2_sqrt, &v_next)?,
                    )?,
                    &splat(e, &v_next, h.eps)?,
                )?;
                // param.addcdiv_(exp_avg, denom, value=-step_size)
                let p_next = e.add(
                    &p,
                    &e.mul(&spread(e, &neg_step_size, &p)?, &e.div(&m_next, &denom)?)?,
                )?;
                new_params.push(p_next);
                new_state.push(m_next);
                new_state.push(v_next);
            }
        }
        OptimizerKind::Sgd => {
            let first = e.compare(Cmp::Eq, s, &c(0.0)?)?;
            for (i, (p, g)) in params.iter().zip(&grads).enumerate() {
                let mut g = g.clone();
                if h.weight_decay != 0.0 {
                    g = e.add(&g, &e.mul(&splat(e, p, h.weight_decay)?, p)?)?;
                }
                if h.momentum != 0.0 {
                    let buf = &state[i];
                    let later = e.add(
                        &e.mul(buf, &splat(e, buf, h.momentum)?)?,
                        &e.mul(&splat(e, &g, 1.0 - h.dampening)?, &g)?,
                    )?;
                    let pred = e.broadcast_in_dim(&first, g.shape(), &[])?;
                    let buf_next = e.select(&pred, &g, &later)?;
                    g = if h.nesterov {
                        e.add(&g, &e.mul(&splat(e, &buf_next, h.momentum)?, &buf_next)?)?
                    } else {
                        buf_next.clone()
                    };
                    new_state.push(buf_next);
                }
                new_params.push(e.add(p, &e.mul(&spread(e, &neg_lr, p)?, &g)?)?);
            }
        }
    }
    Ok(Update {
        grad_norm,
        lr,
        params: new_params,
        state: new_state,
        step: t,
    })
}
