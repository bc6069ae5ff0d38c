//! How much PJRT plugins log to stderr.
//!
//! XLA's plugins (CPU, CUDA, TPU) log through TSL/absl, which reads
//! `TF_CPP_MIN_LOG_LEVEL` (0 info, 1 warning, 2 error, 3 fatal only) the first time
//! they log. Unset, every `tpuc run` shows lines such as `WARNING: All log messages
//! before absl::InitializeLog() is called are written to STDERR` and
//! `I0000 ... cpu_device_count set via create_options: 1`: noise, since every plugin
//! error that matters comes back through the PJRT C API and tpuc reports it itself.
//!
//! Call [`configure`] before the first plugin is loaded and while the process has one
//! thread (the environment is process-wide). A level the user set in the environment
//! is never overridden.

/// The environment variable XLA's logging reads.
pub const LOG_LEVEL_VAR: &str = "TF_CPP_MIN_LOG_LEVEL";

/// `verbose = false`: plugins print only fatal messages (the last words before an
/// abort). `verbose = true`: everything, from info up. Either way a value the user
/// already set wins. Returns the level in effect.
pub fn configure(verbose: bool) -> String {
    if let Ok(user) = std::env::var(LOG_LEVEL_VAR) {
        return user;
    }
    let level = if verbose { "0" } else { "3" };
    // The caller guarantees no other thread reads the environment yet (see above).
    std::env::set_var(LOG_LEVEL_VAR, level);
    level.to_string()
}
