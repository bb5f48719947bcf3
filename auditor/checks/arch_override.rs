//! `arch-override`: no change to the model's architecture or FLOPs through
//! the engine: vLLM `--hf-overrides` / `hf_overrides`, SGLang
//! `--json-model-override-args` / `json_model_override_args` (a non-empty
//! object). The finding quotes the exact flag and value and says what the
//! overridden keys change.

use super::simulation::text;
use super::{CheckResult, Context};
use crate::evidence::facts::json_arg;
use crate::finding::{Finding, Severity};
use crate::policy::Section;
use crate::policy::sections::NoSettings;
use serde_json::Value;

const ID: &str = "arch-override";

pub const RULES: &[(&str, &str)] = &[("arch-override/config-override", "the engine overrides the model's config (hf_overrides, json_model_override_args)")];

/// What overriding a config key changes, for the keys seen in practice.
fn effect(key: &str) -> &'static str {
    match key {
        "index_topk_freq" | "use_index_cache" => {
            "reuses the sparse-attention indexer across layers, skipping it on most layers (fewer FLOPs than the native model)"
        }
        "num_hidden_layers" | "num_layers" => "changes the number of layers",
        "num_experts_per_tok" | "moe_topk" | "n_routed_experts" | "num_experts" => "changes the routed experts",
        "num_nextn_predict_layers" => "changes the number of MTP (draft) layers",
        "max_position_embeddings" | "rope_scaling" => "changes the context length or position encoding",
        "quantization_config" => "changes how the checkpoint's weights are read",
        _ => "changes the model configuration",
    }
}

/// Leaf keys of an override object (`text_config.index_topk_freq`).
fn leaves(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                if v.is_object() { leaves(v, &path, out) } else { out.push(path) }
            }
        }
        _ if !prefix.is_empty() => out.push(prefix.to_string()),
        _ => {}
    }
}

pub fn run(ctx: &Context, settings: &Section<NoSettings>) -> CheckResult {
    let mut findings = Vec::new();
    let mut examined = 0;
    for job in ctx.jobs {
        let facts = &job.facts;
        if facts.server_args.is_empty() {
            continue;
        }
        examined += 1;
        let serving = facts.serving();
        for (fact, flag) in [(serving.hf_overrides, "--hf-overrides"), (serving.json_model_override_args, "--json-model-override-args")] {
            let Some(fact) = fact else { continue };
            let value = json_arg(&fact.value).unwrap_or_else(|| fact.value.clone());
            let empty = match &value {
                Value::Object(m) => m.is_empty(),
                Value::String(s) => s.trim().is_empty(),
                Value::Null => true,
                _ => false,
            };
            if empty {
                continue;
            }
            let mut keys = Vec::new();
            leaves(&value, "", &mut keys);
            let effects: Vec<String> = keys.iter().map(|k| format!("{k}: {}", effect(k.rsplit('.').next().unwrap_or(k)))).collect();
            findings.push(Finding::new(
                "arch-override/config-override",
                Severity::Error,
                format!("{flag} {} ({}) overrides the model config: {}", text(&value), fact.from, effects.join("; ")),
                job.id(),
                fact.provenance.clone().into_iter().collect(),
            ));
        }
    }
    // What the signature rules found in scripts and recipes: config.json
    // edits always, override flags only for a job whose engine arguments did
    // not already show them (the finding above is the better evidence).
    let mut seen_files = std::collections::BTreeSet::new();
    for job in ctx.jobs {
        let judged_args = findings.iter().any(|f| f.job.as_deref() == job.id());
        for file in &job.files {
            seen_files.insert((job.bundle.as_str(), file.path.as_str()));
            for found in file.signatures.iter().filter(|f| f.rule.starts_with("arch-override/")) {
                let flag_rule = matches!(found.rule.as_str(), "arch-override/hf-overrides" | "arch-override/json-model-override-args");
                let seen = findings.iter().any(|f| f.fingerprint == found.fingerprint);
                if !(flag_rule && judged_args || seen) {
                    findings.push(Finding { job: job.id().map(str::to_string), ..found.clone() });
                }
            }
        }
    }
    let files = seen_files.len();
    if examined == 0 && files == 0 {
        return CheckResult::not_applicable(ID, settings, "no server arguments, launch commands or files in the input");
    }
    CheckResult::from_findings(
        ID,
        settings,
        findings,
        format!("no architecture override in the engine arguments of {examined} job(s) or in {files} file(s)"),
        "the model architecture is overridden".to_string(),
    )
}
