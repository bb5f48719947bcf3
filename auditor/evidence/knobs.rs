//! What a written environment value means to the engine that reads it. The
//! catalog of variables (type, default, legacy spelling) is data in
//! `signatures/engine-env.toml`; the parsing rules mirror the engines' own.

use super::env::{EnvAssignment, EnvOrigin, Scope};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The catalog shipped with the binary.
pub const EMBEDDED: &str = include_str!("../../signatures/engine-env.toml");

/// How an engine parses a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VarType {
    /// SGLang `EnvBool`.
    SglangBool,
    Float,
    Int,
    String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct EngineSpec {
    pub name: String,
    /// Legacy spelling copied over the current one at import (`SGL_`).
    pub legacy_prefix: Option<String>,
    /// The current spelling's prefix (`SGLANG_`).
    pub prefix: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct VarSpec {
    pub name: String,
    pub engine: String,
    #[serde(rename = "type")]
    pub kind: VarType,
    pub default: Option<String>,
    #[serde(default)]
    pub doc: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Catalog {
    #[serde(default)]
    pub engine: Vec<EngineSpec>,
    #[serde(default)]
    pub var: Vec<VarSpec>,
}

/// What a value means to the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Meaning {
    Bool(bool),
    Number(f64),
    Text(String),
    /// The engine rejects the value, warns, and keeps its default.
    Invalid {
        reason: String,
        default: Option<String>,
    },
}

impl Meaning {
    /// The value in effect as JSON: the parsed value, or the default for an
    /// invalid one (`null` when the default is unknown).
    pub fn effective_json(&self, spec: Option<&VarSpec>) -> serde_json::Value {
        match self {
            Meaning::Bool(b) => (*b).into(),
            Meaning::Number(n) => serde_json::Number::from_f64(*n).map_or(serde_json::Value::Null, Into::into),
            Meaning::Text(t) => t.clone().into(),
            Meaning::Invalid { default, .. } => match (default, spec) {
                (Some(d), Some(spec)) => interpret(spec.kind, d, None).effective_json(None),
                _ => serde_json::Value::Null,
            },
        }
    }
}

/// Parse `value` the way the engine parses a variable of type `kind`.
pub fn interpret(kind: VarType, value: &str, default: Option<&str>) -> Meaning {
    let invalid = |reason: String| Meaning::Invalid { reason, default: default.map(str::to_string) };
    match kind {
        VarType::SglangBool => match value.to_lowercase().as_str() {
            "true" | "1" | "yes" | "y" => Meaning::Bool(true),
            "false" | "0" | "no" | "n" => Meaning::Bool(false),
            _ => invalid(format!("{value:?} is not a boolean SGLang accepts (true/1/yes/y or false/0/no/n, case-insensitive, not trimmed)")),
        },
        VarType::Float => match parse_python_float(value) {
            Some(n) => Meaning::Number(n),
            None => invalid(format!("{value:?} is not a number")),
        },
        VarType::Int => match value.trim().replace('_', "").parse::<i64>() {
            Ok(n) => Meaning::Number(n as f64),
            Err(_) => invalid(format!("{value:?} is not an integer")),
        },
        VarType::String => Meaning::Text(value.to_string()),
    }
}

/// Python's `float()`: surrounding whitespace allowed, `inf`/`nan`, digit underscores.
fn parse_python_float(value: &str) -> Option<f64> {
    let text = value.trim();
    if text.is_empty() || text.starts_with('_') || text.ends_with('_') || text.contains("__") {
        return None;
    }
    let cleaned = text.replace('_', "");
    match cleaned.to_ascii_lowercase().trim_start_matches(['+', '-']) {
        "inf" | "infinity" | "nan" => cleaned.parse().ok(),
        other if other.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')) => cleaned.parse().ok(),
        _ => None,
    }
}

/// A variable's value in one scope after the engine's override rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved<'a> {
    /// The assignment that takes effect.
    pub assignment: &'a EnvAssignment,
    /// It is the legacy spelling (`SGL_X`), which overrides `SGLANG_X`.
    pub via_legacy: bool,
    /// Earlier assignments in the same scope that it overrides.
    pub overridden: Vec<&'a EnvAssignment>,
}

/// How strongly a kind of record shows the server's real environment: an
/// env dump made at launch beats a command prefix, which beats an export.
fn rank(origin: EnvOrigin) -> u8 {
    match origin {
        EnvOrigin::DumpBlock => 5,
        EnvOrigin::Listing => 4,
        EnvOrigin::CommandPrefix | EnvOrigin::Container => 3,
        EnvOrigin::Export | EnvOrigin::Python | EnvOrigin::Unset => 2,
        EnvOrigin::Config | EnvOrigin::PythonSetdefault | EnvOrigin::ImageConfig => 1,
        EnvOrigin::ShellVariable => 0,
    }
}

impl Catalog {
    /// The value of `name` in effect across `env`: per scope by the engine's
    /// rules, then the strongest record wins (later wins among equals).
    pub fn effective<'a>(&self, env: &'a [EnvAssignment], name: &str) -> Option<Resolved<'a>> {
        self.resolve(env, name).into_iter().max_by_key(|r| (rank(r.assignment.origin), r.assignment.provenance.line))
    }

    pub fn parse(text: &str) -> Result<Catalog, toml::de::Error> {
        toml::from_str(text)
    }

    /// The catalog embedded in the binary.
    pub fn embedded() -> &'static Catalog {
        static CATALOG: LazyLock<Catalog> = LazyLock::new(|| Catalog::parse(EMBEDDED).expect("embedded signatures/engine-env.toml is valid"));
        &CATALOG
    }

    pub fn var(&self, name: &str) -> Option<&VarSpec> {
        self.var.iter().find(|v| v.name == name)
    }

    /// What `value` means for variable `name` (`Text` for unknown variables).
    pub fn meaning(&self, name: &str, value: &str) -> Meaning {
        let spec = self.var(name).or_else(|| self.current_name(name).and_then(|n| self.var(&n)));
        match spec {
            Some(spec) => interpret(spec.kind, value, spec.default.as_deref()),
            None => Meaning::Text(value.to_string()),
        }
    }

    /// The engine that reads variable `name`: its catalog entry's, else the
    /// engine whose (current or legacy) prefix it carries.
    pub fn reader(&self, name: &str) -> Option<&str> {
        if let Some(spec) = self.var(name) {
            return Some(spec.engine.as_str());
        }
        let carries = |p: &Option<String>| p.as_deref().is_some_and(|p| name.starts_with(p));
        self.engine.iter().find(|e| carries(&e.prefix) || carries(&e.legacy_prefix)).map(|e| e.name.as_str())
    }

    /// Whether `written` is variable `name` in its current or legacy
    /// spelling (`SGL_X` for `SGLANG_X`), without building either.
    pub fn spells(&self, name: &str, written: &str) -> bool {
        written == name
            || self.engine.iter().any(|e| match (e.prefix.as_deref(), e.legacy_prefix.as_deref()) {
                (Some(current), Some(legacy)) => matches!((name.strip_prefix(current), written.strip_prefix(legacy)), (Some(a), Some(b)) if a == b),
                _ => false,
            })
    }

    /// `SGLANG_X` -> `SGL_X`, for engines with a legacy prefix.
    pub fn legacy_name(&self, name: &str) -> Option<String> {
        self.engine.iter().find_map(|e| {
            let rest = name.strip_prefix(e.prefix.as_deref()?)?;
            Some(format!("{}{rest}", e.legacy_prefix.as_deref()?))
        })
    }

    /// `SGL_X` -> `SGLANG_X`, for engines with a legacy prefix.
    pub fn current_name(&self, name: &str) -> Option<String> {
        self.engine.iter().find_map(|e| {
            let rest = name.strip_prefix(e.legacy_prefix.as_deref()?)?;
            Some(format!("{}{rest}", e.prefix.as_deref()?))
        })
    }

    /// Resolve `name` in every scope of `assignments` as a process would:
    /// per scope, in order, an assignment sets the value, `unset` removes it,
    /// `setdefault` sets it only when unset, and shell variables that were
    /// never exported do not count; then a legacy spelling that is set
    /// overrides the current one.
    pub fn resolve<'a>(&self, assignments: &'a [EnvAssignment], name: &str) -> Vec<Resolved<'a>> {
        let legacy = self.legacy_name(name);
        let mut scopes: BTreeMap<(&str, &Scope), Vec<&'a EnvAssignment>> = BTreeMap::new();
        for a in assignments.iter().filter(|a| self.spells(name, &a.name)) {
            if a.origin.reaches_environment() {
                scopes.entry((a.provenance.file.as_str(), &a.scope)).or_default().push(a);
            }
        }
        let mut resolved = Vec::new();
        for list in scopes.into_values() {
            let (current, mut overridden) = simulate(&list, name);
            let legacy_value = legacy.as_deref().and_then(|l| simulate(&list, l).0);
            let (winner, via_legacy) = match (legacy_value, current) {
                (Some(l), Some(c)) => {
                    overridden.push(c);
                    (l, true)
                }
                (Some(l), None) => (l, true),
                (None, Some(c)) => (c, false),
                (None, None) => continue,
            };
            resolved.push(Resolved { assignment: winner, via_legacy, overridden });
        }
        resolved
    }
}

/// Replay one scope's assignments to `name`: the assignment whose value is
/// in effect at the end, and the earlier values it replaced.
fn simulate<'a>(list: &[&'a EnvAssignment], name: &str) -> (Option<&'a EnvAssignment>, Vec<&'a EnvAssignment>) {
    let mut current: Option<&'a EnvAssignment> = None;
    let mut replaced = Vec::new();
    for a in list.iter().copied().filter(|a| a.name == name) {
        match (a.origin, a.value.is_some()) {
            (EnvOrigin::PythonSetdefault, _) if current.is_some() => {}
            (_, false) => {
                replaced.extend(current.take());
            }
            (_, true) => {
                replaced.extend(current.replace(a));
            }
        }
    }
    (current, replaced)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::provenance::Provenance;

    #[test]
    fn sglang_bool_rules() {
        let kind = VarType::SglangBool;
        for v in ["true", "True", "TRUE", "1", "yes", "Y"] {
            assert_eq!(interpret(kind, v, Some("false")), Meaning::Bool(true), "{v}");
        }
        for v in ["false", "0", "No", "n"] {
            assert_eq!(interpret(kind, v, Some("false")), Meaning::Bool(false), "{v}");
        }
        for v in ["on", "enabled", "2", " 1", "", "True!"] {
            assert!(matches!(interpret(kind, v, Some("false")), Meaning::Invalid { .. }), "{v:?}");
        }
    }

    #[test]
    fn floats_like_python() {
        assert_eq!(interpret(VarType::Float, " 2.5 ", None), Meaning::Number(2.5));
        assert_eq!(interpret(VarType::Float, "1_0", None), Meaning::Number(10.0));
        assert!(matches!(interpret(VarType::Float, "2.5x", None), Meaning::Invalid { .. }));
        assert!(matches!(interpret(VarType::Float, "0x10", None), Meaning::Invalid { .. }));
    }

    #[test]
    fn embedded_catalog_loads() {
        let c = Catalog::embedded();
        assert_eq!(c.var("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE").map(|v| v.kind), Some(VarType::SglangBool));
        assert_eq!(c.legacy_name("SGLANG_X").as_deref(), Some("SGL_X"));
        assert_eq!(c.current_name("SGL_X").as_deref(), Some("SGLANG_X"));
        let invalid = c.meaning("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", "on");
        assert_eq!(invalid.effective_json(c.var("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE")), serde_json::Value::Bool(false));
    }

    fn assign(name: &str, value: Option<&str>, scope: &str, line: u64) -> EnvAssignment {
        let provenance = Provenance::new("f", Some(line), "");
        let origin = if value.is_some() { EnvOrigin::Export } else { EnvOrigin::Unset };
        EnvAssignment::new(name, value.map(Into::into), origin, Scope::Yaml(scope.to_string()), provenance)
    }

    #[test]
    fn resolution_per_scope_with_legacy_override() {
        let list = [
            assign("SGLANG_A", Some("0"), "s1", 1),
            assign("SGL_A", Some("1"), "s1", 2),
            assign("SGLANG_A", Some("1"), "s2", 3),
            assign("SGLANG_A", None, "s2", 4),
            assign("SGLANG_A", Some("1"), "s3", 5),
            assign("SGLANG_A", Some("0"), "s3", 6),
        ];
        let r = Catalog::embedded().resolve(&list, "SGLANG_A");
        assert_eq!(r.len(), 2);
        assert!(r[0].via_legacy);
        assert_eq!(r[0].assignment.provenance.line, Some(2));
        assert_eq!((r[1].assignment.provenance.line, r[1].overridden.len()), (Some(6), 1));
    }

    #[test]
    fn setdefault_applies_only_when_unset_and_shell_variables_do_not_count() {
        let mut first = assign("X", Some("1"), "s", 1);
        let mut default = assign("X", Some("0"), "s", 2);
        default.origin = EnvOrigin::PythonSetdefault;
        let both = [first.clone(), default.clone()];
        assert_eq!(Catalog::embedded().resolve(&both, "X")[0].assignment.provenance.line, Some(1));
        let alone = [default.clone()];
        assert_eq!(Catalog::embedded().resolve(&alone, "X")[0].assignment.provenance.line, Some(2));
        first.origin = EnvOrigin::ShellVariable;
        assert!(Catalog::embedded().resolve(&[first], "X").is_empty());
    }
}
