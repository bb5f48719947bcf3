//! Job metadata written by the benchmark harness as JSON (`meta_env.json`
//! of eval payloads, the AgentX aggregate `<RF>.json`, fixed-seq
//! `agg_<RF>.json`): topology, model, image and scenario of a job.

use super::provenance::Provenance;
use serde::Serialize;
use serde_json::Value;

/// The benchmark scenario of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    AgenticCoding,
    FixedSeqLen,
}

impl Scenario {
    pub fn parse(text: &str) -> Option<Scenario> {
        match text {
            "agentic-coding" => Some(Scenario::AgenticCoding),
            "fixed-seq-len" => Some(Scenario::FixedSeqLen),
            _ => None,
        }
    }
}

/// What names and metadata files say about a job. Every field is optional:
/// only what the input shows is filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exp_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Tensor parallelism (of the decode role for multi-node jobs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp: Option<u32>,
    /// Expert parallelism (of the decode role for multi-node jobs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ep: Option<u32>,
    /// Concurrency levels (one for single-node jobs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conc: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_decoding: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipe_fingerprint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multinode: Option<bool>,
}

impl JobMeta {
    /// Fill the fields that are still empty from `other`.
    pub fn fill_from(&mut self, other: &JobMeta) {
        macro_rules! fill {
            ($($field:ident),*) => { $( if self.$field.is_none() { self.$field = other.$field.clone(); } )* };
        }
        fill!(exp_name, model_prefix, model, precision, framework, hw, image, tp, ep, spec_decoding, runner, recipe_fingerprint, multinode);
        if self.conc.is_empty() {
            self.conc = other.conc.clone();
        }
    }
}

/// Metadata read from one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    pub meta: JobMeta,
    pub scenario: Option<Scenario>,
    /// Where the image is written, when the document's lines are known
    /// (a master config's `image:` line).
    pub image_at: Option<Provenance>,
}

/// Read the harness fields of a JSON object; `None` if it has none of them.
pub fn from_json(value: &Value) -> Option<Metadata> {
    let obj = value.as_object()?;
    let text = |key: &str| obj.get(key).and_then(Value::as_str).filter(|s| !s.is_empty() && *s != "unknown").map(str::to_string);
    let number = |key: &str| obj.get(key).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
    let meta = JobMeta {
        model: text("model"),
        model_prefix: text("infmax_model_prefix"),
        precision: text("precision"),
        framework: text("framework"),
        hw: text("hw"),
        image: text("image"),
        tp: number("tp"),
        ep: number("ep"),
        conc: number("conc").into_iter().collect(),
        spec_decoding: text("spec_decoding"),
        recipe_fingerprint: text("recipe_fingerprint"),
        multinode: obj.get("is_multinode").and_then(Value::as_bool),
        ..JobMeta::default()
    };
    let scenario = text("scenario_type").as_deref().and_then(Scenario::parse);
    (meta != JobMeta::default() || scenario.is_some()).then_some(Metadata { meta, scenario, image_at: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_harness_fields() {
        let v: Value = serde_json::from_str(
            r#"{"tp": 4, "ep": 1, "conc": 16, "model": "m", "infmax_model_prefix": "unknown", "scenario_type": "agentic-coding", "is_multinode": false}"#,
        )
        .unwrap();
        let m = from_json(&v).unwrap();
        assert_eq!((m.meta.tp, m.meta.conc.as_slice(), m.meta.model_prefix), (Some(4), &[16][..], None));
        assert_eq!(m.scenario, Some(Scenario::AgenticCoding));
        assert_eq!(from_json(&serde_json::json!({"other": 1})), None);
        assert_eq!(from_json(&serde_json::json!([1])), None);
    }
}
