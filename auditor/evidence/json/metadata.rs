//! Job metadata written by the benchmark harness as JSON (`meta_env.json`
//! of eval payloads, the AgentX aggregate `<RF>.json`, fixed-seq
//! `agg_<RF>.json`): topology, model, image and scenario of a job.

use super::key_line;
use crate::evidence::meta::{JobMeta, Metadata, Scenario};
use crate::evidence::provenance::{FileRef, Provenance};
use serde_json::Value;

/// Read the harness fields of a JSON object; `None` if it has none of
/// them. The image is placed at the line of its key in `raw`.
pub fn from_json(file: &FileRef, value: &Value, raw: &str) -> Option<Metadata> {
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
    let image_at = meta
        .image
        .as_ref()
        .map(|image| Provenance::new(file.path.clone(), key_line(raw, &["image"]), format!("\"image\": \"{image}\"")).in_artifact(file.artifact.clone()));
    (meta != JobMeta::default() || scenario.is_some()).then_some(Metadata { meta, scenario, image_at, runners: Vec::new(), started: Vec::new() })
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
        let m = from_json(&FileRef::default(), &v, "").unwrap();
        assert_eq!((m.meta.tp, m.meta.conc.as_slice(), m.meta.model_prefix), (Some(4), &[16][..], None));
        assert_eq!(m.scenario, Some(Scenario::AgenticCoding));
        assert_eq!(from_json(&FileRef::default(), &serde_json::json!({"other": 1}), ""), None);
        assert_eq!(from_json(&FileRef::default(), &serde_json::json!([1]), ""), None);
        // the image is placed at its key's line
        let raw = "{\n  \"tp\": 8,\n  \"image\": \"lmsysorg/sglang:v1\"\n}";
        let m = from_json(&FileRef::default(), &serde_json::from_str(raw).unwrap(), raw).unwrap();
        assert_eq!(m.image_at.map(|p| (p.line, p.text)), Some((Some(3), "\"image\": \"lmsysorg/sglang:v1\"".to_string())));
    }
}
