//! Opcode counts of a compiled program: the opcode and result size of every instruction
//! of every computation of an XLA `HloModuleProto` (the collectives a partitioned
//! program has, and how many bytes each moves, for `tpuc` and the sharding tests).
//!
//! The module is decoded with the [`super::hlo`] messages; the fields they do not
//! declare are skipped.

use std::borrow::Cow;
use std::collections::BTreeMap;

use prost::Message;

use super::hlo::{HloModuleProto, HloModuleProtoWithConfig, ShapeProto};

/// Bytes per element of an XLA `PrimitiveType` (sub-byte types count as one byte;
/// tokens, tuples and unknown types as none).
pub(super) fn element_bytes(primitive_type: i32) -> u64 {
    match primitive_type {
        1 | 2 | 6 | 19 | 20 | 21 | 22 | 26 | 27 => 1, // PRED, S8, U8, F8 kinds, S4/U4, S2/U2
        3 | 7 | 10 | 16 => 2,                         // S16, U16, F16, BF16
        4 | 8 | 11 => 4,                              // S32, U32, F32
        5 | 9 | 12 | 15 => 8,                         // S64, U64, F64, C64
        18 => 16,                                     // C128
        _ => 0,
    }
}

/// The bytes of a shape: an array's elements, a tuple's leaves summed.
pub(super) fn shape_bytes(shape: &ShapeProto) -> u64 {
    if !shape.tuple_shapes.is_empty() {
        return shape.tuple_shapes.iter().map(shape_bytes).sum();
    }
    let elements = shape
        .dimensions
        .iter()
        .fold(1u64, |n, &d| n.saturating_mul(d as u64));
    element_bytes(shape.element_type).saturating_mul(elements)
}

/// The serialized `HloModuleProto` of a program in PJRT `format` (`"hlo"`, or
/// `"hlo_with_config"`: the module inside an `HloModuleProtoWithConfig`); `None` for
/// another format, or a `hlo_with_config` program with no module.
pub fn module_of<'a>(format: &str, code: &'a [u8]) -> Option<Cow<'a, [u8]>> {
    match format {
        "hlo" => Some(Cow::Borrowed(code)),
        "hlo_with_config" => {
            let with_config = HloModuleProtoWithConfig::decode(code).ok()?;
            (!with_config.hlo_module.is_empty()).then_some(Cow::Owned(with_config.hlo_module))
        }
        _ => None,
    }
}

/// How often an opcode occurs in a module, and the bytes of its results summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpcodeStats {
    pub count: usize,
    pub result_bytes: u64,
}

/// Every opcode (`"all-reduce"`, `"dot"`...) of the serialized `HloModuleProto`, over all
/// its computations, with its count and result bytes; `None` when it does not parse.
pub fn opcode_stats(module: &[u8]) -> Option<BTreeMap<String, OpcodeStats>> {
    let module = HloModuleProto::decode(module).ok()?;
    let mut stats: BTreeMap<String, OpcodeStats> = BTreeMap::new();
    for computation in &module.computations {
        for instruction in &computation.instructions {
            if instruction.opcode.is_empty() {
                continue;
            }
            let e = stats.entry(instruction.opcode.clone()).or_default();
            e.count += 1;
            e.result_bytes += instruction.shape.as_ref().map_or(0, shape_bytes);
        }
    }
    Some(stats)
}

/// How many instructions of each opcode the serialized `HloModuleProto` has
/// ([`opcode_stats`] without the bytes).
pub fn opcode_counts(module: &[u8]) -> Option<BTreeMap<String, usize>> {
    Some(
        opcode_stats(module)?
            .into_iter()
            .map(|(k, v)| (k, v.count))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // Field numbers, to write messages by hand.
    const MODULE_COMPUTATIONS: u64 = 3;
    const COMPUTATION_INSTRUCTIONS: u64 = 2;
    const INSTRUCTION_OPCODE: u64 = 2;
    const INSTRUCTION_SHAPE: u64 = 3;
    const SHAPE_ELEMENT_TYPE: u64 = 2;
    const SHAPE_DIMENSIONS: u64 = 3;
    const SHAPE_TUPLE_SHAPES: u64 = 4;

    fn field(number: u64, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![(number << 3 | 2) as u8, payload.len() as u8];
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn counts_opcodes_over_computations() {
        // f32[2, 3] (dimensions packed) and a tuple of it and s8[5] (unpacked).
        let mut f32_2x3 = vec![(SHAPE_ELEMENT_TYPE << 3) as u8, 11];
        f32_2x3.extend(field(SHAPE_DIMENSIONS, &[2, 3]));
        let s8_5 = [
            (SHAPE_ELEMENT_TYPE << 3) as u8,
            2,
            (SHAPE_DIMENSIONS << 3) as u8,
            5,
        ];
        let mut pair = field(SHAPE_TUPLE_SHAPES, &f32_2x3);
        pair.extend(field(SHAPE_TUPLE_SHAPES, &s8_5));
        let inst = |op: &str, shape: &[u8]| {
            let mut i = field(1, b"name.1");
            i.extend(field(INSTRUCTION_OPCODE, op.as_bytes()));
            i.extend(field(INSTRUCTION_SHAPE, shape));
            i.extend([0x18 << 1, 0x05]); // an unrelated varint field
            i
        };
        let mut comp = field(1, b"main");
        comp.extend(field(
            COMPUTATION_INSTRUCTIONS,
            &inst("all-reduce", &f32_2x3),
        ));
        comp.extend(field(COMPUTATION_INSTRUCTIONS, &inst("all-reduce", &pair)));
        comp.extend(field(COMPUTATION_INSTRUCTIONS, &inst("dot", &f32_2x3)));
        let mut other = field(1, b"sum");
        other.extend(field(COMPUTATION_INSTRUCTIONS, &inst("add", &s8_5)));
        let mut module = field(1, b"module");
        module.extend(field(MODULE_COMPUTATIONS, &other));
        module.extend(field(MODULE_COMPUTATIONS, &comp));
        let c = opcode_counts(&module).unwrap();
        assert_eq!(c["all-reduce"], 2);
        let all_reduce = opcode_stats(&module).unwrap()["all-reduce"];
        assert_eq!(all_reduce.result_bytes, 24 + (24 + 5));
        assert_eq!(c["dot"], 1);
        assert_eq!(c["add"], 1);
        assert!(opcode_counts(&[0x1a, 0x7f]).is_none());

        // The same module in the `hlo_with_config` form.
        let mut wrapped = vec![0x0a];
        prost::encoding::encode_varint(module.len() as u64, &mut wrapped);
        wrapped.extend_from_slice(&module);
        let inner = module_of("hlo_with_config", &wrapped).unwrap();
        assert_eq!(&*inner, &module[..]);
        assert_eq!(opcode_counts(&inner).unwrap(), c);
        assert_eq!(&*module_of("hlo", &module).unwrap(), &module[..]);
        assert!(module_of("mlir", &module).is_none());
    }

    #[test]
    fn reads_what_the_neuron_target_writes() {
        use crate::xla::hlo::{primitive, HloComputationProto, HloInstructionProto, ShapeProto};
        use prost::Message;
        let shape = |element_type, dimensions: &[i64]| ShapeProto {
            element_type,
            dimensions: dimensions.to_vec(),
            ..Default::default()
        };
        let inst = |opcode: &str, shape| HloInstructionProto {
            opcode: opcode.into(),
            shape: Some(shape),
            ..Default::default()
        };
        let module = HloModuleProto {
            computations: vec![HloComputationProto {
                instructions: vec![
                    inst("parameter", shape(primitive::BF16, &[4, 8])),
                    inst("all-gather", shape(primitive::F32, &[16, 8])),
                    inst("all-gather", shape(primitive::S64, &[3])),
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let stats = opcode_stats(&module.encode_to_vec()).unwrap();
        assert_eq!(
            stats["parameter"],
            OpcodeStats {
                count: 1,
                result_bytes: 64
            }
        );
        assert_eq!(
            stats["all-gather"],
            OpcodeStats {
                count: 2,
                result_bytes: 512 + 24
            }
        );
    }
}
