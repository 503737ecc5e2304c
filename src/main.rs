use clap::{Parser, Subcommand};
use driftgate::embed::{EmbedArgs, run_embed_cli};

// Temporary wiring for `driftgate embed`; the lead moves this into cli.rs on merge.
#[derive(Parser)]
#[command(name = "driftgate", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Embed stdin, one text per line; prints a JSON array with one vector per line.
    Embed(EmbedArgs),
}

#[tokio::main]
async fn main() {
    let Cli { command } = Cli::parse();
    let result = match command {
        Command::Embed(args) => match args.kind() {
            Ok(kind) => run_embed_cli(kind, std::io::stdin().lock()).await,
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(out) => println!("{out}"),
        Err(e) => {
            eprintln!("driftgate: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
