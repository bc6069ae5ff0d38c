//! Printing for the tpuc tools that ends quietly when the reader goes away.
//!
//! Rust's `println!` panics when stdout is a pipe whose reader has exited
//! (`tpuc inspect model.pt2 | head`). Like other Unix tools, tpuc then stops without a
//! word: [`outln!`] and [`out!`] exit with status 0 on a broken pipe (the reader asked
//! for no more), and with status 1 and a message on any other write error (a full disk
//! behind a redirect). [`errln!`] and [`err!`] never fail: a closed stderr loses only
//! diagnostics. SIGPIPE stays ignored (Rust's default), so a PJRT plugin writing to a
//! socket is never killed by it.

use std::io::Write;

/// Writes `args` to stdout (the macros' backend).
pub fn write_stdout(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        write_stderr(format_args!("error: cannot write to stdout: {e}\n"));
        std::process::exit(1);
    }
}

/// Writes `args` to stderr, ignoring failures.
pub fn write_stderr(args: std::fmt::Arguments) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `println!` that ends the process quietly on a closed pipe.
#[macro_export]
macro_rules! outln {
    () => { $crate::output::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that ends the process quietly on a closed pipe.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write_stdout(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! errln {
    () => { $crate::output::write_stderr(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics.
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => { $crate::output::write_stderr(format_args!($($arg)*)) };
}
