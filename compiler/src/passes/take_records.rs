//! `tpuc-take-records`: the last pass of every compile. It takes off the module the
//! records earlier passes leave for the driver, so that the program holds none of
//! them:
//!
//! - `stablehlo-merge-dots`' `tpuc.arg_origins` (and an unused `tpuc.packable`): which
//!   graph inputs each argument holds, for the artifact's packed weights;
//! - with a mesh (`tpuc.mesh` on the module), `stablehlo-propagate-sharding`'s decisions
//!   (`tpuc.sharding` on arguments and results, the seeding attributes), for the
//!   manifest.
//!
//! `tpuc compile` reads them through [`Records`]; under `tpuc opt` they are dropped.
//! A target's own record (`neuron-legalize`'s `tpuc.neuron_narrowed`) is the target's
//! to take when it writes its artifact files.

use std::sync::{Arc, Mutex};

use melior::ir::Module;
use melior::Context;
use tpuc_artifact::sharding::TensorSharding;

use super::{ir, merge_dots, propagate_sharding, Pass};
use crate::error::CompileError;

pub const NAME: &str = "tpuc-take-records";

/// What the passes recorded for the driver.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// For each argument of the final signature, the graph inputs it holds (`None`
    /// when nothing was packed).
    pub origins: Option<Vec<Vec<usize>>>,
    /// The shardings of `@main`'s arguments and results, when the compile was sharded.
    pub shardings: Option<(Vec<TensorSharding>, Vec<TensorSharding>)>,
}

/// The pass, handing what it takes to `sink` (the driver's) or dropping it.
#[derive(Default)]
pub struct TakeRecords {
    pub sink: Option<Arc<Mutex<Records>>>,
}

impl Pass for TakeRecords {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "take the records passes leave for the driver (tpuc.arg_origins, tpuc.sharding) off the module"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let origins = merge_dots::take_arg_origins(&module);
        let sharded = ir::attribute(module.as_operation().to_raw(), "tpuc.mesh").is_some();
        let shardings = match sharded {
            true => Some(propagate_sharding::take_shardings(&module)?),
            false => None,
        };
        if let Some(sink) = &self.sink {
            let mut records = sink
                .lock()
                .map_err(|_| CompileError::Internal("the records lock is poisoned".into()))?;
            *records = Records { origins, shardings };
        }
        Ok(module)
    }
}
