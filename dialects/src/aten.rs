//! How ATen operations are encoded at tpuc's ATen level.
//!
//! One MLIR operation per torch.export graph node:
//!
//! ```mlir
//! %3 = "aten.add.Tensor"(%1, %2) {alpha = 1 : i64, operand_names = ["self", "other"]}
//!        : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add")
//! ```
//!
//! * the op name is the node's target without `torch.ops.` (`aten.add.Tensor`);
//! * tensor arguments are operands; `operand_names` names each one after the schema
//!   argument it fills, list elements as `tensors[0]`, `tensors[1]`, ...;
//! * every other argument is an attribute named after the schema argument: ints are
//!   `i64`, floats `f64`, bools `true/false`, int lists `array<i64: ...>`, float lists
//!   `array<f64: ...>`, dtypes strings such as `"f32"`, `None` is simply absent;
//! * the location is `loc("node_name"("file.py":line:col))`.

/// Attribute holding the schema name of each operand.
pub const OPERAND_NAMES: &str = "operand_names";

/// Prefix of every ATen-level op name.
pub const PREFIX: &str = "aten.";

/// Name of the `i`-th element of a tensor-list argument.
pub fn list_element_name(arg: &str, index: usize) -> String {
    format!("{arg}[{index}]")
}

/// Splits `tensors[3]` into `("tensors", Some(3))`; plain names give `(name, None)`.
pub fn split_element_name(name: &str) -> (&str, Option<usize>) {
    if let Some(open) = name.find('[') {
        if let Some(idx) = name[open + 1..].strip_suffix(']') {
            if let Ok(i) = idx.parse() {
                return (&name[..open], Some(i));
            }
        }
    }
    (name, None)
}
