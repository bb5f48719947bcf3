//! Image forensics: what an image holds, judged. Layers are walked into
//! file indexes (cached, each blob read once), merged with OCI semantics,
//! compared with an upstream image or checked against the installed
//! packages' `RECORD`s, and turned into findings and reports.

pub(crate) mod cache;
pub(crate) mod classify;
pub(crate) mod configdiff;
pub(crate) mod diff;
mod diff_verify;
pub(crate) mod dist;
pub(crate) mod index;
pub(crate) mod indexer;
pub mod inspect;
pub mod integrity;
pub(crate) mod layerfile;
pub mod limits;
pub(crate) mod links;
pub(crate) mod noise;
pub(crate) mod paths;
pub(crate) mod record;
pub(crate) mod tarstream;
pub(crate) mod textdiff;
pub(crate) mod walk;

pub use diff_verify::*;
