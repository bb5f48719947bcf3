//! `golden-al`: a job that simulates acceptance does so at exactly the
//! golden AL of its (table, model, thinking mode, draft length). The table
//! comes from the model prefix and the method (InferenceX golden_al_distribution/README.md and the runners' curve selection), the
//! thinking mode from the run's indicators or the policy default (said so
//! in the finding), the draft length from the generation role's engine
//! arguments; a recipe's prefill role does not decide the target and is not
//! judged. Values compare numerically at the table's two decimals.

use super::{AuditedJob, CheckResult, Context};
use crate::evidence::engine::Engine;
use crate::facts::simulation::{InEffect, text};
use crate::facts::{Derivation, Fact};
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use crate::policy::Section;
use crate::policy::sections::GoldenAl;
use crate::provenance::Provenance;
use crate::reference::golden::Table;
use std::collections::BTreeMap;

const ID: &str = "golden-al";

pub const RULES: &[(&str, &str)] = &[
    ("golden-al/match", "the simulated AL equals the golden AL"),
    ("golden-al/mismatch", "the simulated AL differs from the golden AL for the job's table, thinking mode and draft length"),
    ("golden-al/thinking-mode", "the value is the thinking_off AL, but the run does not show thinking disabled"),
    ("golden-al/no-table", "no golden table for the model and method, and the policy names no other source of its AL"),
    ("golden-al/no-cell", "the golden table has no value for the job's thinking mode and draft length"),
    ("golden-al/al-source", "no golden table, but the policy names the source of the model's AL"),
    ("golden-al/undetermined", "the table, thinking mode or draft length could not be determined"),
];

/// What the comparison needs from a job.
struct Key {
    prefix: String,
    method: String,
    draft_length: u32,
}

pub fn run(ctx: &Context, settings: &Section<GoldenAl>) -> CheckResult {
    let jobs: Vec<&AuditedJob> =
        ctx.jobs.iter().filter(|j| j.job.kind != JobKind::EvalOnly && !j.job.informational() && j.simulation.generating == InEffect::Yes).collect();
    if jobs.is_empty() {
        return CheckResult::not_applicable(ID, settings, "no job simulates acceptance");
    }
    let mut findings = Vec::new();
    let mut plots = BTreeMap::new();
    for job in &jobs {
        judge(ctx, settings, job, &mut findings, &mut plots);
    }
    let bad = |pred: &dyn Fn(&Finding) -> bool| {
        let mut ids: Vec<_> = findings.iter().filter(|f| pred(f)).filter_map(|f| f.job.clone()).collect();
        ids.sort();
        ids.dedup();
        ids.len()
    };
    let failing = bad(&|f: &Finding| f.severity == Severity::Error && !f.is_undetermined());
    let open = bad(&|f: &Finding| f.is_undetermined());
    let n = jobs.len();
    let mut result = CheckResult::judged(
        ID,
        settings,
        findings,
        format!("{n} simulating job(s) at the golden AL"),
        format!("{failing} of {n} simulating job(s) not at the golden AL"),
        format!("the golden AL of {open} of {n} simulating job(s) could not be determined"),
    );
    result.golden = plots.into_values().collect();
    result
}

/// A golden table the check compared jobs against, with where each job
/// landed on it: what the HTML report draws (not serialised; the findings
/// say the same in words).
#[derive(Debug, Clone, PartialEq)]
pub struct GoldenPlot {
    pub table: Table,
    /// In the order the jobs were judged.
    pub points: Vec<GoldenPoint>,
}

/// One simulating job on its golden curve.
#[derive(Debug, Clone, PartialEq)]
pub struct GoldenPoint {
    pub job: String,
    /// The thinking mode whose curve applies (`thinking_on`).
    pub mode: String,
    pub draft_length: u32,
    /// The AL the job simulates.
    pub simulated: f64,
    /// The golden AL of its mode and draft length; `None` when the table has no cell for them.
    pub golden: Option<f64>,
    /// Within the policy's tolerance of `golden`.
    pub on_curve: bool,
}

fn judge(ctx: &Context, settings: &Section<GoldenAl>, job: &AuditedJob, findings: &mut Vec<Finding>, plots: &mut BTreeMap<String, GoldenPlot>) {
    let spec = &job.facts.speculative;
    let id = job.id();
    let Some(sim) = spec.simulated_al.as_ref() else { return };
    let Some(value) = sim.value.as_f64() else { return };
    let open_severity = job.open_severity();
    let undetermined = |findings: &mut Vec<Finding>, what: String| {
        let evidence = sim.provenance.clone().or_else(|| job.anchor()).into_iter().collect();
        findings.push(Finding::new("golden-al/undetermined", open_severity, what, id, evidence));
    };
    // A draft length and an AL chosen in different arms of a script's
    // `if`/`case` cannot be paired by reading the script in order.
    if let Some(note) = [spec.draft_length.as_ref(), Some(sim)].into_iter().flatten().find_map(|f| f.branch.clone()) {
        let mut evidence: Vec<Provenance> = sim.provenance.iter().cloned().collect();
        evidence.extend(spec.draft_length.as_ref().and_then(|f| f.provenance.clone()).filter(|p| Some(p) != sim.provenance.as_ref()));
        findings.push(Finding::new(
            "golden-al/undetermined",
            open_severity,
            format!("simulates at {} but the draft length and AL depend on which branch of the script runs ({note}); each arm's pair cannot be followed, so no draft length is assumed", text(&sim.value)),
            id,
            evidence,
        ));
        return;
    }
    let key = match key_of(settings, job) {
        Ok(key) => key,
        Err(missing) => return undetermined(findings, format!("simulates at {} but {missing}", text(&sim.value))),
    };
    let draft_model = spec.draft_model.as_ref().map(|f| text(&f.value)).unwrap_or_default();
    let sample_method = spec.draft_sample_method.as_ref().map(|f| text(&f.value));
    // vLLM drafts greedily unless told otherwise; another engine's default is not known.
    let sample_method = sample_method.or_else(|| (job.facts.engine == Some(Engine::Vllm)).then(|| "greedy".to_string()));
    let table_name = table_name(settings, &key, &draft_model, sample_method.as_deref());
    let Some(table_name) = table_name else {
        let shown = match &sample_method {
            Some(m) => format!("with draft_sample_method {m:?}"),
            None => format!("when the {} launch does not show its draft sample method", job.facts.engine.map_or("engine's", Engine::as_str)),
        };
        return undetermined(
            findings,
            format!("no golden curve is defined for {} {} {shown} (the policy's curve rules do not cover it)", key.prefix, key.method),
        );
    };
    let Some(table) = ctx.references.golden.tables.get(&table_name) else {
        let looked = format!("table {table_name} (model prefix {}, method {})", key.prefix, key.method);
        match settings.al_sources.get(&key.prefix) {
            Some(source) => findings.push(Finding::new(
                "golden-al/al-source",
                Severity::Info,
                format!("no golden {looked}; the policy names the AL source: {source}; simulated at {}", text(&sim.value)),
                id,
                sim.provenance.clone().into_iter().collect(),
            )),
            None => findings.push(Finding::new(
                "golden-al/no-table",
                Severity::Error,
                format!(
                    "no golden {looked} among {} table(s) (add one with --golden DIR, or name the AL source in the policy); simulated at {}",
                    ctx.references.golden.tables.len(),
                    text(&sim.value)
                ),
                id,
                sim.provenance.clone().into_iter().collect(),
            )),
        }
        return;
    };
    let default_mode = settings.default_thinking.clone().unwrap_or_else(|| "thinking_on".to_string());
    let (mode, mode_note, mode_evidence) = match &job.facts.thinking {
        Some(fact) => (text(&fact.value), format!("thinking mode {} from {}", text(&fact.value), fact.from), fact.provenance.clone()),
        None => (default_mode.clone(), format!("thinking mode defaulted to {default_mode}: the run shows no thinking indicator"), None),
    };
    let mut evidence: Vec<Provenance> = sim.provenance.iter().cloned().collect();
    evidence.extend(spec.draft_length.as_ref().and_then(|f| f.provenance.clone()));
    evidence.extend(mode_evidence);
    let where_ = format!("{} ({}) / {mode} / K={}", table.name, table.model, key.draft_length);
    let tolerance = settings.tolerance.unwrap_or(0.005);
    let equal = |a: f64, b: f64| (a - b).abs() <= tolerance + 1e-9;
    let golden = table.cell(&mode, key.draft_length).map(|c| c.al);
    plots.entry(table.name.clone()).or_insert_with(|| GoldenPlot { table: table.clone(), points: Vec::new() }).points.push(GoldenPoint {
        job: job.job.id.clone(),
        mode: mode.clone(),
        draft_length: key.draft_length,
        simulated: value,
        golden,
        on_curve: golden.is_some_and(|g| equal(value, g)),
    });
    let Some(cell) = table.cell(&mode, key.draft_length) else {
        findings.push(Finding::new(
            "golden-al/no-cell",
            Severity::Error,
            format!(
                "golden table {} has no value for {mode} K={} (it has {}); the AL may not be guessed; {mode_note}",
                table.name,
                key.draft_length,
                cells_listing(table)
            ),
            id,
            evidence,
        ));
        return;
    };
    evidence.push(cell.provenance.clone());
    let written = written_value(sim);
    if equal(value, cell.al) {
        findings.push(Finding::new("golden-al/match", Severity::Info, format!("{written} = golden AL {} for {where_}; {mode_note}", cell.text), id, evidence));
        return;
    }
    // A mode the serving stack gives requests that set none (the client's own
    // setting is not shown): the other mode's table value is named beside it.
    let request_default = job.facts.thinking.as_ref().filter(|f| f.derivation == Derivation::RequestDefault);
    let other_mode = if mode == "thinking_on" { "thinking_off" } else { "thinking_on" };
    let other_cell = request_default.and_then(|_| table.cell(other_mode, key.draft_length));
    if let Some(fact) = request_default
        && let Some(other) = other_cell.filter(|c| equal(value, c.al))
    {
        evidence.push(other.provenance.clone());
        findings.push(Finding::new(
                "golden-al/thinking-mode",
                Severity::Warning,
                format!(
                    "{written} is the {other_mode} AL {} of {} ({}) for K={}, but {} puts requests in {mode}, whose golden AL is {}; the client's own thinking setting is not shown: if its requests run {mode}, the simulated AL must be {}",
                    other.text, table.name, table.model, key.draft_length, fact.from, cell.text, cell.text
                ),
                id,
                evidence,
            ));
        return;
    }
    // A thinking_off value on a run that does not show thinking disabled.
    if job.facts.thinking.is_none()
        && let Some(off) = table.cell("thinking_off", key.draft_length).filter(|c| equal(value, c.al))
    {
        evidence.push(off.provenance.clone());
        findings.push(Finding::new(
            "golden-al/thinking-mode",
            Severity::Error,
            format!(
                "{written} is the thinking_off AL {} of {}, but the run does not show thinking disabled, so {mode} applies: expected {}",
                off.text, table.name, cell.text
            ),
            id,
            evidence,
        ));
        return;
    }
    let mut hints = Vec::new();
    if let Some(forced) = spec.forced_accepted_tokens.as_ref().and_then(|f| f.value.as_f64())
        && equal(forced, cell.al)
    {
        hints.push(format!(
            "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS counts accepted draft tokens, excluding the bonus token: it must be AL - 1 = {:.2}, not the AL itself",
            cell.al - 1.0
        ));
    }
    if let Some((k, other)) = table.modes.get(&mode).and_then(|row| row.iter().find(|(k, c)| **k != key.draft_length && equal(value, c.al))) {
        hints.push(format!("{} is the golden AL for K={k}, but the server drafts K={}", other.text, key.draft_length));
    }
    if let Some(other) = other_cell {
        hints.push(format!("the {other_mode} value is {}; the client's own thinking setting is not shown", other.text));
    }
    let hint = if hints.is_empty() { String::new() } else { format!(" ({})", hints.join("; ")) };
    findings.push(Finding::new(
        "golden-al/mismatch",
        Severity::Error,
        format!("{written}, but the golden AL for {where_} is {} (tolerance {tolerance}){hint}; {mode_note}", cell.text),
        id,
        evidence,
    ));
}

/// `NAME=value (AL x)` as the run wrote it; an AL computed from another
/// setting (forced tokens + 1, rates summed) is named with its derivation.
fn written_value(sim: &Fact) -> String {
    let shown = sim.provenance.as_ref().map(|p| p.text.clone()).unwrap_or_default();
    if shown.is_empty() || sim.derivation != Derivation::AsWritten {
        format!("simulated AL {} ({})", text(&sim.value), sim.from)
    } else {
        format!("{shown} (simulated AL {})", text(&sim.value))
    }
}

fn cells_listing(table: &Table) -> String {
    table.modes.iter().map(|(mode, row)| format!("{mode} K={}", row.keys().map(u32::to_string).collect::<Vec<_>>().join(","))).collect::<Vec<_>>().join("; ")
}

/// Model prefix, method and draft length of a job, or what is missing.
fn key_of(settings: &Section<GoldenAl>, job: &AuditedJob) -> Result<Key, String> {
    let facts = &job.facts;
    let serving = &facts.summary;
    let names = [serving.served_model_name.as_ref(), serving.model.as_ref()].into_iter().flatten().map(|f| text(&f.value)).chain(job.job.meta.model.clone());
    let prefix = job.job.meta.model_prefix.clone().or_else(|| {
        names.into_iter().find_map(|name| {
            let lower = name.to_ascii_lowercase();
            settings
                .model_prefixes
                .iter()
                .filter(|(frag, _)| lower.contains(&frag.to_ascii_lowercase()))
                .max_by_key(|(frag, _)| frag.len())
                .map(|(_, p)| p.clone())
        })
    });
    let prefix = prefix.ok_or("the model prefix is unknown (no RESULT_FILENAME grammar, no infmax_model_prefix, no known model name)")?;
    let method = facts.speculative.method.as_ref().map(|f| text(&f.value).to_ascii_lowercase()).ok_or("the speculative method is unknown")?;
    let method = match method.as_str() {
        "eagle" | "nextn" => settings.eagle_means.get(&prefix).cloned().unwrap_or_else(|| "mtp".to_string()),
        m if m == "mtp" || m.ends_with("_mtp") => "mtp".to_string(),
        m => m.to_string(),
    };
    let draft = facts
        .speculative
        .draft_length
        .as_ref()
        .ok_or("the draft length is unknown (no speculative_num_steps / block size / num_speculative_tokens / max_draft_len)")?;
    let draft_length =
        draft.value.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| format!("the draft length {} is not a whole number", text(&draft.value)))?;
    Ok(Key { prefix, method, draft_length })
}

/// The table for a key: the policy's exception rules, else `<prefix>_<method>`.
/// When rules exist for the prefix and method but none matches, there is no
/// curve (`None`).
fn table_name(settings: &Section<GoldenAl>, key: &Key, draft_model: &str, sample_method: Option<&str>) -> Option<String> {
    let rules: Vec<_> = settings.curves.iter().filter(|r| r.prefixes.contains(&key.prefix) && r.method == key.method).collect();
    if rules.is_empty() {
        return Some(format!("{}_{}", key.prefix, key.method));
    }
    let draft = draft_model.to_ascii_lowercase();
    rules
        .iter()
        .find(|r| {
            r.draft_contains.as_ref().is_none_or(|f| draft.contains(&f.to_ascii_lowercase()))
                && r.draft_sample_method.as_deref().is_none_or(|m| Some(m) == sample_method)
        })
        .map(|r| r.table.clone())
        .or_else(|| rules.iter().all(|r| r.draft_sample_method.is_none()).then(|| format!("{}_{}", key.prefix, key.method)))
}
