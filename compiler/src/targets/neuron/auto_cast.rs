//! `neuron-auto-cast-bf16` / `neuron-auto-cast-fp16`: f32 matmul and convolution
//! inputs cast to a 16-bit type, as `neuronx-cc --auto-cast matmult` does on the
//! device (`tpuc compile --auto-cast bf16|fp16`).
//!
//! Every `dot_general` and `convolution` whose operands are both f32 gets a `convert`
//! of each operand to the 16-bit type; its result stays f32, so products accumulate in
//! f32 (what Neuron's matmul engines do). Doing it in the program, not in
//! `neuronx-cc`, lets the CPU check of the artifact compute the numbers the device
//! will: the artifact's `neuronx-cc` command then says `--auto-cast none`.

use melior::ir::Module;
use melior::Context;
use tpuc_artifact::DType;

use crate::error::CompileError;
use crate::passes::{ir, Pass};

pub struct NeuronAutoCast(pub DType);

/// The pass name for casting to `dtype` (`neuron-auto-cast-bf16`, `-fp16`).
pub fn name(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "neuron-auto-cast-fp16",
        _ => "neuron-auto-cast-bf16",
    }
}

impl Pass for NeuronAutoCast {
    fn name(&self) -> &'static str {
        name(self.0)
    }
    fn description(&self) -> &'static str {
        match self.0 {
            DType::F16 => {
                "Neuron: f32 dot_general and convolution inputs converted to f16 (f32 results)"
            }
            _ => "Neuron: f32 dot_general and convolution inputs converted to bf16 (f32 results)",
        }
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let Some(block) = ir::main_block(&module) else {
            return Ok(module);
        };
        for op in ir::nested_ops(block) {
            let name = ir::op_name(op);
            if name != "stablehlo.dot_general" && name != "stablehlo.convolution" {
                continue;
            }
            let operands = ir::operands(op);
            let types: Vec<_> = operands.iter().map(|v| ir::tensor_type(*v)).collect();
            if operands.len() != 2
                || !types
                    .iter()
                    .all(|t| t.as_ref().is_some_and(|t| t.dtype == DType::F32))
            {
                continue;
            }
            let ctx = ir::context(op);
            for (i, (v, t)) in operands.iter().zip(types).enumerate() {
                let Some(t) = t else { continue };
                let half = ir::parse_type(ctx, &t.with_dtype(self.0).mlir())
                    .ok_or_else(|| CompileError::Internal("cannot build a 16-bit type".into()))?;
                let convert = ir::create_op_before(op, "stablehlo.convert", &[*v], &[half], &[]);
                ir::set_operand(op, i as isize, ir::result(convert, 0));
            }
        }
        Ok(module)
    }
}
