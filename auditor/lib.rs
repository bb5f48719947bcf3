//! auditor: a forensic auditor for LLM-serving benchmark submissions.
//!
//! Data flows one way: inputs ([`bundle`]) -> parsed [`evidence`] with
//! provenance -> [`jobs`] -> per-job [`facts`] -> [`checks`] -> [`finding`]s
//! -> [`report`].

pub mod audit;
pub mod baseline;
pub mod bundle;
pub mod changes;
pub mod checks;
pub mod evidence;
pub mod facts;
pub mod finding;
pub mod git;
pub mod image;
pub mod jobs;
pub mod links;
pub mod policy;
pub mod provenance;
pub mod reference;
pub mod report;
pub mod rules;
pub mod scan;
pub mod signatures;
pub mod tarstream;
