//! Paths inside an image: how a tar name becomes an index key, and how a
//! name that cannot be one is shown in a finding. Names are bytes in a
//! tar; the index keys are absolute, normalised UTF-8 paths, so a name is
//! refused when the mapping would be lossy (a NUL, bytes that are not
//! UTF-8: two names could become one) or when a runtime would not put it
//! where it says (`..`), and when it is longer than any real file's path
//! (which also bounds the work per entry).

use crate::image::limits::MAX_PATH;
use std::fmt::Write as _;

/// Most bytes of a hostile name kept for its finding.
const MAX_SHOWN: usize = 1024;

/// A tar name as an index key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Named {
    /// `/a/b`: absolute, no `.`, no empty or trailing components.
    pub path: String,
    /// The name itself was absolute (`/a/b`), which no image builder writes.
    pub absolute: bool,
}

/// The index key of a tar name (`./a/b/`, `a//b`, `/a/b`), or why it has none.
pub(super) fn normalise(raw: &[u8]) -> Result<Named, String> {
    let text = text_of(raw)?;
    let mut path = String::with_capacity(text.len() + 1);
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("a `..` component climbs out of its directory (a runtime would refuse or rewrite it)".into()),
            p => {
                path.push('/');
                path.push_str(p);
                if path.len() > MAX_PATH {
                    return Err(format!("is longer than {MAX_PATH} bytes (PATH_MAX)"));
                }
            }
        }
    }
    if path.is_empty() {
        path.push('/');
    }
    Ok(Named { path, absolute: text.starts_with('/') })
}

/// A symlink target as written (`..` is the merge's to resolve), when it
/// is text and no longer than a path.
pub(super) fn symlink_target(raw: &[u8]) -> Result<String, String> {
    let text = text_of(raw)?;
    if text.len() > MAX_PATH {
        return Err(format!("is longer than {MAX_PATH} bytes (PATH_MAX)"));
    }
    Ok(text.to_string())
}

/// A name as text, when it maps to one without loss.
fn text_of(raw: &[u8]) -> Result<&str, String> {
    if raw.contains(&0) {
        return Err("holds a NUL byte, which no file name can".into());
    }
    std::str::from_utf8(raw).map_err(|_| "is not UTF-8 (shown with \\x escapes): tools that decode names differently see different files".to_string())
}

/// A name as a finding shows it: control characters and bytes that are
/// not UTF-8 as `\xNN`, at most [`MAX_SHOWN`] bytes.
pub(super) fn shown(raw: &[u8]) -> String {
    let mut out = String::new();
    'chunks: for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            if out.len() >= MAX_SHOWN {
                break 'chunks;
            }
            if c.is_control() {
                let _ = write!(out, "\\x{:02x}", c as u32);
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    if out.len() >= MAX_SHOWN {
        let _ = write!(out, "… ({} bytes)", raw.len());
    }
    out
}

/// (`/a`, `b`) of `/a/b`; (`/`, `x`) of `/x`.
pub(super) fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(0) => ("/", &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("/", path),
    }
}

/// `base` joined with `rel` (`../../bin/x` climbs; an absolute `rel`
/// stands alone), normalised; `None` when it climbs above the root.
pub(super) fn resolve(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') { Vec::new() } else { base.split('/').filter(|p| !p.is_empty()).collect() };
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// `dir/name`.
pub(super) fn join(dir: &str, name: &str) -> String {
    if dir == "/" { format!("/{name}") } else { format!("{dir}/{name}") }
}

/// Whether `path` is `dir` or below it.
pub(super) fn is_within(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(raw: &[u8]) -> Result<String, String> {
        normalise(raw).map(|n| n.path)
    }

    #[test]
    fn names_become_keys_or_reasons() {
        assert_eq!(key(b"./usr//lib/").unwrap(), "/usr/lib");
        assert_eq!(normalise(b"/etc/passwd").unwrap(), Named { path: "/etc/passwd".into(), absolute: true });
        assert!(!normalise(b"etc/passwd").unwrap().absolute);
        assert_eq!(key(b"./").unwrap(), "/");
        assert!(key(b"usr/../../etc").unwrap_err().contains("`..`"));
        assert!(key(b"usr/a\0b").unwrap_err().contains("NUL"));
        assert!(key(b"usr/\xff").unwrap_err().contains("not UTF-8"));
        let long = "x".repeat(MAX_PATH);
        assert_eq!(key(long.as_bytes()).unwrap_err(), "is longer than 4096 bytes (PATH_MAX)");
        assert!(key(&long.as_bytes()[1..]).is_ok());
        assert_eq!(symlink_target(b"../../etc").unwrap(), "../../etc");
        assert!(symlink_target(b"a\0").is_err() && symlink_target(&[b'x'; MAX_PATH + 1]).unwrap_err().contains("longer than 4096 bytes"));
    }

    #[test]
    fn hostile_names_are_shown_escaped_and_clipped() {
        assert_eq!(shown(b"usr/a\0b\xff\n"), "usr/a\\x00b\\xff\\x0a");
        assert_eq!(shown(b"../etc"), "../etc");
        let long = shown(&[b'a'; 5000]);
        assert!(long.starts_with(&"a".repeat(MAX_SHOWN)) && long.ends_with("… (5000 bytes)"), "{long}");
    }

    #[test]
    fn splits_joins_and_prefixes() {
        assert_eq!(split("/a/b"), ("/a", "b"));
        assert_eq!(split("/x"), ("/", "x"));
        assert_eq!(join("/", "x"), "/x");
        assert_eq!(join("/a", "x"), "/a/x");
        assert!(is_within("/dev/null", "/dev") && is_within("/dev", "/dev"));
        assert!(!is_within("/device", "/dev") && !is_within("/usr/dev/x", "/dev"));
    }
}
