//! The `basin` binary: everything lives in the library so tests can reach it.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    basin::run()
}
