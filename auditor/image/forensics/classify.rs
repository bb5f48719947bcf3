//! What a file change in an image means, as an `engine-patch` finding:
//! a patch leftover, a start-up hook, a reinstalled or forked wheel, a
//! changed native library, a new executable on PATH, a changed entry
//! point, a bytecode-only change, or an edit inside a distribution (named
//! with its version) or an engine source tree. Severity follows the
//! policy: the serving engine's own packages and trees are errors, other
//! distributions warnings, unrelated files lower, volatile files info.
//! [`Finder`] turns changes between two [`Side`]s into findings.

use super::dist::Distribution;
use super::node::Node;
use super::noise::is_pyc;
use super::paths::split;
use super::pyc::source_of as pyc_source;
use super::severity::{self, Hook, Origin};
use super::side::{Rules, Side, describe};
use super::sys_path::{SysPath, pth_imports};
use super::tree_diff::{Change, ChangeKind};
use super::unified_diff;
use crate::finding::{Finding, Severity};
use std::collections::{BTreeMap, BTreeSet};

/// A patch leftover: `.patch`, `.diff`, `.rej`, `.orig`.
pub(super) fn is_patch_file(path: &str) -> bool {
    [".patch", ".diff", ".rej", ".orig"].iter().any(|e| path.ends_with(e))
}

/// A start-up hook by name (`sitecustomize.py`, `usercustomize.py`).
pub(super) fn is_customize(path: &str) -> bool {
    matches!(split(path).1, "sitecustomize.py" | "usercustomize.py")
}

/// A native library: `x.so`, `libx.so.1.2`.
fn is_native_library(path: &str) -> bool {
    let name = split(path).1;
    name.ends_with(".so") || name.contains(".so.")
}

/// Turns the changes between an upstream and a pinned image into findings.
pub(super) struct Finder<'a> {
    pub rules: Rules<'a>,
    pub upstream: Side<'a>,
    pub pinned: Side<'a>,
    /// The pinned image's PATH directories.
    path_dirs: Vec<String>,
    /// Console scripts of engine distributions (either image).
    engine_scripts: BTreeSet<String>,
    /// What the pinned image's Python imports (engine names from both images).
    python: SysPath,
    /// Bytes of unified diff left to spend.
    budget: usize,
}

impl<'a> Finder<'a> {
    pub(super) fn new(rules: Rules<'a>, upstream: Side<'a>, pinned: Side<'a>) -> Self {
        let path = pinned
            .image
            .config
            .env
            .iter()
            .rev()
            .find_map(|e| e.strip_prefix("PATH="))
            .unwrap_or("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        let path_dirs = path.split(':').filter(|d| d.starts_with('/')).map(|d| d.trim_end_matches('/').to_string()).collect();
        let engine_scripts = pinned.dists.iter().chain(upstream.dists).filter(|d| rules.engine_name(&d.name)).flat_map(|d| d.scripts.iter().cloned()).collect();
        let python = SysPath::new(&pinned, &[&upstream], &rules);
        Finder { rules, upstream, pinned, path_dirs, engine_scripts, python, budget: unified_diff::BUDGET }
    }

    /// A finding about `path`, with evidence from the pinned image (or the
    /// upstream one for a deletion).
    fn finding(&self, rule: &str, severity: Severity, kind: &str, change: &Change, message: String) -> Finding {
        let text = match (change.old, change.new) {
            (Some(o), Some(n)) => format!("upstream {} | pinned {}", describe(o), describe(n)),
            (None, Some(n)) => format!("pinned {}", describe(n)),
            (Some(o), None) => format!("upstream {} (deleted)", describe(o)),
            (None, None) => String::new(),
        };
        let evidence = match change.new {
            Some(n) => self.pinned.evidence(change.path, Some(n), text),
            None => self.upstream.evidence(change.path, change.old, text),
        };
        Finding::new(rule, severity, message, None, vec![evidence]).in_image(kind, Some(change.path))
    }

    /// The unified diff of a change, when both sides (or the added side)
    /// are captured texts.
    fn text_diff(&mut self, change: &Change) -> Option<String> {
        let new = self.pinned.texts.text(change.new?)?;
        let old = match change.old {
            Some(o) => self.upstream.texts.text(o)?,
            None => Vec::new(),
        };
        unified_diff::unified(change.path, &old, &new, &mut self.budget)
    }

    /// Where the change was made, for messages.
    fn origin(&self, change: &Change) -> String {
        match (change.new, change.old) {
            (Some(n), _) => format!(", written by {} of the pinned image", self.pinned.written_by(n)),
            (None, Some(o)) => format!(", present in {} of the upstream image", self.upstream.written_by(o)),
            _ => String::new(),
        }
    }

    /// The finding for one file change, or `None` when another finding
    /// covers it (dist-info files: [`Finder::distributions`]; a `.pyc`
    /// whose source changed too).
    pub(super) fn classify(&mut self, change: &Change) -> Option<Finding> {
        let path = change.path;
        let writes = matches!(change.kind, ChangeKind::Added | ChangeKind::Modified);
        let what = change.kind.as_str();
        let origin = self.origin(change);
        if self.pinned.in_meta_dir(path) || self.upstream.in_meta_dir(path) {
            return None;
        }
        if self.rules.volatile(path) {
            return Some(self.finding("engine-patch/volatile", Severity::Info, what, change, format!("{path} {what}: a file every build rewrites{origin}")));
        }
        let owner = self.pinned.owner(path).or_else(|| self.upstream.owner(path));
        let engine = owner.is_some_and(|d| self.rules.engine_name(&d.name)) || self.rules.engine_tree(path);
        let scope = match owner {
            Some(d) => format!(" in {}{}", d.label(), if engine { " (a serving-engine package)" } else { "" }),
            None if engine => " in a serving-engine source tree".to_string(),
            None => String::new(),
        };
        let level = |engine: bool| if engine { Severity::Error } else { Severity::Warning };
        if writes && is_patch_file(path) {
            let mut f = self.finding(
                "engine-patch/patch-file",
                Severity::Error,
                "patch-file",
                change,
                format!("{path}: a patch file or patch leftover {what}{scope}{origin}"),
            );
            f.diff = self.text_diff(change);
            return Some(f);
        }
        if writes && is_customize(path) {
            let mut f = self.finding(
                "engine-patch/hook",
                severity::hook(Hook::Customize, Origin::Changed),
                "hook",
                change,
                format!("{path}: a Python start-up hook {what} (runs in every interpreter, before the engine){origin}"),
            );
            f.diff = self.text_diff(change);
            return Some(f);
        }
        if writes && path.ends_with(".pth") {
            let text = change.new.and_then(|n| self.pinned.texts.text(n));
            let (hook, does) = if text.is_none() && change.new.is_some() {
                // Too large to read whole: what it runs is not known, and CPython reads it all.
                (Hook::PthUnread, "too large to read whole: whether it runs code at every interpreter start is not known")
            } else if pth_imports(&text.unwrap_or_default()) {
                (Hook::PthImport, "with an `import` line: code that runs at every interpreter start")
            } else {
                (Hook::PthPath, "adding sys.path entries (import shadowing)")
            };
            let mut f =
                self.finding("engine-patch/hook", severity::hook(hook, Origin::Changed), "hook", change, format!("{path}: a .pth file {what} {does}{origin}"));
            f.diff = self.text_diff(change);
            return Some(f);
        }
        // Judged like the engine: a module shadowing an engine's, and code that runs at every start.
        let shadow = if writes && !engine { self.python.shadow(path, &self.rules) } else { None };
        let startup = if writes { self.python.startup(path) } else { None };
        let scope = match (&shadow, &startup) {
            (Some(s), _) => format!("{scope}: {}", s.describe()),
            (None, Some((name, by))) => format!("{scope}: part of `{name}`, which {by} imports at every interpreter start (code that runs before the engine)"),
            (None, None) => scope,
        };
        let engine = engine || shadow.is_some() || startup.is_some();
        if is_pyc(path) {
            let source = pyc_source(path)?;
            let (old_src, new_src) = (self.upstream.fs.get(&source), self.pinned.fs.get(&source));
            let source_same = match (old_src, new_src) {
                (Some(a), Some(b)) => a.same_content(b),
                (None, None) => true,
                _ => false,
            };
            if !source_same {
                return None;
            }
            if change.kind == ChangeKind::Modified {
                return Some(self.finding(
                    "engine-patch/bytecode",
                    level(engine || owner.is_some()),
                    "bytecode",
                    change,
                    format!("{path}: compiled bytecode changed while its source {source} did not{scope}: Python runs the .pyc{origin}"),
                ));
            }
        }
        if writes && is_native_library(path) {
            return Some(self.finding(
                "engine-patch/native-library",
                level(engine),
                "native-library",
                change,
                format!("{path}: native library {what}{scope}{origin}"),
            ));
        }
        let (dir, name) = split(path);
        if writes && change.new.is_some_and(Node::is_executable) && self.path_dirs.iter().any(|d| d == dir) {
            if self.engine_scripts.contains(name) {
                return Some(self.finding(
                    "engine-patch/entry-point",
                    Severity::Error,
                    "entry-point",
                    change,
                    format!("{path}: the engine entry point `{name}` {what}{origin}"),
                ));
            }
            if change.kind == ChangeKind::Added {
                return Some(self.finding(
                    "engine-patch/executable",
                    level(engine),
                    "executable",
                    change,
                    format!("{path}: a new executable on PATH{scope}{origin}"),
                ));
            }
        }
        let severity = match (change.kind, owner.is_some(), engine) {
            (ChangeKind::Metadata, _, true) => Severity::Warning,
            (ChangeKind::Metadata, _, false) => Severity::Info,
            (_, _, true) => Severity::Error,
            (_, true, false) => Severity::Warning,
            (ChangeKind::Added, false, false) => Severity::Info,
            (_, false, false) => Severity::Warning,
        };
        let detail = match (change.kind, change.old, change.new) {
            (ChangeKind::Metadata, Some(o), Some(n)) => format!(" (mode {:o} -> {:o}, owner {}:{} -> {}:{})", o.mode, n.mode, o.uid, o.gid, n.uid, n.gid),
            (ChangeKind::Modified, Some(o), Some(n)) if o.kind != n.kind => format!(" ({} -> {})", o.kind.as_str(), n.kind.as_str()),
            _ => String::new(),
        };
        let (rule, kind) = match (owner, engine, &shadow, &startup) {
            (_, _, Some(_), _) => ("engine-patch/import-shadowing", "import-shadowing"),
            (_, _, None, Some(_)) => ("engine-patch/hook", "hook"),
            (Some(_), ..) => ("engine-patch/distribution-file", what),
            (None, true, ..) => ("engine-patch/engine-file", what),
            (None, false, ..) => ("engine-patch/image-file", what),
        };
        let mut f = self.finding(rule, severity, kind, change, format!("{path} {what}{detail}{scope}{origin}"));
        if change.kind == ChangeKind::Modified || (change.kind == ChangeKind::Added && (owner.is_some() || shadow.is_some() || startup.is_some())) {
            f.diff = self.text_diff(change);
        }
        Some(f)
    }

    /// Distributions reinstalled (version, local label, direct URL,
    /// installer, wheel build, dist-info contents), newly installed or
    /// removed, one finding each.
    pub(super) fn distributions(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        let upstream: BTreeMap<(&str, &str), &Distribution> = self.upstream.dists.iter().map(|d| ((d.site.as_str(), d.key.as_str()), d)).collect();
        let pinned: BTreeMap<(&str, &str), &Distribution> = self.pinned.dists.iter().map(|d| ((d.site.as_str(), d.key.as_str()), d)).collect();
        for (key, p) in &pinned {
            let engine = self.rules.engine_name(&p.name);
            let meta = self.pinned.fs.get(&format!("{}/METADATA", p.meta_dir)).or_else(|| self.pinned.fs.get(&p.meta_dir));
            let evidence = |text: String| self.pinned.evidence(&p.meta_dir, meta, text);
            let Some(u) = upstream.get(key) else {
                let (severity, what) = if engine {
                    (Severity::Error, "a serving-engine package installed on top of the upstream image")
                } else {
                    (Severity::Warning, "a distribution the upstream image does not have")
                };
                let source = p.direct_url.as_ref().map(|u| format!(" from {}", u.describe())).unwrap_or_default();
                let f = Finding::new(
                    "engine-patch/new-distribution",
                    severity,
                    format!("{} installed in {}{source}: {what}", p.label(), p.site),
                    None,
                    vec![evidence(format!("{} {}", p.meta_dir, p.label()))],
                );
                findings.push(f.in_image("added", Some(&p.meta_dir)));
                continue;
            };
            let mut reasons = Vec::new();
            if p.version != u.version {
                reasons.push(format!("version {} -> {}", u.version, p.version));
            }
            if let Some((_, local)) = p.version.split_once('+').filter(|_| p.version != u.version) {
                reasons.push(format!("local version label +{local} (a rebuilt or forked wheel)"));
            }
            if p.direct_url != u.direct_url
                && let Some(url) = &p.direct_url
            {
                reasons.push(format!("installed from {} (direct_url.json)", url.describe()));
            }
            if p.installer != u.installer {
                reasons.push(format!("INSTALLER {} -> {}", u.installer.as_deref().unwrap_or("-"), p.installer.as_deref().unwrap_or("-")));
            }
            if p.build != u.build || p.generator != u.generator {
                reasons.push(format!(
                    "WHEEL build {} / generator {} -> {} / {}",
                    u.build.as_deref().unwrap_or("-"),
                    u.generator.as_deref().unwrap_or("-"),
                    p.build.as_deref().unwrap_or("-"),
                    p.generator.as_deref().unwrap_or("-")
                ));
            }
            if p.meta_dir != u.meta_dir {
                reasons.push(format!("metadata directory {} -> {}", split(&u.meta_dir).1, split(&p.meta_dir).1));
            }
            let changed: Vec<&str> = self
                .pinned
                .fs
                .below(&p.meta_dir)
                .filter(|(path, node)| {
                    let rel = &path[p.meta_dir.len()..];
                    self.upstream.fs.get(&format!("{}{rel}", u.meta_dir)).is_none_or(|o| !o.same_content(node))
                })
                .map(|(path, _)| split(path).1)
                .collect();
            if !changed.is_empty() && reasons.is_empty() {
                reasons.push(format!("dist-info files changed: {}", changed.join(", ")));
            }
            if reasons.is_empty() {
                continue;
            }
            let severity = if engine { Severity::Error } else { Severity::Warning };
            let message = format!("{} reinstalled over upstream's {}: {}", p.label(), u.label(), reasons.join("; "));
            let f = Finding::new(
                "engine-patch/wheel-reinstall",
                severity,
                message,
                None,
                vec![evidence(format!("{} {} (upstream {})", p.meta_dir, p.label(), u.label()))],
            );
            findings.push(f.in_image("wheel-reinstall", Some(&p.meta_dir)));
        }
        for (key, u) in &upstream {
            if !pinned.contains_key(key) && !pinned.values().any(|p| p.key == u.key) {
                let severity = if self.rules.engine_name(&u.name) { Severity::Error } else { Severity::Warning };
                let meta = self.upstream.fs.get(&format!("{}/METADATA", u.meta_dir));
                let f = Finding::new(
                    "engine-patch/distribution-file",
                    severity,
                    format!("{} removed from {}", u.label(), u.site),
                    None,
                    vec![self.upstream.evidence(&u.meta_dir, meta, format!("{} {} (deleted)", u.meta_dir, u.label()))],
                );
                findings.push(f.in_image("deleted", Some(&u.meta_dir)));
            }
        }
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_patterns() {
        assert_eq!(pyc_source("/s/pkg/__pycache__/m.cpython-312.pyc").as_deref(), Some("/s/pkg/m.py"));
        assert_eq!(pyc_source("/s/m.pyc").as_deref(), Some("/s/m.py"));
        assert!(is_patch_file("/tmp/fix.patch") && is_patch_file("/a/b.py.orig") && is_patch_file("/a/b.py.rej") && !is_patch_file("/a/patch.py"));
        assert!(is_customize("/usr/lib/python3/dist-packages/sitecustomize.py") && !is_customize("/x/customize.py"));
        assert!(is_native_library("/a/libx.so.1.2") && is_native_library("/a/_C.cpython-312-x86_64-linux-gnu.so") && !is_native_library("/a/so.py"));
        assert!(pth_imports(b"/some/dir\nimport os; os.environ['X']='1'\n") && !pth_imports(b"/some/dir\n# import x\n"));
        // A bare carriage return ends a line for CPython; so do a BOM-led first line and splitlines() breaks.
        assert!(pth_imports(b"/some/dir\rimport hack\n") && pth_imports(b"\xef\xbb\xbfimport hack\n") && pth_imports(b"x\x0cimport hack"));
        assert!(!pth_imports(b"/some/dir\r# import hack\n"));
    }

    #[test]
    fn engine_names_follow_the_policy() {
        let policy = crate::policy::Policy::embedded();
        let rules = Rules::new(policy.checks.engine_patch().unwrap());
        for name in ["sglang", "vLLM", "flashinfer_python", "sgl-kernel", "tensorrt_llm", "torch", "nvidia-cublas-cu12"] {
            assert!(rules.engine_name(name), "{name}");
        }
        for name in ["six", "requests", "torchvision-extra"] {
            assert!(!rules.engine_name(name), "{name}");
        }
        assert!(rules.engine_tree("/sgl-workspace/sglang/python/sglang/srt/server.py"));
        // vllm-openai's working tree is as much the engine as SGLang's.
        assert!(rules.engine_tree("/vllm-workspace/vllm/model_executor/layers/fused_moe/layer.py"));
        assert!(rules.volatile("/etc/ld.so.cache") && rules.volatile("/var/log/apt/history.log"));
        assert!(rules.injection("PYTHONPATH") && !rules.injection("PATH"));
    }
}
