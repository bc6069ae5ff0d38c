//! Named pipelines: what a compile runs, as phases of pass names.
//!
//! A compile's pipeline is built here and nowhere else, from the optimization level,
//! the target ([`crate::targets::Target::spec`] and its pipeline passes) and the facts
//! the driver read off the model ([`ProgramFacts`]: weights an artifact may pack,
//! sharding seeds, state aliases), which reach the passes as options in the pipeline
//! string, never as side channels. The phases, in order:
//!
//! | phase | passes |
//! |---|---|
//! | input | `aten-fold-repeat-kv` (-O2), `aten-outline-composites` (-O2, targets with composites) |
//! | lowering | `lower-aten-to-stablehlo`, `matmul-precision-*` (unless `highest`) |
//! | training | `tpuc-optimizer` (`--train`: the optimizer's update inside the program) |
//! | cleanup | `stablehlo-fold-constants`, `-simplify`, `-gather-to-slice`, `-fold-transpose` (-O2); `stablehlo-dce`, `-cse` (-O1) |
//! | fusion | `stablehlo-outline-composites` (targets with composites), `-fold-batch-reshape`, `-fold-repeated-dot-operand`, `-merge-dots`, `-dce` (-O2) |
//! | target | the target's own passes (Neuron: legalize, auto-cast, check) |
//! | verification | `verify-stablehlo` |
//! | partitioning | `tpuc-seed-sharding`, `stablehlo-propagate-sharding`, `tpuc-expert-parallel` (-O2) (with `--mesh`) |
//! | output | `tpuc-mark-state-aliases` (stateful programs), `tpuc-take-records` |
//!
//! [`Pipeline`]'s text (`tpuc compile --print-pipeline`) is the exact list `tpuc opt
//! --pass-pipeline=...` replays: the same passes with the same options give the same
//! program from the `--emit aten` module. Its syntax is MLIR's: `a,b{key=value
//! key2="a value, with commas"},c`, optionally inside `builtin.module(...)`.

use std::fmt;

use crate::error::CompileError;
use crate::options::CompileOptions;
use crate::passes;
use crate::passes::OptLevel;

/// A stage of the pipeline; see the module documentation for what each holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Input,
    Lowering,
    Training,
    Cleanup,
    Fusion,
    Target,
    Verification,
    Partitioning,
    Output,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Input => "input",
            Phase::Lowering => "lowering",
            Phase::Training => "training",
            Phase::Cleanup => "cleanup",
            Phase::Fusion => "fusion",
            Phase::Target => "target",
            Phase::Verification => "verification",
            Phase::Partitioning => "partitioning",
            Phase::Output => "output",
        }
    }
}

/// One pass of a pipeline: its registered name and its options, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassSpec {
    pub name: String,
    pub options: Vec<(String, String)>,
}

impl PassSpec {
    pub fn new(name: &str) -> PassSpec {
        PassSpec {
            name: name.to_string(),
            options: Vec::new(),
        }
    }

    /// Adds the option `key=value`.
    pub fn with(mut self, key: &str, value: impl Into<String>) -> PassSpec {
        self.options.push((key.to_string(), value.into()));
        self
    }

    /// The value of option `key`.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Refuses options other than `known`, naming the pass.
    pub fn expect_options(&self, known: &[&str]) -> Result<(), CompileError> {
        match self
            .options
            .iter()
            .find(|(k, _)| !known.contains(&k.as_str()))
        {
            None => Ok(()),
            Some((k, _)) => Err(CompileError::PassOption {
                pass: self.name.clone(),
                message: if known.is_empty() {
                    format!("takes no options (got `{k}`)")
                } else {
                    format!("unknown option `{k}` (known: {})", known.join(", "))
                },
            }),
        }
    }
}

impl fmt::Display for PassSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if self.options.is_empty() {
            return Ok(());
        }
        let options: Vec<String> = self
            .options
            .iter()
            .map(|(k, v)| {
                let plain = !v.is_empty()
                    && v.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.:,=".contains(c));
                if plain {
                    format!("{k}={v}")
                } else {
                    format!("{k}=\"{v}\"")
                }
            })
            .collect();
        write!(f, "{{{}}}", options.join(" "))
    }
}

/// A compile's passes, by phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pipeline {
    pub phases: Vec<(Phase, Vec<PassSpec>)>,
}

impl Pipeline {
    /// Every pass, in order.
    pub fn passes(&self) -> impl Iterator<Item = &PassSpec> {
        self.phases.iter().flat_map(|(_, p)| p.iter())
    }

    fn push(&mut self, phase: Phase, pass: PassSpec) {
        match self.phases.last_mut() {
            Some((last, passes)) if *last == phase => passes.push(pass),
            _ => self.phases.push((phase, vec![pass])),
        }
    }

    /// The pipeline string (`tpuc compile --print-pipeline`).
    pub fn text(&self) -> String {
        self.passes()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// One line per phase with its passes, for people (`tpuc compile --print-pipeline -v`).
    pub fn describe(&self) -> String {
        self.phases
            .iter()
            .map(|(phase, passes)| {
                let names: Vec<String> = passes.iter().map(|p| p.to_string()).collect();
                format!("{:<13} {}", phase.name(), names.join(", "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Parses a pipeline string into its passes (phases are not written in the text).
/// Accepts `builtin.module(...)` around the list; option values may be quoted.
pub fn parse(text: &str) -> Result<Vec<PassSpec>, CompileError> {
    let bad = |message: String| CompileError::PipelineSyntax {
        text: text.to_string(),
        message,
    };
    let mut body = text.trim();
    if let Some(inner) = body.strip_prefix("builtin.module(") {
        body = inner
            .strip_suffix(')')
            .ok_or_else(|| bad("`builtin.module(` without its `)`".into()))?;
    }
    let mut specs = Vec::new();
    let mut chars = body.char_indices().peekable();
    let mut name = String::new();
    let finish = |name: &mut String, options: Vec<(String, String)>, specs: &mut Vec<PassSpec>| {
        let n = name.trim().to_string();
        name.clear();
        if !n.is_empty() {
            specs.push(PassSpec { name: n, options });
        } else if !options.is_empty() {
            return Err(());
        }
        Ok(())
    };
    while let Some((_, c)) = chars.next() {
        match c {
            ',' => finish(&mut name, Vec::new(), &mut specs)
                .map_err(|_| bad("options without a pass name".into()))?,
            '{' => {
                let mut options = Vec::new();
                let mut key = String::new();
                let mut value = String::new();
                let mut in_value = false;
                let mut closed = false;
                while let Some((_, c)) = chars.next() {
                    match c {
                        '}' => {
                            closed = true;
                            break;
                        }
                        '"' if in_value => {
                            for (_, c) in chars.by_ref() {
                                if c == '"' {
                                    break;
                                }
                                value.push(c);
                            }
                        }
                        '=' if !in_value => in_value = true,
                        c if c.is_whitespace() => {
                            if !key.is_empty() {
                                options
                                    .push((std::mem::take(&mut key), std::mem::take(&mut value)));
                                in_value = false;
                            }
                        }
                        c if in_value => value.push(c),
                        c => key.push(c),
                    }
                }
                if !closed {
                    return Err(bad(format!("`{{` without `}}` after `{}`", name.trim())));
                }
                if !key.is_empty() {
                    options.push((key, value));
                }
                finish(&mut name, options, &mut specs)
                    .map_err(|_| bad("options without a pass name".into()))?;
                // The separator after the options, if any.
                while let Some((_, c)) = chars.peek() {
                    if c.is_whitespace() {
                        chars.next();
                    } else {
                        break;
                    }
                }
                if let Some((_, ',')) = chars.peek() {
                    chars.next();
                }
            }
            c => name.push(c),
        }
    }
    finish(&mut name, Vec::new(), &mut specs)
        .map_err(|_| bad("options without a pass name".into()))?;
    Ok(specs)
}

/// What the pipeline of one program depends on besides the options, read off the
/// model by the driver.
#[derive(Debug, Clone, Default)]
pub struct ProgramFacts {
    /// `@main` arguments `stablehlo-merge-dots` may pack (unsharded artifacts at -O2).
    pub packable: Vec<usize>,
    /// With `--mesh`: the seeds of `tpuc-seed-sharding`.
    pub sharding: Option<passes::seed_sharding::Seeds>,
    /// `(graph input, @main result)` of each state buffer and its next value (of a
    /// training step: `(@main argument, result)` of all its state).
    pub state_aliases: Vec<(usize, usize)>,
    /// `--train`: the training step's layout (`tpuc-optimizer`).
    pub training: Option<crate::training::Layout>,
}

/// The pipeline `tpuc compile` runs for `options` and a program with `facts`.
pub fn for_compile(options: &CompileOptions, facts: &ProgramFacts) -> Pipeline {
    let level = options.opt_level;
    let composites = options.target.spec().outlines_composites;
    let mut p = Pipeline::default();
    if level >= OptLevel::O2 {
        p.push(Phase::Input, PassSpec::new(passes::fold_repeat_kv::NAME));
    }
    if level >= OptLevel::O2 && composites {
        p.push(Phase::Input, PassSpec::new("aten-outline-composites"));
    }
    // Grouped matmuls as the routed loop, except for targets without data-dependent
    // loops and in partitioned programs: XLA's SPMD partitioner runs such a loop whole
    // on every device and all-gathers what is split into it (measured, --shard expert
    // on mixtral_default_experts: every expert weight gathered whole to each device),
    // where the dense form keeps each device on its own experts. At -O2 the grouped
    // matmuls over expert-split weights then become the routed loop of each device's
    // own experts, in a manual computation (`tpuc-expert-parallel`, below).
    let mut lower = PassSpec::new("lower-aten-to-stablehlo");
    if !options.target.spec().runs_loops || options.sharding.is_some() {
        lower = lower.with("grouped-mm", "dense");
    }
    p.push(Phase::Lowering, lower);
    if options.matmul_precision != passes::MatmulPrecision::Highest {
        p.push(
            Phase::Lowering,
            PassSpec::new(passes::matmul_precision::name(options.matmul_precision)),
        );
    }
    if let Some(layout) = &facts.training {
        p.push(Phase::Training, layout.pass());
    }
    if level >= OptLevel::O2 {
        for name in [
            "stablehlo-fold-constants",
            "stablehlo-simplify",
            "stablehlo-gather-to-slice",
            "stablehlo-fold-transpose",
        ] {
            p.push(Phase::Cleanup, PassSpec::new(name));
        }
    }
    if level >= OptLevel::O1 {
        p.push(Phase::Cleanup, PassSpec::new("stablehlo-dce"));
        p.push(Phase::Cleanup, PassSpec::new("stablehlo-cse"));
    }
    if level >= OptLevel::O2 {
        // On the cleaned-up program, so that patterns see one op per computation; the
        // constants the composites copied are then dead.
        if composites {
            p.push(Phase::Fusion, PassSpec::new("stablehlo-outline-composites"));
        }
        p.push(Phase::Fusion, PassSpec::new("stablehlo-fold-batch-reshape"));
        p.push(
            Phase::Fusion,
            PassSpec::new(passes::fold_repeated_dot_operand::NAME),
        );
        let mut merge = PassSpec::new(passes::merge_dots::NAME);
        if !facts.packable.is_empty() {
            merge = merge.with("packable", join(&facts.packable));
        }
        p.push(Phase::Fusion, merge);
        p.push(Phase::Fusion, PassSpec::new("stablehlo-dce"));
    }
    for pass in options.target.pipeline_passes(options) {
        p.push(Phase::Target, pass);
    }
    p.push(Phase::Verification, PassSpec::new("verify-stablehlo"));
    if let Some(seeds) = &facts.sharding {
        p.push(Phase::Partitioning, seeds.spec());
        p.push(
            Phase::Partitioning,
            PassSpec::new(passes::propagate_sharding::NAME),
        );
        // Grouped-matmul composites (-O2) over split expert weights: each device on
        // its own experts and routed rows.
        if level >= OptLevel::O2 && composites {
            p.push(
                Phase::Partitioning,
                PassSpec::new(passes::expert_parallel::NAME),
            );
        }
    }
    if !facts.state_aliases.is_empty() {
        let aliases: Vec<String> = facts
            .state_aliases
            .iter()
            .map(|(input, output)| format!("{input}:{output}"))
            .collect();
        p.push(
            Phase::Output,
            PassSpec::new(passes::mark_state_aliases::NAME).with("inputs", aliases.join(",")),
        );
    }
    p.push(Phase::Output, PassSpec::new(passes::take_records::NAME));
    p
}

/// `0,1,2`.
pub fn join(values: &[usize]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses `0,1,2` (the value of option `key` of `pass`).
pub fn parse_indices(pass: &str, key: &str, text: &str) -> Result<Vec<usize>, CompileError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>().map_err(|_| CompileError::PassOption {
                pass: pass.to_string(),
                message: format!("option `{key}`: `{s}` is not an index"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_text_parses_back() {
        let specs = vec![
            PassSpec::new("lower-aten-to-stablehlo"),
            PassSpec::new("stablehlo-merge-dots").with("packable", "0,1,2"),
            PassSpec::new("tpuc-seed-sharding")
                .with("mesh", "dp=2,tp=2")
                .with("format", "shardy")
                .with("args", "0=[dp, -];3=[-, tp]"),
            PassSpec::new("verify-stablehlo"),
        ];
        let p = Pipeline {
            phases: vec![(Phase::Lowering, specs.clone())],
        };
        assert_eq!(parse(&p.text()).unwrap(), specs);
        let wrapped = format!("builtin.module({})", p.text());
        assert_eq!(parse(&wrapped).unwrap(), specs);
    }

    #[test]
    fn malformed_pipelines_are_refused() {
        for text in ["a{x=1", "{x=1}", "builtin.module(a"] {
            assert!(parse(text).is_err(), "{text}");
        }
        assert_eq!(
            parse(" a , b ").unwrap(),
            vec![PassSpec::new("a"), PassSpec::new("b")]
        );
    }
}
