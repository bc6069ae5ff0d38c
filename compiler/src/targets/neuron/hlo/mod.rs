//! StableHLO to XLA's `HloModuleProto`: the program format AWS's Neuron compiler
//! (`neuronx-cc compile model.hlo.pb --framework XLA`) and PJRT's `"hlo"` program
//! format take.
//!
//! [`emit`] walks `@main` of a StableHLO module (what the pipeline builds: static
//! shapes, no composites left) and writes one HLO instruction per op, with the
//! conversions HLO needs where StableHLO is laxer: a `broadcast_in_dim` that expands a
//! size-1 dimension reshapes first (an HLO broadcast maps dimensions one to one), a
//! scalar `select` predicate is broadcast, several results are a tuple read back with
//! `get-tuple-element`. Regions become called computations (reduce, reduce_window,
//! sort and scatter bodies), placed before their callers. Every array shape has the
//! default (row-major) layout. Each instruction's metadata names its graph node.
//! [`text`] prints the module as HLO text, for people and snapshots.

pub use tpuc_artifact::xla::hlo as proto;
pub mod text;

use std::collections::HashMap;

use melior::ir::Module;
use mlir_sys::{MlirBlock, MlirOperation, MlirValue};
use tpuc_artifact::DType;
use tpuc_dialects::TensorType;

use crate::error::CompileError;
use crate::passes::ir;
use proto::*;

/// The HLO module of `module`'s `@main`; `parameter_names` name its parameters in
/// order (the manifest's argument names).
pub fn emit(
    module: &Module<'_>,
    name: &str,
    parameter_names: &[String],
) -> Result<HloModuleProto, CompileError> {
    let main = ir::named_function_blocks(module)
        .into_iter()
        .find(|(n, _)| n == "main")
        .and_then(|(_, b)| b)
        .ok_or_else(|| CompileError::Internal("the module has no @main body".into()))?;
    let mut b = Builder {
        next_id: 1,
        computations: Vec::new(),
    };
    let args = ir::block_arguments(main);
    let mut comp = b.computation(|_| format!("{name}.main"));
    let mut parameters = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        let shape = value_shape(*arg, None)?;
        parameters.push(shape.clone());
        let pname = parameter_names
            .get(i)
            .map(|n| sanitize(n))
            .unwrap_or_else(|| format!("Arg_{i}"));
        let id = b.add(
            &mut comp,
            HloInstructionProto {
                name: pname,
                opcode: "parameter".into(),
                parameter_number: i as i64,
                shape: Some(shape),
                ..Default::default()
            },
        );
        comp.values.insert(key(*arg), id);
    }
    let outputs = b.block(&mut comp, &ir::block_ops(main))?;
    let names = (0..args.len())
        .map(|i| {
            parameter_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("Arg_{i}"))
        })
        .collect();
    let aliases = state_aliases(main, outputs.len())?;
    let entry = b.finish(comp, parameters, names, &outputs, true);
    let program_shape = entry.program_shape.clone();
    let (entry_name, entry_id) = (entry.name.clone(), entry.id);
    b.computations.push(entry);
    Ok(HloModuleProto {
        name: name.to_string(),
        entry_computation_name: entry_name,
        computations: b.computations,
        host_program_shape: program_shape,
        id: 1,
        entry_computation_id: entry_id,
        input_output_alias: (!aliases.is_empty())
            .then_some(HloInputOutputAliasProto { entries: aliases }),
    })
}

/// `tf.aliasing_output` on `@main`'s arguments (a stateful program's state, marked by
/// `compile`) as HLO's input/output aliases: output index, parameter, may-alias.
fn state_aliases(
    main: MlirBlock,
    num_outputs: usize,
) -> Result<Vec<AliasEntryProto>, CompileError> {
    let func = ir::block_parent(main);
    let mut aliases = Vec::new();
    for (param, dict) in ir::array_elements(func, "arg_attrs")
        .into_iter()
        .enumerate()
    {
        let Some(a) = ir::dictionary_entry(dict, "tf.aliasing_output") else {
            continue;
        };
        // SAFETY: checked to be an integer attribute before it is read.
        let output = unsafe {
            if !mlir_sys::mlirAttributeIsAInteger(a) {
                return Err(CompileError::Internal(
                    "tf.aliasing_output is not an integer".into(),
                ));
            }
            mlir_sys::mlirIntegerAttrGetValueInt(a)
        };
        aliases.push(AliasEntryProto {
            // One output is the result itself; several are a tuple.
            output_shape_index: if num_outputs == 1 {
                vec![]
            } else {
                vec![output]
            },
            parameter_number: param as i64,
            parameter_shape_index: vec![],
            kind: MAY_ALIAS,
        });
    }
    Ok(aliases)
}

/// `name` as an HLO identifier (letters, digits, `_`, `.`, `-`).
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        s
    } else {
        format!("_{s}")
    }
}

fn key(v: MlirValue) -> usize {
    v.ptr as usize
}

/// The XLA element type of `dtype`.
pub fn primitive_type(dtype: DType) -> i32 {
    match dtype {
        DType::F64 => primitive::F64,
        DType::F32 => primitive::F32,
        DType::F16 => primitive::F16,
        DType::Bf16 => primitive::BF16,
        DType::I64 => primitive::S64,
        DType::I32 => primitive::S32,
        DType::I16 => primitive::S16,
        DType::I8 => primitive::S8,
        DType::U8 => primitive::U8,
        DType::Bool => primitive::PRED,
        DType::C64 => primitive::C64,
        DType::C128 => primitive::C128,
    }
}

/// The array shape of `ty`, with the default layout (last dimension fastest).
pub fn array_shape(ty: &TensorType) -> ShapeProto {
    ShapeProto {
        element_type: primitive_type(ty.dtype),
        dimensions: ty.shape.clone(),
        tuple_shapes: Vec::new(),
        layout: Some(LayoutProto {
            minor_to_major: (0..ty.rank() as i64).rev().collect(),
            ..Default::default()
        }),
    }
}

fn tuple_shape(elements: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto {
        element_type: primitive::TUPLE,
        tuple_shapes: elements,
        ..Default::default()
    }
}

/// The shape of `v`; only static tensors of tpuc's element types have one.
fn value_shape(v: MlirValue, op: Option<MlirOperation>) -> Result<ShapeProto, CompileError> {
    match ir::tensor_type(v) {
        Some(ty) => Ok(array_shape(&ty)),
        None => Err(match op {
            Some(op) => node_error(op, "a value has no static tensor type HLO can hold"),
            None => CompileError::Internal(
                "an argument of @main has no static tensor type HLO can hold".into(),
            ),
        }),
    }
}

/// The graph node `op` was lowered from and its source line, from its location.
pub(crate) fn node_of(op: MlirOperation) -> (String, Option<(String, u32)>) {
    node_of_location(ir::location(op))
}

/// The graph node a location names (`loc("node"(file:line))`), as [`node_of`].
pub(crate) fn node_of_location(loc: mlir_sys::MlirLocation) -> (String, Option<(String, u32)>) {
    // SAFETY: the location is live; its parts are read after kind tests.
    unsafe {
        if !mlir_sys::mlirLocationIsAName(loc) {
            return (String::new(), None);
        }
        let name = ir::identifier_text(mlir_sys::mlirLocationNameGetName(loc));
        let child = mlir_sys::mlirLocationNameGetChildLoc(loc);
        let source = mlir_sys::mlirLocationIsAFileLineColRange(child).then(|| {
            (
                ir::identifier_text(mlir_sys::mlirLocationFileLineColRangeGetFilename(child)),
                mlir_sys::mlirLocationFileLineColRangeGetStartLine(child).max(0) as u32,
            )
        });
        (name, source)
    }
}

fn node_error(op: MlirOperation, message: &str) -> CompileError {
    let (node, _) = node_of(op);
    CompileError::Node {
        node: if node.is_empty() { "?".into() } else { node },
        target: ir::op_name(op).to_string(),
        message: message.to_string(),
    }
}

struct Builder {
    next_id: i64,
    /// Finished computations, callees first.
    computations: Vec<HloComputationProto>,
}

struct Computation {
    /// The computation's id; its instructions' ids are `id << 32 | n` (XLA's form:
    /// unique in the module, grouped by computation).
    id: i64,
    next_instruction: i64,
    name: String,
    instructions: Vec<HloInstructionProto>,
    values: HashMap<usize, i64>,
    shapes: HashMap<i64, ShapeProto>,
}

impl Computation {
    fn new(id: i64, name: String) -> Computation {
        Computation {
            id,
            next_instruction: 1,
            name,
            instructions: Vec::new(),
            values: HashMap::new(),
            shapes: HashMap::new(),
        }
    }
}

impl Builder {
    /// A new computation with the next id.
    fn computation(&mut self, name: impl FnOnce(i64) -> String) -> Computation {
        let id = self.next_id;
        self.next_id += 1;
        Computation::new(id, name(id))
    }

    /// Appends `ins` to `comp` with a fresh id (named `opcode.n` unless named).
    fn add(&mut self, comp: &mut Computation, mut ins: HloInstructionProto) -> i64 {
        let n = comp.next_instruction;
        comp.next_instruction += 1;
        let id = (comp.id << 32) | n;
        ins.id = id;
        let stem = if ins.name.is_empty() {
            &ins.opcode
        } else {
            &ins.name
        };
        ins.name = if comp.id == 1 {
            format!("{stem}.{n}")
        } else {
            format!("{stem}.{}.{n}", comp.id)
        };
        if let Some(s) = &ins.shape {
            comp.shapes.insert(id, s.clone());
        }
        comp.instructions.push(ins);
        id
    }

    /// Closes `comp`: its root is `outputs` (a tuple of them unless `single` and one).
    fn finish(
        &mut self,
        mut comp: Computation,
        parameters: Vec<ShapeProto>,
        parameter_names: Vec<String>,
        outputs: &[i64],
        untupled_single: bool,
    ) -> HloComputationProto {
        let root = if outputs.len() == 1 && untupled_single {
            outputs[0]
        } else {
            let shapes = outputs.iter().map(|o| comp.shapes[o].clone()).collect();
            self.add(
                &mut comp,
                HloInstructionProto {
                    opcode: "tuple".into(),
                    shape: Some(tuple_shape(shapes)),
                    operand_ids: outputs.to_vec(),
                    ..Default::default()
                },
            )
        };
        let result = comp.shapes[&root].clone();
        HloComputationProto {
            name: comp.name.clone(),
            instructions: std::mem::take(&mut comp.instructions),
            program_shape: Some(ProgramShapeProto {
                parameters,
                result: Some(result),
                parameter_names,
            }),
            id: comp.id,
            root_id: root,
        }
    }

    /// Lowers the ops of a block into `comp`; gives the ids its terminator returns.
    fn block(
        &mut self,
        comp: &mut Computation,
        ops: &[MlirOperation],
    ) -> Result<Vec<i64>, CompileError> {
        for &op in ops {
            let name = ir::op_name(op);
            if name == "func.return" || name == "stablehlo.return" {
                return ir::operands(op)
                    .into_iter()
                    .map(|v| operand(comp, op, v))
                    .collect();
            }
            let results = ir::results(op);
            let id = self.op(comp, op)?;
            if results.len() == 1 {
                comp.values.insert(key(results[0]), id);
            } else {
                for (i, r) in results.iter().enumerate() {
                    let shape = value_shape(*r, Some(op))?;
                    let gte = self.add(
                        comp,
                        HloInstructionProto {
                            opcode: "get-tuple-element".into(),
                            shape: Some(shape),
                            tuple_index: i as i64,
                            operand_ids: vec![id],
                            metadata: comp.instructions.last().and_then(|i| i.metadata.clone()),
                            ..Default::default()
                        },
                    );
                    comp.values.insert(key(*r), gte);
                }
            }
        }
        Err(CompileError::Internal("a block without terminator".into()))
    }

    /// A called computation from region `index` of `op`: one scalar parameter per
    /// block argument, the terminator's values as its root (a tuple of several).
    fn region(
        &mut self,
        op: MlirOperation,
        index: isize,
        parent: &str,
    ) -> Result<i64, CompileError> {
        // SAFETY: the region index is checked against the op's region count.
        let block = unsafe {
            if index >= mlir_sys::mlirOperationGetNumRegions(op) {
                return Err(node_error(op, "a region is missing"));
            }
            let region = mlir_sys::mlirOperationGetRegion(op, index);
            mlir_sys::mlirRegionGetFirstBlock(region)
        };
        if block.ptr.is_null() {
            return Err(node_error(op, "a region has no block"));
        }
        let mut comp = self.computation(|id| format!("{parent}.region{id}"));
        let mut parameters = Vec::new();
        let mut names = Vec::new();
        for (i, arg) in ir::block_arguments(block).iter().enumerate() {
            let shape = value_shape(*arg, Some(op))?;
            parameters.push(shape.clone());
            names.push(format!("Arg_{i}"));
            let id = self.add(
                &mut comp,
                HloInstructionProto {
                    name: format!("Arg_{i}"),
                    opcode: "parameter".into(),
                    parameter_number: i as i64,
                    shape: Some(shape),
                    ..Default::default()
                },
            );
            comp.values.insert(key(*arg), id);
        }
        let outputs = self.block(&mut comp, &ir::block_ops(block))?;
        let done = self.finish(comp, parameters, names, &outputs, true);
        let id = done.id;
        self.computations.push(done);
        Ok(id)
    }

    /// The HLO instruction of `op` (its tuple when it has several results).
    fn op(&mut self, comp: &mut Computation, op: MlirOperation) -> Result<i64, CompileError> {
        let name = ir::op_name(op);
        let short = name.strip_prefix("stablehlo.").unwrap_or(name);
        let operands: Vec<i64> = ir::operands(op)
            .into_iter()
            .map(|v| operand(comp, op, v))
            .collect::<Result<_, _>>()?;
        let results = ir::results(op);
        let mut shapes = Vec::with_capacity(results.len());
        for r in &results {
            shapes.push(value_shape(*r, Some(op))?);
        }
        let shape = match shapes.len() {
            1 => shapes[0].clone(),
            _ => tuple_shape(shapes.clone()),
        };
        let (node, source) = node_of(op);
        let metadata = (!node.is_empty()).then(|| OpMetadata {
            op_type: short.to_string(),
            op_name: node.clone(),
            source_file: source.as_ref().map(|s| s.0.clone()).unwrap_or_default(),
            source_line: source.as_ref().map_or(0, |s| s.1 as i32),
        });
        let mut ins = HloInstructionProto {
            shape: Some(shape.clone()),
            operand_ids: operands.clone(),
            metadata: metadata.clone(),
            ..Default::default()
        };
        let unsupported = |what: &str| node_error(op, &format!("{what} has no HLO form in tpuc"));
        let array = |name: &str| ir::i64_array(op, name);
        let missing = |what: &str| node_error(op, &format!("attribute `{what}` is missing"));
        if let Some(opcode) = elementwise_opcode(short) {
            ins.opcode = opcode.into();
            return Ok(self.add(comp, ins));
        }
        match short {
            "constant" => return self.constant(comp, op, metadata),
            "select" => {
                // HLO's predicate has the operands' shape; StableHLO's may be a scalar.
                let pred_shape = &comp.shapes[&operands[0]];
                if pred_shape.dimensions.is_empty() && !shape.dimensions.is_empty() {
                    let mut pshape = shape.clone();
                    pshape.element_type = primitive::PRED;
                    let b = self.add(
                        comp,
                        HloInstructionProto {
                            opcode: "broadcast".into(),
                            shape: Some(pshape),
                            operand_ids: vec![operands[0]],
                            metadata: metadata.clone(),
                            ..Default::default()
                        },
                    );
                    ins.operand_ids[0] = b;
                }
                ins.opcode = "select".into();
            }
            "clamp" => {
                // HLO allows scalar bounds, but XLA's passes that move reshapes and
                // transposes through elementwise ops assume full shapes: broadcast them.
                for k in [0, 2] {
                    let bound = &comp.shapes[&operands[k]];
                    if bound.dimensions.is_empty() && !shape.dimensions.is_empty() {
                        let mut bshape = shape.clone();
                        bshape.element_type = bound.element_type;
                        ins.operand_ids[k] = self.add(
                            comp,
                            HloInstructionProto {
                                opcode: "broadcast".into(),
                                shape: Some(bshape),
                                operand_ids: vec![operands[k]],
                                metadata: metadata.clone(),
                                ..Default::default()
                            },
                        );
                    }
                }
                ins.opcode = "clamp".into();
            }
            "compare" => {
                ins.opcode = "compare".into();
                ins.comparison_direction = enum_word(op, "comparison_direction")
                    .ok_or_else(|| missing("comparison_direction"))?;
                if let Some(t) = enum_word(op, "compare_type").filter(|t| t != "NOTYPE") {
                    ins.comparison_type = t;
                }
            }
            "reshape" => ins.opcode = "reshape".into(),
            "transpose" => {
                ins.opcode = "transpose".into();
                ins.dimensions = array("permutation").ok_or_else(|| missing("permutation"))?;
            }
            "reverse" => {
                ins.opcode = "reverse".into();
                ins.dimensions = array("dimensions").ok_or_else(|| missing("dimensions"))?;
            }
            "iota" => {
                ins.opcode = "iota".into();
                ins.dimensions = vec![ir::i64_attribute(op, "iota_dimension")
                    .ok_or_else(|| missing("iota_dimension"))?];
            }
            "concatenate" => {
                ins.opcode = "concatenate".into();
                ins.dimensions =
                    vec![ir::i64_attribute(op, "dimension").ok_or_else(|| missing("dimension"))?];
            }
            "broadcast_in_dim" => {
                let dims =
                    array("broadcast_dimensions").ok_or_else(|| missing("broadcast_dimensions"))?;
                return Ok(self.broadcast(comp, ins, dims));
            }
            "slice" => {
                let start = array("start_indices").ok_or_else(|| missing("start_indices"))?;
                let limit = array("limit_indices").ok_or_else(|| missing("limit_indices"))?;
                let strides = array("strides").unwrap_or_else(|| vec![1; start.len()]);
                ins.opcode = "slice".into();
                ins.slice_dimensions = start
                    .iter()
                    .zip(&limit)
                    .zip(&strides)
                    .map(|((&start, &limit), &stride)| SliceDimensions {
                        start,
                        limit,
                        stride,
                    })
                    .collect();
            }
            "pad" => {
                let low = array("edge_padding_low").ok_or_else(|| missing("edge_padding_low"))?;
                let high =
                    array("edge_padding_high").ok_or_else(|| missing("edge_padding_high"))?;
                let interior = array("interior_padding").unwrap_or_else(|| vec![0; low.len()]);
                ins.opcode = "pad".into();
                ins.padding_config = Some(PaddingConfig {
                    dimensions: (0..low.len())
                        .map(|i| PaddingConfigDimension {
                            edge_padding_low: low[i],
                            edge_padding_high: high[i],
                            interior_padding: interior[i],
                        })
                        .collect(),
                });
            }
            "dot_general" => {
                if ir::attribute(op, "algorithm").is_some() {
                    return Err(unsupported("a dot algorithm"));
                }
                let text = ir::attribute_text(op, "dot_dimension_numbers")
                    .ok_or_else(|| missing("dot_dimension_numbers"))?;
                ins.opcode = "dot".into();
                ins.dot_dimension_numbers = Some(DotDimensionNumbers {
                    lhs_batch_dimensions: list_field(&text, "lhs_batching_dimensions"),
                    rhs_batch_dimensions: list_field(&text, "rhs_batching_dimensions"),
                    lhs_contracting_dimensions: list_field(&text, "lhs_contracting_dimensions"),
                    rhs_contracting_dimensions: list_field(&text, "rhs_contracting_dimensions"),
                });
                ins.precision_config = precision_config(op);
            }
            "convolution" => {
                self.convolution(comp, op, &mut ins)?;
            }
            "reduce" => {
                ins.opcode = "reduce".into();
                ins.dimensions = array("dimensions").ok_or_else(|| missing("dimensions"))?;
                ins.called_computation_ids = vec![self.region(op, 0, &comp.name)?];
            }
            "reduce_window" => {
                let sizes =
                    array("window_dimensions").ok_or_else(|| missing("window_dimensions"))?;
                let n = sizes.len();
                let strides = array("window_strides").unwrap_or_else(|| vec![1; n]);
                let base = array("base_dilations").unwrap_or_else(|| vec![1; n]);
                let win = array("window_dilations").unwrap_or_else(|| vec![1; n]);
                let pad = match ir::attribute(op, "padding") {
                    Some(_) => {
                        ir::dense_i64_elements(op, "padding").ok_or_else(|| missing("padding"))?
                    }
                    None => vec![0; 2 * n],
                };
                let pad = expand_pairs(pad, n);
                ins.opcode = "reduce-window".into();
                ins.window = Some(Window {
                    dimensions: (0..n)
                        .map(|i| WindowDimension {
                            size: sizes[i],
                            stride: strides[i],
                            padding_low: pad[2 * i],
                            padding_high: pad[2 * i + 1],
                            window_dilation: win[i],
                            base_dilation: base[i],
                            window_reversal: false,
                        })
                        .collect(),
                });
                ins.called_computation_ids = vec![self.region(op, 0, &comp.name)?];
            }
            "gather" => {
                let text = ir::attribute_text(op, "dimension_numbers")
                    .ok_or_else(|| missing("dimension_numbers"))?;
                ins.opcode = "gather".into();
                ins.gather_dimension_numbers = Some(GatherDimensionNumbers {
                    offset_dims: list_field(&text, "offset_dims"),
                    collapsed_slice_dims: list_field(&text, "collapsed_slice_dims"),
                    start_index_map: list_field(&text, "start_index_map"),
                    index_vector_dim: int_field(&text, "index_vector_dim").unwrap_or(0),
                    operand_batching_dims: list_field(&text, "operand_batching_dims"),
                    start_indices_batching_dims: list_field(&text, "start_indices_batching_dims"),
                });
                ins.gather_slice_sizes =
                    array("slice_sizes").ok_or_else(|| missing("slice_sizes"))?;
                ins.indices_are_sorted = bool_attribute(op, "indices_are_sorted");
            }
            "scatter" => {
                let text = ir::attribute_text(op, "scatter_dimension_numbers")
                    .ok_or_else(|| missing("scatter_dimension_numbers"))?;
                ins.opcode = "scatter".into();
                ins.scatter_dimension_numbers = Some(ScatterDimensionNumbers {
                    update_window_dims: list_field(&text, "update_window_dims"),
                    inserted_window_dims: list_field(&text, "inserted_window_dims"),
                    scatter_dims_to_operand_dims: list_field(&text, "scatter_dims_to_operand_dims"),
                    index_vector_dim: int_field(&text, "index_vector_dim").unwrap_or(0),
                    input_batching_dims: list_field(&text, "input_batching_dims"),
                    scatter_indices_batching_dims: list_field(
                        &text,
                        "scatter_indices_batching_dims",
                    ),
                });
                ins.indices_are_sorted = bool_attribute(op, "indices_are_sorted");
                ins.unique_indices = bool_attribute(op, "unique_indices");
                ins.called_computation_ids = vec![self.region(op, 0, &comp.name)?];
            }
            "sort" => {
                ins.opcode = "sort".into();
                ins.dimensions = vec![ir::i64_attribute(op, "dimension").unwrap_or(-1)];
                if ins.dimensions[0] < 0 {
                    let rank = comp.shapes[&operands[0]].dimensions.len() as i64;
                    ins.dimensions[0] += rank;
                }
                ins.is_stable = bool_attribute(op, "is_stable");
                ins.called_computation_ids = vec![self.region(op, 0, &comp.name)?];
            }
            "composite" => {
                return Err(node_error(
                    op,
                    "a stablehlo.composite reached the HLO writer; inline composites first \
                     (the Neuron pipeline never outlines them)",
                ))
            }
            other => return Err(unsupported(&format!("stablehlo.{other}"))),
        }
        Ok(self.add(comp, ins))
    }

    /// `broadcast_in_dim` as HLO's one-to-one `broadcast`, reshaping away the size-1
    /// dimensions it expands first.
    fn broadcast(
        &mut self,
        comp: &mut Computation,
        mut ins: HloInstructionProto,
        dims: Vec<i64>,
    ) -> i64 {
        let out = ins.shape.clone().unwrap_or_default();
        let input = comp.shapes[&ins.operand_ids[0]].clone();
        let kept: Vec<usize> = (0..dims.len())
            .filter(|&i| input.dimensions[i] == out.dimensions[dims[i] as usize])
            .collect();
        let mut operand = ins.operand_ids[0];
        if kept.len() != dims.len() {
            let ty = TensorType::new(
                kept.iter()
                    .map(|&i| input.dimensions[i])
                    .collect::<Vec<_>>(),
                dtype_of(input.element_type),
            );
            operand = self.add(
                comp,
                HloInstructionProto {
                    opcode: "reshape".into(),
                    shape: Some(array_shape(&ty)),
                    operand_ids: vec![operand],
                    metadata: ins.metadata.clone(),
                    ..Default::default()
                },
            );
        }
        ins.opcode = "broadcast".into();
        ins.operand_ids = vec![operand];
        ins.dimensions = kept.iter().map(|&i| dims[i]).collect();
        self.add(comp, ins)
    }

    fn convolution(
        &mut self,
        comp: &Computation,
        op: MlirOperation,
        ins: &mut HloInstructionProto,
    ) -> Result<(), CompileError> {
        let missing = |what: &str| node_error(op, &format!("attribute `{what}` is missing"));
        let text = ir::attribute_text(op, "dimension_numbers")
            .ok_or_else(|| missing("dimension_numbers"))?;
        let dn = conv_dimension_numbers(&text)
            .ok_or_else(|| node_error(op, &format!("cannot read dimension numbers `{text}`")))?;
        let n = dn.input_spatial_dimensions.len();
        let kernel = &comp.shapes[&ins.operand_ids[1]];
        let strides = ir::i64_array(op, "window_strides").unwrap_or_else(|| vec![1; n]);
        let lhs_dil = ir::i64_array(op, "lhs_dilation").unwrap_or_else(|| vec![1; n]);
        let rhs_dil = ir::i64_array(op, "rhs_dilation").unwrap_or_else(|| vec![1; n]);
        let pad = match ir::attribute(op, "padding") {
            Some(_) => ir::dense_i64_elements(op, "padding").ok_or_else(|| missing("padding"))?,
            None => vec![0; 2 * n],
        };
        let pad = expand_pairs(pad, n);
        let reversal = bool_array(op, "window_reversal").unwrap_or_else(|| vec![false; n]);
        ins.opcode = "convolution".into();
        ins.window = Some(Window {
            dimensions: (0..n)
                .map(|i| WindowDimension {
                    size: kernel.dimensions[dn.kernel_spatial_dimensions[i] as usize],
                    stride: strides[i],
                    padding_low: pad[2 * i],
                    padding_high: pad[2 * i + 1],
                    window_dilation: rhs_dil[i],
                    base_dilation: lhs_dil[i],
                    window_reversal: reversal[i],
                })
                .collect(),
        });
        ins.convolution_dimension_numbers = Some(dn);
        ins.feature_group_count = ir::i64_attribute(op, "feature_group_count").unwrap_or(1);
        ins.batch_group_count = ir::i64_attribute(op, "batch_group_count").unwrap_or(1);
        ins.precision_config = precision_config(op);
        Ok(())
    }

    /// A constant: a splat as a scalar literal broadcast to its shape, anything else
    /// as the whole literal.
    fn constant(
        &mut self,
        comp: &mut Computation,
        op: MlirOperation,
        metadata: Option<OpMetadata>,
    ) -> Result<i64, CompileError> {
        let ty = ir::tensor_type(ir::result(op, 0))
            .ok_or_else(|| node_error(op, "a constant without a static tensor type"))?;
        let attr =
            ir::attribute(op, "value").ok_or_else(|| node_error(op, "a constant without value"))?;
        // SAFETY: the attribute is checked to be dense elements before it is read.
        let (splat, values) = unsafe {
            if !mlir_sys::mlirAttributeIsADenseElements(attr) {
                return Err(node_error(
                    op,
                    "a constant whose value is not dense elements",
                ));
            }
            let splat = mlir_sys::mlirDenseElementsAttrIsSplat(attr);
            let n = if splat { 1 } else { ty.num_elements() as usize };
            (splat, literal_values(attr, ty.dtype, n))
        };
        let scalar = TensorType::scalar(ty.dtype);
        let literal_ty = if splat { &scalar } else { &ty };
        let mut literal = values;
        literal.shape = Some(array_shape(literal_ty));
        let id = self.add(
            comp,
            HloInstructionProto {
                opcode: "constant".into(),
                shape: Some(array_shape(literal_ty)),
                literal: Some(literal),
                metadata: metadata.clone(),
                ..Default::default()
            },
        );
        if !splat || ty.rank() == 0 {
            return Ok(id);
        }
        Ok(self.add(
            comp,
            HloInstructionProto {
                opcode: "broadcast".into(),
                shape: Some(array_shape(&ty)),
                operand_ids: vec![id],
                metadata,
                ..Default::default()
            },
        ))
    }
}

/// The first `n` elements of a dense elements attribute of `dtype` as a literal
/// (without its shape).
///
/// # Safety
/// `attr` must be a dense elements attribute of `dtype` with at least `n` elements
/// (one for a splat).
unsafe fn literal_values(attr: mlir_sys::MlirAttribute, dtype: DType, n: usize) -> LiteralProto {
    let mut l = LiteralProto::default();
    let at = |i: usize| i as isize;
    // SAFETY: the caller guarantees the attribute's kind, element type and length.
    unsafe {
        match dtype {
            DType::Bool => {
                l.preds = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetBoolValue(attr, at(i)))
                    .collect()
            }
            DType::I64 => {
                l.s64s = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetInt64Value(attr, at(i)))
                    .collect()
            }
            DType::I32 => {
                l.s32s = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetInt32Value(attr, at(i)))
                    .collect()
            }
            DType::I16 => {
                l.s16s = (0..n)
                    .flat_map(|i| {
                        mlir_sys::mlirDenseElementsAttrGetInt16Value(attr, at(i)).to_le_bytes()
                    })
                    .collect()
            }
            DType::I8 => {
                l.s8s = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetInt8Value(attr, at(i)) as u8)
                    .collect()
            }
            DType::U8 => {
                l.u8s = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetUInt8Value(attr, at(i)))
                    .collect()
            }
            DType::F32 => {
                l.f32s = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetFloatValue(attr, at(i)))
                    .collect()
            }
            DType::F64 => {
                l.f64s = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetDoubleValue(attr, at(i)))
                    .collect()
            }
            DType::F16 | DType::Bf16 => {
                // Raw storage: two little-endian bytes per element (one element for a splat).
                let data = mlir_sys::mlirDenseElementsAttrGetRawData(attr) as *const u8;
                let bytes = std::slice::from_raw_parts(data, 2 * n).to_vec();
                if dtype == DType::F16 {
                    l.f16s = bytes;
                } else {
                    l.bf16s = bytes;
                }
            }
            // `neuron-check` refuses every complex value before the emitter runs
            // (neuronx-cc has no complex types), so no complex constant reaches here.
            DType::C64 | DType::C128 => {}
        }
    }
    l
}

fn dtype_of(element_type: i32) -> DType {
    match element_type {
        primitive::F64 => DType::F64,
        primitive::F16 => DType::F16,
        primitive::BF16 => DType::Bf16,
        primitive::S64 => DType::I64,
        primitive::S32 => DType::I32,
        primitive::S16 => DType::I16,
        primitive::S8 => DType::I8,
        primitive::U8 => DType::U8,
        primitive::PRED => DType::Bool,
        primitive::C64 => DType::C64,
        primitive::C128 => DType::C128,
        _ => DType::F32,
    }
}

fn operand(comp: &Computation, op: MlirOperation, v: MlirValue) -> Result<i64, CompileError> {
    comp.values.get(&key(v)).copied().ok_or_else(|| {
        node_error(
            op,
            "an operand defined outside this computation (a region that captures a value)",
        )
    })
}

/// The HLO opcode of a StableHLO op that maps one to one with no attributes.
fn elementwise_opcode(short: &str) -> Option<&'static str> {
    Some(match short {
        "abs" => "abs",
        "negate" => "negate",
        "exponential" => "exponential",
        "exponential_minus_one" => "exponential-minus-one",
        "log" => "log",
        "log_plus_one" => "log-plus-one",
        "logistic" => "logistic",
        "sqrt" => "sqrt",
        "rsqrt" => "rsqrt",
        "cbrt" => "cbrt",
        "tanh" => "tanh",
        "tan" => "tan",
        "sine" => "sine",
        "cosine" => "cosine",
        "floor" => "floor",
        "ceil" => "ceil",
        "sign" => "sign",
        "not" => "not",
        "round_nearest_afz" => "round-nearest-afz",
        "round_nearest_even" => "round-nearest-even",
        "is_finite" => "is-finite",
        "popcnt" => "popcnt",
        "count_leading_zeros" => "count-leading-zeros",
        "convert" => "convert",
        "bitcast_convert" => "bitcast-convert",
        "add" => "add",
        "subtract" => "subtract",
        "multiply" => "multiply",
        "divide" => "divide",
        "remainder" => "remainder",
        "maximum" => "maximum",
        "minimum" => "minimum",
        "power" => "power",
        "atan2" => "atan2",
        "and" => "and",
        "or" => "or",
        "xor" => "xor",
        "shift_left" => "shift-left",
        "shift_right_arithmetic" => "shift-right-arithmetic",
        "shift_right_logical" => "shift-right-logical",
        _ => return None,
    })
}

/// The last word of an enum attribute such as `#stablehlo<comparison_direction LT>`.
fn enum_word(op: MlirOperation, name: &str) -> Option<String> {
    let text = ir::attribute_text(op, name)?;
    let inner = text.trim_end_matches('>');
    inner.rsplit([' ', '<']).next().map(str::to_string)
}

fn bool_attribute(op: MlirOperation, name: &str) -> bool {
    ir::attribute(op, name)
        // SAFETY: checked to be a bool attribute before it is read.
        .is_some_and(|a| unsafe {
            mlir_sys::mlirAttributeIsABool(a) && mlir_sys::mlirBoolAttrGetValue(a)
        })
}

fn bool_array(op: MlirOperation, name: &str) -> Option<Vec<bool>> {
    let a = ir::attribute(op, name)?;
    // SAFETY: checked to be a dense bool array before it is read.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseBoolArray(a) {
            return None;
        }
        let n = mlir_sys::mlirDenseArrayGetNumElements(a);
        Some(
            (0..n)
                .map(|i| mlir_sys::mlirDenseBoolArrayGetElement(a, i))
                .collect(),
        )
    }
}

/// `precision_config = [#stablehlo<precision HIGHEST>, ...]` as XLA's enum values.
fn precision_config(op: MlirOperation) -> Option<PrecisionConfig> {
    let text = ir::attribute_text(op, "precision_config")?;
    let operand_precision = text
        .split("precision ")
        .skip(1)
        .map(|w| match w.split('>').next().unwrap_or("") {
            "HIGH" => 1,
            "HIGHEST" => 2,
            _ => 0,
        })
        .collect();
    Some(PrecisionConfig { operand_precision })
}

/// `name = [1, 2]` inside a dimension-numbers attribute (empty when absent).
fn list_field(text: &str, name: &str) -> Vec<i64> {
    let pattern = format!("{name} = [");
    let Some(start) = text.find(&pattern) else {
        return Vec::new();
    };
    let rest = &text[start + pattern.len()..];
    let end = rest.find(']').unwrap_or(rest.len());
    rest[..end]
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// `name = 2` inside a dimension-numbers attribute.
fn int_field(text: &str, name: &str) -> Option<i64> {
    let pattern = format!("{name} = ");
    let start = text.find(&pattern)? + pattern.len();
    let digits: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// A `padding` of `n` dimensions as `[low0, high0, low1, high1, ...]` (a splat gives
/// one value).
fn expand_pairs(values: Vec<i64>, n: usize) -> Vec<i64> {
    if values.len() == 1 {
        vec![values[0]; 2 * n]
    } else {
        values
    }
}

/// `#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>` as XLA's numbers.
fn conv_dimension_numbers(text: &str) -> Option<ConvolutionDimensionNumbers> {
    let groups: Vec<Vec<String>> = text
        .split('[')
        .skip(1)
        .map(|g| {
            g.split(']')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|s| s.trim().to_string())
                .collect()
        })
        .collect();
    if groups.len() != 3 {
        return None;
    }
    let find = |g: &[String], label: &str| g.iter().position(|s| s == label).map(|p| p as i64);
    let spatial = |g: &[String]| -> Option<Vec<i64>> {
        let mut pairs: Vec<(usize, i64)> = g
            .iter()
            .enumerate()
            .filter_map(|(pos, s)| s.parse::<usize>().ok().map(|k| (k, pos as i64)))
            .collect();
        pairs.sort();
        pairs
            .iter()
            .enumerate()
            .all(|(i, (k, _))| i == *k)
            .then(|| pairs.into_iter().map(|(_, p)| p).collect())
    };
    let (input, kernel, output) = (&groups[0], &groups[1], &groups[2]);
    Some(ConvolutionDimensionNumbers {
        input_batch_dimension: find(input, "b")?,
        input_feature_dimension: find(input, "f")?,
        input_spatial_dimensions: spatial(input)?,
        kernel_input_feature_dimension: find(kernel, "i")?,
        kernel_output_feature_dimension: find(kernel, "o")?,
        kernel_spatial_dimensions: spatial(kernel)?,
        output_batch_dimension: find(output, "b")?,
        output_feature_dimension: find(output, "f")?,
        output_spatial_dimensions: spatial(output)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convolution_dimension_numbers_read_every_label() {
        let dn = conv_dimension_numbers("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, f, 1, 0]>")
            .unwrap();
        assert_eq!(
            (dn.input_batch_dimension, dn.input_feature_dimension),
            (0, 3)
        );
        assert_eq!(dn.input_spatial_dimensions, vec![1, 2]);
        assert_eq!(dn.kernel_spatial_dimensions, vec![0, 1]);
        assert_eq!(
            (
                dn.kernel_input_feature_dimension,
                dn.kernel_output_feature_dimension
            ),
            (2, 3)
        );
        assert_eq!(dn.output_spatial_dimensions, vec![3, 2]);
        assert!(
            conv_dimension_numbers("#stablehlo.conv<[b, f, 1]x[o, i, 0]->[b, f, 0]>").is_none()
        );
    }

    #[test]
    fn dimension_fields_are_read_by_name() {
        let t = "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2, 3], rhs_contracting_dimensions = [1]>";
        assert_eq!(list_field(t, "lhs_contracting_dimensions"), vec![2, 3]);
        assert_eq!(list_field(t, "rhs_batching_dimensions"), vec![0]);
        assert!(list_field(t, "offset_dims").is_empty());
        assert_eq!(
            int_field(
                "#stablehlo.gather<index_vector_dim = 12>",
                "index_vector_dim"
            ),
            Some(12)
        );
    }
}
