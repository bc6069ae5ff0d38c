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
use crate::CompileError;

pub struct StablehloDce;

impl Pass for StablehloDce {
    fn name(&self) -> &'static str {
        "stablehlo-dce"
    }
    fn description(&self) -> &'static str {
        "remove side-effect-free StableHLO ops whose results are unused"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for body in ir::function_bodies(&module) {
            for &op in body.iter().rev() {
                if ir::is_pure(op) && !ir::results(op).into_iter().any(ir::has_uses) {
                    ir::erase(op);
                }
            }
        }
        Ok(module)
    }
}
