//! Eval pass thresholds (InferenceX `utils/evals/thresholds.yaml`):
//! `default: {task: min}` and `models: {prefix: {task: min}}`; a legacy flat
//! `{task: min}` mapping is the default table. Resolution: the model's entry,
//! then the default.

use saphyr::{LoadableYamlNode, Yaml};
use std::collections::BTreeMap;
use std::path::Path;

/// The thresholds shipped with the binary.
pub const EMBEDDED: &str = include_str!("../../policies/thresholds.yaml");

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thresholds {
    /// Where they came from, for messages.
    pub source: String,
    pub default: BTreeMap<String, f64>,
    pub models: BTreeMap<String, BTreeMap<String, f64>>,
}

/// Why a thresholds file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ThresholdsError {
    #[error("{path}: {source}")]
    Read { path: std::path::PathBuf, source: std::io::Error },
    #[error("{origin}: invalid thresholds: {message}")]
    Invalid { origin: String, message: String },
}

impl Thresholds {
    pub fn embedded() -> Thresholds {
        Thresholds::parse(EMBEDDED, "policies/thresholds.yaml").expect("embedded thresholds are valid")
    }

    pub fn load(path: &Path) -> Result<Thresholds, ThresholdsError> {
        let text = std::fs::read_to_string(path).map_err(|source| ThresholdsError::Read { path: path.to_path_buf(), source })?;
        Thresholds::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, source: &str) -> Result<Thresholds, ThresholdsError> {
        let invalid = |message: String| ThresholdsError::Invalid { origin: source.to_string(), message };
        let docs = Yaml::load_from_str(text).map_err(|e| invalid(e.to_string()))?;
        let Some(Yaml::Mapping(top)) = docs.first() else { return Err(invalid("not a mapping".to_string())) };
        let table = |node: &Yaml| -> Result<BTreeMap<String, f64>, ThresholdsError> {
            let Yaml::Mapping(map) = node else { return Err(invalid("expected task -> minimum score".to_string())) };
            map.iter()
                .map(|(k, v)| {
                    let task = k.as_str().ok_or_else(|| invalid("a task name is not a string".to_string()))?.to_string();
                    let min = v.as_floating_point().or_else(|| v.as_integer().map(|i| i as f64)).ok_or_else(|| invalid(format!("{task}: not a number")))?;
                    Ok((task, min))
                })
                .collect()
        };
        let get = |key: &str| top.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v);
        let mut out = Thresholds { source: source.to_string(), ..Thresholds::default() };
        match (get("default"), get("models")) {
            (None, None) => out.default = table(&Yaml::Mapping(top.clone()))?,
            (default, models) => {
                if let Some(d) = default {
                    out.default = table(d)?;
                }
                if let Some(Yaml::Mapping(models)) = models {
                    for (prefix, tasks) in models {
                        let prefix = prefix.as_str().ok_or_else(|| invalid("a model prefix is not a string".to_string()))?;
                        out.models.insert(prefix.to_string(), table(tasks)?);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The minimum for `task` of model `prefix`, and which entry gave it.
    pub fn minimum(&self, prefix: Option<&str>, task: &str) -> Option<(f64, String)> {
        if let Some(min) = prefix.and_then(|p| self.models.get(p)).and_then(|t| t.get(task)) {
            return Some((*min, format!("models.{}.{task}", prefix.unwrap_or_default())));
        }
        self.default.get(task).map(|min| (*min, format!("default.{task}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_then_default_then_legacy_flat() {
        let t = Thresholds::embedded();
        assert_eq!(t.minimum(Some("qwen3.5"), "gsm8k"), Some((0.94, "models.qwen3.5.gsm8k".into())));
        assert_eq!(t.minimum(Some("dsv41flash"), "gsm8k"), Some((0.90, "default.gsm8k".into())));
        assert_eq!(t.minimum(None, "nope"), None);
        let flat = Thresholds::parse("gsm8k: 0.8\n", "x").unwrap();
        assert_eq!(flat.minimum(Some("a"), "gsm8k").unwrap().0, 0.8);
        assert!(Thresholds::parse("default: {gsm8k: high}\n", "x").is_err());
    }
}
