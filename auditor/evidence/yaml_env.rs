//! Environment sections of YAML recipes and configs: srt-slurm's
//! `backend.{prefill,decode,aggregated}_environment` and recipe-wide
//! `environment` (applied after the role's, so it wins), the newer
//! `roles.<role>.env`, client-side `frontend.env` / `benchmark.env`,
//! docker-compose `environment` (map or `- A=1` list), Kubernetes
//! `env: [{name, value}]`, and master-config `additional-settings`
//! (`KEY=VALUE` strings exported into the launcher). Anchors, aliases and
//! merge keys (`<<: *x`) are resolved; values become the strings the
//! consuming Python process sees: PyYAML (YAML 1.1) resolution then `str()`,
//! so a plain `yes` or `on` becomes `True` and `2.50` becomes `2.5`.
//! The same parsed documents also give the per-role engine configs of a
//! recipe ([`super::recipe`]) and the entries of a master config
//! ([`super::master`]).

use super::engine_log::{EngineRecord, RecordKind};
use super::env::{EnvAssignment, EnvOrigin};
use super::master::{self, MasterEntry};
use super::provenance::{FileRef, Provenance};
use super::pyrepr::Py;
use super::recipe::{self, Recipe};
use regex::Regex;
use saphyr::{MarkedYaml, ScalarStyle, YamlData, YamlLoader};
use std::sync::LazyLock;

/// Most nodes aliases may expand to (a billion-laughs file is an error, not a hang).
const ALIAS_BUDGET: usize = 100_000;
/// Deepest nesting walked.
const MAX_DEPTH: usize = 64;

/// What a YAML document holds for the auditor.
#[derive(Debug, Default)]
pub struct YamlEvidence {
    pub env: Vec<EnvAssignment>,
    /// TensorRT-LLM `speculative_config:` and `kv_cache_config:` blocks.
    pub records: Vec<EngineRecord>,
    /// The per-role engine configs of an srt-slurm recipe.
    pub recipe: Option<Recipe>,
    /// The entries of a master config.
    pub master: Vec<MasterEntry>,
}

/// A text the YAML parser rejects, with the parser's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not valid YAML: {0}")]
pub struct NotYaml(pub String);

/// The environment assignments and engine config blocks of a YAML text, or
/// why it could not be read.
pub fn scan(file: &FileRef, text: &str) -> Result<YamlEvidence, NotYaml> {
    let mut loader: YamlLoader<'_, MarkedYaml<'_>> = YamlLoader::default();
    loader.early_parse(false);
    loader.allow_duplicate_keys(true);
    loader.alias_limit(ALIAS_BUDGET);
    let mut parser = saphyr_parser::Parser::new_from_str(text);
    parser.load(&mut loader, true).map_err(|e| NotYaml(e.to_string()))?;
    if let Some(e) = loader.error() {
        return Err(NotYaml(e.to_string()));
    }
    let lines = LineIndex::new(text);
    let docs = loader.into_documents();
    let mut sections = Vec::new();
    let mut configs = Vec::new();
    for doc in &docs {
        collect(doc, &mut Vec::new(), &mut sections, &mut configs, 0);
    }
    let records = configs
        .into_iter()
        .map(|(kind, node)| {
            let line = node.span.start.line();
            let (offset, text) = lines.line(line);
            let fields = entries(node, 0).into_iter().filter_map(|(k, v)| Some((k, py_scalar(v)?))).collect();
            EngineRecord {
                kind,
                fields,
                stop: None,
                provenance: Provenance::at_line(file, line as u64, offset, text.trim()),
                end_line: line as u64,
                fragment: false,
            }
        })
        .collect();
    let recipe = recipe::read(file, &lines, &docs);
    let master = master::read(file, &lines, &docs);
    Ok(YamlEvidence { env: assign(file, &lines, sections), records, recipe, master })
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

/// An environment section found in the tree.
struct Section<'y> {
    path: Vec<String>,
    entries: Vec<Entry<'y>>,
}

/// One `NAME: value` (or `NAME=value`) of a section.
struct Entry<'y> {
    name: String,
    /// The value as the process sees it; `None` for a pass-through `- NAME`.
    value: Option<String>,
    written: String,
    node: &'y MarkedYaml<'y>,
}

fn is_env_key(key: &str) -> bool {
    key == "environment" || key == "env" || key.ends_with("_environment") || key == "additional-settings"
}

fn collect<'y>(
    node: &'y MarkedYaml<'y>,
    path: &mut Vec<String>,
    out: &mut Vec<Section<'y>>,
    configs: &mut Vec<(RecordKind, &'y MarkedYaml<'y>)>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    match &node.data {
        YamlData::Mapping(_) => {
            for (key, value) in entries(node, 0) {
                path.push(key.clone());
                if is_env_key(&key) {
                    let entries = section_entries(value);
                    if !entries.is_empty() {
                        out.push(Section { path: path.clone(), entries });
                    }
                }
                if let Some(kind) = RecordKind::of_config_block(&key).filter(|_| matches!(value.data, YamlData::Mapping(_))) {
                    configs.push((kind, value));
                }
                collect(value, path, out, configs, depth + 1);
                path.pop();
            }
        }
        YamlData::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                collect(item, path, out, configs, depth + 1);
                path.pop();
            }
        }
        _ => {}
    }
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

fn section_entries<'y>(value: &'y MarkedYaml<'y>) -> Vec<Entry<'y>> {
    match &value.data {
        YamlData::Mapping(_) => entries(value, 0)
            .into_iter()
            .filter_map(|(name, v)| {
                let (value, written) = python_str(v)?;
                Some(Entry { name, value: Some(value), written, node: v })
            })
            .collect(),
        YamlData::Sequence(items) => items
            .iter()
            .filter_map(|item| match &item.data {
                // Kubernetes: - name: X / value: "1"
                YamlData::Mapping(_) => {
                    let fields = entries(item, 0);
                    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| *v);
                    let name = scalar_text(get("name")?)?;
                    let (value, written) = python_str(get("value")?)?;
                    Some(Entry { name, value: Some(value), written, node: item })
                }
                // Compose / additional-settings: - A=1, or - A (passed through)
                _ => {
                    let text = scalar_text(item)?;
                    match text.split_once('=') {
                        Some((name, v)) => Some(Entry { name: name.trim().to_string(), value: Some(v.to_string()), written: text.clone(), node: item }),
                        None => Some(Entry { name: text.trim().to_string(), value: None, written: text.clone(), node: item }),
                    }
                }
            })
            .filter(|e| super::shell::is_var_name(&e.name))
            .collect(),
        _ => Vec::new(),
    }
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
fn python_str(node: &MarkedYaml) -> Option<(String, String)> {
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

/// The scope of the `additional-settings` at `path` (joined with `.`).
pub(super) fn settings_scope(path: &[String]) -> String {
    format!("additional-settings:{}", path.join("."))
}

/// The srt-slurm role an env section configures, from its key.
fn role_of(path: &[String]) -> Option<String> {
    let key = path.last()?.as_str();
    if let Some(role) = key.strip_suffix("_environment") {
        return Some(if role == "agg" { "aggregated".to_string() } else { role.to_string() });
    }
    // roles.<role>.env (newer srt-slurm schema)
    let n = path.len();
    (key == "env" && n >= 3 && path[n - 3] == "roles").then(|| path[n - 2].clone())
}

/// The variant prefix of an override-format recipe (`zip_override_x`), if any.
fn variant_of(path: &[String]) -> Option<&str> {
    path.first().map(String::as_str).filter(|p| p.starts_with("zip_override_") || *p == "base")
}

/// Turn sections into assignments with srt-slurm's scoping: each role's
/// process gets its role section, then the recipe-wide `environment`.
fn assign(file: &FileRef, lines: &LineIndex, sections: Vec<Section>) -> Vec<EnvAssignment> {
    let mut out = Vec::new();
    let make = |entry: &Entry, scope: &str, client: bool, origin: EnvOrigin| {
        let line = entry.node.span.start.line();
        let (offset, text) = lines.line(line);
        let mut a = EnvAssignment::new(&entry.name, entry.value.clone(), origin, scope, Provenance::at_line(file, line as u64, offset, text.trim()));
        a.expands = entry.value.is_none();
        if a.value.is_none() {
            a.value = Some(format!("${}", entry.name));
        }
        a.client = client;
        if entry.value.as_deref() != Some(entry.written.as_str()) && entry.value.is_some() && !entry.written.contains('=') {
            a.written = Some(entry.written.clone());
        }
        a
    };
    let recipe_wide: Vec<&Section> =
        sections.iter().filter(|s| s.path.last().is_some_and(|k| k == "environment") && s.path.len() <= 2 && role_of(&s.path).is_none()).collect();
    let roles: Vec<(&Section, String)> = sections.iter().filter_map(|s| role_of(&s.path).map(|r| (s, r))).collect();
    for section in &sections {
        let dotted = section.path.join(".");
        let key = section.path.last().map(String::as_str).unwrap_or("");
        let client = section.path.len() >= 2 && matches!(section.path[section.path.len() - 2].as_str(), "frontend" | "benchmark");
        if let Some((_, role)) = roles.iter().find(|(s, _)| std::ptr::eq(*s, section)) {
            let scope = match variant_of(&section.path) {
                Some(v) => format!("recipe:{v}:{role}"),
                None => format!("recipe:{role}"),
            };
            out.extend(section.entries.iter().map(|e| make(e, &scope, false, EnvOrigin::Config)));
            // The recipe-wide environment is applied after the role's.
            for wide in recipe_wide.iter().filter(|w| variant_of(&w.path) == variant_of(&section.path)) {
                out.extend(wide.entries.iter().map(|e| make(e, &scope, false, EnvOrigin::Config)));
            }
        } else if recipe_wide.iter().any(|w| std::ptr::eq(*w, section)) {
            if !roles.iter().any(|(s, _)| variant_of(&s.path) == variant_of(&section.path)) {
                out.extend(section.entries.iter().map(|e| make(e, "recipe", false, EnvOrigin::Config)));
            }
        } else {
            let origin = EnvOrigin::Config;
            let scope = if key == "additional-settings" { settings_scope(&section.path) } else { format!("yaml:{dotted}") };
            out.extend(section.entries.iter().map(|e| make(e, &scope, client, origin)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_text(text: &str) -> Vec<(String, Option<String>, String, bool)> {
        scan(&FileRef { path: "recipe.yaml".into(), artifact: None }, text).unwrap().env.into_iter().map(|a| (a.name, a.value, a.scope, a.client)).collect()
    }

    fn t(name: &str, value: &str, scope: &str) -> (String, Option<String>, String, bool) {
        (name.into(), Some(value.into()), scope.into(), false)
    }

    #[test]
    fn roles_anchors_and_recipe_wide_override() {
        let text = r#"
name: x
backend:
  type: sglang
  prefill_environment: &server_environment
    SGLANG_A: '1'
    SGLANG_B: yes
  decode_environment: *server_environment
  aggregated_environment:
    <<: *server_environment
    SGLANG_B: "no"
environment:
  SGLANG_A: 0
frontend:
  env:
    SGLANG_C: on
"#;
        let got = scan_text(text);
        assert_eq!(
            got,
            [
                t("SGLANG_A", "1", "recipe:prefill"),
                t("SGLANG_B", "True", "recipe:prefill"),
                t("SGLANG_A", "0", "recipe:prefill"),
                t("SGLANG_A", "1", "recipe:decode"),
                t("SGLANG_B", "True", "recipe:decode"),
                t("SGLANG_A", "0", "recipe:decode"),
                t("SGLANG_B", "no", "recipe:aggregated"),
                t("SGLANG_A", "1", "recipe:aggregated"),
                t("SGLANG_A", "0", "recipe:aggregated"),
                ("SGLANG_C".into(), Some("True".into()), "yaml:frontend.env".into(), true),
            ]
        );
    }

    #[test]
    fn provenance_points_at_the_written_line() {
        let text = "backend:\n  decode_environment:\n    SGLANG_X: \"1\"\n";
        let a = scan(&FileRef::default(), text).unwrap().env;
        assert_eq!(a[0].provenance.line, Some(3));
        assert_eq!(a[0].provenance.text, "SGLANG_X: \"1\"");
        assert_eq!(a[0].provenance.span.unwrap().0, 31);
    }

    #[test]
    fn lone_carriage_returns_break_lines_as_yaml_reads_them() {
        // Found by fuzzing (yaml_env): the evidence pointed past the end of the file.
        for text in ["backend:\r  decode_environment:\r    SGLANG_X: \"1\"\r", "backend:\r\n  decode_environment:\r\n    SGLANG_X: \"1\"\r\n"] {
            let a = scan(&FileRef::default(), text).unwrap().env;
            assert_eq!((a[0].provenance.line, a[0].provenance.text.as_str()), (Some(3), "SGLANG_X: \"1\""), "{text:?}");
        }
    }

    #[test]
    fn lists_compose_kubernetes_and_settings() {
        let text = "services:\n  sglang:\n    environment:\n      - SGLANG_X=1\n      - HF_TOKEN\nspec:\n  env:\n    - name: SGLANG_Y\n      value: \"true\"\ncfg:\n  search-space:\n    - additional-settings: [\"SYNTHETIC_ACCEPTANCE=true\"]\n";
        let got = scan(&FileRef::default(), text).unwrap().env;
        let names: Vec<(&str, Option<&str>, bool)> = got.iter().map(|a| (a.name.as_str(), a.value.as_deref(), a.expands)).collect();
        assert_eq!(
            names,
            [
                ("SGLANG_X", Some("1"), false),
                ("HF_TOKEN", Some("$HF_TOKEN"), true),
                ("SGLANG_Y", Some("true"), false),
                ("SYNTHETIC_ACCEPTANCE", Some("true"), false)
            ]
        );
        assert!(got[3].scope.starts_with("additional-settings:"));
    }

    #[test]
    fn pyyaml_scalar_resolution() {
        let text = "environment:\n  A: 2.50\n  B: 017\n  C: 0x1F\n  D: ~\n  E: 1_000\n  F: 1:30\n  G: !!str yes\n  H: 1e3\n  I: .5\n  J: 3.0\n";
        let got: Vec<String> = scan_text(text).into_iter().map(|(_, v, _, _)| v.unwrap()).collect();
        assert_eq!(got, ["2.5", "15", "31", "None", "1000", "90", "yes", "1e3", "0.5", "3.0"]);
    }

    #[test]
    fn trtllm_speculative_config_blocks() {
        let text = "trtllm_config:\n  decode:\n    speculative_config:\n      decoding_type: MTP\n      max_draft_len: 3\n";
        let y = scan(&FileRef::default(), text).unwrap();
        assert_eq!(y.records.len(), 1);
        assert_eq!(y.records[0].get("max_draft_len"), Some(&Py::Int(3)));
        assert_eq!(y.records[0].get("decoding_type"), Some(&Py::Str("MTP".into())));
        assert_eq!(y.records[0].provenance.line, Some(4));
    }

    #[test]
    fn python_float_reprs() {
        for (v, s) in [(2.5, "2.5"), (3.0, "3.0"), (1e-5, "1e-05"), (1e16, "1e+16"), (0.0001, "0.0001"), (123456.789, "123456.789"), (-0.5, "-0.5")] {
            assert_eq!(python_float_repr(v), s);
        }
    }

    #[test]
    fn hostile_yaml_is_an_error_not_a_hang() {
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        assert!(scan(&FileRef::default(), bomb).is_err());
        assert!(scan(&FileRef::default(), "a: [unclosed").is_err());
    }
}
