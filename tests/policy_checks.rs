//! `arch-override`, `upstream-image` and `eval-threshold` on their sample
//! bundles: check id, status, rule and evidence.

mod common;

use common::*;
use serde_json::Value;

fn failing(bundle: &str, id: &str) -> Value {
    let out = audit(&[bundle, "--format", "json"]);
    assert_eq!(code(&out), 1, "{bundle}: {}", stdout(&out));
    let report = json(&out);
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
    assert_eq!(check["status"], "fail", "{bundle}");
    for other in report["checks"].as_array().unwrap().iter().filter(|c| c["id"] != id) {
        assert_ne!(other["status"], "fail", "{bundle}: only {id} fails, not {}", other["id"]);
    }
    check["findings"].as_array().unwrap().iter().find(|f| f["severity"] == "error").unwrap().clone()
}

#[test]
fn arch_override_names_the_flag_value_and_effect() {
    let f = failing("samples/bundles/arch-override-fail", "arch-override");
    assert_eq!(f["rule"], "arch-override/config-override");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("--json-model-override-args") && message.contains("index_topk_freq") && message.contains("skipping it on most layers"), "{message}");
    assert_eq!(f["evidence"][0]["text"], r#"json_model_override_args={"index_topk_freq": 4, "use_index_cache": true}"#);
    assert!(f["evidence"][0]["line"].as_u64().is_some());
}

#[test]
fn upstream_image_fails_a_vendor_rebuild_on_an_established_sku() {
    let f = failing("samples/bundles/upstream-image-fail", "upstream-image");
    assert_eq!(f["rule"], "upstream-image/not-upstream");
    assert!(f["message"].as_str().unwrap().contains("ghcr.io/acme-ai/sglang"));
    assert!(f["evidence"][0]["file"].as_str().unwrap().starts_with("bmk_agentic_"), "{f}");
}

#[test]
fn eval_threshold_shows_score_stderr_and_threshold() {
    let f = failing("samples/bundles/eval-threshold-fail", "eval-threshold");
    assert_eq!(f["rule"], "eval-threshold/below");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("0.8741") && message.contains("± 0.006") && message.contains("0.91") && message.contains("models.dsv4.gsm8k"), "{message}");
    assert!(f["evidence"][0]["line"].as_u64().unwrap() > 1);
}

#[test]
fn a_thresholds_file_replaces_the_embedded_one() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.yaml");
    std::fs::write(&path, "default:\n  gsm8k: 0.80\n").unwrap();
    let out = audit(&["samples/bundles/eval-threshold-fail", "--thresholds", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}
