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
//! recipe ([`crate::evidence::yaml::recipe`]) and the entries of a master config
//! ([`crate::evidence::yaml::master`]).

use crate::evidence::env::{EnvAssignment, EnvOrigin, Scope};
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::records::{EngineRecord, RecordKind};
use crate::evidence::yaml::master::{self, MasterEntry};
use crate::evidence::yaml::nodes;
use crate::evidence::yaml::nodes::{LineIndex, entries, py_scalar, python_str, scalar_text, settings_path};
use crate::evidence::yaml::recipe::{self, Recipe};
use saphyr::{MarkedYaml, YamlData};

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
pub struct NotYaml(pub nodes::LoadError);

/// The environment assignments and engine config blocks of a YAML text, or
/// why it could not be read.
pub fn scan(file: &FileRef, text: &str) -> Result<YamlEvidence, NotYaml> {
    let docs = nodes::load(text, true).map_err(NotYaml)?;
    let lines = LineIndex::new(text);
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
                depends: Vec::new(),
            }
        })
        .collect();
    let recipe = recipe::read(file, &lines, &docs);
    let master = master::read(file, &lines, &docs);
    Ok(YamlEvidence { env: assign(file, &lines, sections), records, recipe, master })
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
            .filter(|e| crate::evidence::shell::words::is_var_name(&e.name))
            .collect(),
        _ => Vec::new(),
    }
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
    let make = |entry: &Entry, scope: &Scope, client: bool, origin: EnvOrigin| {
        let line = entry.node.span.start.line();
        let (offset, text) = lines.line(line);
        let mut a = EnvAssignment::new(&entry.name, entry.value.clone(), origin, scope.clone(), Provenance::at_line(file, line as u64, offset, text.trim()));
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
            let scope = Scope::RecipeRole { variant: variant_of(&section.path).map(str::to_string), role: role.clone() };
            out.extend(section.entries.iter().map(|e| make(e, &scope, false, EnvOrigin::Config)));
            // The recipe-wide environment is applied after the role's.
            for wide in recipe_wide.iter().filter(|w| variant_of(&w.path) == variant_of(&section.path)) {
                out.extend(wide.entries.iter().map(|e| make(e, &scope, false, EnvOrigin::Config)));
            }
        } else if recipe_wide.iter().any(|w| std::ptr::eq(*w, section)) {
            if !roles.iter().any(|(s, _)| variant_of(&s.path) == variant_of(&section.path)) {
                out.extend(section.entries.iter().map(|e| make(e, &Scope::Recipe, false, EnvOrigin::Config)));
            }
        } else {
            let origin = EnvOrigin::Config;
            let scope = if key == "additional-settings" { Scope::Settings(settings_path(&section.path)) } else { Scope::Yaml(dotted) };
            out.extend(section.entries.iter().map(|e| make(e, &scope, client, origin)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::python::repr::Py;
    use crate::evidence::yaml::nodes::python_float_repr;

    fn scan_text(text: &str) -> Vec<(String, Option<String>, String, bool)> {
        scan(&FileRef { path: "recipe.yaml".into(), artifact: None }, text)
            .unwrap()
            .env
            .into_iter()
            .map(|a| (a.name, a.value, a.scope.to_string(), a.client))
            .collect()
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
        assert!(matches!(got[3].scope, Scope::Settings(_)));
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
