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
    /// Whether the process it is written for simulates acceptance because of it.
    pub in_effect: InEffect,
    /// Why it is or is not in effect.
    pub why: Shown,
    pub provenance: Option<Provenance>,
}

/// Whether something takes effect: yes, no, or not known from the input
/// (a value built from an expansion the input does not show).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InEffect {
    Yes,
    No,
    Unknown,
}

impl InEffect {
    fn from_bool(on: bool) -> Self {
        if on { InEffect::Yes } else { InEffect::No }
    }

    /// How a knob's state reads in a message.
    pub fn as_str(self) -> &'static str {
        match self {
            InEffect::Yes => "in effect",
            InEffect::No => "no effect",
            InEffect::Unknown => "not known",
        }
    }
}

/// Whether a job simulates acceptance: the one decision every check reads.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// Every knob the job's evidence shows, each judged in its own process.
    pub knobs: Vec<Knob>,
    /// Whether the engine that generates tokens simulates: yes when the
    /// facts show its simulation settings taking effect; not known when a
    /// knob's value comes from an expansion the input does not show.
    pub generating: InEffect,
}

impl Default for Simulation {
    fn default() -> Self {
        Simulation { knobs: Vec::new(), generating: InEffect::No }
    }
}

impl Simulation {
    /// Decide for `job`, whose facts are derived.
    pub fn decide(job: &AuditedJob, catalog: &Catalog) -> Simulation {
        let knobs = knobs(job, catalog);
        let engine = job.facts.speculative.simulated.as_ref().is_some_and(|f| f.value == true);
        let generating = match (engine, knobs.iter().any(|k| k.in_effect == InEffect::Unknown)) {
            (true, _) => InEffect::Yes,
            (false, true) => InEffect::Unknown,
            (false, false) => InEffect::No,
        };
        Simulation { knobs, generating }
    }

    /// Whether any process of the job simulates (what an eval must not do):
    /// the generating engine, or a knob in effect where it is written
    /// (another role's environment, a runner input).
    pub fn anywhere(&self) -> InEffect {
        match (self.generating, self.active().next().is_some()) {
            (InEffect::Yes, _) | (_, true) => InEffect::Yes,
            (InEffect::Unknown, false) => InEffect::Unknown,
            (InEffect::No, false) => InEffect::No,
        }
    }

    /// The knobs in effect where they are written.
    pub fn active(&self) -> impl Iterator<Item = &Knob> {
        self.knobs.iter().filter(|k| k.in_effect == InEffect::Yes)
    }
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
fn knobs(job: &AuditedJob, catalog: &Catalog) -> Vec<Knob> {
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
                    Meaning::Number(n) if n >= 0.0 => (InEffect::Yes, format!("SGLang simulates acceptance at AL {value}")),
                    Meaning::Number(_) => (InEffect::No, "a negative value disables simulation".to_string()),
                    _ if a.expands => (InEffect::Unknown, "set from an expansion the bundle does not show: whether SGLang simulates is not known".to_string()),
                    _ => (InEffect::No, "not a number: SGLang keeps the default (-1, off)".to_string()),
                },
                KnobKind::SglangSetting => {
                    let len_on = catalog.resolve(&env, "SGLANG_SIMULATE_ACC_LEN").iter().any(|l| {
                        l.assignment.provenance.file == a.provenance.file
                            && l.assignment.scope == a.scope
                            && matches!(catalog.meaning(&l.assignment.name, l.assignment.value.as_deref().unwrap_or("")), Meaning::Number(n) if n >= 0.0)
                    });
                    (
                        InEffect::from_bool(len_on),
                        if len_on { "part of the simulation settings".to_string() } else { "no effect without SGLANG_SIMULATE_ACC_LEN".to_string() },
                    )
                }
                KnobKind::TrtllmForcedAccepted => (InEffect::Yes, "TensorRT-LLM forces the number of accepted draft tokens".to_string()),
                _ if injecting => {
                    (InEffect::Yes, "an InferenceX runner input: the runner's SA injector writes simulated acceptance into the recipe".to_string())
                }
                _ if eval_only => (InEffect::No, "an InferenceX runner input for the recipe injector, which does nothing on eval-only jobs".to_string()),
                _ => (InEffect::No, "an InferenceX runner input for the recipe injector, which does nothing unless SYNTHETIC_ACCEPTANCE is true".to_string()),
            };
            out.push(Knob { kind, setting: Shown(setting), in_effect, why: Shown(why), provenance: Some(a.provenance.clone()) });
        }
    }
    let spec = &job.facts.speculative;
    let synthetic = spec.synthetic_rejection();
    let target = if synthetic {
        (KnobKind::VllmSynthetic, InEffect::Yes, "vLLM's synthetic acceptance target")
    } else {
        (KnobKind::VllmSynthetic, InEffect::No, "no effect unless rejection_sample_method is synthetic")
    };
    let facts = [
        (
            spec.rejection_sample_method.as_ref().filter(|_| synthetic),
            (KnobKind::VllmSynthetic, InEffect::Yes, "vLLM accepts drafts by synthetic rejection sampling"),
        ),
        (spec.synthetic_acceptance_length.as_ref(), target),
        (spec.synthetic_acceptance_rates.as_ref(), target),
        (spec.acceptance_rate.as_ref(), (KnobKind::AtomForced, InEffect::Yes, "ATOM forces the acceptance rate")),
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
                in_effect: InEffect::Yes,
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
