//! Simulated-acceptance knobs of a job, in every engine's spelling: SGLang's
//! `SGLANG_SIMULATE_ACC_*` (and legacy `SGL_`), TensorRT-LLM's
//! `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`, vLLM's synthetic rejection
//! sampling, ATOM's acceptance length/rate, and the InferenceX runner's
//! `SYNTHETIC_ACCEPTANCE*` inputs. Shared by `sim-acc-throughput`,
//! `sim-acc-eval` and `golden-al`.

use super::AuditedJob;
use crate::evidence::engine::Engine;
use crate::evidence::knobs::{Catalog, Meaning};
use crate::facts::{Derivation, Fact};
use crate::jobs::JobKind;
use crate::provenance::Provenance;
use serde_json::Value;
use std::fmt;

/// One knob as found in a job.
#[derive(Debug, Clone)]
pub struct Knob {
    /// What kind of knob it is: checks decide on this, not on `setting`.
    pub kind: KnobKind,
    /// `SGLANG_SIMULATE_ACC_LEN=3.51`, `rejection_sample_method=synthetic`, ...
    pub setting: Shown,
    /// Whether the engine simulates acceptance because of it.
    pub in_effect: bool,
    /// Why it is or is not in effect.
    pub why: Shown,
    pub provenance: Option<Provenance>,
}

/// Text for a finding's message. It can only be displayed: checks decide
/// on a knob's `kind` and `in_effect`, never on how it reads.
#[derive(Debug, Clone)]
pub struct Shown(String);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which engine setting (or runner input) a knob is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobKind {
    /// `SGLANG_SIMULATE_ACC_LEN`: turns SGLang's simulation on.
    SglangLength,
    /// `SGLANG_SIMULATE_ACC_METHOD` / `_TOKEN_MODE`: shape a simulation the length turns on.
    SglangSetting,
    /// `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`.
    TrtllmForcedAccepted,
    /// `SYNTHETIC_ACCEPTANCE*`: inputs of the InferenceX runner's SA injector, not engine settings.
    RunnerInput,
    /// vLLM's synthetic rejection sampling and its target.
    VllmSynthetic,
    /// ATOM's forced acceptance rate or length.
    AtomForced,
}

const ENV_KNOBS: [(&str, KnobKind); 6] = [
    ("SGLANG_SIMULATE_ACC_LEN", KnobKind::SglangLength),
    ("SGLANG_SIMULATE_ACC_METHOD", KnobKind::SglangSetting),
    ("SGLANG_SIMULATE_ACC_TOKEN_MODE", KnobKind::SglangSetting),
    ("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS", KnobKind::TrtllmForcedAccepted),
    ("SYNTHETIC_ACCEPTANCE", KnobKind::RunnerInput),
    ("SYNTHETIC_ACCEPTANCE_LENGTH", KnobKind::RunnerInput),
];

/// Every simulated-acceptance knob the job's evidence shows.
pub fn knobs(job: &AuditedJob, catalog: &Catalog) -> Vec<Knob> {
    let env: Vec<_> = job.files.iter().flat_map(|f| f.env.iter().cloned()).filter(|a| !a.client).collect();
    // The runner's SA injector writes simulation into the recipe of every
    // job but an eval-only one when SYNTHETIC_ACCEPTANCE is `true`.
    let eval_only = job.job.kind == JobKind::EvalOnly;
    let injecting = !eval_only
        && catalog.resolve(&env, "SYNTHETIC_ACCEPTANCE").iter().any(|r| r.assignment.value.as_deref().is_some_and(|v| v.trim().eq_ignore_ascii_case("true")));
    let mut out = Vec::new();
    for (name, kind) in ENV_KNOBS {
        for r in catalog.resolve(&env, name) {
            let a = r.assignment;
            let value = a.value.clone().unwrap_or_default();
            let setting = format!("{}={value}", a.name);
            let (in_effect, why) = match kind {
                KnobKind::SglangLength => match catalog.meaning(&a.name, &value) {
                    Meaning::Number(n) if n >= 0.0 => (true, format!("SGLang simulates acceptance at AL {value}")),
                    Meaning::Number(_) => (false, "a negative value disables simulation".to_string()),
                    _ if a.expands => (true, "set from an expansion the bundle does not show; assumed in effect".to_string()),
                    _ => (false, "not a number: SGLang keeps the default (-1, off)".to_string()),
                },
                KnobKind::SglangSetting => {
                    let len_on = catalog.resolve(&env, "SGLANG_SIMULATE_ACC_LEN").iter().any(|l| {
                        l.assignment.provenance.file == a.provenance.file
                            && l.assignment.scope == a.scope
                            && matches!(catalog.meaning(&l.assignment.name, l.assignment.value.as_deref().unwrap_or("")), Meaning::Number(n) if n >= 0.0)
                    });
                    (len_on, if len_on { "part of the simulation settings".to_string() } else { "no effect without SGLANG_SIMULATE_ACC_LEN".to_string() })
                }
                KnobKind::TrtllmForcedAccepted => (true, "TensorRT-LLM forces the number of accepted draft tokens".to_string()),
                _ if injecting => (true, "an InferenceX runner input: the runner's SA injector writes simulated acceptance into the recipe".to_string()),
                _ if eval_only => (false, "an InferenceX runner input for the recipe injector, which does nothing on eval-only jobs".to_string()),
                _ => (false, "an InferenceX runner input for the recipe injector, which does nothing unless SYNTHETIC_ACCEPTANCE is true".to_string()),
            };
            out.push(Knob { kind, setting: Shown(setting), in_effect, why: Shown(why), provenance: Some(a.provenance.clone()) });
        }
    }
    let spec = &job.facts.speculative;
    let synthetic = spec.synthetic_rejection();
    let target = if synthetic {
        (KnobKind::VllmSynthetic, true, "vLLM's synthetic acceptance target")
    } else {
        (KnobKind::VllmSynthetic, false, "no effect unless rejection_sample_method is synthetic")
    };
    let facts = [
        (spec.rejection_sample_method.as_ref().filter(|_| synthetic), (KnobKind::VllmSynthetic, true, "vLLM accepts drafts by synthetic rejection sampling")),
        (spec.synthetic_acceptance_length.as_ref(), target),
        (spec.synthetic_acceptance_rates.as_ref(), target),
        (spec.acceptance_rate.as_ref(), (KnobKind::AtomForced, true, "ATOM forces the acceptance rate")),
    ];
    for (fact, (kind, in_effect, why)) in facts.into_iter().filter_map(|(f, how)| Some((f?, how))) {
        out.push(Knob { kind, setting: shown_fact(fact), in_effect, why: Shown(why.to_string()), provenance: fact.provenance.clone() });
    }
    if job.facts.engine == Some(Engine::Atom) {
        // An acceptance length ATOM was given, not one implied by a forced rate (that knob is listed above).
        if let Some(fact) = spec.simulated_al.as_ref().filter(|f| f.derivation == Derivation::AsWritten) {
            out.push(Knob {
                kind: KnobKind::AtomForced,
                setting: shown_fact(fact),
                in_effect: true,
                why: Shown("ATOM forces the acceptance length".to_string()),
                provenance: fact.provenance.clone(),
            });
        }
    }
    out
}

/// `from=value` of a fact, as a knob's setting.
fn shown_fact(fact: &Fact) -> Shown {
    Shown(format!("{}={}", fact.from, text(&fact.value)))
}

/// A JSON value as plain text (strings without quotes).
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
