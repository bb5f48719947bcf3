//! Python that recipes run — a `python3 - <<'EOF'` heredoc, a `python3 -c`
//! string, a repository `.py` file — evaluated abstractly: parsed with a real
//! Python grammar (rustpython-parser) and walked with constant propagation,
//! nothing executed. A submitter can hide a forbidden setting or an engine
//! patch behind a helper function, a loop over a dict, an `exec` of a string,
//! or a path computed from `importlib.util.find_spec("vllm")`; a line-based
//! reader ([`super::environ`]) sees none of those. This one follows them and
//! reports what the code would do: environment writes, process launches,
//! file writes, modules run, attributes of imported modules replaced.
//!
//! What it follows: module-level and function-local names (closures too)
//! holding strings, numbers, f-strings, `+`/`%`/`.format`/`.join`, `os.path`
//! and `pathlib` paths, lists, tuples and dicts of those, and the common
//! decodings (`base64`, `bytes.fromhex`, `[::-1]`, `chr`); calls of functions
//! defined in the same source (and class methods) with their arguments
//! bound, to a bounded depth; `if` on a known value takes its arm, on an
//! unknown value both arms (their effects conditional; a name that differs
//! between arms becomes "one of"); `for` over known lists, dicts and
//! `range`; `try` bodies (handlers conditional); `with`; `exec`/`eval`/
//! `compile` of a string known here (evaluated recursively, effects at the
//! `exec` line); the prints of `subprocess.check_output`/`getoutput` of
//! `python -c CODE` (evaluated apart: the child's other effects are not this
//! process's); paths computed from installed modules, which become
//! [`PyValue::Installed`] (a path under `site-packages`). A library call
//! with a "one of" argument is made once per alternative, each effect
//! conditional. Code after a `return`, `break` or `continue` taken on an
//! unknown condition is conditional; code after a guard that raises or
//! exits (`if not ok: sys.exit(1)`) is not: it runs whenever the program
//! gets there. Functions never called (or called only through something not
//! followed: a callback, a decorator) are evaluated once at the end with
//! unknown arguments, their effects conditional, so code is not missed
//! because its caller was not understood. `sys.executable` is `python3`.
//!
//! What it does not follow, plainly: other files (imports are names, not
//! code; `runpy` and `exec(open(...).read())` are reported, not read), the
//! values of the running process (`os.getcwd()`, file contents, `sys.path`,
//! other processes' output: unknown), aliasing of mutable values (`a = b;
//! a.append(x)` changes `a` only, `add = xs.append; add(x)` changes nothing;
//! class instances are shared), inheritance,
//! generators as lazy sequences, `match` patterns (each case is
//! conditional), exceptions by type (a `raise` ends its block; handlers are
//! conditional unless the body always raises into a lone handler), and
//! Python 3.12 f-string syntax (a syntax error to this grammar). Anything not
//! followed is a [`PyValue::Unknown`] carrying the source text it came from.
//!
//! Work is bounded: statements and loop iterations in all, one loop's
//! iterations, call depth, `exec` nesting, the size and nesting of every
//! value (a bigger one is unknown; copying a big string costs steps),
//! recursion depth, the size of what the records hold in all, and a
//! nesting pre-bound checked on the tokens before parsing, so a hostile
//! source can neither overflow the stack nor exhaust memory (the walk also
//! runs on its own thread with a 64 MiB stack). A bound that trips is a
//! problem in [`PyEffects::problems`]; what was found before it is kept.

mod bound;
mod interp;
mod library;
mod value;

use std::collections::BTreeMap;
use std::fmt;

/// What the evaluated source may assume about the process it runs in.
#[derive(Clone, Debug, Default)]
pub struct PyInputs {
    /// Environment values known to be set when the script starts (a name not
    /// here is unknown, not unset).
    pub env: BTreeMap<String, String>,
    /// `sys.argv` when known (empty: unknown).
    pub argv: Vec<String>,
    /// The script's own path, for `__file__` (None: unknown).
    pub file: Option<String>,
}

/// A value as far as it is known without running anything.
#[derive(Clone, Debug, PartialEq)]
pub enum PyValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    None,
    /// A list, tuple or set.
    List(Vec<PyValue>),
    Dict(Vec<(PyValue, PyValue)>),
    /// A path inside the installed packages, relative to the `site-packages`
    /// directory: `vllm/model_executor/x.py` for
    /// `os.path.join(os.path.dirname(importlib.util.find_spec("vllm").origin), "model_executor/x.py")`,
    /// empty for `site-packages` itself. A top-level module's file is its
    /// package's `__init__.py`; a dotted module's is taken as `a/b.py`.
    /// Inside a larger string it is written `site-packages/<path>`, the
    /// spelling of [`crate::evidence::shell::actions::module_location`].
    Installed(String),
    /// One of these, depending on something unknown (a branch, a default).
    OneOf(Vec<PyValue>),
    /// Not known here; the text says where it came from (source text, or a
    /// description).
    Unknown(String),
}

impl PyValue {
    /// The string, when this is a known string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The top-level package a [`PyValue::Installed`] path lies in (`vllm`),
    /// or None (the site directory itself, or not an installed path).
    pub fn installed_package(&self) -> Option<&str> {
        match self {
            PyValue::Installed(rel) => rel.split('/').next().filter(|p| !p.is_empty()),
            _ => None,
        }
    }

    /// Whether any part of the value is unknown.
    pub fn has_unknown(&self) -> bool {
        match self {
            PyValue::Unknown(_) => true,
            PyValue::List(items) | PyValue::OneOf(items) => items.iter().any(PyValue::has_unknown),
            PyValue::Dict(items) => items.iter().any(|(k, v)| k.has_unknown() || v.has_unknown()),
            _ => false,
        }
    }
}

impl fmt::Display for PyValue {
    /// The value as `str()` would print it; an installed path as
    /// `site-packages/<path>`, an unknown one as `<unknown: text>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyValue::Str(s) => f.write_str(s),
            PyValue::Int(i) => write!(f, "{i}"),
            PyValue::Float(x) => f.write_str(&value::float_text(*x)),
            PyValue::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            PyValue::None => f.write_str("None"),
            PyValue::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            PyValue::Dict(items) => {
                f.write_str("{")?;
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            PyValue::Installed(rel) => f.write_str(&value::installed_text(rel)),
            PyValue::OneOf(items) => {
                f.write_str("<one of: ")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" | ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(">")
            }
            PyValue::Unknown(text) => write!(f, "<unknown: {text}>"),
        }
    }
}

/// How an environment variable is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvWriteKind {
    /// `os.environ[N] = V`, `os.environ.update(...)`, `os.environ.__setitem__`.
    Set,
    /// `os.environ.setdefault(N, V)`: only when not already set.
    SetDefault,
    /// `del os.environ[N]`, `os.environ.pop(N)`, `os.environ.clear()`.
    Unset,
    /// `os.putenv(N, V)`: seen by child processes only, not by `os.environ`
    /// (so not by an engine run in this process through `runpy`).
    Putenv,
    /// `os.unsetenv(N)`: likewise, child processes only.
    Unsetenv,
}

/// One environment write.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvWrite {
    /// The variable's name (a [`PyValue::Unknown`] when computed from
    /// something unknown, e.g. `os.environ.update(cfg)`).
    pub name: PyValue,
    /// The value written; None for an unset.
    pub value: Option<PyValue>,
    pub kind: EnvWriteKind,
    /// 1-based line in the whole file.
    pub line: u64,
    /// Only on some paths (an unknown branch, a handler, a function reached
    /// only by the final pass, one of several values).
    pub conditional: bool,
}

/// What a launched process runs.
#[derive(Clone, Debug, PartialEq)]
pub enum LaunchCommand {
    /// An argument vector (`subprocess.run([...])`, `os.execvp`).
    Argv(Vec<PyValue>),
    /// A shell command line (`shell=True`, `os.system`, `os.popen`): for the
    /// bash reader.
    Shell(PyValue),
}

/// The environment a launched process starts with.
#[derive(Clone, Debug, PartialEq)]
pub enum LaunchEnv {
    /// No `env=`: this process's environment (with the writes made before).
    Inherited,
    /// `env=` given: what it starts from (`{**os.environ, ...}`,
    /// `os.environ.copy()`, a fresh dict, something unknown) and the
    /// variables it sets on top.
    Given { base: EnvBase, vars: Vec<(PyValue, PyValue)> },
}

/// What an `env=` mapping is built on.
#[derive(Clone, Debug, PartialEq)]
pub enum EnvBase {
    /// A fresh mapping: only the listed variables.
    Empty,
    /// A copy of `os.environ`: the process environment with the writes
    /// recorded before the copy was made.
    Environ,
    /// Something not known here.
    Unknown(String),
}

/// A process launch.
#[derive(Clone, Debug, PartialEq)]
pub struct PyLaunch {
    pub command: LaunchCommand,
    pub env: LaunchEnv,
    /// `cwd=` when given.
    pub cwd: Option<PyValue>,
    /// The function called: `subprocess.run`, `os.system`, `os.execvp`, ...
    pub via: String,
    pub line: u64,
    pub conditional: bool,
}

/// How a file is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// `open(P, mode)` with a writing mode (`w`, `a`, `x`, `+`; the mode as
    /// written, `?` when unknown), `Path.open`, `os.open` with writing flags.
    Open(String),
    /// `Path.write_text` / `write_bytes`, `os.truncate`.
    Write,
    /// `shutil.copy*` / `copytree`: the destination.
    Copy,
    /// `shutil.move`, `os.rename` / `replace`, `Path.rename` / `replace`.
    Move,
    /// `os.symlink` / `os.link`, `Path.symlink_to`: the link.
    Link,
    /// `os.remove` / `unlink` / `rmdir`, `shutil.rmtree`, `Path.unlink`.
    Remove,
    /// `os.makedirs` / `mkdir`, `Path.mkdir` / `touch`.
    MakeDir,
    /// `fileinput.input(P, inplace=True)`: rewritten in place.
    InPlace,
}

/// A file written, moved, linked or removed.
#[derive(Clone, Debug, PartialEq)]
pub struct FileWrite {
    /// The destination.
    pub path: PyValue,
    pub kind: WriteKind,
    /// The source of a copy, move or link.
    pub from: Option<PyValue>,
    /// What was written, when it is seen (`write_text(S)`, `f.write(S)` on
    /// the handle): the pieces joined, unknown pieces as unknown.
    pub content: Option<PyValue>,
    pub line: u64,
    pub conditional: bool,
}

/// How code is run in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// `runpy.run_module(M)`.
    Module,
    /// `runpy.run_path(P)`, `importlib.util.spec_from_file_location(N, P)`.
    Path,
    /// `importlib.import_module(M)`.
    Import,
}

/// Code run in this process: an engine's entry point through `runpy`, a
/// file, a module imported by a computed name.
#[derive(Clone, Debug, PartialEq)]
pub struct PyRun {
    pub kind: RunKind,
    /// The module name or path.
    pub target: PyValue,
    /// `sys.argv` at that point, when the source set it (`sys.argv = [...]`
    /// before `runpy.run_module` is how server arguments are passed).
    pub argv: Option<Vec<PyValue>>,
    pub line: u64,
    pub conditional: bool,
}

/// An attribute of an imported module or class replaced in this process:
/// `server_args.ServerArgs.__post_init__ = f`, `setattr(mod, "X", v)`. An
/// engine run afterwards through `runpy` sees the replacement.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrWrite {
    /// The dotted name written: `sglang.srt.server_args.ServerArgs.__post_init__`.
    pub target: String,
    pub value: PyValue,
    pub line: u64,
    pub conditional: bool,
}

/// One `print`: its text without the trailing newline (an installed path
/// printed alone stays a [`PyValue::Installed`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PyPrint {
    pub text: PyValue,
    pub line: u64,
    pub conditional: bool,
}

/// Everything the evaluated source would do, in source order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PyEffects {
    pub env: Vec<EnvWrite>,
    pub launches: Vec<PyLaunch>,
    pub writes: Vec<FileWrite>,
    /// `runpy.run_module`/`run_path`, `importlib.import_module`.
    pub run_modules: Vec<PyRun>,
    pub patches: Vec<AttrWrite>,
    /// What `print` (and `sys.stdout.write`) writes to standard output: for
    /// `$(python3 -c '...print(vllm.__file__)')` in a script, the value the
    /// command substitution takes.
    pub prints: Vec<PyPrint>,
    /// What could not be evaluated, by line: a syntax error, a bound that
    /// tripped, an `exec` of unknown source.
    pub problems: Vec<(u64, String)>,
}

/// Evaluate Python `source` whose first line is line `first_line` (1-based)
/// of its file. Never panics and never runs anything; a syntax error or a
/// tripped bound is a problem in the result.
pub fn evaluate(source: &str, first_line: u64, inputs: &PyInputs) -> PyEffects {
    interp::run(source, first_line.max(1), inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(source: &str) -> PyEffects {
        evaluate(source, 1, &PyInputs::default())
    }

    fn s(v: &str) -> PyValue {
        PyValue::Str(v.into())
    }

    /// The (name, value) of each env write.
    fn env(effects: &PyEffects) -> Vec<(PyValue, Option<PyValue>)> {
        effects.env.iter().map(|w| (w.name.clone(), w.value.clone())).collect()
    }

    #[test]
    fn helper_function_with_arguments_sets_the_environment() {
        let fx = eval("import os\n\ndef setenv(k, v):\n    os.environ[k] = v\n\nsetenv('SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE', '1')\nsetenv(k='B', v=str(2))\n");
        assert_eq!(env(&fx), [(s("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"), Some(s("1"))), (s("B"), Some(s("2")))]);
        assert_eq!(fx.env[0].line, 4);
        assert!(!fx.env[0].conditional);
        assert_eq!(fx.env[0].kind, EnvWriteKind::Set);
        assert!(fx.problems.is_empty(), "{:?}", fx.problems);
    }

    #[test]
    fn loop_over_a_literal_dict() {
        let fx = eval(
            "import os\nFLAGS = {'A': '1', 'B': 'true'}\nfor k, v in FLAGS.items():\n    os.environ[k] = v\nfor name in ['C']:\n    os.environ.setdefault(name, 'x')\n",
        );
        assert_eq!(env(&fx), [(s("A"), Some(s("1"))), (s("B"), Some(s("true"))), (s("C"), Some(s("x")))]);
        assert_eq!(fx.env[2].kind, EnvWriteKind::SetDefault);
        assert!(fx.env.iter().all(|w| !w.conditional));
    }

    #[test]
    fn exec_of_a_literal_string() {
        let fx =
            eval("import os\nsrc = 'import os\\n' + \"os.environ['SGLANG_X'] = '1'\"\n\nexec(src)\nexec(compile(\"os.putenv('Y', '2')\", '<s>', 'exec'))\n");
        assert_eq!(env(&fx), [(s("SGLANG_X"), Some(s("1"))), (s("Y"), Some(s("2")))]);
        assert_eq!(fx.env[0].line, 4, "an exec'd write is at the exec line");
        assert_eq!(fx.env[1].kind, EnvWriteKind::Putenv);
        // Source not known here is a problem, not silence.
        let fx = eval("exec(open('x.py').read())\n");
        assert_eq!(fx.problems.len(), 1);
    }

    #[test]
    fn runpy_after_a_forbidden_setting() {
        let fx = eval(
            "import os, runpy, sys\nos.environ['SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE']='1'\nsys.argv = ['x', '--tp', '8']\nrunpy.run_module('sglang.launch_server', run_name='__main__')\n",
        );
        assert_eq!(env(&fx), [(s("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"), Some(s("1")))]);
        assert_eq!(fx.run_modules.len(), 1);
        let run = &fx.run_modules[0];
        assert_eq!((run.kind, &run.target, run.line), (RunKind::Module, &s("sglang.launch_server"), 4));
        assert_eq!(run.argv, Some(vec![s("x"), s("--tp"), s("8")]));
    }

    #[test]
    fn subprocess_with_an_environ_copy() {
        let fx = eval("import os, subprocess\nsubprocess.run(['python3','-m','sglang.launch_server','--tp','8'], env={**os.environ, 'X': '1'})\n");
        assert_eq!(fx.launches.len(), 1);
        let l = &fx.launches[0];
        assert_eq!(l.command, LaunchCommand::Argv(vec![s("python3"), s("-m"), s("sglang.launch_server"), s("--tp"), s("8")]));
        assert_eq!(l.env, LaunchEnv::Given { base: EnvBase::Environ, vars: vec![(s("X"), s("1"))] });
        assert_eq!((l.via.as_str(), l.line), ("subprocess.run", 2));
        // A copy changed before the launch, a shell string, os.system.
        let fx = eval(
            "import os, subprocess as sp\nenv = os.environ.copy()\nenv['Y'] = '2'\ncmd = 'sglang serve --tp %d' % 8\nsp.Popen(cmd, shell=True, env=env)\nos.system(f'echo {cmd}')\n",
        );
        assert_eq!(fx.launches[0].command, LaunchCommand::Shell(s("sglang serve --tp 8")));
        assert_eq!(fx.launches[0].env, LaunchEnv::Given { base: EnvBase::Environ, vars: vec![(s("Y"), s("2"))] });
        assert_eq!(fx.launches[1].command, LaunchCommand::Shell(s("echo sglang serve --tp 8")));
        assert_eq!(fx.launches[1].env, LaunchEnv::Inherited);
    }

    #[test]
    fn find_spec_write_into_the_engine() {
        let fx = eval(
            "import importlib.util, os\nspec = importlib.util.find_spec(\"vllm\")\np = os.path.join(os.path.dirname(spec.origin), \"model_executor/x.py\")\nopen(p, \"w\").write(\"patched\")\n",
        );
        assert_eq!(fx.writes.len(), 1);
        let w = &fx.writes[0];
        assert_eq!(w.path, PyValue::Installed("vllm/model_executor/x.py".into()));
        assert_eq!(w.path.installed_package(), Some("vllm"));
        assert_eq!((w.kind.clone(), w.line, w.content.clone()), (WriteKind::Open("w".into()), 4, Some(s("patched"))));
        assert_eq!(w.path.to_string(), "site-packages/vllm/model_executor/x.py");
    }

    #[test]
    fn other_ways_to_locate_an_installed_module() {
        let fx = eval(
            "import vllm, site, sysconfig, inspect, pathlib, shutil\nfrom importlib.util import find_spec\n\
             a = os.path.dirname(vllm.__file__) + '/a.py'\n\
             b = pathlib.Path(inspect.getfile(vllm)).parent / 'b.py'\n\
             c = os.path.join(site.getsitepackages()[0], 'sglang', 'srt', 'c.py')\n\
             d = f\"{sysconfig.get_paths()['purelib']}/sglang/d.py\"\n\
             e = find_spec('sglang').submodule_search_locations[0] + '/e.py'\n\
             for p in [a, b, c, d, e]:\n    shutil.copy('/tmp/new.py', p)\n\
             pathlib.Path(a).write_text('x')\n",
        );
        let paths: Vec<String> = fx.writes.iter().map(|w| w.path.to_string()).collect();
        assert_eq!(
            paths,
            [
                "site-packages/vllm/a.py",
                "site-packages/vllm/b.py",
                "site-packages/sglang/srt/c.py",
                "site-packages/sglang/d.py",
                "site-packages/sglang/e.py",
                "site-packages/vllm/a.py"
            ]
        );
        assert_eq!(fx.writes[0].from, Some(s("/tmp/new.py")));
        assert_eq!(fx.writes[5].kind, WriteKind::Write);
    }

    #[test]
    fn write_through_a_patch_helper_with_a_module_path() {
        let fx = eval(
            "import importlib.util, os\n\ndef patch(path, old, new):\n    with open(path) as f:\n        src = f.read()\n    with open(path, 'w') as f:\n        f.write(src.replace(old, new))\n\n\
             root = os.path.dirname(importlib.util.find_spec('sglang').origin)\npatch(os.path.join(root, 'srt/server_args.py'), 'a', 'b')\n",
        );
        assert_eq!(fx.writes.len(), 1, "{:?}", fx.writes);
        assert_eq!(fx.writes[0].path, PyValue::Installed("sglang/srt/server_args.py".into()));
        assert_eq!(fx.writes[0].line, 6);
        assert!(!fx.writes[0].conditional);
    }

    #[test]
    fn honest_twins_write_nothing_that_matters() {
        let fx = eval(
            "import os, json\nwith open('results.json') as f:\n    data = json.load(f)\nwith open('/tmp/out.txt', 'w') as f:\n    f.write('ok')\n\
             tp = os.environ.get('TP', '8')\nmodel = os.getenv('MODEL')\nprint(tp, model)\n",
        );
        assert!(fx.env.is_empty());
        assert_eq!(fx.writes.len(), 1);
        assert_eq!(fx.writes[0].path, s("/tmp/out.txt"));
        assert!(fx.writes.iter().all(|w| w.path.installed_package().is_none()));
        assert!(fx.problems.is_empty());
        // Known inputs are read, unknown ones stay unknown.
        let inputs = PyInputs { env: [("TP".to_string(), "4".to_string())].into(), ..PyInputs::default() };
        let fx = evaluate("import os\nos.environ['N'] = os.environ.get('TP', '8')\nos.environ['M'] = os.environ['OTHER']\n", 10, &inputs);
        assert_eq!(fx.env[0].value, Some(s("4")));
        assert_eq!(fx.env[0].line, 11);
        assert!(fx.env[1].value.as_ref().is_some_and(PyValue::has_unknown));
    }

    #[test]
    fn branches_on_unknown_values_are_conditional_and_merge() {
        let fx = eval(
            "import os, sys\nif os.path.exists('/x'):\n    v = '1'\nelse:\n    v = '0'\nos.environ['A'] = v\n\
             if __name__ == '__main__':\n    os.environ['B'] = '1'\nif len(sys.argv) > 5:\n    os.environ['C'] = '1'\n\
             try:\n    import vllm\nexcept ImportError:\n    os.environ['D'] = '1'\n",
        );
        assert_eq!(fx.env[0].value, Some(PyValue::OneOf(vec![s("1"), s("0")])));
        assert!(!fx.env[0].conditional);
        assert_eq!((&fx.env[1].name, fx.env[1].conditional), (&s("B"), false));
        assert_eq!((&fx.env[2].name, fx.env[2].conditional), (&s("C"), true));
        assert_eq!((&fx.env[3].name, fx.env[3].conditional), (&s("D"), true));
    }

    #[test]
    fn uncalled_functions_are_evaluated_once_conditionally() {
        let fx = eval(
            "import os, atexit\n@atexit.register\ndef late():\n    os.environ['LATE'] = '1'\n\nclass P:\n    def __init__(self, path):\n        self.path = path\n    def apply(self):\n        open(self.path, 'a')\n\nP(vllm.__file__).apply()\n",
        );
        assert_eq!(env(&fx), [(s("LATE"), Some(s("1")))]);
        assert!(fx.env[0].conditional);
        // `vllm` was never imported: unknown, yet the write through the method is seen.
        assert_eq!(fx.writes.len(), 1);
        assert!(!fx.writes[0].conditional);
    }

    #[test]
    fn monkeypatches_and_other_launches() {
        let fx = eval(
            "import os\nfrom sglang.srt import server_args\nserver_args.ServerArgs.__post_init__ = lambda self: None\nsetattr(server_args, 'X', 1)\n\
             os.execvpe('python3', ['python3', '-m', 'vllm.entrypoints.openai.api_server'], {'VLLM_X': '1'})\n",
        );
        let targets: Vec<&str> = fx.patches.iter().map(|p| p.target.as_str()).collect();
        assert_eq!(targets, ["sglang.srt.server_args.ServerArgs.__post_init__", "sglang.srt.server_args.X"]);
        assert_eq!(fx.launches[0].command, LaunchCommand::Argv(vec![s("python3"), s("-m"), s("vllm.entrypoints.openai.api_server")]));
        assert_eq!(fx.launches[0].env, LaunchEnv::Given { base: EnvBase::Empty, vars: vec![(s("VLLM_X"), s("1"))] });
    }

    #[test]
    fn unset_and_update_forms() {
        let fx = eval(
            "import os\nos.environ.update({'A': '1'}, )\nos.environ.update(B='2')\ndel os.environ['A']\nos.environ.pop('B', None)\nos.environ.update(cfg)\n",
        );
        let kinds: Vec<EnvWriteKind> = fx.env.iter().map(|w| w.kind).collect();
        assert_eq!(kinds, [EnvWriteKind::Set, EnvWriteKind::Set, EnvWriteKind::Unset, EnvWriteKind::Unset, EnvWriteKind::Set]);
        assert_eq!(fx.env[1].value, Some(s("2")));
        assert_eq!(fx.env[4].name, PyValue::Unknown("cfg".into()));
    }

    #[test]
    fn hidden_names_and_sources_are_decoded() {
        let fx = eval(
            "import os, base64, sys\nname = 'EOM_NTXEN_8PF_TPKC_4PFVN_GNALGS'[::-1]\nos.environ[name] = '1'\n\
             exec(base64.b64decode('b3MuZW52aXJvblsnU0dMQU5HX1gnXSA9ICcxJw==').decode())\n\
             getattr(os, 'environ')[chr(65) + 'B'] = '1'\nsys.modules['os'].__dict__['environ']['C'] = '1'\nos.environ |= {'D': '1'}\n",
        );
        let names: Vec<PyValue> = fx.env.iter().map(|w| w.name.clone()).collect();
        assert_eq!(names, [s("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"), s("SGLANG_X"), s("AB"), s("C"), s("D")]);
        assert!(fx.patches.is_empty(), "{:?}", fx.patches);
    }

    #[test]
    fn leaving_a_loop_or_function_early_makes_only_what_follows_conditional() {
        let fx = eval(
            "import os, sys\ndef f(items):\n    for k in items:\n        if k.startswith('#'):\n            continue\n        os.environ['IN'] = k\n    os.environ['AFTER_LOOP'] = '1'\n    if not os.path.exists('/x'):\n        return\n    os.environ['AFTER_RETURN'] = '1'\n\
             f(sys.argv)\nif not os.path.exists('/model'):\n    sys.exit(1)\nos.environ['AFTER_EXIT'] = '1'\n",
        );
        let seen: Vec<(String, bool)> = fx.env.iter().map(|w| (w.name.to_string(), w.conditional)).collect();
        assert_eq!(seen, [("IN".to_string(), true), ("AFTER_LOOP".to_string(), false), ("AFTER_RETURN".to_string(), true), ("AFTER_EXIT".to_string(), false)]);
    }

    #[test]
    fn prints_and_the_output_of_python_run_from_python() {
        let fx = eval("import rixl._api; print(rixl._api.__file__)\nimport sys\nprint('x', 1, file=sys.stderr)\n");
        assert_eq!(fx.prints.len(), 1);
        assert_eq!(fx.prints[0].text, PyValue::Installed("rixl/_api.py".into()));
        let fx = eval(
            "import subprocess, sys, os\n\
             p = subprocess.check_output([sys.executable, '-c', 'import vllm, os; print(os.path.dirname(vllm.__file__))']).decode().strip()\n\
             q = subprocess.getoutput(\"python3 -c 'import sglang; print(sglang.__path__[0])'\")\n\
             open(os.path.join(p, 'x.py'), 'w')\nopen(q + '/y.py', 'a')\n",
        );
        let paths: Vec<&PyValue> = fx.writes.iter().map(|w| &w.path).collect();
        assert_eq!(paths, [&PyValue::Installed("vllm/x.py".into()), &PyValue::Installed("sglang/y.py".into())]);
        assert_eq!(fx.launches.len(), 2, "the runs are launches too");
        assert!(fx.prints.is_empty(), "the child's prints are not this process's");
    }

    #[test]
    fn closures_see_the_enclosing_names_as_they_are_when_called() {
        let fx = eval(
            r#"import os, importlib.util
def main():
    def patch(rel):
        done.append(rel)
        open(os.path.join(root, rel), 'w')
    done = []
    root = os.path.dirname(importlib.util.find_spec('vllm').origin)
    patch('a.py')
    os.environ['DONE'] = ','.join(done)
main()
"#,
        );
        assert_eq!(fx.writes[0].path, PyValue::Installed("vllm/a.py".into()));
        assert_eq!(fx.env[0].value, Some(s("a.py")), "a list changed by the inner function is the outer one's");
    }

    #[test]
    fn syntax_error_is_a_problem() {
        let fx = eval("import os\nos.environ['A'] = '1'\ndef broken(:\n");
        assert_eq!(fx.problems.len(), 1);
        assert!(fx.problems[0].1.contains("syntax error"), "{:?}", fx.problems);
        assert_eq!(fx.problems[0].0, 3);
    }

    #[test]
    fn hostile_nesting_is_refused_without_overflowing() {
        // A small stack: the evaluator runs on its own thread, and the pre-bound refuses first.
        let run = |src: String| std::thread::Builder::new().stack_size(256 << 10).spawn(move || eval(&src)).unwrap().join().unwrap();
        let deep = run(format!("x = {}1{}\n", "(".repeat(100_000), ")".repeat(100_000)));
        assert!(deep.problems.iter().any(|(_, p)| p.contains("nested deeper")), "{:?}", deep.problems);
        let chain = run(format!("x = {}1\n", "a + ".repeat(100_000)));
        assert_eq!(chain.problems.len(), 1);
        let nots = run(format!("x = {}1\n", "not ".repeat(100_000)));
        assert_eq!(nots.problems.len(), 1);
        // Deep but allowed: evaluated, the innermost cut by the depth bound at worst.
        let calls: String = (0..40).map(|i| format!("def f{i}(x):\n    return f{}(x + '.')\n", i + 1)).collect();
        let fx = run(format!("import os\n{calls}def f40(x):\n    os.environ['DEEP'] = x\nf0('')\n"));
        assert!(fx.problems.iter().any(|(_, p)| p.contains("calls nested deeper")), "{:?}", fx.problems);
        let recursive = run("def f(n):\n    return f(n + 1)\nf(0)\n".to_string());
        assert_eq!(recursive.problems.len(), 1);
        // Calls and brackets together up to the evaluator's own depth bound.
        let nest = |inner: &str| format!("{}{inner}{}", "[".repeat(90), "]".repeat(90));
        let deep: String = (0..16).map(|i| format!("def g{i}(x):\n    return g{}({})\n", i + 1, nest("x"))).collect();
        let fx = run(format!("import os\n{deep}def g16(x):\n    os.environ['X'] = 'deep'\ng0(1)\n"));
        assert!(fx.problems.iter().any(|(_, p)| p.contains("nested deeper than")), "{:?}", fx.problems);
    }

    #[test]
    fn values_stay_small_whatever_the_source_builds() {
        let run = |src: &str| {
            let t = std::time::Instant::now();
            let fx = eval(src);
            (fx, t.elapsed())
        };
        // Nesting, doubling in place, multiplying a big list, many big records.
        let (fx, _) = run("import os\nx = []\nfor i in range(1000):\n    x = [x]\nos.environ['N'] = str(x)\n");
        assert!(fx.env[0].value.as_ref().is_some_and(PyValue::has_unknown));
        let (fx, _) = run("import os\na = [1]\nfor i in range(64):\n    a.append(a)\nb = [list(range(1000))] * 10000\nos.environ['A'] = str(len(a))\n");
        assert_eq!(fx.env.len(), 1);
        // A list built in a loop is changed in place, not copied each time.
        let (fx, took) = run(
            "import os\ndef f():\n    xs = []\n    def add(i):\n        xs.append(str(i))\n    for i in range(5000):\n        add(i)\n        xs.append('x')\n    return xs\nos.environ['N'] = str(len(f()))\n",
        );
        assert_eq!(fx.env[0].value, Some(s("10000")), "{:?}", fx.problems);
        assert!(took.as_secs() < 10, "{took:?}");
        let (fx, took) = run("import os\ns = 'x' * 1000000\nfor i in range(10000):\n    os.environ['S%d' % i] = s\n");
        assert!(fx.problems.iter().any(|(_, p)| p.contains("steps") || p.contains("not shown")), "{:?}", fx.problems);
        let kept: usize = fx.env.iter().map(|w| w.value.as_ref().map_or(0, |v| v.to_string().len())).sum();
        assert!(kept <= 64 << 20, "{kept} bytes of values kept");
        assert!(took.as_secs() < 20, "{took:?}");
    }

    #[test]
    fn a_huge_loop_hits_its_bound_and_keeps_what_was_found() {
        let fx = eval("import os\nos.environ['BEFORE'] = '1'\ni = 0\nwhile True:\n    i += 1\nos.environ['AFTER'] = '1'\nfor j in range(10**9):\n    pass\n");
        assert_eq!(env(&fx).len(), 2, "the loop is cut, not the code after it");
        assert!(fx.problems.iter().any(|(line, p)| *line == 4 && p.contains("loop")), "{:?}", fx.problems);
        // Nested loops exhaust the step budget: evaluation stops, with a problem, keeping the first write.
        let fx = eval("import os\nos.environ['A'] = '1'\nfor i in range(5000):\n    for j in range(5000):\n        x = i\nos.environ['B'] = '1'\n");
        assert_eq!(env(&fx), [(s("A"), Some(s("1")))]);
        assert!(fx.problems.iter().any(|(_, p)| p.contains("steps")), "{:?}", fx.problems);
    }
}
