//! Just enough of XLA's `HloModuleProto` to count what a compiled program does: the
//! opcode of every instruction of every computation (the collectives a partitioned
//! program has, for `tpuc` and the sharding tests).
//!
//! Field numbers (XLA `xla/service/hlo.proto`): `HloModuleProto.computations = 3`,
//! `HloComputationProto.instructions = 2`, `HloInstructionProto.opcode = 2` (a string).
//! Everything else is skipped by wire type.

use std::collections::BTreeMap;

const MODULE_COMPUTATIONS: u64 = 3;
const COMPUTATION_INSTRUCTIONS: u64 = 2;
const INSTRUCTION_OPCODE: u64 = 2;

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

/// The length-delimited fields numbered `field` of the message `bytes`, in order;
/// `None` when the bytes are not a well-formed message.
fn fields(bytes: &[u8], field: u64) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let key = varint(bytes, &mut pos)?;
        let (number, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(bytes, &mut pos)?;
            }
            1 => pos += 8,
            2 => {
                let n = varint(bytes, &mut pos)? as usize;
                let piece = bytes.get(pos..pos.checked_add(n)?)?;
                if number == field {
                    out.push(piece);
                }
                pos += n;
            }
            5 => pos += 4,
            _ => return None,
        }
    }
    (pos == bytes.len()).then_some(out)
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

/// How many instructions of each opcode (`"all-reduce"`, `"dot"`...) the serialized
/// `HloModuleProto` has, over all its computations; `None` when it does not parse.
pub fn opcode_counts(module: &[u8]) -> Option<BTreeMap<String, usize>> {
    let mut counts = BTreeMap::new();
    for computation in fields(module, MODULE_COMPUTATIONS)? {
        for instruction in fields(computation, COMPUTATION_INSTRUCTIONS)? {
            for opcode in fields(instruction, INSTRUCTION_OPCODE)? {
                let name = String::from_utf8_lossy(opcode).into_owned();
                *counts.entry(name).or_insert(0) += 1;
            }
        }
    }
    Some(counts)
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
        let inst = |op: &str| {
            let mut i = field(1, b"name.1");
            i.extend(field(INSTRUCTION_OPCODE, op.as_bytes()));
            i.extend([0x18 << 1, 0x05]); // an unrelated varint field
            i
        };
        let mut comp = field(1, b"main");
        comp.extend(field(COMPUTATION_INSTRUCTIONS, &inst("all-reduce")));
        comp.extend(field(COMPUTATION_INSTRUCTIONS, &inst("dot")));
        let mut other = field(1, b"sum");
        other.extend(field(COMPUTATION_INSTRUCTIONS, &inst("add")));
        let mut module = field(1, b"module");
        module.extend(field(MODULE_COMPUTATIONS, &other));
        module.extend(field(MODULE_COMPUTATIONS, &comp));
        let c = opcode_counts(&module).unwrap();
        assert_eq!(c["all-reduce"], 1);
        assert_eq!(c["dot"], 1);
        assert_eq!(c["add"], 1);
        assert!(opcode_counts(&[0x1a, 0x7f]).is_none());
    }
}
