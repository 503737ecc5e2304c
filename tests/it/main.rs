//! The hermetic test suite, one binary: no server, no key, no network (loopback fakes only).
//! The suites against real components (MCP servers from npm, an embedding server, llama.cpp) are
//! the separate `tests/*.rs` binaries, each skipping itself unless its environment is set.

mod support;

mod action_install;
mod batch;
mod canary;
mod canary_simulation;
mod check_args;
mod check_faults;
mod check_semantic;
mod cli;
mod cli_docs;
mod cmd;
mod corpus;
mod embed_cli;
mod embed_corpus;
mod embed_openai;
mod embed_reference;
mod evidence;
mod fix;
mod fuzz_found;
mod gate_simulation;
mod github_action;
mod github_comment;
mod governance;
mod hostile;
mod law;
mod layers;
mod lint;
mod lint_formats;
mod lint_llm;
mod lint_rules;
mod llm_draft;
mod meaning_shifts;
mod prompt_cache;
mod renderers;
mod report_formats;
mod report_schema;
mod router_faults;
mod router_quality;
mod scan;
mod shard;
mod stress_cli;
mod suite_import;
mod suite_schema;
mod targeted;
