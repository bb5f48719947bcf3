//! The layer index cache: one directory, two files per layer blob digest —
//! `<hex>.idx` (the [`LayerIndex`], zstd-compressed) and `<hex>.pack` (the
//! small text files captured while walking, one zstd frame each, for
//! unified diffs and dist-info metadata). Auditing a hundred submissions
//! against one upstream reads the upstream's layers once.
//!
//! Keyed by the blob digest the manifest names, which the walk verified
//! while reading: a config's diff-id is not trusted to skip a read (a
//! config can claim any diff-id, and not every runtime checks it).
//! Writes go to a temporary file renamed into place, so concurrent runs
//! and crashes never leave a half-written entry; the pack is renamed
//! before the index, so an index always has its pack. The cache is kept
//! under a size bound by evicting the least recently used layers.

use super::index::{LayerIndex, TextRef};
use super::verify::is_valid_digest;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// Largest text frame read back (the walk captures far less).
const MAX_TEXT: usize = 32 << 20;
/// Default bound of the cache directory.
pub const DEFAULT_MAX_BYTES: u64 = 8 << 30;

/// An opened cache directory.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    max_bytes: u64,
}

/// The text pack of a layer being walked.
pub struct PackWriter {
    file: BufWriter<File>,
    tmp: PathBuf,
    offset: u64,
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);

impl PackWriter {
    /// Append one text; where to find it again.
    pub fn add(&mut self, data: &[u8]) -> io::Result<TextRef> {
        let frame = zstd::bulk::compress(data, 3)?;
        self.file.write_all(&frame)?;
        let at = TextRef { layer: 0, offset: self.offset, len: frame.len() as u32 };
        self.offset += frame.len() as u64;
        Ok(at)
    }
}

impl Drop for PackWriter {
    fn drop(&mut self) {
        // gone after a successful rename; a failed walk leaves nothing behind
        let _ = fs::remove_file(&self.tmp);
    }
}

/// `$XDG_CACHE_HOME/auditor`, else `$HOME/.cache/auditor`.
pub fn default_dir() -> Option<PathBuf> {
    let nonempty = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty()).map(PathBuf::from);
    nonempty("XDG_CACHE_HOME").or_else(|| nonempty("HOME").map(|h| h.join(".cache"))).map(|d| d.join("auditor"))
}

impl Cache {
    /// Open (creating) the cache under `dir`.
    pub fn open(dir: &Path, max_bytes: u64) -> io::Result<Cache> {
        let dir = dir.join("layers-v1");
        fs::create_dir_all(&dir).map_err(|e| io::Error::new(e.kind(), format!("cannot create cache directory {}: {e}", dir.display())))?;
        Ok(Cache { dir, max_bytes })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, digest: &str, ext: &str) -> Option<PathBuf> {
        is_valid_digest(digest).then(|| self.dir.join(format!("{}.{ext}", digest.replace(':', "-"))))
    }

    /// Whether the layer is cached.
    pub fn has(&self, digest: &str) -> bool {
        self.path(digest, "idx").is_some_and(|p| p.is_file())
    }

    /// The cached index of a layer; a missing, damaged or foreign entry is
    /// `None` (and is walked again).
    pub fn load(&self, digest: &str) -> Option<LayerIndex> {
        let path = self.path(digest, "idx")?;
        let file = File::open(&path).ok()?;
        let decoder = zstd::stream::read::Decoder::new(BufReader::new(file)).ok()?;
        let index = LayerIndex::read(BufReader::new(decoder)).ok().filter(|i| i.digest == digest)?;
        // a use counts as recent, for eviction
        if let Ok(f) = File::options().append(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(index)
    }

    /// Start the text pack of a layer about to be walked.
    pub fn begin(&self, digest: &str) -> io::Result<PackWriter> {
        let final_path = self.path(digest, "pack").ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("not a digest: {digest}")))?;
        let tmp = final_path.with_extension(format!("pack.tmp-{}-{}", std::process::id(), UNIQUE.fetch_add(1, Ordering::Relaxed)));
        Ok(PackWriter { file: BufWriter::new(File::create(&tmp)?), tmp, offset: 0 })
    }

    /// Store a walked layer: its pack, then its index, each renamed into place.
    pub fn store(&self, index: &LayerIndex, pack: PackWriter) -> io::Result<()> {
        let (Some(idx_path), Some(pack_path)) = (self.path(&index.digest, "idx"), self.path(&index.digest, "pack")) else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a digest: {}", index.digest)));
        };
        let mut pack = pack;
        pack.file.flush()?;
        pack.file.get_ref().sync_data()?;
        fs::rename(&pack.tmp, &pack_path)?;
        let tmp = idx_path.with_extension(format!("idx.tmp-{}-{}", std::process::id(), UNIQUE.fetch_add(1, Ordering::Relaxed)));
        let written = (|| {
            let mut encoder = zstd::stream::write::Encoder::new(BufWriter::new(File::create(&tmp)?), 3)?;
            index.write(&mut encoder)?;
            let mut file = encoder.finish()?;
            file.flush()?;
            file.get_ref().sync_data()?;
            fs::rename(&tmp, &idx_path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written?;
        self.evict();
        Ok(())
    }

    /// A captured text of layer `digest`.
    pub fn text(&self, digest: &str, at: TextRef) -> io::Result<Vec<u8>> {
        let path = self.path(digest, "pack").ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("not a digest: {digest}")))?;
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(at.offset))?;
        let mut frame = Vec::with_capacity(at.len as usize);
        file.take(u64::from(at.len)).read_to_end(&mut frame)?;
        let mut out = Vec::new();
        zstd::stream::read::Decoder::new(&frame[..])?.take(MAX_TEXT as u64).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Delete least recently used layers until the cache fits its bound.
    fn evict(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        let mut layers: Vec<(SystemTime, PathBuf, u64)> = Vec::new();
        let mut total = 0;
        for e in entries.filter_map(Result::ok) {
            let Ok(meta) = e.metadata() else { continue };
            total += meta.len();
            let path = e.path();
            if path.extension().is_some_and(|x| x == "idx") {
                let pack = fs::metadata(path.with_extension("pack")).map_or(0, |m| m.len());
                layers.push((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), path, meta.len() + pack));
            }
        }
        layers.sort();
        for (_, idx, size) in layers {
            if total <= self.max_bytes {
                break;
            }
            let _ = fs::remove_file(&idx);
            let _ = fs::remove_file(idx.with_extension("pack"));
            total = total.saturating_sub(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::index::{Node, Op};

    const D1: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    const D2: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

    fn stored(cache: &Cache, digest: &str, text: &[u8]) -> LayerIndex {
        let mut pack = cache.begin(digest).unwrap();
        let at = pack.add(text).unwrap();
        let node = Node { text: Some(at), ..crate::image::index::tests::file(text) };
        let index = LayerIndex { digest: digest.into(), diff_id: String::new(), ops: vec![Op::Put("/a.py".into(), node)], unlisted: 0 };
        cache.store(&index, pack).unwrap();
        index
    }

    #[test]
    fn stores_loads_texts_and_rejects_damage() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), DEFAULT_MAX_BYTES).unwrap();
        assert!(cache.load(D1).is_none() && !cache.has(D1));
        let index = stored(&cache, D1, b"print('hi')\n");
        assert_eq!(cache.load(D1).as_ref(), Some(&index));
        let Op::Put(_, node) = &index.ops[0] else { unreachable!() };
        assert_eq!(cache.text(D1, node.text.unwrap()).unwrap(), b"print('hi')\n");
        // no temporary files remain
        assert_eq!(fs::read_dir(cache.dir()).unwrap().count(), 2);
        // damage reads as a miss; a non-digest is never a path
        let idx = cache.path(D1, "idx").unwrap();
        let mut bytes = fs::read(&idx).unwrap();
        let mid = bytes.len() / 2;
        bytes.truncate(mid);
        fs::write(&idx, bytes).unwrap();
        assert!(cache.load(D1).is_none());
        assert!(cache.load("sha256:../../etc/passwd").is_none() && cache.begin("x").is_err());
    }

    #[test]
    fn evicts_least_recently_used_beyond_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), 1).unwrap();
        stored(&cache, D1, b"one");
        assert!(!cache.has(D1), "over the bound: evicted at once");
        let roomy = Cache::open(dir.path(), DEFAULT_MAX_BYTES).unwrap();
        stored(&roomy, D1, b"one");
        stored(&roomy, D2, b"two");
        assert!(roomy.has(D1) && roomy.has(D2));
    }
}
