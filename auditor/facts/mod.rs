//! The facts stage: one typed model per job, derived once from its files'
//! evidence and read by every check. From the engine records (SGLang
//! ServerArgs, vLLM args/config), launch commands, recipe role configs (the
//! generation role's) and the effective environment of a job it derives
//! `server_args` (the engine's own names) and the `summary` and
//! `speculative` facts under one vocabulary for every engine, each with the
//! place it was read from; [`simulation`] decides whether the engine
//! simulates acceptance; [`view`] renders it all for `auditor evidence`.

pub mod paths;
pub mod simulation;
pub mod view;

use crate::evidence::FileEvidence;
use crate::evidence::args::launch::{self, LaunchArgs};
use crate::evidence::engine::Engine;
use crate::evidence::env::EnvAssignment;
use crate::evidence::knobs::{Catalog, Meaning};
use crate::evidence::log::startup::{EngineRecord, RecordKind};
use crate::evidence::provenance::Provenance;
use crate::evidence::shell::branches::Branch;
use crate::evidence::yaml::recipe::RoleConfig;
use crate::finding::Severity;
use crate::jobs::{Job, Unexamined};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A job with the evidence of its files and the facts derived from them.
#[derive(Debug, Clone)]
pub struct AuditedJob {
    /// The bundle path the job came from.
    pub bundle: String,
    pub job: Job,
    pub files: Vec<FileEvidence>,
    pub facts: Facts,
    /// Whether the job simulates acceptance, decided once from its facts.
    pub simulation: simulation::Simulation,
    /// Files of the job that were not (fully) examined: what is absent from
    /// the evidence may be in them.
    pub unexamined: Vec<Unexamined>,
}

impl AuditedJob {
    /// A job whose facts are not derived yet ([`AuditedJob::derive`]).
    pub fn new(bundle: &str, job: Job, files: Vec<FileEvidence>, unexamined: Vec<Unexamined>) -> Self {
        AuditedJob { bundle: bundle.to_string(), job, files, facts: Facts::default(), simulation: simulation::Simulation::default(), unexamined }
    }

    /// Derive the job's facts and decide its simulation, once, when its
    /// files and kind are final.
    pub fn derive(&mut self, catalog: &Catalog) {
        self.facts = derive(&self.files, catalog);
        self.simulation = simulation::Simulation::decide(self, catalog);
    }

    pub fn id(&self) -> Option<&str> {
        Some(self.job.id.as_str())
    }

    /// The severity of what a check cannot decide for this job: from static
    /// sources (a launch the reader cannot follow, a recipe no entry runs)
    /// it is for a reviewer to look at, a warning; from a run, an error.
    pub fn open_severity(&self) -> Severity {
        if self.job.from_sources { Severity::Warning } else { Severity::Error }
    }

    /// Where the job is defined, for a finding about what its files do not
    /// show: the master-config entry's `image:` line, else the first
    /// command of its first file, else that file's first line.
    pub fn anchor(&self) -> Option<crate::provenance::Provenance> {
        if let Some(at) = self.files.iter().find_map(|f| f.metadata.as_ref().and_then(|m| m.image_at.clone())) {
            return Some(at);
        }
        let file = self.files.first()?;
        let first_command = file.commands.iter().map(|c| c.provenance.clone()).min_by_key(|p| p.line);
        Some(first_command.unwrap_or_else(|| crate::provenance::Provenance::new(file.path.clone(), Some(1), "").in_artifact(file.artifact.clone())))
    }

    /// A conclusion from absence ("X is not set") is only sound when every
    /// file of the job was examined; this says which were not.
    pub fn absence_caveat(&self) -> Option<String> {
        (!self.unexamined.is_empty()).then(|| {
            let listed: Vec<String> = self.unexamined.iter().map(ToString::to_string).collect();
            format!("{} file(s) of this job were not examined ({})", listed.len(), listed.join(", "))
        })
    }
}

/// A derived fact and where it was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fact {
    pub value: Value,
    /// The field or variable it came from, e.g. `server_args.speculative_num_steps`.
    pub from: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The value depends on which arm of an `if`/`case` of a script runs:
    /// it is one arm's, and may not be paired with another fact's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// How the value follows from what the run wrote. Checks that judge or
    /// quote the written setting decide on this, never on `from`.
    #[serde(skip)]
    pub derivation: Derivation,
}

/// How a fact's value was computed from the setting the run wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Derivation {
    /// The value as written (numbers parsed, names normalised).
    #[default]
    AsWritten,
    /// TensorRT-LLM's forced number of accepted draft tokens, plus the bonus token.
    ForcedAcceptedPlusOne,
    /// ATOM's forced acceptance rate times the draft length, plus 1.
    RateTimesLengthPlusOne,
    /// vLLM's per-position synthetic acceptance rates summed, plus 1.
    SumOfRatesPlusOne,
    /// SGLang DFLASH's verify window minus 1.
    WindowMinusOne,
    /// The serving stack's default for requests that do not set their own
    /// (Dynamo's `DYN_DEFAULT_THINKING_MODE`): what the client sends is not shown.
    RequestDefault,
}

/// A JSON-valued argument as the engine reads it: text
/// (`--hf-overrides '{...}'`, a logged string) parsed, anything else as is;
/// `None` for text that is not JSON. The one place such values are parsed.
pub fn json_arg(value: &Value) -> Option<Value> {
    match value {
        Value::String(s) => serde_json::from_str(s).ok(),
        other => Some(other.clone()),
    }
}

/// Where part of `server_args` came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArgsSource {
    pub kind: String,
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The record closed; when it did not, `stop` says what is unknown.
    pub complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
}

/// Declares a struct of optional facts, one named field per fact, so that
/// a fact is read as `facts.speculative.draft_length` (a misspelt name is a
/// compile error) and the evidence view lists the fields by name.
macro_rules! fact_fields {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[doc = $doc:literal])* $field:ident,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize)]
        pub struct $name {
            $($(#[doc = $doc])* #[serde(skip_serializing_if = "Option::is_none")] pub $field: Option<Fact>,)*
        }

        impl $name {
            /// Every fact that is set, with its field name, in name order.
            pub fn entries(&self) -> Vec<(&'static str, &Fact)> {
                let mut out: Vec<(&'static str, &Fact)> = [$((stringify!($field), self.$field.as_ref()),)*]
                    .into_iter()
                    .filter_map(|(name, fact)| Some((name, fact?)))
                    .collect();
                out.sort_by_key(|(name, _)| *name);
                out
            }

            /// Every fact that is set, to change in place.
            pub fn facts_mut(&mut self) -> impl Iterator<Item = &mut Fact> {
                [$(self.$field.as_mut(),)*].into_iter().flatten()
            }
        }
    };
}

fact_fields! {
    /// What the engine serves and how, under one vocabulary for every engine.
    pub struct Summary {
        /// The model path or id the engine loads.
        model,
        served_model_name,
        tensor_parallel,
        expert_parallel,
        data_parallel,
        quantization,
        dtype,
        kv_cache_dtype,
        chat_template,
        reasoning_parser,
        disaggregation_mode,
        /// SGLang's model-config overrides.
        json_model_override_args,
        /// vLLM's model-config overrides.
        hf_overrides,
        /// vLLM's config read in place of the checkpoint's (`--hf-config-path`).
        hf_config_path,
        default_chat_template_kwargs,
    }
}

fact_fields! {
    /// The speculative-decoding facts, under one vocabulary for every engine
    /// (vLLM `spec_tokens`, `num_spec_tokens` and `num_speculative_tokens`
    /// are all `draft_length`). Values are as read.
    pub struct Speculative {
        /// As the engine names it (`EAGLE`, `DSPARK`, `Eagle3`).
        algorithm,
        /// Lowercase, SGLang's `NEXTN` read as `eagle`.
        method,
        draft_model,
        /// Tokens drafted per step (K); its `derivation` says when it was computed.
        draft_length,
        /// SGLang's verify window and tree width.
        num_draft_tokens,
        eagle_topk,
        draft_sample_method,
        draft_quantization,
        draft_kv_cache_dtype,
        draft_dtype,
        draft_moe_runner_backend,
        /// The acceptance length the engine is made to reach; its `derivation`
        /// says how the run wrote it.
        simulated_al,
        /// Whether the engine simulates acceptance at all (a boolean value).
        simulated,
        /// SGLang's `SGLANG_SIMULATE_ACC_METHOD` / `_TOKEN_MODE`.
        simulate_method,
        simulate_token_mode,
        /// TensorRT-LLM's forced accepted draft tokens (AL - 1).
        forced_accepted_tokens,
        /// vLLM's rejection sampling and its synthetic targets.
        rejection_sample_method,
        synthetic_acceptance_length,
        synthetic_acceptance_rates,
        /// ATOM's forced acceptance rate.
        acceptance_rate,
    }
}

impl Speculative {
    /// Whether the server drafts: an algorithm or a draft length is set.
    pub fn drafting(&self) -> bool {
        self.algorithm.is_some() || self.draft_length.is_some()
    }

    /// vLLM accepts drafts by synthetic rejection sampling.
    pub fn synthetic_rejection(&self) -> bool {
        self.rejection_sample_method.as_ref().is_some_and(|f| f.value == "synthetic")
    }
}

/// The facts of one job (or one file).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Facts {
    pub engine: Option<Engine>,
    pub server_args: Map<String, Value>,
    pub server_args_sources: Vec<ArgsSource>,
    /// Arguments given explicitly on the launch command (engine names).
    pub command_args: Map<String, Value>,
    pub summary: Summary,
    pub speculative: Speculative,
    /// `thinking_on` / `thinking_off` when the run shows the mode.
    pub thinking: Option<Fact>,
    pub notes: Vec<String>,
    #[serde(skip)]
    field_sources: BTreeMap<String, (String, Provenance)>,
    /// Places of launch arguments whose value depends on a script branch,
    /// with the note: a fact read from one carries it.
    #[serde(skip)]
    branchy: Vec<(Provenance, Branch)>,
}

impl Facts {
    /// Put a found value into `slot` (a null leaves it as it was), marked
    /// with the script branch it depends on, if any.
    fn set(slot: &mut Option<Fact>, branchy: &[(Provenance, Branch)], (value, from, provenance): Found, derivation: Derivation) {
        if !value.is_null() {
            // A JSON-valued argument may depend on a branch only in some keys
            // (`from` is `command.speculative_config.<key>` for those).
            let depends = |b: &Branch| b.keys.as_ref().is_none_or(|keys| keys.iter().any(|k| from.ends_with(&format!(".{k}"))));
            let branch = provenance.as_ref().and_then(|p| branchy.iter().find(|(at, b)| at == p && depends(b))).map(|(_, b)| b.note.clone());
            *slot = Some(Fact { value, from, provenance, branch, derivation });
        }
    }

    /// A `server_args` field as a fact.
    /// Where a `server_args` field was written (its flag's line on a launch), if known.
    pub fn arg_provenance(&self, field: &str) -> Option<&Provenance> {
        self.field_sources.get(field).map(|(_, p)| p)
    }

    fn arg(&self, field: &str) -> Option<Found> {
        let value = self.server_args.get(field)?.clone();
        let (from, provenance) = self.field_sources.get(field).cloned().map_or((format!("server_args.{field}"), None), |(f, p)| (f, Some(p)));
        Some((value, from, provenance))
    }

    fn summary_from(&mut self, slot: SummarySlot, fields: &[&str]) {
        if let Some(found) = fields.iter().find_map(|f| self.arg(f).filter(|(v, _, _)| !v.is_null())) {
            Self::set(slot(&mut self.summary), &self.branchy, found, Derivation::AsWritten);
        }
    }

    fn spec_from(&mut self, slot: SpecSlot, value: Option<Found>) {
        self.spec_derived(slot, value, Derivation::AsWritten);
    }

    fn spec_derived(&mut self, slot: SpecSlot, value: Option<Found>, derivation: Derivation) {
        if let Some(found) = value {
            Self::set(slot(&mut self.speculative), &self.branchy, found, derivation);
        }
    }
}

/// A value, the field it came from and where that was written.
type Found = (Value, String, Option<Provenance>);

/// One field of [`Summary`] or [`Speculative`], for the derivations that set several alike.
type SummarySlot = fn(&mut Summary) -> &mut Option<Fact>;
type SpecSlot = fn(&mut Speculative) -> &mut Option<Fact>;

/// The records of the engines that generate tokens. A disaggregated job's
/// logs hold both roles' startup records; a prefill worker's (SGLang
/// `disaggregation_mode='prefill'`, vLLM `kv_role: kv_producer`) may draft
/// with another K and does not decide the target, so it counts only when
/// no other record is there.
fn generating(records: Vec<&EngineRecord>) -> Vec<&EngineRecord> {
    let prefill = |r: &EngineRecord| {
        let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_string));
        text(r.get("disaggregation_mode").map(|v| v.to_json())).as_deref() == Some("prefill")
            || text(r.get("kv_transfer_config").and_then(|v| v.to_json().get("kv_role").cloned())).as_deref() == Some("kv_producer")
    };
    let (prefill, rest): (Vec<_>, Vec<_>) = records.into_iter().partition(|r| prefill(r));
    if rest.is_empty() { prefill } else { rest }
}

/// The most complete record of `kind`: closed ones first, then the most fields.
fn best(records: &[&EngineRecord], kinds: &[RecordKind]) -> Option<EngineRecord> {
    records
        .iter()
        .filter(|r| kinds.contains(&r.kind) && !r.fragment)
        .max_by_key(|r| (r.complete(), r.fields.len(), std::cmp::Reverse((r.provenance.file.clone(), r.provenance.line))))
        .map(|r| (*r).clone())
}

/// Derive the facts of a set of files (a job's, or one file's).
pub fn derive(files: &[FileEvidence], catalog: &Catalog) -> Facts {
    let records: Vec<&EngineRecord> = files.iter().flat_map(|f| f.records.iter()).collect();
    let launches: Vec<(LaunchArgs, Provenance)> =
        files.iter().flat_map(|f| f.commands.iter()).filter_map(|c| launch::parse(c).map(|l| (l, c.provenance.clone()))).collect();
    let role = generation_role(files);
    let mut facts = Facts::default();
    let records = generating(records);
    let sglang = best(&records, &[RecordKind::SglangServerArgs]);
    let vllm: Vec<EngineRecord> =
        [RecordKind::VllmNonDefaultArgs, RecordKind::VllmNamespace, RecordKind::VllmEngineConfig].iter().filter_map(|k| best(&records, &[*k])).collect();
    facts.engine = if sglang.is_some() {
        Some(Engine::Sglang)
    } else if !vllm.is_empty() {
        Some(Engine::Vllm)
    } else if let Some((l, _)) = launches.first() {
        Some(l.engine)
    } else if let Some(role) = role {
        Some(role.engine)
    } else if records.iter().any(|r| r.kind == RecordKind::TrtllmSpeculativeConfig) {
        Some(Engine::Trtllm)
    } else {
        records.iter().find(|r| r.fragment).map(|r| r.kind.engine())
    };
    // Fragments of records (see `fragment`) add what they show for the job's engine.
    let fragments = records.iter().filter(|r| r.fragment && Some(r.kind.engine()) == facts.engine).map(|r| (*r).clone());
    for record in sglang.iter().cloned().chain(vllm.iter().cloned()).chain(fragments) {
        let from = match record.fragment {
            true => format!("{}-fragment", record.kind.name()),
            false => record.kind.name().to_string(),
        };
        facts.server_args_sources.push(ArgsSource {
            kind: from.clone(),
            file: record.provenance.file.clone(),
            line: record.provenance.line,
            complete: record.complete(),
            stop: record.stop.clone(),
        });
        for (key, value) in &record.fields {
            if !facts.server_args.contains_key(key) {
                let json = value.to_json();
                // The record's line, showing the field rather than the line's start.
                let shown = match &json {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let provenance = Provenance { text: format!("{key}={shown}"), span: None, ..record.provenance.clone() };
                facts.server_args.insert(key.clone(), json);
                facts.field_sources.insert(key.clone(), (format!("{from}.{key}"), provenance));
            }
        }
    }
    if let Some((launch, provenance)) = launches.iter().find(|(l, _)| Some(l.engine) == facts.engine) {
        facts.command_args = launch.args.clone();
        facts.server_args_sources.push(ArgsSource {
            kind: "command".to_string(),
            file: provenance.file.clone(),
            line: provenance.line,
            complete: launch.open.is_none(),
            stop: launch
                .open
                .as_ref()
                .map(|(at, word)| format!("{word} (line {}) is decided by the run and may hold more arguments", at.line.unwrap_or_default())),
        });
        for (key, value) in &launch.args {
            if !facts.server_args.contains_key(key) {
                facts.server_args.insert(key.clone(), value.clone());
                let given = launch.at.get(key).unwrap_or(provenance);
                if let Some(branch) = launch.depends.get(key) {
                    facts.branchy.push((given.clone(), branch.clone()));
                }
                facts.field_sources.insert(key.clone(), (format!("command.{key}"), given.clone()));
            }
        }
        for (at, note) in &launch.notes {
            facts.notes.push(format!("{}:{}: {note}", at.file, at.line.unwrap_or_default()));
        }
        for (field, given, logged) in &launch.rewritten {
            facts.notes.push(format!("{field} {given} on the command line is recorded by the engine as {logged}"));
        }
    }
    if let Some(role) = role.filter(|r| Some(r.engine) == facts.engine) {
        recipe_args(&mut facts, role);
    }
    let env: Vec<EnvAssignment> = files.iter().flat_map(|f| f.env.iter().cloned()).collect();
    summarize(&mut facts);
    trtllm_kv_cache(&mut facts, &records);
    speculative(&mut facts, &generation_env(&env, role), &records, catalog);
    thinking(&mut facts, &env, catalog);
    facts
}

/// The role config whose engine generates tokens: decode, else aggregated;
/// a prefill config only when it is all there is (a prefill role's own job).
/// The base of an override-format recipe before its variants.
fn generation_role(files: &[FileEvidence]) -> Option<&RoleConfig> {
    let rank = |r: &RoleConfig| match r.role.as_str() {
        "decode" => 0,
        "aggregated" => 1,
        _ => 2,
    };
    files.iter().filter_map(|f| f.recipe.as_ref()).flat_map(|r| r.roles.iter()).min_by_key(|r| (rank(r), r.variant.as_deref().is_some_and(|v| v != "base")))
}

/// The environment the generating engine runs with: a recipe's other roles'
/// environments (`prefill_environment` when decode generates) do not reach
/// it, so simulated acceptance set only there does not simulate anything.
/// Without a recipe role every assignment counts.
fn generation_env(env: &[EnvAssignment], role: Option<&RoleConfig>) -> Vec<EnvAssignment> {
    let Some(role) = role else { return env.to_vec() };
    env.iter().filter(|a| a.scope.recipe_role().is_none_or(|(_, r)| r == role.role)).cloned().collect()
}

/// A recipe role's engine config: explicit arguments, like a launch
/// command's, each with the line that sets it.
fn recipe_args(facts: &mut Facts, role: &RoleConfig) {
    let (args, rewritten) = role.engine_args();
    if facts.command_args.is_empty() {
        facts.command_args = args.clone();
    }
    facts.server_args_sources.push(ArgsSource {
        kind: format!("recipe-{}", role.role),
        file: role.provenance.file.clone(),
        line: role.provenance.line,
        complete: true,
        stop: None,
    });
    for arg in &role.args {
        if let (false, Some(value)) = (facts.server_args.contains_key(&arg.field), args.get(&arg.field)) {
            facts.server_args.insert(arg.field.clone(), value.clone());
            facts.field_sources.insert(arg.field.clone(), (format!("recipe {} config {}", role.role, arg.field), arg.provenance.clone()));
        }
    }
    for (field, given, logged) in rewritten {
        facts.notes.push(format!("{field} {given} in the recipe's {} config is recorded by the engine as {logged}", role.role));
    }
}

/// The thinking mode a run shows (the indicators InferenceX scripts and golden-table headers use): the
/// `THINKING_MODE` env of the golden selector, SGLang's thinking and
/// reasoning-effort variables, a thinking chat template, and chat-template
/// kwargs (`thinking_mode`, `enable_thinking`, `thinking`). The first
/// indicator found decides; a contradicting one is noted.
fn thinking(facts: &mut Facts, env: &[EnvAssignment], catalog: &Catalog) {
    let mut found: Vec<(bool, String, Option<Provenance>)> = Vec::new();
    let env_value = |name: &str| {
        catalog.effective(env, name).filter(|r| !r.assignment.expands).and_then(|r| r.assignment.value.clone().map(|v| (v, r.assignment.provenance.clone())))
    };
    if let Some((v, p)) = env_value("THINKING_MODE") {
        match v.trim() {
            "thinking_on" => found.push((true, "env THINKING_MODE".into(), Some(p))),
            "thinking_off" => found.push((false, "env THINKING_MODE".into(), Some(p))),
            _ => {}
        }
    }
    for name in ["SGLANG_ENABLE_THINKING", "SGLANG_DEFAULT_THINKING"] {
        if let Some((v, p)) = env_value(name) {
            match catalog.meaning(name, &v) {
                Meaning::Bool(true) => found.push((true, format!("env {name}"), Some(p))),
                Meaning::Bool(false) if name == "SGLANG_ENABLE_THINKING" => found.push((false, format!("env {name}"), Some(p))),
                _ => {}
            }
        }
    }
    for name in ["SGLANG_REASONING_EFFORT", "SGLANG_DSV4_REASONING_EFFORT"] {
        if let Some((v, p)) = env_value(name).filter(|(v, _)| matches!(v.trim(), "high" | "max")) {
            found.push((true, format!("env {name}={v}"), Some(p)));
        }
    }
    // Dynamo's frontend default: requests without their own setting run in it.
    let mut request_default = None;
    if let Some((v, p)) = env_value("DYN_DEFAULT_THINKING_MODE") {
        let on = match v.trim().to_ascii_lowercase().as_str() {
            "enabled" | "on" | "true" | "1" => Some(true),
            "disabled" | "off" | "false" | "0" => Some(false),
            _ => None,
        };
        request_default = on.map(|on| (on, "env DYN_DEFAULT_THINKING_MODE (Dynamo's default for requests that set none)".to_string(), Some(p)));
    }
    let serving = &facts.summary;
    if let Some(f) = &serving.chat_template {
        let path = f.value.as_str().unwrap_or_default().to_ascii_lowercase();
        if path.contains("thinking") && !path.contains("no_thinking") && !path.contains("nothink") {
            found.push((true, format!("{} (a thinking chat template)", f.from), f.provenance.clone()));
        }
    }
    if let Some(f) = &serving.default_chat_template_kwargs {
        let kwargs = json_arg(&f.value).unwrap_or(Value::Null);
        let flag =
            match (kwargs.get("thinking_mode").and_then(Value::as_str), kwargs.get("enable_thinking").or(kwargs.get("thinking")).and_then(Value::as_bool)) {
                (Some("enabled"), _) => Some(true),
                (Some("disabled"), _) => Some(false),
                (_, b) => b,
            };
        if let Some(on) = flag {
            found.push((on, f.from.clone(), f.provenance.clone()));
        }
    }
    let derivation = if found.is_empty() { Derivation::RequestDefault } else { Derivation::AsWritten };
    found.extend(request_default);
    let Some((on, from, provenance)) = found.first().cloned() else { return };
    if let Some((_, other, _)) = found.iter().find(|(o, _, _)| *o != on) {
        facts.notes.push(format!("thinking mode indicators disagree: {from} says {}, {other} says otherwise", mode_name(on)));
    }
    facts.thinking = Some(Fact { value: Value::String(mode_name(on).to_string()), from, provenance, branch: None, derivation });
}

fn mode_name(on: bool) -> &'static str {
    if on { "thinking_on" } else { "thinking_off" }
}

fn summarize(facts: &mut Facts) {
    facts.summary_from(|s| &mut s.model, &["model_path", "model", "model_tag"]);
    facts.summary_from(|s| &mut s.served_model_name, &["served_model_name"]);
    facts.summary_from(|s| &mut s.tensor_parallel, &["tp_size", "tensor_parallel_size"]);
    facts.summary_from(|s| &mut s.expert_parallel, &["ep_size", "moe_expert_parallel_size", "expert_parallel_size"]);
    facts.summary_from(|s| &mut s.data_parallel, &["dp_size", "data_parallel_size"]);
    facts.summary_from(|s| &mut s.quantization, &["quantization"]);
    facts.summary_from(|s| &mut s.dtype, &["dtype"]);
    facts.summary_from(|s| &mut s.kv_cache_dtype, &["kv_cache_dtype"]);
    facts.summary_from(|s| &mut s.chat_template, &["chat_template"]);
    facts.summary_from(|s| &mut s.reasoning_parser, &["reasoning_parser"]);
    facts.summary_from(|s| &mut s.disaggregation_mode, &["disaggregation_mode"]);
    facts.summary_from(|s| &mut s.json_model_override_args, &["json_model_override_args"]);
    facts.summary_from(|s| &mut s.hf_overrides, &["hf_overrides"]);
    facts.summary_from(|s| &mut s.hf_config_path, &["hf_config_path"]);
    facts.summary_from(|s| &mut s.default_chat_template_kwargs, &["default_chat_template_kwargs", "chat_template_kwargs"]);
}

/// TensorRT-LLM's KV-cache dtype: `kv_cache_config.dtype` of its LLM-API
/// YAML (a file of the input, a config a log shows, or a recipe role's).
fn trtllm_kv_cache(facts: &mut Facts, records: &[&EngineRecord]) {
    if facts.engine != Some(Engine::Trtllm) || facts.summary.kv_cache_dtype.is_some() {
        return;
    }
    let found = match best(records, &[RecordKind::TrtllmKvCacheConfig]) {
        Some(config) => config.get("dtype").map(|v| (v.to_json(), "kv_cache_config.dtype".to_string(), Some(config.provenance.clone()))),
        None => facts.arg("kv_cache_config").and_then(|(v, from, p)| Some((v.get("dtype")?.clone(), format!("{from}.dtype"), p))),
    };
    if let Some(found) = found {
        Facts::set(&mut facts.summary.kv_cache_dtype, &facts.branchy, found, Derivation::AsWritten);
    }
}

/// A derived number rounded to 6 decimals, so that `1.78 + 1` reads `2.78`.
fn derived(n: f64) -> Value {
    Value::from((n * 1e6).round() / 1e6)
}

/// A value as a number, accepting numeric strings.
fn number(value: &Value) -> Option<f64> {
    value.as_f64().or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
}

/// An environment variable's effective value as a fact (none when it comes from an unresolved expansion).
fn env_fact(catalog: &Catalog, env: &[EnvAssignment], name: &str) -> Option<Found> {
    let r = catalog.effective(env, name)?;
    let a = r.assignment;
    let value = a.value.as_deref()?;
    if a.expands {
        return None;
    }
    let typed = match catalog.meaning(&a.name, value) {
        Meaning::Number(n) => Value::from(n),
        Meaning::Bool(b) => Value::Bool(b),
        Meaning::Text(t) => Value::String(t),
        Meaning::Invalid { .. } => Value::String(value.to_string()),
    };
    Some((typed, format!("env {}", a.name), Some(a.provenance.clone())))
}

fn speculative(facts: &mut Facts, env: &[EnvAssignment], records: &[&EngineRecord], catalog: &Catalog) {
    let env_fact = |name: &str| env_fact(catalog, env, name);
    match facts.engine {
        Some(Engine::Sglang) => {
            let algorithm = facts.arg("speculative_algorithm").filter(|(v, _, _)| !v.is_null());
            let Some(algorithm) = algorithm else { return };
            let name = algorithm.0.as_str().unwrap_or_default().to_ascii_uppercase();
            facts.spec_from(|s| &mut s.algorithm, Some(algorithm.clone()));
            let method = match name.as_str() {
                "NEXTN" => "eagle".to_string(),
                other => other.to_ascii_lowercase(),
            };
            facts.spec_from(|s| &mut s.method, Some((Value::String(method), algorithm.1.clone(), algorithm.2.clone())));
            let (length, derivation) = match name.as_str() {
                "DSPARK" => (facts.arg("speculative_dspark_block_size"), Derivation::AsWritten),
                "DFLASH" => (
                    facts
                        .arg("speculative_num_draft_tokens")
                        .and_then(|(v, f, p)| number(&v).map(|n| (Value::from(n as i64 - 1), format!("{f} minus 1 (DFLASH verify window)"), p))),
                    Derivation::WindowMinusOne,
                ),
                _ => (facts.arg("speculative_num_steps"), Derivation::AsWritten),
            };
            facts.spec_derived(|s| &mut s.draft_length, length.filter(|(v, _, _)| !v.is_null()), derivation);
            let draft = facts.arg("speculative_draft_model_path");
            facts.spec_from(|s| &mut s.draft_model, draft);
            for (slot, field) in [
                ((|s: &mut Speculative| &mut s.num_draft_tokens) as SpecSlot, "speculative_num_draft_tokens"),
                (|s| &mut s.eagle_topk, "speculative_eagle_topk"),
                (|s| &mut s.draft_quantization, "speculative_draft_model_quantization"),
                (|s| &mut s.draft_kv_cache_dtype, "speculative_draft_kv_cache_dtype"),
                (|s| &mut s.draft_moe_runner_backend, "speculative_moe_runner_backend"),
            ] {
                let value = facts.arg(field);
                facts.spec_from(slot, value);
            }
            if let Some((value, from, provenance)) = env_fact("SGLANG_SIMULATE_ACC_LEN") {
                let on = number(&value).is_some_and(|n| n >= 0.0);
                facts.spec_from(|s| &mut s.simulated_al, on.then(|| (value.clone(), from.clone(), provenance.clone())));
                facts.spec_from(|s| &mut s.simulated, Some((Value::Bool(on), from, provenance)));
            }
            for (slot, var) in [
                ((|s: &mut Speculative| &mut s.simulate_method) as SpecSlot, "SGLANG_SIMULATE_ACC_METHOD"),
                (|s| &mut s.simulate_token_mode, "SGLANG_SIMULATE_ACC_TOKEN_MODE"),
            ] {
                let value = env_fact(var);
                facts.spec_from(slot, value);
            }
        }
        Some(Engine::Vllm) => vllm_speculative(facts),
        Some(Engine::Trtllm) => {
            // A `speculative_config:` block of an LLM-API YAML, or of a recipe role's config.
            let record = best(records, &[RecordKind::TrtllmSpeculativeConfig]);
            // Keys a script's heredoc fills from a variable an `if`/`case` arm picks.
            if let Some(r) = &record {
                for (key, note) in &r.depends {
                    facts.branchy.push((r.provenance.clone(), Branch { note: note.clone(), keys: Some(vec![key.clone()]) }));
                }
            }
            let block = facts.arg("speculative_config").filter(|(v, _, _)| v.is_object());
            if record.is_some() || block.is_some() {
                let field = |key: &str| match (&record, &block) {
                    (Some(config), _) => config.get(key).map(|v| (v.to_json(), format!("speculative_config.{key}"), Some(config.provenance.clone()))),
                    (None, Some((config, from, provenance))) => config.get(key).map(|v| (v.clone(), format!("{from}.{key}"), provenance.clone())),
                    (None, None) => None,
                };
                facts.spec_from(|s| &mut s.algorithm, field("decoding_type"));
                facts.spec_from(
                    |s| &mut s.method,
                    field("decoding_type").map(|(v, f, p)| (Value::String(v.as_str().unwrap_or_default().to_ascii_lowercase()), f, p)),
                );
                // MTP names its draft length by the MTP layers it runs.
                facts.spec_from(|s| &mut s.draft_length, field("max_draft_len").or_else(|| field("num_nextn_predict_layers")));
                facts.spec_from(|s| &mut s.draft_model, field("speculative_model").or_else(|| field("speculative_model_dir")));
            }
            if let Some((value, from, provenance)) = env_fact("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS")
                && let Some(n) = number(&value)
            {
                facts.spec_from(|s| &mut s.forced_accepted_tokens, Some((value, from.clone(), provenance.clone())));
                facts.spec_derived(
                    |s| &mut s.simulated_al,
                    Some((derived(n + 1.0), format!("{from} plus 1"), provenance.clone())),
                    Derivation::ForcedAcceptedPlusOne,
                );
                facts.spec_from(|s| &mut s.simulated, Some((Value::Bool(true), from, provenance)));
            }
        }
        Some(Engine::Atom) => atom_speculative(facts),
        _ => {}
    }
    injected(facts, env, catalog);
}

/// The InferenceX runner's SA injector (runners/inject_synthetic_acceptance.py): with
/// `SYNTHETIC_ACCEPTANCE=true` and `SYNTHETIC_ACCEPTANCE_LENGTH=<AL>` in the
/// launcher environment (master-config `additional-settings`), it writes
/// simulation at that AL into the recipe before launch — SGLang's three
/// `SGLANG_SIMULATE_ACC_*` variables, vLLM's synthetic rejection sampling —
/// unless the recipe already simulates. It does nothing on eval-only jobs,
/// which the checks tell apart.
fn injected(facts: &mut Facts, env: &[EnvAssignment], catalog: &Catalog) {
    let engine = match facts.engine {
        Some(e @ (Engine::Sglang | Engine::Vllm)) => e,
        _ => return,
    };
    if facts.speculative.simulated_al.is_some() || facts.speculative.method.is_none() {
        return;
    }
    let on = env_fact(catalog, env, "SYNTHETIC_ACCEPTANCE").is_some_and(|(v, _, _)| v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("true")));
    let Some((length, from, provenance)) = env_fact(catalog, env, "SYNTHETIC_ACCEPTANCE_LENGTH") else { return };
    let Some(al) = number(&length).filter(|_| on) else { return };
    let from = format!("{from} (written into the recipe by the runner's SA injector)");
    facts.spec_from(|s| &mut s.simulated_al, Some((derived(al), from.clone(), provenance.clone())));
    facts.spec_from(|s| &mut s.simulated, Some((Value::Bool(true), from.clone(), provenance.clone())));
    let written: &[(SpecSlot, &str)] = match engine {
        Engine::Sglang => &[(|s| &mut s.simulate_method, "match-expected"), (|s| &mut s.simulate_token_mode, "real-draft-token")],
        _ => &[(|s| &mut s.rejection_sample_method, "synthetic")],
    };
    for (slot, value) in written {
        facts.spec_from(*slot, Some((Value::from(*value), from.clone(), provenance.clone())));
    }
}

fn vllm_speculative(facts: &mut Facts) {
    // `speculative_config` as a dict (non-default args, --speculative-config) or a SpeculativeConfig repr.
    let config = facts.arg("speculative_config").filter(|(v, _, _)| v.is_object());
    let field = |facts: &Facts, keys: &[&str], flat: &[&str]| -> Option<Found> {
        if let Some((Value::Object(map), from, provenance)) = &config
            && let Some((k, v)) = keys.iter().find_map(|k| map.get(*k).filter(|v| !v.is_null()).map(|v| (k, v)))
        {
            return Some((v.clone(), format!("{from}.{k}"), provenance.clone()));
        }
        flat.iter().find_map(|f| facts.arg(f).filter(|(v, _, _)| !v.is_null()))
    };
    let method = field(facts, &["method"], &["spec_method", "speculative_method"]);
    let draft = field(facts, &["model"], &["spec_model", "speculative_model"]);
    let length = field(facts, &["num_speculative_tokens", "num_spec_tokens"], &["spec_tokens", "num_speculative_tokens"]);
    if method.is_none() && draft.is_none() && length.is_none() {
        return;
    }
    facts.spec_from(|s| &mut s.algorithm, method.clone());
    facts.spec_from(|s| &mut s.method, method.map(|(v, f, p)| (Value::String(v.as_str().unwrap_or_default().to_ascii_lowercase()), f, p)));
    facts.spec_from(|s| &mut s.draft_model, draft);
    facts.spec_from(|s| &mut s.draft_length, length);
    for (slot, names) in [
        ((|s: &mut Speculative| &mut s.rejection_sample_method) as SpecSlot, &["rejection_sample_method"][..]),
        (|s| &mut s.draft_sample_method, &["draft_sample_method"][..]),
        (|s| &mut s.draft_quantization, &["quantization"][..]),
        (|s| &mut s.draft_kv_cache_dtype, &["kv_cache_dtype"][..]),
        (|s| &mut s.draft_dtype, &["dtype"][..]),
        (|s| &mut s.synthetic_acceptance_length, &["synthetic_acceptance_length"][..]),
        (|s| &mut s.synthetic_acceptance_rates, &["synthetic_acceptance_rates"][..]),
    ] {
        let value = field(facts, names, &[]);
        facts.spec_from(slot, value);
    }
    let synthetic = facts.speculative.rejection_sample_method.as_ref().is_some_and(|f| f.value == "synthetic");
    let al = match (facts.speculative.synthetic_acceptance_length.as_ref(), facts.speculative.synthetic_acceptance_rates.as_ref()) {
        (Some(f), _) => number(&f.value).map(|n| (n, f.from.clone(), f.provenance.clone(), Derivation::AsWritten)),
        (None, Some(f)) => f.value.as_array().map(|rates| {
            (1.0 + rates.iter().filter_map(number).sum::<f64>(), format!("1 + sum of {}", f.from), f.provenance.clone(), Derivation::SumOfRatesPlusOne)
        }),
        _ => None,
    };
    if let Some((n, from, provenance, derivation)) = al {
        facts.spec_derived(|s| &mut s.simulated_al, Some((derived(n), from.clone(), provenance.clone())), derivation);
        facts.spec_from(|s| &mut s.simulated, Some((Value::Bool(synthetic), from, provenance)));
    }
}

fn atom_speculative(facts: &mut Facts) {
    let method = facts.arg("method");
    let length = facts.arg("num_speculative_tokens");
    if method.is_none() && length.is_none() {
        return;
    }
    facts.spec_from(|s| &mut s.algorithm, method.clone());
    facts.spec_from(|s| &mut s.method, method.map(|(v, f, p)| (Value::String(v.as_str().unwrap_or_default().to_ascii_lowercase()), f, p)));
    let k = length.as_ref().and_then(|(v, _, _)| number(v));
    facts.spec_from(|s| &mut s.draft_length, length);
    let draft = facts.arg("draft_model");
    facts.spec_from(|s| &mut s.draft_model, draft);
    let given_al = facts.arg("spec_decode_acceptance_length");
    let al = given_al.clone().and_then(|(v, f, p)| number(&v).map(|n| (n, f, p, Derivation::AsWritten)));
    let rate = facts.arg("spec_decode_acceptance_rate");
    let given_rate = rate.clone();
    facts.spec_from(|s| &mut s.acceptance_rate, rate.clone());
    let implied = rate.and_then(|(v, f, p)| Some((1.0 + number(&v)? * k?, format!("1 + {f} x num_speculative_tokens"), p, Derivation::RateTimesLengthPlusOne)));
    if let Some((n, from, provenance, derivation)) = al.or(implied) {
        facts.spec_derived(|s| &mut s.simulated_al, Some((derived(n), from.clone(), provenance.clone())), derivation);
        facts.spec_from(|s| &mut s.simulated, Some((Value::Bool(true), from, provenance)));
    } else if let Some((_, from, provenance)) = given_al.or(given_rate) {
        // Given with a value the input does not show as a number (one of
        // several the paths set): the run simulates, at a target not known here.
        facts.spec_from(|s| &mut s.simulated, Some((Value::Bool(true), from, provenance)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Extractor, FileKind};

    fn facts_of(files: &[(&str, FileKind, &str)]) -> Facts {
        let ex = Extractor::new(1 << 20);
        let evidence: Vec<FileEvidence> = files.iter().map(|(p, k, t)| ex.extract(p, *k, &mut t.as_bytes()).0).collect();
        derive(&evidence, Catalog::embedded())
    }

    fn spec(f: &Facts, key: &str) -> Value {
        f.speculative.entries().into_iter().find(|(k, _)| *k == key).map(|(_, f)| f.value.clone()).unwrap_or(Value::Null)
    }

    #[test]
    fn sglang_dspark_from_log_env_and_command() {
        let log = "=== SGLANG_* env vars at launch ===\nSGLANG_SIMULATE_ACC_LEN=3.51\nSGLANG_SIMULATE_ACC_METHOD=match-expected\n===\n[2026-10-14 03:12:55] server_args={'model_path': '/m', 'tp_size': 4, 'speculative_algorithm': 'DSPARK', 'speculative_dspark_block_size': 5, 'speculative_num_steps': None, 'speculative_draft_model_path': None, 'quantization': None}\n";
        let cmd = "python3 -m sglang.launch_server --model-path /m --tp 4 --speculative-algorithm DSPARK --speculative-dspark-block-size 5 \n";
        let f = facts_of(&[("a/server.log", FileKind::Log, log), ("a/sglang_command.txt", FileKind::Command, cmd)]);
        assert_eq!(f.engine, Some(Engine::Sglang));
        assert_eq!(f.summary.model.as_ref().unwrap().value, "/m");
        assert_eq!(f.summary.tensor_parallel.as_ref().unwrap().value, 4);
        assert_eq!(f.summary.tensor_parallel.as_ref().unwrap().from, "sglang-server-args.tp_size");
        assert_eq!(spec(&f, "method"), "dspark");
        assert_eq!(spec(&f, "draft_length"), 5);
        assert_eq!(spec(&f, "simulated_al"), 3.51);
        assert_eq!(spec(&f, "simulated"), true);
        assert_eq!(spec(&f, "simulate_method"), "match-expected");
        assert_eq!(f.speculative.simulated_al.as_ref().unwrap().provenance.as_ref().unwrap().line, Some(2));
        assert_eq!(f.server_args_sources.len(), 2);
        assert_eq!(f.thinking, None, "no indicator in this log");
    }

    #[test]
    fn thinking_indicators() {
        let on = facts_of(&[("a/server.log", FileKind::Log, "=== SGLANG_* env vars at launch ===\nSGLANG_DEFAULT_THINKING=1\n===\n")]);
        assert_eq!(on.thinking.as_ref().map(|f| f.value.clone()), Some(Value::from("thinking_on")));
        let template =
            facts_of(&[("a/sglang_command.txt", FileKind::Command, "python3 -m sglang.launch_server --chat-template /t/deepseek_v4_thinking.jinja \n")]);
        assert_eq!(template.thinking.unwrap().value, "thinking_on");
        let off = facts_of(&[("a/vllm_command.txt", FileKind::Command, "vllm serve /m --default-chat-template-kwargs '{\"thinking_mode\": \"disabled\"}' \n")]);
        assert_eq!(off.thinking.unwrap().value, "thinking_off");
        let selector = facts_of(&[("a/run.sh", FileKind::Script, "export THINKING_MODE=thinking_off\n")]);
        assert_eq!(selector.thinking.unwrap().from, "env THINKING_MODE");
    }

    #[test]
    fn sglang_nextn_from_command_only() {
        let cmd = "python3 -m sglang.launch_server --model-path /m --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \n";
        let f = facts_of(&[("a/sglang_command.txt", FileKind::Command, cmd)]);
        assert_eq!((spec(&f, "algorithm"), spec(&f, "method"), spec(&f, "draft_length")), (Value::from("EAGLE"), Value::from("eagle"), Value::from(3)));
        assert!(f.notes[0].contains("NEXTN"));
    }

    #[test]
    fn vllm_shapes_agree_on_draft_length() {
        let dict = "(APIServer pid=1) INFO 08-20 10:08:10 [utils.py:233] non-default args: {'model': '/m', 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3, 'rejection_sample_method': 'synthetic', 'synthetic_acceptance_length': 2.49}}\n";
        let flat = "INFO 08-20 10:08:10 [utils.py:1] non-default args: {'model': '/m', 'speculative_model': '/d', 'num_speculative_tokens': 3}\n";
        let short = "INFO 08-20 10:08:10 [utils.py:1] non-default args: {'model': '/m', 'spec_method': 'eagle3', 'spec_model': '/d', 'spec_tokens': 3}\n";
        let config = "(EngineCore_DP0 pid=2) INFO 08-20 10:08:39 [core.py:93] Initializing a V1 LLM engine (v0.11.0) with config: model='/m', speculative_config=SpeculativeConfig(method='mtp', model='/m', num_spec_tokens=3), seed=0\n";
        let cmd = r#"vllm serve /m --speculative-config \{\"method\":\ \"mtp\",\ \"num_speculative_tokens\":\ 3,\ \"rejection_sample_method\":\ \"synthetic\",\ \"synthetic_acceptance_rates\":\ \[1.0,\ 0.49,\ 0.0\]\} "#;
        for (name, kind, text) in [
            ("dict", FileKind::Log, dict),
            ("flat", FileKind::Log, flat),
            ("short", FileKind::Log, short),
            ("config", FileKind::Log, config),
            ("cmd", FileKind::Command, cmd),
        ] {
            let f = facts_of(&[(&format!("x/{name}_command.txt"), kind, text)]);
            assert_eq!(f.engine, Some(Engine::Vllm), "{name}");
            assert_eq!(spec(&f, "draft_length"), 3, "{name}");
        }
        let f = facts_of(&[("x/server.log", FileKind::Log, dict)]);
        assert_eq!((spec(&f, "simulated_al"), spec(&f, "simulated")), (Value::from(2.49), Value::Bool(true)));
        let f = facts_of(&[("x/vllm_command.txt", FileKind::Command, cmd)]);
        assert_eq!(spec(&f, "simulated_al"), 2.49);
    }

    #[test]
    fn launch_arguments_cite_their_own_line() {
        let script = concat!(
            "SPEC='{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'\n",
            "CMD=(\n",
            "    vllm serve /m\n",
            "    --tensor-parallel-size 4\n",
            "    --hf-overrides '{\"text_config\": {\"index_topk_freq\": 4}}'\n",
            "    --speculative-config \"$SPEC\"\n",
            ")\n",
            "write_command \"$DIR/server_command.txt\" \"${CMD[@]}\"\n",
        );
        let f = facts_of(&[("x/run.sh", FileKind::Script, script)]);
        let at = |fact: &Fact| fact.provenance.as_ref().map(|p| (p.line, p.text.clone()));
        assert_eq!(at(f.summary.hf_overrides.as_ref().unwrap()), Some((Some(5), r#"--hf-overrides '{"text_config": {"index_topk_freq": 4}}'"#.to_string())));
        assert_eq!(at(f.speculative.draft_length.as_ref().unwrap()).map(|(l, _)| l), Some(Some(6)));
        let continued = "vllm serve /m \\\n  -tp 4 \\\n  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n";
        let f = facts_of(&[("x/run.sh", FileKind::Script, continued)]);
        let p = f.speculative.draft_length.as_ref().unwrap().provenance.clone().unwrap();
        assert_eq!(p.line, Some(3));
        assert_eq!(&continued[p.span.unwrap().0 as usize..][..20], "--speculative-config");
        assert_eq!(f.summary.tensor_parallel.as_ref().unwrap().provenance.as_ref().unwrap().line, Some(2));
    }

    #[test]
    fn values_picked_in_branches_are_not_mixed() {
        // K and AL chosen together by CONC: reading in order would pair the
        // last arm's K with an earlier arm's AL.
        let script = concat!(
            "if [ \"$CONC\" -le 8 ]; then\n    K=7\n    AL=3.84\nelif [ \"$CONC\" -le 16 ]; then\n    K=3\n    AL=3.00\nelse\n    K=0\nfi\n",
            "if [ \"$EVAL_ONLY\" = true ]; then X=1; fi\n",
            "SPEC=\"{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": $K, \\\"rejection_sample_method\\\": \\\"synthetic\\\", \\\"synthetic_acceptance_length\\\": $AL}\"\n",
            "vllm serve /m --tensor-parallel-size 8 --speculative-config \"$SPEC\"\n",
        );
        let f = facts_of(&[("x/run.sh", FileKind::Script, script)]);
        assert_eq!(spec(&f, "draft_length"), 7, "the first arm's pair, not K=0 with AL 3.00");
        assert_eq!(spec(&f, "simulated_al"), 3.84);
        let note = f.speculative.draft_length.as_ref().unwrap().branch.clone().unwrap();
        assert!(note.contains("line 1"), "{note}");
        assert!(f.speculative.simulated_al.as_ref().unwrap().branch.is_some());
        assert_eq!(f.summary.tensor_parallel.as_ref().unwrap().branch, None);
        // Arms that agree (SPEC_FLAGS the same under DP_ATTENTION or not) are one value.
        let agree = concat!(
            "case \"$MODE\" in\n  a|b)\n    SPEC_FLAGS=(--speculative-algorithm EAGLE --speculative-num-steps 3)\n    PAR=(--dp 8)\n    ;;\n  *)\n",
            "    SPEC_FLAGS=(\n      --speculative-algorithm EAGLE\n      --speculative-num-steps 3\n    )\n    PAR=()\n    ;;\nesac\n",
            "python3 -m sglang.launch_server --model-path /m \"${SPEC_FLAGS[@]}\" \"${PAR[@]}\"\n",
        );
        let f = facts_of(&[("x/run.sh", FileKind::Script, agree)]);
        assert_eq!(spec(&f, "draft_length"), 3);
        assert_eq!(f.speculative.draft_length.as_ref().unwrap().branch, None);
        assert!(f.command_args.get("dp_size").is_some());
        // The same in a TensorRT-LLM config the script writes from a heredoc.
        let trt = concat!(
            "if [ \"$CONC\" -le 8 ]; then\n    K=3\nelse\n    K=1\nfi\nD=/m/draft\n",
            "cat << EOF > c.yaml\nspeculative_config:\n  decoding_type: Eagle3\n  max_draft_len: $K\n  speculative_model: $D\nEOF\n",
            "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78\n",
            "trtllm-serve /m --tp_size 8 --config c.yaml\n",
        );
        let f = facts_of(&[("x/run.sh", FileKind::Script, trt)]);
        assert_eq!(spec(&f, "draft_length"), 3);
        assert!(f.speculative.draft_length.as_ref().unwrap().branch.as_ref().is_some_and(|n| n.contains("K differs")));
        assert_eq!(f.speculative.draft_model.as_ref().map(|d| d.value.clone()), Some(Value::String("/m/draft".into())));
        assert_eq!(f.speculative.draft_model.as_ref().unwrap().branch, None, "a key no arm picks is one value");
    }

    #[test]
    fn simulated_al_says_how_it_was_written() {
        let derivation = |files: &[(&str, FileKind, &str)]| facts_of(files).speculative.simulated_al.map(|f| f.derivation);
        let trt = "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78\ntrtllm-serve /m --tp_size 8\n";
        assert_eq!(derivation(&[("x/run.sh", FileKind::Script, trt)]), Some(Derivation::ForcedAcceptedPlusOne));
        let atom = "python -m atom.entrypoints.openai_server --model m --method mtp --num-speculative-tokens 3 --spec-decode-acceptance-rate 0.66 \n";
        assert_eq!(derivation(&[("x/server_command.txt", FileKind::Command, atom)]), Some(Derivation::RateTimesLengthPlusOne));
        let atom = atom.replace("--spec-decode-acceptance-rate 0.66", "--spec-decode-acceptance-length 2.98");
        assert_eq!(derivation(&[("x/server_command.txt", FileKind::Command, &atom)]), Some(Derivation::AsWritten));
        // A target the input does not show: the run simulates, at an AL not known here.
        let unknown = atom.replace("2.98", "$AL");
        let f = facts_of(&[("x/server_command.txt", FileKind::Command, &unknown)]);
        assert_eq!((spec(&f, "simulated"), spec(&f, "simulated_al")), (Value::Bool(true), Value::Null));
        let rates = r#"vllm serve /m --speculative-config '{"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic", "synthetic_acceptance_rates": [1.0, 0.49, 0.0]}'"#;
        assert_eq!(derivation(&[("x/run.sh", FileKind::Script, rates)]), Some(Derivation::SumOfRatesPlusOne));
        let sglang = "=== SGLANG_* env vars at launch ===\nSGLANG_SIMULATE_ACC_LEN=3.51\n===\n[2026-10-14 03:12:55] server_args={'model_path': '/m', 'speculative_algorithm': 'EAGLE', 'speculative_num_steps': 3}\n";
        assert_eq!(derivation(&[("a/server.log", FileKind::Log, sglang)]), Some(Derivation::AsWritten));
        let dflash = "python3 -m sglang.launch_server --model-path /m --speculative-algorithm DFLASH --speculative-num-draft-tokens 6 \n";
        let f = facts_of(&[("a/sglang_command.txt", FileKind::Command, dflash)]);
        assert_eq!(f.speculative.draft_length.as_ref().map(|f| (f.value.clone(), f.derivation)), Some((Value::from(5), Derivation::WindowMinusOne)));
        assert_eq!(f.engine.map(|e| e.to_string()).as_deref(), Some("sglang"));
    }

    #[test]
    fn trtllm_and_atom() {
        let yaml = "speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n  speculative_model: /d\n";
        let f = facts_of(&[
            ("x/run.sh", FileKind::Script, "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78\ntrtllm-serve /m --tp_size 8\n"),
            ("x/ser.yaml", FileKind::Yaml, yaml),
        ]);
        assert_eq!(spec(&f, "simulated_al"), 2.78);
        assert_eq!((spec(&f, "method"), spec(&f, "draft_length"), spec(&f, "draft_model")), (Value::from("eagle3"), Value::from(3), Value::from("/d")));
        let atom = "python -m atom.entrypoints.openai_server --model m --method mtp --num-speculative-tokens 3 --spec-decode-acceptance-rate 0.663333 \n";
        let f = facts_of(&[("x/server_command.txt", FileKind::Command, atom)]);
        assert_eq!(spec(&f, "draft_length"), 3);
        assert_eq!(spec(&f, "simulated_al"), 2.989999);
    }
}
