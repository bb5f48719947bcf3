//! Finding and reading inputs: run-bundle directories, `.zip` and `.tar.gz`
//! archives (read in place, never extracted), every file accounted for.
//! Grouping the files into jobs comes after the evidence parsers
//! ([`crate::jobs`]).

mod ahead;
mod hashing;
pub mod kind;
pub mod layout;
pub mod limits;
mod read;
mod zip_count;

pub use limits::Limits;
pub use read::{BundleError, read_bundle, read_bundle_with, read_git_tree};

use serde::Serialize;
use std::any::Any;
use std::io::{self, Read};

/// What happened to one file of a bundle. Every file ends in exactly one state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "kebab-case")]
pub enum FileStatus {
    /// Read whole and examined.
    Read,
    /// Read, but part of it could not be examined (the reason says which part).
    Partial(String),
    /// Deliberately not examined: it carries no launch evidence (e.g. metrics CSV).
    Skipped(String),
    /// Could not be examined (over a limit, corrupt, unreadable).
    NotExamined(String),
}

impl FileStatus {
    /// Whether this state leaves part of the input unexamined.
    pub fn is_incomplete(&self) -> bool {
        matches!(self, FileStatus::Partial(_) | FileStatus::NotExamined(_))
    }
}

/// One file of a bundle and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRecord {
    /// Path inside the bundle, `/`-separated; members of nested archives
    /// are written `outer.tar.gz/inner/path`.
    pub path: String,
    /// Bytes read (uncompressed), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// SHA-256 of the whole content, when it was read to the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(flatten)]
    pub status: FileStatus,
}

/// What a visitor made of a member it was handed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    Read,
    Partial(String),
    Skipped(String),
}

/// Receives every regular file of a bundle as a stream, in path order for
/// directories and archive order for archives.
pub trait MemberVisitor {
    fn visit(&mut self, path: &str, reader: &mut dyn Read) -> io::Result<Disposition>;

    /// The visitor's reading of one member as a function of that member
    /// alone, so that the walk may read several files of a directory at
    /// once (on other threads, ahead of the walk). What it returns is handed
    /// to [`MemberVisitor::accept`] in walk order, so the result is the one
    /// [`MemberVisitor::visit`] would give. `None`: one member at a time.
    fn examiner(&self) -> Option<&dyn Examine> {
        None
    }

    /// Take what [`Examine::examine`] made of the member being walked.
    fn accept(&mut self, _examined: Examined) {}
}

/// What an [`Examine`] made of one member, for its visitor's `accept`.
pub type Examined = Box<dyn Any + Send>;

/// The part of a visitor that reads a member without touching anything
/// shared, so that members can be read on several threads.
pub trait Examine: Sync {
    fn examine(&self, path: &str, reader: &mut dyn Read) -> (io::Result<Disposition>, Examined);
}

/// A bundle after reading: every file accounted for, and the bundle-level
/// problems (an archive that ended early, a limit that stopped the walk).
#[derive(Debug, Clone, Serialize)]
pub struct Bundle {
    /// The path as the user gave it.
    pub path: String,
    /// SHA-256 of the archive file, or of the sorted `sha256  path` manifest
    /// of a directory's files; absent when contents were not hashed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    pub files: Vec<FileRecord>,
    /// Parts of the input that could not be examined, beyond single files.
    pub not_examined: Vec<String>,
}

impl Bundle {
    /// Whether anything in this bundle was left unexamined.
    pub fn is_incomplete(&self) -> bool {
        !self.not_examined.is_empty() || self.files.iter().any(|f| f.status.is_incomplete())
    }
}

/// A member's path in the bundle: `name` under `prefix` (an archive or
/// directory path), without a leading `./` or `/`.
pub(crate) fn join(prefix: &str, name: &str) -> String {
    let name = name.trim_start_matches("./").trim_start_matches('/');
    if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") }
}
