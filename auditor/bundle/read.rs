//! Walking a bundle: a directory tree, a zip archive, a (gzipped) tar
//! archive, or a single file. Archives are streamed member by member;
//! archives inside the bundle (srt-slurm log tarballs, a `setup.zip` beside
//! the logs, a zip in a tarball) are walked in place, so that what they hold
//! is judged like any other file: a member is named `outer.zip/inner/path`.

use super::ahead::{Ahead, Outcome, Planned};
use super::hashing::{Cap, HashingReader, hex};
use super::join;
use super::kind::{Format, format_by_name};
use super::zip_count;
use super::{Bundle, Disposition, Examine, FileRecord, FileStatus, Limits, MemberVisitor};
use crate::links;
use crate::tarstream::{EntryType, TarReader};
use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, BufReader, Cursor, Read, Seek};
use std::path::Path;
use thiserror::Error;

/// Most bytes of zips inside a bundle (in a tarball or another zip, where
/// they cannot be seeked) held in memory at once to read their central
/// directories, nested ones included; a zip past what is left is read from
/// its local headers as it streams past.
const ZIP_IN_MEMORY: u64 = 64 << 20;

#[derive(Debug, Error)]
pub enum BundleError {
    #[error("{path}: no such file or directory")]
    Missing { path: String },
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: nothing could be read: {reason}")]
    Unreadable { path: String, reason: String },
}

/// Sniff the format from the first bytes, falling back to the name.
fn format_of(head: &[u8], name: &str) -> Format {
    let by_name = format_by_name(name);
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Format::Zip
    } else if head.starts_with(&[0x1f, 0x8b]) {
        if by_name == Format::Gz { Format::Gz } else { Format::TarGz }
    } else if head.len() >= 262 && &head[257..262] == b"ustar" {
        Format::Tar
    } else {
        by_name
    }
}

/// Read the bundle at `path`, handing every regular file to `visitor`, and
/// hash every file (SHA-256).
pub fn read_bundle(path: &Path, limits: &Limits, visitor: &mut dyn MemberVisitor) -> Result<Bundle, BundleError> {
    read_bundle_with(path, limits, true, visitor)
}

/// [`read_bundle`], hashing file contents only when `hash` is set (the
/// bundle and its files then have no `sha256`).
pub fn read_bundle_with(path: &Path, limits: &Limits, hash: bool, visitor: &mut dyn MemberVisitor) -> Result<Bundle, BundleError> {
    let label = path.display().to_string();
    let io_err = |source| BundleError::Io { path: label.clone(), source };
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => BundleError::Missing { path: label.clone() },
        _ => io_err(e),
    })?;
    // A directory's plain files are read on all threads when the visitor can be split.
    let ahead = (meta.is_dir() && visitor.examiner().is_some() && rayon::current_num_threads() > 1).then(|| Ahead::new(path, limits));
    let root = meta.is_dir().then(|| fs::canonicalize(path).ok()).flatten();
    let mut walker =
        Walker { limits: *limits, hash, visitor, files: Vec::new(), not_examined: Vec::new(), members: 0, total: 0, ratio_end: u64::MAX, held: 0, ahead, root };
    let sha256 = if meta.is_dir() {
        walker.walk_dir(path, "", 0);
        hash.then(|| manifest_digest(&walker.files))
    } else {
        let mut file = File::open(path).map_err(io_err)?;
        let mut head = Vec::with_capacity(512);
        (&mut file).take(512).read_to_end(&mut head).map_err(io_err)?;
        file.rewind().map_err(io_err)?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let format = format_of(&head, &name);
        match format {
            Format::Zip => {
                walker.within_ratio(meta.len(), |w| w.walk_zip_file(path, &label, "", 0));
            }
            Format::TarGz => {
                let stream = walker.expanding(MultiGzDecoder::new(BufReader::new(file)), meta.len());
                walker.within_ratio(meta.len(), |w| w.walk_tar(stream, &label, "", 0))
            }
            Format::Tar => walker.walk_tar(BufReader::new(file), &label, "", 0),
            Format::Gz | Format::Plain => walker.member(&name, Some(meta.len()), &mut BufReader::new(file), None, 0),
        }
        // A plain or gzip file read whole as one member was hashed on that pass.
        let member = walker.files.first().filter(|f| matches!(format, Format::Gz | Format::Plain) && f.size == Some(meta.len()));
        match member.and_then(|f| f.sha256.clone()) {
            Some(digest) if hash => Some(digest),
            _ if hash => Some(file_digest(path).map_err(io_err)?),
            _ => None,
        }
    };
    if walker.files.is_empty() {
        let reason = match walker.not_examined.first() {
            Some(reason) => reason.clone(),
            None => "it contains no files".to_string(),
        };
        return Err(BundleError::Unreadable { path: label, reason });
    }
    if walker.files.iter().all(|f| matches!(f.status, FileStatus::NotExamined(_))) {
        let reason = walker.files.iter().find_map(|f| match &f.status {
            FileStatus::NotExamined(r) => Some(format!("{}: {r}", f.path)),
            _ => None,
        });
        return Err(BundleError::Unreadable { path: label, reason: reason.unwrap_or_default() });
    }
    Ok(Bundle { path: label, sha256, files: walker.files, not_examined: walker.not_examined })
}

/// Read the files of `rev`'s tree under `prefix` in the git repository at
/// `dir` (see [`crate::git`]) as a bundle labelled `label`: each blob
/// goes through the same limits and visitor as a directory's file, and the
/// bundle's digest is the manifest of the blobs' contents, as a
/// directory's is. Nothing is checked out or written.
pub fn read_git_tree(dir: &Path, rev: &str, prefix: &str, label: &str, limits: &Limits, visitor: &mut dyn MemberVisitor) -> Result<Bundle, BundleError> {
    let io_err = |source| BundleError::Io { path: label.to_string(), source };
    let blobs = crate::git::blobs(dir, rev, prefix).map_err(io_err)?;
    let mut objects = crate::git::Objects::open(dir).map_err(io_err)?;
    let mut walker = Walker {
        limits: *limits,
        hash: true,
        visitor,
        files: Vec::new(),
        not_examined: Vec::new(),
        members: 0,
        total: 0,
        ratio_end: u64::MAX,
        held: 0,
        ahead: None,
        root: None,
    };
    for blob in &blobs {
        objects.with_blob(&blob.oid, |size, reader| walker.member(&blob.path, Some(size), reader, None, 0)).map_err(io_err)?;
    }
    if walker.files.is_empty() {
        return Err(BundleError::Unreadable { path: label.to_string(), reason: format!("{rev} holds no files there") });
    }
    let sha256 = Some(manifest_digest(&walker.files));
    Ok(Bundle { path: label.to_string(), sha256, files: walker.files, not_examined: walker.not_examined })
}

fn file_digest(path: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut BufReader::new(File::open(path)?), &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

/// Digest of a directory: SHA-256 over `sha256  path\n` lines sorted by path,
/// with `-` for a file whose content was not read to the end.
fn manifest_digest(files: &[FileRecord]) -> String {
    let mut lines: Vec<String> = files.iter().map(|f| format!("{}  {}\n", f.sha256.as_deref().unwrap_or("-"), f.path)).collect();
    lines.sort();
    let mut hasher = Sha256::new();
    lines.iter().for_each(|l| hasher.update(l.as_bytes()));
    hex(&hasher.finalize())
}

struct Walker<'v> {
    limits: Limits,
    hash: bool,
    visitor: &'v mut dyn MemberVisitor,
    files: Vec<FileRecord>,
    not_examined: Vec<String>,
    members: u64,
    total: u64,
    /// The `total` past which the compressed archive being walked has
    /// expanded more than `max_ratio` allows (nested archives included).
    ratio_end: u64,
    /// Bytes of nested zips held in memory now (at most [`ZIP_IN_MEMORY`]).
    held: u64,
    /// A directory's plain files, read ahead of the walk on several threads.
    ahead: Option<Ahead>,
    /// The walked directory, canonical: links are followed only inside it.
    root: Option<std::path::PathBuf>,
}

impl Walker<'_> {
    fn record(&mut self, path: &str, size: Option<u64>, sha256: Option<String>, status: FileStatus) {
        self.files.push(FileRecord { path: path.to_string(), size, sha256, status });
    }

    /// Count one more entry of the bundle (a file, a link, a special file),
    /// or say the member limit stops the walk here.
    fn admit(&mut self) -> bool {
        if self.member_limit_reached() {
            return false;
        }
        self.members += 1;
        true
    }

    /// Whether the member limit stops the walk here; notes it once.
    fn member_limit_reached(&mut self) -> bool {
        if self.members < self.limits.max_members {
            return false;
        }
        let note = format!("more than {} members: the rest of the bundle was not examined (raise --max-members)", self.limits.max_members);
        if !self.not_examined.contains(&note) {
            self.not_examined.push(note);
        }
        true
    }

    /// Hand one member to the visitor (or walk it, if it is an archive);
    /// `on_disk` is the file it streams from, when it is one (a zip is then
    /// read through its central directory there, not held in memory).
    fn member(&mut self, path: &str, declared: Option<u64>, reader: &mut dyn Read, on_disk: Option<&Path>, depth: u32) {
        if self.admitted(path, declared) {
            self.read_member(path, declared, reader, on_disk, depth);
        }
    }

    /// [`Self::member`] for a plain file of a directory that was read ahead
    /// of the walk: what that gave is taken when the walk would have read
    /// the file under the same cap, else the file is read now.
    fn member_read_ahead(&mut self, path: &str, declared: Option<u64>, outcome: Outcome, reader: &mut dyn Read, on_disk: Option<&Path>, depth: u32) {
        if !self.admitted(path, declared) {
            return;
        }
        if self.cap() != self.member_cap() {
            return self.read_member(path, declared, reader, on_disk, depth);
        }
        self.total += outcome.count;
        self.record(path, outcome.size, outcome.sha256, outcome.status);
        self.visitor.accept(outcome.examined);
    }

    /// Count the member, or record why it is not examined at all.
    fn admitted(&mut self, path: &str, declared: Option<u64>) -> bool {
        if !self.admit() {
            return false;
        }
        if self.total >= self.limits.max_total_size {
            let reason = format!("total size limit of {} bytes reached (raise --max-total-size)", self.limits.max_total_size);
            self.record(path, declared, None, FileStatus::NotExamined(reason));
            return false;
        }
        if let Some(size) = declared.filter(|&s| s > self.limits.max_member_size) {
            let reason = format!("{size} bytes, over the member size limit of {} bytes (raise --max-member-size)", self.limits.max_member_size);
            self.record(path, declared, None, FileStatus::NotExamined(reason));
            return false;
        }
        true
    }

    fn read_member(&mut self, path: &str, declared: Option<u64>, reader: &mut dyn Read, on_disk: Option<&Path>, depth: u32) {
        let format = format_by_name(path);
        let compressed = declared.unwrap_or(self.limits.max_member_size);
        let mut hashing = HashingReader::new(reader, self.cap(), self.hash);
        let status = match format {
            Format::TarGz | Format::Tar | Format::Zip if depth >= self.limits.max_depth => {
                FileStatus::NotExamined(format!("archive nested deeper than {} levels (raise --max-depth)", self.limits.max_depth))
            }
            Format::TarGz => {
                let stream = self.expanding(MultiGzDecoder::new(&mut hashing), compressed);
                self.within_ratio(compressed, |w| w.walk_nested(stream, path, depth))
            }
            Format::Tar => self.walk_nested(&mut hashing, path, depth),
            Format::Zip => self.walk_nested_zip(&mut hashing, path, on_disk, compressed, depth),
            Format::Gz => {
                // Both sizes count: the file's (compressed) and what it expands to.
                let mut plain = self.expanding(MultiGzDecoder::new(&mut hashing), compressed);
                let mut capped = HashingReader::new(&mut plain, self.cap(), false);
                let status = self.visit(path, &mut capped);
                self.total += capped.count();
                status
            }
            Format::Plain => self.visit(path, &mut hashing),
        };
        self.total += hashing.count();
        let (size, sha256, status) = finish(hashing, declared, status);
        self.record(path, size, sha256, status);
    }

    /// The most bytes the next member may have: the member size limit, or
    /// what is left of the bundle's total or of the archive's expansion
    /// budget if that is less.
    fn cap(&self) -> Cap {
        let total_left = self.limits.max_total_size.saturating_sub(self.total);
        let ratio_left = self.ratio_end.saturating_sub(self.total);
        if ratio_left < total_left.min(self.limits.max_member_size) {
            let why = format!("the archive expands more than {}:1 over its compressed size, a decompression bomb (raise --max-ratio)", self.limits.max_ratio);
            return Cap { bytes: ratio_left, why };
        }
        if total_left < self.limits.max_member_size {
            let why = format!("over the total size limit of {} bytes for the bundle (raise --max-total-size)", self.limits.max_total_size);
            return Cap { bytes: total_left, why };
        }
        self.member_cap()
    }

    /// The cap of a member when only the member size limit binds.
    fn member_cap(&self) -> Cap {
        let bytes = self.limits.max_member_size;
        Cap { bytes, why: format!("larger than the member size limit of {bytes} bytes (raise --max-member-size)") }
    }

    /// Run `walk` over a compressed archive of `compressed` bytes: what it
    /// adds to the total is bounded by what those bytes may expand to, and
    /// by the budget of any archive it is nested in.
    fn within_ratio<T>(&mut self, compressed: u64, walk: impl FnOnce(&mut Self) -> T) -> T {
        let outer = self.ratio_end;
        self.ratio_end = outer.min(self.total.saturating_add(self.limits.expansion_cap(compressed)));
        let out = walk(self);
        self.ratio_end = outer;
        out
    }

    /// A decompressed stream, capped at what its `compressed` bytes may
    /// expand to and at what is left of the enclosing archive's budget (so
    /// even skipping over a member cannot inflate forever).
    fn expanding<R: Read>(&self, stream: R, compressed: u64) -> HashingReader<R> {
        let why = format!(
            "the stream expands more than {}:1 over its {compressed} compressed bytes, a decompression bomb (raise --max-ratio)",
            self.limits.max_ratio
        );
        let bytes = self.limits.expansion_cap(compressed).min(self.ratio_end.saturating_sub(self.total));
        HashingReader::new(stream, Cap { bytes, why }, false)
    }

    fn visit(&mut self, path: &str, reader: &mut dyn Read) -> FileStatus {
        status_of(self.visitor.visit(path, reader))
    }

    /// What reading the next plain file of a directory ahead of the walk
    /// gave, when it was (`None`: read it now).
    fn read_ahead(&mut self, path: &str, len: u64) -> Option<Outcome> {
        if !Ahead::lists(&self.limits, path, len) {
            return None;
        }
        let (cap, hash) = (self.member_cap(), self.hash);
        let examiner = self.visitor.examiner()?;
        let taken = self.ahead.as_mut()?.take(path, len, |planned| examine_file(examiner, planned, &cap, hash));
        // A tree that changed under the walk is read one file at a time from here.
        taken.unwrap_or_else(|()| {
            self.ahead = None;
            None
        })
    }

    fn walk_nested<R: Read>(&mut self, reader: R, path: &str, depth: u32) -> FileStatus {
        let before = self.not_examined.len();
        self.walk_tar(reader, path, path, depth + 1);
        match self.not_examined.len() > before {
            true => FileStatus::Partial("archive could not be read to the end (see not examined)".to_string()),
            false => FileStatus::Read,
        }
    }

    fn walk_dir(&mut self, dir: &Path, rel: &str, depth: u32) {
        if depth > self.limits.max_depth {
            self.not_examined.push(format!("{rel}: directory nested deeper than {} levels", self.limits.max_depth));
            return;
        }
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => return self.not_examined.push(format!("{}: cannot list directory: {e}", display_rel(rel))),
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if self.member_limit_reached() {
                return;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = join(rel, &name);
            let meta = match fs::symlink_metadata(entry.path()) {
                Ok(meta) => meta,
                Err(e) => {
                    self.admit();
                    self.record(&path, None, None, FileStatus::NotExamined(format!("cannot stat: {e}")));
                    continue;
                }
            };
            let kind = meta.file_type();
            if kind.is_dir() && name == ".git" {
                // A checkout's git metadata (objects, hooks' samples) is not what the benchmark runs.
                if !self.admit() {
                    return;
                }
                self.record(&path, None, None, FileStatus::Skipped("git metadata of a checkout, not benchmark sources".to_string()));
            } else if kind.is_dir() {
                self.walk_dir(&entry.path(), &path, depth + 1);
            } else if kind.is_file() {
                let ahead = self.read_ahead(&path, meta.len());
                match File::open(entry.path()) {
                    Ok(file) => match ahead {
                        Some(outcome) => self.member_read_ahead(&path, Some(meta.len()), outcome, &mut BufReader::new(file), Some(&entry.path()), depth),
                        None => self.member(&path, Some(meta.len()), &mut BufReader::new(file), Some(&entry.path()), depth),
                    },
                    Err(e) => {
                        self.admit();
                        self.record(&path, Some(meta.len()), None, FileStatus::NotExamined(format!("cannot open: {e}")));
                    }
                }
            } else if let Some((file, size)) = kind.is_symlink().then(|| self.linked_file(&path)).flatten() {
                match File::open(&file) {
                    Ok(opened) => self.member(&path, Some(size), &mut BufReader::new(opened), Some(&file), depth),
                    Err(e) => {
                        self.admit();
                        self.record(&path, Some(size), None, FileStatus::NotExamined(format!("a link whose file cannot be opened: {e}")));
                    }
                }
            } else if !self.admit() {
                return;
            } else if kind.is_symlink() {
                let target = fs::read_link(entry.path()).map(|t| t.display().to_string()).unwrap_or_default();
                self.record(&path, None, None, FileStatus::Skipped(format!("symbolic link to {target}, not a file of the input: not followed")));
            } else {
                self.record(&path, None, None, FileStatus::Skipped("not a regular file (device, FIFO or socket)".to_string()));
            }
        }
    }

    /// The file a symbolic link at tree path `rel` leads to inside the
    /// walked directory (through other links, each resolved as
    /// [`links::resolve`] says), and its size; `None` for a link out of the
    /// directory, to a directory, dangling or in a chain too long.
    fn linked_file(&self, rel: &str) -> Option<(std::path::PathBuf, u64)> {
        let root = self.root.as_ref()?;
        let mut at = rel.to_string();
        for _ in 0..links::MAX_HOPS {
            let target = fs::read_link(root.join(&at)).ok()?;
            let from = at.rsplit_once('/').map_or("", |(dir, _)| dir);
            at = links::resolve(from, target.to_str()?)?;
            let path = root.join(&at);
            let meta = fs::symlink_metadata(&path).ok()?;
            if meta.is_file() {
                // A directory on the way may itself be a link out of the tree.
                let real = fs::canonicalize(&path).ok()?;
                return real.starts_with(root).then_some((real, meta.len()));
            }
            if !meta.file_type().is_symlink() {
                return None;
            }
        }
        None
    }

    /// Walk a tar stream; `label` names the archive in notes, `prefix` is
    /// prepended to member paths. The crate's bounded reader is used, so an
    /// extension header claiming gigabytes costs no memory: its member is
    /// recorded as not examined and the walk goes on.
    fn walk_tar<R: Read>(&mut self, reader: R, label: &str, prefix: &str, depth: u32) {
        let mut archive = TarReader::new(reader);
        for seen in 0u64.. {
            let header = match archive.next_header() {
                Ok(Some(header)) => header,
                Ok(None) => return,
                Err(e) if seen == 0 && e.kind() == io::ErrorKind::InvalidData => {
                    return self.not_examined.push(format!("{label}: not a readable tar archive: {}", printable(&e)));
                }
                Err(e) => {
                    let e = printable(&e);
                    return self.not_examined.push(format!("{label}: archive unreadable after {seen} members, the rest was not examined: {e}"));
                }
            };
            let name = String::from_utf8_lossy(&header.path).into_owned();
            let path = join(prefix, &name);
            if header.kind == EntryType::Dir && header.unread.is_none() {
                continue;
            }
            if let Some(unread) = header.unread {
                if !self.admit() {
                    return self.names_after_limit(&mut archive, label, Some(&name));
                }
                self.record(&path, None, None, FileStatus::NotExamined(format!("{unread}; the member was not read")));
            } else if header.kind == EntryType::File {
                self.member(&path, Some(header.size), &mut archive.data(), None, depth);
                self.mark_escape(&name, &path);
            } else if !self.admit() {
                return self.names_after_limit(&mut archive, label, Some(&name));
            } else if matches!(header.kind, EntryType::Symlink | EntryType::Hardlink) {
                let target = String::from_utf8_lossy(&header.link);
                self.record(&path, None, None, FileStatus::Skipped(format!("link to {target}, not followed")));
            } else {
                self.record(&path, None, None, FileStatus::Skipped(format!("tar entry of type {:?}, not a regular file", header.kind)));
            }
            if self.member_limit_reached() {
                return self.names_after_limit(&mut archive, label, None);
            }
        }
    }

    /// Past the member limit, a tar's remaining headers are still read
    /// (data skipped, nothing recorded) for `--max-scan-seconds` at most, and
    /// the names that point outside the archive are noted: a limit stops
    /// reading members, not looking for hostile ones. `first` is the
    /// header already read when the limit stopped the walk.
    fn names_after_limit<R: Read>(&mut self, archive: &mut TarReader<R>, label: &str, first: Option<&str>) {
        let mut first = first.map(str::to_string);
        self.past_limit(label, || match first.take() {
            Some(name) => Ok(Some(name)),
            None => archive.next_header().map(|h| h.map(|h| String::from_utf8_lossy(&h.path).into_owned())).map_err(|e| printable(&e)),
        });
    }

    /// Note the member names `next` gives past the member limit (until it
    /// gives none, fails, or `--max-scan-seconds` runs out) and those among
    /// them that point outside the archive `label`.
    fn past_limit(&mut self, label: &str, mut next: impl FnMut() -> Result<Option<String>, String>) {
        let mut past = PastLimit::new(self.limits.scan_seconds);
        let end = loop {
            if past.out_of_time() {
                break past.stopped();
            }
            match next() {
                Ok(Some(name)) => past.name(&name),
                Ok(None) => break "to the archive's end".to_string(),
                Err(e) => break format!("until: {e}"),
            }
        };
        self.not_examined.push(past.note(label, &end));
    }

    /// Walk a zip inside the bundle (`path`, at `depth`): from its file when
    /// it is one, else held in memory up to [`ZIP_IN_MEMORY`], else from its
    /// local headers. `reader` is then read to its end, for the digest. An
    /// archive of which no member could be read is not examined.
    fn walk_nested_zip(&mut self, reader: &mut dyn Read, path: &str, on_disk: Option<&Path>, compressed: u64, depth: u32) -> FileStatus {
        let (notes, files) = (self.not_examined.len(), self.files.len());
        let walked = self.within_ratio(compressed, |w| match on_disk {
            Some(file) => {
                w.walk_zip_file(file, path, path, depth + 1);
                Ok(())
            }
            None => w.walk_zip_stream(reader, path, depth + 1),
        });
        let drained = walked.and_then(|()| io::copy(reader, &mut io::sink()).map(drop));
        if let Err(e) = drained {
            return FileStatus::NotExamined(format!("read error: {e}"));
        }
        match (self.not_examined.len() > notes, self.files.len() > files) {
            (false, _) => FileStatus::Read,
            (true, true) => FileStatus::Partial("archive could not be read to the end (see not examined)".to_string()),
            (true, false) => FileStatus::NotExamined("not a readable zip archive (see not examined)".to_string()),
        }
    }

    /// Walk a zip that streams past inside another archive.
    fn walk_zip_stream(&mut self, reader: &mut dyn Read, label: &str, depth: u32) -> io::Result<()> {
        let budget = ZIP_IN_MEMORY.saturating_sub(self.held);
        let mut head = Vec::new();
        reader.take(budget.saturating_add(1)).read_to_end(&mut head)?;
        self.held += head.len() as u64;
        if head.len() as u64 > budget {
            self.walk_zip_local(label, Ok(head.as_slice().chain(reader)), label, depth);
        } else {
            let bytes = Cursor::new(head.as_slice());
            self.walk_zip(label, label, depth, || Ok(bytes.clone()));
        }
        self.held -= head.len() as u64;
        Ok(())
    }

    /// Walk the zip file at `path`; `label` names it in notes, `prefix` is
    /// prepended to member paths.
    fn walk_zip_file(&mut self, path: &Path, label: &str, prefix: &str, depth: u32) {
        self.walk_zip(label, prefix, depth, || File::open(path).map(BufReader::new));
    }

    /// Walk a zip that `open` gives (afresh each time) through its central
    /// directory, or from its local headers when the directory is unreadable
    /// or declares more entries than the member limit allows.
    fn walk_zip<R: Read + Seek>(&mut self, label: &str, prefix: &str, depth: u32, open: impl Fn() -> io::Result<R>) {
        let declared = open().and_then(|mut f| zip_count::declared_entries(&mut f)).ok().flatten();
        if let Some(entries) = declared.filter(|&n| n > self.limits.max_members) {
            self.not_examined.push(format!(
                "{label}: the zip central directory lists {entries} entries, more than --max-members allows: members were read from their local headers"
            ));
            return self.walk_zip_local(label, open(), prefix, depth);
        }
        let archive = open().map_err(zip::result::ZipError::from).and_then(zip::ZipArchive::new);
        match archive {
            Ok(mut archive) => {
                for index in 0..archive.len() {
                    if self.member_limit_reached() {
                        // the central directory names the rest: noted, not read
                        let mut rest = index..archive.len();
                        return self
                            .past_limit(label, || Ok(rest.next().map(|i| archive.name_for_index(i).and_then(Result::ok).unwrap_or_default().into_owned())));
                    }
                    let name = archive.name_for_index(index).and_then(Result::ok).map(|n| n.into_owned());
                    match archive.by_index(index) {
                        Ok(mut file) => self.zip_member(&mut file, prefix, depth),
                        Err(e) => {
                            self.admit();
                            let name = name.unwrap_or_else(|| format!("(member #{index})"));
                            self.record(&join(prefix, &name), None, None, FileStatus::NotExamined(format!("corrupt zip member: {e}")));
                        }
                    }
                }
            }
            Err(e) => {
                self.not_examined.push(format!("{label}: zip central directory unreadable ({e}); members were recovered from their local headers"));
                self.walk_zip_local(label, open(), prefix, depth);
            }
        }
    }

    /// Read a zip member by member from its local headers, in file order.
    fn walk_zip_local<R: Read>(&mut self, label: &str, reader: io::Result<R>, prefix: &str, depth: u32) {
        let Ok(mut reader) = reader else { return };
        let mut members = 0u64;
        loop {
            if self.member_limit_reached() {
                // the rest is read for names only (each member's data skipped as it is dropped)
                return self.past_limit(label, || match zip::read::read_zipfile_from_stream(&mut reader) {
                    Ok(file) => Ok(file.map(|f| String::from_utf8_lossy(f.name_raw()).into_owned())),
                    Err(e) => Err(e.to_string()),
                });
            }
            match zip::read::read_zipfile_from_stream(&mut reader) {
                Ok(Some(mut file)) => self.zip_member(&mut file, prefix, depth),
                Ok(None) => break,
                Err(e) => {
                    self.not_examined.push(format!("{label}: local headers unreadable after {members} members: {e}"));
                    break;
                }
            }
            members += 1;
        }
    }

    fn zip_member<R: Read>(&mut self, file: &mut zip::read::ZipFile<'_, R>, prefix: &str, depth: u32) {
        if file.is_dir() {
            return;
        }
        let name = String::from_utf8_lossy(file.name_raw()).into_owned();
        let path = join(prefix, &name);
        if file.is_symlink() {
            if self.admit() {
                self.record(&path, None, None, FileStatus::Skipped("symbolic link, not followed".to_string()));
            }
            return;
        }
        let (size, compressed) = (file.size(), file.compressed_size());
        let mut plain = self.expanding(file, compressed);
        self.member(&path, Some(size), &mut plain, None, depth);
        self.mark_escape(&name, &path);
    }

    /// A member whose name climbs out of its archive is read in place like
    /// any other (nothing is ever extracted), but never counts as read
    /// whole: an archive that writes outside its directory when someone
    /// else extracts it cannot pass quietly.
    fn mark_escape(&mut self, name: &str, path: &str) {
        if !escapes(name) {
            return;
        }
        if let Some(file) = self.files.last_mut().filter(|f| f.path == path && matches!(f.status, FileStatus::Read | FileStatus::Skipped(_))) {
            file.status = FileStatus::Partial(format!("its name {name:?} points outside the archive (absolute, or with ..): read in place, never extracted"));
        }
    }
}

/// Member names read past the member limit: how many, and those that
/// point outside the archive (never extracted, but a reviewer wants them).
struct PastLimit {
    names: u64,
    escaping: u64,
    /// The first [`MAX_NAMED`] of them.
    named: Vec<String>,
    seconds: u64,
    deadline: std::time::Instant,
}

impl PastLimit {
    fn new(seconds: u64) -> Self {
        PastLimit { names: 0, escaping: 0, named: Vec::new(), seconds, deadline: std::time::Instant::now() + std::time::Duration::from_secs(seconds) }
    }

    fn name(&mut self, name: &str) {
        self.names += 1;
        if escapes(name) {
            self.escaping += 1;
            if self.named.len() < MAX_NAMED {
                self.named.push(name.to_string());
            }
        }
    }

    fn out_of_time(&self) -> bool {
        std::time::Instant::now() >= self.deadline
    }

    fn stopped(&self) -> String {
        format!("stopped after {} s, --max-scan-seconds", self.seconds)
    }

    /// The note for the report; `end` says how far the names were read.
    fn note(self, label: &str, end: &str) -> String {
        if self.seconds == 0 {
            return format!("{label}: past the member limit, the remaining member names were not read (--max-scan-seconds 0)");
        }
        let count = self.escaping;
        let named = match count {
            0 => "none points outside the archive".to_string(),
            _ => format!(
                "{count} point outside the archive (absolute, or with ..), never extracted: {}{}",
                self.named.join(", "),
                if count > self.named.len() as u64 { ", …" } else { "" }
            ),
        };
        format!("{label}: past the member limit, {} more member name(s) were read ({end}), not their content: {named}", self.names)
    }
}

/// Most names a note lists.
const MAX_NAMED: usize = 10;

/// Whether an archive member's name is absolute (`/x`, `\\x`, `C:x`) or climbs with `..`.
fn escapes(name: &str) -> bool {
    let drive = matches!(name.as_bytes(), [letter, b':', ..] if letter.is_ascii_alphabetic());
    drive || name.starts_with(['/', '\\']) || name.split(['/', '\\']).any(|c| c == "..")
}

fn display_rel(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

fn status_of(visited: io::Result<Disposition>) -> FileStatus {
    match visited {
        Ok(Disposition::Read) => FileStatus::Read,
        Ok(Disposition::Partial(reason)) => FileStatus::Partial(reason),
        Ok(Disposition::Skipped(reason)) => FileStatus::Skipped(reason),
        Err(e) => FileStatus::NotExamined(format!("read error: {e}")),
    }
}

/// Read a plain file of a directory as [`Walker::read_member`] does, on
/// any thread: under `cap`, hashed in the same pass when `hash` is set.
fn examine_file(examiner: &dyn Examine, planned: &Planned, cap: &Cap, hash: bool) -> Option<Outcome> {
    let mut reader = BufReader::new(File::open(&planned.file).ok()?);
    let mut hashing = HashingReader::new(&mut reader as &mut dyn Read, cap.clone(), hash);
    let (visited, examined) = examiner.examine(&planned.path, &mut hashing);
    let status = status_of(visited);
    let count = hashing.count();
    let (size, sha256, status) = finish(hashing, Some(planned.len), status);
    Some(Outcome { count, size, sha256, status, examined })
}

/// Turn the hashing reader's end state into the file's size, digest and status.
fn finish<R: Read>(hashing: HashingReader<R>, declared: Option<u64>, status: FileStatus) -> (Option<u64>, Option<String>, FileStatus) {
    let read_so_far = hashing.count();
    match status {
        FileStatus::Read | FileStatus::Skipped(_) => match hashing.finish() {
            Ok((size, digest)) => match declared {
                Some(want) if size < want => (Some(size), None, FileStatus::Partial(format!("truncated: {size} of {want} bytes present"))),
                Some(want) if size > want => {
                    (Some(size), digest, FileStatus::Partial(format!("the archive declares {want} bytes but the member holds {size}: its headers lie")))
                }
                _ => (Some(size), digest, status),
            },
            Err(e) => (
                Some(read_so_far),
                None,
                match status {
                    FileStatus::Read => FileStatus::Partial(format!("read error after {read_so_far} bytes: {e}")),
                    _ => FileStatus::NotExamined(format!("read error after {read_so_far} bytes: {e}")),
                },
            ),
        },
        other => (Some(read_so_far), None, other),
    }
}

/// An error's text with control characters shown as `?` (a corrupt
/// archive's bytes must not reach a terminal).
fn printable(e: &io::Error) -> String {
    e.to_string().chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::{escapes, printable};
    use std::io;

    #[test]
    fn an_error_is_shown_without_control_bytes() {
        assert_eq!(printable(&io::Error::other("bad\u{0}x\u{1b}[31m")), "bad?x?[31m");
    }

    #[test]
    fn names_that_climb_out_of_an_archive() {
        for name in ["../x", "a/../../x", "/etc/x", "\\\\server\\x", "C:x", "c:/x", "a\\..\\x", ".."] {
            assert!(escapes(name), "{name}");
        }
        for name in ["a/b.log", "..a/b", "a..b/c", "./a", "12:30.log", "results/server.log"] {
            assert!(!escapes(name), "{name}");
        }
    }
}
