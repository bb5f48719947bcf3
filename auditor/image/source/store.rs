//! Files of a local image, wherever they sit: in a directory (an OCI
//! layout) or inside an uncompressed tarball (`oci-archive`, `docker save`).
//! A tarball is indexed once — member name to byte range, symlinks and
//! hard links resolved — and every member is then read in place by seeking,
//! so nothing is extracted and any member can be opened again.

use crate::tarstream::{EntryType, TarReader};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Most members indexed in one tarball; the index is the only per-member
/// memory, and real image archives have a few per layer.
const MAX_MEMBERS: usize = 1_000_000;
/// Longest symlink chain followed inside a tarball.
const MAX_LINK_DEPTH: usize = 16;

/// Read access to the files of a local image.
pub(super) enum Store {
    Dir(PathBuf),
    Tar(TarIndex),
}

/// Where each regular member of a tarball lies.
pub(super) struct TarIndex {
    file: PathBuf,
    members: BTreeMap<String, (u64, u64)>,
}

impl Store {
    /// Open `path` in the store: a stream and its size.
    pub(super) fn open(&self, path: &str) -> io::Result<(Box<dyn Read + Send>, u64)> {
        match self {
            Store::Dir(root) => {
                let file = File::open(root.join(path))?;
                let size = file.metadata()?.len();
                Ok((Box::new(file), size))
            }
            Store::Tar(index) => {
                let &(offset, size) =
                    index.members.get(&normalise(path)).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{path}: no such member")))?;
                let mut file = File::open(&index.file)?;
                file.seek(SeekFrom::Start(offset))?;
                Ok((Box::new(file.take(size)), size))
            }
        }
    }

    /// Read a small file whole; larger than `limit` is an error.
    pub(super) fn read_small(&self, path: &str, limit: u64) -> io::Result<Vec<u8>> {
        let (reader, size) = self.open(path)?;
        if size > limit {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{path}: {size} bytes, more than the {limit} allowed")));
        }
        let mut out = Vec::with_capacity(size as usize);
        reader.take(limit + 1).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Whether `path` exists in the store.
    pub(super) fn contains(&self, path: &str) -> bool {
        match self {
            Store::Dir(root) => root.join(path).is_file(),
            Store::Tar(index) => index.members.contains_key(&normalise(path)),
        }
    }
}

impl TarIndex {
    /// Index an uncompressed tarball.
    pub(super) fn build(file: &Path) -> io::Result<TarIndex> {
        let mut archive = TarReader::new(BufReader::new(File::open(file)?));
        let mut members = BTreeMap::new();
        let mut links: Vec<(String, String)> = Vec::new();
        while let Some(header) = archive.next_header()? {
            if members.len() + links.len() >= MAX_MEMBERS {
                return Err(io::Error::new(io::ErrorKind::InvalidData, format!("more than {MAX_MEMBERS} members")));
            }
            if let Some(unread) = header.unread {
                return Err(io::Error::new(io::ErrorKind::InvalidData, format!("member {}: {unread}", String::from_utf8_lossy(&header.path))));
            }
            let name = normalise(&String::from_utf8_lossy(&header.path));
            match header.kind {
                EntryType::File => {
                    members.insert(name, (archive.position(), header.size));
                }
                EntryType::Symlink | EntryType::Hardlink => {
                    let target = String::from_utf8_lossy(&header.link).into_owned();
                    // symlinks are relative to the link's directory, hard links to the root
                    let target = if header.kind == EntryType::Symlink { join(parent(&name), &target) } else { normalise(&target) };
                    links.push((name, target));
                }
                _ => {}
            }
        }
        // a link to a link is followed (at most MAX_LINK_DEPTH steps); a
        // link whose chain ends nowhere stays out of the index
        let link_map: BTreeMap<&str, &str> = links.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        for (name, first) in &links {
            let mut target = first.as_str();
            for _ in 0..MAX_LINK_DEPTH {
                match link_map.get(target) {
                    Some(next) if !members.contains_key(target) => target = next,
                    _ => break,
                }
            }
            if let Some(&range) = members.get(target) {
                members.insert(name.clone(), range);
            }
        }
        Ok(TarIndex { file: file.to_path_buf(), members })
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `dir` joined with a relative `target`, `..` and `.` resolved (never
/// above the root).
fn join(dir: &str, target: &str) -> String {
    if target.starts_with('/') {
        return normalise(target);
    }
    normalise(&format!("{dir}/{target}"))
}

/// A member path without `./`, leading `/`, `.` and `..` (clamped at the root).
fn normalise(path: &str) -> String {
    crate::provenance::clamped(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(normalise("./blobs//sha256/ab"), "blobs/sha256/ab");
        assert_eq!(join("c86", "../653.tar"), "653.tar");
        assert_eq!(join("", "../../x"), "x");
        assert_eq!(join("a/b", "/abs"), "abs");
    }

    #[test]
    fn indexes_members_and_links_and_reads_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tar");
        let mut builder = tar::Builder::new(File::create(&path).unwrap());
        let mut add = |name: &str, data: &[u8]| {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            builder.append_data(&mut h, name, data).unwrap();
        };
        add("./abc.tar", b"layer bytes");
        add("manifest.json", b"[]");
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        h.set_cksum();
        builder.append_link(&mut h, "id/layer.tar", "../abc.tar").unwrap();
        builder.into_inner().unwrap();
        let store = Store::Tar(TarIndex::build(&path).unwrap());
        let (mut r, size) = store.open("id/layer.tar").unwrap();
        let mut out = String::new();
        r.read_to_string(&mut out).unwrap();
        assert_eq!((out.as_str(), size), ("layer bytes", 11));
        assert_eq!(store.read_small("manifest.json", 10).unwrap(), b"[]");
        assert!(store.read_small("abc.tar", 4).is_err());
        assert!(store.contains("abc.tar") && !store.contains("nope"));
        assert_eq!(store.open("nope").err().map(|e| e.kind()), Some(io::ErrorKind::NotFound));
    }
}
