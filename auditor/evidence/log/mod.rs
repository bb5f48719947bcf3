//! Program output: engine startup records and their fragments, YAML a log
//! shows, and environment listings.

pub mod env_listing;
pub mod fragment;
pub mod shown_yaml;
pub mod startup;
