//! File indexes. A layer's index is what walking its tar found, in order
//! ([`Op`]s: entries put, whiteouts and opaque directories, and hostile
//! entries, refused or applied and reported); it lives in the cache
//! ([`super::layerfile`]). An image's merged filesystem ([`FsIndex`]) is
//! its layers' indexes applied in order with OCI semantics, each entry
//! where a runtime would put it, so two images compare path by path
//! whatever their layer split — and a crafted layer cannot place a file
//! where the index does not see it.

use super::links::{Links, Unresolved};
use super::node::{Kind, Node};
use super::paths::{is_within, join, split};
use crate::image::limits::{DEFAULT_MAX_DEPTH, MAX_PATH};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;

/// Most hostile entries listed per layer and per image; the rest are counted.
pub(super) const MAX_LISTED: usize = 1000;

/// One step of a layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    Put(Box<str>, Node),
    /// `.wh.NAME`: the path and everything under it, from lower layers.
    Whiteout(Box<str>),
    /// `.wh..wh..opq`: everything under the directory, from lower layers.
    Opaque(Box<str>),
    /// A hostile entry: what is wrong and what was done with it (a `..`
    /// climbing out is not applied; an absolute name is applied inside
    /// the root and reported).
    Hostile {
        path: Box<str>,
        reason: Box<str>,
    },
}

/// A hostile entry of an image, with the layer that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostileEntry {
    pub layer: u16,
    pub path: String,
    /// What is wrong and what was done with it (applied or not).
    pub reason: String,
}

/// An image's merged filesystem: path (absolute, normalised) -> entry.
#[derive(Debug)]
pub(crate) struct FsIndex {
    pub entries: BTreeMap<Box<str>, Node>,
    pub hostile: Vec<HostileEntry>,
    /// Hostile entries beyond [`MAX_LISTED`], counted, not listed.
    pub unlisted: u64,
    links: Links,
    /// Entries deeper than this many directories are refused (`--max-path-depth`).
    max_depth: usize,
}

impl Default for FsIndex {
    fn default() -> Self {
        FsIndex::new(DEFAULT_MAX_DEPTH)
    }
}

impl FsIndex {
    pub(crate) fn new(max_depth: usize) -> FsIndex {
        FsIndex { entries: BTreeMap::new(), hostile: Vec::new(), unlisted: 0, links: Links::default(), max_depth }
    }

    /// Layer `layer` goes on top in two passes over its ops, in order:
    /// first [`FsIndex::hide`] each, then [`FsIndex::add`] each. Its
    /// whiteouts and opaque markers hide lower entries (never its own).
    /// Each entry lands where a runtime puts it: symlinks among its parent
    /// directories are followed inside the root, and an entry whose
    /// directory resolves above the root, or that is deeper than
    /// `max_depth`, is refused. A non-directory replacing a directory
    /// hides what was under it; a hard link takes its target's content,
    /// and one to a path no earlier entry wrote is refused. Entries
    /// written twice in one layer with other content, and device nodes
    /// and FIFOs outside `/dev`, are reported.
    pub(crate) fn hide(&mut self, layer: u16, op: &Op) {
        match op {
            Op::Whiteout(path) => {
                let (parent, name) = split(path);
                match self.resolve(parent) {
                    Ok(dir) => {
                        let path = join(&dir, name);
                        self.remove(&path);
                        self.remove_below(&path);
                    }
                    Err(why) => self.report(layer, path, format!("a whiteout whose directory {why}: not applied")),
                }
            }
            Op::Opaque(dir) => match self.resolve(dir) {
                Ok(resolved) => {
                    let resolved = resolved.into_owned();
                    self.remove_below(&resolved);
                }
                Err(why) => self.report(layer, dir, format!("an opaque-directory marker whose directory {why}: not applied")),
            },
            Op::Hostile { .. } | Op::Put(..) => {}
        }
    }

    /// The second pass of a layer (see [`FsIndex::hide`]): entries are
    /// moved in, hostile ones listed in the layer's order.
    pub(crate) fn add(&mut self, layer: u16, op: Op) {
        match op {
            Op::Put(path, node) => self.put(layer, path, node),
            Op::Hostile { path, reason } => self.report(layer, &path, reason.into()),
            Op::Whiteout(_) | Op::Opaque(_) => {}
        }
    }

    fn put(&mut self, layer: u16, raw: Box<str>, mut node: Node) {
        let depth = raw.matches('/').count();
        if depth > self.max_depth {
            return self.report(layer, &raw, format!("the path is {depth} directories deep, over --max-path-depth ({}): not applied", self.max_depth));
        }
        let (parent, name) = split(&raw);
        // where a symlink among its directories takes it, if one does
        let (moved, absolute) = match self.links.resolve_noting(&self.entries, parent, MAX_PATH) {
            Ok((Cow::Borrowed(_), _)) => (None, None),
            Ok((Cow::Owned(dir), absolute)) => (Some(join(&dir, name)), absolute.map(|(l, t)| format!("{l} -> {t}"))),
            Err(why) => return self.report(layer, &raw, format!("its directory {why}: not applied")),
        };
        if let (Some(link), Some(at)) = (absolute, moved.as_deref()) {
            let reason = format!(
                "its directory goes through the symlink {link}, an absolute target: applied at {at} inside the root, as a runtime does (an extractor that follows it writes outside the image)"
            );
            self.report(layer, &raw, reason);
        }
        let landed = moved.as_ref().map_or(String::new(), |path| format!(" (at {path}, through a symlink)"));
        let (path, moved_from): (Box<str>, Option<Box<str>>) = match moved {
            Some(path) => (path.into(), Some(raw)),
            None => (raw, None),
        };
        let raw = moved_from.as_deref().unwrap_or(&path);
        node.layer = layer;
        if let Some(t) = node.text.as_mut() {
            t.layer = layer;
        }
        if node.kind == Kind::Hardlink
            && let Err(why) = self.take_link_content(&mut node)
        {
            return self.report(layer, raw, why);
        }
        if matches!(node.kind, Kind::Char | Kind::Block | Kind::Fifo) && !is_within(&path, "/dev") {
            self.report(
                layer,
                raw,
                format!(
                    "a {} outside /dev{landed}: indexed as one (no image builder ships one; code that opens it blocks or reaches a device)",
                    node.kind.as_str()
                ),
            );
        }
        if let Some(old) =
            self.entries.get(&path).filter(|old| old.layer == layer && !(old.kind == Kind::Dir && node.kind == Kind::Dir) && !old.same_content(&node))
        {
            let what = if old.kind == node.kind {
                format!("twice as a {} with other content", old.kind.as_str())
            } else {
                format!("as a {} and then as a {}", old.kind.as_str(), node.kind.as_str())
            };
            let reason = format!(
                "written {what} in one layer{landed}: the later one is indexed, as a runtime extracts it (a tool that keeps the first sees other content)"
            );
            self.report(layer, raw, reason);
        }
        if node.kind != Kind::Dir {
            self.remove_below(&path);
        }
        self.insert(path, node);
    }

    /// A hard link's content: its target's, when an earlier entry wrote it.
    fn take_link_content(&self, node: &mut Node) -> Result<(), String> {
        let target = node.link.clone().unwrap_or_default();
        let (parent, name) = split(&target);
        let dir = self.resolve(parent).map_err(|why| format!("a hard link to {target}, whose directory {why}: not applied"))?;
        match self.entries.get(join(&dir, name).as_str()) {
            None => Err(format!(
                "a hard link to {target}, which no earlier entry of the image wrote: not applied, no content assumed (a runtime fails to apply the layer)"
            )),
            Some(t) if t.kind == Kind::Dir => Err(format!("a hard link to the directory {target}: not applied (no filesystem allows one)")),
            Some(t) => {
                node.kind = t.kind;
                node.size = t.size;
                node.digest = t.digest;
                node.pyc = t.pyc.clone();
                node.text = t.text;
                node.link = t.link.clone();
                Ok(())
            }
        }
    }

    fn resolve<'a>(&'a self, dir: &'a str) -> Result<Cow<'a, str>, Unresolved> {
        self.links.resolve(&self.entries, dir, MAX_PATH)
    }

    /// A hostile entry of layer `layer` (listed up to [`MAX_LISTED`]).
    pub(crate) fn report(&mut self, layer: u16, path: &str, reason: String) {
        if self.hostile.len() < MAX_LISTED {
            self.hostile.push(HostileEntry { layer, path: path.to_string(), reason });
        } else {
            self.unlisted += 1;
        }
    }

    fn insert(&mut self, path: Box<str>, node: Node) {
        let was_link = self.entries.get(&path).is_some_and(|old| old.kind == Kind::Symlink);
        match (was_link, node.kind == Kind::Symlink) {
            (false, true) => self.links.insert(&path),
            (true, false) => self.links.remove(&path),
            _ => {}
        }
        self.entries.insert(path, node);
    }

    fn remove(&mut self, path: &str) {
        if self.entries.remove(path).is_some_and(|old| old.kind == Kind::Symlink) {
            self.links.remove(path);
        }
    }

    /// Remove everything strictly below directory `dir`: one lookup when
    /// there is nothing, whatever the index size.
    fn remove_below(&mut self, dir: &str) {
        let prefix = if dir == "/" { "/".to_string() } else { format!("{dir}/") };
        let below: Vec<Box<str>> = self
            .entries
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(&prefix))
            .filter(|k| &***k != "/")
            .cloned()
            .collect();
        for path in below {
            self.remove(&path);
        }
    }

    pub(crate) fn get(&self, path: &str) -> Option<&Node> {
        self.entries.get(path)
    }

    /// Entries strictly below `dir`, in order.
    pub(crate) fn below<'a>(&'a self, dir: &str) -> impl Iterator<Item = (&'a str, &'a Node)> + 'a {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        self.entries
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .map(|(k, v)| (&**k, v))
            .take_while(move |(k, _)| k.starts_with(&prefix))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use crate::image::forensics::content::ContentHash;

    pub(crate) fn file(content: &[u8]) -> Node {
        Node {
            kind: Kind::File,
            mode: 0o644,
            uid: 0,
            gid: 0,
            size: content.len() as u64,
            digest: Some(ContentHash::Sha256.of(content)),
            pyc: None,
            link: None,
            text: None,
            layer: 0,
        }
    }

    pub(crate) fn dir() -> Node {
        Node { kind: Kind::Dir, mode: 0o755, digest: None, size: 0, ..file(b"") }
    }

    /// A layer applied as the cache applies one: hides first, then entries.
    pub(crate) fn apply(fs: &mut FsIndex, layer: u16, ops: Vec<Op>) {
        for op in &ops {
            fs.hide(layer, op);
        }
        for op in ops {
            fs.add(layer, op);
        }
    }

    fn put(p: &str, n: Node) -> Op {
        Op::Put(p.into(), n)
    }

    fn paths(fs: &FsIndex) -> Vec<&str> {
        fs.entries.keys().map(|k| &**k).collect()
    }

    #[test]
    fn whiteouts_opaque_dirs_and_replacements() {
        let mut fs = FsIndex::default();
        apply(
            &mut fs,
            0,
            vec![
                put("/", dir()),
                put("/a", dir()),
                put("/a/x", file(b"x")),
                put("/a/y", file(b"y")),
                put("/a0", file(b"")),
                put("/b", dir()),
                put("/b/z", file(b"z")),
            ],
        );
        apply(&mut fs, 1, vec![Op::Whiteout("/a/x".into()), Op::Opaque("/b".into()), put("/b/new", file(b"n")), put("/a/y", file(b"y2"))]);
        assert_eq!(paths(&fs), ["/", "/a", "/a/y", "/a0", "/b", "/b/new"]);
        assert_eq!(fs.get("/a/y").unwrap().layer, 1);
        // a file replacing a directory hides its children; a whiteout of a dir removes the subtree
        apply(&mut fs, 2, vec![put("/b", file(b"now a file")), Op::Whiteout("/a".into())]);
        assert_eq!(paths(&fs), ["/", "/a0", "/b"]);
        apply(&mut fs, 3, vec![Op::Opaque("/".into())]);
        assert_eq!(paths(&fs), ["/"]);
    }

    fn link(target: &str) -> Node {
        Node { kind: Kind::Symlink, link: Some(target.into()), digest: None, ..file(b"") }
    }

    fn reasons(fs: &FsIndex) -> Vec<(&str, &str)> {
        fs.hostile.iter().map(|h| (h.path.as_str(), h.reason.as_str())).collect()
    }

    #[test]
    fn hardlinks_take_their_targets_content_and_dangling_ones_are_refused() {
        let mut fs = FsIndex::default();
        let hard = |target: &str| Node { kind: Kind::Hardlink, link: Some(target.into()), mode: 0o755, digest: None, ..file(b"") };
        apply(
            &mut fs,
            0,
            vec![
                put("/bin/busybox", file(b"elf")),
                put("/usr/bin/env", hard("/bin/busybox")),
                put("/dangling", hard("/nope")),
                put("/d", dir()),
                put("/to-dir", hard("/d")),
            ],
        );
        let env = fs.get("/usr/bin/env").unwrap();
        assert_eq!((env.kind, env.digest, env.size, env.mode), (Kind::File, file(b"elf").digest, 3, 0o755));
        assert!(fs.get("/dangling").is_none() && fs.get("/to-dir").is_none());
        let r = reasons(&fs);
        assert_eq!(r.len(), 2);
        assert!(r[0].0 == "/dangling" && r[0].1.contains("no earlier entry of the image wrote: not applied"), "{r:?}");
        assert!(r[1].1.contains("hard link to the directory /d"), "{r:?}");
        assert_eq!(fs.below("/bin").count(), 1);
    }

    #[test]
    fn entries_land_where_symlinks_take_them_and_escapes_are_refused() {
        let mut fs = FsIndex::default();
        apply(
            &mut fs,
            0,
            vec![
                put("/usr/lib", dir()),
                put("/lib", link("usr/lib")),
                put("/lib/libc.so", file(b"c")),
                put("/usr/lib/up", link("../../../../tmp/host")),
                put("/usr/lib/up/pwned", file(b"x")),
            ],
        );
        assert_eq!(fs.get("/usr/lib/libc.so").unwrap().digest, file(b"c").digest);
        assert!(fs.get("/lib/libc.so").is_none());
        assert!(fs.entries.keys().all(|k| !k.contains("pwned")), "{:?}", fs.entries.keys().collect::<Vec<_>>());
        assert_eq!(
            reasons(&fs),
            [(
                "/usr/lib/up/pwned",
                "its directory goes through the symlink /usr/lib/up -> ../../../../tmp/host, which leaves the root (an extractor that follows it writes outside the image): not applied"
            )]
        );
        // a later layer: the symlink from below still counts; a whiteout through it is refused too
        apply(&mut fs, 1, vec![Op::Whiteout("/usr/lib/up/x".into()), put("/usr/lib/up/later", file(b"y"))]);
        assert_eq!(fs.hostile.len(), 3);
        assert!(fs.hostile[1].reason.starts_with("a whiteout whose directory goes through the symlink /usr/lib/up"));
        // replacing the link with a directory makes the path ordinary again
        apply(&mut fs, 2, vec![put("/usr/lib/up", dir()), put("/usr/lib/up/now", file(b"z"))]);
        assert!(fs.get("/usr/lib/up/now").is_some());
        assert_eq!(fs.hostile.len(), 3);
        // a whiteout through an in-root link removes the target
        apply(&mut fs, 3, vec![Op::Whiteout("/lib/libc.so".into())]);
        assert!(fs.get("/usr/lib/libc.so").is_none());
    }

    #[test]
    fn duplicates_and_special_files_are_reported_and_kept() {
        let mut fs = FsIndex::default();
        let fifo = Node { kind: Kind::Fifo, digest: None, size: 0, ..file(b"") };
        let dev = Node { kind: Kind::Char, ..fifo.clone() };
        apply(
            &mut fs,
            0,
            vec![
                put("/a", dir()),
                put("/a", dir()),
                put("/f", file(b"1")),
                put("/f", file(b"1")),
                put("/g", file(b"1")),
                put("/g", link("/etc/passwd")),
                put("/dev/null", dev.clone()),
                put("/usr/lib/python3/site.py", fifo),
                put("/usr/sda", dev),
            ],
        );
        let r = reasons(&fs);
        assert_eq!(r.iter().map(|(p, _)| *p).collect::<Vec<_>>(), ["/g", "/usr/lib/python3/site.py", "/usr/sda"], "{r:?}");
        assert!(r[0].1.starts_with("written as a file and then as a symlink in one layer: the later one is indexed"), "{r:?}");
        assert!(r[1].1.starts_with("a fifo outside /dev"), "{r:?}");
        assert_eq!(fs.get("/g").unwrap().kind, Kind::Symlink);
        assert_eq!(fs.get("/usr/sda").unwrap().kind, Kind::Char);
        // the same path in a later layer is an ordinary replacement
        apply(&mut fs, 1, vec![put("/f", file(b"2"))]);
        assert_eq!(fs.hostile.len(), 3);
    }

    #[test]
    fn entries_deeper_than_the_limit_are_refused() {
        let mut fs = FsIndex::new(2);
        apply(&mut fs, 0, vec![put("/a", dir()), put("/a/b", dir()), put("/a/b/c", file(b""))]);
        assert_eq!(paths(&fs), ["/a", "/a/b"]);
        assert_eq!(reasons(&fs), [("/a/b/c", "the path is 3 directories deep, over --max-path-depth (2): not applied")]);
    }

    #[test]
    fn hostile_entries_beyond_the_listed_are_counted() {
        let mut fs = FsIndex::default();
        let ops =
            (0..MAX_LISTED + 5).map(|i| put(&format!("/h{i}"), Node { kind: Kind::Hardlink, link: Some("/none".into()), digest: None, ..file(b"") })).collect();
        apply(&mut fs, 0, ops);
        assert_eq!((fs.hostile.len(), fs.unlisted), (MAX_LISTED, 5));
    }

    #[test]
    fn a_shuffled_layer_of_many_files_merges_without_moving_the_index() {
        // each put used to split the index at its path and append the rest
        // back (BTreeMap::append rebuilds the tree): quadratic out of order
        let n: u64 = 100_000;
        let ops: Vec<Op> = (0..n).map(|i| put(&format!("/d/{:07}", i * 7919 % n), file(b""))).collect();
        let start = std::time::Instant::now();
        let mut fs = FsIndex::default();
        apply(&mut fs, 0, ops);
        assert_eq!(fs.entries.len() as u64, n);
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "{:?}", start.elapsed());
    }
}
