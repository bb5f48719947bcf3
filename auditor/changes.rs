//! `--changed-since GIT_REF`: judge only what a change touches, so a PR on
//! a repository with a past is gated on its own edits. What changed is the
//! work tree compared with the commit's tree, blob id by blob id, and the
//! changed lines of master configs (whose entries share one file) a line
//! diff against the commit's blob, all read through [`crate::git`], so
//! nothing the repository configures ever runs; a job is
//! selected when a file it runs changed (its recipe, script, or a file the
//! script sources), when its master-config entry's lines changed, or when a
//! changed waiver names its script. Every other job is skipped with the
//! reason, never silently dropped.

use crate::checks::AuditedJob;
use crate::evidence::FileEvidence;
use crate::evidence::shell::library;
use crate::git;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
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
    /// Paths relative to the checkout directory (the audited input) whose
    /// content differs from the ref's tree: changed, added or deleted.
    pub files: BTreeSet<String>,
    /// The base commit and its blobs (path below the checkout -> object id).
    base: Option<(String, BTreeMap<String, String>)>,
    /// The checkout's folder within the repository (`""` or ending in `/`).
    prefix: String,
    /// For files read line by line (master configs): the changed lines of
    /// the current file (1-based); `None` when the whole file is new.
    lines: BTreeMap<String, Option<BTreeSet<u64>>>,
    /// For changed shell files the base holds too (the libraries scripts
    /// source): the functions whose behaviour changed, `None` when the
    /// change reaches beyond them ([`library::changed_functions`]).
    functions: BTreeMap<String, Option<BTreeSet<String>>>,
}

/// Files of the work tree, relative to `dir`, as `/`-joined paths: every
/// regular file and symbolic link below it but git's own directory. A link
/// is hashed as the file it leads to, as [`git::blobs`] lists the base's: it
/// changed when that file did, and a link that leads nowhere is compared
/// with nothing (a link that was there and is gone is still deleted).
fn work_tree_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else { continue };
            let child = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
            if kind.is_dir() && name != ".git" {
                stack.push((entry.path(), child));
            } else if kind.is_file() || kind.is_symlink() {
                out.push(child);
            }
        }
    }
    out
}

impl Changes {
    /// Read which files of the checkout at `dir` differ from `reference`'s
    /// tree: added, changed or deleted. The work tree is compared with the
    /// commit's blob ids here, byte for byte, so git never reads it (no
    /// fsmonitor, no clean filter, no index refresh can run).
    pub fn read(dir: &Path, reference: &str) -> Result<Self, ChangesError> {
        let inside = git::rev_parse(dir, &["--is-inside-work-tree"]).map_err(ChangesError::NoGit)?;
        if inside.as_deref() != Ok("true") {
            let detail = if dir.is_dir() { inside.err().unwrap_or_else(|| "not inside a work tree".to_string()) } else { "not a directory".to_string() };
            return Err(ChangesError::NotCheckout { path: dir.to_path_buf(), detail });
        }
        let verified = git::rev_parse(dir, &["--verify", "--quiet", "--end-of-options", &commit(reference)]).map_err(ChangesError::NoGit)?;
        let base = match verified {
            Ok(id) if !reference.starts_with('-') && !id.is_empty() => id,
            other => {
                let detail = other.err().filter(|e| !e.is_empty()).unwrap_or_else(|| "unknown revision".to_string());
                return Err(ChangesError::UnknownRef { path: dir.to_path_buf(), reference: reference.to_string(), detail });
            }
        };
        let prefix = git::rev_parse(dir, &["--show-prefix"]).map_err(ChangesError::NoGit)?.unwrap_or_default();
        let format = git::object_format(dir).map_err(ChangesError::NoGit)?;
        // The folder may not exist at the base: then everything in it is new.
        let blobs: BTreeMap<String, String> = git::blobs(dir, &base, &prefix).unwrap_or_default().into_iter().map(|b| (b.path, b.oid)).collect();
        let mut files = BTreeSet::new();
        let on_disk = work_tree_files(dir);
        for path in &on_disk {
            let Ok(id) = format.blob_id_of(&dir.join(path)) else { continue };
            if blobs.get(path) != Some(&id) {
                files.insert(path.clone());
            }
        }
        let present: BTreeSet<&String> = on_disk.iter().collect();
        files.extend(blobs.keys().filter(|p| !present.contains(p)).cloned());
        Ok(Changes { files, lines: BTreeMap::new(), functions: BTreeMap::new(), base: Some((base, blobs)), prefix })
    }

    /// The base commit (its full id) and the checkout's folder within the
    /// repository: where the base audit reads the tree from.
    pub fn base(&self) -> Option<(&str, &str)> {
        self.base.as_ref().map(|(commit, _)| (commit.as_str(), self.prefix.as_str()))
    }

    /// Add the changed lines of the changed master configs among `sources`,
    /// and the changed functions of the changed shell files.
    pub fn with_lines(&self, dir: &Path, _reference: &str, sources: &[FileEvidence]) -> Result<Self, ChangesError> {
        let mut out = self.clone();
        let masters: Vec<&str> = sources.iter().filter(|f| !f.master.is_empty() && self.files.contains(&f.path)).map(|f| f.path.as_str()).collect();
        let shell: Vec<&str> =
            self.files.iter().filter(|p| p.ends_with(".sh") && self.base_blob(p).is_some() && dir.join(p).is_file()).map(String::as_str).collect();
        if masters.is_empty() && shell.is_empty() {
            return Ok(out);
        }
        let mut objects = git::Objects::open(dir).map_err(ChangesError::NoGit)?;
        for path in masters {
            // A file the base does not hold is new whole (`None`).
            let changed = self.old_and_new(&mut objects, dir, path)?.map(|(old, new)| changed_lines(&old, &new));
            out.lines.insert(path.to_string(), changed);
        }
        for path in shell {
            let functions = self.old_and_new(&mut objects, dir, path)?.and_then(|(old, new)| library::changed_functions(&old, &new));
            out.functions.insert(path.to_string(), functions);
        }
        Ok(out)
    }

    fn base_blob(&self, path: &str) -> Option<&String> {
        self.base.as_ref().and_then(|(_, blobs)| blobs.get(path))
    }

    /// The base's text of `path` and the work tree's, when the base holds it.
    fn old_and_new(&self, objects: &mut git::Objects, dir: &Path, path: &str) -> Result<Option<(String, String)>, ChangesError> {
        let failed = |detail: String| ChangesError::Git { path: dir.to_path_buf(), args: "cat-file --batch".to_string(), detail };
        let Some(oid) = self.base_blob(path) else { return Ok(None) };
        let old = objects
            .with_blob(oid, |_, reader| {
                let mut text = String::new();
                reader.read_to_string(&mut text).map(|_| text)
            })
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| failed(e.to_string()))?;
        let new = std::fs::read_to_string(dir.join(path)).map_err(|e| failed(format!("{path}: {e}")))?;
        Ok(Some((old, new)))
    }

    /// Whether running `script` may run something that changed in a file
    /// it sources (`sourced`): any change but one to a library's functions
    /// that no file of the run names — neither the script, nor another file
    /// it sources, nor the job's `others` (its config, its runners), read
    /// through `texts`. A function called by a name the run assembles from
    /// pieces is the one call this misses; the library's own evaluation
    /// still judges what the changed function does. The reason, or why not.
    pub fn sourced_change(&self, script: &str, sourced: &BTreeSet<String>, others: &[&str], texts: &mut SourceGraph) -> Result<String, String> {
        let mut untouched = Vec::new();
        for lib in sourced.iter().filter(|s| self.files.contains(*s)) {
            let Some(Some(functions)) = self.functions.get(lib) else { return Ok(format!("{script} sources {lib}, which changed")) };
            if functions.is_empty() {
                untouched.push(format!("{lib} changed in comments or blank lines only"));
                continue;
            }
            let files = std::iter::once(script).chain(sourced.iter().map(String::as_str)).chain(others.iter().copied());
            for file in files.filter(|f| *f != lib) {
                if let Some(name) = library::named(&texts.text(file), functions) {
                    return Ok(format!("{script} sources {lib}, whose function {name} changed, and {file} names it"));
                }
            }
            let names: Vec<&str> = functions.iter().map(String::as_str).collect();
            untouched.push(format!("it sources {lib}, whose changed functions ({}) none of its files names", names.join(", ")));
        }
        Err(untouched.join("; "))
    }
}

/// `REF^{commit}`: the ref as a commit, whatever kind of ref it is.
fn commit(reference: &str) -> String {
    format!("{reference}^{{commit}}")
}

/// The lines of `new` (1-based) that differ from `old`, line by line; a
/// pure deletion touches the lines on either side of it.
fn changed_lines(old: &str, new: &str) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for op in similar::TextDiff::from_lines(old, new).ops() {
        let range = op.new_range();
        match op.tag() {
            similar::DiffTag::Equal => {}
            similar::DiffTag::Delete => {
                let at = range.start as u64;
                out.insert(at.max(1));
                out.insert(at + 1);
            }
            similar::DiffTag::Insert | similar::DiffTag::Replace => out.extend((range.start as u64 + 1)..=(range.end as u64)),
        }
    }
    out
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

/// The shell files scripts of a checkout source, transitively (a library
/// sourcing another), read once each.
pub struct SourceGraph<'r> {
    root: &'r Path,
    direct: BTreeMap<String, BTreeSet<String>>,
    texts: BTreeMap<String, std::rc::Rc<str>>,
}

impl<'r> SourceGraph<'r> {
    pub fn new(root: &'r Path) -> Self {
        SourceGraph { root, direct: BTreeMap::new(), texts: BTreeMap::new() }
    }

    /// The text of the checkout's file `path` (its first 4 MiB; empty when unreadable).
    pub fn text(&mut self, path: &str) -> std::rc::Rc<str> {
        let root = self.root;
        self.texts
            .entry(path.to_string())
            .or_insert_with(|| {
                let bytes = std::fs::read(root.join(path)).unwrap_or_default();
                String::from_utf8_lossy(&bytes[..bytes.len().min(4 << 20)]).into()
            })
            .clone()
    }

    /// Every file `script` sources, directly or through another (at most 64).
    pub fn closure(&mut self, script: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![script.to_string()];
        while let Some(s) = stack.pop() {
            if seen.len() > 64 {
                break;
            }
            if !self.direct.contains_key(&s) {
                let text = self.text(&s);
                self.direct.insert(s.clone(), sourced(&s, &text).into_iter().collect());
            }
            for d in self.direct[&s].clone() {
                if seen.insert(d.clone()) {
                    stack.push(d);
                }
            }
        }
        seen
    }
}

/// Which jobs a change touches.
pub struct Selection {
    /// Index into the jobs -> why it is judged.
    pub selected: BTreeMap<usize, String>,
    /// Index into the jobs -> why a job that sources a changed library is
    /// not: the library changed only in functions it never names.
    pub unselected: BTreeMap<usize, String>,
}

impl Selection {
    /// The scripts to evaluate to judge the selected jobs of `jobs` (in a
    /// checkout at `root`): every script of a selected job, except in the
    /// pseudo-job of the repository's leftover files, which any changed
    /// leftover (a changelog) selects: there only the scripts that changed
    /// or source a changed file, since the others judge as in the base.
    pub fn scripts(&self, root: &Path, jobs: &[AuditedJob], changes: &Changes) -> BTreeSet<String> {
        let mut graph = SourceGraph::new(root);
        let mut out = BTreeSet::new();
        for job in self.selected.keys().filter_map(|i| jobs.get(*i)) {
            let leftover = job.job.id == crate::jobs::repository::LEFTOVER;
            for file in job.files.iter().filter(|f| f.kind == crate::evidence::FileKind::Script) {
                let sourced = if leftover && !changes.files.contains(&file.path) { graph.closure(&file.path) } else { BTreeSet::new() };
                if !leftover || changes.files.contains(&file.path) || changes.sourced_change(&file.path, &sourced, &[], &mut graph).is_ok() {
                    out.insert(file.path.clone());
                }
            }
        }
        out
    }
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
    let mut graph = SourceGraph::new(root);
    let changed_waivers: Vec<&FileEvidence> = sources.iter().filter(|f| f.waiver.is_some() && changes.files.contains(&f.path)).collect();
    let mut selected = BTreeMap::new();
    let mut unselected = BTreeMap::new();
    for (i, job) in jobs.iter().enumerate() {
        let mut why = None;
        let mut unchanged = None;
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
            // The runners the entry's jobs are scheduled on, the files they run, and what those source.
            let runners = view.metadata.as_ref().map_or(&[][..], |m| m.runners.as_slice());
            if let Some(changed) = runners.iter().find_map(|r| graph.closure(r).into_iter().chain([r.clone()]).find(|s| changes.files.contains(s))) {
                why = Some(format!("{changed}, which the runner of its entry runs, changed"));
                break;
            }
            if view.kind == crate::evidence::FileKind::Script {
                let sourced = graph.closure(path);
                let others: Vec<&str> = job.files.iter().map(|f| f.path.as_str()).chain(runners.iter().map(String::as_str)).collect();
                match changes.sourced_change(path, &sourced, &others, &mut graph) {
                    Ok(reason) => {
                        why = Some(reason);
                        break;
                    }
                    Err(untouched) if !untouched.is_empty() => unchanged = Some(untouched),
                    Err(_) => {}
                }
            }
            if let Some(w) = changed_waivers.iter().find(|w| w.waiver.as_ref().is_some_and(|w| w.names(path))) {
                why = Some(format!("the waiver {} naming {path} changed", w.path));
                break;
            }
        }
        match (why, unchanged) {
            (Some(why), _) => {
                selected.insert(i, why);
            }
            (None, Some(untouched)) => {
                unselected.insert(i, untouched);
            }
            (None, None) => {}
        }
    }
    Selection { selected, unselected }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_are_the_new_sides() {
        // Line 3 replaced, old lines 11-12 deleted after new line 10, two lines inserted as new 19-20.
        let old: String = (1..=22).map(|i| format!("o{i}\n")).collect();
        let mut new: Vec<String> = (1..=22).map(|i| format!("o{i}")).collect();
        new[2] = "b".to_string();
        new.drain(10..12);
        new.splice(18..18, ["p".to_string(), "q".to_string()]);
        let new: String = new.iter().map(|l| format!("{l}\n")).collect();
        assert_eq!(changed_lines(&old, &new).into_iter().collect::<Vec<_>>(), vec![3, 10, 11, 19, 20]);
        assert!(changed_lines(&old, &old).is_empty());
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
