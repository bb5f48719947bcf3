//! How the policy's patterns match: paths (glob patterns, [`PathPatterns`]) and Python distribution names (PEP 503 normalised,
//! `*` wildcards). Checks of scripts and of images judge with the same
//! matcher, so one policy entry means the same thing to both.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

/// Path patterns as a policy writes them, compiled once: an exact path,
/// `*` within one component (`/var/log/*.log`), `**` across any number
/// of them (`DIR/**`, `/opt/**/site-packages/x`), `[abc]` and `{a,b}`.
/// globset (ripgrep's matcher) does the matching; a pattern it cannot
/// compile is an error when the policy is read, not a silent miss.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct PathPatterns {
    patterns: Vec<String>,
    set: GlobSet,
}

impl TryFrom<Vec<String>> for PathPatterns {
    type Error = String;

    fn try_from(patterns: Vec<String>) -> Result<Self, String> {
        let mut set = GlobSetBuilder::new();
        for p in &patterns {
            set.add(GlobBuilder::new(p).literal_separator(true).build().map_err(|e| format!("path pattern {p:?}: {}", e.kind()))?);
        }
        let set = set.build().map_err(|e| e.to_string())?;
        Ok(PathPatterns { patterns, set })
    }
}

impl PartialEq for PathPatterns {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl Eq for PathPatterns {}

impl PathPatterns {
    /// Whether any pattern matches `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// The first pattern (in the policy's order) that matches `path`.
    pub fn first_match(&self, path: &str) -> Option<&str> {
        self.set.matches(path).into_iter().min().map(|i| self.patterns[i].as_str())
    }
}

/// Whether a package name (PEP 503 normalised) matches a normalised
/// pattern: `*` matches any run of characters.
fn name_matches(pattern: &str, name: &str) -> bool {
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else { return false };
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
    !name.is_empty() && patterns.iter().any(|p| name_matches(&normalise_name(p), &name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(p: &[&str]) -> PathPatterns {
        PathPatterns::try_from(p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn path_patterns() {
        let m = |p: &str, path: &str| patterns(&[p]).is_match(path);
        assert!(m("/etc/ld.so.cache", "/etc/ld.so.cache"));
        assert!(!m("/etc/ld.so.cache", "/etc/ld.so.cache2"));
        assert!(m("/var/log/**", "/var/log/apt/history.log"));
        assert!(!m("/var/log/**", "/var/logs/x") && !m("/var/log/**", "/var/log"));
        assert!(m("/var/log/*.log", "/var/log/dpkg.log"));
        assert!(!m("/var/log/*.log", "/var/log/apt/term.log"));
        assert!(m("/usr/lib/python3*/__pycache__/*", "/usr/lib/python3.12/__pycache__/x.pyc"));
        assert!(m("/a/*x*y", "/a/0x1y"));
        assert!(!m("/a/*x*y", "/a/0y1x"));
        // `**` in the middle spans any number of components, none included
        for path in ["/opt/site-packages/sglang/x.py", "/opt/venv/lib/site-packages/sglang/x.py"] {
            assert!(m("/opt/**/site-packages/sglang/*.py", path), "{path}");
        }
        assert!(!m("/opt/**/site-packages/sglang/*.py", "/opt/venv/site-packages/sglang/sub/x.py"));
        assert!(m("/usr/{lib,lib64}/*.so", "/usr/lib64/a.so"));
    }

    #[test]
    fn the_first_pattern_in_order_is_named_and_a_bad_one_is_an_error() {
        let p = patterns(&["/b/**", "/a/**", "/a/x/**"]);
        assert_eq!(p.first_match("/a/x/y"), Some("/a/**"));
        assert_eq!(p.first_match("/c"), None);
        let err = PathPatterns::try_from(vec!["/a/[".to_string()]).unwrap_err();
        assert!(err.starts_with("path pattern \"/a/[\": unclosed character class"), "{err}");
    }

    #[test]
    fn package_names_match_as_pep_503_normalises_them() {
        let patterns = vec!["sgl-*".to_string(), "flash_attn".to_string()];
        assert!(lists_package(&patterns, "SGL_Kernel") && lists_package(&patterns, "flash.attn"));
        assert!(!lists_package(&patterns, "sglang") && !lists_package(&patterns, ""));
    }
}
