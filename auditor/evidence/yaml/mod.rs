//! YAML documents read through one node layer: environment sections,
//! srt-slurm recipes, master configs, compose `environment:` blocks.

pub mod compose;
pub mod env;
pub mod master;
pub mod nodes;
pub mod recipe;
pub mod runners;
pub mod shown;
pub mod workflow;
