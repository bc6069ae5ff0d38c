//! Just enough of XLA's `HloModuleProto` to count what a compiled program does: the
//! opcode and result size of every instruction of every computation (the collectives a
//! partitioned program has, and how many bytes each moves, for `tpuc` and the sharding
//! tests).
//!
//! Field numbers (XLA `xla/service/hlo.proto`, `xla/xla_data.proto`):
//! `HloModuleProto.computations = 3`, `HloComputationProto.instructions = 2`,
//! `HloInstructionProto.opcode = 2` (a string), `HloInstructionProto.shape = 3`;
//! `ShapeProto.element_type = 2` (a `PrimitiveType`), `dimensions = 3` (int64, packed or
//! not), `tuple_shapes = 4`. Everything else is skipped by wire type.

use std::collections::BTreeMap;

const MODULE_COMPUTATIONS: u64 = 3;
const COMPUTATION_INSTRUCTIONS: u64 = 2;
const INSTRUCTION_OPCODE: u64 = 2;
const INSTRUCTION_SHAPE: u64 = 3;
const SHAPE_ELEMENT_TYPE: u64 = 2;
const SHAPE_DIMENSIONS: u64 = 3;
const SHAPE_TUPLE_SHAPES: u64 = 4;

fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// One field of a protobuf message: a varint, or length-delimited bytes (fixed-width
/// fields are skipped).
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// The fields of the message `bytes`, as (number, value), in order; `None` when the
/// bytes are not a well-formed message.
fn walk(bytes: &[u8]) -> Option<Vec<(u64, Field<'_>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let key = varint(bytes, &mut pos)?;
        let (number, wire) = (key >> 3, key & 7);
        match wire {
            0 => out.push((number, Field::Varint(varint(bytes, &mut pos)?))),
            1 => pos += 8,
            2 => {
                let n = varint(bytes, &mut pos)? as usize;
                let piece = bytes.get(pos..pos.checked_add(n)?)?;
                out.push((number, Field::Bytes(piece)));
                pos += n;
            }
            5 => pos += 4,
            _ => return None,
        }
    }
    (pos == bytes.len()).then_some(out)
}

/// The length-delimited fields numbered `field` of the message `bytes`, in order;
/// `None` when the bytes are not a well-formed message.
fn fields(bytes: &[u8], field: u64) -> Option<Vec<&[u8]>> {
    Some(
        walk(bytes)?
            .into_iter()
            .filter_map(|(n, f)| match f {
                Field::Bytes(b) if n == field => Some(b),
                _ => None,
            })
            .collect(),
    )
}

/// Bytes per element of an XLA `PrimitiveType` (sub-byte types count as one byte;
/// tokens, tuples and unknown types as none).
fn element_bytes(primitive_type: u64) -> u64 {
    match primitive_type {
        1 | 2 | 6 | 19 | 20 | 21 | 22 | 26 | 27 => 1, // PRED, S8, U8, F8 kinds, S4/U4, S2/U2
        3 | 7 | 10 | 16 => 2,                         // S16, U16, F16, BF16
        4 | 8 | 11 => 4,                              // S32, U32, F32
        5 | 9 | 12 | 15 => 8,                         // S64, U64, F64, C64
        18 => 16,                                     // C128
        _ => 0,
    }
}

/// The bytes of a `ShapeProto`: an array's elements, a tuple's leaves summed.
fn shape_bytes(shape: &[u8]) -> Option<u64> {
    let mut element = 0u64;
    let mut elements = 1u64;
    let mut leaves = 0u64;
    let mut tuple = false;
    for (n, f) in walk(shape)? {
        match (n, f) {
            (SHAPE_ELEMENT_TYPE, Field::Varint(t)) => element = element_bytes(t),
            (SHAPE_DIMENSIONS, Field::Varint(d)) => elements = elements.saturating_mul(d),
            (SHAPE_DIMENSIONS, Field::Bytes(packed)) => {
                let mut pos = 0;
                while pos < packed.len() {
                    elements = elements.saturating_mul(varint(packed, &mut pos)?);
                }
            }
            (SHAPE_TUPLE_SHAPES, Field::Bytes(leaf)) => {
                tuple = true;
                leaves += shape_bytes(leaf)?;
            }
            _ => {}
        }
    }
    Some(if tuple {
        leaves
    } else {
        element.saturating_mul(elements)
    })
}

/// `HloModuleProtoWithConfig.hlo_module = 1`: the module inside the `hlo_with_config`
/// format PJRT plugins return for optimized programs.
const WITH_CONFIG_MODULE: u64 = 1;

/// The `HloModuleProto` of a program in PJRT `format` (`"hlo"` or `"hlo_with_config"`).
pub fn module_of<'a>(format: &str, code: &'a [u8]) -> Option<&'a [u8]> {
    match format {
        "hlo" => Some(code),
        "hlo_with_config" => fields(code, WITH_CONFIG_MODULE)?.into_iter().next(),
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
    let mut stats: BTreeMap<String, OpcodeStats> = BTreeMap::new();
    for computation in fields(module, MODULE_COMPUTATIONS)? {
        for instruction in fields(computation, COMPUTATION_INSTRUCTIONS)? {
            let (mut opcode, mut bytes) = (None, 0u64);
            for (n, f) in walk(instruction)? {
                match (n, f) {
                    (INSTRUCTION_OPCODE, Field::Bytes(b)) => {
                        opcode = Some(String::from_utf8_lossy(b).into_owned())
                    }
                    (INSTRUCTION_SHAPE, Field::Bytes(b)) => bytes = shape_bytes(b)?,
                    _ => {}
                }
            }
            if let Some(name) = opcode {
                let e = stats.entry(name).or_default();
                e.count += 1;
                e.result_bytes += bytes;
            }
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
    }
}
