//! The evaluator's values: what [`super::PyValue`] shows plus the objects
//! a script handles on the way (imported names, module specs, functions,
//! classes, open files), and the string and path arithmetic on them.

use super::PyValue;
use rustpython_parser::ast;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// A scope's names and their values.
pub(super) type Scope = std::collections::HashMap<std::rc::Rc<str>, Val>;

/// List and dict methods that change their receiver.
pub(super) const MUTATING: &[&str] = &["append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "__setitem__", "sort", "reverse"];

/// Most alternatives a "one of" value holds before it becomes unknown.
pub(super) const MAX_ALTERNATIVES: usize = 8;
/// Longest string built (`"a" * 10**9` is unknown, not allocated).
pub(super) const MAX_STR: usize = 1 << 20;
/// Most items in a list or dict built.
pub(super) const MAX_ITEMS: usize = 10_000;
/// Largest value followed, in [`units_within`] units.
pub(super) const MAX_UNITS: usize = 1 << 16;
/// Deepest nesting of lists and dicts in a value.
pub(super) const MAX_NEST: usize = 32;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    None,
    List(Seq<Val>),
    Dict(Seq<(Val, Val)>, Base),
    /// A path under site-packages (see [`PyValue::Installed`]).
    Installed(String),
    OneOf(Vec<Val>),
    /// Not known; an empty text is filled with the source text of the
    /// expression that produced it.
    Unknown(String),
    /// An imported module or library object, by dotted name: `os.environ`,
    /// `subprocess.run`, `vllm`, `builtins.open`.
    Object(String),
    /// `importlib.util.find_spec(NAME)` (and its loader).
    Spec(String),
    /// `compile(SRC, ...)`: the source.
    Code(Rc<str>),
    Func(Shared<Function>),
    /// A method of a value, not yet called: `"a".replace`, `path.write_text`.
    Method(Box<Val>, String),
    Class(Shared<Class>),
    Instance(Shared<Instance>),
    /// A file opened by `open`: the index of its write record when opened
    /// for writing.
    File(Option<usize>),
}

/// The items of a list or dict, shared until changed: reading a name
/// holding a big list, or taking a branch's snapshot, copies a pointer.
/// The size of the items is remembered once measured (see
/// [`measure`]), so checking a value read again costs nothing.
pub(super) struct Seq<T>(Rc<Items<T>>);

struct Items<T> {
    items: Vec<T>,
    /// Units and height, once measured; forgotten when the items change.
    measured: Cell<Option<(usize, usize)>>,
}

impl<T: Clone> Clone for Items<T> {
    fn clone(&self) -> Self {
        Items { items: self.items.clone(), measured: Cell::new(None) }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Seq<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.items.fmt(f)
    }
}

impl<T: PartialEq> PartialEq for Seq<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || self.0.items == other.0.items
    }
}

impl<T> Clone for Seq<T> {
    fn clone(&self) -> Self {
        Seq(Rc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for Seq<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0.items
    }
}

/// Changing the items copies them first when they are shared.
impl<T: Clone> std::ops::DerefMut for Seq<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        let inner = Rc::make_mut(&mut self.0);
        inner.measured.set(None);
        &mut inner.items
    }
}

impl<T> From<Vec<T>> for Seq<T> {
    fn from(items: Vec<T>) -> Self {
        Seq(Rc::new(Items { items, measured: Cell::new(None) }))
    }
}

impl<T> FromIterator<T> for Seq<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Seq::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: Clone> IntoIterator for Seq<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Seq<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.items.iter()
    }
}

impl<T: Clone> Seq<T> {
    pub(super) fn into_vec(self) -> Vec<T> {
        match Rc::try_unwrap(self.0) {
            Ok(inner) => inner.items,
            Err(shared) => shared.items.clone(),
        }
    }
}

impl Seq<Val> {
    /// Append, keeping the remembered size (a list built item by item is
    /// not walked again at every read).
    pub(super) fn push(&mut self, v: Val) {
        let after = self.measured().and_then(|(units, height)| {
            let (u, h) = measure_item(&v)?;
            Some((units + u, height.max(h + 1)))
        });
        let inner = Rc::make_mut(&mut self.0);
        inner.items.push(v);
        inner.measured.set(after);
    }
}

impl Seq<(Val, Val)> {
    /// Set a dict item (replacing an equal key), keeping the remembered
    /// size as [`Seq::push`] does (a replaced item's height stays counted).
    pub(super) fn set(&mut self, key: Val, v: Val) {
        let at = self.iter().position(|(k, _)| equal(k, &key) == Some(true));
        let before = self.measured();
        let old = at.and_then(|i| measure_item(&self[i].1)).map_or(0, |(u, _)| u);
        let after = before.and_then(|(units, height)| {
            let (ku, kh) = if at.is_some() { (0, 0) } else { measure_item(&key)? };
            let (vu, vh) = measure_item(&v)?;
            Some(((units + ku + vu).saturating_sub(old), height.max(kh + 1).max(vh + 1)))
        });
        let inner = Rc::make_mut(&mut self.0);
        match at {
            Some(i) => inner.items[i].1 = v,
            None => inner.items.push((key, v)),
        }
        inner.measured.set(after);
    }
}

/// The units and height of one item, when within the bounds.
fn measure_item(v: &Val) -> Option<(usize, usize)> {
    let mut work = 0;
    let units = measure(v, MAX_UNITS, &mut work)?;
    // The height is the item's own remembered one, or walked (bounded) again.
    Some((units, height(v)))
}

/// How deep a value nests (bounded by [`MAX_NEST`] + 1).
fn height(v: &Val) -> usize {
    fn walk(v: &Val, depth: usize) -> usize {
        if depth > MAX_NEST {
            return 0;
        }
        match v {
            Val::List(seq) => seq.measured().map_or_else(|| seq.iter().map(|i| walk(i, depth + 1) + 1).max().unwrap_or(0), |(_, h)| h),
            Val::Dict(seq, _) => {
                seq.measured().map_or_else(|| seq.iter().map(|(k, x)| walk(k, depth + 1).max(walk(x, depth + 1)) + 1).max().unwrap_or(0), |(_, h)| h)
            }
            Val::OneOf(items) => items.iter().map(|i| walk(i, depth + 1) + 1).max().unwrap_or(0),
            Val::Method(recv, _) => walk(recv, depth + 1) + 1,
            _ => 0,
        }
    }
    walk(v, 0)
}

impl<T> Seq<T> {
    fn measured(&self) -> Option<(usize, usize)> {
        self.0.measured.get()
    }

    fn remember(&self, units: usize, height: usize) {
        self.0.measured.set(Some((units, height)));
    }
}

/// What a dict is built on: nothing, a copy of `os.environ`, or something unknown.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Base {
    Empty,
    Environ,
    Unknown(String),
}

/// A shared object compared by identity.
#[derive(Debug)]
pub(super) struct Shared<T>(pub Rc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Rc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> Shared<T> {
    pub(super) fn new(t: T) -> Self {
        Shared(Rc::new(t))
    }
}

/// Source text with its line table, shared by the functions defined in it.
#[derive(Debug)]
pub(super) struct Source {
    pub text: String,
    line_starts: Vec<u32>,
    first_line: u64,
    /// Code run by `exec`: every line is the `exec` call's line.
    fixed_line: Option<u64>,
}

impl Source {
    pub(super) fn new(text: String, first_line: u64, fixed_line: Option<u64>) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)));
        Source { text, line_starts, first_line, fixed_line }
    }

    /// The file line of a byte offset.
    pub(super) fn line(&self, offset: u32) -> u64 {
        if let Some(line) = self.fixed_line {
            return line;
        }
        let index = self.line_starts.partition_point(|&start| start <= offset).saturating_sub(1);
        self.first_line + index as u64
    }

    /// The source text of a range, shortened to one line of at most 80 characters.
    pub(super) fn snippet(&self, start: u32, end: u32) -> String {
        let text = self.text.get(start as usize..(end as usize).min(self.text.len())).unwrap_or("");
        let mut out = String::with_capacity(text.len().min(84));
        let (mut count, mut space) = (0, false);
        for c in text.chars() {
            if c.is_whitespace() {
                space = !out.is_empty();
                continue;
            }
            if count >= 77 {
                out.push_str("...");
                break;
            }
            if space {
                out.push(' ');
                count += 1;
                space = false;
            }
            out.push(c);
            count += 1;
        }
        out
    }
}

/// A function defined in the evaluated source.
#[derive(Debug)]
pub(super) struct Function {
    pub name: String,
    pub args: Rc<ast::Arguments>,
    pub body: Body,
    /// Defaults of the positional and keyword-only parameters, by name.
    pub defaults: HashMap<String, Val>,
    /// The enclosing function's names when it was defined.
    pub closure: Option<Rc<Scope>>,
    /// The frame it was defined in (see the evaluator's frames).
    pub parent_frame: Option<u64>,
    pub source: Rc<Source>,
}

#[derive(Debug)]
pub(super) enum Body {
    Block(Rc<Vec<ast::Stmt>>),
    Lambda(Rc<ast::Expr>),
}

#[derive(Debug)]
pub(super) struct Class {
    pub name: String,
    pub attrs: RefCell<HashMap<String, Val>>,
}

#[derive(Debug)]
pub(super) struct Instance {
    pub class: Shared<Class>,
    pub attrs: RefCell<HashMap<String, Val>>,
}

pub(super) fn unknown() -> Val {
    Val::Unknown(String::new())
}

pub(super) fn unknown_as(text: impl Into<String>) -> Val {
    Val::Unknown(text.into())
}

impl Val {
    /// Python truth, when known.
    pub(super) fn truth(&self) -> Option<bool> {
        match self {
            Val::Str(s) => Some(!s.is_empty()),
            Val::Int(i) => Some(*i != 0),
            Val::Float(x) => Some(*x != 0.0),
            Val::Bool(b) => Some(*b),
            Val::None => Some(false),
            Val::List(items) => Some(!items.is_empty()),
            Val::Dict(items, Base::Empty) => Some(!items.is_empty()),
            Val::Dict(items, _) if !items.is_empty() => Some(true),
            Val::Dict(..) => None,
            Val::OneOf(alts) => {
                let first = alts.first()?.truth()?;
                alts.iter().all(|a| a.truth() == Some(first)).then_some(first)
            }
            Val::Unknown(_) | Val::File(_) => None,
            Val::Installed(_) | Val::Object(_) | Val::Spec(_) | Val::Code(_) | Val::Func(_) | Val::Method(..) | Val::Class(_) | Val::Instance(_) => Some(true),
        }
    }

    pub(super) fn is_unknown(&self) -> bool {
        matches!(self, Val::Unknown(_))
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn as_int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The public view.
    pub(super) fn public(&self) -> PyValue {
        match self {
            Val::Str(s) => PyValue::Str(s.clone()),
            Val::Int(i) => PyValue::Int(*i),
            Val::Float(x) => PyValue::Float(*x),
            Val::Bool(b) => PyValue::Bool(*b),
            Val::None => PyValue::None,
            Val::List(items) => PyValue::List(items.iter().map(Val::public).collect()),
            Val::Dict(items, Base::Empty) => PyValue::Dict(items.iter().map(|(k, v)| (k.public(), v.public())).collect()),
            Val::Dict(_, Base::Environ) => PyValue::Unknown("a copy of os.environ".into()),
            Val::Dict(_, Base::Unknown(text)) => PyValue::Unknown(text.clone()),
            Val::Installed(rel) => PyValue::Installed(rel.clone()),
            Val::OneOf(alts) => PyValue::OneOf(alts.iter().map(Val::public).collect()),
            Val::Unknown(text) if text.is_empty() => PyValue::Unknown("a value not known here".into()),
            Val::Unknown(text) => PyValue::Unknown(text.clone()),
            Val::Object(name) => PyValue::Unknown(name.clone()),
            Val::Spec(name) => PyValue::Unknown(format!("importlib.util.find_spec({name:?})")),
            Val::Code(_) => PyValue::Unknown("compiled code".into()),
            Val::Func(f) => PyValue::Unknown(format!("function {}", f.0.name)),
            Val::Method(_, name) => PyValue::Unknown(format!("method {name}")),
            Val::Class(c) => PyValue::Unknown(format!("class {}", c.0.name)),
            Val::Instance(i) => PyValue::Unknown(format!("{} instance", i.0.class.0.name)),
            Val::File(_) => PyValue::Unknown("open file".into()),
        }
    }

    /// Fill an empty unknown description (also inside "one of").
    pub(super) fn described(self, text: &str) -> Val {
        match self {
            Val::Unknown(d) if d.is_empty() => Val::Unknown(text.to_string()),
            Val::OneOf(alts) => Val::OneOf(alts.into_iter().map(|a| a.described(text)).collect()),
            v => v,
        }
    }
}

/// The size of a value in units (one per node, and one per 64 bytes of
/// text), when within `limit` units and [`MAX_NEST`] levels.
pub(super) fn units_within(v: &Val, limit: usize) -> Option<usize> {
    measure(v, limit, &mut 0)
}

/// [`units_within`], adding to `work` the units actually walked: a list or
/// dict measured before is not walked again (its size is remembered), so
/// checking a value read again is free and the walk stops as soon as the
/// limit or the nesting bound is passed.
pub(super) fn measure(v: &Val, limit: usize, work: &mut usize) -> Option<usize> {
    fn walk(v: &Val, depth: usize, left: usize, work: &mut usize) -> Option<(usize, usize)> {
        let own = 1 + match v {
            Val::Str(s) | Val::Installed(s) | Val::Unknown(s) | Val::Object(s) | Val::Spec(s) => s.len() / 64,
            Val::Code(s) => s.len() / 64,
            _ => 0,
        };
        if own > left || depth > MAX_NEST {
            return None;
        }
        *work += own;
        let (units, height) = match v {
            Val::List(seq) => seq_walk(seq, depth, left - own, work, walk)?,
            Val::Dict(seq, _) => seq_walk(seq, depth, left - own, work, |(k, x), depth, left, work| {
                let (ku, kh) = walk(k, depth, left, work)?;
                let (xu, xh) = walk(x, depth, left.checked_sub(ku)?, work)?;
                Some((ku + xu, kh.max(xh)))
            })?,
            Val::OneOf(items) => {
                let (mut units, mut height) = (0, 0);
                for item in items {
                    let (u, h) = walk(item, depth + 1, (left - own).checked_sub(units)?, work)?;
                    units += u;
                    height = height.max(h + 1);
                }
                (units, height)
            }
            Val::Method(recv, _) => {
                let (u, h) = walk(recv, depth + 1, left - own, work)?;
                (u, h + 1)
            }
            _ => (0, 0),
        };
        Some((own + units, height))
    }
    /// The items of a list or dict: remembered, or walked and remembered.
    fn seq_walk<T>(
        seq: &Seq<T>,
        depth: usize,
        left: usize,
        work: &mut usize,
        item: impl Fn(&T, usize, usize, &mut usize) -> Option<(usize, usize)>,
    ) -> Option<(usize, usize)> {
        if let Some((units, height)) = seq.measured() {
            return (units <= left && depth + height <= MAX_NEST).then_some((units, height));
        }
        let (mut units, mut height) = (0, 0);
        for i in seq.iter() {
            let (u, h) = item(i, depth + 1, left.checked_sub(units)?, work)?;
            units += u;
            height = height.max(h + 1);
        }
        seq.remember(units, height);
        Some((units, height))
    }
    walk(v, 0, limit, work).map(|(units, _)| units)
}

/// A value's text for a description: at most 80 characters.
pub(super) fn short(v: &Val) -> String {
    struct Bounded(String);
    impl std::fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            for c in s.chars() {
                if self.0.len() >= 80 {
                    return Err(std::fmt::Error);
                }
                self.0.push(c);
            }
            Ok(())
        }
    }
    let mut out = Bounded(String::new());
    let complete = std::fmt::write(&mut out, format_args!("{}", v.public())).is_ok();
    if complete { out.0 } else { format!("{}...", out.0) }
}

/// One value from several alternatives: equal ones folded, nested "one of"
/// flattened, too many unknown.
pub(super) fn join(vals: Vec<Val>) -> Val {
    let mut out: Vec<Val> = Vec::new();
    for v in vals {
        let alts = match v {
            Val::OneOf(alts) => alts,
            v => vec![v],
        };
        for a in alts {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    match out.len() {
        0 => Val::None,
        1 => out.pop().unwrap_or(Val::None),
        n if n > MAX_ALTERNATIVES => unknown_as(format!("one of {n} values")),
        _ => Val::OneOf(out),
    }
}

/// `site-packages/<rel>`.
pub(super) fn installed_text(rel: &str) -> String {
    if rel.is_empty() { "site-packages".to_string() } else { format!("site-packages/{rel}") }
}

/// Back from text: a string starting `site-packages` is an installed path again.
fn from_text(text: String) -> Val {
    if text == "site-packages" {
        return Val::Installed(String::new());
    }
    match text.strip_prefix("site-packages/") {
        Some(rel) => installed(rel),
        None => Val::Str(text),
    }
}

/// An installed path from a relative path, normalised; one climbing above
/// site-packages is unknown.
pub(super) fn installed(rel: &str) -> Val {
    let normal = normalize(rel);
    if normal == ".." || normal.starts_with("../") || normal.starts_with('/') {
        return unknown_as(format!("{} (above site-packages)", installed_text(rel)));
    }
    Val::Installed(if normal == "." { String::new() } else { normal })
}

/// A path with `.` and `..` folded and repeated slashes collapsed.
pub(super) fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// The file of a module: a top-level package's `__init__.py`, a dotted
/// module's `a/b.py`; a standard-library module is not installed.
pub(super) fn module_file(module: &str) -> Val {
    let top = module.split('.').next().unwrap_or("");
    if STDLIB.contains(&top) || top.is_empty() {
        return unknown_as(format!("location of standard module {module}"));
    }
    if module.contains('.') { installed(&format!("{}.py", module.replace('.', "/"))) } else { installed(&format!("{module}/__init__.py")) }
}

/// The directory of a package.
pub(super) fn module_dir(module: &str) -> Val {
    let top = module.split('.').next().unwrap_or("");
    if STDLIB.contains(&top) || top.is_empty() {
        return unknown_as(format!("location of standard module {module}"));
    }
    installed(&module.replace('.', "/"))
}

/// Standard-library modules (their files are not under site-packages), and
/// the names a script may use without importing them.
pub(super) const STDLIB: &[&str] = &[
    "os",
    "sys",
    "subprocess",
    "runpy",
    "importlib",
    "shutil",
    "pathlib",
    "site",
    "sysconfig",
    "inspect",
    "shlex",
    "json",
    "re",
    "io",
    "codecs",
    "fileinput",
    "glob",
    "tempfile",
    "time",
    "logging",
    "threading",
    "multiprocessing",
    "atexit",
    "asyncio",
    "pty",
    "posixpath",
    "distutils",
    "functools",
    "operator",
    "builtins",
    "textwrap",
    "argparse",
    "platform",
    "socket",
    "signal",
    "typing",
    "collections",
    "itertools",
    "math",
    "random",
    "string",
    "traceback",
    "warnings",
    "contextlib",
    "dataclasses",
    "enum",
    "copy",
    "hashlib",
    "base64",
    "zipfile",
    "tarfile",
    "urllib",
    "http",
    "pkgutil",
];

/// `str(v)`, when known.
pub(super) fn text(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.clone()),
        Val::Installed(rel) => Some(installed_text(rel)),
        Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::None | Val::List(_) | Val::Dict(_, Base::Empty) => repr(v),
        _ => None,
    }
}

/// `repr(v)`, when known.
pub(super) fn repr(v: &Val) -> Option<String> {
    Some(match v {
        Val::Str(s) => str_repr(s),
        Val::Installed(rel) => str_repr(&installed_text(rel)),
        Val::Int(i) => i.to_string(),
        Val::Float(x) => float_text(*x),
        Val::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Val::None => "None".to_string(),
        Val::List(items) => format!("[{}]", items.iter().map(repr).collect::<Option<Vec<_>>>()?.join(", ")),
        Val::Dict(items, Base::Empty) => {
            let pairs = items.iter().map(|(k, v)| Some(format!("{}: {}", repr(k)?, repr(v)?))).collect::<Option<Vec<_>>>()?;
            format!("{{{}}}", pairs.join(", "))
        }
        _ => return None,
    })
}

fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A float as Python prints it (close enough: `1.0`, `0.5`, `1e-05`).
pub(super) fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == x.trunc() && x.abs() < 1e16 { format!("{x:.1}") } else { format!("{x}") }
}

/// `a + b` on strings and installed paths.
pub(super) fn concat(a: &Val, b: &Val) -> Option<Val> {
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => bounded(format!("{x}{y}")).map(Val::Str),
        (Val::Installed(_), Val::Str(_)) | (Val::Str(_), Val::Installed(_)) | (Val::Installed(_), Val::Installed(_)) => {
            let (x, y) = (text(a)?, text(b)?);
            if x.is_empty() {
                return Some(b.clone());
            }
            if y.is_empty() {
                return Some(a.clone());
            }
            match a {
                Val::Installed(_) => Some(from_text(bounded(format!("{x}{y}"))?)),
                _ => bounded(format!("{x}{y}")).map(Val::Str),
            }
        }
        _ => None,
    }
}

fn bounded(s: String) -> Option<String> {
    (s.len() <= MAX_STR).then_some(s)
}

/// `os.path.join(a, b)`: an absolute `b` replaces `a`.
pub(super) fn path_join(a: &Val, b: &Val) -> Option<Val> {
    match (a, b) {
        (_, Val::Installed(_)) => Some(b.clone()),
        (_, Val::Str(y)) if y.starts_with('/') => Some(b.clone()),
        (Val::Installed(rel), Val::Str(y)) if rel.is_empty() => Some(installed(y)),
        (Val::Installed(rel), Val::Str(y)) => Some(installed(&format!("{rel}/{y}"))),
        (Val::Str(x), Val::Str(y)) if x.is_empty() || x.ends_with('/') => bounded(format!("{x}{y}")).map(Val::Str),
        (Val::Str(x), Val::Str(y)) => bounded(format!("{x}/{y}")).map(Val::Str),
        _ => None,
    }
}

/// `os.path.dirname` (`Path.parent` too, which differs only on trailing slashes).
pub(super) fn dirname(v: &Val) -> Option<Val> {
    match v {
        Val::Installed(rel) if rel.is_empty() => Some(unknown_as("the directory holding site-packages")),
        Val::Installed(rel) => Some(Val::Installed(rel.rsplit_once('/').map_or(String::new(), |(head, _)| head.to_string()))),
        Val::Str(s) => {
            let Some(i) = s.rfind('/') else { return Some(Val::Str(String::new())) };
            let head = &s[..=i];
            let trimmed = head.trim_end_matches('/');
            Some(Val::Str(if trimmed.is_empty() { head.to_string() } else { trimmed.to_string() }))
        }
        _ => None,
    }
}

/// `os.path.basename` / `Path.name`.
pub(super) fn basename(v: &Val) -> Option<Val> {
    match v {
        Val::Installed(rel) if rel.is_empty() => Some(Val::Str("site-packages".into())),
        Val::Installed(rel) => Some(Val::Str(rel.rsplit('/').next().unwrap_or("").to_string())),
        Val::Str(s) => Some(Val::Str(s.rsplit('/').next().unwrap_or("").to_string())),
        _ => None,
    }
}

/// `os.path.normpath` / `Path(...)`: folded, kind kept.
pub(super) fn normpath(v: &Val) -> Option<Val> {
    match v {
        Val::Installed(rel) => Some(installed(rel)),
        Val::Str(s) if s.is_empty() => Some(Val::Str(".".into())),
        Val::Str(s) => Some(Val::Str(normalize(s))),
        _ => None,
    }
}

/// Apply a string transformation to a string or an installed path (as its
/// `site-packages/...` text, read back afterwards).
pub(super) fn map_text(v: &Val, f: impl FnOnce(&str) -> Option<String>) -> Option<Val> {
    match v {
        Val::Str(s) => f(s).and_then(bounded).map(Val::Str),
        Val::Installed(rel) => f(&installed_text(rel)).and_then(bounded).map(from_text),
        _ => None,
    }
}

/// Items of an iterable value, when known.
pub(super) fn items(v: &Val) -> Option<Vec<Val>> {
    match v {
        Val::List(items) => Some(items.to_vec()),
        Val::Dict(items, Base::Empty) => Some(items.iter().map(|(k, _)| k.clone()).collect()),
        Val::Str(s) => Some(s.chars().take(MAX_ITEMS).map(|c| Val::Str(c.to_string())).collect()),
        _ => None,
    }
}

/// `a == b` when it can be told.
pub(super) fn equal(a: &Val, b: &Val) -> Option<bool> {
    match (a, b) {
        (Val::Unknown(_), _) | (_, Val::Unknown(_)) | (Val::OneOf(_), _) | (_, Val::OneOf(_)) => None,
        (Val::Int(x), Val::Float(y)) | (Val::Float(y), Val::Int(x)) => Some((*x as f64) == *y),
        (Val::Bool(x), Val::Int(y)) | (Val::Int(y), Val::Bool(x)) => Some(i64::from(*x) == *y),
        (Val::Str(_), Val::Str(_)) | (Val::Int(_), Val::Int(_)) | (Val::Float(_), Val::Float(_)) | (Val::Bool(_), Val::Bool(_)) | (Val::None, Val::None) => {
            Some(a == b)
        }
        (Val::Installed(x), Val::Installed(y)) => (x == y).then_some(true),
        (Val::List(x), Val::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            let mut all = true;
            for (p, q) in x.iter().zip(y) {
                match equal(p, q)? {
                    true => {}
                    false => all = false,
                }
            }
            Some(all)
        }
        (
            Val::Str(_) | Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::None | Val::List(_),
            Val::Str(_) | Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::None | Val::List(_),
        ) => Some(false),
        (Val::Object(x), Val::Object(y)) if x == y => Some(true),
        _ => None,
    }
}

/// `printf`-style `fmt % args`.
pub(super) fn percent_format(fmt: &str, args: &Val) -> Option<String> {
    let positional: Vec<Val> = match args {
        Val::List(items) => items.to_vec(),
        Val::Dict(..) => Vec::new(),
        other => vec![other.clone()],
    };
    let mut next = positional.into_iter();
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut key = None;
        if chars.peek() == Some(&'(') {
            chars.next();
            let name: String = chars.by_ref().take_while(|&c| c != ')').collect();
            key = Some(name);
        }
        // Flags, width and precision are read and not applied.
        while chars.peek().is_some_and(|c| "#0- +.*123456789".contains(*c)) {
            chars.next();
        }
        let conv = chars.next()?;
        if conv == '%' {
            out.push('%');
            continue;
        }
        let value = match key {
            Some(k) => match args {
                Val::Dict(items, Base::Empty) => items.iter().find(|(kk, _)| kk.as_str() == Some(&k)).map(|(_, v)| v.clone())?,
                _ => return None,
            },
            None => next.next()?,
        };
        out.push_str(&match conv {
            's' => text(&value)?,
            'r' | 'a' => repr(&value)?,
            'd' | 'i' | 'u' => match value {
                Val::Int(i) => i.to_string(),
                Val::Bool(b) => i64::from(b).to_string(),
                Val::Float(x) => (x.trunc() as i64).to_string(),
                _ => return None,
            },
            'f' | 'F' | 'g' | 'e' => text(&value)?,
            'x' => format!("{:x}", value.as_int()?),
            'o' => format!("{:o}", value.as_int()?),
            _ => return None,
        });
        if out.len() > MAX_STR {
            return None;
        }
    }
    Some(out)
}

/// `fmt.format(*args, **kwargs)` for plain fields (`{}`, `{0}`, `{name}`,
/// `!r`/`!s`, an empty or `s`/`d` spec).
pub(super) fn brace_format(fmt: &str, args: &[Val], kwargs: &[(String, Val)]) -> Option<String> {
    let mut out = String::new();
    let mut auto = 0usize;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let field: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let (field, spec) = field.split_once(':').unwrap_or((&field, ""));
                let (name, conversion) = field.split_once('!').unwrap_or((field, ""));
                let value = if name.is_empty() {
                    auto += 1;
                    args.get(auto - 1)?.clone()
                } else if let Ok(i) = name.parse::<usize>() {
                    args.get(i)?.clone()
                } else {
                    kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())?
                };
                out.push_str(&format_value(&value, conversion, spec)?);
            }
            '}' => return None,
            c => out.push(c),
        }
        if out.len() > MAX_STR {
            return None;
        }
    }
    Some(out)
}

/// One replacement field of `format` or an f-string.
pub(super) fn format_value(value: &Val, conversion: &str, spec: &str) -> Option<String> {
    let shown = match conversion {
        "r" | "a" => repr(value)?,
        "" | "s" => text(value)?,
        _ => return None,
    };
    match spec {
        "" | "s" => Some(shown),
        "d" if matches!(value, Val::Int(_)) => Some(shown),
        _ => None,
    }
}

/// `shlex.split`: POSIX words with quotes and backslashes.
pub(super) fn shlex_split(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => word.push(c),
                            '\n' => {}
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next()? {
                    '\n' => {}
                    c => word.push(c),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// `shlex.quote`.
pub(super) fn shlex_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\"'\"'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_paths_keep_their_kind_through_string_and_path_arithmetic() {
        let origin = module_file("vllm");
        assert_eq!(origin, Val::Installed("vllm/__init__.py".into()));
        let dir = dirname(&origin).unwrap();
        assert_eq!(path_join(&dir, &Val::Str("model_executor/x.py".into())), Some(Val::Installed("vllm/model_executor/x.py".into())));
        assert_eq!(concat(&dir, &Val::Str("/../sglang/a.py".into())), Some(Val::Installed("sglang/a.py".into())));
        assert_eq!(concat(&Val::Str("sed -i s/a/b/ ".into()), &dir), Some(Val::Str("sed -i s/a/b/ site-packages/vllm".into())));
        assert!(installed("../../etc/passwd").is_unknown());
        assert!(module_file("os").is_unknown());
        assert_eq!(path_join(&dir, &Val::Str("/tmp/x".into())), Some(Val::Str("/tmp/x".into())));
    }

    #[test]
    fn formatting_like_python() {
        assert_eq!(percent_format("%s=%d %r", &Val::List(vec![Val::Str("A".into()), Val::Int(3), Val::Str("x".into())].into())).as_deref(), Some("A=3 'x'"));
        assert_eq!(brace_format("{}/{name}/{0!r}", &[Val::Str("a".into())], &[("name".into(), Val::Int(2))]).as_deref(), Some("a/2/'a'"));
        assert_eq!(brace_format("{:>10}", &[Val::Str("a".into())], &[]), None);
        assert_eq!(shlex_split(r#"a 'b c' "d\"e" f\ g"#), Some(vec!["a".into(), "b c".into(), "d\"e".into(), "f g".into()]));
        assert_eq!(float_text(1.0), "1.0");
        assert_eq!(normalize("/a/./b/../c//d/"), "/a/c/d");
    }
}
