//! The file-level diff of two merged filesystems: what the pinned image
//! added, modified, deleted, or changed only in metadata (mode, owner)
//! against the upstream one. Only content and metadata are compared —
//! never mtimes, compression or the layer split — and content by its
//! normalised digest (a `.pyc` without its header), so a rebuild of the
//! same files diffs clean.

use super::file_index::FsIndex;
use super::node::{Kind, Node};
use std::cmp::Ordering;
use std::iter::Peekable;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub(super) enum ChangeKind {
    Added,
    Modified,
    Deleted,
    /// Same content, other mode or owner.
    Metadata,
}

impl ChangeKind {
    /// The finding `kind` of a plain change.
    pub(super) fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One changed path: `old` is upstream's entry, `new` the pinned one's.
#[derive(Debug, Clone, Copy)]
pub(super) struct Change<'a> {
    pub path: &'a str,
    pub kind: ChangeKind,
    pub old: Option<&'a Node>,
    pub new: Option<&'a Node>,
}

/// Every change from `upstream` to `pinned`, in path order. Directories
/// count only for metadata: an added or deleted directory shows through
/// the files in it.
pub(super) fn diff<'a>(upstream: &'a FsIndex, pinned: &'a FsIndex) -> Vec<Change<'a>> {
    let mut out = Vec::new();
    let (mut a, mut b): (Peekable<_>, Peekable<_>) = (upstream.entries.iter().peekable(), pinned.entries.iter().peekable());
    loop {
        let order = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((pa, _)), Some((pb, _))) => pa.cmp(pb),
        };
        match order {
            Ordering::Less => {
                let Some((path, old)) = a.next() else { break };
                if old.kind != Kind::Dir {
                    out.push(Change { path, kind: ChangeKind::Deleted, old: Some(old), new: None });
                }
            }
            Ordering::Greater => {
                let Some((path, new)) = b.next() else { break };
                if new.kind != Kind::Dir {
                    out.push(Change { path, kind: ChangeKind::Added, old: None, new: Some(new) });
                }
            }
            Ordering::Equal => {
                let (Some((path, old)), Some((_, new))) = (a.next(), b.next()) else { break };
                let kind = if !old.same_content(new) {
                    Some(ChangeKind::Modified)
                } else if (old.mode, old.uid, old.gid) != (new.mode, new.uid, new.gid) && old.kind != Kind::Symlink {
                    Some(ChangeKind::Metadata)
                } else {
                    None
                };
                if let Some(kind) = kind {
                    out.push(Change { path, kind, old: Some(old), new: Some(new) });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::forensics::file_index::Op;
    use crate::image::forensics::file_index::tests::{apply, dir, file};

    fn fs(entries: Vec<(&str, Node)>) -> FsIndex {
        let mut f = FsIndex::default();
        apply(&mut f, 0, entries.into_iter().map(|(p, n)| Op::Put(p.into(), n)).collect());
        f
    }

    use crate::image::forensics::content::ContentHash;
    use crate::image::forensics::pyc::Pyc;

    #[test]
    fn kinds_of_change_and_what_is_not_one() {
        let mut pyc_a = file(b"hdr1body");
        pyc_a.pyc = Some(Box::new(Pyc { header: [1; 16], body: ContentHash::Sha256.of(b"code") }));
        let mut pyc_b = file(b"hdr2body");
        pyc_b.pyc = Some(Box::new(Pyc { header: [2; 16], body: ContentHash::Sha256.of(b"code") }));
        let mut layer_other = file(b"same");
        layer_other.layer = 5;
        let up = fs(vec![("/d", dir()), ("/gone", file(b"x")), ("/m", file(b"1")), ("/meta", file(b"k")), ("/p.pyc", pyc_a), ("/same", file(b"same"))]);
        let mut chmod = file(b"k");
        chmod.mode = 0o755;
        let pin =
            fs(vec![("/d", dir()), ("/m", file(b"2")), ("/meta", chmod), ("/new", file(b"n")), ("/newdir", dir()), ("/p.pyc", pyc_b), ("/same", layer_other)]);
        let changes: Vec<(&str, ChangeKind)> = diff(&up, &pin).iter().map(|c| (c.path, c.kind)).collect();
        assert_eq!(changes, [("/gone", ChangeKind::Deleted), ("/m", ChangeKind::Modified), ("/meta", ChangeKind::Metadata), ("/new", ChangeKind::Added)]);
        assert!(diff(&up, &up).is_empty());
    }
}
