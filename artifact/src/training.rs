//! Training steps: the optimizer's hyperparameters (`tpuc compile --train`) and the
//! manifest's `training` section, which says which arguments of a compiled training
//! step are parameters, optimizer state and the step counter, under which state-dict
//! names a checkpoint stores them.
//!
//! The update formulas are `torch.optim`'s (`Adam`, `AdamW`, `SGD`), with its defaults;
//! the learning-rate schedules are the `LambdaLR` factors the compile options name.
//! The compiler's `tpuc-optimizer` pass emits them; [`Hyperparameters::lr_factor`] is
//! the same schedule on the host (for reports and tests).

use serde::{Deserialize, Serialize};

/// `torch.optim`'s optimizers that a training step can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// `torch.optim.Adam`: weight decay added to the gradient (L2).
    Adam,
    /// `torch.optim.AdamW`: decoupled weight decay.
    AdamW,
    /// `torch.optim.SGD`, with momentum, dampening and Nesterov.
    Sgd,
}

impl OptimizerKind {
    pub fn parse(name: &str) -> Option<OptimizerKind> {
        match name.to_ascii_lowercase().as_str() {
            "adam" => Some(OptimizerKind::Adam),
            "adamw" => Some(OptimizerKind::AdamW),
            "sgd" => Some(OptimizerKind::Sgd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OptimizerKind::Adam => "adam",
            OptimizerKind::AdamW => "adamw",
            OptimizerKind::Sgd => "sgd",
        }
    }
}

/// How the learning rate changes with the step: the step with `s` optimizer steps
/// before it uses `lr * f(s)` (what `LambdaLR(opt, f)` gives with `scheduler.step()`
/// after each `optimizer.step()`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Schedule {
    /// `f(s) = 1`.
    Constant,
    /// `(s + 1) / W` while `s < W`, then `R + (1 - R) * 0.5 * (1 + cos(pi * (s - W) / (T - W)))`,
    /// and `R` from `s >= T` on.
    WarmupCosine {
        warmup: u64,
        total: u64,
        min_lr_ratio: f64,
    },
    /// `(s + 1) / W` while `s < W`, then `R + (1 - R) * (T - s) / (T - W)`, and `R`
    /// from `s >= T` on.
    WarmupLinear {
        warmup: u64,
        total: u64,
        min_lr_ratio: f64,
    },
}

impl Schedule {
    pub fn name(&self) -> &'static str {
        match self {
            Schedule::Constant => "constant",
            Schedule::WarmupCosine { .. } => "warmup-cosine",
            Schedule::WarmupLinear { .. } => "warmup-linear",
        }
    }

    /// The factor of the step with `s` steps before it.
    pub fn factor(&self, s: u64) -> f64 {
        let (warmup, total, r, cosine) = match *self {
            Schedule::Constant => return 1.0,
            Schedule::WarmupCosine {
                warmup,
                total,
                min_lr_ratio,
            } => (warmup, total, min_lr_ratio, true),
            Schedule::WarmupLinear {
                warmup,
                total,
                min_lr_ratio,
            } => (warmup, total, min_lr_ratio, false),
        };
        if s < warmup {
            return (s + 1) as f64 / warmup as f64;
        }
        if s >= total {
            return r;
        }
        let (s, w, t) = (s as f64, warmup as f64, total as f64);
        if cosine {
            r + (1.0 - r) * 0.5 * (1.0 + (std::f64::consts::PI * (s - w) / (t - w)).cos())
        } else {
            r + (1.0 - r) * (t - s) / (t - w)
        }
    }
}

/// An optimizer and its hyperparameters, as `torch.optim` takes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hyperparameters {
    pub optimizer: OptimizerKind,
    pub lr: f64,
    /// Adam and AdamW.
    pub betas: (f64, f64),
    /// Adam and AdamW.
    pub eps: f64,
    pub weight_decay: f64,
    /// SGD.
    pub momentum: f64,
    /// SGD.
    pub dampening: f64,
    /// SGD.
    pub nesterov: bool,
    /// `torch.nn.utils.clip_grad_norm_(parameters, max_norm)` before each update.
    pub clip_grad_norm: Option<f64>,
    pub schedule: Schedule,
}

/// `B1,B2` (`0.9,0.95`), as `--betas` and the optimizer pass's `betas=` write them.
pub fn parse_betas(text: &str) -> Option<(f64, f64)> {
    let parsed: Option<Vec<f64>> = text.split(',').map(|x| x.trim().parse().ok()).collect();
    match parsed.as_deref() {
        Some([b1, b2]) => Some((*b1, *b2)),
        _ => None,
    }
}

impl Hyperparameters {
    /// `torch.optim`'s defaults for `optimizer`.
    pub fn defaults(optimizer: OptimizerKind) -> Hyperparameters {
        Hyperparameters {
            optimizer,
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: match optimizer {
                OptimizerKind::AdamW => 1e-2,
                _ => 0.0,
            },
            momentum: 0.0,
            dampening: 0.0,
            nesterov: false,
            clip_grad_norm: None,
            schedule: Schedule::Constant,
        }
    }

    /// The ranges `torch.optim` enforces, and the schedule's own: each violation named
    /// with its option.
    pub fn check(&self) -> Result<(), String> {
        let fail = |option: &str, why: String| Err(format!("{option}: {why}"));
        if !(self.lr.is_finite() && self.lr >= 0.0) {
            return fail("--lr", format!("{} is not a learning rate >= 0", self.lr));
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return fail(
                "--weight-decay",
                format!("{} is not a weight decay >= 0", self.weight_decay),
            );
        }
        if let Some(c) = self.clip_grad_norm {
            if !(c.is_finite() && c > 0.0) {
                return fail("--clip-grad-norm", format!("{c} is not a norm > 0"));
            }
        }
        match self.optimizer {
            OptimizerKind::Adam | OptimizerKind::AdamW => {
                for (i, b) in [self.betas.0, self.betas.1].into_iter().enumerate() {
                    if !(0.0..1.0).contains(&b) {
                        return fail("--betas", format!("beta{} = {b} is not in [0, 1)", i + 1));
                    }
                }
                if !(self.eps.is_finite() && self.eps >= 0.0) {
                    return fail("--eps", format!("{} is not an epsilon >= 0", self.eps));
                }
            }
            OptimizerKind::Sgd => {
                if !(self.momentum.is_finite() && self.momentum >= 0.0) {
                    return fail(
                        "--momentum",
                        format!("{} is not a momentum >= 0", self.momentum),
                    );
                }
                if !self.dampening.is_finite() {
                    return fail("--dampening", format!("{} is not finite", self.dampening));
                }
                if self.nesterov && (self.momentum <= 0.0 || self.dampening != 0.0) {
                    return fail(
                        "--nesterov",
                        "Nesterov momentum needs --momentum > 0 and --dampening 0 (as torch.optim.SGD)"
                            .into(),
                    );
                }
            }
        }
        match self.schedule {
            Schedule::Constant => Ok(()),
            Schedule::WarmupCosine {
                warmup,
                total,
                min_lr_ratio,
            }
            | Schedule::WarmupLinear {
                warmup,
                total,
                min_lr_ratio,
            } => {
                if total <= warmup {
                    return fail(
                        "--total-steps",
                        format!("{total} must be greater than --warmup-steps ({warmup})"),
                    );
                }
                if !(0.0..=1.0).contains(&min_lr_ratio) {
                    return fail("--min-lr-ratio", format!("{min_lr_ratio} is not in [0, 1]"));
                }
                Ok(())
            }
        }
    }

    /// The optimizer state each trained parameter carries, by `torch.optim`'s names.
    pub fn slots(&self) -> &'static [&'static str] {
        match self.optimizer {
            OptimizerKind::Adam | OptimizerKind::AdamW => &["exp_avg", "exp_avg_sq"],
            OptimizerKind::Sgd if self.momentum != 0.0 => &["momentum_buffer"],
            OptimizerKind::Sgd => &[],
        }
    }

    /// The learning rate of the step with `s` steps before it.
    pub fn lr_at(&self, s: u64) -> f64 {
        self.lr * self.schedule.factor(s)
    }
}

/// The manifest's `training` section: a compiled training step's first output is its
/// report ([`REPORT_FIELDS`] as one f32 tensor); every other output updates an argument (parameters, optimizer state, the step
/// counter, buffers), kept on the device between steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Training {
    pub hyperparameters: Hyperparameters,
    /// The trained parameters, in the program's order.
    pub parameters: Vec<TrainedParameter>,
    /// State-dict names of the parameters `--freeze` kept fixed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frozen: Vec<String>,
    /// The argument counting the optimizer steps taken (an f32 scalar, as
    /// `torch.optim` keeps `step`).
    pub step: String,
    /// State-dict names of buffers registered with `persistent=False`, which a
    /// checkpoint leaves out (as `state_dict()` does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_persistent: Vec<String>,
}

/// A parameter the step updates, and its optimizer state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainedParameter {
    /// The state-dict name (`fc1.weight`).
    pub key: String,
    /// The argument that holds it.
    pub argument: String,
    /// Its optimizer state: `torch.optim`'s name (`exp_avg`) and the argument.
    pub state: Vec<(String, String)>,
}

/// The name of a training step's first output: one f32 tensor of [`REPORT_FIELDS`]
/// (one transfer to the host per step).
pub const REPORT: &str = "report";
/// What the report holds, in order: the loss, the gradient norm before clipping and the
/// learning rate the step used.
pub const REPORT_FIELDS: [&str; 3] = ["loss", "grad_norm", "lr"];

/// A training checkpoint's `checkpoint.json` (the runtime's `Trainer` writes it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointInfo {
    pub format: u32,
    /// Optimizer steps taken.
    pub step: u64,
    /// The training step's program checksum (the artifact's).
    pub program: String,
    pub hyperparameters: Hyperparameters,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_match_their_formulas() {
        let c = Schedule::WarmupCosine {
            warmup: 5,
            total: 30,
            min_lr_ratio: 0.1,
        };
        assert_eq!(c.factor(0), 0.2);
        assert_eq!(c.factor(4), 1.0);
        assert!((c.factor(5) - 1.0).abs() < 1e-12);
        assert!((c.factor(30) - 0.1).abs() < 1e-12);
        assert!(
            (c.factor(17) - (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * 12.0 / 25.0).cos())))
                .abs()
                < 1e-12
        );
        let l = Schedule::WarmupLinear {
            warmup: 2,
            total: 10,
            min_lr_ratio: 0.0,
        };
        assert_eq!(l.factor(6), 0.5);
        assert_eq!(l.factor(99), 0.0);
    }

    #[test]
    fn ranges_are_torchs() {
        let mut h = Hyperparameters::defaults(OptimizerKind::AdamW);
        assert!(h.check().is_ok());
        h.betas = (0.9, 1.0);
        assert!(h.check().unwrap_err().contains("--betas"));
        let mut h = Hyperparameters::defaults(OptimizerKind::Sgd);
        h.lr = -1.0;
        assert!(h.check().unwrap_err().contains("--lr"));
        h.lr = 0.1;
        h.nesterov = true;
        assert!(h.check().unwrap_err().contains("--nesterov"));
        h.momentum = 0.9;
        assert!(h.check().is_ok());
        assert_eq!(h.slots(), ["momentum_buffer"]);
    }
}
