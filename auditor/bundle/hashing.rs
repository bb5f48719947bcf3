//! A reader that hashes, counts and caps the bytes passing through it, so a
//! member is hashed in the same pass that parses it and can never exceed its
//! size limit, whatever its header claims. Hashing can be left out (it is
//! most of the cost of a signature scan) while counting and capping stay;
//! the same reader caps what a compressed stream may expand to.

use sha2::{Digest, Sha256};
use std::io::{self, Read};

/// The most bytes a stream may yield, and the error to give for more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cap {
    pub(crate) bytes: u64,
    /// Why the stream stops there (which limit, and the flag that raises it).
    pub(crate) why: String,
}

pub(crate) struct HashingReader<R> {
    inner: R,
    hasher: Option<Sha256>,
    count: u64,
    cap: Cap,
}

impl<R: Read> HashingReader<R> {
    pub(crate) fn new(inner: R, cap: Cap, hash: bool) -> Self {
        HashingReader { inner, hasher: hash.then(Sha256::new), count: 0, cap }
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Read the rest of the stream (still capped) and return the hex digest, if hashing.
    pub(crate) fn finish(mut self) -> io::Result<(u64, Option<String>)> {
        io::copy(&mut self, &mut io::sink())?;
        Ok((self.count, self.hasher.map(|h| hex(&h.finalize()))))
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.count >= self.cap.bytes {
            // Probe one byte: a member exactly at the cap is fine, one over is not.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(self.cap.why.clone())),
            };
        }
        let room = usize::try_from(self.cap.bytes - self.count).unwrap_or(usize::MAX).min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        if let Some(hasher) = &mut self.hasher {
            hasher.update(&buf[..n]);
        }
        self.count += n as u64;
        Ok(n)
    }
}

/// Lower-case hex of a digest.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(bytes: u64) -> Cap {
        Cap { bytes, why: "over the test limit".into() }
    }

    #[test]
    fn hashes_and_caps() {
        let (n, digest) = HashingReader::new(&b"abc"[..], cap(3), true).finish().unwrap();
        assert_eq!(n, 3);
        assert_eq!(digest.unwrap(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(HashingReader::new(&b"abc"[..], cap(3), false).finish().unwrap(), (3, None));
        let err = HashingReader::new(&b"abcd"[..], cap(3), false).finish().unwrap_err();
        assert_eq!(err.to_string(), "over the test limit");
    }
}
