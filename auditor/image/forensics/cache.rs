//! The layer index cache: one directory, two files per layer blob digest
//! and content hash —
//! `<hex>.idx` (the layer's index, [`super::layerfile`], zstd-compressed)
//! and `<hex>.pack` (the small text files captured while walking, one zstd
//! frame each, for unified diffs and dist-info metadata); `<hex>.blake3.idx`
//! and `.blake3.pack` for an index that keeps BLAKE3 ([`ContentHash`]:
//! `image diff`'s), so a verify after a diff walks the layer again. Auditing a
//! hundred submissions against one upstream reads the upstream's layers
//! once. A walk streams its index into the cache and the merge streams it
//! back out, so no layer's entries are ever held in memory as a list.
//!
//! Keyed by the blob digest the manifest names, which the walk verified
//! while reading: a config's diff-id is not trusted to skip a read (a
//! config can claim any diff-id, and not every runtime checks it).
//! Writes go to a temporary file renamed into place, so concurrent runs
//! and crashes never leave a half-written entry; the pack is renamed
//! before the index, so an index always has its pack. The cache is kept
//! under a size bound by evicting the least recently used layers, once a
//! command is done with the layers it uses.

use super::content::ContentHash;
use super::file_index::{FsIndex, Op};
use super::layerfile::{IndexReader, IndexWriter, Stopped};
use super::node::TextRef;
use crate::image::source::digest::is_valid_digest;
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
pub(super) struct Cache {
    dir: PathBuf,
    max_bytes: u64,
    /// The content hash of the indexes this command reads and writes.
    hash: ContentHash,
}

/// A layer being walked into the cache: its index and its text pack,
/// each in a temporary file until [`Cache::store`] renames them in.
pub(super) struct LayerWriter {
    digest: String,
    hash: ContentHash,
    index: Option<IndexWriter<zstd::stream::write::Encoder<'static, BufWriter<File>>>>,
    index_tmp: PathBuf,
    pack: BufWriter<File>,
    pack_tmp: PathBuf,
    /// One compression context for every text of the layer (a context per
    /// text cost more than compressing a small source file).
    packer: zstd::bulk::Compressor<'static>,
    offset: u64,
    /// The first write error: the walk stops at its next entry.
    failed: Option<io::Error>,
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);

impl LayerWriter {
    /// Append one op of the layer's index.
    pub(super) fn op(&mut self, op: &Op) {
        if self.failed.is_none()
            && let Some(Err(e)) = self.index.as_mut().map(|w| w.op(op))
        {
            self.failed = Some(e);
        }
    }

    /// The first write error so far, if any (taken: the walk ends with it).
    pub(super) fn check(&mut self) -> io::Result<()> {
        self.failed.take().map_or(Ok(()), Err)
    }

    /// The content hash this layer's index keeps.
    pub(super) fn hash(&self) -> ContentHash {
        self.hash
    }

    /// Append one text to the pack; where to find it again.
    pub(super) fn text(&mut self, data: &[u8]) -> io::Result<TextRef> {
        let frame = self.packer.compress(data)?;
        self.pack.write_all(&frame)?;
        let at = TextRef { layer: 0, offset: self.offset, len: frame.len() as u32 };
        self.offset += frame.len() as u64;
        Ok(at)
    }
}

impl Drop for LayerWriter {
    fn drop(&mut self) {
        // gone after a successful rename; a failed walk leaves nothing behind
        let _ = fs::remove_file(&self.index_tmp);
        let _ = fs::remove_file(&self.pack_tmp);
    }
}

/// What [`Cache::apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Applied {
    Done,
    /// Applied up to where a limit stopped the layer's walk: what the
    /// report says of the rest.
    Stopped(String),
    /// Not cached, or damaged or foreign: nothing applied (walk it again).
    Missing,
    /// Stopped part way: the merged index passed its entry limit (and
    /// what a limit of the layer's own walk left unread, if one did).
    Full(Option<String>),
}

/// A reader of an index file, from its current position.
fn index_reader(file: &File) -> io::Result<IndexReader<impl Read + '_>> {
    IndexReader::new(BufReader::new(zstd::stream::read::Decoder::new(file)?))
}

/// `$XDG_CACHE_HOME/auditor`, else `$HOME/.cache/auditor`.
pub fn default_dir() -> Option<PathBuf> {
    let nonempty = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty()).map(PathBuf::from);
    nonempty("XDG_CACHE_HOME").or_else(|| nonempty("HOME").map(|h| h.join(".cache"))).map(|d| d.join("auditor"))
}

impl Cache {
    /// Open (creating) the cache under `dir`, for indexes that keep `hash`.
    pub(super) fn open(dir: &Path, max_bytes: u64, hash: ContentHash) -> io::Result<Cache> {
        let dir = dir.join("layers-v1");
        fs::create_dir_all(&dir).map_err(|e| io::Error::new(e.kind(), format!("cannot create cache directory {}: {e}", dir.display())))?;
        Ok(Cache { dir, max_bytes, hash })
    }

    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, digest: &str, ext: &str) -> Option<PathBuf> {
        let alg = match self.hash {
            ContentHash::Sha256 => "",
            ContentHash::Blake3 => ".blake3",
        };
        is_valid_digest(digest).then(|| self.dir.join(format!("{}{alg}.{ext}", digest.replace(':', "-"))))
    }

    /// Whether the layer is cached.
    pub(super) fn has(&self, digest: &str) -> bool {
        self.path(digest, "idx").is_some_and(|p| p.is_file())
    }

    /// Apply the cached index of layer blob `digest` to `fs` as its layer
    /// `layer`, stopping once `fs` holds more than `max_entries` paths.
    /// The file is read twice through one handle: whole first, for its
    /// checksum, its whiteouts and whether a limit stopped its walk (then
    /// it is used only under the same limits, `walk_key`), then for its
    /// entries, moved into `fs` one at a time.
    pub(super) fn apply(&self, digest: &str, layer: u16, fs: &mut FsIndex, max_entries: u64, walk_key: [u64; 4]) -> io::Result<Applied> {
        let Some(path) = self.path(digest, "idx") else { return Ok(Applied::Missing) };
        let Ok(mut file) = File::open(&path) else { return Ok(Applied::Missing) };
        let checked = (|| -> io::Result<Option<(Vec<Op>, Option<Stopped>)>> {
            let mut r = index_reader(&file)?;
            if r.digest != digest || r.hash != self.hash {
                return Ok(None);
            }
            let mut hides = Vec::new();
            while let Some(op) = r.next_op()? {
                if matches!(op, Op::Whiteout(_) | Op::Opaque(_)) {
                    hides.push(op);
                }
            }
            Ok(Some((hides, r.stopped)))
        })();
        let Ok(Some((hides, stopped))) = checked else { return Ok(Applied::Missing) };
        if stopped.as_ref().is_some_and(|s| s.limits != walk_key) {
            return Ok(Applied::Missing);
        }
        for op in &hides {
            fs.hide(layer, op);
        }
        file.seek(SeekFrom::Start(0))?;
        let mut r = index_reader(&file)?;
        while let Some(op) = r.next_op()? {
            fs.add(layer, op);
            if fs.entries.len() as u64 > max_entries {
                return Ok(Applied::Full(stopped.map(|s| s.text)));
            }
        }
        fs.unlisted += r.unlisted;
        // a use counts as recent, for eviction
        let _ = file.set_modified(SystemTime::now());
        Ok(stopped.map_or(Applied::Done, |s| Applied::Stopped(s.text)))
    }

    /// Start walking layer blob `digest` (whose diff-id is `diff_id`) into the cache.
    pub(super) fn begin(&self, digest: &str, diff_id: &str) -> io::Result<LayerWriter> {
        let not_digest = || io::Error::new(io::ErrorKind::InvalidInput, format!("not a digest: {digest}"));
        let tmp = |ext: &str| -> io::Result<PathBuf> {
            let path = self.path(digest, ext).ok_or_else(not_digest)?;
            Ok(path.with_extension(format!("{ext}.tmp-{}-{}", std::process::id(), UNIQUE.fetch_add(1, Ordering::Relaxed))))
        };
        let (index_tmp, pack_tmp) = (tmp("idx")?, tmp("pack")?);
        let pack = BufWriter::new(File::create(&pack_tmp)?);
        let mut writer = LayerWriter {
            digest: digest.to_string(),
            hash: self.hash,
            index: None,
            index_tmp,
            pack,
            pack_tmp,
            packer: zstd::bulk::Compressor::new(1)?,
            offset: 0,
            failed: None,
        };
        let encoder = zstd::stream::write::Encoder::new(BufWriter::new(File::create(&writer.index_tmp)?), 3)?;
        writer.index = Some(IndexWriter::new(encoder, digest, diff_id, self.hash)?);
        Ok(writer)
    }

    /// Store a walked layer (`unlisted` hostile entries beyond those
    /// written; where a limit stopped it): its pack, then its index, each
    /// renamed into place.
    pub(super) fn store(&self, mut layer: LayerWriter, unlisted: u64, stopped: Option<&Stopped>) -> io::Result<()> {
        layer.check()?;
        let (Some(idx_path), Some(pack_path), Some(index)) = (self.path(&layer.digest, "idx"), self.path(&layer.digest, "pack"), layer.index.take()) else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a digest: {}", layer.digest)));
        };
        layer.pack.flush()?;
        layer.pack.get_ref().sync_data()?;
        let mut file = index.finish(unlisted, stopped)?.finish()?;
        file.flush()?;
        file.get_ref().sync_data()?;
        fs::rename(&layer.pack_tmp, &pack_path)?;
        fs::rename(&layer.index_tmp, &idx_path)
    }

    /// A captured text of layer `digest`.
    pub(super) fn text(&self, digest: &str, at: TextRef) -> io::Result<Vec<u8>> {
        let path = self.path(digest, "pack").ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("not a digest: {digest}")))?;
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(at.offset))?;
        let mut frame = Vec::with_capacity(at.len as usize);
        file.take(u64::from(at.len)).read_to_end(&mut frame)?;
        let mut out = Vec::new();
        zstd::stream::read::Decoder::new(&frame[..])?.take(MAX_TEXT as u64).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Delete least recently used layers until the cache fits its bound
    /// (after a command, so no layer it reads is evicted under it).
    pub(super) fn evict(&self) {
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
    use crate::image::forensics::file_index::tests::{apply, file};
    use crate::image::forensics::node::Node;

    const D1: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    const D2: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
    const KEY: [u64; 4] = [1, 2, 3, 4];

    fn stored(cache: &Cache, digest: &str, text: &[u8]) -> TextRef {
        let mut layer = cache.begin(digest, "sha256:00").unwrap();
        let at = layer.text(text).unwrap();
        layer.op(&Op::Put("/a.py".into(), Node { text: Some(at), ..file(text) }));
        layer.op(&Op::Whiteout("/gone".into()));
        cache.store(layer, 3, None).unwrap();
        at
    }

    fn applied(cache: &Cache, digest: &str) -> Option<FsIndex> {
        let mut fs = FsIndex::default();
        apply(&mut fs, 0, vec![Op::Put("/gone".into(), file(b"old"))]);
        (cache.apply(digest, 1, &mut fs, 10, KEY).unwrap() == Applied::Done).then_some(fs)
    }

    #[test]
    fn stores_applies_texts_and_rejects_damage() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), DEFAULT_MAX_BYTES, ContentHash::Sha256).unwrap();
        assert!(applied(&cache, D1).is_none() && !cache.has(D1));
        let at = stored(&cache, D1, b"print('hi')\n");
        let fs = applied(&cache, D1).unwrap();
        assert_eq!((fs.get("/a.py").unwrap().digest, fs.get("/gone"), fs.unlisted), (file(b"print('hi')\n").digest, None, 3));
        assert_eq!(cache.text(D1, at).unwrap(), b"print('hi')\n");
        // an index that would pass the entry limit is applied only up to it
        let mut full = FsIndex::default();
        apply(&mut full, 0, vec![Op::Put("/x".into(), file(b""))]);
        assert_eq!(cache.apply(D1, 1, &mut full, 1, KEY).unwrap(), Applied::Full(None));
        // no temporary files remain
        assert_eq!(fs::read_dir(cache.dir()).unwrap().count(), 2);
        // damage reads as a miss, with nothing applied; a non-digest is never a path
        let idx = cache.path(D1, "idx").unwrap();
        let mut bytes = fs::read(&idx).unwrap();
        let mid = bytes.len() / 2;
        bytes.truncate(mid);
        fs::write(&idx, bytes).unwrap();
        assert!(applied(&cache, D1).is_none());
        assert_eq!(cache.apply("sha256:../../etc/passwd", 0, &mut FsIndex::default(), 10, KEY).unwrap(), Applied::Missing);
        assert!(cache.begin("x", "").is_err());
        // a walk that is dropped (failed) leaves nothing behind
        drop(cache.begin(D2, "").unwrap());
        assert_eq!(fs::read_dir(cache.dir()).unwrap().count(), 2);
    }

    #[test]
    fn an_index_of_one_content_hash_is_never_read_for_another() {
        let dir = tempfile::tempdir().unwrap();
        let (sha, b3) = (
            Cache::open(dir.path(), DEFAULT_MAX_BYTES, ContentHash::Sha256).unwrap(),
            Cache::open(dir.path(), DEFAULT_MAX_BYTES, ContentHash::Blake3).unwrap(),
        );
        stored(&sha, D1, b"one");
        assert!(sha.has(D1) && !b3.has(D1) && applied(&b3, D1).is_none());
        // renamed by hand into the other's name, its header still says SHA-256
        fs::rename(sha.path(D1, "idx").unwrap(), b3.path(D1, "idx").unwrap()).unwrap();
        fs::rename(sha.path(D1, "pack").unwrap(), b3.path(D1, "pack").unwrap()).unwrap();
        assert!(b3.has(D1) && applied(&b3, D1).is_none());
    }

    #[test]
    fn evicts_least_recently_used_beyond_the_bound_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), 1, ContentHash::Sha256).unwrap();
        stored(&cache, D1, b"one");
        assert!(cache.has(D1), "a layer being used is not evicted under its command");
        cache.evict();
        assert!(!cache.has(D1), "over the bound");
        let roomy = Cache::open(dir.path(), DEFAULT_MAX_BYTES, ContentHash::Sha256).unwrap();
        stored(&roomy, D1, b"one");
        stored(&roomy, D2, b"two");
        roomy.evict();
        assert!(roomy.has(D1) && roomy.has(D2));
    }
}
