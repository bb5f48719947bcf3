//! Where a report's files are, as code scanning and workflow annotations
//! name them: relative to the source root (`--source-root`, else the
//! deepest directory holding every audited path), normalised — no `./`,
//! no `..`, never absolute. A path outside the root has no such name, and
//! is then not given as a file at all.

use super::{Input, Report};
use crate::finding::Severity;
use std::path::{Component, Path, PathBuf};

/// How the renderings place and filter findings: where the formats for
/// tools (SARIF, GitHub annotations) name files from, and which findings
/// the text, SARIF and annotations list. JSON always holds every finding.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The directory paths are given relative to.
    pub source_root: Option<PathBuf>,
    /// Info findings (what was judged) too, in SARIF and annotations; by default only errors and warnings.
    pub include_info: bool,
    /// The least severe finding listed (`--min-severity`): below it, findings are counted, not listed.
    pub min_severity: Severity,
    /// The text report is the answer alone: the verdict and the checks that did not pass (`--quiet`).
    pub quiet: bool,
}

impl Default for Placement {
    fn default() -> Self {
        Placement { source_root: None, include_info: false, min_severity: Severity::Info, quiet: false }
    }
}

impl Placement {
    /// Whether a finding of `severity` is listed (rather than counted).
    pub fn lists(&self, severity: Severity) -> bool {
        severity <= self.min_severity
    }

    /// Whether the formats for tools (SARIF, annotations) carry a finding
    /// of `severity`: info only when asked for, and down to `--min-severity`.
    pub fn annotates(&self, severity: Severity) -> bool {
        (self.include_info || severity != Severity::Info) && self.lists(severity)
    }
}

/// The source root of one report, and the working directory paths are
/// read from (asked once).
pub struct Places {
    root: PathBuf,
    cwd: PathBuf,
}

impl Places {
    pub fn new(report: &Report, placement: &Placement) -> Places {
        let cwd = std::env::current_dir().unwrap_or_default();
        let from_cwd = |path: &Path| absolute(&cwd, path);
        let root = match &placement.source_root {
            Some(root) => from_cwd(root),
            None => {
                let roots = report.inputs.iter().filter_map(|i| match i {
                    Input::Bundle { path, .. } => {
                        let path = from_cwd(Path::new(path));
                        Some(if path.is_dir() { path } else { path.parent().map_or(path.clone(), Path::to_path_buf) })
                    }
                    Input::Image(_) => None,
                });
                roots.reduce(|a, b| common(&a, &b)).unwrap_or_else(|| cwd.clone())
            }
        };
        Places { root, cwd }
    }

    /// `path` (as the report gives it: relative to the working directory,
    /// or absolute) relative to the root, `/`-separated; `None` outside it.
    pub fn relative(&self, path: &str) -> Option<String> {
        let rel = absolute(&self.cwd, Path::new(path)).strip_prefix(&self.root).ok()?.to_path_buf();
        let parts: Vec<&str> = rel.components().map(|c| c.as_os_str().to_str()).collect::<Option<_>>()?;
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

/// `path` from the working directory `cwd`, with `.` and `..` resolved by
/// name (`..` stops at the root).
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The deepest directory holding both.
fn common(a: &Path, b: &Path) -> PathBuf {
    a.components().zip(b.components()).take_while(|(x, y)| x == y).map(|(x, _)| x).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_named_from_the_root_without_dots() {
        let places = Places { root: PathBuf::from("/repo"), cwd: PathBuf::from("/repo") };
        assert_eq!(places.relative("/repo/a/./b/../c.sh").as_deref(), Some("a/c.sh"));
        assert_eq!(places.relative("/repo/../etc/passwd"), None);
        assert_eq!(places.relative("/repo"), None, "the root itself is no file");
        assert_eq!(places.relative("/elsewhere/x"), None);
        assert_eq!(common(Path::new("/r/a/b"), Path::new("/r/a/c")), PathBuf::from("/r/a"));
    }
}
