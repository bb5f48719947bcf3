//! What a script does to files and packages, from its parsed commands (not
//! line patterns): in-place edits (`sed -i`, `perl -pi`), writes (`cp`,
//! `mv`, `install`, `tee`, `>`/`>>`), Python programs that open a file for
//! writing (`python3 -c`, Python heredocs), patches applied in a tree
//! (`git apply`, `patch`), and package installs (`pip install`), each with
//! its target resolved as far as the script says: variables, a path
//! computed from a module (`$(python3 -c 'import X; print(X.__file__)')`
//! reads as `site-packages/X/...`), the directory it runs in (`cd`), and
//! the clone that directory is (`git clone URL DIR`, `git checkout REF`
//! with the comment link above it). Whether a target is the engine, the
//! benchmark harness or neither is policy, decided by `engine-patch`.

use crate::evidence::gate::Gate;
use crate::evidence::provenance::Provenance;
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// Most actions, clones and open functions kept per file.
const MAX_ITEMS: usize = 10_000;

/// What an action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionKind {
    /// `sed -i`, `perl -pi`: a file edited in place.
    InPlaceEdit,
    /// `cp`, `mv`, `install`, `rsync`, `tee`, `>`, `>>`: a file written.
    Overwrite,
    /// A Python program (`-c` or heredoc) opens a file for writing.
    PythonWrite,
    /// `git apply`/`git am`/`patch`: a patch applied in a directory.
    ApplyPatch,
    /// `pip install`: a package installed.
    Install,
    /// `docker run -v HOST:PATH`, `--mount`, `srun --container-mounts`: a
    /// host file or directory laid over a path of the container.
    BindMount,
    /// `git checkout REF`, `switch`, `pull`, `merge`, `cherry-pick`,
    /// `rebase`, `reset --hard REF` in a work tree the script did not
    /// clone: its files become another ref's (an engine source tree the
    /// image installs editable runs them as they are).
    SwitchRef,
}

/// A `git clone` the script made, and the ref it checked out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Clone {
    pub url: String,
    /// The directory it was cloned into (resolved as far as the script says).
    pub dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// A link in the comment just above the checkout (an upstream PR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev_note: Option<String>,
}

impl Clone {
    /// The repository's name: the URL's last path part without `.git`.
    pub fn repo(&self) -> &str {
        repo_name(&self.url)
    }
}

/// One thing a script does to a file or a package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScriptAction {
    pub kind: ActionKind,
    /// The program and the option that make it this kind (`sed -i`, `cp`, `>`, `pip install -e`).
    pub tool: String,
    /// The file or directory acted on, resolved; `None` when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Files read to write the target (`cp SRC... DST`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// For installs: the package named, or the repository of a git/archive URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// For installs from a VCS URL: the ref after `@`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// The clone the target lies in, if the script made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clone: Option<Clone>,
    /// The function whose body holds the command: its name and definition line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<(String, u64)>,
    #[serde(skip_serializing_if = "Gate::is_always")]
    pub gate: Gate,
    pub provenance: Provenance,
    /// At the script's top level, after its (last) top-level engine launch:
    /// the running server has loaded its code already, and no later start
    /// in this script reads the change.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub after_launch: bool,
    /// For a Python write: the bytes of the file holding the code it was read
    /// from (the heredoc body line, the whole `python -c` statement), so a
    /// signature rule matching the same code is known as the same cause.
    #[serde(skip)]
    pub code_span: Option<(u64, u64)>,
}

/// The repository name of a clone or install URL (`.../LMCache.git` -> `LMCache`).
pub fn repo_name(url: &str) -> &str {
    let url = url.trim_end_matches('/');
    let last = url.rsplit(['/', ':']).next().unwrap_or(url);
    last.strip_suffix(".git").unwrap_or(last)
}

/// What `$(python3 -c '...')` prints, when it locates an installed module
/// (`X.__file__`, `X.__path__`, `find_spec("X")`): `site-packages/X/...`.
/// The site directory itself where the command prints it: `pip show X`'s
/// `Location:`, `site.getsitepackages()`, `sysconfig`'s `purelib`/`platlib`,
/// `distutils`' `get_python_lib()`: `site-packages`.
pub fn module_location(text: &str) -> Option<String> {
    static FIND_SPEC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"find_spec\(\s*['"]([A-Za-z_][\w.]*)"#).expect("valid regex"));
    static DUNDER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b([A-Za-z_][\w.]*?)\.__(?:file|path)__").expect("valid regex"));
    static PIP_SHOW: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bpip[\d.]*\s+show\b").expect("valid regex"));
    static SITE_DIR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"getsitepackages|getusersitepackages|\bpurelib\b|\bplatlib\b|get_python_lib").expect("valid regex"));
    if PIP_SHOW.is_match(text) && text.contains("Location") {
        return Some("site-packages".to_string());
    }
    if !text.contains("python") {
        return None;
    }
    match FIND_SPEC.captures(text).or_else(|| DUNDER.captures(text)) {
        Some(c) => Some(format!("site-packages/{}", c[1].replace('.', "/"))),
        None => SITE_DIR.is_match(text).then(|| "site-packages".to_string()),
    }
}

/// Join a path onto a directory as `cd` would (`..` and `.` folded).
pub fn join(dir: Option<&str>, path: &str) -> String {
    let base = match (path.starts_with('/') || path.starts_with('$') || path.starts_with('~'), dir) {
        (false, Some(dir)) => format!("{dir}/{path}"),
        _ => path.to_string(),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in base.split('/') {
        match part {
            "." => {}
            ".." if parts.last().is_some_and(|p| !p.is_empty() && *p != "..") => {
                parts.pop();
            }
            "" if !parts.is_empty() => {}
            _ => parts.push(part),
        }
    }
    match parts.join("/") {
        s if s.is_empty() && base.starts_with('/') => "/".to_string(),
        s => s,
    }
}

/// Tracks the directory, clones, functions and Python heredocs of one
/// script, and turns its commands into [`ScriptAction`]s.
#[derive(Default)]
pub struct ActionScanner {
    cwd: Option<String>,
    clones: Vec<Clone>,
    /// Open function bodies: name, definition line, brace depth at the definition.
    functions: Vec<(String, u64, usize)>,
    depth: usize,
    /// The last comment line holding a link, and its line number.
    note: Option<(u64, String)>,
    /// The Python heredoc being read: its opening line and the targets its names hold.
    python: Option<(u64, PyNames)>,
    pub actions: Vec<ScriptAction>,
    /// The first line of the statement being read and the index of its
    /// first action: `pip install X || pip install --flag X` is one install.
    statement: Option<(u64, usize)>,
    /// Lines of the engine launches at the script's top level (not in a function body).
    launches: Vec<u64>,
    /// What the last `find` of a statement names (its line and paths), for
    /// an `xargs` that the pipeline feeds with them.
    found: Option<(u64, Vec<String>)>,
}

/// What a Python program's names hold so far: a path a name was assigned
/// (`p = '/x/y.py'`), or the module an import binds it to (`import a.b as
/// m`, `from a import b`), as (name, value).
#[derive(Default)]
struct PyNames {
    paths: Vec<(String, String)>,
    modules: Vec<(String, String)>,
}

impl ActionScanner {
    /// The actions, each marked when it comes after the script's last
    /// top-level engine launch (and is at the top level itself).
    pub fn finish(mut self) -> Vec<ScriptAction> {
        if let Some(last) = self.launches.iter().max().copied() {
            for action in self.actions.iter_mut().filter(|a| a.function.is_none()) {
                action.after_launch = action.provenance.line.is_some_and(|l| l > last);
            }
        }
        self.actions
    }

    /// A comment line: a link in it may explain the checkout below.
    pub fn comment(&mut self, number: u64, text: &str) {
        if let Some(at) = text.find("http") {
            let link = text[at..].split_whitespace().next().unwrap_or("").to_string();
            self.note = Some((number, link));
        }
    }

    /// The function whose body the next commands run in (name and
    /// definition line), as an evaluation of the script knows it.
    pub fn set_function(&mut self, function: Option<(String, u64)>) {
        self.functions.clear();
        if let Some((name, line)) = function {
            self.functions.push((name, line, 0));
        }
    }

    /// Before a statement's commands: a function definition it opens.
    /// `words` are the statement's words and operators in order.
    pub fn enter(&mut self, words: &[&str], line: u64) {
        let name = match words {
            ["function", name, ..] => Some(*name),
            [name, "(", ")", ..] => Some(*name),
            _ => None,
        };
        if let Some(name) = name.filter(|n| crate::evidence::shell::words::is_var_name(&n.replace(['-', ':', '.'], "_")))
            && self.functions.len() < MAX_ITEMS
        {
            self.functions.push((name.to_string(), line, self.depth));
        }
    }

    /// After a statement: braces it opened or closed end function bodies.
    pub fn leave(&mut self, words: &[&str]) {
        for word in words {
            match *word {
                "{" => self.depth = self.depth.saturating_add(1),
                "}" => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        while self.functions.last().is_some_and(|f| f.2 >= self.depth && words.contains(&"}")) {
            self.functions.pop();
        }
    }

    fn push(&mut self, kind: ActionKind, tool: &str, target: Option<String>, gate: Gate, provenance: &Provenance) -> Option<&mut ScriptAction> {
        if self.actions.len() >= MAX_ITEMS {
            return None;
        }
        let function = self.functions.last().map(|(name, line, _)| (name.clone(), *line));
        let clone = target.as_deref().and_then(|t| self.clone_of(t)).cloned();
        self.actions.push(ScriptAction {
            kind,
            tool: tool.to_string(),
            target,
            sources: Vec::new(),
            package: None,
            rev: None,
            clone,
            function,
            gate,
            provenance: provenance.clone(),
            after_launch: false,
            code_span: None,
        });
        self.actions.last_mut()
    }

    /// The clone a path lies in (the innermost).
    fn clone_of(&self, path: &str) -> Option<&Clone> {
        self.clones.iter().filter(|c| path == c.dir || path.starts_with(&format!("{}/", c.dir))).max_by_key(|c| c.dir.len())
    }

    /// One simple command: `argv` resolved, `redirects` the files its
    /// `>`/`>>`/`&>` write, `line` the first line of its statement.
    pub fn command(&mut self, argv: &[String], redirects: &[String], line: u64, gate: Gate, provenance: &Provenance) {
        if self.functions.is_empty() && crate::evidence::shell::command::launch_of(argv).is_some() && self.launches.len() < MAX_ITEMS {
            self.launches.push(line);
        }
        let first = match self.statement {
            Some((l, first)) if l == line => first,
            _ => self.actions.len(),
        };
        self.statement = Some((line, first));
        let start = self.actions.len();
        self.command_at(argv, redirects, line, gate, provenance, 0);
        // The same action again in one statement (a `||` fallback) is one action.
        let same = |a: &ScriptAction, b: &ScriptAction| ScriptAction { provenance: b.provenance.clone(), ..a.clone() } == *b;
        let mut k = start;
        while k < self.actions.len() {
            if self.actions[first..k].iter().any(|earlier| same(earlier, &self.actions[k])) {
                self.actions.remove(k);
            } else {
                k += 1;
            }
        }
    }

    fn command_at(&mut self, argv: &[String], redirects: &[String], line: u64, gate: Gate, provenance: &Provenance, depth: usize) {
        for target in redirects.iter().filter(|t| !t.starts_with("/dev/") && !t.is_empty()) {
            let target = join(self.cwd.as_deref(), target);
            self.push(ActionKind::Overwrite, ">", Some(target), gate, provenance);
        }
        let Some(first) = argv.first() else { return };
        let program = first.rsplit('/').next().unwrap_or(first);
        let args = &argv[1..];
        let positional = |args: &[String]| -> Vec<String> { args.iter().filter(|a| !a.starts_with('-')).cloned().collect() };
        match program {
            // `find ROOT -name '*.yaml' -exec sed -i '...' {} +`: the command
            // runs on the files found.
            // `find / -path '*sglang/srt/x.py' | xargs sed -i ...`: the same, through the pipeline.
            "find" if depth < 2 => {
                let exec = args.iter().position(|a| a == "-exec" || a == "-execdir");
                let mut roots: Vec<String> =
                    args[..exec.unwrap_or(args.len())].iter().take_while(|a| !a.starts_with('-') && *a != "!" && *a != "(").cloned().collect();
                if roots.is_empty() {
                    roots.push(".".to_string());
                }
                let name = args.windows(2).find(|w| w[0] == "-name" || w[0] == "-iname").map(|w| w[1].clone());
                let path = args.windows(2).find(|w| matches!(w[0].as_str(), "-path" | "-ipath" | "-wholename")).map(|w| w[1].clone());
                let found: Vec<String> = roots
                    .iter()
                    .map(|root| {
                        let found = match (&path, &name) {
                            (Some(p), _) => format!("{}/**/{}", root.trim_end_matches('/'), p.trim_start_matches(['*', '/'])),
                            (None, Some(n)) => format!("{}/**/{n}", root.trim_end_matches('/')),
                            (None, None) => format!("{}/**", root.trim_end_matches('/')),
                        };
                        join(self.cwd.as_deref(), &found)
                    })
                    .collect();
                self.found = Some((line, found.clone()));
                let Some(exec) = exec else { return };
                let inner: Vec<&String> = args[exec + 1..].iter().take_while(|a| *a != ";" && *a != "+").collect();
                for found in &found {
                    let run: Vec<String> = inner.iter().map(|a| if *a == "{}" { found.clone() } else { a.to_string() }).collect();
                    self.command_at(&run, &[], line, gate, provenance, depth + 1);
                }
            }
            "xargs" if depth < 2 => {
                let Some((_, found)) = self.found.take().filter(|(l, _)| *l == line) else { return };
                let mut k = 0;
                let mut replace = None;
                while let Some(a) = args.get(k).filter(|a| a.starts_with('-')) {
                    if a == "-I" {
                        replace = args.get(k + 1).cloned();
                        k += 1;
                    } else if matches!(a.as_str(), "-n" | "-P" | "-d" | "-L" | "-s" | "-E" | "-a") {
                        k += 1;
                    }
                    k += 1;
                }
                for path in &found {
                    let mut run: Vec<String> = args[k.min(args.len())..].to_vec();
                    match &replace {
                        Some(r) => run.iter_mut().for_each(|a| *a = a.replace(r.as_str(), path)),
                        None => run.push(path.clone()),
                    }
                    self.command_at(&run, &[], line, gate, provenance, depth + 1);
                }
            }
            "cd" | "pushd" => {
                self.cwd = match args.iter().find(|a| !a.starts_with('-')) {
                    // Already there (the same `cd` in several branches of an `if`).
                    Some(dir) if self.cwd.as_deref().is_some_and(|c| c == dir || c.ends_with(&format!("/{dir}"))) => self.cwd.clone(),
                    // A directory the run decides (`$(...)` in it) is kept as written: the
                    // clone made into the same words is still the one installed from there.
                    Some(dir) => Some(join(self.cwd.as_deref(), dir)),
                    None => None,
                };
            }
            "sed" => {
                let in_place = args
                    .iter()
                    .any(|a| a == "--in-place" || a.starts_with("--in-place=") || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('i')));
                if !in_place {
                    return;
                }
                // The script is the first operand unless -e/-f gave it.
                let mut operands = Vec::new();
                let mut has_script = false;
                let mut i = 0;
                while i < args.len() {
                    let a = &args[i];
                    if a == "-e" || a == "-f" || a == "--expression" || a == "--file" {
                        has_script = true;
                        i += 2;
                        continue;
                    }
                    if !a.starts_with('-') || a == "-" {
                        operands.push(a.clone());
                    }
                    i += 1;
                }
                let files = if has_script { &operands[..] } else { operands.get(1..).unwrap_or(&[]) };
                for file in files {
                    let target = join(self.cwd.as_deref(), file);
                    self.push(ActionKind::InPlaceEdit, "sed -i", Some(target), gate, provenance);
                }
            }
            "perl" => {
                if !args.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains('i')) {
                    return;
                }
                let mut files = Vec::new();
                let mut i = 0;
                while i < args.len() {
                    let a = &args[i];
                    if a.starts_with('-') && (a.ends_with('e') || a.ends_with('E')) && !a.starts_with("--") {
                        i += 2;
                        continue;
                    }
                    if !a.starts_with('-') {
                        files.push(a.clone());
                    }
                    i += 1;
                }
                for file in files {
                    let target = join(self.cwd.as_deref(), &file);
                    self.push(ActionKind::InPlaceEdit, "perl -i", Some(target), gate, provenance);
                }
            }
            "cp" | "mv" | "install" | "rsync" | "ln" => {
                let mut operands = positional(args);
                let dest = match args.iter().position(|a| a == "-t" || a == "--target-directory") {
                    Some(k) => args.get(k + 1).cloned().inspect(|d| operands.retain(|o| o != d)),
                    None => operands.pop(),
                };
                if let Some(dest) = dest.filter(|_| !operands.is_empty()) {
                    let target = join(self.cwd.as_deref(), &dest);
                    let sources: Vec<String> = operands.iter().map(|s| join(self.cwd.as_deref(), s)).collect();
                    if let Some(action) = self.push(ActionKind::Overwrite, program, Some(target), gate, provenance) {
                        action.sources = sources;
                    }
                }
            }
            // `tar -x -C DIR`, `tar xzf A -C DIR`, `unzip A -d DIR`: files written under DIR.
            "tar" | "bsdtar" => {
                // `--extract`, a short-option cluster with `x` (`-xzf`), or the old-style first word (`xzf`).
                let cluster = |a: &str| a.len() > 1 && a.chars().all(|c| c.is_ascii_alphabetic()) && a.contains('x');
                let extract = args.iter().enumerate().any(|(k, a)| {
                    a == "--extract" || a == "--get" || a.strip_prefix('-').is_some_and(|f| !f.starts_with('-') && cluster(f)) || (k == 0 && cluster(a))
                });
                if let Some(dir) = option_value(args, &["-C", "--directory"]).filter(|_| extract) {
                    let target = format!("{}/**", join(self.cwd.as_deref(), &dir).trim_end_matches('/'));
                    self.push(ActionKind::Overwrite, "tar -x", Some(target), gate, provenance);
                }
            }
            "unzip" => {
                if let Some(dir) = option_value(args, &["-d"]) {
                    let target = format!("{}/**", join(self.cwd.as_deref(), &dir).trim_end_matches('/'));
                    self.push(ActionKind::Overwrite, "unzip", Some(target), gate, provenance);
                }
            }
            "tee" => {
                for file in positional(args).iter().filter(|f| !f.starts_with("/dev/")) {
                    let target = join(self.cwd.as_deref(), file);
                    self.push(ActionKind::Overwrite, "tee", Some(target), gate, provenance);
                }
            }
            "git" => self.git(args, line, gate, provenance),
            // `patch --dry-run` changes nothing.
            "patch" if args.iter().any(|a| a == "--dry-run" || a == "-C" || a == "--check") => {}
            "patch" => {
                let dir = option_value(args, &["-d", "--directory"]).map(|d| join(self.cwd.as_deref(), &d)).or_else(|| self.cwd.clone());
                self.push(ActionKind::ApplyPatch, "patch", dir, gate, provenance);
            }
            _ if program.starts_with("python") => {
                if let Some(k) = args.iter().position(|a| a == "-m") {
                    if args.get(k + 1).is_some_and(|m| m == "pip") && args.get(k + 2).is_some_and(|c| c == "install") {
                        self.install(&args[k + 3..], gate, provenance);
                    }
                    return;
                }
                if let Some(code) = option_value(args, &["-c"]) {
                    let mut names = PyNames::default();
                    for text in code.lines().flat_map(statements) {
                        if let Some(target) = python_write(text, &mut names)
                            && let Some(action) = self.push(ActionKind::PythonWrite, "python -c", Some(target), gate, provenance)
                        {
                            action.code_span = provenance.span;
                        }
                    }
                }
            }
            "docker" | "podman" | "nerdctl" | "srun" | "salloc" | "sbatch" | "enroot" => {
                for (flag, host, target) in bind_mounts(program, args) {
                    let tool = format!("{program} {flag}");
                    let host = join(self.cwd.as_deref(), &host);
                    if let Some(action) = self.push(ActionKind::BindMount, &tool, Some(target), gate, provenance) {
                        action.sources = vec![host];
                    }
                }
            }
            // `pip`, `pip3`, `pip3.12`, `uv pip`.
            p if p == "uv" || crate::evidence::shell::command::is_pip(p) => {
                let rest = if program == "uv" { args.get(1..).unwrap_or(&[]) } else { args };
                let pip = program != "uv" || args.first().is_some_and(|a| a == "pip");
                if pip && rest.first().is_some_and(|c| c == "install") {
                    self.install(&rest[1..], gate, provenance);
                }
            }
            _ => {}
        }
    }

    fn git(&mut self, args: &[String], line: u64, gate: Gate, provenance: &Provenance) {
        let mut dir = self.cwd.clone();
        let mut i = 0;
        while i < args.len() && args[i].starts_with('-') {
            if args[i] == "-C" {
                dir = args.get(i + 1).map(|d| join(self.cwd.as_deref(), d));
                i += 1;
            } else if args[i] == "-c" {
                i += 1;
            }
            i += 1;
        }
        let Some(sub) = args.get(i) else { return };
        let rest = &args[i + 1..];
        match sub.as_str() {
            "clone" => {
                let operands: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
                if let Some(url) = operands.first() {
                    let into = operands.get(1).map_or_else(|| repo_name(url).to_string(), |d| d.to_string());
                    // The same clone in several branches of an `if`, read one after another.
                    let dir = match dir {
                        Some(d) if d == into || d.ends_with(&format!("/{into}")) => d,
                        d => join(d.as_deref(), &into),
                    };
                    if self.clones.len() < MAX_ITEMS {
                        self.clones.push(Clone { url: url.to_string(), dir, rev: None, rev_note: None });
                    }
                }
            }
            "checkout" | "switch" | "reset" => {
                let Some(rev) = rest.iter().find(|a| !a.starts_with('-')) else { return };
                let note = self.note.as_ref().filter(|(at, _)| line.saturating_sub(*at) <= 3).map(|(_, link)| link.clone());
                let here = dir.clone().unwrap_or_default();
                if let Some(k) = self.clones.iter().rposition(|c| here == c.dir || here.starts_with(&format!("{}/", c.dir))) {
                    self.clones[k].rev = Some(rev.clone());
                    self.clones[k].rev_note = note;
                    return;
                }
                // `git checkout -- FILE`, `git checkout .`, `git reset` of
                // files: the tree's own files restored, nothing new.
                let restores = rev == "." || rest.iter().any(|a| a == "--") || (sub == "reset" && !rest.iter().any(|a| a == "--hard"));
                if !restores && let Some(action) = self.push(ActionKind::SwitchRef, &format!("git {sub} {rev}"), dir, gate, provenance) {
                    action.rev = Some(rev.clone());
                }
            }
            "pull" | "merge" | "cherry-pick" | "rebase" => {
                let here = dir.clone().unwrap_or_default();
                if self.clone_of(&here).is_none() {
                    let what = rest.iter().filter(|a| !a.starts_with('-')).cloned().collect::<Vec<_>>().join(" ");
                    if let Some(action) = self.push(ActionKind::SwitchRef, format!("git {sub} {what}").trim_end(), dir, gate, provenance) {
                        action.rev = (!what.is_empty()).then_some(what);
                    }
                }
            }
            // `git apply --check` / `--stat` / `--numstat` / `--summary` only read the patch.
            "apply" if rest.iter().any(|a| matches!(a.as_str(), "--check" | "--stat" | "--numstat" | "--summary")) && !rest.iter().any(|a| a == "--apply") => {}
            "apply" | "am" => {
                let target = option_value(rest, &["--directory"]).map(|d| join(dir.as_deref(), &d)).or(dir);
                self.push(ActionKind::ApplyPatch, &format!("git {sub}"), target, gate, provenance);
            }
            _ => {}
        }
    }

    /// `pip install ARGS`: one action per package, path or URL installed.
    fn install(&mut self, args: &[String], gate: Gate, provenance: &Provenance) {
        const WITH_VALUE: [&str; 12] =
            ["-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "-t", "--target", "--prefix", "--python", "--trusted-host"];
        // An index or link page other than the default: where every package of the command comes from.
        let index = option_value(args, &["-i", "--index-url", "--extra-index-url", "-f", "--find-links"]);
        let start = self.actions.len();
        self.install_specs(args, &WITH_VALUE, gate, provenance);
        if let Some(index) = index {
            self.actions[start..].iter_mut().for_each(|a| a.sources = vec![index.clone()]);
        }
    }

    fn install_specs(&mut self, args: &[String], with_value: &[&str], gate: Gate, provenance: &Provenance) {
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "-r" || a == "--requirement" {
                i += 2;
                continue;
            }
            if with_value.contains(&a.as_str()) {
                i += 2;
                continue;
            }
            let (editable, spec) = if a == "-e" || a == "--editable" {
                i += 1;
                (true, args.get(i).cloned().unwrap_or_default())
            } else if let Some(v) = a.strip_prefix("--editable=") {
                (true, v.to_string())
            } else if a.starts_with('-') {
                i += 1;
                continue;
            } else {
                (false, a.clone())
            };
            i += 1;
            let tool = if editable { "pip install -e" } else { "pip install" };
            let url = spec.strip_prefix("git+").unwrap_or(&spec);
            if url.contains("://") {
                let (base, rev) = match url.rsplit_once('@').filter(|(b, _)| b.contains("://")) {
                    Some((b, r)) => (b, Some(r.split('#').next().unwrap_or(r).to_string())),
                    None => (url, None),
                };
                // An archive of a ref: .../OWNER/REPO/archive/REF.tar.gz
                let (repo, rev) = match base.split_once("/archive/") {
                    Some((repo_url, file)) => {
                        (repo_name(repo_url).to_string(), rev.or_else(|| file.split(".tar").next().or(file.split(".zip").next()).map(str::to_string)))
                    }
                    None => (repo_name(base).to_string(), rev),
                };
                if let Some(action) = self.push(ActionKind::Install, tool, Some(spec.clone()), gate, provenance) {
                    action.package = Some(repo);
                    action.rev = rev;
                }
            } else if spec.starts_with('$') && !editable {
                // `pip install "$@"`, `"$SPEC"`: not known here.
                continue;
            } else if editable || spec.starts_with('.') || spec.starts_with('/') || spec.ends_with(".whl") {
                let target = join(self.cwd.as_deref(), spec.split('[').next().unwrap_or(&spec));
                self.push(ActionKind::Install, tool, Some(target), gate, provenance);
            } else {
                let name: String = spec.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).collect();
                if let Some(action) = self.push(ActionKind::Install, tool, None, gate, provenance) {
                    action.package = Some(name);
                }
            }
        }
    }

    /// A statement that opens a Python heredoc (`python3 - <<EOF`).
    pub fn python_heredoc(&mut self, opened_at: u64) {
        self.python = Some((opened_at, PyNames::default()));
    }

    /// A line of a Python heredoc body; a write is reported at `provenance`,
    /// the statement that runs the program.
    /// `span` is where the line lies in the file.
    pub fn python_line(&mut self, opened_at: u64, text: &str, span: Option<(u64, u64)>, gate: Gate, provenance: &Provenance) {
        if self.python.as_ref().is_none_or(|(at, _)| *at != opened_at) {
            self.python = Some((opened_at, PyNames::default()));
        }
        let Some((_, mut names)) = self.python.take() else { return };
        for text in statements(text) {
            if let Some(target) = python_write(text, &mut names)
                && let Some(action) = self.push(ActionKind::PythonWrite, "python heredoc", Some(target), gate, provenance)
            {
                action.code_span = span;
            }
        }
        self.python = Some((opened_at, names));
    }
}

/// The value after an option (`-d DIR`, `--directory=DIR`, `-dDIR`).
/// The bind mounts a container launch makes: (the flag, the host path,
/// the container path). `docker`/`podman run|create` take `-v`/`--volume
/// HOST:PATH[:opts]` and `--mount type=bind,source=HOST,target=PATH`;
/// `srun`/`salloc`/`sbatch` (pyxis) take `--container-mounts
/// HOST:PATH[,HOST:PATH]`; `enroot start` takes `--mount HOST:PATH`. A
/// value assembled in an unquoted variable arrives as one word with its
/// flags inside: it is split as bash would.
fn bind_mounts(program: &str, args: &[String]) -> Vec<(&'static str, String, String)> {
    let words: Vec<&str> = args.iter().flat_map(|a| a.split_whitespace()).collect();
    let container_run = matches!(program, "docker" | "podman" | "nerdctl") && words.iter().any(|w| *w == "run" || *w == "create");
    let slurm = matches!(program, "srun" | "salloc" | "sbatch");
    let enroot = program == "enroot";
    let colon = |spec: &str| {
        let mut parts = spec.splitn(3, ':');
        match (parts.next(), parts.next()) {
            (Some(host), Some(target)) if !host.is_empty() && target.starts_with('/') => Some((host.to_string(), target.to_string())),
            _ => None,
        }
    };
    let keyed = |spec: &str| {
        let field = |keys: &[&str]| spec.split(',').find_map(|kv| kv.split_once('=').filter(|(k, _)| keys.contains(k)).map(|(_, v)| v.to_string()));
        let bind = field(&["type"]).is_none_or(|t| t == "bind");
        match (bind, field(&["source", "src"]), field(&["target", "destination", "dst"])) {
            (true, Some(host), Some(target)) => Some((host, target)),
            _ => colon(spec),
        }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (word, None),
        };
        let mut value = || {
            inline.or_else(|| {
                (i + 1 < words.len()).then(|| {
                    i += 1;
                    words[i]
                })
            })
        };
        match flag {
            "-v" | "--volume" if container_run => out.extend(value().and_then(colon).map(|(h, t)| ("-v", h, t))),
            "--mount" if container_run => out.extend(value().and_then(keyed).map(|(h, t)| ("--mount", h, t))),
            "--mount" | "-m" if enroot => out.extend(value().and_then(colon).map(|(h, t)| ("--mount", h, t))),
            "--container-mounts" if slurm => {
                out.extend(value().into_iter().flat_map(|v| v.split(',')).filter_map(colon).map(|(h, t)| ("--container-mounts", h, t)))
            }
            _ if container_run && word.len() > 2 && word.starts_with("-v") && !word.starts_with("--") => {
                out.extend(colon(word[2..].trim_start_matches('=')).map(|(h, t)| ("-v", h, t)))
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn option_value(args: &[String], names: &[&str]) -> Option<String> {
    for (k, a) in args.iter().enumerate() {
        for name in names {
            if a == name {
                return args.get(k + 1).cloned();
            }
            if let Some(v) = a.strip_prefix(&format!("{name}=")) {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// The first argument of an `open(PATH, "w")` whose PATH is itself a call
/// (`open(os.path.join(site.getsitepackages()[0], 'sglang/x.py'), 'w')`),
/// read with its parentheses balanced.
fn opened_for_writing(code: &str) -> Option<String> {
    static MODE_W: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"^\s*,\s*(?:mode\s*=\s*)?['"][wax]b?\+?['"]"#).expect("valid regex"));
    let start = code.find("open(")? + "open(".len();
    let mut depth = 0usize;
    for (i, c) in code[start..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' if depth > 0 => depth -= 1,
            ',' if depth == 0 => return MODE_W.is_match(&code[start + i..]).then(|| code[start..start + i].trim().to_string()),
            ')' => return None,
            _ => {}
        }
    }
    None
}

/// One line of a Python program: remembers `name = <path>` and returns the
/// path a write (`open(x, "w")`, `x.write_text(`) goes to, if it can tell.
fn python_write(text: &str, names: &mut PyNames) -> Option<String> {
    static ASSIGN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*([A-Za-z_]\w*)\s*=\s*(.+)$").expect("valid regex"));
    static STRING: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"['"]([^'"]*)['"]"#).expect("valid regex"));
    static OPEN_W: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"\bopen\(\s*([^,()]+?)\s*,\s*(?:mode\s*=\s*)?['"][wax]b?\+?['"]"#).expect("valid regex"));
    static WRITE_TEXT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"([A-Za-z_][\w.]*|\))\.write_(?:text|bytes)\(").expect("valid regex"));
    let code = text.split('#').next().unwrap_or("");
    let value_of = |expr: &str, names: &PyNames| -> Option<String> {
        let expr = expr.trim();
        // A name an import bound stands for its module: `m.__file__` of `import a.b as m` is `a.b.__file__`.
        let head = expr.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
        let expr = match names.modules.iter().rev().find(|(n, _)| n == head) {
            Some((_, module)) => format!("{module}{}", &expr[head.len()..]),
            None => expr.to_string(),
        };
        let expr = expr.as_str();
        if let Some(located) = module_location(&format!("python {expr}")) {
            let tail: Vec<String> = STRING
                .captures_iter(expr)
                .map(|c| c[1].to_string())
                .filter(|s| !s.is_empty() && !s.contains(' '))
                .skip(usize::from(expr.contains("find_spec")))
                .collect();
            return Some(std::iter::once(located).chain(tail).collect::<Vec<_>>().join("/"));
        }
        if let Some((_, v)) = names.paths.iter().rev().find(|(n, _)| expr == n || expr.starts_with(&format!("{n}.")) || expr.starts_with(&format!("{n} "))) {
            return Some(v.clone());
        }
        STRING.captures(expr).map(|c| c[1].to_string()).filter(|s| s.contains('/'))
    };
    let target = OPEN_W
        .captures(code)
        .map(|c| c[1].to_string())
        .or_else(|| opened_for_writing(code))
        .and_then(|path| value_of(&path, names))
        .or_else(|| WRITE_TEXT.captures(code).and_then(|c| value_of(&c[1], names)));
    if let Some(c) = ASSIGN.captures(code)
        && let Some(v) = value_of(&c[2], names).filter(|_| names.paths.len() < MAX_ITEMS)
    {
        names.paths.push((c[1].to_string(), v));
    }
    if names.modules.len() < MAX_ITEMS {
        names.modules.extend(imported(code));
    }
    target
}

/// The names an import statement binds to modules: `import a.b as m` (m:
/// a.b), `from a.b import c` (c: a.b.c), `from a import b as m` (m: a.b).
/// A plain `import a.b` binds `a`, which is already its module's name.
fn imported(code: &str) -> Vec<(String, String)> {
    static IMPORT_AS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*import\s+([\w.]+)\s+as\s+(\w+)\s*$").expect("valid regex"));
    static FROM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*from\s+([\w.]+)\s+import\s+(.+)$").expect("valid regex"));
    if let Some(c) = IMPORT_AS.captures(code) {
        return vec![(c[2].to_string(), c[1].to_string())];
    }
    let Some(c) = FROM.captures(code) else { return Vec::new() };
    c[2].trim_matches(|ch: char| ch == '(' || ch == ')' || ch.is_whitespace())
        .split(',')
        .filter_map(|item| {
            let mut words = item.split_whitespace();
            let name = words.next()?;
            let bound = match (words.next(), words.next()) {
                (Some("as"), Some(alias)) => alias,
                _ => name,
            };
            Some((bound.to_string(), format!("{}.{name}", &c[1])))
        })
        .collect()
}

/// The statements of one line of Python: `a; b` split where the `;` is
/// outside quotes and brackets.
fn statements(line: &str) -> Vec<&str> {
    let (mut out, mut start, mut depth, mut quote) = (Vec::new(), 0, 0usize, None);
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            (None, ';') if depth == 0 => {
                out.push(&line[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&line[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_located_from_python() {
        assert_eq!(module_location(r#"python3 -c "import rixl._api; print(rixl._api.__file__)""#).as_deref(), Some("site-packages/rixl/_api"));
        assert_eq!(module_location("python3 -c 'import importlib.util as u; print(u.find_spec(\"vllm\").origin)'").as_deref(), Some("site-packages/vllm"));
        assert_eq!(module_location("echo hi"), None);
    }

    /// A clone into a directory the run names (`$(...)` in it) is the tree
    /// an editable install run there installs (a runner's srtctl checkout).
    #[test]
    fn a_clone_into_a_computed_directory_is_the_tree_installed_there() {
        let mut scanner = ActionScanner::default();
        let at = Provenance::new("runners/r.sh", Some(3), "x");
        let dir = "$GITHUB_WORKSPACE/srt-slurm-$(printf %s \"$R\" | sha1sum | cut -c1-12)";
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        scanner.command(&words(&["git", "clone", "https://github.com/NVIDIA/srt-slurm.git", dir]), &[], 3, Gate::Always, &at);
        scanner.command(&words(&["cd", dir]), &[], 4, Gate::Always, &at);
        scanner.command(&words(&["uv", "pip", "install", "-e", "."]), &[], 5, Gate::Always, &at);
        let actions = scanner.finish();
        let install = actions.iter().find(|a| a.kind == ActionKind::Install).expect("an install");
        assert_eq!(install.clone.as_ref().map(|c| c.repo()), Some("srt-slurm"), "{install:?}");
    }

    #[test]
    fn paths_join_like_cd() {
        assert_eq!(join(Some("/a/b"), "../c"), "/a/c");
        assert_eq!(join(Some("/a"), "/x/./y/"), "/x/y");
        assert_eq!(join(None, "LMCache"), "LMCache");
        assert_eq!(join(Some("LMCache"), ".."), "");
    }

    #[test]
    fn python_writes_and_reads() {
        let mut names = PyNames::default();
        assert_eq!(python_write("p = '/sgl-workspace/sglang/python/sglang/x.py'", &mut names), None);
        assert_eq!(python_write("s = open(p).read()", &mut names), None);
        assert_eq!(python_write("open(p, 'w').write(s)", &mut names).as_deref(), Some("/sgl-workspace/sglang/python/sglang/x.py"));
        let mut names = PyNames::default();
        python_write("path = pathlib.Path(importlib.util.find_spec(\"sglang\").origin).parent / \"srt/a.py\"", &mut names);
        assert_eq!(python_write("path.write_text(src)", &mut names).as_deref(), Some("site-packages/sglang/srt/a.py"));
        assert_eq!(python_write("data = json.load(open('results.json'))", &mut PyNames::default()), None);
        // The path is itself a call: parentheses balanced, the site directory located.
        let nested = "open(os.path.join(site.getsitepackages()[0], 'sglang/srt/x.py'), 'w').write('x=1')";
        assert_eq!(python_write(nested, &mut PyNames::default()).as_deref(), Some("site-packages/sglang/srt/x.py"));
        assert_eq!(python_write("open(os.path.join(d, 'a.json')).read()", &mut PyNames::default()), None);
        // A module bound by an import stands for its file.
        let mut names = PyNames::default();
        assert_eq!(python_write("import sglang.srt.server_args as m", &mut names), None);
        assert_eq!(python_write("open(m.__file__, 'a').write('x')", &mut names).as_deref(), Some("site-packages/sglang/srt/server_args"));
        let mut names = PyNames::default();
        python_write("from vllm.model_executor import layers as L, utils", &mut names);
        assert_eq!(python_write("open(utils.__file__, 'w')", &mut names).as_deref(), Some("site-packages/vllm/model_executor/utils"));
        assert_eq!(python_write("open(L.__file__, 'w')", &mut names).as_deref(), Some("site-packages/vllm/model_executor/layers"));
        assert_eq!(
            statements("import a as m; open(m.__file__, 'w').write('a;b'); f(x[1;2])"),
            ["import a as m", " open(m.__file__, 'w').write('a;b')", " f(x[1;2])"]
        );
    }

    #[test]
    fn repo_names() {
        assert_eq!(repo_name("https://github.com/LMCache/LMCache.git"), "LMCache");
        assert_eq!(repo_name("git@github.com:NVIDIA/srt-slurm"), "srt-slurm");
    }
}
