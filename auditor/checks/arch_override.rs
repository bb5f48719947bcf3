//! `arch-override`: no change to the model's architecture or FLOPs through
//! the engine: vLLM `--hf-overrides` / `hf_overrides`, SGLang
//! `--json-model-override-args` / `json_model_override_args` (a non-empty
//! object). The finding quotes the exact flag and value and says what the
//! overridden keys change.

use super::{CheckResult, Context};
use crate::evidence::shell::actions::{ActionKind, ScriptAction};
use crate::facts::json_arg;
use crate::facts::simulation::text;
use crate::finding::{Finding, Severity};
use crate::policy::Section;
use crate::policy::sections::NoSettings;
use serde_json::Value;

const ID: &str = "arch-override";

pub const RULES: &[(&str, &str)] = &[
    ("arch-override/config-override", "the engine overrides the model's config (hf_overrides, json_model_override_args)"),
    ("arch-override/config-path", "vLLM reads the model's config from another place than the checkpoint (--hf-config-path)"),
];

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

/// Leaf keys of an override object (`text_config.index_topk_freq`); none
/// for a value that is not an object.
fn leaves(value: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(map) = value {
        for (k, v) in map {
            let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            if v.is_object() { leaves(v, &path, out) } else { out.push(path) }
        }
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
        let serving = &facts.summary;
        for (fact, flag) in [(serving.hf_overrides.as_ref(), "--hf-overrides"), (serving.json_model_override_args.as_ref(), "--json-model-override-args")] {
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
    // A config read from elsewhere than the checkpoint (an edited copy the
    // run writes, a directory of the tree): the architecture, layers and
    // experts the engine builds are that file's, whatever the checkpoint says.
    for job in ctx.jobs {
        let serving = &job.facts.summary;
        let Some(fact) = serving.hf_config_path.as_ref() else { continue };
        let path = text(&fact.value);
        let model = serving.model.as_ref().map(|m| text(&m.value));
        if path.trim().is_empty() || model.as_deref().is_some_and(|m| m.trim_end_matches('/') == path.trim_end_matches('/')) {
            continue;
        }
        findings.push(Finding::new(
            "arch-override/config-path",
            Severity::Error,
            format!(
                "--hf-config-path {path} ({}): vLLM builds the model from the config there instead of the checkpoint's{}; a config that differs changes the architecture served",
                fact.from,
                model.map(|m| format!(" ({m})")).unwrap_or_default()
            ),
            job.id(),
            fact.provenance.clone().into_iter().collect(),
        ));
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
    // Writes whose target the script names through a variable (a Python
    // heredoc's `json.dump(c, open(p, "w"))`, `ln -sf other.json $M/config.json`),
    // where no line pattern sees the file name.
    for job in ctx.jobs {
        for file in &job.files {
            for action in file.actions.iter().filter(|a| writes_config_json(a)) {
                let at = &action.provenance;
                let known = findings.iter().any(|f| f.rule == CONFIG_JSON && f.evidence.first().is_some_and(|e| e.file == at.file && e.line == at.line));
                if !known {
                    let target = action.target.as_deref().unwrap_or_default();
                    let message = format!("`{}` writes {target}: a model's config.json is replaced or edited before the server reads it", action.tool);
                    findings.push(Finding::new(CONFIG_JSON, Severity::Error, message, job.id(), vec![at.clone()]));
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

const CONFIG_JSON: &str = "arch-override/config-json-edit";

/// An edit, write or replacement of a file named `config.json`; a link to
/// another `config.json` (a view of the published checkpoint) is not one.
fn writes_config_json(action: &ScriptAction) -> bool {
    let named = action.target.as_deref().is_some_and(|t| t.rsplit('/').next() == Some("config.json"));
    let linked_as_is = action.tool == "ln" && action.sources.iter().any(|s| s.ends_with("/config.json") || s == "config.json");
    named && !linked_as_is && matches!(action.kind, ActionKind::InPlaceEdit | ActionKind::Overwrite | ActionKind::PythonWrite)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The finding says what each overridden key changes, nested keys by
    /// their path and judged by their last part.
    #[test]
    fn each_overridden_key_is_named_with_what_it_changes() {
        let value = json!({
            "num_hidden_layers": 30,
            "text_config": {"n_routed_experts": 64, "index_topk_freq": 4, "rope_scaling": {"factor": 2}},
            "num_nextn_predict_layers": 0,
            "max_position_embeddings": 8192,
            "quantization_config": null,
            "vocab_size": 1,
        });
        let mut keys = Vec::new();
        leaves(&value, "", &mut keys);
        let effects: Vec<(String, &str)> = keys.iter().map(|k| (k.clone(), effect(k.rsplit('.').next().unwrap_or(k)))).collect();
        let want = [
            ("max_position_embeddings", "changes the context length or position encoding"),
            ("num_hidden_layers", "changes the number of layers"),
            ("num_nextn_predict_layers", "changes the number of MTP (draft) layers"),
            ("quantization_config", "changes how the checkpoint's weights are read"),
            (
                "text_config.index_topk_freq",
                "reuses the sparse-attention indexer across layers, skipping it on most layers (fewer FLOPs than the native model)",
            ),
            ("text_config.n_routed_experts", "changes the routed experts"),
            ("text_config.rope_scaling.factor", "changes the model configuration"),
            ("vocab_size", "changes the model configuration"),
        ];
        assert_eq!(effects, want.map(|(k, e)| (k.to_string(), e)));
        for key in ["num_layers", "moe_topk", "num_experts_per_tok", "num_experts"] {
            assert_ne!(effect(key), "changes the model configuration", "{key}");
        }
        assert_eq!(effect("rope_scaling"), effect("max_position_embeddings"));
        let mut none = Vec::new();
        leaves(&json!("num_hidden_layers=2"), "", &mut none);
        assert!(none.is_empty(), "{none:?}");
    }
}
