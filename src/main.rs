fn main() {
    std::process::exit(driftgate::app::main());
}
