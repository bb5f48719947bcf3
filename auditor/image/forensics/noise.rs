//! Format noise: what differs between two builds of the same content and
//! must not read as a change. A `.pyc` starts with a 16-byte header (magic,
//! flags, and the source's mtime and size or its hash) that every rebuild
//! rewrites; its body is the compiled code, compared on its own so a
//! changed body under an unchanged `.py` (a bytecode patch) still shows.
//! Volatile files (linker caches, machine ids, package-manager logs) change
//! on every build: the policy lists them as path patterns, matched here.

/// Bytes of a `.pyc` header (PEP 552, Python 3.7+).
pub(crate) const PYC_HEADER: u64 = 16;

/// Whether content normalisation applies: a compiled Python module.
pub(crate) fn is_pyc(path: &str) -> bool {
    path.ends_with(".pyc")
}

/// Whether `path` matches `pattern`: an exact path, a directory prefix
/// written `DIR/**`, or `*` wildcards within one path component
/// (`/var/log/*.log`).
pub(crate) fn matches(pattern: &str, path: &str) -> bool {
    if let Some(dir) = pattern.strip_suffix("/**") {
        return path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'));
    }
    let (p_parts, parts): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
    p_parts.len() == parts.len() && p_parts.iter().zip(&parts).all(|(p, s)| glob(p, s))
}

/// `*` matches any run of characters within one component.
fn glob(pattern: &str, s: &str) -> bool {
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = s.strip_prefix(first) else { return false };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else { return rest.is_empty() };
    for piece in middle {
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(matches("/etc/ld.so.cache", "/etc/ld.so.cache"));
        assert!(!matches("/etc/ld.so.cache", "/etc/ld.so.cache2"));
        assert!(matches("/var/log/**", "/var/log/apt/history.log"));
        assert!(!matches("/var/log/**", "/var/logs/x"));
        assert!(matches("/var/log/*.log", "/var/log/dpkg.log"));
        assert!(!matches("/var/log/*.log", "/var/log/apt/term.log"));
        assert!(matches("/usr/lib/python3*/__pycache__/*", "/usr/lib/python3.12/__pycache__/x.pyc"));
        assert!(matches("/a/*x*y", "/a/0x1y"));
        assert!(!matches("/a/*x*y", "/a/0y1x"));
        assert!(is_pyc("/a/__pycache__/m.cpython-312.pyc") && !is_pyc("/a/m.py"));
    }
}
