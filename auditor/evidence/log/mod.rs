//! Program output: engine startup records and their fragments, and
//! environment listings (YAML a log shows is read by [`crate::evidence::yaml::shown`]).

pub mod env_listing;
pub mod fragment;
pub mod startup;
