//! Where a program's numbers part from PyTorch's (`tpuc diverge`).
//!
//! An artifact compiled with `tpuc compile --debug-outputs` returns every value its graph
//! computes, each named by the node that computed it ([`Manifest::debug_values`]).
//! PyTorch's values for the same inputs, one `<name>.npy` per value (written by
//! `scripts/node_values.py`, which runs the exported program node by node), are compared
//! with them in graph order at the usual tolerances; the first value outside them is
//! where the numbers part, reported with its node's operator and how far each value the
//! node read already was.

use std::path::Path;

use crate::compare::{compare, default_tolerances, Comparison};
use crate::error::{Result, RuntimeError};
use crate::manifest::Manifest;
use crate::HostTensor;

/// One returned value against PyTorch's.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueComparison {
    /// The value's name (the node's, or torch.export's name for one of its results).
    pub name: String,
    pub node: String,
    pub op: String,
    /// The values the node read, by name.
    pub inputs: Vec<String>,
    /// `None` where the reference has no file for the value.
    pub comparison: Option<Comparison>,
}

impl ValueComparison {
    /// Outside the tolerances (a value without a reference never is).
    pub fn diverges(&self) -> bool {
        self.comparison.as_ref().is_some_and(|c| !c.passed())
    }
}

/// Every debug value of `outputs` (what a run of the artifact of `manifest` returned)
/// compared with `reference/<name>.npy`, in graph order; `tolerances` overrides the
/// per-dtype defaults.
pub fn compare_debug_values(
    manifest: &Manifest,
    outputs: &[HostTensor],
    reference: &Path,
    tolerances: Option<(f64, f64)>,
) -> Result<Vec<ValueComparison>> {
    if manifest.debug_values.is_empty() {
        return Err(RuntimeError::InvalidArgument(
            "the artifact returns no graph values; compile it with `tpuc compile --debug-outputs`"
                .into(),
        ));
    }
    let mut out = Vec::new();
    for value in &manifest.debug_values {
        let spec = manifest.outputs.get(value.output).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "the manifest's debug value `{}` names output {}, which it does not have",
                value.node, value.output
            ))
        })?;
        let got = outputs.get(value.output).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "the run returned {} outputs; debug value `{}` is output {}",
                outputs.len(),
                spec.name,
                value.output
            ))
        })?;
        let path = reference.join(format!("{}.npy", spec.name));
        let comparison = if path.is_file() {
            let want = crate::npy::read_npy(&path)?;
            let (rtol, atol) = tolerances.unwrap_or_else(|| default_tolerances(want.dtype));
            Some(compare(got, &want, rtol, atol))
        } else {
            None
        };
        out.push(ValueComparison {
            name: spec.name.clone(),
            node: value.node.clone(),
            op: value.op.clone(),
            inputs: value.inputs.clone(),
            comparison,
        });
    }
    Ok(out)
}

/// The first value outside the tolerances, if any.
pub fn first_divergence(values: &[ValueComparison]) -> Option<&ValueComparison> {
    values.iter().find(|v| v.diverges())
}
