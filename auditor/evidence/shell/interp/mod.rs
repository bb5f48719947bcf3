//! An abstract interpreter of bash: it evaluates a script the way bash
//! would, over the tree [`super::syntax`] parses, and runs nothing.
//!
//! What a program prints or whether it succeeds is known only for the
//! programs whose output follows from their input (`echo`, `printf`, `cat`
//! of a heredoc, `base64 -d`, ...: [`programs`]); every other command is
//! recorded with the arguments and environment it would receive
//! ([`Exec`]), and its output is undetermined. A condition the inputs do
//! not decide keeps both arms, each path marked with what it assumed
//! ([`state::Mark`]); paths that reach the same state are merged again, and
//! past [`Limits::paths`] they are joined, their differing values becoming
//! "one of" ([`value::Why::OneOf`]). The work is bounded ([`Limits`]); a
//! bound that trips is a [`Problem`] naming what was not examined, and what
//! was found up to it is kept.
//!
//! Values keep the place their text was written ([`value::Place`]), so a
//! setting assembled through variables, function arguments, arrays or
//! files is cited where it was written.

mod args;
mod arith;
mod awk;
mod builtins;
mod cond;
mod exec;
mod expand;
mod jq;
pub mod pattern;
mod programs;
mod sed;
mod simple;
pub mod state;
pub mod value;

use crate::evidence::shell::syntax::{self, SyntaxError};
pub use builtins::line_places;
use state::{Mark, Src, World};
use std::collections::{BTreeMap, HashMap};
use value::{Place, Str};

/// Files the script can reach: the audited tree's, by the path the run sees.
pub trait Files: Sync {
    /// The text of the file at absolute path `path` as the run sees it, if
    /// the input holds it.
    fn read(&self, path: &str) -> Option<String>;

    /// The input's one file whose path ends with `/tail` (for a path whose
    /// head only the run knows): its path as the run sees it, and its text.
    fn find_tail(&self, _tail: &str) -> Option<(String, String)> {
        None
    }

    /// The Python modules the input holds directly in directory `dir` (an
    /// absolute path as the run sees it): `dir/NAME.py` and
    /// `dir/NAME/__init__.py`, by their paths in the input.
    fn modules_in(&self, _dir: &str) -> Vec<String> {
        Vec::new()
    }
}

/// No files beyond those the script writes.
pub struct NoFiles;

impl Files for NoFiles {
    fn read(&self, _: &str) -> Option<String> {
        None
    }
}

/// What a run gives the script.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// The script's path as the run names it (`$0`, `BASH_SOURCE`).
    pub script: String,
    /// The positional parameters.
    pub args: Vec<String>,
    /// Variables of the starting environment whose values the run gives.
    pub env: BTreeMap<String, String>,
    /// The starting environment may hold other variables (their values
    /// undetermined); `false` when `env` is all of it, as in a test.
    pub open: bool,
    /// The directory it starts in.
    pub cwd: String,
}

/// Bounds on the work of one evaluation.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Simple commands executed over all paths.
    pub steps: usize,
    /// Paths kept apart at once; past it they are joined.
    pub paths: usize,
    /// Nested function calls.
    pub calls: usize,
    /// Nested `source`, `eval`, `bash -c` and command substitutions.
    pub nesting: usize,
    /// Iterations of one loop.
    pub iterations: usize,
    /// Fields one word may expand to (brace expansion, arrays).
    pub fields: usize,
    /// Bytes of one value.
    pub value_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { steps: 200_000, paths: 8, calls: 64, nesting: 24, iterations: 4096, fields: 16_384, value_bytes: 4 << 20 }
    }
}

/// A call that led to a statement: outermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub kind: CallKind,
    /// The statement that made the call.
    pub at: Place,
    /// For a function: where it is defined.
    pub defined: Option<Place>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallKind {
    Function(String),
    Source(String),
    Eval,
    /// `bash -c`, `sh -c`, `bash -s`, `bash FILE`: a child shell.
    Shell,
    /// A command substitution, process substitution or pipeline stage.
    Subshell,
    /// A trap's handler.
    Trap(String),
    /// The body of a function the script defines and no path calls,
    /// evaluated as if called with undetermined arguments: what it would
    /// do is still judged.
    Uncalled(String),
}

/// Where an event happened: its statement, the calls that led there, and
/// the conditions its path assumed.
#[derive(Clone, Debug)]
pub struct Ctx {
    pub at: Place,
    pub chain: Vec<Call>,
    pub marks: Vec<Mark>,
    /// When it happened, among all events of the evaluation.
    pub order: usize,
}

/// The same event seen on two paths is one event, whenever each saw it.
impl PartialEq for Ctx {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.chain == other.chain && self.marks == other.marks
    }
}

impl Eq for Ctx {}

/// A program run (not a builtin, not a function): what it receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exec {
    /// The argv of the program itself, launch wrappers (`env`, `sudo`,
    /// `nohup`, `numactl`, `timeout`, ...) taken off ([`Exec::wrappers`]).
    pub argv: Vec<Str>,
    /// The environment it receives from the shell and its wrappers.
    pub env: BTreeMap<String, Str>,
    /// Names set for this command alone (`NAME=v cmd`, `env NAME=v`).
    pub prefix: Vec<String>,
    /// It also inherits variables of the starting environment that the
    /// script did not set (their values undetermined).
    pub inherits: bool,
    pub cwd: Str,
    /// What it reads on standard input, when the script says.
    pub stdin: Option<Str>,
    /// Files its standard output is written to (`>`, `>>`).
    pub stdout_to: Vec<(Str, bool)>,
    /// The wrappers it was started through, outermost first (their argv).
    pub wrappers: Vec<Vec<Str>>,
    /// Started with `&`, or as a pipeline stage.
    pub background: bool,
    pub ctx: Ctx,
}

/// How a variable was assigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// `NAME=v`.
    Plain,
    /// `export`, `declare -x`, `typeset -x`.
    Export,
    /// `declare`, `typeset`, `local`, `readonly` without `-x`.
    Declare,
    /// `NAME=v cmd`, `env NAME=v cmd`, `sudo NAME=v cmd`: one command's own.
    Prefix,
    /// `read`, `readarray`/`mapfile`, `printf -v`, a `for` variable,
    /// `getopts`, arithmetic, `${NAME:=v}`.
    Computed,
    /// `unset NAME`, `env -u NAME`, `export -n NAME`.
    Unset,
}

/// A variable assignment the script executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assign {
    pub name: String,
    /// The value; `None` when unset.
    pub value: Option<Str>,
    /// It is in the environment of programs started after it.
    pub exported: bool,
    pub how: How,
    /// Where the name's text was written (a function's caller, a file's line).
    pub name_at: Place,
    pub ctx: Ctx,
}

/// A file the script wrote through a redirection or a known program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    pub path: Str,
    pub content: Str,
    pub append: bool,
    pub ctx: Ctx,
}

/// Something not examined, or examined only in part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub at: Place,
    pub what: String,
    /// A work bound tripped: part of the script was not examined.
    pub bound: bool,
}

/// Everything one evaluation found.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// The files read, by index ([`Place::file`]); 0 is the script.
    pub files: Vec<String>,
    pub execs: Vec<Exec>,
    /// Container launchers run (`docker run`, `srun`): each one's own argv,
    /// up to the command it starts (its options lay files over the engine's).
    pub containers: Vec<(Vec<Str>, Ctx)>,
    pub assigns: Vec<Assign>,
    pub writes: Vec<Write>,
    /// Files the script sourced or ran: (path as resolved, whether the input had it, where).
    pub reached: Vec<(Str, bool, Ctx)>,
    pub problems: Vec<Problem>,
    /// Paths that reached the end.
    pub paths: usize,
    /// Simple commands evaluated, over all paths.
    pub steps: usize,
    /// The text of each whole file read, by index.
    pub texts: HashMap<u32, Text>,
    /// The script's own functions it called on some path (the others ran
    /// as [`CallKind::Uncalled`]).
    pub called: std::collections::BTreeSet<String>,
}

/// A file's text with where each line starts.
#[derive(Clone, Debug, Default)]
pub struct Text {
    pub text: String,
    starts: Vec<usize>,
}

impl Text {
    pub fn new(text: String) -> Text {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Text { text, starts }
    }

    /// Line `n` (1-based), without its newline.
    pub fn line(&self, n: usize) -> Option<&str> {
        let start = *self.starts.get(n.checked_sub(1)?)?;
        let end = self.starts.get(n).map_or(self.text.len(), |e| e - 1);
        self.text.get(start..end.max(start)).map(|l| l.strip_suffix('\r').unwrap_or(l))
    }
}

impl Evaluation {
    /// The path of the file a place is in.
    pub fn file_of(&self, at: Place) -> &str {
        self.files.get(at.file as usize).map_or("", String::as_str)
    }

    /// The text of a line of a file read, when the file is whole.
    pub fn line_text(&self, at: Place) -> Option<&str> {
        self.texts.get(&at.file)?.line(at.line as usize)
    }

    /// Whether a work bound tripped.
    pub fn bounded(&self) -> bool {
        self.problems.iter().any(|p| p.bound)
    }
}

/// The interpreter's working state across paths.
pub(crate) struct Interp<'a> {
    files: &'a dyn Files,
    limits: Limits,
    out: Evaluation,
    file_ids: HashMap<String, u32>,
    /// Functions called on some path: (name, where defined).
    called: std::collections::HashSet<(String, Place)>,
    /// The mapping of the text being run.
    src: Src,
    /// The calls that led to the statement being run.
    chain: Vec<Call>,
    /// The function names on the call stack (`FUNCNAME`).
    functions: Vec<String>,
    /// The files being sourced (`BASH_SOURCE`), innermost last.
    sources: Vec<String>,
    steps: usize,
    nesting: usize,
    /// The place of the statement being run.
    at: Place,
    /// Events so far (their order).
    order: usize,
    /// Joins of paths so far (each one's id).
    joins: u32,
    /// Next `/dev/fd/N` a process substitution names.
    next_fd: u32,
    /// A bound tripped already on this evaluation (reported once per kind).
    tripped: std::collections::BTreeSet<&'static str>,
    /// Conditions being evaluated (an `if` or `while` test, an operand of
    /// `&&`/`||` but the last, a negated pipeline): `set -e` does not stop
    /// the script at a failure there.
    checking: usize,
}

/// Evaluate `text`, the script at `inputs.script`.
pub fn evaluate(text: &str, inputs: &Inputs, files: &dyn Files, limits: Limits) -> Evaluation {
    let run = || {
        let mut interp = Interp::new(files, limits);
        interp.run_script(text, inputs);
        interp.out
    };
    syntax::on_large_stack(run).unwrap_or_else(|| Evaluation {
        files: vec![inputs.script.clone()],
        problems: vec![Problem { at: Place::default(), what: "the interpreter stopped on this script (an internal error): not examined".into(), bound: true }],
        ..Evaluation::default()
    })
}

impl<'a> Interp<'a> {
    fn new(files: &'a dyn Files, limits: Limits) -> Self {
        Interp {
            files,
            limits,
            out: Evaluation::default(),
            file_ids: HashMap::new(),
            called: Default::default(),
            src: Src::whole(0),
            chain: Vec::new(),
            functions: Vec::new(),
            sources: Vec::new(),
            steps: 0,
            nesting: 0,
            at: Place::default(),
            order: 0,
            joins: 0,
            next_fd: 63,
            tripped: Default::default(),
            checking: 0,
        }
    }

    fn file_id(&mut self, path: &str) -> u32 {
        if let Some(id) = self.file_ids.get(path) {
            return *id;
        }
        let id = self.out.files.len() as u32;
        self.out.files.push(path.to_string());
        self.file_ids.insert(path.to_string(), id);
        id
    }

    fn run_script(&mut self, text: &str, inputs: &Inputs) {
        let file = self.file_id(&inputs.script);
        self.out.texts.insert(file, Text::new(text.to_string()));
        self.src = Src::whole(file);
        let at = Place { file, line: 0 };
        let mut world = World::new(Str::lit(inputs.cwd.clone(), at), inputs.open);
        for (name, value) in &inputs.env {
            world.assign(name, state::Value::Scalar(Str::lit(value.clone(), at)), at);
            world.set_attrs(name, false, at, |a| a.exported = true);
        }
        world.positional_mut().extend(inputs.args.iter().map(|a| Str::lit(a.clone(), at)));
        self.sources.push(inputs.script.clone());
        let program = match syntax::parse(text) {
            Ok(program) => program,
            Err(e) => {
                self.syntax_problem(&e, file);
                return;
            }
        };
        let worlds = self.run_program(vec![world], &program);
        let worlds = self.run_exit_traps(worlds);
        self.out.paths = worlds.len();
        self.out.called = self.called.iter().filter(|(_, at)| at.file == 0).map(|(name, _)| name.clone()).collect();
        self.run_uncalled(worlds);
        self.out.steps = self.steps;
        self.finish();
    }

    fn syntax_problem(&mut self, e: &SyntaxError, file: u32) {
        let line = match e {
            SyntaxError::TooDeep { line } => Some(*line),
            SyntaxError::Invalid { line, .. } => *line,
        };
        let at = line.map_or(self.at, |l| self.src.place(l as usize));
        let at = Place { file, ..at };
        self.out.problems.push(Problem { at, what: e.to_string(), bound: true });
    }

    /// The handlers of `trap ... EXIT` run when a path ends.
    fn run_exit_traps(&mut self, worlds: Vec<World>) -> Vec<World> {
        let mut out = Vec::new();
        for mut w in worlds {
            match w.traps.remove("EXIT") {
                Some(handler) => {
                    w.flow = state::Flow::Normal;
                    out.extend(self.run_value(w, &handler, CallKind::Trap("EXIT".into())));
                }
                None => out.push(w),
            }
        }
        out
    }

    /// Functions defined and never called, each run once as if called with
    /// undetermined arguments from where the script ends.
    fn run_uncalled(&mut self, worlds: Vec<World>) {
        if worlds.is_empty() {
            return;
        }
        let end = self.join_all(worlds, self.at);
        // A library's own functions are judged where the library is evaluated, not in every script that sources it.
        let uncalled: Vec<std::rc::Rc<state::Func>> =
            end.funcs.values().filter(|f| f.at.file == 0 && !self.called.contains(&(f.name.clone(), f.at))).cloned().collect();
        for func in uncalled {
            let mut w = end.clone();
            w.flow = state::Flow::Normal;
            w.out = None;
            self.at = func.at;
            let args = vec![Str::unknown(value::Why::Input("an argument of a call the script does not make".into()), func.at, "$@")];
            self.chain.push(Call { kind: CallKind::Uncalled(func.name.clone()), at: func.at, defined: Some(func.at) });
            let _ = self.call_function(w, &func, args);
            self.chain.pop();
        }
    }

    /// Deduplicate what was found on several paths.
    fn finish(&mut self) {
        dedup(&mut self.out.execs, |e| e.ctx.at);
        dedup(&mut self.out.containers, |c| c.1.at);
        dedup(&mut self.out.assigns, |a| a.ctx.at);
        dedup(&mut self.out.writes, |w| w.ctx.at);
        dedup(&mut self.out.reached, |r| r.2.at);
        dedup(&mut self.out.problems, |p| p.at);
    }

    /// The context of an event at the statement being run, on path `w`.
    fn ctx(&mut self, w: &World) -> Ctx {
        self.order += 1;
        Ctx { at: self.at, chain: self.chain.clone(), marks: w.marks.clone(), order: self.order }
    }

    /// Report a bound that tripped (once per kind and place).
    fn trip(&mut self, kind: &'static str, what: String) {
        if self.tripped.insert(kind) || !self.out.problems.iter().any(|p| p.at == self.at && p.bound) {
            self.out.problems.push(Problem { at: self.at, what, bound: true });
        }
    }

    fn note(&mut self, what: String) {
        self.out.problems.push(Problem { at: self.at, what, bound: false });
    }
}

/// Keep the first of equal items, in order; items are compared only with
/// those of the same place.
fn dedup<T: PartialEq>(items: &mut Vec<T>, place: impl Fn(&T) -> Place) {
    let mut by_place: HashMap<Place, Vec<usize>> = HashMap::new();
    let mut kept: Vec<T> = Vec::with_capacity(items.len());
    for item in items.drain(..) {
        let same = by_place.entry(place(&item)).or_default();
        if !same.iter().any(|&i| kept[i] == item) {
            same.push(kept.len());
            kept.push(item);
        }
    }
    *items = kept;
}

#[cfg(test)]
mod tests;
