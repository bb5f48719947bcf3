//! Container images, in two halves. `source/` obtains an image — from a
//! registry, a Docker Engine, an OCI layout or archive, a `docker save`
//! tarball — as one [`Image`] whose blobs are verified as they are read;
//! [`forensics`] judges what an image holds (its layers walked into file
//! indexes, compared with an upstream image or checked against the
//! installed packages' own `RECORD`s) and reports findings.
//!
//! Split because the halves change for different reasons and depend one
//! way: forensics reads images only through the API re-exported here, and
//! `source/` emits no findings. The public surface is this file's
//! re-exports and [`forensics`]; everything else is private to `image`.

// A `pub` item below this module must be reachable from outside the
// crate (main.rs, tests); the rest is `pub(crate)` or narrower.
#![warn(unreachable_pub)]

pub mod forensics;
pub mod limits;
mod source;

pub use forensics::{Inspection, inspect, render_text};
#[doc(hidden)]
pub use source::fuzz_documents;
pub(crate) use source::short;
pub use source::{
    Change, ChangeKind, History, Image, ImageConfig, ImageError, ImageRef, LayerInfo, NotAPlatform, OpenOptions, Platform, RawManifest, RegistryRef,
    RetryPolicy, Tamper, TamperKind, Transport, changes_text, container_changes, open, tamper_of,
};
