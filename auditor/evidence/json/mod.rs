//! JSON documents: harness metadata, eval results, environment arrays.

pub mod env;
pub mod eval_results;
pub mod metadata;
