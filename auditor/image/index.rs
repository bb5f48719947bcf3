//! File indexes. A layer's index ([`LayerIndex`]) is what walking its tar
//! found, in order: entries put, whiteouts and opaque directories, and
//! entries refused as hostile. An image's merged filesystem ([`FsIndex`])
//! is its layers' indexes applied in order with OCI semantics, so two
//! images compare path by path whatever their layer split.
//!
//! Layer indexes are cached on disk by blob digest; [`LayerIndex::write`]
//! and [`LayerIndex::read`] are that format: a versioned binary stream
//! ending in the SHA-256 of everything before it, so a truncated or
//! corrupt cache file reads as a miss, never as a wrong index.

use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};

const MAGIC: &[u8; 8] = b"AUDITIDX";
const VERSION: u32 = 1;
/// Longest path or link target read back from a cache file.
const MAX_STR: u32 = 1 << 20;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A hard link, resolved to its target's content when merged.
    Hardlink,
    Char,
    Block,
    Fifo,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "directory",
            Kind::Symlink => "symlink",
            Kind::Hardlink => "hardlink",
            Kind::Char => "char device",
            Kind::Block => "block device",
            Kind::Fifo => "fifo",
        }
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> Option<Kind> {
        [Kind::File, Kind::Dir, Kind::Symlink, Kind::Hardlink, Kind::Char, Kind::Block, Kind::Fifo].get(usize::from(c)).copied()
    }
}

/// Where a captured small text file (Python source, dist-info metadata)
/// sits in a layer's text pack: one zstd frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRef {
    /// The image layer whose pack holds it (set when merged).
    pub layer: u16,
    pub offset: u64,
    pub len: u32,
}

/// One filesystem entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub kind: Kind,
    /// Permission bits with setuid/setgid/sticky.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    /// SHA-256 of a file's content.
    pub digest: Option<[u8; 32]>,
    /// SHA-256 of the content with format noise removed (a `.pyc` without
    /// its header), where a rule applies.
    pub norm: Option<Box<[u8; 32]>>,
    /// A symlink's target, or a hard link's target path.
    pub link: Option<Box<str>>,
    pub text: Option<TextRef>,
    /// The image layer that last wrote it (set when merged).
    pub layer: u16,
}

impl Node {
    /// The digest content is compared by: the normalised one where a
    /// noise rule applies.
    pub fn content_key(&self) -> Option<&[u8; 32]> {
        self.norm.as_deref().or(self.digest.as_ref())
    }

    pub fn is_executable(&self) -> bool {
        self.kind == Kind::File && self.mode & 0o111 != 0
    }
}

/// One step of a layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put(Box<str>, Node),
    /// `.wh.NAME`: the path and everything under it, from lower layers.
    Whiteout(Box<str>),
    /// `.wh..wh..opq`: everything under the directory, from lower layers.
    Opaque(Box<str>),
    /// An entry that was not applied, and why (`..` escaping the root ...).
    Hostile { path: Box<str>, reason: Box<str> },
}

/// What one layer's tar holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LayerIndex {
    /// The blob digest (the cache key).
    pub digest: String,
    /// The uncompressed digest verified while walking, when the image names one.
    pub diff_id: String,
    pub ops: Vec<Op>,
}

/// A hostile entry of an image, with the layer that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostileEntry {
    pub layer: u16,
    pub path: String,
    pub reason: String,
}

/// An image's merged filesystem: path (absolute, normalised) -> entry.
#[derive(Debug, Default)]
pub struct FsIndex {
    pub entries: BTreeMap<Box<str>, Node>,
    pub hostile: Vec<HostileEntry>,
}

impl FsIndex {
    /// Apply layer `layer` on top: its whiteouts and opaque markers hide
    /// lower entries (never its own), then its entries are put in order; a
    /// non-directory replacing a directory hides what was under it; a hard
    /// link takes its target's content.
    pub fn apply(&mut self, layer: u16, index: &LayerIndex) {
        for op in &index.ops {
            match op {
                Op::Whiteout(path) => {
                    self.entries.remove(&**path);
                    self.remove_below(path);
                }
                Op::Opaque(dir) => self.remove_below(dir),
                Op::Hostile { path, reason } => self.hostile.push(HostileEntry { layer, path: path.to_string(), reason: reason.to_string() }),
                Op::Put(..) => {}
            }
        }
        for op in &index.ops {
            let Op::Put(path, node) = op else { continue };
            let mut node = node.clone();
            node.layer = layer;
            if let Some(t) = node.text.as_mut() {
                t.layer = layer;
            }
            if node.kind == Kind::Hardlink {
                if let Some(target) = node.link.as_deref().and_then(|t| self.entries.get(t)).filter(|t| t.kind == Kind::File) {
                    node.kind = Kind::File;
                    node.size = target.size;
                    node.digest = target.digest;
                    node.norm = target.norm.clone();
                    node.text = target.text;
                }
            }
            if node.kind != Kind::Dir {
                self.remove_below(path);
            }
            self.entries.insert(path.clone(), node);
        }
    }

    /// Remove everything strictly below directory `dir`.
    fn remove_below(&mut self, dir: &str) {
        let prefix = if dir == "/" { "/".to_string() } else { format!("{dir}/") };
        // The first string after every `prefix...`: '/' + 1 is '0'.
        let mut end = prefix.clone();
        end.pop();
        end.push('0');
        let mut below = self.entries.split_off(prefix.as_str());
        let mut after = below.split_off(end.as_str());
        if dir == "/" {
            // the root's own entry sorts first among "/..."
            below.remove("/").map(|root| self.entries.insert("/".into(), root));
        }
        self.entries.append(&mut after);
    }

    pub fn get(&self, path: &str) -> Option<&Node> {
        self.entries.get(path)
    }

    /// Entries strictly below `dir`, in order.
    pub fn below<'a>(&'a self, dir: &str) -> impl Iterator<Item = (&'a str, &'a Node)> + 'a {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        self.entries.range::<str, _>((std::ops::Bound::Included(prefix.as_str()), std::ops::Bound::Unbounded)).map(|(k, v)| (&**k, v)).take_while(move |(k, _)| k.starts_with(&prefix))
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

impl LayerIndex {
    /// Serialise (uncompressed; the cache compresses around it).
    pub fn write(&self, w: impl Write) -> io::Result<()> {
        let mut w = Hashing { inner: w, hash: Sha256::new() };
        w.write_all(MAGIC)?;
        w.write_all(&VERSION.to_le_bytes())?;
        put_str(&mut w, &self.digest)?;
        put_str(&mut w, &self.diff_id)?;
        w.write_all(&(self.ops.len() as u64).to_le_bytes())?;
        for op in &self.ops {
            match op {
                Op::Put(path, n) => {
                    w.write_all(&[0])?;
                    put_str(&mut w, path)?;
                    let flags = u8::from(n.digest.is_some()) | u8::from(n.norm.is_some()) << 1 | u8::from(n.link.is_some()) << 2 | u8::from(n.text.is_some()) << 3;
                    w.write_all(&[n.kind.code(), flags])?;
                    for v in [n.mode, n.uid, n.gid] {
                        w.write_all(&v.to_le_bytes())?;
                    }
                    w.write_all(&n.size.to_le_bytes())?;
                    if let Some(d) = &n.digest {
                        w.write_all(d)?;
                    }
                    if let Some(d) = &n.norm {
                        w.write_all(&d[..])?;
                    }
                    if let Some(l) = &n.link {
                        put_str(&mut w, l)?;
                    }
                    if let Some(t) = &n.text {
                        w.write_all(&t.offset.to_le_bytes())?;
                        w.write_all(&t.len.to_le_bytes())?;
                    }
                }
                Op::Whiteout(p) => {
                    w.write_all(&[1])?;
                    put_str(&mut w, p)?;
                }
                Op::Opaque(p) => {
                    w.write_all(&[2])?;
                    put_str(&mut w, p)?;
                }
                Op::Hostile { path, reason } => {
                    w.write_all(&[3])?;
                    put_str(&mut w, path)?;
                    put_str(&mut w, reason)?;
                }
            }
        }
        let sum = w.hash.clone().finalize();
        w.inner.write_all(&sum)?;
        w.flush()
    }

    /// Read what [`LayerIndex::write`] wrote; any damage is an error.
    pub fn read(r: impl Read) -> io::Result<LayerIndex> {
        let mut r = Hashed { inner: r, hash: Sha256::new() };
        if &get::<8>(&mut r)? != MAGIC || get_u32(&mut r)? != VERSION {
            return Err(bad("not a layer index of this version"));
        }
        let digest = get_str(&mut r)?.into();
        let diff_id = get_str(&mut r)?.into();
        let count = get_u64(&mut r)?;
        let mut ops = Vec::with_capacity(count.min(1 << 16) as usize);
        for _ in 0..count {
            let [tag] = get::<1>(&mut r)?;
            ops.push(match tag {
                0 => {
                    let path = get_str(&mut r)?;
                    let [kind, flags] = get::<2>(&mut r)?;
                    let kind = Kind::from_code(kind).ok_or_else(|| bad("unknown entry kind"))?;
                    let (mode, uid, gid, size) = (get_u32(&mut r)?, get_u32(&mut r)?, get_u32(&mut r)?, get_u64(&mut r)?);
                    let digest = if flags & 1 != 0 { Some(get::<32>(&mut r)?) } else { None };
                    let norm = if flags & 2 != 0 { Some(Box::new(get::<32>(&mut r)?)) } else { None };
                    let link = if flags & 4 != 0 { Some(get_str(&mut r)?) } else { None };
                    let text = if flags & 8 != 0 { Some(TextRef { layer: 0, offset: get_u64(&mut r)?, len: get_u32(&mut r)? }) } else { None };
                    Op::Put(path, Node { kind, mode, uid, gid, size, digest, norm, link, text, layer: 0 })
                }
                1 => Op::Whiteout(get_str(&mut r)?),
                2 => Op::Opaque(get_str(&mut r)?),
                3 => Op::Hostile { path: get_str(&mut r)?, reason: get_str(&mut r)? },
                _ => return Err(bad("unknown record")),
            });
        }
        let expected = r.hash.clone().finalize();
        if get::<32>(&mut r.inner)?[..] != expected[..] {
            return Err(bad("checksum mismatch"));
        }
        Ok(LayerIndex { digest, diff_id, ops })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn file(content: &[u8]) -> Node {
        Node { kind: Kind::File, mode: 0o644, uid: 0, gid: 0, size: content.len() as u64, digest: Some(Sha256::digest(content).into()), norm: None, link: None, text: None, layer: 0 }
    }

    pub fn dir() -> Node {
        Node { kind: Kind::Dir, mode: 0o755, digest: None, size: 0, ..file(b"") }
    }

    fn layer(ops: Vec<Op>) -> LayerIndex {
        LayerIndex { digest: "sha256:x".into(), diff_id: String::new(), ops }
    }

    fn put(p: &str, n: Node) -> Op {
        Op::Put(p.into(), n)
    }

    fn paths(fs: &FsIndex) -> Vec<&str> {
        fs.entries.keys().map(|k| &**k).collect()
    }

    #[test]
    fn whiteouts_opaque_dirs_and_replacements() {
        let mut fs = FsIndex::default();
        fs.apply(0, &layer(vec![put("/", dir()), put("/a", dir()), put("/a/x", file(b"x")), put("/a/y", file(b"y")), put("/a0", file(b"")), put("/b", dir()), put("/b/z", file(b"z"))]));
        fs.apply(1, &layer(vec![Op::Whiteout("/a/x".into()), Op::Opaque("/b".into()), put("/b/new", file(b"n")), put("/a/y", file(b"y2"))]));
        assert_eq!(paths(&fs), ["/", "/a", "/a/y", "/a0", "/b", "/b/new"]);
        assert_eq!(fs.get("/a/y").unwrap().layer, 1);
        // a file replacing a directory hides its children; a whiteout of a dir removes the subtree
        fs.apply(2, &layer(vec![put("/b", file(b"now a file")), Op::Whiteout("/a".into())]));
        assert_eq!(paths(&fs), ["/", "/a0", "/b"]);
        fs.apply(3, &layer(vec![Op::Opaque("/".into())]));
        assert_eq!(paths(&fs), ["/"]);
    }

    #[test]
    fn hardlinks_take_their_targets_content() {
        let mut fs = FsIndex::default();
        let link = Node { kind: Kind::Hardlink, link: Some("/bin/busybox".into()), mode: 0o755, ..file(b"") };
        fs.apply(0, &layer(vec![put("/bin/busybox", file(b"elf")), put("/usr/bin/env", link.clone()), put("/dangling", Node { link: Some("/nope".into()), ..link })]));
        let env = fs.get("/usr/bin/env").unwrap();
        assert_eq!((env.kind, env.digest, env.size), (Kind::File, file(b"elf").digest, 3));
        assert_eq!(fs.get("/dangling").unwrap().kind, Kind::Hardlink);
        assert_eq!(fs.below("/bin").count(), 1);
    }

    #[test]
    fn serialisation_round_trips_and_detects_damage() {
        let mut n = file(b"code");
        n.norm = Some(Box::new([7; 32]));
        n.text = Some(TextRef { layer: 0, offset: 9, len: 4 });
        let idx = LayerIndex {
            digest: "sha256:ab".into(),
            diff_id: "sha256:cd".into(),
            ops: vec![
                put("/x.pyc", n),
                put("/l", Node { kind: Kind::Symlink, link: Some("x".into()), digest: None, ..file(b"") }),
                Op::Whiteout("/w".into()),
                Op::Opaque("/o".into()),
                Op::Hostile { path: "/../etc".into(), reason: "escapes".into() },
            ],
        };
        let mut bytes = Vec::new();
        idx.write(&mut bytes).unwrap();
        assert_eq!(LayerIndex::read(&bytes[..]).unwrap(), idx);
        for cut in [0, 10, bytes.len() - 1] {
            assert!(LayerIndex::read(&bytes[..cut]).is_err());
        }
        let mut flipped = bytes.clone();
        flipped[30] ^= 1;
        assert!(LayerIndex::read(&flipped[..]).is_err());
    }
}
