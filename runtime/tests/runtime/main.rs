//! Integration tests of the runtime: PJRT through a real plugin, tensor files, sessions.
//!
//! PJRT tests need the CPU plugin (`make setup`, or `scripts/setup_pjrt_cpu.sh`). They
//! are skipped, with a message, only when `TPUC_PJRT_PLUGIN` is unset and discovery
//! finds nothing; a plugin that is named but fails to load fails the tests.
//!
//! One test binary (`cargo test -p tpuc-runtime --test runtime`), a module per
//! feature; `common` holds the shared helpers. The deviceless TPU tests (`tpu`) need
//! libtpu and say SKIPPED without it.

mod cache;
mod common;
mod discover;
mod dynamic;
mod load;
mod npy;
mod pjrt;
mod run;
mod safetensors;
mod sharded;
mod state;
mod tpu;
