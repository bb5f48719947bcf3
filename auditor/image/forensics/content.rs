//! The hash a layer index keeps of each file's content, and which one it
//! is. `image verify` compares files with their RECORD rows, which say
//! `sha256=`, so its indexes keep SHA-256. `image diff` compares two images
//! with each other, so any collision-resistant hash does: its indexes keep
//! BLAKE3, three times SHA-256's speed here (SHA-256 of every file was a
//! fifth of a diff's CPU). A digest carries its algorithm, so digests of
//! two algorithms never compare equal and a BLAKE3 digest never matches a
//! RECORD row.

use sha2::Digest as _;

/// A content hash algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContentHash {
    Sha256,
    Blake3,
}

impl ContentHash {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ContentHash::Sha256 => "sha256",
            ContentHash::Blake3 => "blake3",
        }
    }

    pub(super) fn code(self) -> u8 {
        self as u8
    }

    pub(super) fn from_code(c: u8) -> Option<ContentHash> {
        [ContentHash::Sha256, ContentHash::Blake3].get(usize::from(c)).copied()
    }

    pub(crate) fn hasher(self) -> ContentHasher {
        match self {
            ContentHash::Sha256 => ContentHasher::Sha256(sha2::Sha256::new()),
            ContentHash::Blake3 => ContentHasher::Blake3(Box::new(blake3::Hasher::new())),
        }
    }

    /// The digest of `data` in one call.
    #[cfg(test)]
    pub(crate) fn of(self, data: &[u8]) -> ContentDigest {
        let mut h = self.hasher();
        h.update(data);
        h.finish()
    }
}

/// A hash being computed as a file streams by.
pub(crate) enum ContentHasher {
    Sha256(sha2::Sha256),
    Blake3(Box<blake3::Hasher>),
}

impl ContentHasher {
    pub(crate) fn update(&mut self, data: &[u8]) {
        match self {
            ContentHasher::Sha256(h) => h.update(data),
            ContentHasher::Blake3(h) => {
                h.update(data);
            }
        }
    }

    pub(crate) fn finish(self) -> ContentDigest {
        match self {
            ContentHasher::Sha256(h) => ContentDigest { hash: ContentHash::Sha256, bytes: h.finalize().into() },
            ContentHasher::Blake3(h) => ContentDigest { hash: ContentHash::Blake3, bytes: *h.finalize().as_bytes() },
        }
    }
}

/// A file's content digest, with its algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ContentDigest {
    pub hash: ContentHash,
    pub bytes: [u8; 32],
}

impl ContentDigest {
    /// The SHA-256, when that is what this digest is (what a RECORD row says).
    pub(crate) fn sha256(&self) -> Option<&[u8; 32]> {
        (self.hash == ContentHash::Sha256).then_some(&self.bytes)
    }

    /// `sha256:0123456789ab`: the algorithm and the first 6 bytes, for evidence text.
    pub(crate) fn short(&self) -> String {
        let hex: String = self.bytes[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("{}:{hex}", self.hash.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_of_two_algorithms_never_match() {
        let (s, b) = (ContentHash::Sha256.of(b"x"), ContentHash::Blake3.of(b"x"));
        assert_ne!(s, ContentDigest { hash: ContentHash::Blake3, bytes: s.bytes });
        assert_eq!((s.sha256().is_some(), b.sha256()), (true, None));
        // the published test vectors of the empty input
        assert_eq!(ContentHash::Sha256.of(b"").short(), "sha256:e3b0c44298fc");
        assert_eq!(ContentHash::Blake3.of(b"").short(), "blake3:af1349b9f5f9");
        let mut streamed = ContentHash::Blake3.hasher();
        streamed.update(b"ab");
        streamed.update(b"c");
        assert_eq!(streamed.finish(), ContentHash::Blake3.of(b"abc"));
        for h in [ContentHash::Sha256, ContentHash::Blake3] {
            assert_eq!(ContentHash::from_code(h.code()), Some(h));
        }
        assert_eq!(ContentHash::from_code(2), None);
    }
}
