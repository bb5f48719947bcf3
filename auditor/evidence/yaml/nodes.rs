//! YAML nodes read as the tools that load them would: a scalar as the
//! Python value PyYAML gives (YAML 1.1 integers, sexagesimals, floats),
//! mappings with merge keys applied, markers turned into source lines, and
//! the srt-slurm role and settings names. Shared by every YAML reader
//! (environment sections, recipes, master configs) so they agree.

use crate::evidence::python::repr::Py;
use regex::Regex;
use saphyr::{MarkedYaml, ScalarStyle, YamlData, YamlLoader};
use std::sync::LazyLock;

/// Deepest merge-key (`<<`) chain followed.
pub(super) const MAX_DEPTH: usize = 64;

/// Most nodes aliases may expand to (a billion-laughs file is an error, not a hang).
pub const ALIAS_BUDGET: usize = 100_000;

/// The one way YAML documents are loaded, recipes and configs of a bundle
/// as the golden tables of a tree: with line markers, within the alias
/// budget, and with duplicate keys kept (the last wins, as PyYAML reads
/// them) when `duplicate_keys` says so, an error otherwise.
pub fn load(text: &str, duplicate_keys: bool) -> Result<Vec<MarkedYaml<'_>>, LoadError> {
    let mut loader: YamlLoader<'_, MarkedYaml<'_>> = YamlLoader::default();
    loader.early_parse(false);
    loader.allow_duplicate_keys(duplicate_keys);
    loader.alias_limit(ALIAS_BUDGET);
    saphyr_parser::Parser::new_from_str(text).load(&mut loader, true).map_err(|e| LoadError {
        kind: LoadErrorKind::Syntax,
        message: e.to_string(),
        line: e.marker().line(),
    })?;
    // The loader's own error is the alias budget running out.
    if let Some(e) = loader.error() {
        return Err(LoadError { kind: LoadErrorKind::AliasBudget, message: e.to_string(), line: e.marker().line() });
    }
    Ok(loader.into_documents())
}

/// Why a YAML text was not loaded: it is not YAML, or it is but expands
/// past the alias budget (a document that hides what it holds: its content
/// was not examined); with the line the loader stopped at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LoadError {
    pub kind: LoadErrorKind,
    pub message: String,
    /// The line (from 1) where the loader gave up.
    pub line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadErrorKind {
    Syntax,
    AliasBudget,
}

/// A scalar as the Python value PyYAML would load.
pub(super) fn py_scalar(node: &MarkedYaml) -> Option<Py> {
    let (value, _) = python_str(node)?;
    let YamlData::Representation(_, style, _) = &node.data else { return None };
    if *style != ScalarStyle::Plain {
        return Some(Py::Str(value));
    }
    Some(match value.as_str() {
        "None" => Py::None,
        "True" => Py::Bool(true),
        "False" => Py::Bool(false),
        v => v.parse::<i64>().map(Py::Int).or_else(|_| v.parse::<f64>().map(Py::Float)).unwrap_or(Py::Str(value)),
    })
}

/// A mapping's entries with merge keys applied: explicit keys win, then the
/// merged mappings in order.
pub(super) fn entries<'y>(node: &'y MarkedYaml<'y>, depth: usize) -> Vec<(String, &'y MarkedYaml<'y>)> {
    let YamlData::Mapping(map) = &node.data else { return Vec::new() };
    let mut out: Vec<(String, &MarkedYaml)> = Vec::new();
    let mut merged = Vec::new();
    for (key, value) in map {
        match scalar_text(key) {
            Some(k) if k == "<<" && matches!(key.data, YamlData::Representation(_, ScalarStyle::Plain, _)) => merged.push(value),
            Some(k) => out.push((k, value)),
            None => {}
        }
    }
    if depth < MAX_DEPTH {
        for source in merged {
            let sources: Vec<&MarkedYaml> = match &source.data {
                YamlData::Sequence(items) => items.iter().collect(),
                _ => vec![source],
            };
            for source in sources {
                for (k, v) in entries(source, depth + 1) {
                    if !out.iter().any(|(existing, _)| *existing == k) {
                        out.push((k, v));
                    }
                }
            }
        }
    }
    out
}

pub(super) fn scalar_text(node: &MarkedYaml) -> Option<String> {
    match &node.data {
        YamlData::Representation(text, _, _) => Some(text.to_string()),
        _ => None,
    }
}

static YAML11_INT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|0|[1-9][0-9_]*)$").expect("valid regex"));

static YAML11_SEXAGESIMAL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$").expect("valid regex"));

static YAML11_FLOAT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?$").expect("valid regex"));

/// The string a Python consumer gets from a scalar: PyYAML's YAML 1.1
/// resolution, then `str()`. Returns the value and the text as written.
pub(super) fn python_str(node: &MarkedYaml) -> Option<(String, String)> {
    let YamlData::Representation(text, style, tag) = &node.data else {
        // A nested mapping or sequence: str() of it is not an env value anyone sets on purpose.
        return None;
    };
    let written = text.to_string();
    let string_tag = tag.as_ref().is_some_and(|t| t.suffix == "str");
    if *style != ScalarStyle::Plain || string_tag {
        return Some((written.clone(), written));
    }
    let t = written.as_str();
    let value = match t {
        "" | "~" | "null" | "Null" | "NULL" => "None".to_string(),
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => "True".to_string(),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => "False".to_string(),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => "inf".to_string(),
        "-.inf" | "-.Inf" | "-.INF" => "-inf".to_string(),
        ".nan" | ".NaN" | ".NAN" => "nan".to_string(),
        _ if YAML11_INT.is_match(t) => yaml11_int(t).unwrap_or_else(|| written.clone()),
        _ if YAML11_SEXAGESIMAL.is_match(t) => sexagesimal(t).unwrap_or_else(|| written.clone()),
        _ if YAML11_FLOAT.is_match(t) && t != "." => t.replace('_', "").parse::<f64>().map(python_float_repr).unwrap_or_else(|_| written.clone()),
        _ => written.clone(),
    };
    Some((value, written))
}

fn yaml11_int(text: &str) -> Option<String> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits = digits.replace('_', "");
    let value = if let Some(bin) = digits.strip_prefix("0b") {
        i128::from_str_radix(bin, 2).ok()?
    } else if let Some(hex) = digits.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i128::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<i128>().ok()?
    };
    Some(if negative { (-value).to_string() } else { value.to_string() })
}

fn sexagesimal(text: &str) -> Option<String> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let body = body.replace('_', "");
    let mut total = 0f64;
    for part in body.split(':') {
        total = total * 60.0 + part.parse::<f64>().ok()?;
    }
    let total = if negative { -total } else { total };
    Some(if body.contains('.') { python_float_repr(total) } else { format!("{}", total as i128) })
}

/// Python's `repr(float)`: shortest round-trip digits; scientific notation
/// below 1e-4 and from 1e16, with a signed two-digit exponent.
pub fn python_float_repr(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let sci = format!("{value:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{body}")
    } else {
        let rest = &digits[1..];
        let mantissa = if rest.is_empty() { digits[..1].to_string() } else { format!("{}.{rest}", &digits[..1]) };
        format!("{sign}{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// Byte offsets of line starts, to turn YAML markers (line, char column)
/// into byte spans. Lines break where YAML breaks them: at `\n`, `\r\n`
/// and a lone `\r` (else a file with old Mac line ends would have its
/// evidence point at the wrong line).
pub(super) struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        starts.extend(bytes.iter().enumerate().filter(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))).map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The whole source line `line` (1-based) and its byte offset.
    pub(super) fn line(&self, line: usize) -> (u64, &'t str) {
        let start = self.starts.get(line.saturating_sub(1)).copied().unwrap_or(0);
        let end = self.starts.get(line).map_or(self.text.len(), |e| e - 1);
        (start as u64, self.text[start..end.max(start)].trim_end_matches('\r'))
    }
}

/// The srt-slurm role a key names (`agg` is `aggregated`), if it names one.
pub(super) fn normal_role(key: &str) -> Option<String> {
    match key {
        "prefill" | "decode" | "aggregated" => Some(key.to_string()),
        "agg" => Some("aggregated".to_string()),
        _ => None,
    }
}

/// The dotted path of the `additional-settings` at `path`: its scope's.
pub(super) fn settings_path(path: &[String]) -> String {
    path.join(".")
}
