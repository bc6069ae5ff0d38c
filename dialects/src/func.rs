//! `func.func` helpers: the entry function tpuc's modules are built around.

use melior::ir::attribute::{StringAttribute, TypeAttribute};
use melior::ir::block::BlockLike;
use melior::ir::operation::OperationLike;
use melior::ir::r#type::FunctionType;
use melior::ir::{Block, Location, Module, Region, RegionLike};
use melior::Context;

use crate::stablehlo::{Emitter, TValue};
use crate::types::TensorType;
use crate::DialectError;

/// A function appended to a module: an emitter at the end of its entry block and its
/// arguments.
pub struct Function<'c> {
    pub emitter: Emitter<'c>,
    pub arguments: Vec<TValue>,
    /// The `func.func` operation.
    pub op: mlir_sys::MlirOperation,
}

/// Appends `func.func @name(args) -> results` with an empty entry block to `module`.
/// Each argument gets its own location (tpuc uses the input's name).
pub fn append_function<'c>(
    ctx: &'c Context,
    module: &Module<'c>,
    name: &str,
    args: &[(TensorType, Location<'c>)],
    results: &[TensorType],
    loc: Location<'c>,
) -> Result<Function<'c>, DialectError> {
    let arg_types = args
        .iter()
        .map(|(t, l)| Ok((t.to_mlir(ctx)?, *l)))
        .collect::<Result<Vec<_>, DialectError>>()?;
    let result_types = results
        .iter()
        .map(|t| t.to_mlir(ctx))
        .collect::<Result<Vec<_>, _>>()?;
    let inputs: Vec<_> = arg_types.iter().map(|(t, _)| *t).collect();
    let fty = FunctionType::new(ctx, &inputs, &result_types);
    let region = Region::new();
    region.append_block(Block::new(&arg_types));
    let op = melior::dialect::func::func(
        ctx,
        StringAttribute::new(ctx, name),
        TypeAttribute::new(fty.into()),
        region,
        &[],
        loc,
    );
    let op = module.body().append_operation(op);
    let raw = op.to_raw();
    let block = op
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| DialectError::Build("func.func".into()))?;
    let arguments = (0..block.argument_count())
        .map(|i| {
            let a = block
                .argument(i)
                .map_err(|_| DialectError::Build("func.func".into()))?;
            TValue::from_value(a.into())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Function {
        emitter: Emitter::new(ctx, &block, loc),
        arguments,
        op: raw,
    })
}
