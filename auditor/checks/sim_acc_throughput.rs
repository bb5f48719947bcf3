//! `sim-acc-throughput`: every agentic throughput job that runs speculative
//! decoding simulates acceptance, with the settings that make the
//! simulation faithful (SGLang: `SGLANG_SIMULATE_ACC_METHOD=match-expected`
//! and `SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token`; vLLM: synthetic
//! rejection sampling with a target; TRT-LLM: forced accepted tokens; ATOM:
//! a forced length or rate). Simulation on a fixed-seq spec-decode config
//! fails unless the policy allows it (InferenceX review checklist, simulated-acceptance rules),
//! also when only the runner's `SYNTHETIC_ACCEPTANCE` input shows it. A
//! recipe's prefill role does not generate tokens and is not judged.

use super::{AuditedJob, CheckResult, Context};
use crate::evidence::engine::Engine;
use crate::facts::Fact;
use crate::facts::simulation::{InEffect, text};
use crate::finding::{Finding, Severity};
use crate::jobs::{JobKind, Scenario};
use crate::policy::Section;
use crate::policy::sections::SimAccThroughput;
use serde_json::Value;

const ID: &str = "sim-acc-throughput";

pub const RULES: &[(&str, &str)] = &[
    ("sim-acc-throughput/not-simulated", "an agentic spec-decode throughput job measures real acceptance instead of the golden AL"),
    ("sim-acc-throughput/method", "SGLang simulation does not use SGLANG_SIMULATE_ACC_METHOD=match-expected"),
    ("sim-acc-throughput/token-mode", "SGLang simulation does not use SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token"),
    ("sim-acc-throughput/no-drafting", "a job labelled speculative decoding runs without drafting"),
    ("sim-acc-throughput/fixed-seq", "simulation on a fixed-seq (non-agentic) spec-decode config"),
    ("sim-acc-throughput/simulated", "the job simulates acceptance as required"),
    ("sim-acc-throughput/undetermined", "what the job runs could not be determined from the bundle"),
];

pub fn run(ctx: &Context, settings: &Section<SimAccThroughput>) -> CheckResult {
    let jobs: Vec<&AuditedJob> = ctx.jobs.iter().filter(|j| j.job.kind == JobKind::Throughput && !j.job.informational()).collect();
    let mut findings = Vec::new();
    let mut judged = 0;
    for job in jobs {
        judged += usize::from(judge(settings, job, &mut findings));
    }
    if judged == 0 {
        return CheckResult::not_applicable(ID, settings, "no speculative-decoding throughput jobs in the input");
    }
    let failing = {
        let mut ids: Vec<_> = findings.iter().filter(|f| f.severity == Severity::Error && !f.is_undetermined()).filter_map(|f| f.job.clone()).collect();
        ids.sort();
        ids.dedup();
        ids.len()
    };
    let pass = format!("{judged} spec-decode throughput job(s) judged; agentic ones simulate acceptance as required");
    let fail = format!("{failing} of {judged} spec-decode throughput job(s) do not simulate acceptance as required");
    let open = format!("what some of {judged} spec-decode throughput job(s) run could not be determined");
    CheckResult::judged(ID, settings, findings, pass, fail, open)
}

/// Launch arguments that turn speculative decoding on.
const SPEC_ARGS: &[&str] =
    &["speculative_config", "speculative_algorithm", "speculative_model", "speculative_draft_model_path", "num_speculative_tokens", "method"];

/// Launch arguments that name a configuration file the engine reads its
/// other settings from.
const CONFIG_FILE_ARGS: &[&str] = &["extra_llm_api_options", "config"];

/// The knobs whose value the input does not show, for a message, and where they are set.
fn unknown_knobs(job: &AuditedJob) -> (String, Vec<crate::provenance::Provenance>) {
    let unknown: Vec<_> = job.simulation.knobs.iter().filter(|k| k.in_effect == InEffect::Unknown).collect();
    let shown: Vec<String> = unknown.iter().map(|k| format!("{} ({})", k.setting, k.why)).collect();
    (shown.join(", "), unknown.iter().filter_map(|k| k.provenance.clone()).collect())
}

/// Judge one job; false when it does not run (or claim) speculative decoding.
fn judge(settings: &Section<SimAccThroughput>, job: &AuditedJob, findings: &mut Vec<Finding>) -> bool {
    let facts = &job.facts;
    let spec = &facts.speculative;
    let labelled = job.job.meta.spec_decoding.as_deref().is_some_and(|s| s != "none");
    let drafting = spec.drafting();
    let id = job.id();
    let push = |findings: &mut Vec<Finding>, rule: &str, severity, message: String, evidence: Vec<_>| {
        let evidence = if evidence.is_empty() { job.anchor().into_iter().collect() } else { evidence };
        findings.push(Finding::new(rule, severity, message, id, evidence));
    };
    let open_severity = job.open_severity();
    if !drafting && !labelled {
        return false;
    }
    let active: Vec<_> = job.simulation.active().collect();
    let evidence: Vec<_> = active.iter().filter_map(|k| k.provenance.clone()).collect();
    let fixed_seq = job.job.scenario == Some(Scenario::FixedSeqLen);
    if fixed_seq && !active.is_empty() && !settings.allow_fixed_seq_simulation {
        let what: Vec<String> = active.iter().map(|k| k.setting.to_string()).collect();
        push(
            findings,
            "sim-acc-throughput/fixed-seq",
            Severity::Error,
            format!(
                "fixed-seq spec-decode job simulates acceptance ({}): fixed-seq runs must show real acceptance unless the policy allows an exception",
                what.join(", ")
            ),
            evidence.clone(),
        );
    }
    // A knob whose value the input does not show: whether the fixed-seq run
    // simulates is not known, never a silent pass.
    if fixed_seq && active.is_empty() && job.simulation.generating == InEffect::Unknown && !settings.allow_fixed_seq_simulation {
        let (shown, at) = unknown_knobs(job);
        push(
            findings,
            "sim-acc-throughput/undetermined",
            open_severity,
            format!("fixed-seq spec-decode job; whether it simulates acceptance is not known: {shown}"),
            at,
        );
    }
    if !drafting {
        let label = job.job.meta.spec_decoding.clone().unwrap_or_default();
        // A launch that reads its settings from a file (TRT-LLM's
        // --extra_llm_api_options / --config YAML) may draft from there.
        let config_file = CONFIG_FILE_ARGS.iter().find_map(|k| facts.server_args.get(*k)).map(text);
        // A speculative flag whose value the script builds from what the
        // input does not show: the launch may draft.
        let unresolved =
            SPEC_ARGS.iter().find_map(|k| facts.server_args.get(*k).and_then(Value::as_str).filter(|v| v.contains('$')).map(|v| (*k, v.to_string())));
        if facts.server_args.is_empty() {
            let why = match job.absence_caveat() {
                Some(caveat) => format!("{caveat}, so what runs is not known"),
                None => "the input shows no server arguments or launch command to tell what runs".to_string(),
            };
            push(findings, "sim-acc-throughput/undetermined", open_severity, format!("labelled spec-decoding {label}, but {why}"), vec![]);
        } else if let Some(stop) = facts.server_args_sources.iter().find(|s| s.kind == "command" && !s.complete).and_then(|s| s.stop.clone()) {
            push(
                findings,
                "sim-acc-throughput/undetermined",
                open_severity,
                format!("labelled spec-decoding {label}; no speculative flag is shown, but {stop}"),
                vec![],
            );
        } else if let Some((field, value)) = unresolved {
            push(
                findings,
                "sim-acc-throughput/undetermined",
                open_severity,
                format!("labelled spec-decoding {label}; the launch passes {field} {value}, a value the input does not show"),
                vec![],
            );
        } else if let (Some(file), Some(engine)) = (config_file, facts.engine.filter(|e| *e == Engine::Trtllm)) {
            push(
                findings,
                "sim-acc-throughput/undetermined",
                open_severity,
                format!("labelled spec-decoding {label}; the {engine} launch reads its speculative settings from {file}, which the input does not show parsed"),
                vec![],
            );
        } else {
            let evidence = facts.server_args_sources.first().map(|s| crate::provenance::Provenance::new(s.file.clone(), s.line, s.kind.clone()));
            push(
                findings,
                "sim-acc-throughput/no-drafting",
                Severity::Error,
                format!("labelled spec-decoding {label}, but the server runs without speculative decoding"),
                evidence.into_iter().collect(),
            );
        }
        return true;
    }
    match job.job.scenario {
        Some(Scenario::FixedSeqLen) => return true,
        None => {
            push(
                findings,
                "sim-acc-throughput/undetermined",
                open_severity,
                "runs speculative decoding, but neither names nor metadata say whether the job is agentic or fixed-seq".to_string(),
                vec![],
            );
            return true;
        }
        Some(Scenario::AgenticCoding) => {}
    }
    let method = spec.method.as_ref().map(|f| text(&f.value)).unwrap_or_default();
    if job.simulation.generating == InEffect::Unknown {
        let (shown, at) = unknown_knobs(job);
        push(
            findings,
            "sim-acc-throughput/undetermined",
            open_severity,
            format!("agentic throughput job runs {method} speculative decoding; whether it simulates acceptance at the golden AL is not known: {shown}"),
            at,
        );
        return true;
    }
    if job.simulation.generating == InEffect::No {
        let engine = facts.engine.map_or("unknown engine", Engine::as_str);
        let expected = match facts.engine {
            Some(Engine::Sglang) => {
                "SGLANG_SIMULATE_ACC_LEN=<golden AL> with SGLANG_SIMULATE_ACC_METHOD=match-expected and SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token"
            }
            Some(Engine::Vllm) => "speculative_config rejection_sample_method=synthetic with synthetic_acceptance_length=<golden AL>",
            Some(Engine::Trtllm) => "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=<golden AL - 1>",
            Some(Engine::Atom) => "--spec-decode-acceptance-length <golden AL> or --spec-decode-acceptance-rate <(AL-1)/K>",
            None => "the engine's simulated-acceptance settings",
        };
        let mut evidence: Vec<_> = active.iter().filter_map(|k| k.provenance.clone()).collect();
        evidence.extend(spec.method.as_ref().and_then(|f| f.provenance.clone()));
        let (rule, caveat) = match job.absence_caveat() {
            Some(c) => ("sim-acc-throughput/undetermined", format!(" — but {c}, so the settings may be there")),
            None => ("sim-acc-throughput/not-simulated", String::new()),
        };
        let severity = if rule.ends_with("/undetermined") { open_severity } else { Severity::Error };
        // Settings the bundle shows that do not reach the generating engine
        // (a recipe's prefill role when decode generates, or an unshown value).
        let shown = match active.is_empty() {
            true => "no simulated-acceptance setting in the bundle".to_string(),
            false => format!(
                "simulated-acceptance settings ({}) only where they do not reach the engine that generates tokens (another role's environment, or a value the input does not show)",
                active.iter().map(|k| k.setting.to_string()).collect::<Vec<_>>().join(", ")
            ),
        };
        push(
            findings,
            rule,
            severity,
            format!(
                "agentic throughput job runs {engine} {method} speculative decoding with {shown}; it must simulate acceptance at the golden AL: {expected}{caveat}"
            ),
            evidence,
        );
        return true;
    }
    if facts.engine == Some(Engine::Sglang) {
        let get = |fact: Option<&Fact>, default: &str| fact.map_or((default.to_string(), true), |f| (text(&f.value), false));
        let (method_value, _) = get(spec.simulate_method.as_ref(), "match-expected");
        if method_value != "match-expected" {
            push(
                findings,
                "sim-acc-throughput/method",
                Severity::Error,
                format!("SGLANG_SIMULATE_ACC_METHOD={method_value}: InferenceX requires match-expected"),
                spec.simulate_method.as_ref().and_then(|f| f.provenance.clone()).into_iter().collect(),
            );
        }
        let (mode, mode_default) = get(spec.simulate_token_mode.as_ref(), "fixed");
        if mode != "real-draft-token" && mode_default && job.absence_caveat().is_some() {
            let caveat = job.absence_caveat().unwrap_or_default();
            push(
                findings,
                "sim-acc-throughput/undetermined",
                open_severity,
                format!("SGLANG_SIMULATE_ACC_TOKEN_MODE is not in the examined files, but {caveat}"),
                vec![],
            );
        } else if mode != "real-draft-token" {
            let why = if mode_default {
                "SGLANG_SIMULATE_ACC_TOKEN_MODE is not set: SGLang's default is fixed (a fixed token id at accepted positions), and images before v0.5.16 ignore the variable".to_string()
            } else {
                format!("SGLANG_SIMULATE_ACC_TOKEN_MODE={mode}: InferenceX requires real-draft-token")
            };
            push(
                findings,
                "sim-acc-throughput/token-mode",
                Severity::Error,
                why,
                spec.simulate_token_mode.as_ref().and_then(|f| f.provenance.clone()).into_iter().collect(),
            );
        }
    }
    let al = spec.simulated_al.as_ref().map(|f| text(&f.value)).unwrap_or_else(|| "an unknown target".to_string());
    push(findings, "sim-acc-throughput/simulated", Severity::Info, format!("simulates acceptance at {al} ({method})"), evidence);
    true
}
