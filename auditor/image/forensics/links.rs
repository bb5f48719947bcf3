//! Symlinks of a merged index, for resolving the directories an entry is
//! written through. A runtime extracting `a/b/x` over a symlink `a/b`
//! writes where the link points (inside the root: containerd and Docker
//! resolve it as if the root were `/`); a naive extractor follows it out
//! of the root. So the merge resolves every entry's parent directory the
//! way the runtime does, puts the entry where it lands, and refuses it
//! when the resolution climbs above the root.
//!
//! Most entries are under no symlink at all, and a path can be thousands
//! of bytes long: looking every prefix up in the index would cost
//! O(depth x length) per entry. [`Links`] keeps a multiset of the hashes
//! of the symlink paths, hashed component by component with one hasher
//! state per prefix, so a path is checked in one pass over its bytes and
//! the index is consulted only on a hash hit. The hasher is keyed per
//! process (`RandomState`), so a layer cannot be crafted to collide.

use super::node::{Kind, Node};
use std::borrow::Cow;
use std::collections::hash_map::{DefaultHasher, RandomState};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};

/// Most symlinks followed while resolving one path (Linux's `ELOOP` limit).
const MAX_HOPS: usize = 40;

/// The hashes of the symlink paths of an index.
#[derive(Debug, Default)]
pub(super) struct Links {
    keys: RandomState,
    counts: HashMap<u64, u32>,
}

/// A directory resolved, with the first absolute symlink on the way.
pub(super) type Resolution<'a> = Result<(Cow<'a, str>, Option<(&'a str, &'a str)>), Unresolved>;

/// Why a directory could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Unresolved {
    /// The symlink `link` (with its `target`) climbs above the root.
    Escapes { link: String, target: String },
    /// More than [`MAX_HOPS`] symlinks, the last one `link`.
    Loop { link: String },
    /// The resolved path is longer than `max` bytes.
    TooLong { max: usize },
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unresolved::Escapes { link, target } => {
                write!(f, "goes through the symlink {link} -> {target}, which leaves the root (an extractor that follows it writes outside the image)")
            }
            Unresolved::Loop { link } => write!(f, "goes through more than {MAX_HOPS} symlinks (a loop at {link})"),
            Unresolved::TooLong { max } => write!(f, "resolves through symlinks to a path longer than {max} bytes"),
        }
    }
}

impl Links {
    fn root(&self) -> DefaultHasher {
        self.keys.build_hasher()
    }

    fn hash(&self, path: &str) -> u64 {
        let mut h = self.root();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            extend(&mut h, part);
        }
        h.finish()
    }

    /// A symlink was put at `path`.
    pub(super) fn insert(&mut self, path: &str) {
        *self.counts.entry(self.hash(path)).or_default() += 1;
    }

    /// The symlink at `path` was removed or replaced.
    pub(super) fn remove(&mut self, path: &str) {
        let h = self.hash(path);
        if let Some(n) = self.counts.get_mut(&h) {
            *n -= 1;
            if *n == 0 {
                self.counts.remove(&h);
            }
        }
    }

    /// `dir` (absolute, normalised) with every symlink among its
    /// components followed, as a runtime resolves it inside the root;
    /// borrowed when no symlink is on the way.
    pub(super) fn resolve<'a>(&self, entries: &'a BTreeMap<Box<str>, Node>, dir: &'a str, max_len: usize) -> Result<Cow<'a, str>, Unresolved> {
        self.resolve_noting(entries, dir, max_len).map(|(resolved, _)| resolved)
    }

    /// [`Links::resolve`], with the first symlink on the way whose target
    /// is absolute (path, target): a runtime keeps it inside the root, an
    /// extractor that follows it writes on the host.
    pub(super) fn resolve_noting<'a>(&self, entries: &'a BTreeMap<Box<str>, Node>, dir: &'a str, max_len: usize) -> Resolution<'a> {
        if self.counts.is_empty() {
            return Ok((Cow::Borrowed(dir), None));
        }
        // components still to walk, the next one last
        let mut pending: Vec<&'a str> = dir.rsplit('/').filter(|p| !p.is_empty()).collect();
        let mut out = String::with_capacity(dir.len());
        // the hasher state after each component of `out`
        let mut states = vec![self.root()];
        let mut hops = 0;
        let mut via: Option<(&'a str, &'a str)> = None;
        let mut absolute: Option<(&'a str, &'a str)> = None;
        while let Some(part) = pending.pop() {
            match part {
                "." => continue,
                ".." => {
                    let Some(cut) = out.rfind('/') else {
                        let (link, target) = via.unwrap_or(("", ""));
                        return Err(Unresolved::Escapes { link: link.to_string(), target: target.to_string() });
                    };
                    out.truncate(cut);
                    states.pop();
                    continue;
                }
                _ => {}
            }
            let mut state = states.last().cloned().unwrap_or_else(|| self.root());
            extend(&mut state, part);
            let before = out.len();
            out.push('/');
            out.push_str(part);
            if out.len() > max_len {
                return Err(Unresolved::TooLong { max: max_len });
            }
            let link =
                self.counts.contains_key(&state.finish()).then(|| entries.get_key_value(out.as_str())).flatten().filter(|(_, n)| n.kind == Kind::Symlink);
            let Some((path, node)) = link else {
                states.push(state);
                continue;
            };
            hops += 1;
            if hops > MAX_HOPS {
                return Err(Unresolved::Loop { link: path.to_string() });
            }
            let target = node.link.as_deref().unwrap_or("");
            via = Some((path, target));
            out.truncate(before);
            if target.starts_with('/') {
                absolute = absolute.or(via);
                out.clear();
                states.truncate(1);
            }
            pending.extend(target.rsplit('/').filter(|p| !p.is_empty()));
        }
        if via.is_none() {
            return Ok((Cow::Borrowed(dir), None));
        }
        if out.is_empty() {
            out.push('/');
        }
        Ok((Cow::Owned(out), absolute))
    }
}

/// One more path component into a prefix hash.
fn extend(h: &mut DefaultHasher, part: &str) {
    h.write(part.as_bytes());
    h.write_u8(b'/');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::forensics::file_index::tests::{dir, file};

    fn link(target: &str) -> Node {
        Node { kind: Kind::Symlink, link: Some(target.into()), digest: None, ..file(b"") }
    }

    fn index(entries: &[(&str, Node)]) -> (BTreeMap<Box<str>, Node>, Links) {
        let mut links = Links::default();
        let mut map = BTreeMap::new();
        for (p, n) in entries {
            if n.kind == Kind::Symlink {
                links.insert(p);
            }
            map.insert((*p).into(), n.clone());
        }
        (map, links)
    }

    #[test]
    fn follows_symlinks_inside_the_root() {
        let (map, links) = index(&[
            ("/usr", dir()),
            ("/usr/lib", dir()),
            ("/lib", link("usr/lib")),
            ("/etc/alt", link("/etc")),
            ("/a", link("b")),
            ("/b", link("/usr/./lib/../lib")),
            ("/usr/lib/up", link("../../../../../etc")),
        ]);
        let r = |d| links.resolve(&map, d, 4096);
        assert!(matches!(r("/usr/lib/python3"), Ok(Cow::Borrowed("/usr/lib/python3"))));
        assert_eq!(r("/lib/x86_64").unwrap(), "/usr/lib/x86_64");
        assert_eq!(r("/etc/alt/cron.d").unwrap(), "/etc/cron.d");
        assert_eq!(r("/a/z").unwrap(), "/usr/lib/z");
        assert_eq!(r("/").unwrap(), "/");
        // the first link with an absolute target is noted: relative ones are not
        let noted = |d| links.resolve_noting(&map, d, 4096).unwrap().1;
        assert_eq!(noted("/a/z"), Some(("/b", "/usr/./lib/../lib")));
        assert_eq!(noted("/etc/alt/cron.d"), Some(("/etc/alt", "/etc")));
        assert_eq!((noted("/lib/x86_64"), noted("/usr/lib/python3")), (None, None));
        // climbing above the root through a link
        assert_eq!(r("/usr/lib/up/cron.d").unwrap_err(), Unresolved::Escapes { link: "/usr/lib/up".into(), target: "../../../../../etc".into() });
        assert_eq!(
            r("/lib/up").unwrap_err().to_string(),
            "goes through the symlink /usr/lib/up -> ../../../../../etc, which leaves the root (an extractor that follows it writes outside the image)"
        );
    }

    #[test]
    fn loops_and_long_resolutions_are_refused() {
        let (map, links) = index(&[("/x", link("y")), ("/y", link("x")), ("/deep", link(&"/d".repeat(1000)))]);
        assert!(matches!(links.resolve(&map, "/x/file", 4096), Err(Unresolved::Loop { .. })));
        assert_eq!(links.resolve(&map, "/deep/a", 1500).unwrap_err(), Unresolved::TooLong { max: 1500 });
        // removal is counted: a link put twice stays until removed twice
        let mut links = links;
        links.insert("/x");
        links.remove("/x");
        assert!(links.resolve(&map, "/x/file", 4096).is_err());
        let (map, mut links) = index(&[("/x", link("/"))]);
        links.remove("/x");
        assert!(matches!(links.resolve(&map, "/x/file", 4096), Ok(Cow::Borrowed(_))));
    }
}
