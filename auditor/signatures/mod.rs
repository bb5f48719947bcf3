//! The signature engine: rule packs (data, `signatures/packs/*.toml`) that
//! recognise patch commands, import-shadowing hooks and architecture
//! overrides in any text, compiled into one keyword automaton (the
//! prefilter) plus a regex per rule that confirms the line. It streams, so
//! `auditor scan` can run it over trees of arbitrary size, and the audit
//! pipeline can run it over the same bytes its parsers read
//! ([`Engine::stream`]).

pub mod describe;
mod engine;
pub mod pack;
pub mod selftest;
mod stream;

pub use engine::Engine;
pub use pack::{PackError, Rule};
pub use stream::{MAX_FINDINGS_PER_RULE, Stream};

use crate::finding::Finding;

/// What scanning one file found.
#[derive(Debug, Clone, Default)]
pub struct FileScan {
    pub findings: Vec<Finding>,
    /// Matches past [`MAX_FINDINGS_PER_RULE`], by rule id: counted, not listed.
    pub omitted: Vec<(String, u64)>,
    /// Why part of the file was not examined (a cut line, a read error), if it was not all examined.
    pub incomplete: Option<String>,
    /// A NUL byte in the first 8 KiB: the file was not examined.
    pub binary: bool,
}
