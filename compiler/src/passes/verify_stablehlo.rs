//! `verify-stablehlo`: runs MLIR's structural verifier and tpuc's own StableHLO
//! verifier (op names, operand counts, inferred result types).

use melior::ir::operation::OperationLike;
use melior::ir::Module;
use melior::Context;

use super::Pass;
use crate::error::CompileError;

pub struct VerifyStablehlo;

impl Pass for VerifyStablehlo {
    fn name(&self) -> &'static str {
        "verify-stablehlo"
    }
    fn description(&self) -> &'static str {
        "check the module: MLIR structure plus StableHLO result types and op names"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        if !module.as_operation().verify() {
            return Err(CompileError::Internal(
                "the module fails MLIR verification".into(),
            ));
        }
        tpuc_dialects::verify::verify_module(&module).map_err(CompileError::Verify)?;
        Ok(module)
    }
}
