//! HLO text of an [`HloModuleProto`](super::proto::HloModuleProto), in the style of
//! XLA's printer: one line per instruction, `name = shape opcode(operands), attributes`.
//! It is read by people and by snapshot tests; large constants are elided, so it is a
//! view of the proto, not a second serialization.

use std::collections::HashMap;
use std::fmt::Write;

use super::proto::*;

/// Constants with more elements than this print as `{...}`.
const SHOWN_ELEMENTS: usize = 8;

pub fn print(module: &HloModuleProto) -> String {
    let mut out = String::new();
    let computations: HashMap<i64, &str> = module
        .computations
        .iter()
        .map(|c| (c.id, c.name.as_str()))
        .collect();
    let layout = module
        .host_program_shape
        .as_ref()
        .map(|p| {
            let params: Vec<String> = p.parameters.iter().map(shape).collect();
            let result = p.result.as_ref().map(shape).unwrap_or_default();
            format!("{{({})->{result}}}", params.join(", "))
        })
        .unwrap_or_default();
    let aliases = module
        .input_output_alias
        .as_ref()
        .map(|a| {
            let entries: Vec<String> = a
                .entries
                .iter()
                .map(|e| {
                    let index =
                        |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
                    format!(
                        "{{{}}}: ({}, {{{}}}, may-alias)",
                        index(&e.output_shape_index),
                        e.parameter_number,
                        index(&e.parameter_shape_index)
                    )
                })
                .collect();
            format!(", input_output_alias={{ {} }}", entries.join(", "))
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "HloModule {}{aliases}, entry_computation_layout={layout}",
        module.name
    );
    for c in &module.computations {
        out.push('\n');
        let entry = c.id == module.entry_computation_id;
        let _ = writeln!(out, "{}{} {{", if entry { "ENTRY " } else { "" }, c.name);
        let names: HashMap<i64, &str> = c
            .instructions
            .iter()
            .map(|i| (i.id, i.name.as_str()))
            .collect();
        for i in &c.instructions {
            let root = if i.id == c.root_id { "ROOT " } else { "" };
            let operands: Vec<String> = i
                .operand_ids
                .iter()
                .map(|o| names.get(o).copied().unwrap_or("?").to_string())
                .collect();
            let mut args = operands.join(", ");
            if i.opcode == "parameter" {
                args = i.parameter_number.to_string();
            } else if let Some(l) = &i.literal {
                args = literal(l);
            }
            let ty = i.shape.as_ref().map(shape).unwrap_or_default();
            let _ = write!(out, "  {root}{} = {ty} {}({args})", i.name, i.opcode);
            for a in attributes(i, &computations) {
                let _ = write!(out, ", {a}");
            }
            out.push('\n');
        }
        out.push_str("}\n");
    }
    out
}

fn element_name(t: i32) -> &'static str {
    match t {
        primitive::PRED => "pred",
        primitive::S8 => "s8",
        primitive::S16 => "s16",
        primitive::S32 => "s32",
        primitive::S64 => "s64",
        primitive::U8 => "u8",
        primitive::F16 => "f16",
        primitive::F32 => "f32",
        primitive::F64 => "f64",
        primitive::BF16 => "bf16",
        _ => "?",
    }
}

/// `f32[2,3]{1,0}`, or `(f32[2], s32[])` for a tuple.
pub fn shape(s: &ShapeProto) -> String {
    if s.element_type == primitive::TUPLE {
        let parts: Vec<String> = s.tuple_shapes.iter().map(shape).collect();
        return format!("({})", parts.join(", "));
    }
    let dims: Vec<String> = s.dimensions.iter().map(i64::to_string).collect();
    let layout = s
        .layout
        .as_ref()
        .filter(|_| !s.dimensions.is_empty())
        .map(|l| {
            let m: Vec<String> = l.minor_to_major.iter().map(i64::to_string).collect();
            format!("{{{}}}", m.join(","))
        })
        .unwrap_or_default();
    format!(
        "{}[{}]{layout}",
        element_name(s.element_type),
        dims.join(",")
    )
}

fn list(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("{{{}}}", parts.join(","))
}

fn literal(l: &LiteralProto) -> String {
    let values: Vec<String> = if !l.preds.is_empty() {
        l.preds.iter().map(|b| b.to_string()).collect()
    } else if !l.s64s.is_empty() {
        l.s64s.iter().map(i64::to_string).collect()
    } else if !l.s32s.is_empty() {
        l.s32s.iter().map(i32::to_string).collect()
    } else if !l.f32s.is_empty() {
        l.f32s.iter().map(|f| format!("{f:?}")).collect()
    } else if !l.f64s.is_empty() {
        l.f64s.iter().map(|f| format!("{f:?}")).collect()
    } else if !l.u8s.is_empty() {
        l.u8s.iter().map(u8::to_string).collect()
    } else if !l.s8s.is_empty() {
        l.s8s.iter().map(|b| (*b as i8).to_string()).collect()
    } else {
        let bytes = [&l.f16s, &l.bf16s, &l.s16s]
            .into_iter()
            .find(|b| !b.is_empty())
            .cloned()
            .unwrap_or_default();
        bytes
            .chunks(2)
            .map(|c| format!("0x{:04x}", u16::from_le_bytes([c[0], c[1]])))
            .collect()
    };
    let scalar = l.shape.as_ref().is_some_and(|s| s.dimensions.is_empty());
    if scalar && values.len() == 1 {
        values[0].clone()
    } else if values.len() > SHOWN_ELEMENTS {
        format!("{{...{} values}}", values.len())
    } else {
        format!("{{{}}}", values.join(", "))
    }
}

fn window(w: &Window) -> String {
    let join = |f: &dyn Fn(&WindowDimension) -> String| {
        w.dimensions.iter().map(f).collect::<Vec<_>>().join("x")
    };
    let mut parts = vec![format!("size={}", join(&|d| d.size.to_string()))];
    if w.dimensions.iter().any(|d| d.stride != 1) {
        parts.push(format!("stride={}", join(&|d| d.stride.to_string())));
    }
    if w.dimensions
        .iter()
        .any(|d| d.padding_low != 0 || d.padding_high != 0)
    {
        parts.push(format!(
            "pad={}",
            join(&|d| format!("{}_{}", d.padding_low, d.padding_high))
        ));
    }
    if w.dimensions.iter().any(|d| d.base_dilation != 1) {
        parts.push(format!(
            "lhs_dilate={}",
            join(&|d| d.base_dilation.to_string())
        ));
    }
    if w.dimensions.iter().any(|d| d.window_dilation != 1) {
        parts.push(format!(
            "rhs_dilate={}",
            join(&|d| d.window_dilation.to_string())
        ));
    }
    if w.dimensions.iter().any(|d| d.window_reversal) {
        parts.push(format!(
            "rhs_reversal={}",
            join(&|d| u8::from(d.window_reversal).to_string())
        ));
    }
    format!("window={{{}}}", parts.join(" "))
}

/// `bf01_oi01->bf01`.
fn dim_labels(d: &ConvolutionDimensionNumbers) -> String {
    let labels = |rank: usize, a: (i64, char), b: (i64, char), spatial: &[i64]| {
        let mut s = vec!['?'; rank];
        s[a.0 as usize] = a.1;
        s[b.0 as usize] = b.1;
        for (k, &p) in spatial.iter().enumerate() {
            s[p as usize] = char::from_digit(k as u32, 36).unwrap_or('?');
        }
        s.into_iter().collect::<String>()
    };
    let n = d.input_spatial_dimensions.len() + 2;
    format!(
        "{}_{}->{}",
        labels(
            n,
            (d.input_batch_dimension, 'b'),
            (d.input_feature_dimension, 'f'),
            &d.input_spatial_dimensions
        ),
        labels(
            n,
            (d.kernel_output_feature_dimension, 'o'),
            (d.kernel_input_feature_dimension, 'i'),
            &d.kernel_spatial_dimensions
        ),
        labels(
            n,
            (d.output_batch_dimension, 'b'),
            (d.output_feature_dimension, 'f'),
            &d.output_spatial_dimensions
        ),
    )
}

fn attributes(i: &HloInstructionProto, computations: &HashMap<i64, &str>) -> Vec<String> {
    let mut a = Vec::new();
    let op = i.opcode.as_str();
    if op == "get-tuple-element" {
        a.push(format!("index={}", i.tuple_index));
    }
    if !i.dimensions.is_empty() || matches!(op, "broadcast" | "reduce" | "transpose") {
        a.push(format!("dimensions={}", list(&i.dimensions)));
    }
    if !i.slice_dimensions.is_empty() {
        let parts: Vec<String> = i
            .slice_dimensions
            .iter()
            .map(|s| {
                if s.stride == 1 {
                    format!("[{}:{}]", s.start, s.limit)
                } else {
                    format!("[{}:{}:{}]", s.start, s.limit, s.stride)
                }
            })
            .collect();
        a.push(format!("slice={{{}}}", parts.join(", ")));
    }
    if let Some(p) = &i.padding_config {
        let parts: Vec<String> = p
            .dimensions
            .iter()
            .map(|d| {
                let mut s = format!("{}_{}", d.edge_padding_low, d.edge_padding_high);
                if d.interior_padding != 0 {
                    let _ = write!(s, "_{}", d.interior_padding);
                }
                s
            })
            .collect();
        a.push(format!("padding={}", parts.join("x")));
    }
    if let Some(w) = &i.window {
        a.push(window(w));
    }
    if let Some(d) = &i.convolution_dimension_numbers {
        a.push(format!("dim_labels={}", dim_labels(d)));
    }
    if i.feature_group_count > 1 {
        a.push(format!("feature_group_count={}", i.feature_group_count));
    }
    if i.batch_group_count > 1 {
        a.push(format!("batch_group_count={}", i.batch_group_count));
    }
    if let Some(d) = &i.dot_dimension_numbers {
        for (name, v) in [
            ("lhs_batch_dims", &d.lhs_batch_dimensions),
            ("lhs_contracting_dims", &d.lhs_contracting_dimensions),
            ("rhs_batch_dims", &d.rhs_batch_dimensions),
            ("rhs_contracting_dims", &d.rhs_contracting_dimensions),
        ] {
            if !v.is_empty() {
                a.push(format!("{name}={}", list(v)));
            }
        }
    }
    if let Some(g) = &i.gather_dimension_numbers {
        a.push(format!("offset_dims={}", list(&g.offset_dims)));
        a.push(format!(
            "collapsed_slice_dims={}",
            list(&g.collapsed_slice_dims)
        ));
        a.push(format!("start_index_map={}", list(&g.start_index_map)));
        if !g.operand_batching_dims.is_empty() {
            a.push(format!(
                "operand_batching_dims={}",
                list(&g.operand_batching_dims)
            ));
            a.push(format!(
                "start_indices_batching_dims={}",
                list(&g.start_indices_batching_dims)
            ));
        }
        a.push(format!("index_vector_dim={}", g.index_vector_dim));
        a.push(format!("slice_sizes={}", list(&i.gather_slice_sizes)));
    }
    if let Some(s) = &i.scatter_dimension_numbers {
        a.push(format!(
            "update_window_dims={}",
            list(&s.update_window_dims)
        ));
        a.push(format!(
            "inserted_window_dims={}",
            list(&s.inserted_window_dims)
        ));
        a.push(format!(
            "scatter_dims_to_operand_dims={}",
            list(&s.scatter_dims_to_operand_dims)
        ));
        if !s.input_batching_dims.is_empty() {
            a.push(format!(
                "input_batching_dims={}",
                list(&s.input_batching_dims)
            ));
            a.push(format!(
                "scatter_indices_batching_dims={}",
                list(&s.scatter_indices_batching_dims)
            ));
        }
        a.push(format!("index_vector_dim={}", s.index_vector_dim));
    }
    if i.indices_are_sorted {
        a.push("indices_are_sorted=true".into());
    }
    if i.unique_indices {
        a.push("unique_indices=true".into());
    }
    if i.is_stable {
        a.push("is_stable=true".into());
    }
    if !i.comparison_direction.is_empty() {
        a.push(format!("direction={}", i.comparison_direction));
    }
    if !i.comparison_type.is_empty() {
        a.push(format!("type={}", i.comparison_type));
    }
    if let Some(p) = &i.precision_config {
        let names: Vec<&str> = p
            .operand_precision
            .iter()
            .map(|v| match v {
                1 => "high",
                2 => "highest",
                _ => "default",
            })
            .collect();
        if names.iter().any(|n| *n != "default") {
            a.push(format!("operand_precision={{{}}}", names.join(",")));
        }
    }
    for id in &i.called_computation_ids {
        a.push(format!(
            "to_apply={}",
            computations.get(id).copied().unwrap_or("?")
        ));
    }
    if let Some(m) = &i.metadata {
        let mut s = format!(
            "metadata={{op_type=\"{}\" op_name=\"{}\"",
            m.op_type, m.op_name
        );
        if !m.source_file.is_empty() {
            let _ = write!(
                s,
                " source_file=\"{}\" source_line={}",
                m.source_file, m.source_line
            );
        }
        s.push('}');
        a.push(s);
    }
    a
}
