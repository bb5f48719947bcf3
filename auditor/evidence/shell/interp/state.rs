//! What one path through a script knows at a point: variables with their
//! attributes and bash's dynamic scopes, functions, aliases, options, the
//! directory, the files the script wrote, and how the last command ended.
//! A [`World`] is one such path; where the script's behaviour depends on
//! what only the run knows, the interpreter keeps one world per arm.

use super::value::{Place, Str, Why};
use imbl::OrdMap;
use std::collections::BTreeMap;
use std::rc::Rc;

/// State shared between paths until one of them changes it (copy on
/// write): a fork, a subshell or a command substitution copies a path in
/// constant time, and paths compare equal at once where they still share.
#[derive(Debug, Default)]
pub struct Shared<T>(Rc<T>);

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Rc::new(value))
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Rc::clone(&self.0))
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> std::ops::DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Rc::make_mut(&mut self.0)
    }
}

/// The attributes `declare` sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Attrs {
    pub exported: bool,
    pub readonly: bool,
    pub integer: bool,
    pub nameref: bool,
    pub lower: bool,
    pub upper: bool,
}

/// A variable's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Scalar(Str),
    Indexed(BTreeMap<i64, Str>),
    Assoc(BTreeMap<String, Str>),
    /// Paths disagree on it, one of them at least an array: neither its
    /// elements nor how many there are is known.
    Undetermined(Str),
}

/// What each path joined into one held, for an array they disagreed on:
/// a command that names it runs once per path again
/// ([`World::split_alternatives`]), every array of the same join taking
/// that path's value and the path its conditions back.
#[derive(Debug, PartialEq, Eq)]
pub struct Alternatives {
    /// Which join made it: arrays of one join split together.
    pub join: u32,
    /// The value the join gave: while the variable still holds it, nothing
    /// assigned it since.
    pub joined: Option<Value>,
    /// Path k's value (`None`: unset there).
    pub options: Vec<Option<Value>>,
    /// Path k's conditions.
    pub marks: Rc<Vec<Vec<Mark>>>,
}

impl Alternatives {
    /// Path k's value of each array of `group`.
    pub fn of_path(group: &[(String, Rc<Alternatives>)], k: usize) -> Vec<Option<Value>> {
        group.iter().map(|(_, a)| a.options.get(k).cloned().flatten()).collect()
    }
}

impl Value {
    /// The value `$NAME` gives: a scalar, or element 0 of an array.
    pub fn scalar(&self) -> Option<&Str> {
        match self {
            Value::Scalar(s) => Some(s),
            Value::Indexed(map) => map.get(&0),
            Value::Assoc(map) => map.get("0"),
            Value::Undetermined(s) => Some(s),
        }
    }

    /// Every element, in index order (a scalar is one element).
    pub fn elements(&self) -> Vec<Str> {
        match self {
            Value::Scalar(s) => vec![s.clone()],
            Value::Indexed(map) => map.values().cloned().collect(),
            Value::Assoc(map) => map.values().cloned().collect(),
            Value::Undetermined(s) => vec![s.clone()],
        }
    }
}

/// A variable: `value` is `None` when declared but never assigned
/// (`declare -x NAME`, `local NAME`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    pub value: Option<Value>,
    pub attrs: Attrs,
    /// Where it was last assigned.
    pub at: Place,
}

/// A function's definition.
#[derive(Debug)]
pub struct Func {
    pub name: String,
    pub body: brush_parser::ast::FunctionBody,
    /// Where its text sits: lines of the body are mapped through it.
    pub src: Src,
    pub at: Place,
    /// How large its body is (bytes of text): calls of a large function from
    /// several paths are joined first ([`super::Interp`]'s `run_pipelines`).
    pub weight: usize,
}

impl Eq for Func {}

impl PartialEq for Func {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.at == other.at && self.src == other.src
    }
}

/// How the lines of a parsed text map to lines of a file: a sourced file
/// starts at its line 1; an `eval` string or a heredoc body at the line
/// that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Src {
    pub file: u32,
    /// The file line of the text's line 1.
    pub first_line: u32,
    /// For code assembled from text written in several places (an `eval`
    /// of a variable, a file the script wrote): the place of each line.
    pub map: Option<Rc<Vec<Place>>>,
}

impl Src {
    pub fn whole(file: u32) -> Src {
        Src { file, first_line: 1, map: None }
    }

    pub fn place(&self, line: usize) -> Place {
        if let Some(map) = &self.map {
            let i = line.saturating_sub(1).min(map.len().saturating_sub(1));
            return map.get(i).copied().unwrap_or_default();
        }
        Place { file: self.file, line: self.first_line.saturating_add(line.saturating_sub(1) as u32) }
    }
}

/// A function call's scope: its `local` variables and positional parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// `None` is a local declared and then unset.
    pub locals: OrdMap<String, Option<Var>>,
    pub positional: Vec<Str>,
}

/// How the last command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Known(i32),
    /// Known only when it runs: what decided it.
    Unknown(String),
}

impl Status {
    pub fn ok() -> Status {
        Status::Known(0)
    }

    pub fn from_bool(b: bool) -> Status {
        Status::Known(if b { 0 } else { 1 })
    }
}

/// Where control goes after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Normal,
    Break(u32),
    Continue(u32),
    Return,
    /// The shell (or subshell) exits: nothing after runs on this path.
    Exit,
}

/// Options of `set` and `shopt` that change what runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Opts {
    /// `set -a`: every assignment exports.
    pub allexport: bool,
    /// `shopt -s expand_aliases`.
    pub expand_aliases: bool,
    /// `shopt -s lastpipe`: the last command of a pipeline runs in this shell.
    pub lastpipe: bool,
    pub pipefail: bool,
    /// `set -e`: the script stops at a command that fails outside a condition.
    pub errexit: bool,
}

/// A condition this path assumed, because only the run knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub at: Place,
    /// The condition as written (cut), shared by the paths it splits.
    pub text: std::sync::Arc<str>,
    /// The arm taken: the condition held.
    pub held: bool,
}

/// A file as the script left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileState {
    /// Written by the script: its content.
    Written(Str),
    /// Removed by the script.
    Removed,
}

/// One path through the script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    pub globals: OrdMap<String, Var>,
    /// `frames[0]` is the script's own: its positional parameters.
    pub frames: Vec<Frame>,
    pub funcs: Shared<BTreeMap<String, Rc<Func>>>,
    pub aliases: Shared<BTreeMap<String, Str>>,
    pub opts: Opts,
    pub cwd: Str,
    pub files: OrdMap<String, FileState>,
    pub status: Status,
    pub flow: Flow,
    /// What the current command substitution has captured so far.
    pub out: Option<Str>,
    /// Input not yet read by `read` (a heredoc, a here-string, a file).
    pub stdin: Option<Str>,
    pub traps: Shared<BTreeMap<String, Str>>,
    /// The environment it started with holds more than the inputs give.
    pub open: bool,
    /// The conditions assumed so far, outermost first.
    pub marks: Vec<Mark>,
    /// Texts an input variable is known not to hold on this path (an arm
    /// of `[ "$X" = text ]` taken): a later test of the same is decided.
    pub excluded: OrdMap<String, Vec<String>>,
    /// What each outcome of the last test tells of an input variable,
    /// for the fork that follows it: (held, failed).
    pub assumed: Option<Box<(Fact, Fact)>>,
    /// Arrays joined paths disagreed on, by name, with each path's value
    /// (stale once the variable is assigned again).
    pub alternatives: Vec<(String, Rc<Alternatives>)>,
}

/// What taking one arm of a test tells of an input variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// It holds this text.
    Is(String, String),
    /// It does not hold this text.
    IsNot(String, String),
}

/// What a name refers to, after namerefs.
pub enum Lookup<'w> {
    Set(&'w Var),
    Unset,
    /// A variable of the starting environment the inputs do not give.
    Input,
}

/// Most namerefs followed in a chain (bash stops at a loop).
const MAX_NAMEREFS: usize = 16;

impl World {
    pub fn new(cwd: Str, open: bool) -> World {
        World {
            globals: OrdMap::new(),
            frames: vec![Frame { locals: OrdMap::new(), positional: Vec::new() }],
            funcs: Shared::default(),
            aliases: Shared::default(),
            opts: Opts::default(),
            cwd,
            files: OrdMap::new(),
            status: Status::ok(),
            flow: Flow::Normal,
            out: None,
            stdin: None,
            traps: Shared::default(),
            open,
            marks: Vec::new(),
            excluded: OrdMap::new(),
            assumed: None,
            alternatives: Vec::new(),
        }
    }

    /// The arrays of [`World::alternatives`] that `text`, a command, names
    /// and that still hold what the join gave them: those of the first join
    /// it names (arrays of one join split together). `None` when it names none.
    pub fn named_alternatives(&self, text: &str) -> Option<Vec<(String, Rc<Alternatives>)>> {
        let current = |name: &str, alts: &Alternatives| self.get_raw(name).and_then(|v| v.value.as_ref()) == alts.joined.as_ref();
        let named: Vec<&(String, Rc<Alternatives>)> =
            self.alternatives.iter().filter(|(name, alts)| crate::evidence::shell::syntax::names_word(text, name) && current(name, alts)).collect();
        let join = named.first()?.1.join;
        Some(named.into_iter().filter(|(_, a)| a.join == join).cloned().collect())
    }

    /// This path with the arrays of `group` holding `values` (one each), no
    /// longer alternatives.
    pub fn with_values(&self, group: &[(String, Rc<Alternatives>)], values: Vec<Option<Value>>) -> World {
        let mut w = self.clone();
        w.alternatives.retain(|(n, _)| !group.iter().any(|(g, _)| g == n));
        for ((name, _), value) in group.iter().zip(values) {
            w.set_value(name, value);
        }
        w
    }

    /// This path split back into the paths a join made one, for a command
    /// (`text`) that names a variable they disagreed on as arrays: each
    /// with its own values of that join's variables, and its conditions.
    /// `None` when the command names none.
    pub fn split_alternatives(&self, text: &str) -> Option<Vec<World>> {
        let group = self.named_alternatives(text)?;
        // Paths that held the same values make one: the conditions they all assumed kept.
        let mut combos: Vec<(Vec<Option<Value>>, Vec<Mark>)> = Vec::new();
        for k in 0..group[0].1.options.len() {
            let values = Alternatives::of_path(&group, k);
            let marks = group[0].1.marks.get(k).cloned().unwrap_or_default();
            match combos.iter_mut().find(|(v, _)| *v == values) {
                Some((_, common)) => common.retain(|m| marks.contains(m)),
                None => combos.push((values, marks)),
            }
        }
        let mut out = Vec::with_capacity(combos.len());
        for (values, marks) in combos {
            let mut w = self.with_values(&group, values);
            for mark in marks {
                if !w.marks.contains(&mark) {
                    w.marks.push(mark);
                }
            }
            out.push(w);
        }
        Some(out)
    }

    /// Set the value of `name` where it lives, its attributes kept.
    pub fn set_value(&mut self, name: &str, value: Option<Value>) {
        if let Some(i) = self.frames.iter().rposition(|f| f.locals.contains_key(name)) {
            if let Some(Some(var)) = self.frames[i].locals.get_mut(name) {
                var.value = value;
            }
            return;
        }
        if let Some(var) = self.globals.get_mut(name) {
            var.value = value;
        }
    }

    /// The last test's outcome negated (`!`): what each arm tells swaps.
    pub fn negate_assumed(&mut self) {
        if let Some(facts) = self.assumed.as_mut() {
            let (held, failed) = &mut **facts;
            std::mem::swap(held, failed);
        }
    }

    /// Take one arm of the last test: what it tells of an input variable
    /// holds on this path from here on (the variable set as the run's
    /// environment had it, or the text excluded).
    pub fn learn(&mut self, held: bool, at: Place) {
        let Some(facts) = self.assumed.take() else { return };
        let (is, is_not) = *facts;
        match if held { is } else { is_not } {
            Fact::Is(name, text) => {
                if matches!(self.lookup(&name), Lookup::Input) {
                    let attrs = Attrs { exported: true, ..Attrs::default() };
                    self.globals.insert(name, Var { value: Some(Value::Scalar(Str::lit(text, at))), attrs, at });
                }
            }
            Fact::IsNot(name, text) => {
                let texts = self.excluded.entry(name).or_default();
                if !texts.contains(&text) {
                    texts.push(text);
                }
            }
        }
    }

    /// Whether two worlds are the same state (the conditions that led there aside).
    pub fn same_state(&self, other: &World) -> bool {
        self.globals == other.globals
            && self.frames == other.frames
            && self.funcs == other.funcs
            && self.aliases == other.aliases
            && self.opts == other.opts
            && self.cwd == other.cwd
            && self.files == other.files
            && self.status == other.status
            && self.flow == other.flow
            && self.out == other.out
            && self.stdin == other.stdin
            && self.traps == other.traps
            && self.excluded == other.excluded
    }

    /// The name a nameref chain ends at.
    pub fn resolve_name(&self, name: &str) -> String {
        let mut name = name.to_string();
        for _ in 0..MAX_NAMEREFS {
            match self.get_raw(&name) {
                Some(var) if var.attrs.nameref => match var.value.as_ref().and_then(Value::scalar).and_then(Str::known) {
                    Some(target) if !target.is_empty() && target != name => name = target,
                    _ => break,
                },
                _ => break,
            }
        }
        name
    }

    /// The variable `name` names, without following namerefs: the innermost
    /// scope that has it.
    pub fn get_raw(&self, name: &str) -> Option<&Var> {
        for frame in self.frames.iter().rev() {
            if let Some(local) = frame.locals.get(name) {
                return local.as_ref();
            }
        }
        self.globals.get(name)
    }

    /// The variable a name refers to.
    pub fn lookup(&self, name: &str) -> Lookup<'_> {
        let name = self.resolve_name(name);
        for frame in self.frames.iter().rev() {
            if let Some(local) = frame.locals.get(&name) {
                return match local {
                    Some(var) => Lookup::Set(var),
                    None => Lookup::Unset,
                };
            }
        }
        match self.globals.get(&name) {
            Some(var) => Lookup::Set(var),
            None if self.open && is_input_name(&name) => Lookup::Input,
            None => Lookup::Unset,
        }
    }

    /// The scalar value of `name`: `Ok(None)` when unset, `Err` with an
    /// undetermined value when it comes from the starting environment.
    pub fn scalar(&self, name: &str, at: Place, text: &str) -> Result<Option<Str>, Str> {
        match self.lookup(name) {
            Lookup::Set(var) => Ok(var.value.as_ref().and_then(|v| v.scalar().cloned())),
            Lookup::Unset => Ok(None),
            Lookup::Input => Err(Str::unknown(Why::Input(name.to_string()), at, text)),
        }
    }

    /// Assign `value` to `name` (namerefs followed) keeping its attributes;
    /// a new variable is exported when `set -a` is on. Returns the resolved
    /// name and whether it is exported now, or `None` when it is readonly.
    pub fn assign(&mut self, name: &str, value: Value, at: Place) -> Option<(String, bool)> {
        let name = self.resolve_name(name);
        let allexport = self.opts.allexport;
        let apply = |var: &mut Var| -> Option<bool> {
            if var.attrs.readonly {
                return None;
            }
            var.value = Some(cased(value.clone(), var.attrs));
            var.at = at;
            if allexport {
                var.attrs.exported = true;
            }
            Some(var.attrs.exported)
        };
        if let Some(i) = self.frames.iter().rposition(|f| f.locals.contains_key(&name)) {
            let slot = self.frames[i].locals.get_mut(&name).expect("present");
            let var = slot.get_or_insert_with(|| Var { value: None, attrs: Attrs::default(), at });
            return apply(var).map(|e| (name, e));
        }
        let var = self.globals.entry(name.clone()).or_insert_with(|| Var { value: None, attrs: Attrs::default(), at });
        apply(var).map(|e| (name, e))
    }

    /// Change the attributes of `name` where it lives (creating it unset
    /// in the global scope, or in the current function's with `local`).
    pub fn set_attrs(&mut self, name: &str, local: bool, at: Place, f: impl FnOnce(&mut Attrs)) {
        let name = if local { name.to_string() } else { self.resolve_name(name) };
        let frames = self.frames.len();
        if local && frames > 1 {
            let slot = self.frames[frames - 1].locals.entry(name).or_insert(None);
            let var = slot.get_or_insert_with(|| Var { value: None, attrs: Attrs::default(), at });
            f(&mut var.attrs);
            return;
        }
        if let Some(i) = self.frames.iter().rposition(|fr| fr.locals.contains_key(&name)) {
            let slot = self.frames[i].locals.get_mut(&name).expect("present");
            let var = slot.get_or_insert_with(|| Var { value: None, attrs: Attrs::default(), at });
            f(&mut var.attrs);
            return;
        }
        let var = self.globals.entry(name).or_insert_with(|| Var { value: None, attrs: Attrs::default(), at });
        f(&mut var.attrs);
    }

    /// Declare `name` local to the current function (bash: outside a
    /// function `local` is an error; here it is the global).
    pub fn make_local(&mut self, name: &str, at: Place) {
        let frames = self.frames.len();
        if frames > 1 {
            let inherited = self.get_raw(name).map(|v| v.attrs);
            let frame = &mut self.frames[frames - 1];
            frame.locals.entry(name.to_string()).or_insert_with(|| {
                // A local starts unset, keeping only the nameref-free attributes bash copies (none by default).
                let _ = inherited;
                Some(Var { value: None, attrs: Attrs::default(), at })
            });
        }
    }

    /// `unset NAME`: the innermost scope's variable goes.
    pub fn unset(&mut self, name: &str) -> bool {
        let name = self.resolve_name(name);
        if let Some(i) = self.frames.iter().rposition(|f| f.locals.contains_key(&name)) {
            if self.frames[i].locals.get(&name).and_then(|v| v.as_ref()).is_some_and(|v| v.attrs.readonly) {
                return false;
            }
            self.frames[i].locals.insert(name, None);
            return true;
        }
        if self.globals.get(&name).is_some_and(|v| v.attrs.readonly) {
            return false;
        }
        self.globals.remove(&name);
        if self.open && is_input_name(&name) {
            // Unset now, whatever the environment held: remember it as unset.
            self.globals.insert(name, Var { value: None, attrs: Attrs::default(), at: Place::default() });
        }
        true
    }

    pub fn positional(&self) -> &[Str] {
        self.frames.last().map_or(&[], |f| f.positional.as_slice())
    }

    pub fn positional_mut(&mut self) -> &mut Vec<Str> {
        &mut self.frames.last_mut().expect("the script frame").positional
    }

    /// Every variable visible, innermost scopes first: (name, var).
    pub fn visible(&self) -> BTreeMap<String, &Var> {
        let mut out: BTreeMap<String, &Var> = BTreeMap::new();
        let mut hidden: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        for frame in self.frames.iter().rev() {
            for (name, var) in frame.locals.iter() {
                if hidden.insert(name)
                    && let Some(var) = var
                {
                    out.insert(name.clone(), var);
                }
            }
        }
        for (name, var) in self.globals.iter() {
            if !hidden.contains(name.as_str()) {
                out.entry(name.clone()).or_insert(var);
            }
        }
        out
    }

    /// The environment a program started now receives from the shell:
    /// every exported variable that has a value.
    pub fn exported(&self) -> BTreeMap<String, Str> {
        let mut out = BTreeMap::new();
        let mut hidden: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let scalar = |v: &Var| v.value.as_ref().and_then(|val| val.scalar().cloned());
        for frame in self.frames.iter().rev() {
            for (name, var) in frame.locals.iter() {
                if hidden.insert(name)
                    && let Some(var) = var.as_ref().filter(|v| v.attrs.exported)
                    && let Some(s) = scalar(var)
                {
                    out.insert(name.clone(), s);
                }
            }
        }
        for (name, var) in self.globals.iter() {
            if var.attrs.exported
                && !hidden.contains(name.as_str())
                && let Some(s) = scalar(var)
            {
                out.insert(name.clone(), s);
            }
        }
        out
    }

    /// Whether the path is still running statements.
    pub fn running(&self) -> bool {
        self.flow == Flow::Normal
    }

    /// Append to what the current command substitution captures.
    pub fn print(&mut self, text: &Str) {
        if let Some(out) = self.out.as_mut() {
            out.append(text);
        }
    }
}

/// A value stored under `attrs`: `declare -l/-u` change its case.
fn cased(value: Value, attrs: Attrs) -> Value {
    let f = |s: Str| {
        if attrs.lower {
            s.map_known(str::to_lowercase)
        } else if attrs.upper {
            s.map_known(str::to_uppercase)
        } else {
            s
        }
    };
    match value {
        Value::Scalar(s) => Value::Scalar(f(s)),
        Value::Indexed(m) => Value::Indexed(m.into_iter().map(|(k, v)| (k, f(v))).collect()),
        Value::Assoc(m) => Value::Assoc(m.into_iter().map(|(k, v)| (k, f(v))).collect()),
        Value::Undetermined(s) => Value::Undetermined(s),
    }
}

/// A name the starting environment can hold (a shell variable name).
pub fn is_input_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32) -> Place {
        Place { file: 0, line }
    }

    #[test]
    fn dynamic_scopes_and_namerefs() {
        let mut w = World::new(Str::lit("/", at(0)), false);
        w.assign("X", Value::Scalar(Str::lit("g", at(1))), at(1));
        w.frames.push(Frame { locals: OrdMap::new(), positional: vec![] });
        w.make_local("X", at(2));
        w.assign("X", Value::Scalar(Str::lit("l", at(3))), at(3));
        assert_eq!(w.scalar("X", at(4), "$X").unwrap().unwrap().known().as_deref(), Some("l"));
        w.frames.pop();
        assert_eq!(w.scalar("X", at(4), "$X").unwrap().unwrap().known().as_deref(), Some("g"));
        w.assign("REF", Value::Scalar(Str::lit("TARGET", at(5))), at(5));
        w.set_attrs("REF", false, at(5), |a| a.nameref = true);
        w.assign("REF", Value::Scalar(Str::lit("1", at(6))), at(6));
        assert_eq!(w.scalar("TARGET", at(7), "$TARGET").unwrap().unwrap().known().as_deref(), Some("1"));
    }

    #[test]
    fn open_worlds_read_inputs_and_closed_ones_read_unset() {
        let open = World::new(Str::new(), true);
        assert!(matches!(open.lookup("MODEL"), Lookup::Input));
        let closed = World::new(Str::new(), false);
        assert!(matches!(closed.lookup("MODEL"), Lookup::Unset));
        let mut open = open;
        open.unset("MODEL");
        assert!(matches!(open.lookup("MODEL"), Lookup::Set(v) if v.value.is_none()));
    }

    #[test]
    fn allexport_and_readonly() {
        let mut w = World::new(Str::new(), false);
        w.opts.allexport = true;
        assert_eq!(w.assign("A", Value::Scalar(Str::lit("1", at(1))), at(1)), Some(("A".into(), true)));
        w.set_attrs("A", false, at(2), |a| a.readonly = true);
        assert_eq!(w.assign("A", Value::Scalar(Str::lit("2", at(3))), at(3)), None);
        assert_eq!(w.exported().get("A").and_then(Str::known).as_deref(), Some("1"));
    }
}
