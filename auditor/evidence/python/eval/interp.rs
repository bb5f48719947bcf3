//! The walk: statements and expressions of the parsed source, names in
//! scopes, branches forked and merged, calls of the source's own functions,
//! and the records of what the code does. What library objects do (`os`,
//! `subprocess`, `pathlib`, strings and dicts) is in [`super::library`].

use super::value::{self, Base, Body, Class, Function, Instance, Shared, Source, Val, join, unknown, unknown_as};
use super::{AttrWrite, EnvWrite, EnvWriteKind, FileWrite, PyEffects, PyInputs, PyPrint, PyRun, PyValue, RunKind, WriteKind, bound};
use rustpython_parser::ast::{self, BoolOp, CmpOp, Constant, Expr, Operator, Ranged, Stmt, UnaryOp};
use rustpython_parser::{Mode, parse_tokens};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// Statements, loop iterations and comprehension items evaluated, in all.
const MAX_STEPS: u64 = 100_000;
/// Calls of the source's own functions open at once.
const MAX_CALL_DEPTH: usize = 16;
/// `exec` inside `exec`.
const MAX_EXEC_DEPTH: u32 = 4;
/// Iterations of one loop.
const MAX_LOOP: usize = 10_000;
/// Statements and expressions open at once (the evaluator's recursion).
const MAX_DEPTH: u32 = 200;
/// Records of one kind (env writes, launches, ...), and problems.
const MAX_RECORDS: usize = 10_000;
/// Units of values (see [`value::units_within`]) the records may hold in
/// all: what one evaluation can hand back stays small whatever the source.
const MAX_OUTPUT: usize = 1 << 19;
/// The evaluator's own stack: its recursion is bounded by [`MAX_DEPTH`],
/// the tree's depth by the token pre-bound; this is room for both.
const STACK: usize = 64 << 20;

/// How a block ended.
pub(super) enum Flow {
    Normal,
    Return(Val),
    Break,
    Continue,
    Raise,
    /// A bound stopped the evaluation.
    Stop,
}

/// The arguments of a call.
#[derive(Clone, Debug, Default)]
pub(super) struct Args {
    pub pos: Vec<Val>,
    pub kw: Vec<(String, Val)>,
    /// Some arguments are unknown (`f(*unknown)`, `f(**unknown)`).
    pub open: bool,
}

impl Args {
    pub(super) fn positional(pos: Vec<Val>) -> Self {
        Args { pos, kw: Vec::new(), open: false }
    }

    pub(super) fn kw(&self, name: &str) -> Option<&Val> {
        self.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Positional argument `i`, or the keyword `name`.
    pub(super) fn get(&self, i: usize, name: &str) -> Option<&Val> {
        self.pos.get(i).or_else(|| self.kw(name))
    }
}

struct Frame {
    id: u64,
    /// The frame the function was defined in: its names as they are now,
    /// while it is still running (a closure sees later assignments).
    parent: Option<u64>,
    locals: Names,
    /// The defining frame's names when the function was defined.
    closure: Option<Names>,
    global_names: HashSet<String>,
    /// Values returned on conditional paths.
    pending: Vec<Val>,
    /// Conditional levels added because a path left the block early.
    extra_cond: u32,
    /// A class body: its functions see no closure.
    class: bool,
}

impl Frame {
    fn new(id: u64, parent: Option<u64>, locals: Scope, closure: Option<Names>, class: bool) -> Self {
        Frame { id, parent, locals: Rc::new(locals), closure, global_names: HashSet::new(), pending: Vec::new(), extra_cond: 0, class }
    }
}

/// Conditional levels a loop added, undone at the end of the iteration
/// (after a `continue`) or of the loop (after a `break`).
#[derive(Clone, Copy, Default)]
struct LoopState {
    iteration_extra: u32,
    loop_extra: u32,
    /// A path may leave the loop (break, return, raise) on a condition not known here.
    left: bool,
}

/// The state a branch changes, kept to run the other arms from and merged after.
#[derive(Clone)]
struct Snapshot {
    locals: Option<Names>,
    globals: Names,
    environ: Rc<BTreeMap<String, Val>>,
    argv: Option<Val>,
}

/// A scope's names, shared until written (a branch's snapshot costs nothing
/// until an arm assigns).
type Names = Rc<Scope>;

/// Names to values (the names shared, so copying a scope copies pointers).
pub(super) use super::value::Scope;

pub(super) struct Evaluator<'i> {
    pub(super) inputs: &'i PyInputs,
    pub(super) out: PyEffects,
    globals: Names,
    frames: Vec<Frame>,
    /// Environment writes made so far (`Val::None`: unset).
    environ: Rc<BTreeMap<String, Val>>,
    /// The line of the statement being evaluated.
    line: u64,
    /// `sys.argv` when the source set it.
    pub(super) argv: Option<Val>,
    /// Levels of conditional code around the current point.
    pub(super) cond: u32,
    /// A call raised: the statement around it ends.
    pub(super) raising: bool,
    steps: u64,
    stopped: bool,
    exec_depth: u32,
    depth: u32,
    /// Conditional levels the current loop added.
    looping: LoopState,
    src: Rc<Source>,
    /// Every function value made, for the final pass.
    funcs: Vec<Shared<Function>>,
    /// Function bodies called (by body address).
    called: HashSet<usize>,
    /// Function bodies and parameter lists, cloned out of the tree once.
    defs: HashMap<usize, (Rc<ast::Arguments>, Rc<Vec<Stmt>>)>,
    lambdas: HashMap<usize, (Rc<ast::Arguments>, Rc<Expr>)>,
    /// Parsed sources, alive while their addresses key `defs`.
    keep: Vec<Rc<ast::Mod>>,
    /// Bounds already reported.
    noted: HashSet<&'static str>,
    /// What was printed, with whether on some paths only.
    stdout: Vec<(Val, bool)>,
    next_frame: u64,
    /// The size of the value `eval` last returned, in [`value::units_within`] units.
    last_units: usize,
    /// Units of values still allowed into the records.
    output_left: usize,
}

/// Evaluate on a thread with room for the bounded recursion.
pub(super) fn run(source: &str, first_line: u64, inputs: &PyInputs) -> PyEffects {
    let work = || {
        let text = source.strip_prefix('\u{feff}').unwrap_or(source);
        let mut ev = Evaluator::new(inputs, Rc::new(Source::new(text.to_string(), first_line, None)));
        ev.run_module();
        ev.out
    };
    crate::evidence::stack::with_room("python-eval", STACK, work).unwrap_or_else(|| PyEffects {
        problems: vec![(first_line, "the Python evaluator failed on this source (or had no thread to run on); nothing was evaluated".into())],
        ..PyEffects::default()
    })
}

impl<'i> Evaluator<'i> {
    fn new(inputs: &'i PyInputs, src: Rc<Source>) -> Self {
        let mut globals = HashMap::new();
        globals.insert("__name__".into(), Val::Str("__main__".into()));
        globals.insert("__file__".into(), inputs.file.clone().map_or_else(|| unknown_as("__file__"), Val::Str));
        Evaluator {
            inputs,
            out: PyEffects::default(),
            globals: Rc::new(globals),
            frames: Vec::new(),
            environ: Rc::new(BTreeMap::new()),
            line: src.line(0),
            argv: None,
            cond: 0,
            raising: false,
            steps: 0,
            stopped: false,
            exec_depth: 0,
            depth: 0,
            looping: LoopState::default(),
            src,
            funcs: Vec::new(),
            called: HashSet::new(),
            defs: HashMap::new(),
            lambdas: HashMap::new(),
            keep: Vec::new(),
            noted: HashSet::new(),
            stdout: Vec::new(),
            next_frame: 0,
            last_units: 0,
            output_left: MAX_OUTPUT,
        }
    }

    fn run_module(&mut self) {
        let text = self.src.text.clone();
        if let Some(module) = self.parse(&text, Mode::Module)
            && let ast::Mod::Module(m) = &*module
        {
            self.exec_block(&m.body);
        }
        self.final_pass();
    }

    /// Parse under the nesting pre-bound; a refusal or a syntax error is a problem.
    fn parse(&mut self, text: &str, mode: Mode) -> Option<Rc<ast::Mod>> {
        let tokens = match bound::tokens(text, mode) {
            Ok(tokens) => tokens,
            Err((offset, why)) => {
                let line = self.src.line(offset);
                self.problem(line, format!("Python not evaluated: {why}"));
                return None;
            }
        };
        match parse_tokens(tokens, mode, "<python>") {
            Ok(module) => {
                let module = Rc::new(module);
                self.keep.push(Rc::clone(&module));
                Some(module)
            }
            Err(e) => {
                let line = self.src.line(u32::from(e.offset));
                self.problem(line, format!("Python syntax error: {}", e.error));
                None
            }
        }
    }

    /// Functions never called: once, with unknown arguments, conditional.
    fn final_pass(&mut self) {
        let mut i = 0;
        while i < self.funcs.len() && !self.stopped {
            let f = self.funcs[i].clone();
            i += 1;
            if self.called.contains(&body_key(&f.0.body)) {
                continue;
            }
            self.cond += 1;
            let line = f.0.source.line(0);
            self.call_function(&f, Args { open: true, ..Args::default() }, line);
            self.cond = self.cond.saturating_sub(1);
            self.raising = false;
        }
    }

    // ---- records ----

    pub(super) fn problem(&mut self, line: u64, message: String) {
        if self.out.problems.len() < MAX_RECORDS {
            self.out.problems.push((line, message));
        }
    }

    /// Report a bound once per evaluation.
    fn bound_hit(&mut self, which: &'static str, line: u64, message: String) {
        if self.noted.insert(which) {
            self.problem(line, message);
        }
    }

    fn room(&mut self, len: usize, line: u64) -> bool {
        if len < MAX_RECORDS {
            return true;
        }
        self.bound_hit("records", line, format!("more than {MAX_RECORDS} effects of one kind; later ones not recorded"));
        false
    }

    pub(super) fn conditional(&self) -> bool {
        self.cond > 0
    }

    /// A value for a record, within what the records may hold in all.
    pub(super) fn show(&mut self, v: &Val) -> PyValue {
        match value::units_within(v, self.output_left) {
            Some(units) => {
                self.output_left -= units;
                v.public()
            }
            None => {
                let line = self.line;
                self.bound_hit("output", line, format!("the values recorded reached {MAX_OUTPUT} units; later large values are not shown"));
                PyValue::Unknown(format!("not shown: {}", value::short(v)))
            }
        }
    }

    pub(super) fn env_write(&mut self, name: Val, value: Option<Val>, kind: EnvWriteKind, line: u64) {
        if let Val::OneOf(alts) = name {
            self.cond += 1;
            for alt in alts {
                self.env_write(alt, value.clone(), kind, line);
            }
            self.cond = self.cond.saturating_sub(1);
            return;
        }
        if let Val::Str(n) = &name {
            match kind {
                EnvWriteKind::Set => {
                    self.environ_mut().insert(n.clone(), value.clone().unwrap_or(Val::None));
                }
                EnvWriteKind::SetDefault => {
                    let current = self.environ.get(n).cloned().or_else(|| self.inputs.env.get(n).map(|s| Val::Str(s.clone())));
                    let new = value.clone().unwrap_or(Val::None);
                    match current {
                        Some(Val::None) => {
                            self.environ_mut().insert(n.clone(), new);
                        }
                        Some(_) => {}
                        None => {
                            self.environ_mut().insert(n.clone(), join(vec![new, unknown_as(format!("${n} as set before"))]));
                        }
                    }
                }
                EnvWriteKind::Unset => {
                    self.environ_mut().insert(n.clone(), Val::None);
                }
                EnvWriteKind::Putenv | EnvWriteKind::Unsetenv => {}
            }
        }
        if !self.room(self.out.env.len(), line) {
            return;
        }
        let name = self.show(&name);
        let value = value.map(|v| self.show(&v));
        let record = EnvWrite { name, value, kind, line, conditional: self.conditional() };
        self.out.env.push(record);
    }

    /// An environment variable read: written here, else known from the
    /// inputs, else unknown (one of unknown and the default, when given).
    pub(super) fn env_read(&mut self, name: &Val, default: Option<Val>) -> Val {
        let Val::Str(n) = name else { return unknown() };
        match self.environ.get(n) {
            Some(Val::None) => default.unwrap_or_else(unknown),
            Some(v) => v.clone(),
            None => match self.inputs.env.get(n) {
                Some(s) => Val::Str(s.clone()),
                None => match default {
                    Some(d) => join(vec![unknown(), d]),
                    None => unknown(),
                },
            },
        }
    }

    /// Whether a variable is set, when known.
    pub(super) fn env_has(&self, name: &str) -> Option<bool> {
        match self.environ.get(name) {
            Some(Val::None) => Some(false),
            Some(_) => Some(true),
            None => self.inputs.env.contains_key(name).then_some(true),
        }
    }

    pub(super) fn file_write(&mut self, path: Val, kind: WriteKind, from: Option<Val>, content: Option<Val>, line: u64) -> Option<usize> {
        if !self.room(self.out.writes.len(), line) {
            return None;
        }
        let record = FileWrite {
            path: self.show(&path),
            kind,
            from: from.map(|v| self.show(&v)),
            content: content.map(|v| self.show(&v)),
            line,
            conditional: self.conditional(),
        };
        self.out.writes.push(record);
        Some(self.out.writes.len() - 1)
    }

    /// More text written to an open file.
    pub(super) fn file_content(&mut self, index: usize, piece: &Val) {
        if index >= self.out.writes.len() {
            return;
        }
        let piece = self.show(piece);
        let Some(write) = self.out.writes.get_mut(index) else { return };
        write.content = Some(match write.content.take() {
            None => piece,
            Some(PyValue::Str(a)) => match piece {
                PyValue::Str(b) if a.len() + b.len() <= value::MAX_STR => PyValue::Str(a + &b),
                other => PyValue::Unknown(format!("{a}... then {other}")),
            },
            Some(PyValue::Unknown(a)) => PyValue::Unknown(a),
            Some(other) => PyValue::Unknown(format!("{other}...")),
        });
    }

    pub(super) fn launch(&mut self, launch: super::PyLaunch) {
        if self.room(self.out.launches.len(), launch.line) {
            self.out.launches.push(launch);
        }
    }

    pub(super) fn run_record(&mut self, kind: RunKind, target: Val, line: u64) {
        if !self.room(self.out.run_modules.len(), line) {
            return;
        }
        let argv = self.argv.clone().map(|v| match value::items(&v) {
            Some(items) => items.iter().map(|i| self.show(i)).collect(),
            None => vec![self.show(&v)],
        });
        let target = self.show(&target);
        let record = PyRun { kind, target, argv, line, conditional: self.conditional() };
        self.out.run_modules.push(record);
    }

    pub(super) fn print(&mut self, text: Val, line: u64) {
        if self.room(self.out.prints.len(), line) {
            let conditional = self.conditional();
            let shown = self.show(&text);
            self.out.prints.push(PyPrint { text: shown, line, conditional });
            self.stdout.push((text, conditional));
        }
    }

    /// What `python -c CODE` prints, evaluated apart: its other effects
    /// are another process's. Unknown when any print is conditional.
    pub(super) fn python_output(&mut self, code: &str, line: u64) -> Val {
        if self.stopped || self.exec_depth >= MAX_EXEC_DEPTH {
            return unknown();
        }
        let mut sub = Evaluator::new(self.inputs, Rc::new(Source::new(code.to_string(), line, Some(line))));
        sub.exec_depth = self.exec_depth + 1;
        sub.depth = self.depth;
        sub.steps = self.steps;
        sub.run_module();
        self.steps = sub.steps;
        self.stopped |= sub.stopped;
        for (at, problem) in sub.out.problems {
            self.problem(at, format!("in the Python run here: {problem}"));
        }
        let mut out = Val::Str(String::new());
        for (text, conditional) in sub.stdout {
            let Some(next) = (!conditional).then(|| value::concat(&out, &text).and_then(|v| value::concat(&v, &Val::Str("\n".into())))).flatten() else {
                return unknown();
            };
            out = next;
        }
        out
    }

    pub(super) fn patch(&mut self, target: String, value: Val, line: u64) {
        if self.room(self.out.patches.len(), line) {
            let value = self.show(&value);
            let record = AttrWrite { target, value, line, conditional: self.conditional() };
            self.out.patches.push(record);
        }
    }

    /// `sys.argv` as the code sees it.
    pub(super) fn current_argv(&self) -> Val {
        match &self.argv {
            Some(v) => v.clone(),
            None if self.inputs.argv.is_empty() => unknown_as("sys.argv"),
            None => Val::List(self.inputs.argv.iter().map(|a| Val::Str(a.clone())).collect()),
        }
    }

    // ---- bounds ----

    fn step(&mut self, line: u64, cost: u64) -> bool {
        if self.stopped {
            return false;
        }
        self.steps += cost;
        if self.steps > MAX_STEPS {
            self.stopped = true;
            self.problem(line, format!("Python evaluation stopped here after {MAX_STEPS} steps; what follows was not evaluated"));
            return false;
        }
        true
    }

    pub(super) fn line_at(&self, node: &impl Ranged) -> u64 {
        self.src.line(u32::from(node.range().start()))
    }

    fn snippet(&self, node: &impl Ranged) -> String {
        let r = node.range();
        self.src.snippet(u32::from(r.start()), u32::from(r.end()))
    }

    // ---- names ----

    fn lookup(&self, name: &str) -> Option<Val> {
        if let Some(frame) = self.frames.last()
            && !frame.global_names.contains(name)
        {
            if let Some(v) = frame.locals.get(name) {
                return Some(v.clone());
            }
            if let Some(v) = self.parent_frame(frame).and_then(|p| p.locals.get(name)) {
                return Some(v.clone());
            }
            if let Some(v) = frame.closure.as_ref().and_then(|c| c.get(name)) {
                return Some(v.clone());
            }
        }
        self.globals.get(name).cloned()
    }

    fn load(&self, name: &str) -> Val {
        if let Some(v) = self.lookup(name) {
            return v;
        }
        if BUILTINS.contains(&name) {
            return Val::Object(format!("builtins.{name}"));
        }
        if value::STDLIB.contains(&name) {
            // Used without its import (a fragment): still the module.
            return Val::Object(name.to_string());
        }
        unknown_as(name)
    }

    fn set_var(&mut self, name: &str, v: Val) {
        match self.frames.last() {
            Some(frame) if !frame.global_names.contains(name) => {
                self.locals_mut().insert(name.into(), v);
            }
            _ => {
                self.globals_mut().insert(name.into(), v);
            }
        }
    }

    /// A scope's names to write: copied first when a snapshot shares them,
    /// the copy paid for in steps.
    fn copy_cost(&mut self, shared: bool, len: usize) {
        if shared {
            let line = self.line;
            self.step(line, len as u64 / 16);
        }
    }

    fn globals_mut(&mut self) -> &mut Scope {
        self.copy_cost(Rc::strong_count(&self.globals) > 1, self.globals.len());
        Rc::make_mut(&mut self.globals)
    }

    fn environ_mut(&mut self) -> &mut BTreeMap<String, Val> {
        self.copy_cost(Rc::strong_count(&self.environ) > 1, self.environ.len());
        Rc::make_mut(&mut self.environ)
    }

    /// The current frame's names (the globals at module level).
    fn locals_mut(&mut self) -> &mut Scope {
        let Some(frame) = self.frames.last() else { return self.globals_mut() };
        let (shared, len) = (Rc::strong_count(&frame.locals) > 1, frame.locals.len());
        self.copy_cost(shared, len);
        match self.frames.last_mut() {
            Some(frame) => Rc::make_mut(&mut frame.locals),
            None => Rc::make_mut(&mut self.globals),
        }
    }

    /// The running frame a function was defined in.
    fn parent_frame(&self, frame: &Frame) -> Option<&Frame> {
        let id = frame.parent?;
        self.frames.iter().rev().find(|f| f.id == id)
    }

    /// Store into the name where it already lives (a mutated list or dict).
    fn set_existing(&mut self, name: &str, v: Val) {
        let parent = self.frames.last().and_then(|f| if f.global_names.contains(name) || f.locals.contains_key(name) { None } else { f.parent });
        if let Some(id) = parent
            && let Some(p) = self.frames.iter_mut().rev().find(|f| f.id == id && f.locals.contains_key(name))
        {
            Rc::make_mut(&mut p.locals).insert(name.into(), v);
            return;
        }
        if let Some(frame) = self.frames.last()
            && !frame.global_names.contains(name)
            && (frame.locals.contains_key(name) || !self.globals.contains_key(name))
        {
            self.locals_mut().insert(name.into(), v);
            return;
        }
        self.globals_mut().insert(name.into(), v);
    }

    /// Remove a name from the scope that binds it (the current one, or the
    /// running frame the function was defined in), saying which.
    fn take_var(&mut self, name: &str) -> Option<(Val, Option<u64>)> {
        let Some(frame) = self.frames.last() else {
            return self.globals_mut().remove(name).map(|v| (v, None));
        };
        if frame.global_names.contains(name) || frame.locals.contains_key(name) {
            let here = match self.frames.last() {
                Some(frame) if !frame.global_names.contains(name) => self.locals_mut().remove(name),
                _ => self.globals_mut().remove(name),
            };
            return here.map(|v| (v, None));
        }
        let id = frame.parent?;
        let parent = self.frames.iter_mut().rev().find(|f| f.id == id)?;
        let v = Rc::make_mut(&mut parent.locals).remove(name)?;
        Some((v, Some(id)))
    }

    /// Put back a name [`Self::take_var`] took.
    fn put_var(&mut self, name: &str, v: Val, from: Option<u64>) {
        match from.and_then(|id| self.frames.iter_mut().rev().find(|f| f.id == id)) {
            Some(parent) => {
                Rc::make_mut(&mut parent.locals).insert(name.into(), v);
            }
            None => self.set_var(name, v),
        }
    }

    /// The current scope's binding of a name (where `set_var` writes).
    fn scope_get(&self, name: &str) -> Option<Val> {
        match self.frames.last() {
            Some(frame) if !frame.global_names.contains(name) => frame.locals.get(name).cloned(),
            _ => self.globals.get(name).cloned(),
        }
    }

    fn scope_restore(&mut self, name: &str, v: Option<Val>) {
        match v {
            Some(v) => self.set_var(name, v),
            None => match self.frames.last() {
                Some(frame) if !frame.global_names.contains(name) => {
                    self.locals_mut().remove(name);
                }
                _ => {
                    self.globals_mut().remove(name);
                }
            },
        }
    }

    // ---- branches ----

    fn snapshot(&mut self, line: u64) -> Option<Snapshot> {
        if !self.step(line, 1) {
            return None;
        }
        Some(Snapshot {
            locals: self.frames.last().map(|f| Rc::clone(&f.locals)),
            globals: Rc::clone(&self.globals),
            environ: Rc::clone(&self.environ),
            argv: self.argv.clone(),
        })
    }

    fn restore(&mut self, s: Snapshot) {
        if let (Some(frame), Some(locals)) = (self.frames.last_mut(), s.locals) {
            frame.locals = locals;
        }
        self.globals = s.globals;
        self.environ = s.environ;
        self.argv = s.argv;
    }

    /// The merged state of several arms: a name that differs is "one of".
    fn merge(&mut self, ends: Vec<Snapshot>, line: u64) -> Option<Snapshot> {
        /// Names shared by every arm are the arms' (nothing to merge);
        /// otherwise each name is one of its values.
        fn maps(maps: Vec<&Names>, cost: &mut u64) -> Names {
            let first = maps[0];
            let mut out = Rc::clone(first);
            // Only the names some arm bound differently change.
            let mut differ: Vec<&Rc<str>> = Vec::new();
            for m in maps.iter().skip(1).filter(|m| !Rc::ptr_eq(m, first)) {
                *cost += m.len() as u64 / 16;
                differ.extend(m.iter().filter(|(k, v)| first.get(*k) != Some(*v)).map(|(k, _)| k));
            }
            differ.sort();
            differ.dedup();
            for k in differ {
                let v = join(maps.iter().filter_map(|m| m.get(k).cloned()).collect());
                Rc::make_mut(&mut out).insert(Rc::clone(k), v);
            }
            out
        }
        let first = ends.first()?;
        let mut cost = 0;
        let locals = first.locals.as_ref().map(|_| maps(ends.iter().filter_map(|e| e.locals.as_ref()).collect(), &mut cost));
        let globals = maps(ends.iter().map(|e| &e.globals).collect(), &mut cost);
        let environ = if ends.iter().all(|e| Rc::ptr_eq(&e.environ, &first.environ)) {
            Rc::clone(&first.environ)
        } else {
            let mut names: Vec<&String> = ends.iter().flat_map(|e| e.environ.keys()).collect();
            names.sort();
            names.dedup();
            cost += names.len() as u64 / 16;
            let inputs = self.inputs;
            Rc::new(
                names
                    .into_iter()
                    .map(|n| {
                        let before = || inputs.env.get(n).map_or_else(|| unknown_as(format!("${n} as set before")), |s| Val::Str(s.clone()));
                        (n.clone(), join(ends.iter().map(|e| e.environ.get(n).cloned().unwrap_or_else(before)).collect()))
                    })
                    .collect(),
            )
        };
        self.step(line, cost);
        let argvs: Vec<Val> = ends.iter().filter_map(|e| e.argv.clone()).collect();
        let argv = if argvs.is_empty() { None } else { Some(join(argvs)) };
        Some(Snapshot { locals, globals, environ, argv })
    }

    /// Run blocks as alternatives (each conditional), then go on from their
    /// merged state. A path that leaves early makes what follows
    /// conditional: the rest of the iteration after a `continue`, the rest
    /// of the loop after a `break`, the rest of the function after a
    /// `return`. A path that raises or exits does not: code after a guard
    /// (`if not ok: sys.exit(1)`) runs whenever the program gets there; nor
    /// does an exception handler that leaves (`guard` false).
    fn fork(&mut self, arms: &[&[Stmt]], line: u64, guard: bool) -> Flow {
        let Some(base) = self.snapshot(line) else { return Flow::Stop };
        let mut ends = Vec::new();
        let mut returns = Vec::new();
        let (mut continued, mut broke, mut raised) = (false, false, false);
        for arm in arms {
            self.restore(base.clone());
            self.cond += 1;
            let flow = self.exec_block(arm);
            self.cond = self.cond.saturating_sub(1);
            match flow {
                Flow::Stop => return Flow::Stop,
                Flow::Normal | Flow::Break | Flow::Continue => {
                    let Some(s) = self.snapshot(line) else { return Flow::Stop };
                    ends.push(s);
                    continued |= matches!(flow, Flow::Continue);
                    broke |= matches!(flow, Flow::Break);
                }
                Flow::Return(v) => returns.push(v),
                Flow::Raise => {
                    self.raising = false;
                    raised = true;
                }
            }
        }
        if ends.is_empty() {
            self.restore(base);
            return if returns.is_empty() { Flow::Raise } else { Flow::Return(join(returns)) };
        }
        match self.merge(ends, line) {
            Some(merged) => self.restore(merged),
            None => self.restore(base),
        }
        if !guard {
            return Flow::Normal;
        }
        if continued {
            self.cond += 1;
            self.looping.iteration_extra += 1;
        }
        if broke {
            self.cond += 1;
            self.looping.loop_extra += 1;
        }
        self.looping.left |= broke || raised || !returns.is_empty();
        if !returns.is_empty()
            && let Some(frame) = self.frames.last_mut()
        {
            frame.pending.extend(returns);
            frame.extra_cond += 1;
            self.cond += 1;
        }
        Flow::Normal
    }

    fn enter_loop(&mut self) -> LoopState {
        std::mem::take(&mut self.looping)
    }

    fn end_iteration(&mut self) {
        self.cond = self.cond.saturating_sub(self.looping.iteration_extra);
        self.looping.iteration_extra = 0;
    }

    fn leave_loop(&mut self, outer: LoopState) {
        self.end_iteration();
        self.cond = self.cond.saturating_sub(self.looping.loop_extra);
        self.looping = outer;
    }

    // ---- statements ----

    pub(super) fn exec_block(&mut self, stmts: &[Stmt]) -> Flow {
        for stmt in stmts {
            match self.exec_stmt(stmt) {
                Flow::Normal => {}
                other => return other,
            }
        }
        Flow::Normal
    }

    fn exec_stmt(&mut self, stmt: &Stmt) -> Flow {
        let line = self.line_at(stmt);
        self.line = line;
        if !self.step(line, 1) {
            return Flow::Stop;
        }
        if self.depth >= MAX_DEPTH {
            self.bound_hit("depth", line, format!("Python nested deeper than {MAX_DEPTH} (statements, expressions and calls); the innermost not evaluated"));
            return Flow::Normal;
        }
        self.depth += 1;
        let flow = self.exec_stmt_inner(stmt, line);
        self.depth -= 1;
        // A call in the statement raised (`sys.exit()`, a function that raises).
        if self.raising && !matches!(flow, Flow::Stop) {
            self.raising = false;
            return Flow::Raise;
        }
        flow
    }

    fn exec_stmt_inner(&mut self, stmt: &Stmt, line: u64) -> Flow {
        match stmt {
            Stmt::FunctionDef(f) => self.define(f.name.as_str(), &f.args, &f.body, &f.decorator_list),
            Stmt::AsyncFunctionDef(f) => self.define(f.name.as_str(), &f.args, &f.body, &f.decorator_list),
            Stmt::ClassDef(c) => self.define_class(c),
            Stmt::Return(r) => Flow::Return(r.value.as_ref().map_or(Val::None, |v| self.eval(v))),
            Stmt::Delete(d) => {
                for target in &d.targets {
                    self.delete(target, line);
                }
                Flow::Normal
            }
            Stmt::Assign(a) => {
                let v = self.eval(&a.value);
                for target in &a.targets {
                    self.assign(target, v.clone(), line);
                }
                Flow::Normal
            }
            Stmt::AugAssign(a) => {
                let current = self.eval(&a.target);
                let operand = self.eval(&a.value);
                if matches!((&current, a.op), (Val::Object(n), Operator::BitOr) if n == "os.environ") {
                    let update = Val::Object("os.environ.update".into());
                    self.call(update, Args::positional(vec![operand]), line);
                    return Flow::Normal;
                }
                let v = self.binop(a.op, &current, &operand).described(&self.snippet(&*a.value));
                self.assign(&a.target, v, line);
                Flow::Normal
            }
            Stmt::AnnAssign(a) => {
                if let Some(value) = &a.value {
                    let v = self.eval(value);
                    self.assign(&a.target, v, line);
                }
                Flow::Normal
            }
            Stmt::For(f) => self.exec_for(&f.target, &f.iter, &f.body, &f.orelse, line),
            Stmt::AsyncFor(f) => self.exec_for(&f.target, &f.iter, &f.body, &f.orelse, line),
            Stmt::While(w) => self.exec_while(&w.test, &w.body, &w.orelse, line),
            Stmt::If(i) => {
                let test = self.eval(&i.test);
                if self.raising {
                    return Flow::Normal;
                }
                match test.truth() {
                    Some(true) => self.exec_block(&i.body),
                    Some(false) => self.exec_block(&i.orelse),
                    None => self.fork(&[&i.body, &i.orelse], line, true),
                }
            }
            Stmt::With(w) => self.exec_with(&w.items, &w.body),
            Stmt::AsyncWith(w) => self.exec_with(&w.items, &w.body),
            Stmt::Match(m) => {
                self.eval(&m.subject);
                let arms: Vec<&[Stmt]> = m.cases.iter().map(|c| c.body.as_slice()).chain(std::iter::once(&[][..])).collect();
                self.fork(&arms, line, true)
            }
            Stmt::Raise(r) => {
                if let Some(exc) = &r.exc {
                    self.eval(exc);
                }
                Flow::Raise
            }
            Stmt::Try(t) => self.exec_try(&t.body, &t.handlers, &t.orelse, &t.finalbody, line),
            Stmt::TryStar(t) => self.exec_try(&t.body, &t.handlers, &t.orelse, &t.finalbody, line),
            Stmt::Assert(a) => {
                self.eval(&a.test);
                Flow::Normal
            }
            Stmt::Import(i) => {
                for alias in &i.names {
                    let full = alias.name.as_str();
                    match &alias.asname {
                        Some(as_name) => self.set_var(as_name.as_str(), Val::Object(full.to_string())),
                        None => {
                            let top = full.split('.').next().unwrap_or(full);
                            self.set_var(top, Val::Object(top.to_string()));
                        }
                    }
                }
                Flow::Normal
            }
            Stmt::ImportFrom(f) => {
                let relative = f.level.is_some_and(|l| l.to_u32() > 0);
                for alias in &f.names {
                    let name = alias.name.as_str();
                    if name == "*" {
                        continue;
                    }
                    let bound = alias.asname.as_ref().map_or(name, |a| a.as_str());
                    let v = match (&f.module, relative) {
                        (Some(module), false) => Val::Object(format!("{module}.{name}")),
                        _ => unknown_as(format!("{name} (relative import)")),
                    };
                    self.set_var(bound, v);
                }
                Flow::Normal
            }
            Stmt::Global(g) => {
                if let Some(frame) = self.frames.last_mut() {
                    frame.global_names.extend(g.names.iter().map(|n| n.as_str().to_string()));
                }
                Flow::Normal
            }
            Stmt::Expr(e) => {
                self.eval(&e.value);
                Flow::Normal
            }
            Stmt::Break(_) => Flow::Break,
            Stmt::Continue(_) => Flow::Continue,
            Stmt::Nonlocal(_) | Stmt::Pass(_) | Stmt::TypeAlias(_) => Flow::Normal,
        }
    }

    fn define(&mut self, name: &str, args: &ast::Arguments, body: &[Stmt], decorators: &[Expr]) -> Flow {
        for d in decorators {
            self.eval(d);
        }
        let key = body.as_ptr() as usize;
        let (args, body) = self.defs.entry(key).or_insert_with(|| (Rc::new(args.clone()), Rc::new(body.to_vec()))).clone();
        let f = self.make_function(name, args, Body::Block(body));
        self.set_var(name, f);
        Flow::Normal
    }

    fn make_function(&mut self, name: &str, args: Rc<ast::Arguments>, body: Body) -> Val {
        let mut defaults = HashMap::new();
        for a in args.posonlyargs.iter().chain(&args.args).chain(&args.kwonlyargs) {
            if let Some(d) = &a.default {
                let v = self.eval(d);
                defaults.insert(a.def.arg.as_str().to_string(), v);
            }
        }
        let closure = match self.frames.last() {
            Some(frame) if !frame.class => match &frame.closure {
                None => Some(Rc::clone(&frame.locals)),
                Some(outer) => {
                    let mut seen = (**outer).clone();
                    seen.extend(frame.locals.iter().map(|(k, v)| (k.clone(), v.clone())));
                    Some(Rc::new(seen))
                }
            },
            _ => None,
        };
        let parent_frame = self.frames.last().filter(|f| !f.class).map(|f| f.id);
        let f = Shared::new(Function { name: name.to_string(), args, body, defaults, closure, parent_frame, source: Rc::clone(&self.src) });
        if self.funcs.len() < MAX_RECORDS {
            self.funcs.push(f.clone());
        }
        Val::Func(f)
    }

    fn define_class(&mut self, c: &ast::StmtClassDef) -> Flow {
        for e in c.bases.iter().chain(&c.decorator_list) {
            self.eval(e);
        }
        if self.frames.len() >= MAX_CALL_DEPTH {
            self.set_var(c.name.as_str(), unknown_as(format!("class {}", c.name.as_str())));
            return Flow::Normal;
        }
        self.next_frame += 1;
        self.frames.push(Frame::new(self.next_frame, None, HashMap::new(), None, true));
        let flow = self.exec_block(&c.body);
        let frame = self.frames.pop().map(|f| {
            self.cond = self.cond.saturating_sub(f.extra_cond);
            Rc::unwrap_or_clone(f.locals).into_iter().map(|(k, v)| (k.to_string(), v)).collect()
        });
        let class = Class { name: c.name.as_str().to_string(), attrs: std::cell::RefCell::new(frame.unwrap_or_default()) };
        self.set_var(c.name.as_str(), Val::Class(Shared::new(class)));
        match flow {
            Flow::Stop => Flow::Stop,
            _ => Flow::Normal,
        }
    }

    fn exec_for(&mut self, target: &Expr, iter: &Expr, body: &[Stmt], orelse: &[Stmt], line: u64) -> Flow {
        let it = self.eval(iter);
        if self.raising {
            return Flow::Normal;
        }
        let Some(items) = self.iterate(&it) else {
            let what = match &it {
                Val::Unknown(d) => d.clone(),
                _ => self.snippet(iter),
            };
            self.assign(target, unknown_as(format!("an item of {what}")), line);
            let outer = self.enter_loop();
            let flow = self.fork(&[body, &[]], line, true);
            self.leave_loop(outer);
            return match flow {
                Flow::Normal => self.exec_block(orelse),
                other => other,
            };
        };
        let outer = self.enter_loop();
        let mut flow = Flow::Normal;
        for (n, item) in items.into_iter().enumerate() {
            if n >= MAX_LOOP {
                self.bound_hit("loop", line, format!("a loop ran more than {MAX_LOOP} times; later iterations not evaluated"));
                break;
            }
            if !self.step(line, 1) {
                flow = Flow::Stop;
                break;
            }
            self.assign(target, item, line);
            let f = self.exec_block(body);
            self.end_iteration();
            match f {
                Flow::Normal | Flow::Continue => {}
                Flow::Break => {
                    flow = Flow::Break;
                    break;
                }
                other => {
                    flow = other;
                    break;
                }
            }
        }
        self.leave_loop(outer);
        match flow {
            Flow::Normal => self.exec_block(orelse),
            Flow::Break => Flow::Normal,
            other => other,
        }
    }

    fn exec_while(&mut self, test: &Expr, body: &[Stmt], orelse: &[Stmt], line: u64) -> Flow {
        let outer = self.enter_loop();
        let mut n = 0;
        let flow = loop {
            let t = self.eval(test);
            if self.raising {
                break Flow::Normal;
            }
            match t.truth() {
                Some(false) => break self.exec_block(orelse),
                None => break self.fork(&[body, &[]], line, true),
                Some(true) => {}
            }
            if n >= MAX_LOOP {
                self.bound_hit("loop", line, format!("a loop ran more than {MAX_LOOP} times; later iterations not evaluated"));
                break Flow::Normal;
            }
            n += 1;
            if !self.step(line, 1) {
                break Flow::Stop;
            }
            self.looping.left = false;
            let f = self.exec_block(body);
            self.end_iteration();
            match f {
                Flow::Normal | Flow::Continue => {}
                Flow::Break => break Flow::Normal,
                other => break other,
            }
            // A loop left on a condition not known here: once is what can be said.
            if self.looping.left {
                break Flow::Normal;
            }
        };
        self.leave_loop(outer);
        flow
    }

    fn exec_with(&mut self, items: &[ast::WithItem], body: &[Stmt]) -> Flow {
        for item in items {
            let v = self.eval(&item.context_expr);
            if self.raising {
                return Flow::Normal;
            }
            if let Some(var) = &item.optional_vars {
                let bound = match v {
                    Val::File(_) | Val::Instance(_) | Val::Unknown(_) => v,
                    _ => unknown_as(self.snippet(&item.context_expr)),
                };
                let line = self.line_at(&**var);
                self.assign(var, bound, line);
            }
        }
        self.exec_block(body)
    }

    fn exec_try(&mut self, body: &[Stmt], handlers: &[ast::ExceptHandler], orelse: &[Stmt], finalbody: &[Stmt], line: u64) -> Flow {
        let flow = self.exec_block(body);
        if matches!(flow, Flow::Stop) {
            return flow;
        }
        let raised = matches!(flow, Flow::Raise);
        let handler_bodies: Vec<&[Stmt]> = handlers
            .iter()
            .map(|h| {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                if let Some(name) = &h.name {
                    self.set_var(name.as_str(), unknown_as("the exception caught"));
                }
                h.body.as_slice()
            })
            .collect();
        let mut after = match (raised, handler_bodies.len()) {
            (_, 0) => flow,
            (true, 1) => self.exec_block(handler_bodies[0]),
            (true, _) => self.fork(&handler_bodies, line, false),
            (false, _) => {
                let mut arms = vec![&[][..]];
                arms.extend(handler_bodies);
                match self.fork(&arms, line, false) {
                    Flow::Normal => flow,
                    other => other,
                }
            }
        };
        if matches!(after, Flow::Normal) && !raised {
            after = self.exec_block(orelse);
        }
        if matches!(after, Flow::Stop) {
            return after;
        }
        match self.exec_block(finalbody) {
            Flow::Normal => after,
            other => other,
        }
    }

    fn delete(&mut self, target: &Expr, line: u64) {
        match target {
            Expr::Name(n) => self.scope_restore(n.id.as_str(), None),
            Expr::Subscript(s) => {
                let container = self.eval(&s.value);
                let key = self.eval(&s.slice);
                match container {
                    Val::Object(name) if name == "os.environ" => self.env_write(key, None, EnvWriteKind::Unset, line),
                    Val::Dict(mut items, base) => {
                        items.retain(|(k, _)| value::equal(k, &key) != Some(true));
                        self.write_back(&s.value, Val::Dict(items, base), line, 0);
                    }
                    _ => {}
                }
            }
            Expr::Tuple(t) => {
                for e in &t.elts {
                    self.delete(e, line);
                }
            }
            Expr::Attribute(a) => {
                if let Val::Object(name) = self.eval(&a.value) {
                    self.patch(format!("{name}.{}", a.attr.as_str()), unknown_as("deleted"), line);
                }
            }
            _ => {}
        }
    }

    // ---- assignment ----

    pub(super) fn assign(&mut self, target: &Expr, v: Val, line: u64) {
        match target {
            Expr::Name(n) => self.set_var(n.id.as_str(), v),
            Expr::Tuple(t) => self.unpack(&t.elts, v, line),
            Expr::List(l) => self.unpack(&l.elts, v, line),
            Expr::Starred(s) => self.assign(&s.value, v, line),
            Expr::Subscript(s) => {
                let container = self.eval(&s.value);
                let key = self.eval(&s.slice);
                // `d[k] = v` through a name changes the dict in place (see `eval_call`).
                if let (Val::List(_) | Val::Dict(..), Expr::Name(n)) = (&container, &*s.value) {
                    let name = n.id.as_str();
                    drop(container);
                    if let Some((owned, from)) = self.take_var(name) {
                        let grown = units(&key) + units(&v);
                        let changed = match owned {
                            Val::Dict(mut items, base) => {
                                items.set(key, v);
                                Val::Dict(items, base)
                            }
                            Val::List(mut items) => {
                                if let Some(i) = key.as_int().and_then(|i| index(i, items.len())) {
                                    items[i] = v;
                                }
                                Val::List(items)
                            }
                            other => other,
                        };
                        let changed = self.bounded_growth(changed, grown, line, name);
                        self.put_var(name, changed, from);
                        return;
                    }
                    let container = self.eval(&s.value);
                    self.set_item(Some(&s.value), container, key, v, line);
                    return;
                }
                self.set_item(Some(&s.value), container, key, v, line);
            }
            Expr::Attribute(a) => {
                let obj = self.eval(&a.value);
                self.set_attr(obj, a.attr.as_str(), v, line);
            }
            _ => {}
        }
    }

    fn unpack(&mut self, elts: &[Expr], v: Val, line: u64) {
        let items = match &v {
            Val::List(_) | Val::Str(_) | Val::Dict(_, Base::Empty) => value::items(&v),
            _ => None,
        };
        let star = elts.iter().position(|e| matches!(e, Expr::Starred(_)));
        match (items, star) {
            (Some(items), None) if items.len() == elts.len() => {
                for (e, item) in elts.iter().zip(items) {
                    self.assign(e, item, line);
                }
            }
            (Some(mut items), Some(i)) if items.len() + 1 >= elts.len() => {
                let after = items.split_off(items.len() + 1 + i - elts.len());
                let middle = items.split_off(i);
                for (e, item) in elts[..i].iter().zip(items) {
                    self.assign(e, item, line);
                }
                self.assign(&elts[i], Val::List(middle.into()), line);
                for (e, item) in elts[i + 1..].iter().zip(after) {
                    self.assign(e, item, line);
                }
            }
            _ => {
                for e in elts {
                    let what = unknown_as(self.snippet(e));
                    self.assign(e, what, line);
                }
            }
        }
    }

    /// `container[key] = v`; `place` is the container's expression, to store
    /// a changed list or dict back.
    pub(super) fn set_item(&mut self, place: Option<&Expr>, container: Val, key: Val, v: Val, line: u64) {
        match container {
            Val::Object(name) if name == "os.environ" => self.env_write(key, Some(v), EnvWriteKind::Set, line),
            Val::Object(name) => {
                let shown = value::repr(&key).unwrap_or_else(|| "?".into());
                self.patch(format!("{name}[{shown}]"), v, line);
            }
            Val::Dict(mut items, base) => {
                let grown = units(&key) + units(&v);
                items.set(key, v);
                if let Some(place) = place {
                    self.write_back(place, Val::Dict(items, base), line, grown);
                }
            }
            Val::List(mut items) => {
                if let Some(i) = key.as_int().and_then(|i| index(i, items.len())) {
                    let grown = units(&v);
                    items[i] = v;
                    if let Some(place) = place {
                        self.write_back(place, Val::List(items), line, grown);
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn set_attr(&mut self, obj: Val, attr: &str, v: Val, line: u64) {
        match obj {
            Val::Instance(i) => {
                i.0.attrs.borrow_mut().insert(attr.to_string(), v);
            }
            Val::Class(c) => {
                c.0.attrs.borrow_mut().insert(attr.to_string(), v);
            }
            Val::Object(name) if name == "sys" && attr == "argv" => self.argv = Some(v),
            Val::Object(name) => self.patch(format!("{name}.{attr}"), v, line),
            _ => {}
        }
    }

    /// A container grown in place by `grown` units is bounded like any
    /// value (`x.append(x)` doubles it): measured again when it grew by a
    /// big value. Growing by small ones is bounded by the item count.
    fn bounded_growth(&mut self, v: Val, grown: usize, line: u64, what: &str) -> Val {
        if grown < 64 {
            return v;
        }
        let mut work = 0;
        match value::measure(&v, value::MAX_UNITS, &mut work) {
            Some(_) => {
                self.step(line, work as u64 / 64);
                v
            }
            None => unknown_as(format!("{what} (grown too large to follow)")),
        }
    }

    /// Store a changed value back where it came from, when that place is a
    /// plain name, item or attribute (evaluating it again has no effect).
    pub(super) fn write_back(&mut self, place: &Expr, v: Val, line: u64, grown: usize) {
        if !pure(place) {
            return;
        }
        let v = if grown < 64 { v } else { self.bounded_growth(v, grown, line, &self.snippet(place)) };
        match place {
            Expr::Name(n) => self.set_existing(n.id.as_str(), v),
            Expr::Subscript(s) => {
                let container = self.eval(&s.value);
                let key = self.eval(&s.slice);
                self.set_item(Some(&s.value), container, key, v, line);
            }
            Expr::Attribute(a) => match self.eval(&a.value) {
                obj @ (Val::Instance(_) | Val::Class(_)) => self.set_attr(obj, a.attr.as_str(), v, line),
                Val::Object(name) if name == "sys" && a.attr.as_str() == "argv" => self.argv = Some(v),
                _ => {}
            },
            _ => {}
        }
    }

    // ---- calls ----

    /// Call a function of the source with its arguments bound.
    pub(super) fn call_function(&mut self, f: &Shared<Function>, args: Args, line: u64) -> Val {
        let func = &f.0;
        self.called.insert(body_key(&func.body));
        if self.frames.len() >= MAX_CALL_DEPTH {
            self.bound_hit("calls", line, format!("calls nested deeper than {MAX_CALL_DEPTH}; {} not followed there", func.name));
            return unknown();
        }
        let locals = bind(func, args);
        self.next_frame += 1;
        self.frames.push(Frame::new(self.next_frame, func.parent_frame, locals, func.closure.clone(), false));
        let outer = self.enter_loop();
        let saved = std::mem::replace(&mut self.src, Rc::clone(&func.source));
        let flow = match &func.body {
            Body::Block(body) => self.exec_block(body),
            Body::Lambda(expr) => Flow::Return(self.eval(expr)),
        };
        self.src = saved;
        self.leave_loop(outer);
        let Some(frame) = self.frames.pop() else { return unknown() };
        self.cond = self.cond.saturating_sub(frame.extra_cond);
        let result = match flow {
            Flow::Return(v) => v,
            Flow::Normal | Flow::Break | Flow::Continue => Val::None,
            Flow::Raise => {
                self.raising = true;
                return unknown_as(format!("{}() raised", func.name));
            }
            Flow::Stop => return unknown(),
        };
        let mut all = frame.pending;
        all.push(result);
        join(all)
    }

    /// Make an instance, running `__init__`.
    pub(super) fn instantiate(&mut self, class: Shared<Class>, args: Args, line: u64) -> Val {
        let instance = Val::Instance(Shared::new(Instance { class: class.clone(), attrs: std::cell::RefCell::new(HashMap::new()) }));
        let init = class.0.attrs.borrow().get("__init__").cloned();
        if let Some(Val::Func(f)) = init {
            let mut args = args;
            args.pos.insert(0, instance.clone());
            self.call_function(&f, args, line);
        }
        instance
    }

    /// Run source text given to `exec` / `eval`: recursively, its effects at the call's line.
    pub(super) fn exec_source(&mut self, code: &Val, line: u64, expression: bool) -> Val {
        let text = match code {
            Val::Str(s) => s.clone(),
            Val::Code(s) => s.to_string(),
            other => {
                let shown = value::short(other);
                self.problem(line, format!("exec/eval of source not known here ({shown}); not evaluated"));
                return unknown();
            }
        };
        if self.exec_depth >= MAX_EXEC_DEPTH {
            self.bound_hit("exec", line, format!("exec nested deeper than {MAX_EXEC_DEPTH}; the inner source not evaluated"));
            return unknown();
        }
        self.exec_depth += 1;
        let saved = std::mem::replace(&mut self.src, Rc::new(Source::new(text.clone(), line, Some(line))));
        let mode = if expression { Mode::Expression } else { Mode::Module };
        let result = match self.parse(&text, mode) {
            Some(module) => match &*module {
                ast::Mod::Expression(e) => self.eval(&e.body),
                ast::Mod::Module(m) => {
                    if let Flow::Raise = self.exec_block(&m.body) {
                        self.raising = true;
                    }
                    Val::None
                }
                _ => unknown(),
            },
            None => unknown(),
        };
        self.src = saved;
        self.exec_depth -= 1;
        result
    }

    // ---- expressions ----

    pub(super) fn eval(&mut self, e: &Expr) -> Val {
        if self.depth >= MAX_DEPTH {
            let line = self.line_at(e);
            self.bound_hit("depth", line, format!("Python nested deeper than {MAX_DEPTH} (statements, expressions and calls); the innermost not evaluated"));
            return unknown_as(self.snippet(e));
        }
        self.depth += 1;
        let v = self.eval_inner(e);
        self.depth -= 1;
        // Every value followed is bounded in size and nesting; a big one
        // costs steps to copy, so the step bound also bounds time.
        let mut work = 0;
        let units = match &v {
            Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::None | Val::Func(_) | Val::Class(_) | Val::Instance(_) | Val::File(_) => 1,
            _ => match value::measure(&v, value::MAX_UNITS, &mut work) {
                Some(units) => units,
                None => return unknown_as(format!("{} (too large or nested too deeply to follow)", self.snippet(e))),
            },
        };
        self.last_units = units;
        if work >= 64 {
            let line = self.line_at(e);
            if !self.step(line, work as u64 / 64) {
                return unknown_as(self.snippet(e));
            }
        }
        match &v {
            Val::Unknown(d) if d.is_empty() => unknown_as(self.snippet(e)),
            Val::OneOf(_) => v.described(&self.snippet(e)),
            _ => v,
        }
    }

    fn eval_inner(&mut self, e: &Expr) -> Val {
        match e {
            Expr::Constant(c) => constant(&c.value),
            Expr::Name(n) => self.load(n.id.as_str()),
            Expr::JoinedStr(j) => self.fstring(&j.values),
            Expr::FormattedValue(f) => self.formatted(f),
            Expr::BoolOp(b) => self.boolop(b.op, &b.values),
            Expr::NamedExpr(n) => {
                let v = self.eval(&n.value);
                let line = self.line_at(e);
                self.assign(&n.target, v.clone(), line);
                v
            }
            Expr::BinOp(b) => {
                let l = self.eval(&b.left);
                let r = self.eval(&b.right);
                self.binop(b.op, &l, &r)
            }
            Expr::UnaryOp(u) => {
                let v = self.eval(&u.operand);
                match (u.op, &v) {
                    (UnaryOp::Not, _) => v.truth().map_or_else(unknown, |t| Val::Bool(!t)),
                    (UnaryOp::USub, Val::Int(i)) => i.checked_neg().map_or_else(unknown, Val::Int),
                    (UnaryOp::USub, Val::Float(x)) => Val::Float(-x),
                    (UnaryOp::UAdd, Val::Int(_) | Val::Float(_)) => v,
                    (UnaryOp::Invert, Val::Int(i)) => Val::Int(!i),
                    _ => unknown(),
                }
            }
            Expr::Lambda(l) => {
                let key = &*l.body as *const Expr as usize;
                let (args, body) = self.lambdas.entry(key).or_insert_with(|| (Rc::new((*l.args).clone()), Rc::new((*l.body).clone()))).clone();
                self.make_function("<lambda>", args, Body::Lambda(body))
            }
            Expr::IfExp(i) => {
                let test = self.eval(&i.test);
                match test.truth() {
                    Some(true) => self.eval(&i.body),
                    Some(false) => self.eval(&i.orelse),
                    None => {
                        self.cond += 1;
                        let a = self.eval(&i.body);
                        let b = self.eval(&i.orelse);
                        self.cond = self.cond.saturating_sub(1);
                        join(vec![a, b])
                    }
                }
            }
            Expr::Dict(d) => self.dict_display(d),
            Expr::Set(s) => self.sequence(&s.elts),
            Expr::List(l) => self.sequence(&l.elts),
            Expr::Tuple(t) => self.sequence(&t.elts),
            Expr::ListComp(c) => self.comprehension(&c.generators, Emit::Item(&c.elt)),
            Expr::SetComp(c) => self.comprehension(&c.generators, Emit::Item(&c.elt)),
            Expr::GeneratorExp(c) => self.comprehension(&c.generators, Emit::Item(&c.elt)),
            Expr::DictComp(c) => self.comprehension(&c.generators, Emit::Pair(&c.key, &c.value)),
            Expr::Await(a) => self.eval(&a.value),
            Expr::Yield(y) => {
                if let Some(v) = &y.value {
                    self.eval(v);
                }
                unknown()
            }
            Expr::YieldFrom(y) => {
                self.eval(&y.value);
                unknown()
            }
            Expr::Compare(c) => self.compare(&c.left, &c.ops, &c.comparators),
            Expr::Call(c) => self.eval_call(c),
            Expr::Attribute(a) => {
                let obj = self.eval(&a.value);
                self.attribute(obj, a.attr.as_str())
            }
            Expr::Subscript(s) => {
                let v = self.eval(&s.value);
                if let Expr::Slice(sl) = &*s.slice {
                    let lower = sl.lower.as_ref().map(|x| self.eval(x));
                    let upper = sl.upper.as_ref().map(|x| self.eval(x));
                    let step = sl.step.as_ref().map(|x| self.eval(x));
                    return slice(&v, lower, upper, step);
                }
                let key = self.eval(&s.slice);
                self.subscript(v, key)
            }
            Expr::Starred(s) => self.eval(&s.value),
            Expr::Slice(_) => unknown(),
        }
    }

    fn sequence(&mut self, elts: &[Expr]) -> Val {
        let mut out = Vec::new();
        let mut units = 0;
        for e in elts {
            match e {
                Expr::Starred(s) => {
                    let v = self.eval(&s.value);
                    match self.iterate(&v) {
                        Some(items) => out.extend(items),
                        None => out.push(unknown_as(format!("*{}", self.snippet(&*s.value)))),
                    }
                }
                e => out.push(self.eval(e)),
            }
            units += self.last_units;
            if out.len() > value::MAX_ITEMS || units > value::MAX_UNITS {
                return unknown_as("a list too large to follow");
            }
        }
        Val::List(out.into())
    }

    fn dict_display(&mut self, d: &ast::ExprDict) -> Val {
        let mut items = Vec::new();
        let mut units = 0;
        let mut base = Base::Empty;
        for (k, v) in d.keys.iter().zip(&d.values) {
            let value = self.eval(v);
            match k {
                Some(k) => {
                    let key = self.eval(k);
                    dict_set(&mut items, key, value);
                }
                None => match value {
                    Val::Dict(more, b) => {
                        if b != Base::Empty {
                            items.clear();
                            base = b;
                        }
                        for (k, v) in more {
                            dict_set(&mut items, k, v);
                        }
                    }
                    Val::Object(name) if name == "os.environ" => {
                        items.clear();
                        base = Base::Environ;
                    }
                    other => {
                        items.clear();
                        base = Base::Unknown(match other {
                            Val::Unknown(d) => d,
                            _ => self.snippet(v),
                        });
                    }
                },
            }
            units += self.last_units;
            if items.len() > value::MAX_ITEMS || units > value::MAX_UNITS {
                return unknown_as("a dict too large to follow");
            }
        }
        Val::Dict(items.into(), base)
    }

    fn fstring(&mut self, parts: &[Expr]) -> Val {
        let mut acc = Val::Str(String::new());
        for part in parts {
            let piece = match part {
                Expr::Constant(c) => constant(&c.value),
                Expr::FormattedValue(f) => self.formatted(f),
                other => self.eval(other),
            };
            match value::concat(&acc, &piece) {
                Some(v) => acc = v,
                None => return unknown(),
            }
        }
        acc
    }

    fn formatted(&mut self, f: &ast::ExprFormattedValue) -> Val {
        let v = self.eval(&f.value);
        let spec = match &f.format_spec {
            Some(spec) => match self.eval(spec) {
                Val::Str(s) => s,
                _ => return unknown(),
            },
            None => String::new(),
        };
        let conversion = match f.conversion {
            ast::ConversionFlag::None => "",
            ast::ConversionFlag::Str => "s",
            ast::ConversionFlag::Repr => "r",
            ast::ConversionFlag::Ascii => "a",
        };
        if let (Val::Installed(_), "", "") = (&v, conversion, spec.as_str()) {
            return v;
        }
        let alts = match &v {
            Val::OneOf(alts) => alts.clone(),
            other => vec![other.clone()],
        };
        let shown: Option<Vec<Val>> = alts.iter().map(|a| value::format_value(a, conversion, &spec).map(Val::Str)).collect();
        shown.map_or_else(unknown, join)
    }

    fn boolop(&mut self, op: BoolOp, values: &[Expr]) -> Val {
        let mut seen = Vec::new();
        let mut opened = 0;
        let mut result = Val::None;
        for (i, e) in values.iter().enumerate() {
            let v = self.eval(e);
            let last = i + 1 == values.len();
            match (op, v.truth()) {
                (_, _) if last => {
                    result = v;
                    break;
                }
                (BoolOp::And, Some(false)) | (BoolOp::Or, Some(true)) => {
                    result = v;
                    break;
                }
                (BoolOp::And, Some(true)) | (BoolOp::Or, Some(false)) => {}
                (_, None) => {
                    // The rest runs only on some paths.
                    seen.push(v);
                    self.cond += 1;
                    opened += 1;
                }
            }
        }
        self.cond = self.cond.saturating_sub(opened);
        if seen.is_empty() {
            return result;
        }
        seen.push(result);
        join(seen)
    }

    fn compare(&mut self, left: &Expr, ops: &[CmpOp], comparators: &[Expr]) -> Val {
        let mut l = self.eval(left);
        let mut all = Some(true);
        for (op, right) in ops.iter().zip(comparators) {
            let r = self.eval(right);
            let one = self.compare_one(*op, &l, &r);
            all = match (all, one) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            l = r;
        }
        all.map_or_else(unknown, Val::Bool)
    }

    fn compare_one(&mut self, op: CmpOp, l: &Val, r: &Val) -> Option<bool> {
        if let Val::OneOf(alts) = l {
            return same(alts.iter().map(|a| self.compare_one(op, a, r)).collect());
        }
        if let Val::OneOf(alts) = r {
            return same(alts.iter().map(|a| self.compare_one(op, l, a)).collect());
        }
        match op {
            CmpOp::Eq => value::equal(l, r),
            CmpOp::NotEq => value::equal(l, r).map(|b| !b),
            CmpOp::Is => match (l, r) {
                (Val::None | Val::Bool(_), _) | (_, Val::None | Val::Bool(_)) => value::equal(l, r),
                _ => None,
            },
            CmpOp::IsNot => self.compare_one(CmpOp::Is, l, r).map(|b| !b),
            CmpOp::In => self.contains(r, l),
            CmpOp::NotIn => self.contains(r, l).map(|b| !b),
            CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => {
                let ordering = match (l, r) {
                    (Val::Int(a), Val::Int(b)) => a.partial_cmp(b),
                    (Val::Float(a), Val::Float(b)) => a.partial_cmp(b),
                    (Val::Int(a), Val::Float(b)) => (*a as f64).partial_cmp(b),
                    (Val::Float(a), Val::Int(b)) => a.partial_cmp(&(*b as f64)),
                    (Val::Str(a), Val::Str(b)) => a.partial_cmp(b),
                    _ => None,
                }?;
                Some(match op {
                    CmpOp::Lt => ordering.is_lt(),
                    CmpOp::LtE => ordering.is_le(),
                    CmpOp::Gt => ordering.is_gt(),
                    _ => ordering.is_ge(),
                })
            }
        }
    }

    fn contains(&mut self, container: &Val, needle: &Val) -> Option<bool> {
        match container {
            Val::Str(s) => needle.as_str().map(|n| s.contains(n)),
            Val::Installed(_) => needle.as_str().and_then(|n| value::text(container).map(|s| s.contains(n))),
            Val::List(items) => items_contains(items, needle),
            Val::Dict(items, base) => {
                let keys: Vec<Val> = items.iter().map(|(k, _)| k.clone()).collect();
                match (items_contains(&keys, needle), base) {
                    (Some(true), _) => Some(true),
                    (Some(false), Base::Empty) => Some(false),
                    (Some(false), Base::Environ) => needle.as_str().and_then(|n| self.env_has(n)),
                    _ => None,
                }
            }
            Val::Object(name) if name == "os.environ" => needle.as_str().and_then(|n| self.env_has(n)),
            _ => None,
        }
    }

    fn eval_call(&mut self, c: &ast::ExprCall) -> Val {
        let line = self.line_at(c);
        if let Expr::Attribute(a) = &*c.func {
            let recv = self.eval(&a.value);
            let args = self.eval_args(&c.args, &c.keywords);
            let method = a.attr.as_str();
            let changes = super::value::MUTATING.contains(&method);
            // A list or dict changed through its name is taken out of the
            // scope while it changes, so it is not copied (`xs.append(x)` in
            // a loop stays linear).
            let mut taken = None;
            let recv = match (&recv, &*a.value) {
                (Val::List(_) | Val::Dict(..), Expr::Name(n)) if changes => {
                    drop(recv);
                    match self.take_var(n.id.as_str()) {
                        Some((v, from)) => {
                            taken = Some((n.id.as_str(), from));
                            v
                        }
                        None => self.eval(&a.value),
                    }
                }
                _ => recv,
            };
            let grown = if changes { args.pos.iter().chain(args.kw.iter().map(|(_, v)| v)).map(units).sum() } else { 0 };
            let (result, after) = self.call_attr(recv, method, args, line);
            match (taken, after) {
                (Some((name, from)), after) => {
                    let after = after.unwrap_or_else(|| unknown_as(name));
                    let after = self.bounded_growth(after, grown, line, name);
                    self.put_var(name, after, from);
                }
                (None, Some(after)) if changes => self.write_back(&a.value, after, line, grown),
                _ => {}
            }
            return result;
        }
        let func = self.eval(&c.func);
        let args = self.eval_args(&c.args, &c.keywords);
        self.call(func, args, line)
    }

    fn eval_args(&mut self, args: &[Expr], keywords: &[ast::Keyword]) -> Args {
        let mut out = Args::default();
        for a in args {
            match a {
                Expr::Starred(s) => {
                    let v = self.eval(&s.value);
                    match self.iterate(&v) {
                        Some(items) => out.pos.extend(items),
                        None => out.open = true,
                    }
                }
                a => {
                    let v = self.eval(a);
                    out.pos.push(v);
                }
            }
        }
        for k in keywords {
            let v = self.eval(&k.value);
            match (&k.arg, v) {
                (Some(name), v) => out.kw.push((name.as_str().to_string(), v)),
                (None, Val::Dict(items, Base::Empty)) => {
                    for (key, v) in items {
                        match key {
                            Val::Str(name) => out.kw.push((name, v)),
                            _ => out.open = true,
                        }
                    }
                }
                (None, _) => out.open = true,
            }
        }
        out
    }

    /// `recv.attr(args)`: a list or dict method changes the receiver,
    /// returned to be stored back.
    fn call_attr(&mut self, recv: Val, attr: &str, args: Args, line: u64) -> (Val, Option<Val>) {
        if matches!(recv, Val::List(_) | Val::Dict(..)) {
            return self.call_method(recv, attr, args, line);
        }
        let f = self.attribute(recv, attr);
        (self.call(f, args, line), None)
    }

    /// Call any value. Library calls with "one of" arguments are made once
    /// per combination, each conditional.
    pub(super) fn call(&mut self, func: Val, args: Args, line: u64) -> Val {
        if let Val::OneOf(alts) = func {
            self.cond += 1;
            let results = alts.into_iter().map(|f| self.call(f, args.clone(), line)).collect();
            self.cond = self.cond.saturating_sub(1);
            return join(results);
        }
        if matches!(func, Val::Object(_) | Val::Method(..))
            && let Some(combos) = expand(&args)
        {
            self.cond += 1;
            let results = combos.into_iter().map(|a| self.call(func.clone(), a, line)).collect();
            self.cond = self.cond.saturating_sub(1);
            return join(results);
        }
        match func {
            Val::Func(f) => self.call_function(&f, args, line),
            Val::Class(c) => self.instantiate(c, args, line),
            Val::Method(recv, name) => self.call_method(*recv, &name, args, line).0,
            Val::Object(name) => self.call_object(&name, args, line),
            _ => unknown(),
        }
    }

    pub(super) fn iterate(&mut self, v: &Val) -> Option<Vec<Val>> {
        value::items(v)
    }

    fn comprehension(&mut self, gens: &[ast::Comprehension], emit: Emit<'_>) -> Val {
        let mut names = Vec::new();
        for g in gens {
            target_names(&g.target, &mut names);
        }
        let saved: Vec<(String, Option<Val>)> = names.iter().map(|n| (n.clone(), self.scope_get(n))).collect();
        let mut out = Vec::new();
        let known = self.comp_level(gens, 0, &emit, &mut out, &mut 0);
        for (n, v) in saved {
            self.scope_restore(&n, v);
        }
        if !known {
            return unknown();
        }
        match emit {
            Emit::Item(_) => Val::List(out.into_iter().map(|(v, _)| v).collect()),
            Emit::Pair(..) => {
                let mut items = Vec::new();
                for (k, v) in out {
                    dict_set(&mut items, k, v.unwrap_or(Val::None));
                }
                Val::Dict(items.into(), Base::Empty)
            }
        }
    }

    fn comp_level(&mut self, gens: &[ast::Comprehension], i: usize, emit: &Emit<'_>, out: &mut Vec<(Val, Option<Val>)>, units: &mut usize) -> bool {
        let Some(g) = gens.get(i) else {
            match emit {
                Emit::Item(e) => {
                    let v = self.eval(e);
                    *units += self.last_units;
                    out.push((v, None));
                }
                Emit::Pair(k, v) => {
                    let key = self.eval(k);
                    *units += self.last_units;
                    let value = self.eval(v);
                    *units += self.last_units;
                    out.push((key, Some(value)));
                }
            }
            return out.len() <= value::MAX_ITEMS && *units <= value::MAX_UNITS;
        };
        let line = self.line_at(&g.iter);
        let it = self.eval(&g.iter);
        let Some(items) = self.iterate(&it) else {
            // Not known what is iterated: the body once, for its effects.
            self.assign(&g.target, unknown_as(format!("an item of {}", self.snippet(&g.iter))), line);
            self.cond += 1;
            for cond in &g.ifs {
                self.eval(cond);
            }
            self.comp_level(gens, i + 1, emit, &mut Vec::new(), &mut 0);
            self.cond = self.cond.saturating_sub(1);
            return false;
        };
        for item in items {
            if !self.step(line, 1) {
                return false;
            }
            self.assign(&g.target, item, line);
            let mut keep = true;
            for cond in &g.ifs {
                match self.eval(cond).truth() {
                    Some(true) => {}
                    Some(false) => {
                        keep = false;
                        break;
                    }
                    None => return false,
                }
            }
            if keep && !self.comp_level(gens, i + 1, emit, out, units) {
                return false;
            }
        }
        true
    }

    pub(super) fn binop(&mut self, op: Operator, l: &Val, r: &Val) -> Val {
        if matches!(l, Val::OneOf(_)) || matches!(r, Val::OneOf(_)) {
            let ls = alternatives(l);
            let rs = alternatives(r);
            if ls.len() * rs.len() > value::MAX_ALTERNATIVES {
                return unknown();
            }
            let mut out = Vec::new();
            for a in &ls {
                for b in &rs {
                    out.push(self.binop(op, a, b));
                }
            }
            return join(out);
        }
        binop(op, l, r).unwrap_or_else(unknown)
    }
}

enum Emit<'a> {
    Item(&'a Expr),
    Pair(&'a Expr, &'a Expr),
}

/// Names Python resolves without an import.
const BUILTINS: &[&str] = &[
    "open",
    "bytes",
    "chr",
    "ord",
    "exec",
    "eval",
    "compile",
    "print",
    "str",
    "repr",
    "int",
    "float",
    "bool",
    "len",
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
    "sorted",
    "reversed",
    "range",
    "enumerate",
    "zip",
    "map",
    "filter",
    "getattr",
    "setattr",
    "hasattr",
    "isinstance",
    "issubclass",
    "type",
    "__import__",
    "min",
    "max",
    "sum",
    "any",
    "all",
    "abs",
    "format",
    "input",
    "iter",
    "next",
    "exit",
    "quit",
    "vars",
    "globals",
    "locals",
    "callable",
    "id",
    "hash",
    "super",
    "object",
    "Exception",
    "BaseException",
    "ImportError",
    "ModuleNotFoundError",
    "FileNotFoundError",
    "OSError",
    "KeyError",
    "ValueError",
    "RuntimeError",
    "SystemExit",
];

fn body_key(body: &Body) -> usize {
    match body {
        Body::Block(b) => Rc::as_ptr(b) as usize,
        Body::Lambda(e) => Rc::as_ptr(e) as usize,
    }
}

/// Parameters bound to arguments; a missing one is its default, or unknown.
fn bind(f: &Function, args: Args) -> Scope {
    let mut locals = HashMap::new();
    let params: Vec<&ast::ArgWithDefault> = f.args.posonlyargs.iter().chain(&f.args.args).collect();
    let mut extra = Vec::new();
    for (i, v) in args.pos.into_iter().enumerate() {
        match params.get(i) {
            Some(p) => {
                locals.insert(p.def.arg.as_str().into(), v);
            }
            None => extra.push(v),
        }
    }
    let mut extra_kw = Vec::new();
    for (k, v) in args.kw {
        let named = params.iter().chain(f.args.kwonlyargs.iter().collect::<Vec<_>>().iter()).any(|p| p.def.arg.as_str() == k);
        if named {
            locals.insert(k.into(), v);
        } else {
            extra_kw.push((Val::Str(k), v));
        }
    }
    if let Some(v) = &f.args.vararg {
        let rest = if args.open { unknown_as(format!("*{}", v.arg.as_str())) } else { Val::List(extra.into()) };
        locals.insert(v.arg.as_str().into(), rest);
    }
    if let Some(k) = &f.args.kwarg {
        let base = if args.open { Base::Unknown(format!("**{}", k.arg.as_str())) } else { Base::Empty };
        locals.insert(k.arg.as_str().into(), Val::Dict(extra_kw.into(), base));
    }
    for p in params.iter().copied().chain(&f.args.kwonlyargs) {
        let name = p.def.arg.as_str();
        if !locals.contains_key(name) {
            let v = match (args.open, f.defaults.get(name)) {
                (false, Some(d)) => d.clone(),
                (true, Some(d)) => join(vec![unknown_as(format!("parameter {name}")), d.clone()]),
                (_, None) => unknown_as(format!("parameter {name}")),
            };
            locals.insert(name.into(), v);
        }
    }
    locals
}

fn constant(c: &Constant) -> Val {
    match c {
        Constant::None => Val::None,
        Constant::Bool(b) => Val::Bool(*b),
        Constant::Str(s) => Val::Str(s.clone()),
        Constant::Bytes(b) => Val::Str(String::from_utf8_lossy(b).into_owned()),
        Constant::Int(i) => i64::try_from(i).map_or_else(|_| unknown_as("a large integer"), Val::Int),
        Constant::Float(x) => Val::Float(*x),
        Constant::Tuple(items) => Val::List(items.iter().map(constant).collect()),
        Constant::Complex { .. } | Constant::Ellipsis => unknown(),
    }
}

/// Set a dict item, replacing an equal key.
pub(super) fn dict_set(items: &mut Vec<(Val, Val)>, key: Val, v: Val) {
    match items.iter_mut().find(|(k, _)| value::equal(k, &key) == Some(true)) {
        Some(slot) => slot.1 = v,
        None => items.push((key, v)),
    }
}

/// A Python index (negative from the end) into a sequence of `len`.
pub(super) fn index(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { i + len } else { i };
    (0..len).contains(&i).then(|| usize::try_from(i).ok()).flatten()
}

fn items_contains(items: &[Val], needle: &Val) -> Option<bool> {
    let mut unknown = false;
    for item in items {
        match value::equal(item, needle) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    (!unknown).then_some(false)
}

fn same(answers: Vec<Option<bool>>) -> Option<bool> {
    let first = (*answers.first()?)?;
    answers.iter().all(|a| *a == Some(first)).then_some(first)
}

fn alternatives(v: &Val) -> Vec<Val> {
    match v {
        Val::OneOf(alts) => alts.clone(),
        v => vec![v.clone()],
    }
}

/// The argument lists of a call with "one of" arguments, one per
/// combination; None when there is none, or too many (then each is unknown).
fn expand(args: &Args) -> Option<Vec<Args>> {
    let count = |v: &Val| if let Val::OneOf(alts) = v { alts.len() } else { 1 };
    let combos: usize = args.pos.iter().chain(args.kw.iter().map(|(_, v)| v)).map(count).try_fold(1usize, |acc, n| acc.checked_mul(n))?;
    if combos == 1 {
        return None;
    }
    let mut out = vec![Args { pos: Vec::new(), kw: Vec::new(), open: args.open }];
    if combos > value::MAX_ALTERNATIVES {
        let flat = |v: &Val| match v {
            Val::OneOf(alts) => unknown_as(format!("one of {} values", alts.len())),
            v => v.clone(),
        };
        out[0].pos = args.pos.iter().map(flat).collect();
        out[0].kw = args.kw.iter().map(|(k, v)| (k.clone(), flat(v))).collect();
        return Some(out);
    }
    for v in &args.pos {
        out = out
            .into_iter()
            .flat_map(|a| {
                alternatives(v).into_iter().map(move |alt| {
                    let mut a = a.clone();
                    a.pos.push(alt);
                    a
                })
            })
            .collect();
    }
    for (k, v) in &args.kw {
        out = out
            .into_iter()
            .flat_map(|a| {
                alternatives(v).into_iter().map(move |alt| {
                    let mut a = a.clone();
                    a.kw.push((k.clone(), alt));
                    a
                })
            })
            .collect();
    }
    Some(out)
}

/// The size of a value in units, at most [`value::MAX_UNITS`].
fn units(v: &Val) -> usize {
    value::units_within(v, value::MAX_UNITS).unwrap_or(value::MAX_UNITS)
}

/// A place that can be evaluated again without effects.
fn pure(e: &Expr) -> bool {
    match e {
        Expr::Name(_) | Expr::Constant(_) => true,
        Expr::Attribute(a) => pure(&a.value),
        Expr::Subscript(s) => pure(&s.value) && pure(&s.slice),
        _ => false,
    }
}

fn target_names(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) => out.push(n.id.as_str().to_string()),
        Expr::Tuple(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        Expr::List(l) => l.elts.iter().for_each(|e| target_names(e, out)),
        Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}

fn slice(v: &Val, lower: Option<Val>, upper: Option<Val>, step: Option<Val>) -> Val {
    let bound = |b: Option<Val>| match b {
        None | Some(Val::None) => Some(None),
        Some(v) => v.as_int().map(Some),
    };
    let (Some(lo), Some(hi), Some(st)) = (bound(lower), bound(upper), bound(step)) else { return unknown() };
    let step = st.unwrap_or(1);
    if step == 0 {
        return unknown();
    }
    // Python's slice.indices.
    let pick = |len: usize| -> Vec<usize> {
        let n = i64::try_from(len).unwrap_or(i64::MAX);
        let clamp = |i: i64, low: i64, high: i64| if i < 0 { (i + n).max(low) } else { i.min(high) };
        let mut out = Vec::new();
        if step > 0 {
            let (mut i, end) = (lo.map_or(0, |i| clamp(i, 0, n)), hi.map_or(n, |i| clamp(i, 0, n)));
            while i < end {
                out.push(usize::try_from(i).unwrap_or(0));
                let Some(next) = i.checked_add(step) else { break };
                i = next;
            }
        } else {
            let (mut i, end) = (lo.map_or(n - 1, |i| clamp(i, -1, n - 1)), hi.map_or(-1, |i| clamp(i, -1, n - 1)));
            while i > end {
                out.push(usize::try_from(i).unwrap_or(0));
                let Some(next) = i.checked_add(step) else { break };
                i = next;
            }
        }
        out
    };
    match v {
        Val::List(items) => Val::List(pick(items.len()).into_iter().map(|i| items[i].clone()).collect()),
        Val::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            Val::Str(pick(chars.len()).into_iter().map(|i| chars[i]).collect())
        }
        _ => unknown(),
    }
}

/// Arithmetic and string operators on known values.
fn binop(op: Operator, l: &Val, r: &Val) -> Option<Val> {
    use Operator::*;
    Some(match (op, l, r) {
        (Add, Val::Int(a), Val::Int(b)) => Val::Int(a.checked_add(*b)?),
        (Sub, Val::Int(a), Val::Int(b)) => Val::Int(a.checked_sub(*b)?),
        (Mult, Val::Int(a), Val::Int(b)) => Val::Int(a.checked_mul(*b)?),
        (FloorDiv, Val::Int(a), Val::Int(b)) if *b != 0 => Val::Int(a.checked_div_euclid(*b)?),
        (Mod, Val::Int(a), Val::Int(b)) if *b != 0 => Val::Int(a.checked_rem_euclid(*b)?),
        (Pow, Val::Int(a), Val::Int(b)) => Val::Int(a.checked_pow(u32::try_from(*b).ok()?)?),
        (Div, Val::Int(a), Val::Int(b)) if *b != 0 => Val::Float(*a as f64 / *b as f64),
        (BitOr, Val::Int(a), Val::Int(b)) => Val::Int(a | b),
        (BitAnd, Val::Int(a), Val::Int(b)) => Val::Int(a & b),
        (BitXor, Val::Int(a), Val::Int(b)) => Val::Int(a ^ b),
        (LShift, Val::Int(a), Val::Int(b)) if (0..63).contains(b) => Val::Int(a.checked_shl(u32::try_from(*b).ok()?)?),
        (RShift, Val::Int(a), Val::Int(b)) if (0..63).contains(b) => Val::Int(a >> b),
        (Add | Sub | Mult | Div, Val::Float(_) | Val::Int(_), Val::Float(_) | Val::Int(_)) => {
            let (a, b) = (float(l)?, float(r)?);
            Val::Float(match op {
                Add => a + b,
                Sub => a - b,
                Mult => a * b,
                _ if b != 0.0 => a / b,
                _ => return None,
            })
        }
        (Add, Val::List(a), Val::List(b)) if a.len() + b.len() <= value::MAX_ITEMS => Val::List(a.iter().chain(b).cloned().collect()),
        (Add, _, _) => value::concat(l, r)?,
        (Mult, Val::Str(s), Val::Int(n)) | (Mult, Val::Int(n), Val::Str(s)) => {
            let n = usize::try_from(*n).unwrap_or(0);
            if s.len().saturating_mul(n) > value::MAX_STR {
                return None;
            }
            Val::Str(s.repeat(n))
        }
        (Mult, Val::List(items), Val::Int(n)) | (Mult, Val::Int(n), Val::List(items)) => {
            let n = usize::try_from(*n).unwrap_or(0);
            let units = value::units_within(if matches!(l, Val::List(_)) { l } else { r }, value::MAX_UNITS)?;
            if items.len().saturating_mul(n) > value::MAX_ITEMS || units.saturating_mul(n) > value::MAX_UNITS {
                return None;
            }
            Val::List(items.iter().cloned().cycle().take(items.len() * n).collect())
        }
        (Mod, Val::Str(fmt), args) => Val::Str(value::percent_format(fmt, args)?),
        // pathlib: `Path(p) / "x"`.
        (Div, Val::Str(_) | Val::Installed(_), Val::Str(_) | Val::Installed(_)) => value::path_join(l, r)?,
        // `os.environ | {...}` and `d1 | d2`.
        (BitOr, Val::Object(name), Val::Dict(items, Base::Empty)) if name == "os.environ" => Val::Dict(items.clone(), Base::Environ),
        (BitOr, Val::Dict(a, base), Val::Dict(b, Base::Empty)) => {
            let mut items = a.clone();
            for (k, v) in b {
                dict_set(&mut items, k.clone(), v.clone());
            }
            Val::Dict(items, base.clone())
        }
        _ => return None,
    })
}

fn float(v: &Val) -> Option<f64> {
    match v {
        Val::Float(x) => Some(*x),
        Val::Int(i) => Some(*i as f64),
        _ => None,
    }
}
