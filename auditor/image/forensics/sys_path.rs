//! What Python will import in an image, decided once for `image diff` and
//! `image verify`: the directories on the interpreter's `sys.path` (the
//! library and site directories a path lies in, the working directory
//! `python -m` puts first, `/`, `PYTHONPATH`, `.pth` path lines), the
//! top-level module names the serving engine's distributions install, and
//! the modules that run at every interpreter start (`.pth` import lines,
//! `sitecustomize`, `usercustomize`). A module with an engine's name
//! importable from any of those directories but the engine's own shadows
//! it; a change to start-up code runs before the engine, whoever ships it.

use super::node::Kind;
use super::paths::{is_within, join, resolve, split};
use super::side::{Rules, Side};
use std::collections::BTreeMap;

/// Where a directory on `sys.path` comes from, in the order Python searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Source {
    /// The working directory (`python -m`, `-c`) or a script's own.
    First,
    Pythonpath,
    Stdlib,
    Dynload,
    Site,
    /// A line of a `.pth` file.
    PthLine,
}

impl Source {
    fn describe(self) -> &'static str {
        match self {
            Source::First => "the working directory `python -m` puts first on sys.path",
            Source::Pythonpath => "on PYTHONPATH",
            Source::Stdlib => "a standard-library directory, searched before site-packages",
            Source::Dynload => "the standard library's lib-dynload",
            Source::Site => "a site directory",
            Source::PthLine => "added to sys.path by a .pth file",
        }
    }
}

/// A top-level module a path belongs to, and the `sys.path` directory it
/// is importable from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Module {
    pub dir: String,
    pub source: Source,
    pub name: String,
}

/// An engine module importable from somewhere the engine is not installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shadow {
    pub module: Module,
    /// `sglang 0.5.16 at /usr/local/lib/python3.12/dist-packages/sglang`, when installed.
    pub installed: Option<String>,
    /// Searched before the installed copy (known only for a different kind of directory).
    pub ahead: bool,
}

impl Shadow {
    /// `module `sglang` importable from /usr/lib/python3.12 (…), ahead of the installed sglang 0.5.16 at …`.
    pub(super) fn describe(&self) -> String {
        let m = &self.module;
        let installed = match &self.installed {
            Some(at) => format!(", {} the installed {at}", if self.ahead { "ahead of" } else { "beside" }),
            None => ", an engine package name".to_string(),
        };
        format!("module `{}` importable from {} ({}){installed}: it shadows the engine's own code", m.name, m.dir, m.source.describe())
    }
}

/// Where an engine distribution installed a top-level module.
struct Installed {
    /// `sglang 0.5.16`.
    label: String,
    /// Its site directory.
    site: String,
}

/// One image's import view.
pub(super) struct SysPath {
    /// Directories the config and `.pth` files put on `sys.path`.
    dirs: Vec<(String, Source)>,
    /// Engine top-level module name -> where it is installed.
    engine: BTreeMap<String, Installed>,
    /// Top-level module name -> what imports it at every start.
    startup: BTreeMap<String, String>,
}

impl SysPath {
    /// The view of `side` (the image that runs); `others` add engine
    /// module names only (the upstream's distributions, for a diff).
    pub(super) fn new(side: &Side, others: &[&Side], rules: &Rules) -> SysPath {
        let config = &side.image.config;
        let mut dirs = vec![("/".to_string(), Source::First)];
        let work = config.working_dir.trim_end_matches('/');
        if work.starts_with('/') {
            dirs.push((work.to_string(), Source::First));
        }
        if let Some(pp) = config.env.iter().rev().find_map(|e| e.strip_prefix("PYTHONPATH=")) {
            let base = if work.is_empty() { "/" } else { work };
            dirs.extend(pp.split(':').filter(|d| !d.is_empty()).map(|d| (absolute(base, d), Source::Pythonpath)));
        }
        let mut startup: BTreeMap<String, String> = ["sitecustomize", "usercustomize"].iter().map(|n| (n.to_string(), "the site module".to_string())).collect();
        for (path, node) in &side.fs.entries {
            let (dir, name) = split(path);
            if node.kind != Kind::File || !name.ends_with(".pth") || !is_site_dir(dir) {
                continue;
            }
            let Some(text) = side.texts.text(node) else { continue };
            if pth_imports(&text) {
                for module in pth_modules(&text) {
                    startup.entry(module).or_insert_with(|| path.to_string());
                }
            }
            for line in pth_lines(&text).into_iter().filter(|l| !l.is_empty() && !l.starts_with('#') && !is_import_line(l)) {
                dirs.push((absolute(dir, line.trim_end()), Source::PthLine));
            }
        }
        let mut engine = BTreeMap::new();
        for s in std::iter::once(side).chain(others.iter().copied()) {
            for d in s.dists.iter().filter(|d| rules.engine_name(&d.name)) {
                let tops = d.record.iter().flatten().filter_map(|row| module_name(row.path.strip_prefix(d.site.as_str())?.strip_prefix('/')?));
                for top in tops.chain(std::iter::once(d.key.replace('-', "_"))) {
                    engine.entry(top).or_insert_with(|| Installed { label: d.label(), site: d.site.clone() });
                }
            }
        }
        SysPath { dirs, engine, startup }
    }

    /// Every top-level module `path` belongs to, with the `sys.path`
    /// directory it is importable from.
    pub(super) fn modules(&self, path: &str) -> Vec<Module> {
        let found = library_dirs(path).into_iter().chain(self.dirs.iter().map(|(d, s)| (d.as_str(), *s)).filter(|(d, _)| *d == "/" || is_within(path, d)));
        let mut out: Vec<Module> = found
            .filter_map(|(dir, source)| {
                let rest = path.strip_prefix(dir)?.trim_start_matches('/');
                Some(Module { name: module_name(rest)?, dir: dir.to_string(), source })
            })
            .collect();
        out.sort_by(|a, b| (a.source, &a.dir).cmp(&(b.source, &b.dir)));
        out.dedup();
        out
    }

    /// The engine module `path` is importable as from a directory that is
    /// not where the engine installed it.
    pub(super) fn shadow(&self, path: &str, rules: &Rules) -> Option<Shadow> {
        self.modules(path).into_iter().find_map(|module| {
            let installed = self.engine.get(&module.name);
            if (installed.is_none() && !rules.engine_name(&module.name)) || installed.is_some_and(|i| i.site == module.dir) {
                return None;
            }
            // Site directories come after every other kind; two of a kind are searched in an order not known here.
            let ahead = installed.is_some() && module.source < Source::Site;
            let installed = installed.map(|i| format!("{} at {}", i.label, join(&i.site, &module.name)));
            Some(Shadow { installed, ahead, module })
        })
    }

    /// The start-up module `path` is part of, and what imports it at every start.
    pub(super) fn startup(&self, path: &str) -> Option<(String, &str)> {
        self.modules(path).into_iter().filter(|m| m.source != Source::First).find_map(|m| self.startup.get(&m.name).map(|by| (m.name, by.as_str())))
    }
}

/// `base/rel` normalised, or `rel` when absolute; one that climbs above
/// the root is taken as `/` (already on the path: nothing is narrowed).
fn absolute(base: &str, rel: &str) -> String {
    resolve(base, rel).unwrap_or_else(|| "/".to_string())
}

/// Whether `dir` is a directory whose `.pth` files `site` reads.
pub(super) fn is_site_dir(dir: &str) -> bool {
    dir.ends_with("/site-packages") || dir.ends_with("/dist-packages")
}

/// The Python library directories `path` lies in, by their names:
/// `…/lib/python3.N` (the standard library), its `lib-dynload`, and
/// `…/site-packages`, `…/dist-packages` (`/usr/lib/python3/dist-packages`).
fn library_dirs(path: &str) -> Vec<(&str, Source)> {
    let mut out = Vec::new();
    let mut end = 0;
    let mut previous = "";
    for part in path.split('/').skip(1) {
        let start = end + 1;
        end = start + part.len();
        let dir = &path[..end];
        // `python3.12`, not `python3` (Debian's shared dist-packages parent) nor `python3.x`.
        let versioned = part.strip_prefix("python3.").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if end < path.len() {
            if versioned && matches!(previous, "lib" | "lib64") {
                out.push((dir, Source::Stdlib));
            } else if part == "lib-dynload" && previous.starts_with("python3") {
                out.push((dir, Source::Dynload));
            } else if matches!(part, "site-packages" | "dist-packages") {
                out.push((dir, Source::Site));
            }
        }
        previous = part;
    }
    out
}

/// The top-level module a path relative to a `sys.path` directory is
/// part of: its first directory, or the file itself when it is a module
/// (`x.py`, `x.pyc`, `x.cpython-312-x86_64-linux-gnu.so`).
fn module_name(rel: &str) -> Option<String> {
    let (first, nested) = match rel.split_once('/') {
        Some((first, _)) => (first, true),
        None => (rel, false),
    };
    let name = if nested {
        first
    } else {
        let (stem, ext) = first.split_once('.')?;
        let ext = ext.rsplit('.').next()?;
        if !matches!(ext, "py" | "pyc" | "so") {
            return None;
        }
        stem
    };
    let identifier = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    (identifier && name != "__pycache__").then(|| name.to_string())
}

/// Whether a `.pth` file's text executes code: a line starting with `import`.
pub(super) fn pth_imports(text: &[u8]) -> bool {
    pth_lines(text).iter().any(|l| is_import_line(l))
}

/// A `.pth` file's lines as any CPython splits them: universal newlines
/// (a bare `\r` ends a line) up to 3.12, `str.splitlines()` after a
/// stripped BOM from 3.13 (also `\v`, `\f`, `\x1c`–`\x1e`, NEL, U+2028/9).
fn pth_lines(text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let breaks = |c: char| matches!(c, '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}');
    text.split(breaks).map(str::to_string).collect()
}

fn is_import_line(line: &str) -> bool {
    line.starts_with("import ") || line.starts_with("import\t")
}

/// The top-level modules a `.pth` file's import lines load: `import a.b,
/// c as d`, `from a import b`, `__import__('a')`, `importlib.import_module("a")`.
fn pth_modules(text: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let top = |name: &str| name.trim().split('.').next().map(str::to_string).filter(|n| module_name(&format!("{n}/")).is_some());
    for line in pth_lines(text).into_iter().filter(|l| is_import_line(l)) {
        for statement in line.split(';').map(str::trim) {
            if let Some(names) = statement.strip_prefix("import").filter(|r| r.starts_with([' ', '\t'])) {
                out.extend(names.split(',').filter_map(|n| top(n.split(" as ").next().unwrap_or(""))));
            } else if let Some(rest) = statement.strip_prefix("from").filter(|r| r.starts_with([' ', '\t'])) {
                out.extend(top(rest.split_whitespace().next().unwrap_or("")));
            }
            for call in ["__import__(", "import_module("] {
                for (i, _) in statement.match_indices(call) {
                    let arg = statement[i + call.len()..].trim_start();
                    if let Some(quote) = arg.chars().next().filter(|c| matches!(c, '\'' | '"')) {
                        out.extend(arg[1..].split(quote).next().and_then(top));
                    }
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_directories_are_found_by_name() {
        let dirs = |p| library_dirs(p).into_iter().map(|(d, s)| format!("{d} {s:?}")).collect::<Vec<_>>();
        assert_eq!(dirs("/usr/lib/python3.12/sglang/srt/x.py"), ["/usr/lib/python3.12 Stdlib"]);
        assert_eq!(
            dirs("/usr/local/lib/python3.12/site-packages/sglang/x.py"),
            ["/usr/local/lib/python3.12 Stdlib", "/usr/local/lib/python3.12/site-packages Site"]
        );
        assert_eq!(dirs("/usr/lib/python3/dist-packages/six.py"), ["/usr/lib/python3/dist-packages Site"]);
        assert_eq!(dirs("/usr/lib/python3.12/lib-dynload/x.so"), ["/usr/lib/python3.12 Stdlib", "/usr/lib/python3.12/lib-dynload Dynload"]);
        assert!(dirs("/usr/lib/python3.12").is_empty() && dirs("/opt/python3.12/x.py").is_empty());
    }

    #[test]
    fn module_names_of_packages_and_files() {
        assert_eq!(module_name("sglang/srt/x.py").as_deref(), Some("sglang"));
        assert_eq!(module_name("vllm.py").as_deref(), Some("vllm"));
        assert_eq!(module_name("torch.cpython-312-x86_64-linux-gnu.so").as_deref(), Some("torch"));
        assert_eq!(module_name("sglang"), None, "a file without a module suffix is not importable");
        assert_eq!(module_name("sglang-0.5.dist-info/RECORD"), None);
        assert_eq!(module_name("__pycache__/x.pyc"), None);
        assert_eq!(module_name("README.txt"), None);
    }

    #[test]
    fn pth_import_lines_name_the_modules_they_load() {
        let setuptools = b"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n";
        assert_eq!(pth_modules(setuptools), ["_distutils_hack", "os"]);
        assert_eq!(pth_modules(b"/opt/x\rimport a.b as c, d; from e.f import g; importlib.import_module(\"h.i\")\n# import z\n"), ["a", "d", "e", "h"]);
        assert!(pth_modules(b"/opt/x\n").is_empty());
    }

    #[test]
    fn relative_paths_resolve_against_their_base() {
        assert_eq!(absolute("/usr/lib/python3/dist-packages", "../../../../opt/src"), "/opt/src");
        assert_eq!(absolute("/a", "../../x"), "/", "above the root: `/`, which is searched anyway");
        assert_eq!(absolute("/w", "/abs/./x/"), "/abs/x");
    }
}
