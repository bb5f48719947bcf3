//! Container images, in two halves. [`source`] obtains an image — from a
//! registry, a Docker Engine, an OCI layout or archive, a `docker save`
//! tarball — as one verified [`Image`]; [`forensics`] judges what one holds
//! (its layers walked into file indexes, compared with an upstream or
//! checked against the packages' own `RECORD`s) and reports findings.
//! They are split because they change for different reasons: a new
//! transport touches only `source/`, a new check only `forensics/`, and
//! `source/` emits no findings.

pub mod forensics;
pub mod source;

pub use forensics::inspect::{Inspection, inspect, render_text};
pub use source::*;
