//! Eval results as the harnesses write them: lm-eval `results*.json`
//! (`results.<task>.<metric>,<filter>` with `<metric>_stderr,<filter>`),
//! SWE-bench reports (`resolved_instances` / `total_instances`), and the
//! batch bookkeeping of `meta_env.json` (`eval_concs`,
//! `completed_eval_concs`, `failed_eval_concs`).

use super::key_line;
use crate::evidence::provenance::{FileRef, Provenance};
use serde::Serialize;
use serde_json::Value;

/// One task score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalScore {
    pub task: String,
    /// `exact_match,strict-match`, `acc`, `resolved`.
    pub metric: String,
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<f64>,
    pub provenance: Provenance,
}

/// Score names in order of preference: strict or resolved exact match, then accuracy.
const PREFERENCE: [&str; 6] = ["exact_match,strict-match", "exact_match,none", "exact_match,flexible-extract", "acc,none", "acc_norm,none", "acc"];

/// The preferred score of every task of a results document.
pub fn scores(file: &FileRef, value: &Value, raw: &str) -> Vec<EvalScore> {
    let mut out = Vec::new();
    if let Some(results) = value.get("results").and_then(Value::as_object) {
        for (task, metrics) in results {
            let Some(metrics) = metrics.as_object() else { continue };
            let chosen = PREFERENCE.iter().find_map(|m| metrics.get(*m).and_then(Value::as_f64).map(|v| (*m, v)));
            let Some((metric, score)) = chosen else { continue };
            let stderr_key = match metric.split_once(',') {
                Some((name, filter)) => format!("{name}_stderr,{filter}"),
                None => format!("{metric}_stderr"),
            };
            let stderr = metrics.get(&stderr_key).and_then(Value::as_f64);
            let provenance = locate(file, raw, &["results", task, metric], format!("\"{metric}\": {score}"));
            out.push(EvalScore { task: task.clone(), metric: metric.to_string(), value: score, stderr, provenance });
        }
    }
    let resolved = value.get("resolved_instances").and_then(Value::as_f64);
    let total = value.get("total_instances").and_then(Value::as_f64).filter(|t| *t > 0.0);
    if let (Some(resolved), Some(total)) = (resolved, total) {
        let task = if file.path.contains("verified") { "swebench_verified" } else { "swebench_lite" };
        let text = format!("resolved_instances {resolved} of total_instances {total}");
        let provenance = locate(file, raw, &["resolved_instances"], text);
        out.push(EvalScore { task: task.to_string(), metric: "resolved".to_string(), value: resolved / total, stderr: None, provenance });
    }
    out
}

/// The batch bookkeeping of an eval payload: concurrencies that failed.
pub fn failed_concurrencies(value: &Value) -> Vec<u64> {
    value.get("failed_eval_concs").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

/// The evidence for the value at `path` (object keys from the document's
/// root): the line of its key in `raw`, so that two tasks of one file each
/// cite their own score, not the first line that names the metric.
fn locate(file: &FileRef, raw: &str, path: &[&str], text: String) -> Provenance {
    Provenance::new(file.path.clone(), key_line(raw, path), text).in_artifact(file.artifact.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lm_eval_prefers_strict_match_and_reads_stderr() {
        let raw = "{\n  \"results\": {\n    \"gsm8k\": {\n      \"exact_match,flexible-extract\": 0.96,\n      \"exact_match,strict-match\": 0.95,\n      \"exact_match_stderr,strict-match\": 0.006\n    }\n  }\n}";
        let v: Value = serde_json::from_str(raw).unwrap();
        let s = scores(&FileRef::default(), &v, raw);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].task.as_str(), s[0].metric.as_str(), s[0].value, s[0].stderr), ("gsm8k", "exact_match,strict-match", 0.95, Some(0.006)));
        assert_eq!(s[0].provenance.line, Some(5));
    }

    #[test]
    fn each_task_cites_the_line_of_its_own_score() {
        // the shape lm-eval writes: groups, two tasks with the same metric,
        // and the metric named again under higher_is_better
        let raw = r#"{
  "results": {
    "gsm8k": {
      "alias": "gsm8k",
      "exact_match,strict-match": 0.95,
      "exact_match_stderr,strict-match": 0.006
    },
    "gsm8k_cot": {
      "alias": "gsm8k \"cot\"",
      "exact_match,strict-match": 0.91,
      "exact_match_stderr,strict-match": 0.008
    }
  },
  "higher_is_better": {"gsm8k": {"exact_match": true}}
}"#;
        let v: Value = serde_json::from_str(raw).unwrap();
        let s = scores(&FileRef::default(), &v, raw);
        let lines: Vec<(&str, Option<u64>)> = s.iter().map(|s| (s.task.as_str(), s.provenance.line)).collect();
        assert_eq!(lines, [("gsm8k", Some(5)), ("gsm8k_cot", Some(10))]);
        // on one line, keys in strings and escaped quotes do not confuse it
        let flat = r#"{"note": "\"results\": {", "results": {"a\"b": {"acc": 0.5}}}"#;
        assert_eq!(key_line(flat, &["results", "a\"b", "acc"]), Some(1));
        assert_eq!(key_line(flat, &["results", "missing"]), None);
        assert_eq!(key_line("{\"x\": \"unterminated", &["y"]), None);
    }

    #[test]
    fn swebench_reports_and_failed_batches() {
        let v = serde_json::json!({"resolved_instances": 150, "total_instances": 300});
        let s = scores(&FileRef { path: "eval_x/swebench_report_lite.json".into(), artifact: None }, &v, &v.to_string());
        assert_eq!((s[0].task.as_str(), s[0].value), ("swebench_lite", 0.5));
        assert_eq!(failed_concurrencies(&serde_json::json!({"failed_eval_concs": [16]})), [16]);
    }
}
