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
                "the run returned {} outputs; debug value `{}` is output {} (`{}`)",
                outputs.len(),
                value.name,
                value.output,
                spec.name
            ))
        })?;
        let path = reference.join(format!("{}.npy", value.name));
        let comparison = if path.is_file() {
            let want = crate::npy::read_npy(&path)?;
            let (rtol, atol) = tolerances.unwrap_or_else(|| default_tolerances(want.dtype));
            Some(compare(got, &want, rtol, atol))
        } else {
            None
        };
        out.push(ValueComparison {
            name: value.name.clone(),
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

/// Operators whose results depend on the order of equal elements, which PyTorch leaves
/// unspecified (its CPU kernels and XLA break ties differently).
const TIE_BREAKING_OPS: &[&str] = &[
    "aten.topk",
    "aten.sort",
    "aten.argsort",
    "aten.argmax",
    "aten.argmin",
    "aten.max.dim",
    "aten.min.dim",
    "aten.kthvalue",
    "aten.mode",
    "aten.median.dim",
    "aten.nanmedian.dim",
];

/// Why `first` may differ although tpuc computed it correctly, when its inputs say so:
/// an order-of-ties operator whose input matches exactly and has equal values, or an
/// operator whose inputs already carry rounding differences (within the tolerances)
/// that it magnifies.
pub fn explain(
    first: &ValueComparison,
    values: &[ValueComparison],
    reference: &Path,
) -> Option<String> {
    let inputs: Vec<&ValueComparison> = first
        .inputs
        .iter()
        .filter_map(|name| values.iter().find(|v| &v.name == name))
        .collect();
    if inputs.iter().any(|v| v.diverges()) {
        return None;
    }
    let exact = |v: &ValueComparison| {
        v.comparison
            .as_ref()
            .is_some_and(|c| c.max_abs_error == 0.0)
    };
    if TIE_BREAKING_OPS.iter().any(|op| first.op.starts_with(op)) {
        for input in inputs.iter().filter(|v| exact(v)) {
            let tensor =
                crate::npy::read_npy(reference.join(format!("{}.npy", input.name))).ok()?;
            let mut elements = tensor.to_f64_vec();
            elements.sort_by(|a, b| a.total_cmp(b));
            if elements.windows(2).any(|w| w[0] == w[1]) {
                return Some(format!(
                    "`{}` reads `{}` exactly as PyTorch has it, and `{}` holds equal values: the order of \
                     equal elements is unspecified in PyTorch (its CPU kernel and XLA break ties differently), \
                     so results that depend on it may differ without either being wrong",
                    first.op, input.name, input.name
                ));
            }
        }
        return None;
    }
    let rounded: Vec<&&ValueComparison> = inputs
        .iter()
        .filter(|v| v.comparison.is_some() && !exact(v))
        .collect();
    if !rounded.is_empty() {
        return Some(format!(
            "its inputs match PyTorch's within the tolerances but not exactly ({}): float rounding \
             (summation order, fused kernels) that `{}` can magnify (cancellation, large sums); \
             a broken lowering usually differs far beyond rounding",
            rounded
                .iter()
                .map(|v| format!(
                    "`{}` max_abs_error={:.1e}",
                    v.name,
                    v.comparison.as_ref().map_or(0.0, |c| c.max_abs_error)
                ))
                .collect::<Vec<_>>()
                .join(", "),
            first.op
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(
        name: &str,
        op: &str,
        inputs: &[&str],
        max_abs_error: f64,
        passed: bool,
    ) -> ValueComparison {
        ValueComparison {
            name: name.into(),
            node: name.into(),
            op: op.into(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            comparison: Some(Comparison {
                max_abs_error,
                max_rel_error: 0.0,
                mismatches: usize::from(!passed),
                elements: 4,
                shape_matches: true,
            }),
        }
    }

    #[test]
    fn ties_and_rounding_are_explained_and_broken_inputs_are_not() {
        let dir = std::env::temp_dir().join(format!("tpuc-explain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let scores = HostTensor::from_f32(&[4], &[0.5, 0.5, 0.5, 0.5]);
        crate::npy::write_npy(dir.join("scores.npy"), &scores).unwrap();
        let distinct = HostTensor::from_f32(&[4], &[0.1, 0.2, 0.3, 0.4]);
        crate::npy::write_npy(dir.join("distinct.npy"), &distinct).unwrap();

        let topk = value("getitem_1", "aten.topk.default", &["scores"], 2.0, false);
        let values = [
            value("scores", "aten.add.Tensor", &[], 0.0, true),
            topk.clone(),
        ];
        let why = explain(&topk, &values, &dir).unwrap();
        assert!(why.contains("equal values"), "{why}");

        // No ties: an index op that differs on distinct values is not explained away.
        let topk = value("getitem_1", "aten.topk.default", &["distinct"], 2.0, false);
        let values = [
            value("distinct", "aten.add.Tensor", &[], 0.0, true),
            topk.clone(),
        ];
        assert_eq!(explain(&topk, &values, &dir), None);

        // Inputs within tolerance but rounded: a matmul that magnifies it.
        let matmul = value("mm", "aten.mm.default", &["a"], 1e-3, false);
        let values = [
            value("a", "aten.mul.Tensor", &[], 1e-6, true),
            matmul.clone(),
        ];
        assert!(explain(&matmul, &values, &dir)
            .unwrap()
            .contains("rounding"));

        // Inputs exact: nothing to say (a lowering to look at).
        let values = [
            value("a", "aten.mul.Tensor", &[], 0.0, true),
            matmul.clone(),
        ];
        assert_eq!(explain(&matmul, &values, &dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
