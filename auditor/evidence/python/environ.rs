//! Environment writes in Python source — a `sitecustomize.py`, a wrapper
//! module, or a `python3 - <<EOF` heredoc in a shell script:
//! `os.environ["X"] = "1"`, `os.environ.setdefault("X", "1")` (only if
//! unset), `os.environ.update({...})`, `os.putenv`, `del os.environ["X"]`,
//! `os.environ.pop("X")`. Values that are not string literals are kept as
//! written and flagged as unknown.

use crate::evidence::env::{EnvAssignment, EnvOrigin, Scope};
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::python::repr::{self, Py};
use crate::evidence::text::lines::Line;
use regex::Regex;
use std::sync::LazyLock;

static SET: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?:\bos\.)?\benviron\s*\[\s*(?P<q>['"])(?P<name>\w+)['"]\s*\]\s*=(?P<value>[^=].*)$"#).expect("valid regex"));
static CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:(?:\bos\.)?\benviron\.(?P<method>setdefault|pop|update)|\bos\.(?P<fn>putenv|unsetenv))\s*\((?P<args>.*)\)"#).expect("valid regex")
});
static DELETE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"\bdel\s+(?:os\.)?environ\s*\[\s*['"](?P<name>\w+)['"]\s*\]"#).expect("valid regex"));

/// The environment writes on one line of Python.
pub fn scan_line(file: &FileRef, line: &Line, scope: &Scope) -> Vec<EnvAssignment> {
    let code = strip_comment(&line.text);
    let mut out = Vec::new();
    let mut push = |name: &str, value: Option<(String, bool)>, origin: EnvOrigin, at: usize, text: &str| {
        let provenance = Provenance::at_line(file, line.number, line.offset + at as u64, text);
        let expands = value.as_ref().is_some_and(|(_, unknown)| *unknown);
        let mut a = EnvAssignment::new(name, value.map(|(v, _)| v), origin, scope.clone(), provenance);
        a.expands = expands;
        out.push(a);
    };
    if let Some(caps) = DELETE.captures(code) {
        let m = caps.get(0).map_or((0, ""), |m| (m.start(), m.as_str()));
        push(&caps["name"], None, EnvOrigin::Unset, m.0, m.1);
        return out;
    }
    if let Some(caps) = SET.captures(code) {
        let m = caps.get(0).map_or((0, ""), |m| (m.start(), m.as_str()));
        push(&caps["name"], Some(literal(&caps["value"])), EnvOrigin::Python, m.0, m.1.trim_end());
        return out;
    }
    let Some(caps) = CALL.captures(code) else { return out };
    let m = caps.get(0).map_or((0, ""), |m| (m.start(), m.as_str()));
    let args = call_args(&caps["args"]);
    let method = caps.name("method").or(caps.name("fn")).map_or("", |m| m.as_str());
    match method {
        "setdefault" | "putenv" => {
            if let (Some(Py::Str(name)), Some(value)) = (args.first().and_then(|(_, v)| v.clone()), args.get(1)) {
                let origin = if method == "setdefault" { EnvOrigin::PythonSetdefault } else { EnvOrigin::Python };
                push(&name, Some(value_of(value)), origin, m.0, m.1);
            }
        }
        "pop" | "unsetenv" => {
            if let Some(Py::Str(name)) = args.first().and_then(|(_, v)| v.clone()) {
                push(&name, None, EnvOrigin::Unset, m.0, m.1);
            }
        }
        "update" => match args.first() {
            Some((None, Some(Py::Dict(pairs)))) => {
                for (key, value) in pairs {
                    if let Py::Str(name) = key {
                        push(name, Some(py_value(value)), EnvOrigin::Python, m.0, m.1);
                    }
                }
            }
            _ => {
                for (key, value) in &args {
                    if let Some(name) = key {
                        push(name, Some(value_of(&(key.clone(), value.clone()))), EnvOrigin::Python, m.0, m.1);
                    }
                }
            }
        },
        _ => {}
    }
    out
}

/// Code before a `#` comment (a `#` inside a string literal is kept).
fn strip_comment(text: &str) -> &str {
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (None, '#') => return &text[..i],
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    text
}

/// A string literal's value, or the source text marked unknown.
fn literal(source: &str) -> (String, bool) {
    let source = source.trim().trim_end_matches(';').trim();
    match repr::parse_value(&format!("{source} ")) {
        Ok((Py::Str(s), used)) if source[used.min(source.len())..].trim().is_empty() => (s, false),
        _ => (source.to_string(), true),
    }
}

fn py_value(value: &Py) -> (String, bool) {
    match value {
        Py::Str(s) => (s.clone(), false),
        other => (other.as_text().unwrap_or_default(), true),
    }
}

fn value_of(arg: &(Option<String>, Option<Py>)) -> (String, bool) {
    match &arg.1 {
        Some(v) => py_value(v),
        None => (String::new(), true),
    }
}

/// Call arguments `a, b, k=v` as (keyword, literal value) pairs; a value
/// that is not a literal is `None`.
fn call_args(text: &str) -> Vec<(Option<String>, Option<Py>)> {
    let record = repr::parse_record(&format!("f({text})"), false);
    let mut out: Vec<(Option<String>, Option<Py>)> = record.args.into_iter().map(|v| (None, Some(v))).collect();
    out.extend(record.fields.into_iter().map(|(k, v)| (Some(k), Some(v))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Vec<(String, Option<String>, EnvOrigin, bool)> {
        let line = Line { number: 1, offset: 0, text: text.to_string(), truncated: false };
        scan_line(&FileRef::default(), &line, &Scope::File).into_iter().map(|a| (a.name, a.value, a.origin, a.expands)).collect()
    }

    #[test]
    fn environ_writes() {
        assert_eq!(scan(r#"os.environ["SGLANG_X"] = "1""#), [("SGLANG_X".into(), Some("1".into()), EnvOrigin::Python, false)]);
        assert_eq!(scan("    environ['X']='y'  # set"), [("X".into(), Some("y".into()), EnvOrigin::Python, false)]);
        assert_eq!(scan("os.environ.setdefault('X', 'True')"), [("X".into(), Some("True".into()), EnvOrigin::PythonSetdefault, false)]);
        assert_eq!(scan("os.putenv('X', '1')"), [("X".into(), Some("1".into()), EnvOrigin::Python, false)]);
        assert_eq!(scan("os.environ.update({'A': '1', 'B': '2'})").len(), 2);
        assert_eq!(scan("os.environ.update(A='1')"), [("A".into(), Some("1".into()), EnvOrigin::Python, false)]);
        assert_eq!(scan("del os.environ['X']"), [("X".into(), None, EnvOrigin::Unset, false)]);
        assert_eq!(scan("os.environ.pop('X', None)"), [("X".into(), None, EnvOrigin::Unset, false)]);
    }

    #[test]
    fn non_literals_are_unknown_and_comments_and_reads_are_ignored() {
        assert_eq!(scan("os.environ['X'] = str(flag)"), [("X".into(), Some("str(flag)".into()), EnvOrigin::Python, true)]);
        assert!(scan("# os.environ['X'] = '1'").is_empty());
        assert!(scan("if os.environ['X'] == '1':").is_empty());
        assert!(scan("x = os.environ.get('X')").is_empty());
    }
}
