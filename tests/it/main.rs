//! Every integration test, in one binary. Each file directly under `tests/`
//! is a crate of its own that cargo links against the library and all of its
//! dependencies (tokio, reqwest, bollard, rustls, ...); sixteen such binaries
//! spent most of an edit-and-test cycle linking. As modules of one crate they
//! link once. Run one former file with `cargo test --test it gate::`.

mod common;

mod action;
mod adversarial;
mod arg_shapes;
mod cli;
mod engine_bundles;
mod env_shapes;
mod evidence_cli;
mod evidence_messy;
mod forbidden_env;
mod gate;
mod history;
mod honest;
mod hostile_bundles;
mod hostile_layers;
mod html;
mod image_diff_changes;
mod image_forensics;
mod image_sources;
mod log_shapes;
mod module_graph;
mod oracle;
mod oracle_interp;
mod policy_checks;
mod python_imports;
mod scan_cli;
mod script_patches;
mod sim_checks;
mod static_recipes;
mod tar_readers;
