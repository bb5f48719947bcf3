//! Walk one layer: its tar stream (decompressed and verified by the image
//! source) becomes a [`LayerIndex`] in one pass. Every file is hashed
//! while it streams by (a `.pyc` also without its header); small text
//! files that later findings quote — Python sources, `.pth` hooks, patch
//! files, dist-info metadata such as `RECORD` — are captured into the
//! layer's text pack in the cache, never anywhere else. Memory is one
//! read buffer plus at most one captured file, whatever the layer's size.
//!
//! OCI layer semantics are recorded, not applied: `.wh.NAME` is a
//! whiteout, `.wh..wh..opq` an opaque directory, hard links keep their
//! target path ([`super::index::FsIndex::apply`] merges). A path with a
//! `..` component is not applied: it is kept as a hostile entry.

use super::cache::PackWriter;
use super::index::{Kind, LayerIndex, Node, Op};
use super::noise::{is_pyc, PYC_HEADER};
use super::tarstream::{EntryType, TarReader};
use super::{Image, ImageError};
use sha2::{Digest as _, Sha256};
use std::io::{self, BufReader};

/// Largest source or hook file captured for quoting.
pub const MAX_CAPTURE: u64 = 256 << 10;
/// Largest dist-info `RECORD` captured (a torch RECORD is a few MiB).
pub const MAX_RECORD: u64 = 16 << 20;

/// Walk layer `index` of `image`, capturing texts into `pack`. The layer
/// stream is read to its end, so its digest and diff-id are verified
/// before the index is returned.
pub fn walk(image: &Image, index: usize, pack: &mut PackWriter) -> Result<LayerIndex, ImageError> {
    let context = format!("layer {index}");
    let io_err = |e: io::Error| ImageError::from_io(&image.reference, &context, e);
    let stream = image.open_layer_tar(index)?;
    let mut tar = TarReader::new(BufReader::with_capacity(1 << 17, stream));
    let mut ops = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    while let Some(h) = tar.next_header().map_err(io_err)? {
        let path = match normalise(&h.path) {
            Ok(p) => p,
            Err(reason) => {
                ops.push(Op::Hostile { path: String::from_utf8_lossy(&h.path).into(), reason: reason.into() });
                continue;
            }
        };
        let (parent, name) = split(&path);
        if let Some(hidden) = name.strip_prefix(".wh.") {
            if hidden == ".wh..opq" {
                ops.push(Op::Opaque(parent.into()));
            } else if !hidden.starts_with(".wh.") && !hidden.is_empty() {
                ops.push(Op::Whiteout(join(parent, hidden).into()));
            }
            continue;
        }
        let kind = match h.kind {
            EntryType::File => Kind::File,
            EntryType::Hardlink => Kind::Hardlink,
            EntryType::Symlink => Kind::Symlink,
            EntryType::Char => Kind::Char,
            EntryType::Block => Kind::Block,
            EntryType::Dir => Kind::Dir,
            EntryType::Fifo => Kind::Fifo,
        };
        let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let mut node = Node { kind, mode: h.mode, uid: clamp(h.uid), gid: clamp(h.gid), size: h.size, digest: None, norm: None, link: None, text: None, layer: 0 };
        match kind {
            Kind::File => hash_file(&mut tar, &path, &mut node, &mut buf, pack).map_err(io_err)?,
            Kind::Symlink => node.link = Some(String::from_utf8_lossy(&h.link).into()),
            Kind::Hardlink => match normalise(&h.link) {
                Ok(target) => node.link = Some(target.into()),
                Err(reason) => {
                    ops.push(Op::Hostile { path: path.into(), reason: format!("hard link target {}: {reason}", String::from_utf8_lossy(&h.link)).into() });
                    continue;
                }
            },
            _ => {}
        }
        ops.push(Op::Put(path.into(), node));
    }
    // the end marker is not the end of the stream: drain it so the
    // verifying readers below check digest and diff-id
    io::copy(&mut tar.into_inner(), &mut io::sink()).map_err(io_err)?;
    let layer = &image.layers[index];
    Ok(LayerIndex { digest: layer.digest.clone(), diff_id: layer.diff_id.clone().unwrap_or_default(), ops })
}

/// Hash a file's data as it streams (and its `.pyc` body); capture it when
/// it is a text later findings quote.
fn hash_file<R: io::Read>(tar: &mut TarReader<R>, path: &str, node: &mut Node, buf: &mut [u8], pack: &mut PackWriter) -> io::Result<()> {
    let mut full = Sha256::new();
    let mut body = is_pyc(path).then(Sha256::new);
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
            b.update(&chunk[skip..]);
        }
        if let Some(c) = captured.as_mut() {
            c.extend_from_slice(chunk);
        }
        offset += n as u64;
    }
    node.digest = Some(full.finalize().into());
    node.norm = body.map(|b| Box::new(b.finalize().into()));
    if let Some(text) = captured {
        node.text = Some(pack.add(&text)?);
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

/// `/a/b` from a tar path (`./a/b/`, `a//b`, `/a/b`); an error for `..`.
pub fn normalise(raw: &[u8]) -> Result<String, &'static str> {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(text.len() + 1);
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("a `..` component climbs out of its directory (a runtime would refuse or rewrite it)"),
            p => {
                out.push('/');
                out.push_str(p);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// (`/a`, `b`) of `/a/b`; (`/`, `x`) of `/x`.
pub fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(0) => ("/", &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("/", path),
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" { format!("/{name}") } else { format!("{dir}/{name}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(normalise(b"./usr//lib/").unwrap(), "/usr/lib");
        assert_eq!(normalise(b"/etc/passwd").unwrap(), "/etc/passwd");
        assert_eq!(normalise(b"./").unwrap(), "/");
        assert!(normalise(b"usr/../../etc").is_err());
        assert_eq!(split("/a/b"), ("/a", "b"));
        assert_eq!(split("/x"), ("/", "x"));
        assert_eq!(join("/", "x"), "/x");
    }

    #[test]
    fn what_is_captured() {
        assert!(captures("/usr/lib/python3/dist-packages/six.py", 1000));
        assert!(!captures("/usr/lib/python3/dist-packages/big.py", MAX_CAPTURE + 1));
        assert!(captures("/site/torch-2.5.0.dist-info/RECORD", MAX_RECORD));
        assert!(captures("/site/x-1.dist-info/direct_url.json", 100));
        assert!(!captures("/usr/lib/libfoo.so", 10));
    }
}
