//! Master configs (`configs/nvidia-master.yaml`, `configs/amd-master.yaml`):
//! every top-level key that carries an `image` and a `framework` is a
//! benchmark config — the image to pin, the model, the runner label, and
//! per scenario (`fixed-seq-len`, `agentic-coding`) a search space whose
//! `spec-decoding` labels the jobs. This module reads those fields with the
//! line of the `image:`; the search spaces' `additional-settings` are
//! environment ([`crate::evidence::yaml::env`]), under the scope prefix each scenario
//! names here. Field semantics come from the fields, never from the key.

use crate::evidence::meta::{JobMeta, Scenario};
use crate::evidence::provenance::{FileRef, Provenance};
use crate::evidence::yaml::nodes::{LineIndex, entries, py_scalar, scalar_text, settings_path};
use saphyr::{MarkedYaml, YamlData};

/// One scenario of a config entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioEntry {
    /// `None` for an entry whose `scenarios` name none this auditor knows:
    /// it is still a config (its image is still judged).
    pub scenario: Option<Scenario>,
    /// Its search-space items, each with its own `spec-decoding` label.
    pub points: Vec<SearchPoint>,
    /// Every `additional-settings` assignment of this scenario has a scope
    /// whose path starts with this.
    pub settings_path: String,
}

/// One item of a scenario's search space.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchPoint {
    /// The scope path prefix of this item's `additional-settings` (its
    /// `prefill`/`decode` blocks' settings too).
    pub settings_path: String,
    /// Its own `spec-decoding` label (`none` when it omits it): the runner
    /// picks the `_mtp` script and the label per item, never from a sibling.
    pub spec_decoding: String,
}

/// One config key of a master config.
#[derive(Debug, Clone, PartialEq)]
pub struct MasterEntry {
    pub key: String,
    /// image, model, model prefix, precision, framework, runner, SKU (`hw`), multinode.
    pub meta: JobMeta,
    pub scenarios: Vec<ScenarioEntry>,
    /// The `image:` line.
    pub image_at: Provenance,
}

/// The config entries of a YAML document set (none unless it is a master config).
pub(super) fn read<'y>(file: &FileRef, lines: &LineIndex, docs: &'y [MarkedYaml<'y>]) -> Vec<MasterEntry> {
    let mut out = Vec::new();
    for doc in docs {
        for (key, node) in entries(doc, 0) {
            let fields = entries(node, 0);
            let get = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
            let scalar = |name: &str| get(name).and_then(scalar_text).filter(|s| !s.is_empty());
            let (Some(image), Some(framework), Some(image_node)) = (scalar("image"), scalar("framework"), get("image")) else { continue };
            let runner = scalar("runner");
            let meta = JobMeta {
                model: scalar("model"),
                model_prefix: scalar("model-prefix"),
                precision: scalar("precision"),
                framework: Some(framework),
                hw: runner.as_deref().map(sku_of),
                image: Some(image),
                runner,
                multinode: get("multinode").and_then(py_scalar).and_then(|p| p.to_json().as_bool()),
                ..JobMeta::default()
            };
            let line = image_node.span.start.line();
            let (offset, text) = lines.line(line);
            let mut scenarios = get("scenarios").map(|s| scenarios(&key, s)).unwrap_or_default();
            if scenarios.is_empty() {
                let settings_path = settings_path(std::slice::from_ref(&key)) + ".";
                scenarios.push(ScenarioEntry { scenario: None, points: Vec::new(), settings_path });
            }
            out.push(MasterEntry { key, meta, scenarios, image_at: Provenance::at_line(file, line as u64, offset, text.trim()) });
        }
    }
    out
}

/// The SKU of a runner label: the first dash-token after an optional `cluster:`.
fn sku_of(runner: &str) -> String {
    let label = runner.strip_prefix("cluster:").unwrap_or(runner);
    label.split('-').next().unwrap_or(label).to_ascii_lowercase()
}

fn scenarios(key: &str, node: &MarkedYaml) -> Vec<ScenarioEntry> {
    entries(node, 0)
        .into_iter()
        .filter_map(|(name, items)| {
            let scenario = Scenario::parse(&name)?;
            let settings_path = settings_path(&[key.to_string(), "scenarios".to_string(), name.clone()]) + ".";
            let mut points = Vec::new();
            for (i, item) in sequence(items).enumerate() {
                for (_, space) in entries(item, 0).into_iter().filter(|(k, _)| k == "search-space") {
                    for (j, point) in sequence(space).enumerate() {
                        let label = entries(point, 0).into_iter().find(|(k, _)| k == "spec-decoding").and_then(|(_, v)| scalar_text(v));
                        points.push(SearchPoint {
                            settings_path: format!("{settings_path}{i}.search-space.{j}"),
                            spec_decoding: label.unwrap_or_else(|| "none".to_string()),
                        });
                    }
                }
            }
            Some(ScenarioEntry { scenario: Some(scenario), points, settings_path })
        })
        .collect()
}

fn sequence<'y>(node: &'y MarkedYaml<'y>) -> impl Iterator<Item = &'y MarkedYaml<'y>> {
    match &node.data {
        YamlData::Sequence(items) => items.iter(),
        _ => [].iter(),
    }
}

#[cfg(test)]
mod tests {
    use crate::evidence::meta::Scenario;
    use crate::evidence::provenance::FileRef;
    use crate::evidence::yaml::env::scan;

    #[test]
    fn entries_with_scenarios_and_settings_scopes() {
        let text = r#"
dsv4-fp4-gb200-dynamo-sglang-agentic:
  image: lmsysorg/sglang:v0.5.16-cu130
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: cluster:gb200-nv
  precision: fp4
  framework: dynamo-sglang
  multinode: true
  scenarios:
    agentic-coding:
    - search-space:
      - { spec-decoding: none, conc-list: [1] }
      - spec-decoding: mtp
        additional-settings:
        - "CONFIG_FILE=recipes/sglang/dsv4/x.yaml"
        - "SYNTHETIC_ACCEPTANCE=true"
not-an-entry:
  model: x
no-scenarios:
  image: vllm/vllm-openai:v1
  framework: vllm
  scenarios: 5
"#;
        let y = scan(&FileRef { path: "configs/nvidia-master.yaml".into(), artifact: None }, text).unwrap();
        assert_eq!(y.master.len(), 2);
        assert_eq!(y.master[1].scenarios[0].scenario, None, "still a config: its image is judged");
        let e = &y.master[0];
        assert_eq!((e.meta.hw.as_deref(), e.meta.multinode, e.meta.model_prefix.as_deref()), (Some("gb200"), Some(true), Some("dsv4")));
        assert_eq!(e.image_at.line, Some(3));
        assert_eq!(e.scenarios.len(), 1);
        assert_eq!(e.scenarios[0].scenario, Some(Scenario::AgenticCoding));
        let labels: Vec<&str> = e.scenarios[0].points.iter().map(|p| p.spec_decoding.as_str()).collect();
        assert_eq!(labels, ["none", "mtp"], "each item keeps its own label");
        let settings: Vec<_> =
            y.env.iter().filter(|a| a.scope.settings_path().is_some_and(|p| p.starts_with(&e.scenarios[0].settings_path))).map(|a| a.name.as_str()).collect();
        assert_eq!(settings, ["CONFIG_FILE", "SYNTHETIC_ACCEPTANCE"]);
    }
}
