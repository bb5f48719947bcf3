//! How the policy's patterns match: paths (an exact path, `DIR/**`, `*`
//! within one component) and Python distribution names (PEP 503 normalised,
//! `*` wildcards). Checks of scripts and of images judge with the same
//! matcher, so one policy entry means the same thing to both.

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

/// PEP 503: lower case, runs of `-`, `_`, `.` as one `-`.
pub fn normalise_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Whether a distribution `name` is one the package `patterns` list.
pub fn lists_package(patterns: &[String], name: &str) -> bool {
    let name = normalise_name(name);
    !name.is_empty() && patterns.iter().any(|p| matches(&normalise_name(p), &name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_patterns() {
        assert!(matches("/etc/ld.so.cache", "/etc/ld.so.cache"));
        assert!(!matches("/etc/ld.so.cache", "/etc/ld.so.cache2"));
        assert!(matches("/var/log/**", "/var/log/apt/history.log"));
        assert!(!matches("/var/log/**", "/var/logs/x"));
        assert!(matches("/var/log/*.log", "/var/log/dpkg.log"));
        assert!(!matches("/var/log/*.log", "/var/log/apt/term.log"));
        assert!(matches("/usr/lib/python3*/__pycache__/*", "/usr/lib/python3.12/__pycache__/x.pyc"));
        assert!(matches("/a/*x*y", "/a/0x1y"));
        assert!(!matches("/a/*x*y", "/a/0y1x"));
    }

    #[test]
    fn package_names_match_as_pep_503_normalises_them() {
        let patterns = vec!["sgl-*".to_string(), "flash_attn".to_string()];
        assert!(lists_package(&patterns, "SGL_Kernel") && lists_package(&patterns, "flash.attn"));
        assert!(!lists_package(&patterns, "sglang") && !lists_package(&patterns, ""));
    }
}
