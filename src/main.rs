use clap::Parser;

use driftgate::cli::{Cli, run};
use driftgate::error::exit;

fn main() {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(exit::INCOMPLETE);
        }
    };
    let code = match rt.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    };
    // Do not wait for lingering child-process reapers or HTTP pools.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    std::process::exit(code);
}
