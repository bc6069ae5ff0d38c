//! A hand-written protobuf encoder for the part of `xla.CompileOptionsProto` tpuc sets.
//!
//! PJRT's `PJRT_Client_Compile` takes the options as a serialized proto. Empty options
//! abort the plugin process (`Check failed: replica_count > 0`), so [`CompileOptions`]
//! always encodes the replica and partition counts, and rejects zero.
//!
//! Field numbers (XLA `xla/pjrt/proto/compile_options.proto` and `xla/xla.proto`):
//!
//! ```text
//! CompileOptionsProto           executable_build_options = 3 (message)
//! ExecutableBuildOptionsProto   num_replicas = 4, num_partitions = 5 (int64)
//!                               use_spmd_partitioning = 6 (bool)
//!                               device_assignment = 9 (DeviceAssignmentProto)
//!                               use_shardy_partitioner = 19 (bool)
//! DeviceAssignmentProto         replica_count = 1, computation_count = 2 (int32)
//!                               computation_devices = 3 (repeated ComputationDevice)
//! ComputationDevice             replica_device_ids = 1 (repeated int64, packed)
//! ```

use crate::error::{Result, RuntimeError};

const COMPILE_OPTIONS_EXECUTABLE_BUILD_OPTIONS: u32 = 3;
const BUILD_NUM_REPLICAS: u32 = 4;
const BUILD_NUM_PARTITIONS: u32 = 5;
const BUILD_USE_SPMD_PARTITIONING: u32 = 6;
const BUILD_DEVICE_ASSIGNMENT: u32 = 9;
const BUILD_USE_SHARDY_PARTITIONER: u32 = 19;
const DA_REPLICA_COUNT: u32 = 1;
const DA_COMPUTATION_COUNT: u32 = 2;
const DA_COMPUTATION_DEVICES: u32 = 3;
const CD_REPLICA_DEVICE_IDS: u32 = 1;

const WIRE_VARINT: u32 = 0;
const WIRE_LEN: u32 = 2;

/// Compile options for [`crate::pjrt::Client::compile`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Number of replicas (data-parallel copies); at least 1.
    pub num_replicas: u32,
    /// Number of partitions (SPMD shards); at least 1.
    pub num_partitions: u32,
    /// Partition the program with XLA's SPMD partitioner (GSPMD `mhlo.sharding`).
    pub use_spmd_partitioning: bool,
    /// Use Shardy (`sdy.*` shardings). Without it Shardy programs compile but run
    /// replicated.
    pub use_shardy_partitioner: bool,
    /// Device ids indexed `[replica][partition]` (`num_replicas` rows of
    /// `num_partitions` ids). `None` lets the plugin choose.
    pub device_assignment: Option<Vec<Vec<i64>>>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            num_replicas: 1,
            num_partitions: 1,
            use_spmd_partitioning: false,
            use_shardy_partitioner: false,
            device_assignment: None,
        }
    }
}

impl CompileOptions {
    /// Options for an SPMD program over `n` partitions (GSPMD shardings).
    pub fn spmd(n: u32) -> CompileOptions {
        CompileOptions {
            num_partitions: n,
            use_spmd_partitioning: true,
            ..CompileOptions::default()
        }
    }

    /// Serializes to an `xla.CompileOptionsProto`. Never returns empty bytes.
    pub fn encode(&self) -> Result<Vec<u8>> {
        if self.num_replicas == 0 || self.num_partitions == 0 {
            return Err(RuntimeError::CompileOptions(format!(
                "num_replicas ({}) and num_partitions ({}) must be at least 1",
                self.num_replicas, self.num_partitions
            )));
        }
        let mut build = Vec::new();
        put_varint_field(&mut build, BUILD_NUM_REPLICAS, u64::from(self.num_replicas));
        put_varint_field(
            &mut build,
            BUILD_NUM_PARTITIONS,
            u64::from(self.num_partitions),
        );
        if self.use_spmd_partitioning {
            put_varint_field(&mut build, BUILD_USE_SPMD_PARTITIONING, 1);
        }
        if let Some(da) = &self.device_assignment {
            let encoded = self.encode_device_assignment(da)?;
            put_len_field(&mut build, BUILD_DEVICE_ASSIGNMENT, &encoded);
        }
        if self.use_shardy_partitioner {
            put_varint_field(&mut build, BUILD_USE_SHARDY_PARTITIONER, 1);
        }
        let mut out = Vec::new();
        put_len_field(&mut out, COMPILE_OPTIONS_EXECUTABLE_BUILD_OPTIONS, &build);
        Ok(out)
    }

    fn encode_device_assignment(&self, da: &[Vec<i64>]) -> Result<Vec<u8>> {
        let replicas = self.num_replicas as usize;
        let partitions = self.num_partitions as usize;
        if da.len() != replicas || da.iter().any(|row| row.len() != partitions) {
            return Err(RuntimeError::CompileOptions(format!(
                "device_assignment must be {replicas} row(s) (replicas) of {partitions} id(s) (partitions), got {:?}",
                da
            )));
        }
        if let Some(id) = da.iter().flatten().find(|&&id| id < 0) {
            return Err(RuntimeError::CompileOptions(format!(
                "device_assignment contains a negative device id {id}"
            )));
        }
        let mut out = Vec::new();
        put_varint_field(&mut out, DA_REPLICA_COUNT, replicas as u64);
        put_varint_field(&mut out, DA_COMPUTATION_COUNT, partitions as u64);
        // XLA stores one ComputationDevice per computation (partition), listing the
        // device of every replica.
        for p in 0..partitions {
            let mut ids = Vec::new();
            for row in da {
                put_varint(&mut ids, row[p] as u64);
            }
            let mut device = Vec::new();
            put_len_field(&mut device, CD_REPLICA_DEVICE_IDS, &ids);
            put_len_field(&mut out, DA_COMPUTATION_DEVICES, &device);
        }
        Ok(out)
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    put_varint(out, u64::from((field << 3) | wire));
}

fn put_varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(out, field, WIRE_VARINT);
    put_varint(out, v);
}

fn put_len_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_tag(out, field, WIRE_LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_encodes_to_the_known_minimal_bytes() {
        assert_eq!(
            CompileOptions::default().encode().unwrap(),
            [0x1a, 0x04, 0x20, 0x01, 0x28, 0x01]
        );
    }

    #[test]
    fn zero_replicas_or_partitions_are_rejected() {
        let o = CompileOptions {
            num_replicas: 0,
            ..CompileOptions::default()
        };
        assert!(matches!(o.encode(), Err(RuntimeError::CompileOptions(_))));
        let o = CompileOptions {
            num_partitions: 0,
            ..CompileOptions::default()
        };
        assert!(matches!(o.encode(), Err(RuntimeError::CompileOptions(_))));
    }

    #[test]
    fn spmd_and_shardy_flags() {
        let o = CompileOptions {
            use_shardy_partitioner: true,
            ..CompileOptions::spmd(4)
        };
        // build options: 20 01 | 28 04 | 30 01 | 98 01 01 (field 19 needs a 2-byte tag)
        assert_eq!(
            o.encode().unwrap(),
            [0x1a, 0x09, 0x20, 0x01, 0x28, 0x04, 0x30, 0x01, 0x98, 0x01, 0x01]
        );
    }

    #[test]
    fn device_assignment_is_encoded_per_partition() {
        let o = CompileOptions {
            num_replicas: 1,
            num_partitions: 2,
            use_spmd_partitioning: true,
            use_shardy_partitioner: false,
            device_assignment: Some(vec![vec![3, 130]]),
        };
        let da = [
            0x08, 0x01, // replica_count 1
            0x10, 0x02, // computation_count 2
            0x1a, 0x03, 0x0a, 0x01, 0x03, // computation 0: [3]
            0x1a, 0x04, 0x0a, 0x02, 0x82, 0x01, // computation 1: [130]
        ];
        let mut build = vec![0x20, 0x01, 0x28, 0x02, 0x30, 0x01, 0x4a, da.len() as u8];
        build.extend_from_slice(&da);
        let mut expected = vec![0x1a, build.len() as u8];
        expected.extend_from_slice(&build);
        assert_eq!(o.encode().unwrap(), expected);
    }

    #[test]
    fn device_assignment_shape_is_checked() {
        let o = CompileOptions {
            num_partitions: 2,
            device_assignment: Some(vec![vec![0]]),
            ..CompileOptions::default()
        };
        assert!(matches!(o.encode(), Err(RuntimeError::CompileOptions(_))));
        let o = CompileOptions {
            device_assignment: Some(vec![vec![-1]]),
            ..CompileOptions::default()
        };
        assert!(matches!(o.encode(), Err(RuntimeError::CompileOptions(_))));
    }

    #[test]
    fn varints() {
        let mut v = Vec::new();
        put_varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut v = Vec::new();
        put_varint(&mut v, u64::MAX);
        assert_eq!(v.len(), 10);
    }
}
