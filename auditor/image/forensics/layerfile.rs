//! The on-disk form of a layer's index, written op by op as the walk finds
//! them and read back op by op as the merge applies them, so neither holds
//! a layer's entries in memory: a layer of a million entries costs the
//! merged index, not three copies of it. A versioned binary stream: a
//! header (blob digest, diff-id, the content hash algorithm), the ops, an end record with the count of
//! hostile entries not listed, then the SHA-256 of everything before it —
//! a truncated or corrupt file is an error (a cache miss), never a wrong
//! index. The checksum comes last, so a reader must reach the end before
//! it trusts any op ([`super::cache::Cache::apply`] reads twice).

use super::content::{ContentDigest, ContentHash};
use super::file_index::Op;
use super::node::{Kind, Node, TextRef};
use super::pyc::Pyc;
use sha2::{Digest as _, Sha256};
use std::io::{self, Read, Write};

const MAGIC: &[u8; 8] = b"AUDITIDX";
/// 2: ops streamed with an end record; hostile entries of the walk's name
/// checks, and the count of those not listed. 3: sources captured up to
/// 1 MiB (torch's `nn/functional.py` is 280 KiB). 4: the end record says
/// whether a limit stopped the walk ([`Stopped`]). 5: a `.pyc`'s header
/// beside its body digest. 6: the content hash algorithm
/// ([`ContentHash`]) in the header.
const VERSION: u32 = 6;
/// Longest path or link target read back.
const MAX_STR: u32 = 1 << 20;
const END: u8 = 0xff;

/// A walk that a limit stopped, as its index records it: the limits it
/// ran under ([`crate::image::limits::LayerLimits::walk_key`]; a partial
/// index is used only under the same ones) and what the report says of
/// the part not examined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stopped {
    pub limits: [u64; 4],
    pub text: String,
}

/// Writes a layer index, one op at a time.
pub(super) struct IndexWriter<W: Write> {
    w: Hashing<W>,
    hash: ContentHash,
}

impl<W: Write> IndexWriter<W> {
    pub(super) fn new(inner: W, digest: &str, diff_id: &str, hash: ContentHash) -> io::Result<Self> {
        let mut w = Hashing { inner, hash: Sha256::new() };
        w.write_all(MAGIC)?;
        w.write_all(&VERSION.to_le_bytes())?;
        put_str(&mut w, digest)?;
        put_str(&mut w, diff_id)?;
        w.write_all(&[hash.code()])?;
        Ok(IndexWriter { w, hash })
    }

    /// The bytes of a digest, which must be of this index's algorithm.
    fn bytes_of(&self, d: &ContentDigest) -> io::Result<[u8; 32]> {
        match d.hash == self.hash {
            true => Ok(d.bytes),
            false => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("a {} digest in a {} index", d.hash.name(), self.hash.name()))),
        }
    }

    pub(super) fn op(&mut self, op: &Op) -> io::Result<()> {
        if let Op::Put(_, n) = op {
            for d in n.digest.iter().chain(n.pyc.as_deref().map(|p| &p.body)) {
                self.bytes_of(d)?;
            }
        }
        let w = &mut self.w;
        match op {
            Op::Put(path, n) => {
                w.write_all(&[0])?;
                put_str(w, path)?;
                let flags = u8::from(n.digest.is_some()) | u8::from(n.pyc.is_some()) << 1 | u8::from(n.link.is_some()) << 2 | u8::from(n.text.is_some()) << 3;
                w.write_all(&[n.kind.code(), flags])?;
                for v in [n.mode, n.uid, n.gid] {
                    w.write_all(&v.to_le_bytes())?;
                }
                w.write_all(&n.size.to_le_bytes())?;
                if let Some(d) = &n.digest {
                    w.write_all(&d.bytes)?;
                }
                if let Some(p) = &n.pyc {
                    w.write_all(&p.header)?;
                    w.write_all(&p.body.bytes)?;
                }
                if let Some(l) = &n.link {
                    put_str(w, l)?;
                }
                if let Some(t) = &n.text {
                    w.write_all(&t.offset.to_le_bytes())?;
                    w.write_all(&t.len.to_le_bytes())?;
                }
            }
            Op::Whiteout(p) => {
                w.write_all(&[1])?;
                put_str(w, p)?;
            }
            Op::Opaque(p) => {
                w.write_all(&[2])?;
                put_str(w, p)?;
            }
            Op::Hostile { path, reason } => {
                w.write_all(&[3])?;
                put_str(w, path)?;
                put_str(w, reason)?;
            }
        }
        Ok(())
    }

    /// The end record (`unlisted` hostile entries beyond those written,
    /// and where a limit stopped the walk) and the checksum; the inner
    /// writer, flushed.
    pub(super) fn finish(mut self, unlisted: u64, stopped: Option<&Stopped>) -> io::Result<W> {
        self.w.write_all(&[END])?;
        self.w.write_all(&unlisted.to_le_bytes())?;
        match stopped {
            None => self.w.write_all(&[0])?,
            Some(stop) => {
                self.w.write_all(&[1])?;
                for v in stop.limits {
                    self.w.write_all(&v.to_le_bytes())?;
                }
                put_str(&mut self.w, &stop.text)?;
            }
        }
        let sum = self.w.hash.clone().finalize();
        self.w.inner.write_all(&sum)?;
        self.w.flush()?;
        Ok(self.w.inner)
    }
}

/// Reads what [`IndexWriter`] wrote, one op at a time.
pub(super) struct IndexReader<R: Read> {
    r: Hashed<R>,
    /// The layer blob digest the index is of.
    pub digest: String,
    /// The algorithm of its content digests.
    pub hash: ContentHash,
    /// Hostile entries not listed; known once [`IndexReader::next_op`] returned `None`.
    pub unlisted: u64,
    /// Where a limit stopped the walk; known then too.
    pub stopped: Option<Stopped>,
}

impl<R: Read> IndexReader<R> {
    pub(super) fn new(inner: R) -> io::Result<Self> {
        let mut r = Hashed { inner, hash: Sha256::new() };
        if &get::<8>(&mut r)? != MAGIC || get_u32(&mut r)? != VERSION {
            return Err(bad("not a layer index of this version"));
        }
        let digest = get_str(&mut r)?.into();
        get_str(&mut r)?; // the diff-id: a record for people reading the cache
        let hash = ContentHash::from_code(get::<1>(&mut r)?[0]).ok_or_else(|| bad("unknown content hash"))?;
        Ok(IndexReader { r, digest, hash, unlisted: 0, stopped: None })
    }

    /// The next op; `None` after the last, once the checksum matched. Any
    /// damage is an error.
    pub(super) fn next_op(&mut self) -> io::Result<Option<Op>> {
        let (r, hash) = (&mut self.r, self.hash);
        let content = |r: &mut Hashed<R>| get::<32>(r).map(|bytes| ContentDigest { hash, bytes });
        let [tag] = get::<1>(r)?;
        Ok(Some(match tag {
            0 => {
                let path = get_str(r)?;
                let [kind, flags] = get::<2>(r)?;
                let kind = Kind::from_code(kind).ok_or_else(|| bad("unknown entry kind"))?;
                let (mode, uid, gid, size) = (get_u32(r)?, get_u32(r)?, get_u32(r)?, get_u64(r)?);
                let digest = if flags & 1 != 0 { Some(content(r)?) } else { None };
                let pyc = if flags & 2 != 0 { Some(Box::new(Pyc { header: get::<16>(r)?, body: content(r)? })) } else { None };
                let link = if flags & 4 != 0 { Some(get_str(r)?) } else { None };
                let text = if flags & 8 != 0 { Some(TextRef { layer: 0, offset: get_u64(r)?, len: get_u32(r)? }) } else { None };
                Op::Put(path, Node { kind, mode, uid, gid, size, digest, pyc, link, text, layer: 0 })
            }
            1 => Op::Whiteout(get_str(r)?),
            2 => Op::Opaque(get_str(r)?),
            3 => Op::Hostile { path: get_str(r)?, reason: get_str(r)? },
            END => {
                self.unlisted = get_u64(r)?;
                self.stopped = match get::<1>(r)? {
                    [0] => None,
                    [1] => Some(Stopped { limits: [get_u64(r)?, get_u64(r)?, get_u64(r)?, get_u64(r)?], text: get_str(r)?.into() }),
                    _ => return Err(bad("unknown end record")),
                };
                let expected = r.hash.clone().finalize();
                if get::<32>(&mut r.inner)?[..] != expected[..] {
                    return Err(bad("checksum mismatch"));
                }
                return Ok(None);
            }
            _ => return Err(bad("unknown record")),
        }))
    }
}

/// A writer that hashes what passes through.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A reader that hashes what passes through.
struct Hashed<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

fn put_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    w.write_all(&(s.len() as u32).to_le_bytes())?;
    w.write_all(s.as_bytes())
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("layer index: {what}"))
}

fn get<const N: usize>(r: &mut impl Read) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn get_u32(r: &mut impl Read) -> io::Result<u32> {
    get::<4>(r).map(u32::from_le_bytes)
}

fn get_u64(r: &mut impl Read) -> io::Result<u64> {
    get::<8>(r).map(u64::from_le_bytes)
}

fn get_str(r: &mut impl Read) -> io::Result<Box<str>> {
    let len = get_u32(r)?;
    if len > MAX_STR {
        return Err(bad("string too long"));
    }
    let mut b = vec![0u8; len as usize];
    r.read_exact(&mut b)?;
    String::from_utf8(b).map(String::into_boxed_str).map_err(|_| bad("string is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::forensics::file_index::tests::file;

    fn write(ops: &[Op], unlisted: u64) -> Vec<u8> {
        let mut w = IndexWriter::new(Vec::new(), "sha256:ab", "sha256:cd", ContentHash::Sha256).unwrap();
        for op in ops {
            w.op(op).unwrap();
        }
        w.finish(unlisted, None).unwrap()
    }

    fn read(bytes: &[u8]) -> io::Result<(String, Vec<Op>, u64)> {
        let mut r = IndexReader::new(bytes)?;
        let mut ops = Vec::new();
        while let Some(op) = r.next_op()? {
            ops.push(op);
        }
        Ok((r.digest, ops, r.unlisted))
    }

    #[test]
    fn round_trips_and_detects_damage() {
        let mut n = file(b"code");
        n.pyc = Some(Box::new(Pyc { header: [6; 16], body: ContentHash::Sha256.of(b"body") }));
        n.text = Some(TextRef { layer: 0, offset: 9, len: 4 });
        let ops = vec![
            Op::Put("/x.pyc".into(), n),
            Op::Put("/l".into(), Node { kind: Kind::Symlink, link: Some("x".into()), digest: None, ..file(b"") }),
            Op::Whiteout("/w".into()),
            Op::Opaque("/o".into()),
            Op::Hostile { path: "/../etc".into(), reason: "escapes".into() },
        ];
        let bytes = write(&ops, 7);
        assert_eq!(read(&bytes).unwrap(), ("sha256:ab".to_string(), ops, 7));
        for cut in [0, 10, bytes.len() - 1] {
            assert!(read(&bytes[..cut]).is_err());
        }
        let mut flipped = bytes.clone();
        flipped[30] ^= 1;
        assert!(read(&flipped).is_err());
    }

    #[test]
    fn an_index_keeps_one_algorithm() {
        let mut w = IndexWriter::new(Vec::new(), "sha256:ab", "sha256:cd", ContentHash::Blake3).unwrap();
        let sha = file(b"x");
        assert!(w.op(&Op::Put("/a".into(), sha.clone())).is_err(), "a SHA-256 digest written into a BLAKE3 index");
        let b3 = Node { digest: Some(ContentHash::Blake3.of(b"x")), ..sha };
        w.op(&Op::Put("/a".into(), b3.clone())).unwrap();
        let bytes = w.finish(0, None).unwrap();
        let mut r = IndexReader::new(&bytes[..]).unwrap();
        assert_eq!((r.hash, r.next_op().unwrap()), (ContentHash::Blake3, Some(Op::Put("/a".into(), b3))));
    }
}
