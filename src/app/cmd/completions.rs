//! `driftgate completions SHELL` and `driftgate manpage`: generated from the one clap definition,
//! so they cannot drift from `--help`. The release archives carry both (action/package.sh).

use std::io::Write;

use clap::{Args, CommandFactory};

use crate::error::{Error, Result, exit};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn completions(a: CompletionsArgs) -> Result<i32> {
    let mut cmd = super::super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "driftgate", &mut out);
    write_stdout(&out)
}

/// The man page (roff) of `driftgate` and its commands, on stdout: `driftgate manpage >
/// driftgate.1`.
pub fn manpage() -> Result<i32> {
    let mut out = Vec::new();
    clap_mangen::Man::new(super::super::Cli::command())
        .render(&mut out)
        .map_err(|e| Error::Usage(format!("cannot render the man page: {e}")))?;
    write_stdout(&out)
}

fn write_stdout(bytes: &[u8]) -> Result<i32> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| Error::Usage(format!("cannot write to stdout: {e}")))?;
    Ok(exit::PASS)
}
