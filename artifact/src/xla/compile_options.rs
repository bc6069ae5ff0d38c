//! `xla.CompileOptionsProto`: the part tpuc sets, as `prost` messages, and
//! [`CompileOptions`], the options the runtime compiles with.
//!
//! PJRT's `PJRT_Client_Compile` takes the options as a serialized proto. Empty options
//! abort the plugin process (`Check failed: replica_count > 0`), so [`CompileOptions`]
//! always encodes the replica and partition counts, and rejects zero.
//!
//! Field numbers (XLA `xla/pjrt/proto/compile_options.proto` and `xla/xla.proto`):
//!
//! ```text
//! CompileOptionsProto           executable_build_options = 3 (message)
//!                               env_option_overrides = 7 (map<string, OptionOverrideProto>)
//! OptionOverrideProto           bool_field = 2 (in a oneof)
//! ExecutableBuildOptionsProto   num_replicas = 4, num_partitions = 5 (int64)
//!                               use_spmd_partitioning = 6 (bool)
//!                               device_assignment = 9 (DeviceAssignmentProto)
//!                               use_shardy_partitioner = 19 (bool)
//! DeviceAssignmentProto         replica_count = 1, computation_count = 2 (int32)
//!                               computation_devices = 3 (repeated ComputationDevice)
//! ComputationDevice             replica_device_ids = 1 (repeated int64, packed)
//! ```
//!
//! Fields are written in field-number order and a field at its default value (zero,
//! false) is left out, as `prost` (and protobuf's own serializer) does.

use prost::Message;

use crate::error::{ArtifactError, Result};

#[derive(Clone, PartialEq, Message)]
pub struct CompileOptionsProto {
    #[prost(message, optional, tag = "3")]
    pub executable_build_options: Option<ExecutableBuildOptionsProto>,
    /// XLA flags for this compile (what `jax.jit(...).compile(compiler_options=...)`
    /// sends), by name.
    #[prost(btree_map = "string, message", tag = "7")]
    pub env_option_overrides: std::collections::BTreeMap<String, OptionOverrideProto>,
}

/// One flag's value (only booleans are used).
#[derive(Clone, PartialEq, Message)]
pub struct OptionOverrideProto {
    #[prost(bool, optional, tag = "2")]
    pub bool_field: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ExecutableBuildOptionsProto {
    #[prost(int64, tag = "4")]
    pub num_replicas: i64,
    #[prost(int64, tag = "5")]
    pub num_partitions: i64,
    #[prost(bool, tag = "6")]
    pub use_spmd_partitioning: bool,
    #[prost(message, optional, tag = "9")]
    pub device_assignment: Option<DeviceAssignmentProto>,
    #[prost(bool, tag = "19")]
    pub use_shardy_partitioner: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct DeviceAssignmentProto {
    #[prost(int32, tag = "1")]
    pub replica_count: i32,
    #[prost(int32, tag = "2")]
    pub computation_count: i32,
    /// One per computation (partition), listing the device of every replica.
    #[prost(message, repeated, tag = "3")]
    pub computation_devices: Vec<ComputationDevice>,
}

/// `DeviceAssignmentProto.ComputationDevice`.
#[derive(Clone, PartialEq, Message)]
pub struct ComputationDevice {
    #[prost(int64, repeated, tag = "1")]
    pub replica_device_ids: Vec<i64>,
}

/// Compile options for a PJRT compile (`tpuc_runtime::pjrt::Client::compile`).
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
    /// XLA/libtpu flags set for this compile only (`env_option_overrides`), such as
    /// `xla_tpu_enable_ragged_dot_kernel`.
    pub flags: Vec<(String, bool)>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            num_replicas: 1,
            num_partitions: 1,
            use_spmd_partitioning: false,
            use_shardy_partitioner: false,
            device_assignment: None,
            flags: Vec::new(),
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

    /// The options as an `xla.CompileOptionsProto` message, checked: at least one
    /// replica and one partition, a device assignment of that shape with no negative id.
    pub fn to_proto(&self) -> Result<CompileOptionsProto> {
        if self.num_replicas == 0 || self.num_partitions == 0 {
            return Err(ArtifactError::CompileOptions(format!(
                "num_replicas ({}) and num_partitions ({}) must be at least 1",
                self.num_replicas, self.num_partitions
            )));
        }
        let device_assignment = match &self.device_assignment {
            Some(da) => Some(self.device_assignment_proto(da)?),
            None => None,
        };
        Ok(CompileOptionsProto {
            executable_build_options: Some(ExecutableBuildOptionsProto {
                num_replicas: i64::from(self.num_replicas),
                num_partitions: i64::from(self.num_partitions),
                use_spmd_partitioning: self.use_spmd_partitioning,
                device_assignment,
                use_shardy_partitioner: self.use_shardy_partitioner,
            }),
            env_option_overrides: self
                .flags
                .iter()
                .map(|(name, value)| {
                    (
                        name.clone(),
                        OptionOverrideProto {
                            bool_field: Some(*value),
                        },
                    )
                })
                .collect(),
        })
    }

    /// Serializes to an `xla.CompileOptionsProto`. Never returns empty bytes (the
    /// replica and partition counts, at least 1, are always written).
    pub fn encode(&self) -> Result<Vec<u8>> {
        let bytes = self.to_proto()?.encode_to_vec();
        if bytes.is_empty() {
            return Err(ArtifactError::CompileOptions(
                "refusing to send empty compile options".into(),
            ));
        }
        Ok(bytes)
    }

    fn device_assignment_proto(&self, da: &[Vec<i64>]) -> Result<DeviceAssignmentProto> {
        let replicas = self.num_replicas as usize;
        let partitions = self.num_partitions as usize;
        if da.len() != replicas || da.iter().any(|row| row.len() != partitions) {
            return Err(ArtifactError::CompileOptions(format!(
                "device_assignment must be {replicas} row(s) (replicas) of {partitions} id(s) (partitions), got {:?}",
                da
            )));
        }
        if let Some(id) = da.iter().flatten().find(|&&id| id < 0) {
            return Err(ArtifactError::CompileOptions(format!(
                "device_assignment contains a negative device id {id}"
            )));
        }
        Ok(DeviceAssignmentProto {
            replica_count: replicas as i32,
            computation_count: partitions as i32,
            // XLA stores one ComputationDevice per computation (partition), listing the
            // device of every replica.
            computation_devices: (0..partitions)
                .map(|p| ComputationDevice {
                    replica_device_ids: da.iter().map(|row| row[p]).collect(),
                })
                .collect(),
        })
    }
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
        assert!(matches!(o.encode(), Err(ArtifactError::CompileOptions(_))));
        let o = CompileOptions {
            num_partitions: 0,
            ..CompileOptions::default()
        };
        assert!(matches!(o.encode(), Err(ArtifactError::CompileOptions(_))));
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
            flags: Vec::new(),
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

    /// A flag is a map entry of field 7 after the build options: key (1), then the
    /// override (2) holding `bool_field` (2), written even when false.
    #[test]
    fn flags_are_env_option_overrides() {
        let o = CompileOptions {
            flags: vec![("xla_a".into(), true), ("xla_b".into(), false)],
            ..CompileOptions::default()
        };
        let mut expected = vec![0x1a, 0x04, 0x20, 0x01, 0x28, 0x01];
        for (key, value) in [(b"xla_a", 1u8), (b"xla_b", 0u8)] {
            expected.extend_from_slice(&[0x3a, 0x0b, 0x0a, 0x05]);
            expected.extend_from_slice(key);
            expected.extend_from_slice(&[0x12, 0x02, 0x10, value]);
        }
        assert_eq!(o.encode().unwrap(), expected);
    }

    #[test]
    fn device_assignment_shape_is_checked() {
        let o = CompileOptions {
            num_partitions: 2,
            device_assignment: Some(vec![vec![0]]),
            ..CompileOptions::default()
        };
        assert!(matches!(o.encode(), Err(ArtifactError::CompileOptions(_))));
        let o = CompileOptions {
            device_assignment: Some(vec![vec![-1]]),
            ..CompileOptions::default()
        };
        assert!(matches!(o.encode(), Err(ArtifactError::CompileOptions(_))));
    }

    /// The hand-written encoder the runtime used before the `prost` messages, kept to
    /// pin the bytes: they must not change.
    mod legacy {
        use super::super::CompileOptions;

        const WIRE_VARINT: u32 = 0;
        const WIRE_LEN: u32 = 2;

        pub fn encode(o: &CompileOptions) -> Vec<u8> {
            let mut build = Vec::new();
            put_varint_field(&mut build, 4, u64::from(o.num_replicas));
            put_varint_field(&mut build, 5, u64::from(o.num_partitions));
            if o.use_spmd_partitioning {
                put_varint_field(&mut build, 6, 1);
            }
            if let Some(da) = &o.device_assignment {
                let mut out = Vec::new();
                put_varint_field(&mut out, 1, o.num_replicas as u64);
                put_varint_field(&mut out, 2, o.num_partitions as u64);
                for p in 0..o.num_partitions as usize {
                    let mut ids = Vec::new();
                    for row in da {
                        put_varint(&mut ids, row[p] as u64);
                    }
                    let mut device = Vec::new();
                    put_len_field(&mut device, 1, &ids);
                    put_len_field(&mut out, 3, &device);
                }
                put_len_field(&mut build, 9, &out);
            }
            if o.use_shardy_partitioner {
                put_varint_field(&mut build, 19, 1);
            }
            let mut out = Vec::new();
            put_len_field(&mut out, 3, &build);
            out
        }

        pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
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
    }

    #[test]
    fn prost_bytes_are_the_hand_written_encoders() {
        let ids = [0i64, 1, 3, 127, 128, 130, 300, 16_384, 1 << 40];
        let mut checked = 0;
        for replicas in 1..=3u32 {
            for partitions in [1u32, 2, 3, 4, 8, 200] {
                for spmd in [false, true] {
                    for shardy in [false, true] {
                        let assignments = [
                            None,
                            Some(
                                (0..replicas)
                                    .map(|r| {
                                        (0..partitions)
                                            .map(|p| ids[(r * partitions + p) as usize % ids.len()])
                                            .collect()
                                    })
                                    .collect::<Vec<Vec<i64>>>(),
                            ),
                        ];
                        for device_assignment in assignments {
                            let o = CompileOptions {
                                num_replicas: replicas,
                                num_partitions: partitions,
                                use_spmd_partitioning: spmd,
                                use_shardy_partitioner: shardy,
                                device_assignment,
                                flags: Vec::new(),
                            };
                            let bytes = o.encode().unwrap();
                            assert!(!bytes.is_empty());
                            assert_eq!(bytes, legacy::encode(&o), "{o:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 3 * 6 * 2 * 2 * 2);
        // What the runtime compiles with: the default, SPMD, and a mesh's options.
        for o in [
            CompileOptions::default(),
            CompileOptions::spmd(4),
            CompileOptions {
                use_shardy_partitioner: true,
                device_assignment: Some(vec![vec![4, 5, 6, 7]]),
                ..CompileOptions::spmd(4)
            },
        ] {
            assert_eq!(o.encode().unwrap(), legacy::encode(&o));
        }
    }

    #[test]
    fn varints() {
        let mut v = Vec::new();
        legacy::put_varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut v = Vec::new();
        legacy::put_varint(&mut v, u64::MAX);
        assert_eq!(v.len(), 10);
        let mut v = Vec::new();
        prost::encoding::encode_varint(300, &mut v);
        assert_eq!(v, [0xac, 0x02]);
    }
}
