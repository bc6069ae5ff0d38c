//! How much PJRT plugins log to stderr.
//!
//! XLA's plugins (CPU, CUDA, TPU) log through TSL/absl, which reads
//! `TF_CPP_MIN_LOG_LEVEL` (0 info, 1 warning, 2 error, 3 fatal only) the first time
//! they log. Unset, every `tpuc run` shows lines such as `WARNING: All log messages
//! before absl::InitializeLog() is called are written to STDERR` and
//! `I0000 ... cpu_device_count set via create_options: 1`: noise, since every plugin
//! error that matters comes back through the PJRT C API and tpuc reports it itself.
//!
//! Call [`configure`] at the start of `main`, before the first plugin is loaded and
//! while the process has one thread (the environment is process-wide). A level the
//! user set in the environment is never overridden.
//!
//! Why only once: `std::env::set_var` is a data race with any other thread reading the
//! environment through C's `getenv` (plugins do, from their own threads; in edition
//! 2024 `set_var` is `unsafe` for this reason). So the variable is written at most
//! once per process, under a `Once`, and later calls (a test calling it from one of
//! several threads, a second call with another `verbose`) only report the level
//! already in effect without touching the environment.

use std::sync::OnceLock;

/// The environment variable XLA's logging reads.
pub const LOG_LEVEL_VAR: &str = "TF_CPP_MIN_LOG_LEVEL";

/// `verbose = false`: plugins print only fatal messages (the last words before an
/// abort). `verbose = true`: everything, from info up. Either way a value the user
/// already set wins, and only the first call of the process decides (later ones
/// write nothing). Returns the level in effect.
pub fn configure(verbose: bool) -> String {
    static LEVEL: OnceLock<String> = OnceLock::new();
    LEVEL
        .get_or_init(|| {
            if let Ok(user) = std::env::var(LOG_LEVEL_VAR) {
                return user;
            }
            let level = if verbose { "0" } else { "3" };
            // The caller guarantees no other thread reads the environment yet (see
            // above); this is the only write, once per process.
            std::env::set_var(LOG_LEVEL_VAR, level);
            level.to_string()
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pjrt::plugin_env_test_child as in_child;

    /// In a child process: configures twice (quiet, then verbose) and prints the
    /// levels returned and the variable's value.
    #[test]
    fn child_configure() {
        if std::env::var_os("TPUC_ENV_TEST_CHILD").is_none() {
            return;
        }
        let first = configure(false);
        let second = configure(true);
        let value = std::env::var(LOG_LEVEL_VAR).unwrap_or_default();
        println!("RESULT first={first} second={second} value={value}");
    }

    #[test]
    fn log_level_is_set_once_and_a_users_value_wins() {
        let name = "plugin_logging::tests::child_configure";
        let unset = in_child(name, &[], &[LOG_LEVEL_VAR]);
        assert!(unset.contains("RESULT first=3 second=3 value=3"), "{unset}");
        let user = in_child(name, &[(LOG_LEVEL_VAR, "1")], &[]);
        assert!(user.contains("RESULT first=1 second=1 value=1"), "{user}");
    }
}
