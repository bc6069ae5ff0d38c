//! `stablehlo-dce`: removes StableHLO ops whose results nobody uses.
//!
//! Lowerings emit helper values that the final program does not always need (a mask
//! for a padding mode that turned out to be unused, statistics of a normalization, the
//! second result of a pair). Each function body is walked from the end, so a chain of
//! dead ops goes in one pass. Ops with side effects ([`super::ir::is_pure`]) and
//! function terminators always stay.

use melior::ir::Module;
use melior::Context;

use super::{ir, Pass};
use crate::error::CompileError;

pub struct StablehloDce;

impl Pass for StablehloDce {
    fn name(&self) -> &'static str {
        "stablehlo-dce"
    }
    fn description(&self) -> &'static str {
        "remove side-effect-free StableHLO ops whose results are unused"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            // Purity depends on the name only: the side-effect-free ops are listed in
            // the walk, and visited from the end.
            let mut pure = Vec::new();
            ir::for_each_op(block, |op| {
                if ir::is_pure(op) {
                    pure.push(op);
                }
            });
            for &op in pure.iter().rev() {
                if !(0..ir::num_results(op)).any(|i| ir::has_uses(ir::result(op, i))) {
                    ir::erase(op);
                }
            }
        }
        Ok(module)
    }
}
