//! One filesystem entry of an image as the index keeps it: its kind, its
//! content key or link target, and where its captured text sits. A leaf the
//! index, the link resolver and the tree diff all share.

use super::content::ContentDigest;
use super::pyc::Pyc;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
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
    pub(crate) fn as_str(self) -> &'static str {
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

    pub(super) fn code(self) -> u8 {
        self as u8
    }

    pub(super) fn from_code(c: u8) -> Option<Kind> {
        [Kind::File, Kind::Dir, Kind::Symlink, Kind::Hardlink, Kind::Char, Kind::Block, Kind::Fifo].get(usize::from(c)).copied()
    }
}

/// Where a captured small text file (Python source, dist-info metadata)
/// sits in a layer's text pack: one zstd frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextRef {
    /// The image layer whose pack holds it (set when merged).
    pub layer: u16,
    pub offset: u64,
    pub len: u32,
}

/// One filesystem entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    pub kind: Kind,
    /// Permission bits with setuid/setgid/sticky.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    /// The hash of a file's content (the index's algorithm).
    pub digest: Option<ContentDigest>,
    /// A `.pyc`'s header and the hash of its body: content is compared
    /// without the header every rebuild rewrites, and the header says
    /// whether CPython checks the source.
    pub pyc: Option<Box<Pyc>>,
    /// A symlink's target, or a hard link's target path.
    pub link: Option<Box<str>>,
    pub text: Option<TextRef>,
    /// The image layer that last wrote it (set when merged).
    pub layer: u16,
}

impl Node {
    /// Whether `other` has the same content (kind, content key or link target).
    pub(crate) fn same_content(&self, other: &Node) -> bool {
        self.kind == other.kind
            && match self.kind {
                Kind::File => self.content_key() == other.content_key(),
                Kind::Symlink | Kind::Hardlink => self.link == other.link,
                Kind::Dir | Kind::Char | Kind::Block | Kind::Fifo => true,
            }
    }

    /// The digest content is compared by: a `.pyc`'s body's, the file's otherwise.
    pub(crate) fn content_key(&self) -> Option<&ContentDigest> {
        self.pyc.as_deref().map(|p| &p.body).or(self.digest.as_ref())
    }

    pub(crate) fn is_executable(&self) -> bool {
        self.kind == Kind::File && self.mode & 0o111 != 0
    }
}
