//! Walk one layer: its tar stream (decompressed and verified by the image
//! source) becomes the layer's index in the cache, in one pass, each op
//! written as it is found. Every file is hashed while it streams by (a
//! `.pyc` also without its header); small text files that later findings
//! quote — Python sources, `.pth` hooks, patch files, dist-info metadata
//! such as `RECORD` — are captured into the layer's text pack in the
//! cache, never anywhere else. Memory is one read buffer plus at most one
//! captured file, whatever the layer's size or entry count.
//!
//! OCI layer semantics are recorded, not applied: `.wh.NAME` is a
//! whiteout, `.wh..wh..opq` an opaque directory, hard links keep their
//! target path ([`super::file_index::FsIndex::apply`] merges and follows
//! symlinks). What can be judged from one entry alone is judged here and
//! cached with the layer: names that cannot be index keys (`..`, a NUL,
//! not UTF-8, longer than `PATH_MAX`) are hostile entries, not applied;
//! an absolute name is applied inside the root and reported; a type flag
//! no layer holds is reported and skipped. The layer's size, expansion
//! and entry limits ([`LayerLimits`]) are checked at every header, before
//! its data is read; they stop the walk, so nothing cached depends on
//! them (the path depth limit is the merge's).

use super::cache::LayerWriter;
use super::file_index::{MAX_LISTED, Op};
use super::node::{Kind, Node};
use super::noise::{PYC_HEADER, is_pyc};
use super::paths::{join, normalise, shown, split, symlink_target};
use super::pyc::Pyc;
use crate::image::limits::{LayerLimits, Overrun};
use crate::image::source::decompress::Compression;
use crate::image::source::tamper_of;
use crate::image::{Image, ImageError};
use crate::tarstream::{EntryType, Header, TarReader};
use std::io::{self, BufReader, Read};
use std::time::{Duration, Instant};

/// Largest source or hook file captured for quoting.
const MAX_CAPTURE: u64 = 1 << 20;
/// Largest dist-info `RECORD` captured (a torch RECORD is a few MiB).
const MAX_RECORD: u64 = 16 << 20;

/// How a walk ended: the count of hostile entries not listed, and, when
/// a limit stopped it, what the report says of the part not examined.
#[derive(Debug, Default)]
pub(super) struct Walked {
    pub unlisted: u64,
    pub stopped: Option<String>,
}

/// Walk layer `index` of `image` into `out`. The layer stream is read to
/// its end, so its blob digest is verified before the walk
/// succeeds (and the cache stores it). A limit stops the walk at an
/// entry: what was written before it stays (and is applied), a bomb is a
/// hostile entry, and the headers after it are still read for
/// `--max-scan-seconds`, listing hostile names without applying anything.
pub(super) fn walk(image: &Image, index: usize, out: &mut LayerWriter, limits: &LayerLimits) -> Result<Walked, ImageError> {
    let context = format!("layer {index}");
    let io_err = |e: io::Error| ImageError::from_io(&image.reference, &context, e);
    let layer = &image.layers[index];
    let compressed = matches!(Compression::of_media_type(&layer.media_type), Some(Compression::Gzip | Compression::Zstd)).then_some(layer.size).flatten();
    let budget = limits.budget(compressed);
    let stream = image.open_layer_tar(index)?;
    let mut tar = TarReader::new(BufReader::with_capacity(1 << 18, stream));
    let mut found = Found { out, hostile: 0, unlisted: 0 };
    let mut entries = 0u64;
    let mut buf = vec![0u8; 1 << 18];
    while let Some(h) = tar.next_header().map_err(io_err)? {
        entries += 1;
        let within = match entries > limits.max_entries {
            true => Err(Overrun::Entries { max: limits.max_entries }),
            false => budget.check(tar.entry_end(), || shown(&h.path)),
        };
        if let Err(overrun) = within {
            found.bomb(&overrun);
            found.names_only(&h);
            let deadline = Instant::now() + Duration::from_secs(limits.scan_seconds);
            let scan = match limits.scan_seconds {
                0 => None,
                _ => Some(scan_rest(&mut tar, &mut found, &mut buf, deadline).map_err(io_err)?),
            };
            let stopped = format!("{overrun}; entries from #{entries} on not examined{}", scan.map_or(String::new(), |s| s.to_string()));
            return found.finish(Some(stopped)).map_err(|e| cache_err(image, &context, e));
        }
        found.out.check().map_err(|e| cache_err(image, &context, e))?;
        let Some((path, kind)) = found.admit(&h) else { continue };
        let (parent, name) = split(&path);
        if let Some(hidden) = name.strip_prefix(".wh.") {
            if hidden == ".wh..opq" {
                found.out.op(&Op::Opaque(parent.into()));
            } else if !hidden.starts_with(".wh.") && !hidden.is_empty() {
                found.out.op(&Op::Whiteout(join(parent, hidden).into()));
            }
            continue;
        }
        let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let mut node =
            Node { kind, mode: h.mode, uid: clamp(h.uid), gid: clamp(h.gid), size: h.size, digest: None, pyc: None, link: None, text: None, layer: 0 };
        match kind {
            Kind::File => hash_file(&mut tar, &path, &mut node, &mut buf, found.out).map_err(io_err)?,
            Kind::Symlink | Kind::Hardlink => match found.link(&h, &path) {
                Some(link) => node.link = Some(link.into()),
                None => continue,
            },
            _ => {}
        }
        found.out.op(&Op::Put(path.into(), node));
    }
    // the end marker is not the end of the stream: drain it so the
    // verifying readers below check the blob digest — as far as the
    // budget allows, or a bomb hides after the marker
    let end = tar.position();
    let allowed = budget.bytes.saturating_sub(end);
    let drained = io::copy(&mut tar.into_inner().take(allowed.saturating_add(1)), &mut io::sink()).map_err(io_err)?;
    let stopped = budget.check(end + drained, || "(data after the end-of-archive marker)".into()).err().map(|overrun| {
        found.bomb(&overrun);
        format!("{overrun}; every entry before the end-of-archive marker was examined, the blob's digest was not verified")
    });
    found.finish(stopped).map_err(|e| cache_err(image, &context, e))
}

fn cache_err(image: &Image, context: &str, source: io::Error) -> ImageError {
    ImageError::Io { reference: image.reference.clone(), context: format!("{context}: writing its index to the cache"), source }
}

/// How reading headers after a limit ended.
enum Scan {
    /// The end-of-archive marker was reached after `headers` headers.
    Finished { headers: u64 },
    /// The time budget ran out after `headers` headers.
    OutOfTime { headers: u64, seconds: u64 },
    /// The stream could not be read further.
    Unreadable { headers: u64, error: String },
}

impl std::fmt::Display for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scan::Finished { headers } => {
                write!(f, "; the {headers} tar header(s) after it were read to the layer's end for hostile entries only, and its blob's digest verified")
            }
            Scan::OutOfTime { headers, seconds } => write!(
                f,
                "; {headers} tar header(s) after it were read for hostile entries in {seconds} s (--max-scan-seconds), the rest of the layer was not (its blob's digest was not verified)"
            ),
            Scan::Unreadable { headers, error } => write!(f, "; {headers} tar header(s) after it were read for hostile entries, then: {error}"),
        }
    }
}

/// Read `stream` to its end in chunks, checking `deadline` as it goes (so
/// it holds inside a huge entry, and after the end marker, where the
/// verifying readers below check the blob); whether it got there.
fn drain<R: Read>(stream: &mut R, buf: &mut [u8], deadline: Instant) -> io::Result<bool> {
    let mut chunks = 0u32;
    while stream.read(buf)? > 0 {
        chunks = chunks.wrapping_add(1);
        if chunks.is_multiple_of(64) && Instant::now() >= deadline {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Read the headers after a limit until the end marker or `deadline`,
/// skipping data in chunks (so the deadline holds inside a huge entry),
/// and report hostile names and link targets; nothing is applied. A
/// tampered blob is still an error.
fn scan_rest<R: Read>(tar: &mut TarReader<R>, found: &mut Found, buf: &mut [u8], deadline: Instant) -> io::Result<Scan> {
    let mut headers = 0u64;
    // a tampered blob is the layer's finding; any other error only ends the scan
    let unreadable = |headers, e: io::Error| match tamper_of(&e) {
        Some(_) => Err(e),
        None => Ok(Scan::Unreadable { headers, error: e.to_string() }),
    };
    let seconds = deadline.saturating_duration_since(Instant::now()).as_secs().max(1);
    loop {
        match drain(&mut tar.data(), buf, deadline) {
            Ok(true) if Instant::now() < deadline => {}
            Ok(_) => return Ok(Scan::OutOfTime { headers, seconds }),
            Err(e) => return unreadable(headers, e),
        }
        let h = match tar.next_header() {
            Ok(Some(h)) => h,
            // past the end marker, to the stream's end: the blob is verified there
            Ok(None) => {
                return match drain(tar.inner_mut(), buf, deadline) {
                    Ok(true) => Ok(Scan::Finished { headers }),
                    Ok(false) => Ok(Scan::OutOfTime { headers, seconds }),
                    Err(e) => unreadable(headers, e),
                };
            }
            Err(e) => return unreadable(headers, e),
        };
        headers += 1;
        found.names_only(&h);
    }
}

/// Where the walk writes what it finds, and the count of hostile entries
/// listed and beyond.
struct Found<'a> {
    out: &'a mut LayerWriter,
    hostile: usize,
    unlisted: u64,
}

impl Found<'_> {
    /// A limit that is a decompression bomb is a hostile entry.
    fn bomb(&mut self, overrun: &Overrun) {
        if let Some(path) = overrun.bomb() {
            self.hostile(|| (path.to_string(), format!("{overrun}; the layer is not examined from this entry on")));
        }
    }

    /// What one header shows past a limit: hostile names and link
    /// targets are reported, nothing is applied.
    fn names_only(&mut self, h: &Header) {
        if let Some((path, Kind::Symlink | Kind::Hardlink)) = self.admit(h) {
            self.link(h, &path);
        }
    }

    fn finish(self, stopped: Option<String>) -> io::Result<Walked> {
        self.out.check()?;
        Ok(Walked { unlisted: self.unlisted, stopped })
    }

    /// A hostile entry: `report` gives its path and reason, asked for
    /// only while fewer than [`MAX_LISTED`] are listed.
    fn hostile(&mut self, report: impl FnOnce() -> (String, String)) {
        if self.hostile < MAX_LISTED {
            self.hostile += 1;
            let (path, reason) = report();
            self.out.op(&Op::Hostile { path: path.into(), reason: reason.into() });
        } else {
            self.unlisted += 1;
        }
    }

    /// The index key and kind of an entry, or `None` when it is not
    /// applied (and reported).
    fn admit(&mut self, h: &Header) -> Option<(String, Kind)> {
        if let Some(unread) = h.unread {
            self.hostile(|| (shown(&h.path), format!("{unread} (no image builder writes one that long): not applied")));
            return None;
        }
        if let Some(other) = &h.disagreement {
            self.hostile(|| {
                (shown(&h.path), format!("tar readers disagree on this header: {other}. Applied as Go's archive/tar (containerd, Docker) reads it"))
            });
        }
        let named = match normalise(&h.path) {
            Ok(named) => named,
            Err(why) => {
                self.hostile(|| (shown(&h.path), format!("the path {why}: not applied")));
                return None;
            }
        };
        let kind = match h.kind {
            EntryType::File => Kind::File,
            EntryType::Hardlink => Kind::Hardlink,
            EntryType::Symlink => Kind::Symlink,
            EntryType::Char => Kind::Char,
            EntryType::Block => Kind::Block,
            EntryType::Dir => Kind::Dir,
            EntryType::Fifo => Kind::Fifo,
            EntryType::Other(flag) => {
                self.hostile(|| {
                    (named.path, format!("tar entry type {:?} is no file type a layer holds (a runtime refuses the layer): not applied", char::from(flag)))
                });
                return None;
            }
        };
        if named.path == "/" && kind != Kind::Dir {
            self.hostile(|| (named.path, format!("the root directory replaced by a {}: not applied", kind.as_str())));
            return None;
        }
        if named.absolute {
            self.hostile(|| {
                (shown(&h.path), "an absolute path: applied inside the root, as a runtime does (an extractor that keeps it writes outside the image)".into())
            });
        }
        Some((named.path, kind))
    }

    /// A symlink's target (as written: the merge resolves it) or a hard
    /// link's target path; `None` when it is not applied (and reported).
    fn link(&mut self, h: &Header, path: &str) -> Option<String> {
        let (what, target) = match h.kind {
            EntryType::Symlink => ("symlink", symlink_target(&h.link)),
            _ => ("hard link", normalise(&h.link).map(|named| {
                // An absolute target is taken inside the root, as a runtime
                // does; an extractor that keeps it links a host file.
                if named.absolute {
                    self.hostile(|| (path.to_string(), format!("a hard link to the absolute path {}: applied inside the root, as a runtime does (an extractor that keeps it links a file of the host)", shown(&h.link))));
                }
                named.path
            })),
        };
        target.map_err(|why| self.hostile(|| (path.to_string(), format!("a {what} whose target {} {why}: not applied", shown(&h.link))))).ok()
    }
}

/// Hash a file's data as it streams (and its `.pyc` body); capture it when
/// it is a text later findings quote.
fn hash_file<R: io::Read>(tar: &mut TarReader<R>, path: &str, node: &mut Node, buf: &mut [u8], pack: &mut LayerWriter) -> io::Result<()> {
    let hash = pack.hash();
    let mut full = hash.hasher();
    let mut body = is_pyc(path).then(|| hash.hasher());
    let mut header = [0u8; PYC_HEADER as usize];
    let mut captured = captures(path, node.size).then(|| Vec::with_capacity(node.size as usize));
    let mut offset = 0u64;
    loop {
        let n = tar.read_data(buf)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        full.update(chunk);
        if let Some(b) = body.as_mut() {
            let skip = PYC_HEADER.saturating_sub(offset).min(n as u64) as usize;
            if skip > 0 {
                header[offset as usize..offset as usize + skip].copy_from_slice(&chunk[..skip]);
            }
            b.update(&chunk[skip..]);
        }
        if let Some(c) = captured.as_mut() {
            c.extend_from_slice(chunk);
        }
        offset += n as u64;
    }
    node.digest = Some(full.finish());
    node.pyc = body.map(|b| Box::new(Pyc { header, body: b.finish() }));
    if let Some(text) = captured {
        node.text = Some(pack.text(&text)?);
    }
    Ok(())
}

/// Whether a file is captured into the text pack.
fn captures(path: &str, size: u64) -> bool {
    let (parent, name) = split(path);
    let dir = split(parent).1;
    if dir.ends_with(".dist-info") || dir.ends_with(".egg-info") {
        return size <= if name == "RECORD" { MAX_RECORD } else { MAX_CAPTURE };
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    size <= MAX_CAPTURE && matches!(ext, "py" | "pth" | "sh" | "patch" | "diff" | "egg-link" | "txt" | "cfg" | "toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_captured() {
        assert!(captures("/usr/lib/python3/dist-packages/six.py", 1000));
        assert!(!captures("/usr/lib/python3/dist-packages/big.py", MAX_CAPTURE + 1));
        assert!(captures("/site/torch-2.5.0.dist-info/RECORD", MAX_RECORD));
        assert!(captures("/site/x-1.dist-info/direct_url.json", 100));
        assert!(!captures("/usr/lib/libfoo.so", 10));
    }
}
