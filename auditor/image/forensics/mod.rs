//! Image forensics: what an image holds, judged. Each layer's tar is walked
//! once into a file index kept in a cache, the layers are merged with OCI
//! semantics into the filesystem a runtime would see, and that is compared
//! with an upstream image (`image diff`) or checked against the installed
//! packages' own `RECORD`s (`image verify`); `image inspect` reports what
//! an image is and whether its blobs hold. Everything here ends in
//! findings and reports.
//!
//! Kept apart from the image sources (`super::source`), which only obtain
//! verified bytes: what is judged, and how layers are bounded, cached and
//! indexed, changes without touching any transport. Only the commands'
//! entry points, their options and the layer limits are public.

mod cache;
mod classify;
mod config_diff;
mod content;
mod diff_verify;
pub(crate) mod dist;
mod file_index;
mod index_build;
mod inspect;
mod integrity;
mod layerfile;

mod links;
mod node;
pub(crate) mod noise;
mod paths;
mod pyc;
mod record;
mod severity;
mod side;
mod sys_path;
mod tree_diff;
mod unified_diff;
mod walk;

pub use diff_verify::{DEFAULT_CACHE_MAX_BYTES, Options, default_cache_dir, diff, verify};
pub use index_build::LayerCounts;
pub use inspect::{Inspection, inspect, render_text};
pub use integrity::RULES as INTEGRITY_RULES;
