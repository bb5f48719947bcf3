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
use crate::evidence::shell::actions::{ActionKind, ScriptAction};
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
    /// srt-slurm's `extra_mount` / `container_mounts`: host paths laid over
    /// container paths of every worker.
    pub mounts: Vec<ScriptAction>,
}

/// Most top-level blocks set aside before a file is given up as unread.
const MAX_SET_ASIDE: usize = 16;

/// Lines of a YAML text the loader could not read (past the alias budget,
/// nested past the parser's limit, broken), set aside so that the rest of
/// the file is still read: one top-level block (a master-config entry, a
/// recipe key) from its first line to its last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    pub first: usize,
    pub last: usize,
    pub why: String,
}

/// [`scan`], reading around what does not load: the top-level block the
/// loader stopped in is blanked (same bytes, so lines and offsets hold) and
/// the rest read again, up to [`MAX_SET_ASIDE`] times. A hostile entry then
/// hides itself, never its neighbours; the caller names the blocks set
/// aside as not examined. A text that is one block, or more broken than
/// that, is not YAML to read.
pub fn scan_around(file: &FileRef, text: &str) -> Result<(YamlEvidence, Vec<SetAside>), NotYaml> {
    let mut aside = Vec::new();
    let mut current = std::borrow::Cow::Borrowed(text);
    loop {
        let error = match scan(file, &current) {
            Ok(evidence) => {
                aside.sort_by_key(|a: &SetAside| a.first);
                return Ok((evidence, aside));
            }
            Err(error) => error,
        };
        let block = top_level_block(&current, error.0.line).filter(|_| aside.len() < MAX_SET_ASIDE);
        let Some((first, last)) = block else { return Err(error) };
        current = std::borrow::Cow::Owned(blank(&current, first, last));
        aside.push(SetAside { first, last, why: error.0.message });
    }
}

/// The top-level block (a line starting in column 0 up to the next one)
/// holding `line`, unless it is the whole text.
fn top_level_block(text: &str, line: usize) -> Option<(usize, usize)> {
    let starts: Vec<usize> =
        text.split_inclusive('\n').enumerate().filter(|(_, l)| l.chars().next().is_some_and(|c| !c.is_whitespace() && c != '#')).map(|(i, _)| i + 1).collect();
    let k = starts.iter().rposition(|&s| s <= line)?;
    let first = starts[k];
    let last = starts.get(k + 1).map_or(text.split_inclusive('\n').count(), |next| next - 1);
    (starts.len() > 1).then_some((first, last))
}

/// `text` with lines `first..=last` turned to spaces, line breaks kept.
fn blank(text: &str, first: usize, last: usize) -> String {
    text.split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| {
            if (first..=last).contains(&(i + 1)) {
                l.chars().map(|c| if c == '\n' || c == '\r' { c.to_string() } else { " ".repeat(c.len_utf8()) }).collect()
            } else {
                l.to_string()
            }
        })
        .collect()
}

/// What the walk over a document finds.
#[derive(Default)]
struct Found<'y> {
    sections: Vec<Section<'y>>,
    configs: Vec<(RecordKind, &'y MarkedYaml<'y>)>,
    /// (host path, container path, the node that says so).
    mounts: Vec<(String, String, &'y MarkedYaml<'y>)>,
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
    let mut found = Found::default();
    for doc in &docs {
        collect(doc, &mut Vec::new(), &mut found, 0);
    }
    let Found { sections, configs, mounts } = found;
    let mounts = mounts.into_iter().map(|(host, target, node)| mount_action(file, &lines, host, target, node)).collect();
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
    Ok(YamlEvidence { env: assign(file, &lines, sections), records, recipe, master, mounts })
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

fn collect<'y>(node: &'y MarkedYaml<'y>, path: &mut Vec<String>, found: &mut Found<'y>, depth: usize) {
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
                        found.sections.push(Section { path: path.clone(), entries });
                    }
                }
                if let Some(export) = slurm_export(&key, value) {
                    path.push("export".to_string());
                    found.sections.push(Section { path: path.clone(), entries: export });
                    path.pop();
                }
                found.mounts.extend(slurm_mounts(&key, value));
                if let Some(kind) = RecordKind::of_config_block(&key).filter(|_| matches!(value.data, YamlData::Mapping(_))) {
                    found.configs.push((kind, value));
                }
                collect(value, path, found, depth + 1);
                path.pop();
            }
        }
        YamlData::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                collect(item, path, found, depth + 1);
                path.pop();
            }
        }
        _ => {}
    }
}

/// srt-slurm's mounts (`runtime.py`): `extra_mount: ["HOST:CONTAINER[:ro]"]`
/// and `container_mounts: {HOST: CONTAINER}`, both passed to every srun as
/// `--container-mounts`.
fn slurm_mounts<'y>(key: &str, value: &'y MarkedYaml<'y>) -> Vec<(String, String, &'y MarkedYaml<'y>)> {
    match (key, &value.data) {
        ("extra_mount", YamlData::Sequence(items)) => items
            .iter()
            .filter_map(|item| {
                let text = scalar_text(item)?;
                let (host, rest) = text.split_once(':')?;
                let target = rest.split(':').next().unwrap_or(rest);
                Some((host.to_string(), target.to_string(), item))
            })
            .collect(),
        ("container_mounts", YamlData::Mapping(_)) => entries(value, 0).into_iter().filter_map(|(host, v)| Some((host, scalar_text(v)?, v))).collect(),
        _ => Vec::new(),
    }
}

fn mount_action(file: &FileRef, lines: &LineIndex, host: String, target: String, node: &MarkedYaml) -> ScriptAction {
    let line = node.span.start.line();
    let (offset, text) = lines.line(line);
    ScriptAction {
        kind: ActionKind::BindMount,
        tool: "srt-slurm --container-mounts".to_string(),
        target: Some(target),
        sources: vec![host],
        package: None,
        rev: None,
        clone: None,
        function: None,
        gate: Default::default(),
        provenance: Provenance::at_line(file, line as u64, offset, text.trim()),
        after_launch: false,
        code_span: None,
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

/// srt-slurm's `srun_options: {export: "ALL,NAME=1"}` (each option becomes
/// `srun --export=...`) and `sbatch_directives: {export: ...}` (`#SBATCH
/// --export=...`, inherited by every srun): the names they set reach the
/// workers' environment before srt-slurm's own exports.
fn slurm_export<'y>(key: &str, value: &'y MarkedYaml<'y>) -> Option<Vec<Entry<'y>>> {
    if key != "srun_options" && key != "sbatch_directives" {
        return None;
    }
    let (_, node) = entries(value, 0).into_iter().find(|(k, _)| k.trim_start_matches('-') == "export")?;
    let text = scalar_text(node)?;
    let found: Vec<Entry> = text
        .split(',')
        .filter_map(|token| {
            let (name, v) = token.trim().split_once('=')?;
            let name = name.trim();
            crate::evidence::shell::words::is_var_name(name).then(|| Entry {
                name: name.to_string(),
                value: Some(v.to_string()),
                written: token.trim().to_string(),
                node,
            })
        })
        .collect();
    (!found.is_empty()).then_some(found)
}

/// Where a non-role env section sits in srt-slurm's order for a worker's
/// environment (srt-slurm `worker_stage.start_worker`): srun/sbatch exports
/// first (bash exports override them), then the role's section, then the
/// recipe-wide `environment`, then `backend.mooncake_kv_store.env`, which
/// the worker's shell exports last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    SlurmExport,
    RecipeWide,
    Mooncake,
}

fn layer_of(path: &[String]) -> Option<Layer> {
    let n = path.len();
    let tail = |a: &str, b: &str| n >= 2 && path[n - 2] == a && path[n - 1] == b;
    if tail("srun_options", "export") || tail("sbatch_directives", "export") {
        Some(Layer::SlurmExport)
    } else if tail("mooncake_kv_store", "env") {
        Some(Layer::Mooncake)
    } else if path.last().is_some_and(|k| k == "environment") && n <= 2 && role_of(path).is_none() {
        Some(Layer::RecipeWide)
    } else {
        None
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
    let layered = |layer: Layer| sections.iter().filter(move |s| layer_of(&s.path) == Some(layer));
    let roles: Vec<(&Section, String)> = sections.iter().filter_map(|s| role_of(&s.path).map(|r| (s, r))).collect();
    for (section, role) in &roles {
        let scope = Scope::RecipeRole { variant: variant_of(&section.path).map(str::to_string), role: role.clone() };
        let same_variant = |w: &&Section| variant_of(&w.path) == variant_of(&section.path);
        let before = layered(Layer::SlurmExport).filter(same_variant).flat_map(|s| s.entries.iter());
        let after = layered(Layer::RecipeWide).chain(layered(Layer::Mooncake)).filter(same_variant).flat_map(|s| s.entries.iter());
        out.extend(before.chain(&section.entries).chain(after).map(|e| make(e, &scope, false, EnvOrigin::Config)));
    }
    // Without a role section in its variant, a layer applies to every process of the recipe.
    for layer in [Layer::SlurmExport, Layer::RecipeWide, Layer::Mooncake] {
        for section in layered(layer).filter(|s| !roles.iter().any(|(r, _)| variant_of(&r.path) == variant_of(&s.path))) {
            out.extend(section.entries.iter().map(|e| make(e, &Scope::Recipe, false, EnvOrigin::Config)));
        }
    }
    for section in sections.iter().filter(|s| role_of(&s.path).is_none() && layer_of(&s.path).is_none()) {
        let dotted = section.path.join(".");
        let key = section.path.last().map(String::as_str).unwrap_or("");
        let client = section.path.len() >= 2 && matches!(section.path[section.path.len() - 2].as_str(), "frontend" | "benchmark");
        let scope = if key == "additional-settings" { Scope::Settings(settings_path(&section.path)) } else { Scope::Yaml(dotted) };
        out.extend(section.entries.iter().map(|e| make(e, &scope, client, EnvOrigin::Config)));
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

    /// srt-slurm's order for a worker (worker_stage.start_worker): srun and
    /// sbatch exports, then the role's section, the recipe-wide
    /// `environment`, then `mooncake_kv_store.env`; the last one wins.
    #[test]
    fn slurm_exports_and_mooncake_env_take_srt_slurms_order() {
        let text = r#"
srun_options:
  export: "ALL,SGLANG_A=1"
sbatch_directives:
  export: ALL,SGLANG_B=1,NOT A NAME=2
backend:
  type: sglang
  decode_environment:
    SGLANG_A: "0"
  mooncake_kv_store:
    env:
      SGLANG_A: "2"
environment:
  SGLANG_C: "1"
"#;
        let got = scan_text(text);
        assert_eq!(
            got,
            [
                t("SGLANG_A", "1", "recipe:decode"),
                t("SGLANG_B", "1", "recipe:decode"),
                t("SGLANG_A", "0", "recipe:decode"),
                t("SGLANG_C", "1", "recipe:decode"),
                t("SGLANG_A", "2", "recipe:decode"),
            ]
        );
        // Without role sections every process gets them, in the same order.
        let got = scan_text("srun_options:\n  export: ALL,SGLANG_A=1\nbackend:\n  mooncake_kv_store:\n    env:\n      SGLANG_A: '0'\n");
        assert_eq!(got, [t("SGLANG_A", "1", "recipe"), t("SGLANG_A", "0", "recipe")]);
    }

    #[test]
    fn slurm_mounts_are_bind_mounts_at_their_lines() {
        let text = "extra_mount:\n  - /home/me/sglang:/sgl-workspace/sglang:ro\ncontainer_mounts:\n  /data/x: /usr/local/lib/python3.12/dist-packages/vllm\n";
        let y = scan(&FileRef::default(), text).unwrap();
        let got: Vec<(Option<&str>, &str, Option<u64>)> = y.mounts.iter().map(|m| (m.target.as_deref(), m.sources[0].as_str(), m.provenance.line)).collect();
        assert_eq!(
            got,
            [(Some("/sgl-workspace/sglang"), "/home/me/sglang", Some(2)), (Some("/usr/local/lib/python3.12/dist-packages/vllm"), "/data/x", Some(4))]
        );
        assert!(y.mounts.iter().all(|m| m.kind == ActionKind::BindMount));
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

    /// A bomb or a broken entry hides itself, never its neighbours: the
    /// top-level block the loader stopped in is set aside, lines kept.
    #[test]
    fn what_does_not_load_is_set_aside_and_the_rest_read() {
        let mut bomb = String::from("  a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in "abcdefghi".chars().zip("bcdefghij".chars()) {
            bomb.push_str(&format!("  {name}: &{name} [{}]\n", vec![format!("*{prev}"); 10].join(", ")));
        }
        let text = format!("first:\n  environment:\n    SGLANG_A: '1'\nhostile:\n{bomb}last:\n  environment:\n    SGLANG_B: 'é1'\nbroken: [\n");
        let (y, aside) = scan_around(&FileRef::default(), &text).unwrap();
        let got: Vec<(&str, Option<u64>, &str)> = y.env.iter().map(|a| (a.name.as_str(), a.provenance.line, a.provenance.text.as_str())).collect();
        assert_eq!(got, [("SGLANG_A", Some(3), "SGLANG_A: '1'"), ("SGLANG_B", Some(17), "SGLANG_B: 'é1'")]);
        let spans: Vec<(usize, usize)> = aside.iter().map(|a| (a.first, a.last)).collect();
        assert_eq!(spans, [(4, 14), (18, 18)], "{aside:?}");
        assert!(aside[0].why.contains("alias"), "{aside:?}");
        // One block is the whole text: nothing is left to read around it.
        assert!(scan_around(&FileRef::default(), "only: [\n").is_err());
    }

    #[test]
    fn hostile_yaml_is_an_error_not_a_hang() {
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        assert!(scan(&FileRef::default(), bomb).is_err());
        assert!(scan(&FileRef::default(), "a: [unclosed").is_err());
    }
}
