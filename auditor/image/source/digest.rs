//! Content verification. Every blob is named by its digest and announced
//! with a size; [`VerifyingReader`] hashes and counts the bytes as the
//! consumer reads them and fails with a typed [`Tamper`] on the first byte
//! past the promised size, or at end of stream when the size or digest is
//! wrong. Nothing is buffered: the check costs one hash pass over bytes
//! that are being read anyway. A consumer must treat what it has read as
//! unproven until the stream has returned EOF (`Ok(0)`).

use super::{Tamper, TamperKind};
use sha2::{Digest as _, Sha256, Sha512};
use std::io::{self, Read};

/// A digest algorithm we can check.
enum Hasher {
    Sha256(Sha256),
    Sha512(Sha512),
}

impl Hasher {
    /// The hasher for `digest` (`sha256:<64 hex>` or `sha512:<128 hex>`).
    fn for_digest(digest: &str) -> Option<Hasher> {
        let (algo, hex) = digest.split_once(':')?;
        let valid = |len: usize| hex.len() == len && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        match algo {
            "sha256" if valid(64) => Some(Hasher::Sha256(Sha256::new())),
            "sha512" if valid(128) => Some(Hasher::Sha512(Sha512::new())),
            _ => None,
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Sha256(h) => h.update(data),
            Hasher::Sha512(h) => h.update(data),
        }
    }

    fn finish(self) -> String {
        match self {
            Hasher::Sha256(h) => format!("sha256:{}", hex(&h.finalize())),
            Hasher::Sha512(h) => format!("sha512:{}", hex(&h.finalize())),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `digest` is one we can verify (sha256 or sha512, lower-case hex).
pub(crate) fn is_valid_digest(digest: &str) -> bool {
    Hasher::for_digest(digest).is_some()
}

/// The sha256 digest of `bytes`, `sha256:<hex>`.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// What a blob must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expected {
    /// Which blob, for messages: `manifest`, `config`, `layer 2`.
    pub what: String,
    pub digest: String,
    /// The promised size; `None` when the source promises none (an engine's
    /// export announces sizes only in the stream itself).
    pub size: Option<u64>,
}

impl Expected {
    fn tamper(&self, kind: TamperKind, actual_digest: Option<String>, actual_size: u64) -> Tamper {
        Tamper { kind, what: self.what.clone(), digest: self.digest.clone(), expected_size: self.size, actual_digest, actual_size, note: None }
    }
}

/// Check a blob held in memory (manifests, configs: small by nature).
pub(crate) fn verify_bytes(expected: &Expected, bytes: &[u8]) -> Result<(), Box<Tamper>> {
    let size = bytes.len() as u64;
    let Some(mut hasher) = Hasher::for_digest(&expected.digest) else {
        let note = Some("not a sha256 or sha512 digest: cannot be verified".to_string());
        return Err(Box::new(Tamper { note, ..expected.tamper(TamperKind::DigestMismatch, Some(sha256_digest(bytes)), size) }));
    };
    hasher.update(bytes);
    let actual = hasher.finish();
    if expected.size.is_some_and(|s| s != size) {
        return Err(Box::new(expected.tamper(TamperKind::SizeMismatch, Some(actual), size)));
    }
    if actual != expected.digest {
        return Err(Box::new(expected.tamper(TamperKind::DigestMismatch, Some(actual), size)));
    }
    Ok(())
}

/// A reader that verifies the digest and size of what passes through it.
pub(crate) struct VerifyingReader<R> {
    inner: R,
    expected: Expected,
    hasher: Option<Hasher>,
    count: u64,
    /// The outcome once decided, so later reads repeat it.
    done: Option<Result<(), Tamper>>,
}

impl<R: Read> VerifyingReader<R> {
    /// Fails when the digest is not a sha256/sha512 digest we can check: an
    /// unverifiable blob is never passed through as if it were verified.
    pub(crate) fn new(inner: R, expected: Expected) -> io::Result<Self> {
        let hasher = Hasher::for_digest(&expected.digest).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("{}: cannot verify digest {:?} (sha256 or sha512 expected)", expected.what, expected.digest))
        })?;
        Ok(VerifyingReader { inner, expected, hasher: Some(hasher), count: 0, done: None })
    }

    fn fail(&mut self, tamper: Tamper) -> io::Error {
        self.done = Some(Err(tamper.clone()));
        io::Error::other(tamper)
    }
}

impl<R: Read> Read for VerifyingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &self.done {
            Some(Ok(())) => return Ok(0),
            Some(Err(t)) => return Err(io::Error::other(t.clone())),
            None => {}
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        let count = self.count + n as u64;
        if self.expected.size.is_some_and(|s| count > s) {
            return Err(self.fail(self.expected.tamper(TamperKind::SizeMismatch, None, count)));
        }
        self.count = count;
        if n > 0 {
            if let Some(h) = self.hasher.as_mut() {
                h.update(&buf[..n]);
            }
            return Ok(n);
        }
        let actual = self.hasher.take().map(Hasher::finish);
        if self.expected.size.is_some_and(|s| s != count) {
            return Err(self.fail(self.expected.tamper(TamperKind::SizeMismatch, actual, count)));
        }
        if actual.as_deref() != Some(self.expected.digest.as_str()) {
            return Err(self.fail(self.expected.tamper(TamperKind::DigestMismatch, actual, count)));
        }
        self.done = Some(Ok(()));
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::tamper_of;

    fn expected(data: &[u8], size: Option<u64>) -> Expected {
        Expected { what: "layer 0".into(), digest: sha256_digest(data), size }
    }

    fn read_all(data: &[u8], exp: Expected) -> Result<Vec<u8>, Box<Tamper>> {
        let mut out = Vec::new();
        let mut r = VerifyingReader::new(data, exp).unwrap();
        match r.read_to_end(&mut out) {
            Ok(_) => Ok(out),
            Err(e) => Err(Box::new(tamper_of(&e).cloned().expect("a tamper error"))),
        }
    }

    #[test]
    fn passes_exact_content_and_repeats_eof() {
        let data = b"hello layer";
        assert_eq!(read_all(data, expected(data, Some(11))).unwrap(), data);
        assert_eq!(read_all(data, expected(data, None)).unwrap(), data);
        let mut r = VerifyingReader::new(&data[..], expected(data, Some(11))).unwrap();
        io::copy(&mut r, &mut io::sink()).unwrap();
        assert_eq!(r.read(&mut [0u8; 4]).unwrap(), 0);
    }

    #[test]
    fn a_flipped_byte_is_a_digest_mismatch_at_eof() {
        let t = read_all(b"hellO layer", expected(b"hello layer", Some(11))).unwrap_err();
        assert_eq!((t.kind, t.actual_size), (TamperKind::DigestMismatch, 11));
        assert_eq!(t.actual_digest, Some(sha256_digest(b"hellO layer")));
    }

    #[test]
    fn overrun_fails_before_eof_and_short_read_at_eof() {
        let long = vec![7u8; 100_000];
        let t = read_all(&long, expected(&long[..10], Some(10))).unwrap_err();
        assert_eq!(t.kind, TamperKind::SizeMismatch);
        assert!(t.actual_size > 10 && t.actual_digest.is_none());
        let t = read_all(b"abc", expected(b"abcd", Some(4))).unwrap_err();
        assert_eq!((t.kind, t.actual_size, t.expected_size), (TamperKind::SizeMismatch, 3, Some(4)));
        // errors are sticky: a retrying consumer cannot read past them
        let mut r = VerifyingReader::new(&b"abc"[..], expected(b"abcd", Some(4))).unwrap();
        assert!(io::copy(&mut r, &mut io::sink()).is_err());
        assert!(r.read(&mut [0u8; 4]).is_err());
    }

    #[test]
    fn unverifiable_digests_are_refused() {
        for d in ["md5:abc", "sha256:XYZ", "sha256:", "sha256", ""] {
            assert!(VerifyingReader::new(&b""[..], Expected { what: "x".into(), digest: d.into(), size: None }).is_err(), "{d}");
        }
        let sha512 = format!("sha512:{}", "0".repeat(128));
        assert!(is_valid_digest(&sha512));
    }

    #[test]
    fn verify_bytes_checks_both() {
        let e = expected(b"{}", Some(2));
        assert!(verify_bytes(&e, b"{}").is_ok());
        assert_eq!(verify_bytes(&e, b"[]").unwrap_err().kind, TamperKind::DigestMismatch);
        assert_eq!(verify_bytes(&e, b"{} ").unwrap_err().kind, TamperKind::SizeMismatch);
    }
}
