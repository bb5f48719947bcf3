//! `--changed-since GIT_REF`: judge only what a change touches, so a PR on
//! a repository with a past is gated on its own edits. What changed comes
//! from the `git` CLI (`diff --name-only` plus untracked files; `diff -U0`
//! hunks for master configs, whose entries share one file); a job is
//! selected when a file it runs changed (its recipe, script, or a file the
//! script sources), when its master-config entry's lines changed, or when a
//! changed waiver names its script. Every other job is skipped with the
//! reason, never silently dropped.

use crate::checks::AuditedJob;
use crate::evidence::FileEvidence;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ChangesError {
    #[error("--changed-since: cannot run git ({0}); install git or drop --changed-since")]
    NoGit(std::io::Error),
    #[error("--changed-since: {path} is not a git checkout (git: {detail})")]
    NotCheckout { path: PathBuf, detail: String },
    #[error("--changed-since: {reference:?} is not a commit in {path} (git: {detail})")]
    UnknownRef { path: PathBuf, reference: String, detail: String },
    #[error("--changed-since: git {args} failed in {path}: {detail}")]
    Git { path: PathBuf, args: String, detail: String },
}

/// What changed in a checkout since a ref.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// Paths relative to the checkout directory (the audited input), changed
    /// in the work tree or index since the ref, or untracked.
    pub files: BTreeSet<String>,
    untracked: BTreeSet<String>,
    /// For files read line by line (master configs): the changed lines of
    /// the current file (1-based); `None` when the whole file is new.
    lines: BTreeMap<String, Option<BTreeSet<u64>>>,
}

fn git(dir: &Path, args: &[&str]) -> Result<std::process::Output, ChangesError> {
    Command::new("git").arg("-C").arg(dir).args(args).env("GIT_OPTIONAL_LOCKS", "0").output().map_err(ChangesError::NoGit)
}

fn detail(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim();
    line.chars().take(300).collect()
}

impl Changes {
    /// Read which files changed in the checkout at `dir` since `reference`.
    pub fn read(dir: &Path, reference: &str) -> Result<Self, ChangesError> {
        let inside = git(dir, &["rev-parse", "--is-inside-work-tree"])?;
        if !inside.status.success() || String::from_utf8_lossy(&inside.stdout).trim() != "true" {
            let detail = if dir.is_dir() { detail(&inside) } else { "not a directory".to_string() };
            return Err(ChangesError::NotCheckout { path: dir.to_path_buf(), detail });
        }
        let verify = git(dir, &["rev-parse", "--verify", "--quiet", "--end-of-options", &commit(reference)])?;
        if reference.starts_with('-') || !verify.status.success() {
            let detail = if verify.stderr.is_empty() { "unknown revision".to_string() } else { detail(&verify) };
            return Err(ChangesError::UnknownRef { path: dir.to_path_buf(), reference: reference.to_string(), detail });
        }
        let split =
            |bytes: Vec<u8>| -> Vec<String> { bytes.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()).collect() };
        let mut files: BTreeSet<String> =
            split(run(dir, &["diff", "--name-only", "--no-renames", "--relative", "-z", &commit(reference), "--"])?).into_iter().collect();
        let untracked: BTreeSet<String> = split(run(dir, &["ls-files", "--others", "--exclude-standard", "-z"])?).into_iter().collect();
        files.extend(untracked.iter().cloned());
        Ok(Changes { files, untracked, lines: BTreeMap::new() })
    }

    /// Add the changed lines of the changed master configs among `sources`.
    pub fn with_lines(&self, dir: &Path, reference: &str, sources: &[FileEvidence]) -> Result<Self, ChangesError> {
        let mut out = self.clone();
        for path in sources.iter().filter(|f| !f.master.is_empty() && self.files.contains(&f.path)).map(|f| f.path.as_str()) {
            let changed = if self.untracked.contains(path) {
                None
            } else {
                let diff = run(dir, &["diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", "--relative", &commit(reference), "--", path])?;
                hunk_lines(&String::from_utf8_lossy(&diff))
            };
            out.lines.insert(path.to_string(), changed);
        }
        Ok(out)
    }
}

/// `REF^{commit}`: the ref as a commit, whatever kind of ref it is.
fn commit(reference: &str) -> String {
    format!("{reference}^{{commit}}")
}

/// Run git in `dir`; its standard output, or an error with its first line of standard error.
fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, ChangesError> {
    let out = git(dir, args)?;
    if out.status.success() { Ok(out.stdout) } else { Err(ChangesError::Git { path: dir.to_path_buf(), args: args.join(" "), detail: detail(&out) }) }
}

/// The lines of the new side that `diff -U0` hunks touch; a pure deletion
/// touches the lines on either side of it. `None` for a new file.
fn hunk_lines(diff: &str) -> Option<BTreeSet<u64>> {
    let mut out = BTreeSet::new();
    for line in diff.lines() {
        if line.starts_with("--- /dev/null") {
            return None;
        }
        let Some(rest) = line.strip_prefix("@@ ") else { continue };
        let Some(new) = rest.split_whitespace().find(|t| t.starts_with('+')) else { continue };
        let mut parts = new[1..].splitn(2, ',');
        let start: u64 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let count: u64 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(1);
        if count == 0 {
            out.insert(start.max(1));
            out.insert(start + 1);
        } else {
            out.extend(start..start.saturating_add(count.min(1 << 24)));
        }
    }
    Some(out)
}

/// The top-level keys of a YAML file as line ranges `[start, end)`: a
/// master config's entries.
fn entry_ranges(text: &str) -> Vec<(u64, u64)> {
    let starts: Vec<u64> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let first = l.chars().next();
            first.is_some_and(|c| !c.is_whitespace() && c != '#' && c != '-' && c != '.') && l.contains(':')
        })
        .map(|(i, _)| i as u64 + 1)
        .collect();
    let total = text.lines().count() as u64 + 1;
    starts.iter().enumerate().map(|(i, &s)| (s, starts.get(i + 1).copied().unwrap_or(total))).collect()
}

/// The shell files a script sources, as checkout paths: `source X` / `. X`
/// where X is relative to the script's directory (`$(dirname "$0")`,
/// `$SCRIPT_DIR`, ...) or to the checkout (`/workspace/...`,
/// `$INFERENCEX_ROOT/...`); anything else cannot be resolved statically.
fn sourced(script: &str, text: &str) -> Vec<String> {
    let dir = Path::new(script).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("source ").or_else(|| line.strip_prefix(". ")) else { continue };
        let unquoted: String = rest.trim().chars().filter(|c| *c != '"' && *c != '\'').collect();
        let here =
            ["$(dirname $0)", "$(dirname ${BASH_SOURCE[0]})", "$(dirname $BASH_SOURCE)", "${SCRIPT_DIR}", "$SCRIPT_DIR", "$HERE", "${HERE}", "$DIR", "${DIR}"];
        // The directory substitutions hold spaces: the argument ends at the first space after them.
        let (prefix, tail) = match here.iter().find(|p| unquoted.starts_with(**p)) {
            Some(p) => unquoted.split_at(p.len()),
            None => ("", unquoted.as_str()),
        };
        let arg = format!("{prefix}{}", tail.split_whitespace().next().unwrap_or(""));
        let root = [
            "/workspace",
            "$INFERENCEX_ROOT",
            "${INFERENCEX_ROOT}",
            "$INFMAX_CONTAINER_WORKSPACE",
            "${INFMAX_CONTAINER_WORKSPACE}",
            "$GITHUB_WORKSPACE",
            "${GITHUB_WORKSPACE}",
        ];
        let joined = if let Some(rest) = here.iter().find_map(|p| arg.strip_prefix(p)) {
            dir.join(rest.trim_start_matches('/'))
        } else if let Some(rest) = root.iter().find_map(|p| arg.strip_prefix(p)) {
            PathBuf::from(rest.trim_start_matches('/'))
        } else if !arg.contains('$') && !arg.starts_with('/') && !arg.is_empty() {
            dir.join(&arg)
        } else {
            continue;
        };
        if let Some(path) = normalise(&joined) {
            out.push(path);
        }
    }
    out
}

/// `a/b/../c` -> `a/c`; `None` when it leaves the checkout.
fn normalise(path: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Which jobs a change touches.
pub struct Selection {
    /// Index into the jobs -> why it is judged.
    pub selected: BTreeMap<usize, String>,
}

/// Select the jobs of one checkout (at `root`) that `changes` touches.
/// `sources` are the whole files as extracted (master configs among them).
pub fn select(root: &Path, jobs: &[AuditedJob], sources: &[FileEvidence], changes: &Changes) -> Selection {
    let masters: BTreeSet<&str> = sources.iter().filter(|f| !f.master.is_empty()).map(|f| f.path.as_str()).collect();
    // The changed entries of each changed master config, as line ranges.
    let mut changed_entries: BTreeMap<&str, Option<Vec<(u64, u64)>>> = BTreeMap::new();
    for path in masters.iter().filter(|p| changes.files.contains(**p)) {
        let ranges = match changes.lines.get(*path) {
            Some(Some(lines)) => {
                let text = std::fs::read_to_string(root.join(path)).unwrap_or_default();
                Some(entry_ranges(&text).into_iter().filter(|(s, e)| lines.range(*s..*e).next().is_some()).collect())
            }
            _ => None,
        };
        changed_entries.insert(path, ranges);
    }
    // Sourced files, transitively (a library sourcing another).
    let mut sourced_by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let sources_of = |script: &str, memo: &mut BTreeMap<String, BTreeSet<String>>| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![script.to_string()];
        while let Some(s) = stack.pop() {
            if seen.len() > 64 {
                break;
            }
            let direct = memo.entry(s.clone()).or_insert_with(|| {
                let text = std::fs::read(root.join(&s)).map(|b| String::from_utf8_lossy(&b[..b.len().min(4 << 20)]).into_owned()).unwrap_or_default();
                sourced(&s, &text).into_iter().collect()
            });
            for d in direct.clone() {
                if seen.insert(d.clone()) {
                    stack.push(d);
                }
            }
        }
        seen
    };
    let changed_waivers: Vec<&FileEvidence> = sources.iter().filter(|f| f.waiver.is_some() && changes.files.contains(&f.path)).collect();
    let mut selected = BTreeMap::new();
    for (i, job) in jobs.iter().enumerate() {
        let mut why = None;
        for view in &job.files {
            let path = view.path.as_str();
            if let Some(ranges) = changed_entries.get(path) {
                let lines =
                    view.env.iter().filter_map(|a| a.provenance.line).chain(view.metadata.as_ref().and_then(|m| m.image_at.as_ref()).and_then(|p| p.line));
                let hit = match ranges {
                    None => true,
                    Some(ranges) => lines.into_iter().any(|l| ranges.iter().any(|(s, e)| (*s..*e).contains(&l))),
                };
                if hit {
                    why = Some(format!("its master-config entry in {path} changed"));
                    break;
                }
            } else if !masters.contains(path) && changes.files.contains(path) {
                why = Some(format!("{path} changed"));
                break;
            }
            if view.kind == crate::evidence::FileKind::Script {
                if let Some(lib) = sources_of(path, &mut sourced_by).into_iter().find(|s| changes.files.contains(s)) {
                    why = Some(format!("{path} sources {lib}, which changed"));
                    break;
                }
            }
            if let Some(w) = changed_waivers.iter().find(|w| w.waiver.as_ref().is_some_and(|w| w.names(path))) {
                why = Some(format!("the waiver {} naming {path} changed", w.path));
                break;
            }
        }
        if let Some(why) = why {
            selected.insert(i, why);
        }
    }
    Selection { selected }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_new_side_lines() {
        let diff = "diff --git a/c.yaml b/c.yaml\n--- a/c.yaml\n+++ b/c.yaml\n@@ -3 +3 @@\n-a\n+b\n@@ -10,2 +10,0 @@\n-x\n-y\n@@ -20,0 +19,2 @@ key:\n+p\n+q\n";
        assert_eq!(hunk_lines(diff).unwrap().into_iter().collect::<Vec<_>>(), vec![3, 10, 11, 19, 20]);
        assert_eq!(hunk_lines("--- /dev/null\n+++ b/c.yaml\n@@ -0,0 +1,3 @@\n"), None);
    }

    #[test]
    fn entries_are_top_level_keys() {
        let text = "# header\na:\n  image: x\n  - y\nb: 1\n\n'c':\n  z: 2\n";
        assert_eq!(entry_ranges(text), vec![(2, 5), (5, 7), (7, 9)]);
    }

    #[test]
    fn sourced_paths_resolve_against_script_and_checkout() {
        let text = "source \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n  . ./env.sh\nsource /workspace/benchmarks/x.sh\nsource $WS/env.sh\nsource /etc/profile\nsource ../../../../../../escape.sh\n";
        assert_eq!(
            sourced("benchmarks/single_node/fixed/a.sh", text),
            vec!["benchmarks/benchmark_lib.sh", "benchmarks/single_node/fixed/env.sh", "benchmarks/x.sh"]
        );
    }
}
