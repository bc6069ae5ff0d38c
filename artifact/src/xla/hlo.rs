//! The subset of XLA's `HloModuleProto` that tpuc writes (the Neuron target's program)
//! and reads (the programs PJRT plugins compile, [`super::opcodes`]), as `prost`
//! messages.
//!
//! Field numbers are those of XLA's `xla/service/hlo.proto` and `xla/xla_data.proto`;
//! only the fields tpuc sets are declared (a decoder skips the rest). Messages and
//! fields keep XLA's names so that the numbers can be checked against the schema.

use prost::Message;

/// `xla.PrimitiveType`.
pub mod primitive {
    pub const PRED: i32 = 1;
    pub const S8: i32 = 2;
    pub const S16: i32 = 3;
    pub const S32: i32 = 4;
    pub const S64: i32 = 5;
    pub const U8: i32 = 6;
    pub const F16: i32 = 10;
    pub const F32: i32 = 11;
    pub const F64: i32 = 12;
    pub const TUPLE: i32 = 13;
    pub const C64: i32 = 15;
    pub const BF16: i32 = 16;
    pub const C128: i32 = 18;
}

#[derive(Clone, PartialEq, Message)]
pub struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub entry_computation_name: String,
    /// Callees before their callers.
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
    #[prost(message, optional, tag = "4")]
    pub host_program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(int64, tag = "6")]
    pub entry_computation_id: i64,
    /// Parameters whose buffers an output may reuse (a stateful program's state).
    #[prost(message, optional, tag = "8")]
    pub input_output_alias: Option<HloInputOutputAliasProto>,
}

/// `HloModuleProtoWithConfig`: the `hlo_with_config` format PJRT plugins return for
/// optimized programs. The module is kept as its bytes (the same wire form as the
/// message), for [`HloModuleProto::decode`].
#[derive(Clone, PartialEq, Message)]
pub struct HloModuleProtoWithConfig {
    #[prost(bytes = "vec", tag = "1")]
    pub hlo_module: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HloInputOutputAliasProto {
    #[prost(message, repeated, tag = "1")]
    pub entries: Vec<AliasEntryProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct AliasEntryProto {
    /// The output's index in the result tuple (empty: the whole result).
    #[prost(int64, repeated, tag = "1")]
    pub output_shape_index: Vec<i64>,
    #[prost(int64, tag = "2")]
    pub parameter_number: i64,
    #[prost(int64, repeated, tag = "3")]
    pub parameter_shape_index: Vec<i64>,
    /// `Kind`: 1 may-alias (the caller decides by donating), 2 must-alias.
    #[prost(int32, tag = "4")]
    pub kind: i32,
}

/// `AliasEntryProto::kind` may-alias.
pub const MAY_ALIAS: i32 = 1;

#[derive(Clone, PartialEq, Message)]
pub struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    /// Operands before their users.
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
    #[prost(message, optional, tag = "4")]
    pub program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(int64, tag = "6")]
    pub root_id: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub opcode: String,
    #[prost(message, optional, tag = "3")]
    pub shape: Option<ShapeProto>,
    #[prost(message, optional, tag = "7")]
    pub metadata: Option<OpMetadata>,
    #[prost(message, optional, tag = "8")]
    pub literal: Option<LiteralProto>,
    /// A fusion's kind (`kLoop`, `kOutput`, `kCustom`...).
    #[prost(string, tag = "11")]
    pub fusion_kind: String,
    #[prost(int64, tag = "9")]
    pub parameter_number: i64,
    #[prost(int64, tag = "13")]
    pub tuple_index: i64,
    #[prost(int64, repeated, tag = "14")]
    pub dimensions: Vec<i64>,
    #[prost(message, optional, tag = "15")]
    pub window: Option<Window>,
    #[prost(message, optional, tag = "16")]
    pub convolution_dimension_numbers: Option<ConvolutionDimensionNumbers>,
    #[prost(message, repeated, tag = "17")]
    pub slice_dimensions: Vec<SliceDimensions>,
    #[prost(message, optional, tag = "21")]
    pub padding_config: Option<PaddingConfig>,
    #[prost(string, tag = "28")]
    pub custom_call_target: String,
    #[prost(message, optional, tag = "30")]
    pub dot_dimension_numbers: Option<DotDimensionNumbers>,
    #[prost(message, optional, tag = "33")]
    pub gather_dimension_numbers: Option<GatherDimensionNumbers>,
    #[prost(int64, repeated, tag = "34")]
    pub gather_slice_sizes: Vec<i64>,
    #[prost(int64, tag = "35")]
    pub id: i64,
    #[prost(int64, repeated, tag = "36")]
    pub operand_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "38")]
    pub called_computation_ids: Vec<i64>,
    #[prost(message, optional, tag = "48")]
    pub scatter_dimension_numbers: Option<ScatterDimensionNumbers>,
    #[prost(int64, tag = "50")]
    pub feature_group_count: i64,
    #[prost(message, optional, tag = "51")]
    pub precision_config: Option<PrecisionConfig>,
    #[prost(int64, tag = "58")]
    pub batch_group_count: i64,
    #[prost(bool, tag = "60")]
    pub is_stable: bool,
    #[prost(string, tag = "63")]
    pub comparison_direction: String,
    #[prost(bool, tag = "67")]
    pub indices_are_sorted: bool,
    #[prost(bool, tag = "69")]
    pub unique_indices: bool,
    #[prost(string, tag = "72")]
    pub comparison_type: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct SliceDimensions {
    #[prost(int64, tag = "1")]
    pub start: i64,
    #[prost(int64, tag = "2")]
    pub limit: i64,
    #[prost(int64, tag = "3")]
    pub stride: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct ShapeProto {
    #[prost(int32, tag = "2")]
    pub element_type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub dimensions: Vec<i64>,
    #[prost(message, repeated, tag = "4")]
    pub tuple_shapes: Vec<ShapeProto>,
    #[prost(message, optional, tag = "5")]
    pub layout: Option<LayoutProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct LayoutProto {
    #[prost(int64, repeated, tag = "1")]
    pub minor_to_major: Vec<i64>,
    /// The memory a value lives in: 0 is the device's main memory (HBM on a TPU);
    /// XLA's memory-space assignment puts values it prefetches in others (`S(1)`).
    #[prost(int64, tag = "8")]
    pub memory_space: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProgramShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub parameters: Vec<ShapeProto>,
    #[prost(message, optional, tag = "2")]
    pub result: Option<ShapeProto>,
    #[prost(string, repeated, tag = "3")]
    pub parameter_names: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct OpMetadata {
    #[prost(string, tag = "1")]
    pub op_type: String,
    #[prost(string, tag = "2")]
    pub op_name: String,
    #[prost(string, tag = "3")]
    pub source_file: String,
    #[prost(int32, tag = "4")]
    pub source_line: i32,
}

/// Array values by element type; 16-bit and byte types are little-endian bytes.
#[derive(Clone, PartialEq, Message)]
pub struct LiteralProto {
    #[prost(message, optional, tag = "1")]
    pub shape: Option<ShapeProto>,
    #[prost(bool, repeated, tag = "2")]
    pub preds: Vec<bool>,
    #[prost(bytes = "vec", tag = "3")]
    pub u8s: Vec<u8>,
    #[prost(int32, repeated, tag = "4")]
    pub s32s: Vec<i32>,
    #[prost(int64, repeated, tag = "5")]
    pub s64s: Vec<i64>,
    #[prost(float, repeated, tag = "8")]
    pub f32s: Vec<f32>,
    #[prost(double, repeated, tag = "9")]
    pub f64s: Vec<f64>,
    #[prost(bytes = "vec", tag = "11")]
    pub f16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "13")]
    pub bf16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "15")]
    pub s8s: Vec<u8>,
    #[prost(bytes = "vec", tag = "17")]
    pub s16s: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub struct WindowDimension {
    #[prost(int64, tag = "1")]
    pub size: i64,
    #[prost(int64, tag = "2")]
    pub stride: i64,
    #[prost(int64, tag = "3")]
    pub padding_low: i64,
    #[prost(int64, tag = "4")]
    pub padding_high: i64,
    #[prost(int64, tag = "5")]
    pub window_dilation: i64,
    #[prost(int64, tag = "6")]
    pub base_dilation: i64,
    #[prost(bool, tag = "7")]
    pub window_reversal: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct Window {
    #[prost(message, repeated, tag = "1")]
    pub dimensions: Vec<WindowDimension>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GatherDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub offset_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub collapsed_slice_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub start_index_map: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub operand_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub start_indices_batching_dims: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ScatterDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub update_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub inserted_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub scatter_dims_to_operand_dims: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub input_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub scatter_indices_batching_dims: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ConvolutionDimensionNumbers {
    #[prost(int64, tag = "3")]
    pub kernel_input_feature_dimension: i64,
    #[prost(int64, tag = "4")]
    pub kernel_output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "6")]
    pub kernel_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "7")]
    pub input_batch_dimension: i64,
    #[prost(int64, tag = "8")]
    pub input_feature_dimension: i64,
    #[prost(int64, tag = "9")]
    pub output_batch_dimension: i64,
    #[prost(int64, tag = "10")]
    pub output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "11")]
    pub input_spatial_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "12")]
    pub output_spatial_dimensions: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DotDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub lhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub rhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub lhs_batch_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "4")]
    pub rhs_batch_dimensions: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PaddingConfigDimension {
    #[prost(int64, tag = "1")]
    pub edge_padding_low: i64,
    #[prost(int64, tag = "2")]
    pub edge_padding_high: i64,
    #[prost(int64, tag = "3")]
    pub interior_padding: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct PaddingConfig {
    #[prost(message, repeated, tag = "1")]
    pub dimensions: Vec<PaddingConfigDimension>,
}

/// `operand_precision`: `xla.PrecisionConfig.Precision` (DEFAULT 0, HIGH 1, HIGHEST 2).
#[derive(Clone, PartialEq, Message)]
pub struct PrecisionConfig {
    #[prost(int32, repeated, tag = "1")]
    pub operand_precision: Vec<i32>,
}
