//! `draft-precision`: the draft runs as it ships (InferenceX CONTRIBUTING.md#draft-model-precision, verifier
//! Check 13): no draft quantization (an explicit SGLang
//! `--speculative-draft-model-quantization`, or a logged value other than the
//! target's, which 0.5.2x inherits by default; vLLM speculative_config
//! `quantization`), no draft dtype or KV-cache dtype override, no substituted
//! draft checkpoint (a bundled MTP/DSpark head is served from the model path;
//! a standalone draft is one the policy agrees), no load-time casts of draft
//! weights (`SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE`, `SGLANG_GLM_NEXTN_MOE_PTPC`,
//! from any source), and an ATOM online quantization that excludes the draft.
//! With `--checkpoint DIR`, the shipped dtypes of the draft tensors are read
//! from safetensors headers and shown beside the effective precision.

use super::{AuditedJob, CheckResult, Context};
use crate::evidence::engine::Engine;
use crate::evidence::knobs::Meaning;
use crate::facts::json_arg;
use crate::facts::simulation::text;
use crate::finding::{Finding, Severity};
use crate::policy::Section;
use crate::policy::sections::DraftPrecision;
use crate::provenance::Provenance;
use serde_json::Value;

const ID: &str = "draft-precision";

pub const RULES: &[(&str, &str)] = &[
    ("draft-precision/quantized-draft", "the draft model is quantized below its shipped precision"),
    ("draft-precision/kv-dtype", "the draft's KV-cache dtype differs from the target's"),
    ("draft-precision/dtype", "the draft's dtype is overridden"),
    ("draft-precision/substituted-draft", "the draft checkpoint is not the shipped head or an agreed draft"),
    ("draft-precision/undetermined", "the draft checkpoint comes from a value the input does not show"),
    ("draft-precision/unlisted-draft", "a standalone draft for a target no agreed draft or model-list row names (warning)"),
    ("draft-precision/known-draft", "the draft checkpoint is one the benchmark's own model list (MODELS.md) agrees for the target"),
    ("draft-precision/load-time-cast", "an engine variable casts the draft's weights at load time"),
    ("draft-precision/online-quant", "ATOM online quantization does not exclude the draft"),
    ("draft-precision/shipped-vs-effective", "the draft's shipped and effective precision side by side"),
];

pub fn run(ctx: &Context, settings: &Section<DraftPrecision>) -> CheckResult {
    let jobs: Vec<&AuditedJob> = ctx.jobs.iter().filter(|j| j.facts.speculative.method.is_some()).collect();
    if jobs.is_empty() {
        return CheckResult::not_applicable(ID, settings, "no job runs speculative decoding");
    }
    let mut findings = Vec::new();
    for job in &jobs {
        judge(ctx, settings, job, &mut findings);
    }
    let mut failing: Vec<_> = findings.iter().filter(|f| f.severity == Severity::Error).filter_map(|f| f.job.clone()).collect();
    failing.sort();
    failing.dedup();
    let n = jobs.len();
    CheckResult::from_findings(
        ID,
        settings,
        findings,
        format!("the draft runs as shipped in {n} spec-decode job(s)"),
        format!("the draft does not run as shipped in {} of {n} spec-decode job(s)", failing.len()),
    )
}

/// Whether two dtype names mean the same (`auto`/none follow the target).
fn same_dtype(draft: &str, target: Option<&str>) -> bool {
    let d = draft.to_ascii_lowercase();
    d == "auto" || d.is_empty() || target.is_some_and(|t| t.eq_ignore_ascii_case(&d))
}

fn judge(ctx: &Context, settings: &Section<DraftPrecision>, job: &AuditedJob, findings: &mut Vec<Finding>) {
    let facts = &job.facts;
    let spec = &facts.speculative;
    let id = job.id();
    let mut push = |rule: &str, severity, message: String, evidence: Vec<Provenance>| findings.push(Finding::new(rule, severity, message, id, evidence));
    let serving = &facts.summary;
    let target_quant = serving.quantization.as_ref().map(|f| text(&f.value));
    let mut effective: Vec<String> = Vec::new();

    // Draft quantization: explicit on the command line, or different from the target's.
    let explicit = facts.command_args.get("speculative_draft_model_quantization").filter(|v| !v.is_null());
    if let Some(fact) = spec.draft_quantization.as_ref().filter(|f| !f.value.is_null()) {
        let value = text(&fact.value);
        let inherited = explicit.is_none() && target_quant.as_deref() == Some(value.as_str()) && facts.engine == Some(Engine::Sglang);
        if !inherited {
            let how = if explicit.is_some() { "set explicitly" } else { "different from the target's quantization" };
            push(
                "draft-precision/quantized-draft",
                Severity::Error,
                format!(
                    "draft quantization {value} ({}, {how}; target {}): the draft must run at its shipped precision",
                    fact.from,
                    target_quant.clone().unwrap_or_else(|| "unquantized".into())
                ),
                fact.provenance.clone().into_iter().collect(),
            );
            effective.push(format!("quantized {value}"));
        }
    }
    let target_kv = serving.kv_cache_dtype.as_ref().map(|f| text(&f.value));
    if let Some(fact) = spec.draft_kv_cache_dtype.as_ref().filter(|f| !f.value.is_null()) {
        let value = text(&fact.value);
        if !same_dtype(&value, target_kv.as_deref()) {
            push(
                "draft-precision/kv-dtype",
                Severity::Error,
                format!(
                    "draft KV cache dtype {value} ({}) differs from the target's {}: it must be inherited",
                    fact.from,
                    target_kv.clone().unwrap_or_else(|| "default".into())
                ),
                fact.provenance.clone().into_iter().collect(),
            );
            effective.push(format!("KV cache {value}"));
        }
    }
    if let Some(fact) = spec.draft_dtype.as_ref().filter(|f| !f.value.is_null() && !same_dtype(&text(&f.value), None)) {
        push(
            "draft-precision/dtype",
            Severity::Error,
            format!("draft dtype overridden to {} ({})", text(&fact.value), fact.from),
            fact.provenance.clone().into_iter().collect(),
        );
        effective.push(format!("dtype {}", text(&fact.value)));
    }

    // The draft checkpoint: the model's own head, or an agreed standalone draft.
    let prefix = job.job.meta.model_prefix.clone().unwrap_or_default();
    let model = serving.model.as_ref().map(|f| text(&f.value)).unwrap_or_default();
    if let Some(fact) = spec.draft_model.as_ref().filter(|f| !f.value.is_null()) {
        let draft = text(&fact.value);
        let bundled = normalise_path(&draft) == normalise_path(&model);
        let agreed = settings.agreed_drafts.get(&prefix).into_iter().flatten().any(|repo| same_checkpoint(&draft, repo));
        // The benchmark's own model list names it for this target (by prefix, or by the target's name when no entry gives the prefix).
        let listed = ctx.references.known_drafts.iter().find(|row| {
            let for_target = match (&row.prefix, prefix.is_empty()) {
                (Some(p), false) => *p == prefix,
                _ => row.names_target(&model) || serving.served_model_name.as_ref().is_some_and(|f| row.names_target(&text(&f.value))),
            };
            for_target && row.drafts.iter().any(|repo| same_checkpoint(&draft, repo))
        });
        if let (Some(row), false) = (listed, bundled || agreed) {
            push(
                "draft-precision/known-draft",
                Severity::Info,
                format!("draft checkpoint {draft} is the agreed draft for {} in the model list", row.model),
                vec![row.provenance.clone()],
            );
        }
        let allowed: Vec<&str> = settings.agreed_drafts.get(&prefix).map(|v| v.iter().map(String::as_str).collect()).unwrap_or_default();
        // The checkpoint is named by its last path part: one the input does not show cannot be judged.
        let unshown = draft.rsplit('/').next().is_some_and(|name| name.contains('$'));
        // Neither the policy nor the model list names any draft for this target: nothing to hold a standalone draft to.
        let unlisted = !prefix.is_empty()
            && allowed.is_empty()
            && !ctx.references.known_drafts.iter().any(|row| row.prefix.as_deref() == Some(prefix.as_str()) && !row.drafts.is_empty());
        let standalone = draft.contains('/') && !bundled;
        if unshown && !bundled && !agreed && listed.is_none() {
            push(
                "draft-precision/undetermined",
                job.open_severity(),
                format!("draft checkpoint {draft} ({}) comes from a value the input does not show: which checkpoint runs cannot be judged", fact.from),
                fact.provenance.clone().into_iter().collect(),
            );
        } else if !bundled && !agreed && listed.is_none() && unlisted && standalone {
            push(
                "draft-precision/unlisted-draft",
                Severity::Warning,
                format!(
                    "draft checkpoint {draft} ({}) is a standalone draft, and neither the policy's agreed drafts nor the model list name one for {prefix}: whether it is the one the golden curve was measured with is for the reviewer",
                    fact.from
                ),
                fact.provenance.clone().into_iter().collect(),
            );
        } else if !bundled && !agreed && listed.is_none() {
            let expected = if allowed.is_empty() {
                "the model's own draft head (the model path)".to_string()
            } else {
                format!("the model path or an agreed draft ({})", allowed.join(", "))
            };
            push(
                "draft-precision/substituted-draft",
                Severity::Error,
                format!("draft checkpoint {draft} ({}) is not {expected}", fact.from),
                fact.provenance.clone().into_iter().collect(),
            );
        }
    }

    // Load-time casts of draft weights, from any source the bundle shows.
    let env: Vec<_> = job.files.iter().flat_map(|f| f.env.iter().cloned()).filter(|a| !a.client).collect();
    for name in &settings.precision_env {
        let enabled: Vec<_> = ctx
            .catalog
            .resolve(&env, name)
            .into_iter()
            .map(|r| r.assignment)
            .filter(|a| ctx.catalog.meaning(&a.name, a.value.as_deref().unwrap_or_default()) == Meaning::Bool(true))
            .collect();
        if let Some(first) = enabled.first() {
            let doc = ctx.catalog.var(name).map(|v| v.doc.clone()).unwrap_or_default();
            let message = format!("{}={} is in effect: {doc}", first.name, first.value.as_deref().unwrap_or_default());
            // One variable, one report: when forbidden-env forbids it, that check fails it.
            let (severity, message) =
                if ctx.forbids(name) { (Severity::Info, format!("{message} (failed by forbidden-env)")) } else { (Severity::Error, message) };
            push("draft-precision/load-time-cast", severity, message, enabled.iter().map(|a| a.provenance.clone()).collect());
            effective.push(format!("{name} cast"));
        }
    }

    // ATOM online quantization must exclude the whole draft head.
    if let Some(config) = facts.server_args.get("online_quant_config") {
        let config = json_arg(config).unwrap_or(Value::Null);
        let excludes: Vec<String> = config.get("exclude_layer").and_then(Value::as_array).map(|a| a.iter().map(text).collect()).unwrap_or_default();
        let covers_draft = excludes.iter().any(|p| ["mtp", "nextn", "draft", "eagle"].iter().any(|k| p.to_ascii_lowercase().contains(k)));
        if !covers_draft {
            let provenance = facts.arg_provenance("online_quant_config").cloned().or_else(|| serving.model.as_ref().and_then(|f| f.provenance.clone()));
            push(
                "draft-precision/online-quant",
                Severity::Error,
                format!(
                    "online_quant_config {} quantizes the model online and its exclude_layer {excludes:?} does not name the draft (mtp) layers",
                    text(&config)
                ),
                provenance.into_iter().collect(),
            );
        }
    }

    if let Some(shipped) = &ctx.references.checkpoint {
        let effective = if effective.is_empty() { "as shipped".to_string() } else { effective.join(", ") };
        push(
            "draft-precision/shipped-vs-effective",
            Severity::Info,
            format!(
                "draft tensors ship as {} (checkpoint {}, quant_method {}); effective: {effective}",
                shipped.draft_summary(),
                shipped.dir,
                shipped.quant_method.clone().unwrap_or_else(|| "none".into())
            ),
            vec![],
        );
    }
}

fn normalise_path(path: &str) -> String {
    path.trim_end_matches('/').to_ascii_lowercase()
}

/// A local path or hub id names the same checkpoint as a hub repo when its
/// last component is the repo's name (equal ids, and paths ending in the
/// repo id, are such).
fn same_checkpoint(path: &str, repo: &str) -> bool {
    let (p, r) = (normalise_path(path), normalise_path(repo));
    p.rsplit('/').next() == r.rsplit('/').next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_names() {
        assert!(same_checkpoint("/data/models/MiniMax-M3-EAGLE3-GQA", "Inferact/MiniMax-M3-EAGLE3-GQA"));
        assert!(same_checkpoint("Inferact/Kimi-K3-DSpark", "inferact/kimi-k3-dspark"));
        assert!(!same_checkpoint("/data/models/MiniMax-M3-EAGLE3-GQA-fp8", "Inferact/MiniMax-M3-EAGLE3-GQA"));
        assert!(same_dtype("auto", Some("fp8")) && same_dtype("FP8", Some("fp8")) && !same_dtype("fp8_e4m3", Some("bf16")));
    }
}
