//! Sharding strategies (`tpuc compile --shard`) and rules (`--sharding-rules`): the
//! shardings of `@main`'s arguments they imply, which `stablehlo-propagate-sharding`
//! then carries through the program. Meshes and shardings themselves are
//! `tpuc_artifact::sharding`'s.

use tpuc_artifact::sharding::TensorSharding;

use crate::error::CompileError;
use crate::frontend::graph::{Graph, InputKind};
use crate::options::{ShardPreset, ShardingRequest};

/// The sharding of each input of `graph` (in `@main`'s argument order) under the
/// presets of `request`; `None` leaves an argument replicated. With both fsdp and
/// megatron, fsdp is applied after megatron's choices, in the propagation: the second
/// vector marks the parameters it then splits (those no rule decided).
pub fn seeds(
    graph: &Graph,
    request: &ShardingRequest,
) -> Result<(Vec<Option<TensorSharding>>, Vec<bool>), CompileError> {
    let mut out: Vec<Option<TensorSharding>> = vec![None; graph.inputs.len()];
    let mut fsdp_after = vec![false; graph.inputs.len()];
    let with_megatron = request.presets.contains(&ShardPreset::Megatron);
    for preset in &request.presets {
        match preset {
            ShardPreset::DataParallel => {
                let dp = request.mesh.axis_size("dp").map_err(|_| {
                    CompileError::Sharding(format!(
                        "--shard data-parallel puts the batch on a mesh axis named `dp`; the mesh `{}` has none",
                        request.mesh
                    ))
                })?;
                // The batch is the leading dimension of the first user input that has
                // one (`input_ids`); the user inputs whose leading dimension is that size
                // are split on `dp`, the others (a decode step's `cache_position [1]`)
                // are whole on every device. State (a KV cache) is split like the
                // values written into it (stablehlo-propagate-sharding).
                let mut batch = None;
                for (i, spec) in graph.inputs.iter().enumerate() {
                    if spec.kind != InputKind::UserInput {
                        continue;
                    }
                    let shape = &graph.tensors[&spec.name].shape;
                    let Some(&lead) = shape.first() else {
                        continue;
                    };
                    let b = *batch.get_or_insert(lead);
                    if b % dp != 0 {
                        return Err(CompileError::Sharding(format!(
                            "input `{}` has batch size {b} (shape {shape:?}), which the mesh axis dp={dp} does not divide; export with a batch size that is a multiple of {dp}",
                            spec.name
                        )));
                    }
                    if lead == b {
                        out[i] = Some(TensorSharding::split(shape.len(), 0, &["dp"]));
                    }
                }
            }
            // Decided on the lowered program (stablehlo-propagate-sharding).
            ShardPreset::Megatron => {}
            ShardPreset::Expert => expert_seeds(graph, request, &mut out)?,
            ShardPreset::Fsdp => {
                let k = request.mesh.axis_size("fsdp").map_err(|_| {
                    CompileError::Sharding(format!(
                        "--shard fsdp splits parameters on a mesh axis named `fsdp`; the mesh `{}` has none",
                        request.mesh
                    ))
                })?;
                for (i, spec) in graph.inputs.iter().enumerate() {
                    if spec.kind != InputKind::Parameter {
                        continue;
                    }
                    if with_megatron {
                        // Megatron decides on the lowered program; fsdp then splits
                        // another dimension (stablehlo-propagate-sharding).
                        fsdp_after[i] = true;
                        continue;
                    }
                    let shape = &graph.tensors[&spec.name].shape;
                    // Presets apply in order; a dimension another preset split is kept.
                    let mut s = out[i]
                        .take()
                        .unwrap_or_else(|| TensorSharding::replicated(shape.len()));
                    if let Some(d) = (0..shape.len())
                        .find(|&d| s.dims[d].is_empty() && shape[d] >= k && shape[d] % k == 0)
                    {
                        s.dims[d] = vec!["fsdp".to_string()];
                    }
                    out[i] = Some(s);
                }
            }
        }
    }
    let decided = apply_rules(graph, request, &mut out)?;
    for (after, by_rule) in fsdp_after.iter_mut().zip(decided) {
        *after &= !by_rule;
    }
    Ok((out, fsdp_after))
}

/// The mesh axis each strategy splits on.
pub fn preset_axis(preset: ShardPreset) -> &'static str {
    match preset {
        ShardPreset::DataParallel => "dp",
        ShardPreset::Fsdp => "fsdp",
        ShardPreset::Megatron => "tp",
        ShardPreset::Expert => "ep",
    }
}

/// Every mesh axis must be used by a strategy or a rule: an axis nothing splits on
/// would only replicate the program over more devices, which is never what a mesh is
/// written for (a misspelt `tp`, say).
fn check_axes_used(request: &ShardingRequest) -> Result<(), CompileError> {
    for axis in &request.mesh.axes {
        let by_preset = request.presets.iter().any(|p| preset_axis(*p) == axis.name);
        let by_rule = request
            .rules
            .iter()
            .any(|r| r.sharding.dims.iter().flatten().any(|a| *a == axis.name));
        if !by_preset && !by_rule {
            return Err(CompileError::Sharding(format!(
                "mesh axis `{}` is used by no --shard strategy or sharding rule (data-parallel splits on dp, fsdp on fsdp, megatron on tp, expert on ep); rename it or add the strategy",
                axis.name
            )));
        }
    }
    Ok(())
}

/// The expert-parallel preset: the first dimension of every fused expert weight (a
/// parameter `<module>.experts.<tensor>`, as transformers 5 stores a mixture-of-experts
/// layer's experts: `gate_up_proj [E, 2I, H]`, `down_proj [E, H, I]`, biases `[E, ..]`)
/// split on the mesh axis `ep`. The expert count must be the same for every tensor of
/// one module and divisible by `ep`. Experts kept as separate `nn.Linear` weights
/// (`experts.0.w1.weight`) are whole tensors, which a split of dimensions cannot place:
/// refused with that said.
fn expert_seeds(
    graph: &Graph,
    request: &ShardingRequest,
    out: &mut [Option<TensorSharding>],
) -> Result<(), CompileError> {
    let ep = request.mesh.axis_size("ep").map_err(|_| {
        CompileError::Sharding(format!(
            "--shard expert splits experts on a mesh axis named `ep`; the mesh `{}` has none",
            request.mesh
        ))
    })?;
    let mut fused = 0;
    let mut listed = Vec::new();
    let mut counts: std::collections::BTreeMap<String, (i64, String)> = Default::default();
    for (i, spec) in graph.inputs.iter().enumerate() {
        if spec.kind != InputKind::Parameter {
            continue;
        }
        let Some(name) = spec.target.as_deref() else {
            continue;
        };
        let Some((module, rest)) = name.rsplit_once(".experts.") else {
            continue;
        };
        if rest.contains('.') {
            listed.push(name.to_string());
            continue;
        }
        let shape = &graph.tensors[&spec.name].shape;
        let Some(&experts) = shape.first().filter(|_| shape.len() >= 2) else {
            continue;
        };
        if let Some((e, other)) = counts.get(module) {
            if *e != experts {
                return Err(CompileError::Sharding(format!(
                    "--shard expert: `{name}` has {experts} experts (its first dimension, shape {shape:?}) but `{other}` of the same layer has {e}"
                )));
            }
        } else {
            counts.insert(module.to_string(), (experts, name.to_string()));
        }
        if experts % ep != 0 {
            return Err(CompileError::Sharding(format!(
                "--shard expert: `{name}` has {experts} experts (shape {shape:?}), which the mesh axis ep={ep} does not divide; use an ep that divides {experts}"
            )));
        }
        let mut s = out[i]
            .take()
            .unwrap_or_else(|| TensorSharding::replicated(shape.len()));
        if s.dims[0].is_empty() {
            s.dims[0] = vec!["ep".to_string()];
        }
        out[i] = Some(s);
        fused += 1;
    }
    if fused == 0 {
        let why = if listed.is_empty() {
            "no parameter is a fused expert weight (`<layer>.experts.<tensor>` whose first dimension counts the experts, as transformers 5 stores mixture-of-experts layers)".to_string()
        } else {
            format!(
                "its experts are separate weights ({} such as `{}`), whole tensors a split of dimensions cannot place; export with transformers' fused experts",
                listed.len(),
                listed[0]
            )
        };
        return Err(CompileError::Sharding(format!(
            "--shard expert splits the experts of mixture-of-experts layers, but {why}"
        )));
    }
    Ok(())
}

/// With the megatron preset: its mesh axis (`tp`) and which `@main` arguments are
/// parameters (the weights it decides).
pub fn megatron_weights(
    graph: &Graph,
    request: &ShardingRequest,
) -> Result<Option<(String, Vec<bool>)>, CompileError> {
    if !request.presets.contains(&ShardPreset::Megatron) {
        return Ok(None);
    }
    request.mesh.axis_size("tp").map_err(|_| {
        CompileError::Sharding(format!(
            "--shard megatron splits weights on a mesh axis named `tp`; the mesh `{}` has none",
            request.mesh
        ))
    })?;
    let weights = graph
        .inputs
        .iter()
        .map(|s| s.kind == InputKind::Parameter)
        .collect();
    Ok(Some(("tp".to_string(), weights)))
}

/// One line of a `--sharding-rules` file: weights whose state-dict name matches
/// `pattern` (`*` any run of characters, `?` one) get `sharding`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub pattern: String,
    pub sharding: TensorSharding,
    /// Where it was written, for messages (`rules.txt:3`).
    pub origin: String,
}

/// A `--sharding-rules` file: its rules, and the mesh and strategies it names (the
/// lines `mesh: AXES` and `shard: STRATEGIES`, as `tpuc plan --write-rules` writes
/// them), which `tpuc compile` uses when its own flags do not give them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RulesFile {
    pub rules: Vec<Rule>,
    pub mesh: Option<tpuc_artifact::sharding::Mesh>,
    pub presets: Vec<ShardPreset>,
}

/// Reads a rules file: one `PATTERN SHARDING` per line (`model.layers.*.q_proj.weight
/// [tp, -]`), optionally `mesh: dp=2,tp=4` and `shard: data-parallel,megatron`; `#` to
/// the end of a line a comment, blank lines ignored.
pub fn parse_rules(text: &str, file: &str) -> Result<RulesFile, CompileError> {
    let mut out = RulesFile::default();
    for (i, line) in text.lines().enumerate() {
        let origin = format!("{file}:{}", i + 1);
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |e: String| CompileError::Sharding(format!("{origin}: {e}"));
        if let Some(axes) = line.strip_prefix("mesh:") {
            if out.mesh.is_some() {
                return Err(bad("a second `mesh:` line".into()));
            }
            let mesh = tpuc_artifact::sharding::Mesh::parse(axes.trim())
                .map_err(|e| bad(format!("mesh: {e}")))?;
            out.mesh = Some(mesh);
            continue;
        }
        if let Some(list) = line.strip_prefix("shard:") {
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let preset = ShardPreset::parse(name).map_err(bad)?;
                if !out.presets.contains(&preset) {
                    out.presets.push(preset);
                }
            }
            continue;
        }
        let Some((pattern, sharding)) = line.split_once(char::is_whitespace) else {
            return Err(bad(format!(
                "`{line}` is not `PATTERN SHARDING` (for example `*.q_proj.weight [tp, -]`), `mesh: AXES` or `shard: STRATEGIES`"
            )));
        };
        let sharding = TensorSharding::parse(sharding.trim()).map_err(|e| bad(e.to_string()))?;
        out.rules.push(Rule {
            pattern: pattern.to_string(),
            sharding,
            origin,
        });
    }
    Ok(out)
}

/// `*` matches any run of characters, `?` exactly one; everything else itself.
pub(crate) fn glob(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob(&pattern[1..], name) || (!name.is_empty() && glob(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => glob(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => glob(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// Applies the rules to the weights they name: a rule that matches no weight, two
/// rules that give one weight different shardings, or a sharding the weight's shape or
/// the mesh cannot hold is an error naming the rule and the weight.
/// Returns which arguments a rule decided.
fn apply_rules(
    graph: &Graph,
    request: &ShardingRequest,
    out: &mut [Option<TensorSharding>],
) -> Result<Vec<bool>, CompileError> {
    let mut decided: Vec<Option<&Rule>> = vec![None; graph.inputs.len()];
    for rule in &request.rules {
        let mut matched = false;
        for (i, spec) in graph.inputs.iter().enumerate() {
            let Some(name) = spec.target.as_deref() else {
                continue;
            };
            if spec.kind == InputKind::UserInput || !glob(rule.pattern.as_bytes(), name.as_bytes())
            {
                continue;
            }
            matched = true;
            if let Some(earlier) = decided[i] {
                if earlier.sharding != rule.sharding {
                    return Err(CompileError::Sharding(format!(
                        "{} gives `{name}` {} but {} gave it {}",
                        rule.origin, rule.sharding, earlier.origin, earlier.sharding
                    )));
                }
            }
            let shape = &graph.tensors[&spec.name].shape;
            rule.sharding.check(&request.mesh, shape).map_err(|e| {
                CompileError::Sharding(format!("{}: `{name}` (shape {shape:?}): {e}", rule.origin))
            })?;
            decided[i] = Some(rule);
            out[i] = Some(rule.sharding.clone());
        }
        if !matched {
            return Err(CompileError::Sharding(format!(
                "{}: `{}` matches no parameter, buffer or constant",
                rule.origin, rule.pattern
            )));
        }
    }
    Ok(decided.iter().map(Option::is_some).collect())
}

/// Everything `request` decides for `graph`'s arguments, as `tpuc-seed-sharding`'s
/// options carry it; `state` pairs each state input with the `@main` result holding
/// its next value (the propagation splits state like the updates written into it).
pub fn seeds_for(
    graph: &Graph,
    request: &ShardingRequest,
    state: &[(usize, usize)],
) -> Result<crate::passes::seed_sharding::Seeds, CompileError> {
    let (args, fsdp_after) = seeds(graph, request)?;
    let megatron = megatron_weights(graph, request)?;
    check_axes_used(request)?;
    Ok(crate::passes::seed_sharding::Seeds {
        mesh: request.mesh.clone(),
        format: request.format,
        args,
        megatron,
        fsdp_after: (0..fsdp_after.len()).filter(|&i| fsdp_after[i]).collect(),
        state: state.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_rule_files() {
        assert!(glob(
            b"model.layers.*.q_proj.weight",
            b"model.layers.11.q_proj.weight"
        ));
        assert!(glob(b"*.weight", b"fc.weight"));
        assert!(glob(b"fc?.bias", b"fc2.bias"));
        assert!(!glob(b"*.weight", b"fc.bias"));
        assert!(!glob(b"fc?.bias", b"fc12.bias"));
        let file = parse_rules(
            "# megatron\n*.q_proj.weight [tp, -]  # column\n\n*.o_proj.weight [-, tp]\n",
            "r.txt",
        )
        .unwrap();
        let rules = &file.rules;
        assert_eq!(rules.len(), 2);
        assert!(file.mesh.is_none() && file.presets.is_empty());
        assert_eq!(rules[1].origin, "r.txt:4");
        assert_eq!(rules[1].sharding.to_string(), "[-, tp]");
        let e = parse_rules("*.weight\n", "r.txt").unwrap_err().to_string();
        assert!(e.contains("r.txt:1"), "{e}");
        let e = parse_rules("*.weight [tp\n", "r.txt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a sharding"), "{e}");
        // What `tpuc plan --write-rules` writes: the mesh and strategies, then rules.
        let file = parse_rules(
            "mesh: dp=2,tp=2\nshard: data-parallel, megatron\nfc.weight [tp, -]\n",
            "plan.rules",
        )
        .unwrap();
        assert_eq!(file.mesh.unwrap().to_string(), "dp=2,tp=2");
        assert_eq!(
            file.presets,
            [ShardPreset::DataParallel, ShardPreset::Megatron]
        );
        assert_eq!(file.rules.len(), 1);
        let e = parse_rules("shard: pipeline\n", "r.txt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("r.txt:1") && e.contains("pipeline"), "{e}");
        let e = parse_rules("mesh: tp=2\nmesh: dp=2\n", "r.txt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("r.txt:2"), "{e}");
    }
}
