//! `tpuc-seed-sharding`: the shardings `tpuc compile --mesh --shard` chose for `@main`'s
//! arguments, written onto the module for `stablehlo-propagate-sharding`.
//!
//! Its options carry everything the presets and rules decided from the exported graph
//! (the driver computes them, [`crate::sharding::seeds_for`]), so the pass needs only
//! the module and a printed pipeline replays the compile:
//!
//! `tpuc-seed-sharding{mesh="dp=2,tp=2" format=shardy args="0=[dp, -];3=[-, tp]" megatron=tp weights=1,2}`
//!
//! - `mesh`: the device mesh; `format`: `shardy` or `gspmd`;
//! - `args`: `index=sharding` for each seeded argument (the others are replicated);
//! - `megatron` and `weights`: with `--shard megatron`, its mesh axis and the
//!   arguments that are weights it decides at their first use;
//! - `fsdp_after`: with `--shard fsdp,megatron`, the parameters fsdp splits once
//!   megatron has decided them (`tpuc.fsdp`);
//! - `state`: `argument:result` for each state argument (a KV cache) and the result
//!   holding its next value; an unseeded one is split like its first update.
//!
//! Output: the module attributes `tpuc.mesh`, `tpuc.sharding_format` and
//! `tpuc.megatron`, and `tpuc.sharding` / `tpuc.weight` / `tpuc.state` on the
//! arguments, as `stablehlo-propagate-sharding` documents them.

use melior::ir::Module;
use melior::Context;
use tpuc_artifact::manifest::ShardingFormat;
use tpuc_artifact::sharding::{Mesh, TensorSharding};

use super::{ir, propagate_sharding, Pass};
use crate::error::CompileError;
use crate::pipeline::{parse_indices, PassSpec};

pub const NAME: &str = "tpuc-seed-sharding";

/// The decisions of `--mesh`, `--shard` and `--sharding-rules` for one program.
#[derive(Debug, Clone, PartialEq)]
pub struct Seeds {
    pub mesh: Mesh,
    pub format: ShardingFormat,
    /// Per `@main` argument: its sharding, or `None` (replicated unless Megatron
    /// decides it).
    pub args: Vec<Option<TensorSharding>>,
    /// `--shard megatron`: its mesh axis and which arguments are its weights.
    pub megatron: Option<(String, Vec<bool>)>,
    /// With fsdp and megatron together: the parameters fsdp splits after megatron's
    /// choices (on the first dimension left whole that `fsdp` divides).
    pub fsdp_after: Vec<usize>,
    /// `(argument, result)` of each state argument and the result holding its next
    /// value.
    pub state: Vec<(usize, usize)>,
}

fn format_name(format: ShardingFormat) -> &'static str {
    match format {
        ShardingFormat::Shardy => "shardy",
        ShardingFormat::Gspmd => "gspmd",
    }
}

impl Seeds {
    /// The pass with these seeds as options.
    pub fn spec(&self) -> PassSpec {
        let args: Vec<String> = self
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| format!("{i}={s}")))
            .collect();
        let mut spec = PassSpec::new(NAME)
            .with("mesh", self.mesh.to_string())
            .with("format", format_name(self.format));
        if !args.is_empty() {
            spec = spec.with("args", args.join(";"));
        }
        if let Some((axis, weights)) = &self.megatron {
            let indices: Vec<usize> = (0..weights.len()).filter(|&i| weights[i]).collect();
            spec = spec
                .with("megatron", axis.clone())
                .with("weights", crate::pipeline::join(&indices));
        }
        if !self.fsdp_after.is_empty() {
            spec = spec.with("fsdp_after", crate::pipeline::join(&self.fsdp_after));
        }
        if !self.state.is_empty() {
            let pairs: Vec<String> = self.state.iter().map(|(a, r)| format!("{a}:{r}")).collect();
            spec = spec.with("state", pairs.join(","));
        }
        spec
    }

    /// The seeds written in `spec`'s options, for a module whose `@main` has `num_args`
    /// arguments.
    pub fn from_spec(spec: &PassSpec, num_args: usize) -> Result<Seeds, CompileError> {
        spec.expect_options(&[
            "mesh",
            "format",
            "args",
            "megatron",
            "weights",
            "fsdp_after",
            "state",
        ])?;
        let bad = |message: String| CompileError::PassOption {
            pass: NAME.into(),
            message,
        };
        let mesh = Mesh::parse(
            spec.option("mesh")
                .ok_or_else(|| bad("needs `mesh`".into()))?,
        )
        .map_err(|e| bad(format!("mesh: {e}")))?;
        let format = match spec.option("format").unwrap_or("shardy") {
            "shardy" => ShardingFormat::Shardy,
            "gspmd" => ShardingFormat::Gspmd,
            other => return Err(bad(format!("format `{other}` (known: shardy, gspmd)"))),
        };
        let mut args = vec![None; num_args];
        for entry in spec.option("args").unwrap_or("").split(';') {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let (index, sharding) = entry
                .split_once('=')
                .ok_or_else(|| bad(format!("args: `{entry}` is not `index=sharding`")))?;
            let index: usize = index
                .trim()
                .parse()
                .map_err(|_| bad(format!("args: `{index}` is not an index")))?;
            let slot = args
                .get_mut(index)
                .ok_or_else(|| bad(format!("args: @main has no argument {index}")))?;
            *slot = Some(
                TensorSharding::parse(sharding.trim())
                    .map_err(|e| bad(format!("args: argument {index}: {e}")))?,
            );
        }
        let megatron = match spec.option("megatron") {
            None => None,
            Some(axis) => {
                let mut weights = vec![false; num_args];
                for i in parse_indices(NAME, "weights", spec.option("weights").unwrap_or(""))? {
                    *weights
                        .get_mut(i)
                        .ok_or_else(|| bad(format!("weights: @main has no argument {i}")))? = true;
                }
                Some((axis.to_string(), weights))
            }
        };
        let mut state = Vec::new();
        for pair in spec.option("state").unwrap_or("").split(',') {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let parsed: Option<(usize, usize)> = pair
                .split_once(':')
                .and_then(|(a, r)| Some((a.trim().parse().ok()?, r.trim().parse().ok()?)));
            match parsed {
                Some((arg, result)) if arg < num_args => state.push((arg, result)),
                Some((arg, _)) => return Err(bad(format!("state: @main has no argument {arg}"))),
                None => return Err(bad(format!("state: `{pair}` is not `argument:result`"))),
            }
        }
        let fsdp_after =
            parse_indices(NAME, "fsdp_after", spec.option("fsdp_after").unwrap_or(""))?;
        if let Some(&i) = fsdp_after.iter().find(|&&i| i >= num_args) {
            return Err(bad(format!("fsdp_after: @main has no argument {i}")));
        }
        Ok(Seeds {
            mesh,
            format,
            args,
            megatron,
            fsdp_after,
            state,
        })
    }
}

/// The pass; from the registry without options it refuses to run (it has nothing to
/// seed).
pub struct SeedSharding(pub Option<PassSpec>);

impl Pass for SeedSharding {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "write the argument shardings --mesh/--shard decided (its options) onto @main, as seeds for the sharding propagation"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let spec = self.0.as_ref().ok_or_else(|| CompileError::PassOption {
            pass: NAME.into(),
            message: "needs its options (`tpuc compile --print-pipeline` writes them)".into(),
        })?;
        let num_args = ir::main_block(&module)
            .map(|b| ir::block_arguments(b).len())
            .ok_or_else(|| CompileError::Sharding("the module has no @main".into()))?;
        let seeds = Seeds::from_spec(spec, num_args)?;
        propagate_sharding::seed(
            &module,
            &seeds.mesh,
            seeds.format,
            &seeds.args,
            seeds
                .megatron
                .as_ref()
                .map(|(axis, w)| (axis.as_str(), w.as_slice())),
            &seeds.fsdp_after,
            &seeds.state,
        )?;
        Ok(module)
    }
}
