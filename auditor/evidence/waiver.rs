//! Engine-patch waivers (InferenceX `docs/waiver/<PR>.md`): a waiver covers
//! a patch only if it names the patching script and has all four parts —
//! what is patched, why the unmodified upstream image cannot run the
//! benchmark, upstream PR/issue links, and a removal plan.

use serde::Serialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Largest waiver read.
pub const MAX_WAIVER: usize = 1 << 20;

/// The four parts a waiver must have: (name, heading words that identify it).
const PARTS: [(&str, &[&str]); 4] = [
    ("what is patched", &["what is patched", "what's patched"]),
    ("why the upstream image cannot run the benchmark", &["why"]),
    ("upstream PR / issue links", &["upstream pr", "upstream issue", "links"]),
    ("removal plan", &["removal plan", "removal"]),
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Waiver {
    /// Where it was read (bundle path or file).
    pub path: String,
    /// The PR number from the file name.
    pub pr: String,
    /// Parts present with content.
    pub parts: Vec<String>,
    /// The text, lower-cased, for "does it name this script".
    #[serde(skip)]
    text: String,
}

impl Waiver {
    /// Parse a waiver's Markdown.
    pub fn parse(path: &str, text: &str) -> Waiver {
        let pr = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md").to_string();
        let mut parts = Vec::new();
        let mut current: Option<&str> = None;
        let mut has_body = false;
        let close = |current: Option<&str>, has_body: bool, parts: &mut Vec<String>| {
            if let (Some(name), true) = (current, has_body)
                && !parts.iter().any(|p| p == name)
            {
                parts.push(name.to_string());
            }
        };
        for line in text.lines() {
            let trimmed = line.trim();
            if let Some(heading) = trimmed.strip_prefix("## ") {
                close(current, has_body, &mut parts);
                let lower = heading.to_ascii_lowercase();
                current = PARTS.iter().find(|(_, words)| words.iter().any(|w| lower.contains(w))).map(|(name, _)| *name);
                has_body = false;
            } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
                // The links part needs a link, not just words.
                let counts = current != Some(PARTS[2].0) || trimmed.contains("http");
                has_body |= counts;
            }
        }
        close(current, has_body, &mut parts);
        Waiver { path: path.to_string(), pr, parts, text: text.to_ascii_lowercase() }
    }

    /// Whether a file path is a waiver: `docs/waiver/<number>.md`.
    pub fn is_waiver_path(path: &str) -> bool {
        let mut parts = path.rsplit('/');
        let (Some(name), Some(dir)) = (parts.next(), parts.next()) else { return false };
        dir == "waiver" && name.strip_suffix(".md").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    }

    /// Whether the waiver names the script (its path or file name): the
    /// name as a whole word, so a waiver of `qwen_fix.sh` does not cover
    /// `fix.sh`.
    pub fn names(&self, script: &str) -> bool {
        let name = script.rsplit('/').next().unwrap_or(script).to_ascii_lowercase();
        // Characters that continue a file name: before it, `.` too (`x.fix.sh`).
        let joins = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        !name.is_empty()
            && self.text.match_indices(&name).any(|(at, _)| {
                let before = self.text[..at].chars().next_back().is_some_and(|c| joins(c) || c == '.');
                let after = self.text[at + name.len()..].chars().next().is_some_and(joins);
                !before && !after
            })
    }

    /// The parts it lacks.
    pub fn missing(&self) -> Vec<&'static str> {
        PARTS.iter().map(|(name, _)| *name).filter(|name| !self.parts.iter().any(|p| p == name)).collect()
    }
}

/// Why a waiver directory (`--waivers DIR`) could not be used.
#[derive(Debug, Error)]
pub enum WaiverDirError {
    #[error("cannot list {path}: {source}")]
    List { path: PathBuf, source: std::io::Error },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{0}: no waivers (<PR number>.md) in this directory")]
    Empty(PathBuf),
}

/// Every `<PR>.md` waiver in `dir`, in name order. A directory without one
/// is an error: the option was meant to supply some.
pub fn read_dir(dir: &Path) -> Result<Vec<Waiver>, WaiverDirError> {
    let entries = std::fs::read_dir(dir).map_err(|source| WaiverDirError::List { path: dir.to_path_buf(), source })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !Waiver::is_waiver_path(&format!("waiver/{name}")) {
            continue;
        }
        let text = std::fs::read(&path).map_err(|source| WaiverDirError::Read { path: path.clone(), source })?;
        let text = String::from_utf8_lossy(&text[..text.len().min(MAX_WAIVER)]);
        out.push(Waiver::parse(&path.display().to_string(), &text));
    }
    if out.is_empty() {
        return Err(WaiverDirError::Empty(dir.to_path_buf()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "# Inference-engine patch waiver — PR #2600\n## Config covered\n`dsv4-fp4-mi355x-sglang`, patch entrypoint `bash patches/apply_fix.sh`\n## What is patched\n| Upstream PR | What | Notes |\n## Why the unmodified upstream image cannot run this benchmark\nIt crashes.\n## Upstream PR / issue links\n- https://github.com/sgl-project/sglang/pull/1\n## Removal plan\nDrop when v0.5.17 ships.\n";

    #[test]
    fn complete_waiver() {
        let w = Waiver::parse("docs/waiver/2600.md", FULL);
        assert_eq!(w.pr, "2600");
        assert!(w.missing().is_empty(), "{:?}", w.missing());
        assert!(w.names("benchmarks/patches/apply_fix.sh"));
        assert!(!w.names("other.sh"));
        assert!(!w.names("fix.sh") && !w.names("apply_fix.s"), "a part of the named script is not named");
    }

    #[test]
    fn missing_parts_are_named() {
        let text = FULL.replace("- https://github.com/sgl-project/sglang/pull/1", "see the PR").replace("Drop when v0.5.17 ships.", "");
        let w = Waiver::parse("docs/waiver/2600.md", &text);
        assert_eq!(w.missing(), ["upstream PR / issue links", "removal plan"]);
        assert!(Waiver::is_waiver_path("repo/docs/waiver/2600.md"));
        assert!(!Waiver::is_waiver_path("docs/waiver/README.md"));
    }

    #[test]
    fn a_waiver_directory_yields_its_pr_files_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("auditor-waivers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(matches!(read_dir(&dir), Err(WaiverDirError::Empty(_))));
        std::fs::write(dir.join("README.md"), "not a waiver").unwrap();
        std::fs::write(dir.join("2600.md"), FULL).unwrap();
        let waivers = read_dir(&dir).unwrap();
        assert_eq!(waivers.iter().map(|w| w.pr.as_str()).collect::<Vec<_>>(), ["2600"]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(read_dir(&dir), Err(WaiverDirError::List { .. })));
    }
}
