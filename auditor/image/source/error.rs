//! Errors of the image sources, as values. Every variant names the image
//! reference it concerns, so a message is useful without its caller's
//! context. A blob that does not match its digest or size is a [`Tamper`]:
//! evidence, not a crash, and never silently accepted.
//!
//! Layer streams are `std::io::Read`, whose errors are `io::Error`; both
//! [`Tamper`] and [`ImageError`] travel inside one and come back out through
//! [`ImageError::from_io`] (or [`tamper_of`] for code that only has the
//! `io::Error`, such as a tar walker).

use std::fmt;
use std::io;
use thiserror::Error;

/// What did not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TamperKind {
    /// The bytes hash to another digest than the one that names them.
    DigestMismatch,
    /// More or fewer bytes than the descriptor (or the server) announced.
    SizeMismatch,
}

impl TamperKind {
    /// The rule id of the `image-integrity` finding this becomes.
    pub(crate) fn rule(self) -> &'static str {
        match self {
            TamperKind::DigestMismatch => "image-integrity/digest-mismatch",
            TamperKind::SizeMismatch => "image-integrity/size-mismatch",
        }
    }
}

/// A blob (manifest, config or layer) whose bytes are not the ones its
/// digest and size promise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tamper {
    pub kind: TamperKind,
    /// Which blob: `manifest`, `config`, `layer 2`.
    pub what: String,
    /// The digest that names the blob (what it should hash to).
    pub digest: String,
    /// The size the descriptor promised, when one did.
    pub expected_size: Option<u64>,
    /// The digest of the bytes received, when they were read to the end.
    pub actual_digest: Option<String>,
    /// Bytes received (for an overrun: the count at which reading stopped).
    pub actual_size: u64,
    /// Where the size promise came from when it was not the descriptor
    /// (e.g. `Content-Length`).
    pub note: Option<String>,
}

impl fmt::Display for Tamper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            TamperKind::DigestMismatch => {
                write!(f, "{} {}: content hashes to {} ({} bytes)", self.what, self.digest, self.actual_digest.as_deref().unwrap_or("?"), self.actual_size)
            }
            TamperKind::SizeMismatch => {
                let expected = self.expected_size.map_or("?".to_string(), |n| n.to_string());
                write!(f, "{} {}: {} bytes where {expected} were promised", self.what, self.digest, self.actual_size)?;
                if let Some(note) = &self.note {
                    write!(f, " ({note})")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Tamper {}

/// Why an image could not be opened or read.
#[derive(Debug, Error)]
pub enum ImageError {
    #[error("{reference}: not an image reference: {reason}")]
    Reference { reference: String, reason: String },
    #[error("{reference}: authentication failed for {registry}: {detail}")]
    Auth { reference: String, registry: String, detail: String },
    #[error("{reference}: not found: {what}")]
    NotFound { reference: String, what: String },
    #[error("{reference}: platform {wanted} is not in the image index; present: {}", present.join(", "))]
    PlatformNotFound { reference: String, wanted: String, present: Vec<String> },
    #[error("{reference}: integrity: {tamper}")]
    Tamper { reference: String, tamper: Box<Tamper> },
    #[error("{reference}: {detail}")]
    Transport { reference: String, detail: String },
    #[error("{reference}: {context}: {source}")]
    Io { reference: String, context: String, source: io::Error },
    #[error("{reference}: malformed {what}: {detail}")]
    Malformed { reference: String, what: String, detail: String },
    #[error("{reference}: unsupported: {what}")]
    Unsupported { reference: String, what: String },
}

impl ImageError {
    /// Turn an error out of a layer stream back into the typed error it
    /// carries; any other I/O error becomes [`ImageError::Io`].
    pub(crate) fn from_io(reference: &str, context: &str, e: io::Error) -> ImageError {
        let io_error = |source| ImageError::Io { reference: reference.to_string(), context: context.to_string(), source };
        if e.get_ref().is_none() {
            return io_error(e);
        }
        let kind = e.kind();
        let Some(inner) = e.into_inner() else { return io_error(io::Error::from(kind)) };
        match inner.downcast::<ImageError>() {
            Ok(err) => *err,
            Err(inner) => match inner.downcast::<Tamper>() {
                Ok(tamper) => ImageError::Tamper { reference: reference.to_string(), tamper },
                Err(inner) => io_error(io::Error::new(kind, inner)),
            },
        }
    }

    /// Wrap this error so it can travel through `Read::read`.
    pub(crate) fn into_io(self) -> io::Error {
        io::Error::other(self)
    }

    /// The tamper evidence, when that is what this error is.
    pub(crate) fn tamper(&self) -> Option<&Tamper> {
        match self {
            ImageError::Tamper { tamper, .. } => Some(tamper),
            _ => None,
        }
    }
}

/// The [`Tamper`] inside an `io::Error` from a layer stream, if any.
pub fn tamper_of(e: &io::Error) -> Option<&Tamper> {
    let inner = e.get_ref()?;
    if let Some(t) = inner.downcast_ref::<Tamper>() {
        return Some(t);
    }
    inner.downcast_ref::<ImageError>().and_then(ImageError::tamper)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tamper() -> Tamper {
        Tamper {
            kind: TamperKind::DigestMismatch,
            what: "layer 0".into(),
            digest: "sha256:aa".into(),
            expected_size: Some(3),
            actual_digest: Some("sha256:bb".into()),
            actual_size: 3,
            note: None,
        }
    }

    #[test]
    fn tamper_survives_an_io_error_round_trip() {
        let e = io::Error::other(tamper());
        assert_eq!(tamper_of(&e), Some(&tamper()));
        match ImageError::from_io("r", "reading layer 0", e) {
            ImageError::Tamper { reference, tamper: t } => assert_eq!((reference.as_str(), *t), ("r", tamper())),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn image_error_survives_an_io_error_round_trip() {
        let e = ImageError::Transport { reference: "r".into(), detail: "reset".into() }.into_io();
        assert!(matches!(ImageError::from_io("x", "c", e), ImageError::Transport { detail, .. } if detail == "reset"));
        let wrapped = ImageError::Tamper { reference: "r".into(), tamper: Box::new(tamper()) }.into_io();
        assert_eq!(tamper_of(&wrapped), Some(&tamper()));
        let plain = io::Error::new(io::ErrorKind::UnexpectedEof, "eof");
        assert!(matches!(ImageError::from_io("r", "c", plain), ImageError::Io { .. }));
    }

    #[test]
    fn messages_name_reference_and_platforms() {
        let e = ImageError::PlatformNotFound {
            reference: "oci:x".into(),
            wanted: "linux/s390x".into(),
            present: vec!["linux/amd64".into(), "linux/arm64/v8".into()],
        };
        assert_eq!(e.to_string(), "oci:x: platform linux/s390x is not in the image index; present: linux/amd64, linux/arm64/v8");
        let size = Tamper { kind: TamperKind::SizeMismatch, note: Some("Content-Length".into()), actual_size: 9, ..tamper() };
        assert_eq!(size.to_string(), "layer 0 sha256:aa: 9 bytes where 3 were promised (Content-Length)");
    }
}
