//! `tpuc-mark-state-aliases{inputs=3:5,4:6}`: tells XLA that each state buffer's next
//! value may be written into the buffer itself.
//!
//! Each `input:output` pair names a graph input that is state and the `@main` result
//! holding its next value; the pass sets `tf.aliasing_output = output` on that input's
//! argument (through `stablehlo-merge-dots`' `tpuc.arg_origins` when packing changed
//! the signature). The runtime then donates the state buffers it holds.

use melior::ir::Module;
use melior::Context;

use super::{ir, merge_dots, Pass};
use crate::error::CompileError;
use crate::pipeline::PassSpec;

pub const NAME: &str = "tpuc-mark-state-aliases";

/// The pass with its `(graph input, result)` pairs.
pub struct MarkStateAliases(pub Vec<(usize, usize)>);

fn bad(message: String) -> CompileError {
    CompileError::PassOption {
        pass: NAME.into(),
        message,
    }
}

impl MarkStateAliases {
    pub fn from_spec(spec: &PassSpec) -> Result<MarkStateAliases, CompileError> {
        spec.expect_options(&["inputs"])?;
        let mut pairs = Vec::new();
        for pair in spec.option("inputs").unwrap_or("").split(',') {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let parsed = pair
                .split_once(':')
                .and_then(|(i, o)| Some((i.trim().parse().ok()?, o.trim().parse().ok()?)));
            pairs.push(
                parsed.ok_or_else(|| bad(format!("inputs: `{pair}` is not `input:result`")))?,
            );
        }
        Ok(MarkStateAliases(pairs))
    }
}

impl Pass for MarkStateAliases {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "tf.aliasing_output on the state arguments of @main (option inputs=INPUT:RESULT,...)"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        if self.0.is_empty() {
            return Ok(module);
        }
        let block = ir::main_block(&module)
            .ok_or_else(|| CompileError::Internal("the program has no @main".into()))?;
        let num_args = ir::block_arguments(block).len();
        let origins = merge_dots::arg_origins(&module);
        let mut aliases: Vec<Option<usize>> = vec![None; num_args];
        for &(input, output) in &self.0 {
            let arg = match &origins {
                Some(o) => o.iter().position(|sources| sources == &[input]),
                None => Some(input),
            }
            .filter(|&a| a < num_args)
            .ok_or_else(|| {
                CompileError::Internal(format!("state input {input} is not an argument of @main"))
            })?;
            aliases[arg] = Some(output);
        }
        let func = ir::block_parent(block);
        let ctx = ir::context(func);
        // Added to what the arguments already carry (a partitioned program's shardings).
        let mut bad_output = None;
        ir::edit_attribute_dictionaries(func, "arg_attrs", num_args, |arg, mut entries| {
            entries.retain(|e| ir::identifier_text(e.name) != "tf.aliasing_output");
            if let Some(output) = aliases[arg] {
                match ir::parse_attribute(ctx, &format!("{output} : i32")) {
                    Some(value) => entries.push(ir::named_attribute("tf.aliasing_output", value)),
                    None => bad_output = Some(output),
                }
            }
            entries
        });
        if let Some(output) = bad_output {
            return Err(CompileError::Internal(format!(
                "cannot mark a state argument as aliasing result {output}"
            )));
        }
        Ok(module)
    }
}
