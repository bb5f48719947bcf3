//! What a `.pyc` header says (PEP 552) and whether CPython will trust it:
//! the magic number (which interpreter wrote it), the flags (timestamp-,
//! checked-hash- or unchecked-hash-based), and the source's size or the
//! hash of the source it claims to cache. CPython loads an unchecked-hash
//! `.pyc` without looking at its source; a checked-hash or timestamp one
//! only when it matches the source (otherwise it compiles the source).
//! The source hash is `_imp.source_hash`: SipHash keyed with the magic
//! number, so a claimed hash can be checked against the `.py` beside it
//! for every interpreter whose magic number is known here.

use super::content::ContentDigest;
use super::paths::split;
use siphasher::sip::{SipHasher13, SipHasher24};
use std::hash::Hasher;

/// The header and body digest the index keeps of a `.pyc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pyc {
    /// The first 16 bytes (zero-padded when the file is shorter).
    pub header: [u8; 16],
    /// The hash of the rest: the marshalled code, what every rebuild keeps.
    pub body: ContentDigest,
}

/// How a `.pyc` is tied to its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Invalidation {
    /// The source's mtime and size: used when both match.
    Timestamp { size: u32 },
    /// A hash of the source, compared at import (`check_source`).
    CheckedHash([u8; 8]),
    /// A hash of the source CPython does not compare: loaded as is.
    UncheckedHash([u8; 8]),
    /// Flags no CPython writes.
    Unknown(u32),
}

impl Pyc {
    /// The magic number, when it ends in `\r\n` as every CPython 3 one does.
    pub(crate) fn magic(&self) -> Option<u16> {
        (self.header[2..4] == *b"\r\n").then(|| u16::from_le_bytes([self.header[0], self.header[1]]))
    }

    pub(crate) fn invalidation(&self) -> Invalidation {
        let word = |i: usize| [self.header[i], self.header[i + 1], self.header[i + 2], self.header[i + 3]];
        let flags = u32::from_le_bytes(word(4));
        let hash = || <[u8; 8]>::try_from(&self.header[8..16]).unwrap_or_default();
        match flags {
            0 => Invalidation::Timestamp { size: u32::from_le_bytes(word(12)) },
            3 => Invalidation::CheckedHash(hash()),
            1 => Invalidation::UncheckedHash(hash()),
            other => Invalidation::Unknown(other),
        }
    }

    /// `_imp.source_hash` of `source` for this `.pyc`'s interpreter, when
    /// its magic number is one known here (CPython 3.7 and later).
    pub(crate) fn source_hash(&self, source: &[u8]) -> Option<[u8; 8]> {
        let magic = self.magic()?;
        let key = u64::from(u32::from_le_bytes([self.header[0], self.header[1], b'\r', b'\n']));
        let hash = match magic {
            // 3.7 – 3.10: SipHash-2-4.
            3390..=3449 => {
                let mut h = SipHasher24::new_with_keys(key, 0);
                h.write(source);
                h.finish()
            }
            // 3.11 – 3.14: SipHash-1-3 (the magic numbers run to 3699 before 3.15).
            3450..=3699 => {
                let mut h = SipHasher13::new_with_keys(key, 0);
                h.write(source);
                h.finish()
            }
            _ => return None,
        };
        Some(hash.to_le_bytes())
    }

    /// `3.12` for a magic number known here.
    pub(crate) fn python(&self) -> Option<&'static str> {
        Some(match self.magic()? {
            3390..=3399 => "3.7",
            3400..=3419 => "3.8",
            3420..=3429 => "3.9",
            3430..=3449 => "3.10",
            3450..=3499 => "3.11",
            3500..=3549 => "3.12",
            3550..=3599 => "3.13",
            3600..=3699 => "3.14",
            _ => return None,
        })
    }
}

/// The source a `.pyc` was compiled from: `d/__pycache__/m.cpython-312.pyc`
/// or legacy `d/m.pyc` -> `d/m.py`.
pub(crate) fn source_of(path: &str) -> Option<String> {
    let (dir, name) = split(path);
    let stem = name.strip_suffix(".pyc")?;
    match dir.strip_suffix("/__pycache__") {
        Some(parent) => Some(format!("{parent}/{}.py", stem.split('.').next()?)),
        None => Some(format!("{dir}/{stem}.py")),
    }
}

/// Whether a `.pyc` sits where only a sourceless import finds it (`d/m.pyc`,
/// not in `__pycache__`): CPython loads it when no `d/m.py` is there.
pub(crate) fn is_legacy(path: &str) -> bool {
    !split(path).0.ends_with("/__pycache__")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::forensics::content::ContentHash;

    fn pyc(header: &[u8]) -> Pyc {
        let mut h = [0u8; 16];
        h[..header.len()].copy_from_slice(header);
        Pyc { header: h, body: ContentHash::Sha256.of(b"") }
    }

    #[test]
    fn source_hashes_are_cpythons() {
        // CPython 3.11: _imp.source_hash(int.from_bytes(importlib.util.MAGIC_NUMBER, 'little'), b'hello world\n').hex()
        let p311 = pyc(b"\xa7\x0d\r\n\x01\0\0\0");
        assert_eq!(p311.magic(), Some(3495));
        assert_eq!(p311.python(), Some("3.11"));
        assert_eq!(p311.source_hash(b"hello world\n").map(|h| h.iter().map(|b| format!("{b:02x}")).collect::<String>()).as_deref(), Some("06a723be9dc1ebb0"));
        assert_eq!(pyc(b"\x12\x34\r\n").source_hash(b"x"), None, "an unknown magic number is not guessed");
        assert_eq!(pyc(b"abcd").magic(), None);
    }

    #[test]
    fn flags_say_how_the_source_is_checked() {
        assert_eq!(pyc(b"\xcb\x0d\r\n\0\0\0\0\0\0\0\0\x39\0\0\0").invalidation(), Invalidation::Timestamp { size: 0x39 });
        assert_eq!(pyc(b"\xcb\x0d\r\n\x01\0\0\0\x01\x02\x03\x04\x05\x06\x07\x08").invalidation(), Invalidation::UncheckedHash([1, 2, 3, 4, 5, 6, 7, 8]));
        assert!(matches!(pyc(b"\xcb\x0d\r\n\x03\0\0\0").invalidation(), Invalidation::CheckedHash(_)));
        assert_eq!(pyc(b"\xcb\x0d\r\n\x02\0\0\0").invalidation(), Invalidation::Unknown(2));
    }
}
