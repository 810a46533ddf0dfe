//! `acc`: the coordination CLI. All logic lives in the library.

fn main() {
    std::process::exit(acc_cli::main_with_args(std::env::args_os()));
}
