//! Reading the plain files of a directory bundle on several threads. The
//! walk itself stays one sequential pass (it decides limits, records and
//! notes in path order, as before); ahead of it, the plain files it will
//! meet are listed in the same order and read a batch at a time on rayon's
//! threads, each result waiting for the walk to reach its file. The walk
//! takes a result only for the file it was made for, read under the same
//! member cap it would have used itself; otherwise it reads the file as
//! before. So reports do not depend on the number of threads, and memory
//! is a batch of results plus one reader per thread.

use super::Examined;
use super::FileStatus;
use super::Limits;
use rayon::prelude::*;
use std::collections::VecDeque;
use std::fs::{self, DirEntry};
use std::path::PathBuf;

/// Files read per batch, per thread: enough to keep every thread busy
/// between the batch's start and its slowest file.
const BATCH_PER_THREAD: usize = 4;

/// A plain file the walk will meet.
pub(super) struct Planned {
    /// Its path in the bundle.
    pub(super) path: String,
    pub(super) file: PathBuf,
    pub(super) len: u64,
}

/// What reading a file gave: the bytes the visitor read (for the total),
/// the file record's size, digest and status, and the visitor's result.
pub(super) struct Outcome {
    pub(super) count: u64,
    pub(super) size: Option<u64>,
    pub(super) sha256: Option<String>,
    pub(super) status: FileStatus,
    pub(super) examined: Examined,
}

/// One directory level of the listing: its entries in name order, the next
/// one to look at, its path in the bundle and its depth.
type Level = (Vec<DirEntry>, usize, String, u32);

/// The plain files of a directory tree in the walk's order, listed as needed
/// (one directory level at a time, as the walk itself holds them).
pub(super) struct Ahead {
    limits: Limits,
    /// Files yet to list, at most the member limit.
    left: u64,
    stack: Vec<Level>,
    /// Files read, in walk order, with what reading them gave (`None`: it could not be opened).
    ready: VecDeque<(Planned, Option<Outcome>)>,
}

impl Ahead {
    pub(super) fn new(dir: &std::path::Path, limits: &Limits) -> Ahead {
        let mut ahead = Ahead { limits: *limits, left: limits.max_members, stack: Vec::new(), ready: VecDeque::new() };
        ahead.enter(dir, String::new(), 0);
        ahead
    }

    /// Whether the walk would read `path` as a plain file the listing holds.
    pub(super) fn lists(limits: &Limits, path: &str, len: u64) -> bool {
        super::kind::is_plain(path) && len <= limits.max_member_size
    }

    fn enter(&mut self, dir: &std::path::Path, rel: String, depth: u32) {
        if depth > self.limits.max_depth {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else { return };
        let mut entries: Vec<DirEntry> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        self.stack.push((entries, 0, rel, depth));
    }

    /// The next plain file of the tree, in walk order.
    fn next_file(&mut self) -> Option<Planned> {
        while self.left > 0 {
            let (entries, i, rel, depth) = self.stack.last_mut()?;
            let Some(entry) = entries.get(*i) else {
                self.stack.pop();
                continue;
            };
            *i += 1;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = super::join(rel, &name);
            let (file, depth) = (entry.path(), *depth);
            let Ok(meta) = fs::symlink_metadata(&file) else { continue };
            if meta.is_dir() && name != ".git" {
                self.enter(&file, path, depth + 1);
            } else if meta.is_file() && Ahead::lists(&self.limits, &path, meta.len()) {
                self.left -= 1;
                return Some(Planned { path, file, len: meta.len() });
            }
        }
        None
    }

    /// What reading `path` (of `len` bytes) gave, if it is the next file
    /// listed; reading a batch first when none is waiting. `Err` when the
    /// tree is not as listed (it changed during the walk).
    pub(super) fn take(&mut self, path: &str, len: u64, read: impl Fn(&Planned) -> Option<Outcome> + Sync) -> Result<Option<Outcome>, ()> {
        if self.ready.is_empty() {
            let batch: Vec<Planned> = (0..BATCH_PER_THREAD * rayon::current_num_threads()).map_while(|_| self.next_file()).collect();
            let outcomes: Vec<Option<Outcome>> = batch.par_iter().map(&read).collect();
            self.ready.extend(batch.into_iter().zip(outcomes));
        }
        match self.ready.pop_front() {
            Some((planned, outcome)) if planned.path == path && planned.len == len => Ok(outcome),
            _ => Err(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bundle::{Limits, read_bundle};
    use crate::evidence::Extractor;
    use std::path::Path;

    /// The bundle and every file's evidence, read on `threads` threads.
    fn read_on(threads: usize, dir: &Path, limits: &Limits) -> String {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut extractor = Extractor::new(limits.max_line_length);
            let bundle = read_bundle(dir, limits, &mut extractor);
            format!("{bundle:?}\n{:?}", extractor.files)
        })
    }

    #[test]
    fn a_file_other_than_the_next_listed_is_not_taken() {
        let dir = std::env::temp_dir().join(format!("auditor-ahead-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("a.log"), "x=1\n").unwrap();
        std::fs::write(dir.join("b/c.log"), "y=2\n").unwrap();
        let read =
            |p: &super::Planned| Some(super::Outcome { count: p.len, size: None, sha256: None, status: super::FileStatus::Read, examined: Box::new(()) });
        let mut ahead = super::Ahead::new(&dir, &Limits::default());
        assert_eq!(ahead.take("a.log", 4, read).map(|o| o.map(|o| o.count)), Ok(Some(4)));
        assert!(ahead.take("b/other.log", 4, read).is_err(), "the walk met a file the listing did not hold");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_reads_the_same_on_one_thread_or_four() {
        // Directories, plain files, zips and tarballs side by side.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/bundles");
        let limits = Limits::default();
        let one = read_on(1, &dir, &limits);
        assert!(one.contains("server.log") && one.contains(".zip/"), "the samples are read");
        assert_eq!(one, read_on(4, &dir, &limits));
        // The total size limit binds partway: the files past it are read under another cap, or not at all.
        let limits = Limits { max_total_size: 200_000, max_member_size: 150_000, ..Limits::default() };
        let one = read_on(1, &dir, &limits);
        assert!(one.contains("over the total size limit") || one.contains("total size limit of 200000 bytes reached"), "the limit binds");
        assert_eq!(one, read_on(4, &dir, &limits));
        // So does the member limit.
        let limits = Limits { max_members: 7, ..Limits::default() };
        assert_eq!(read_on(1, &dir, &limits), read_on(4, &dir, &limits));
    }
}
