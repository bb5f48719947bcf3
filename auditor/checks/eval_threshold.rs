//! `eval-threshold`: eval results meet the minimum score for their task and
//! model (InferenceX thresholds: the model's entry, else the task default).
//! Each score appears in a finding with its stderr and the threshold. Jobs
//! read from benchmark sources have no results yet and are not judged.

use super::{CheckResult, Context};
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use crate::policy::Section;
use crate::policy::sections::NoSettings;

const ID: &str = "eval-threshold";

pub const RULES: &[(&str, &str)] = &[
    ("eval-threshold/below", "an eval score is below the threshold for its task and model"),
    ("eval-threshold/met", "an eval score meets its threshold"),
    ("eval-threshold/no-threshold", "no threshold is defined for the task"),
    ("eval-threshold/failed-batch", "the eval payload reports failed eval concurrencies"),
    ("eval-threshold/undetermined", "an eval job has no eval results to judge"),
];

pub fn run(ctx: &Context, settings: &Section<NoSettings>) -> CheckResult {
    let jobs: Vec<_> = ctx
        .jobs
        .iter()
        .filter(|j| ((j.job.kind == JobKind::EvalOnly || j.job.runs_eval) && !j.job.from_sources) || j.files.iter().any(|f| !f.eval_scores.is_empty()))
        .collect();
    if jobs.is_empty() {
        return CheckResult::not_applicable(ID, settings, "no eval jobs or eval results in the input");
    }
    let thresholds = &ctx.references.thresholds;
    let mut findings = Vec::new();
    let mut scored = 0;
    for job in &jobs {
        let prefix = job.job.meta.model_prefix.as_deref();
        let scores: Vec<_> = job.files.iter().flat_map(|f| f.eval_scores.iter()).collect();
        if scores.is_empty() && job.job.kind == JobKind::EvalOnly {
            let caveat = job.absence_caveat().map(|c| format!("; {c}")).unwrap_or_default();
            findings.push(Finding::new(
                "eval-threshold/undetermined",
                Severity::Error,
                format!("eval-only job has no eval results (lm-eval results*.json or SWE-bench report){caveat}"),
                job.id(),
                vec![],
            ));
        }
        for file in job.files.iter().filter(|f| !f.failed_eval_concs.is_empty()) {
            findings.push(Finding::new(
                "eval-threshold/failed-batch",
                Severity::Error,
                format!("eval concurrencies {:?} failed (meta_env.json failed_eval_concs)", file.failed_eval_concs),
                job.id(),
                vec![crate::provenance::Provenance::new(file.path.clone(), None, "failed_eval_concs").in_artifact(file.artifact.clone())],
            ));
        }
        for score in scores {
            scored += 1;
            let stderr = score.stderr.map(|s| format!(" ± {s}")).unwrap_or_default();
            let shown = format!("{} {} = {}{stderr}", score.task, score.metric, score.value);
            let evidence = vec![score.provenance.clone()];
            match thresholds.minimum(prefix, &score.task) {
                Some((min, entry)) if score.value + 1e-12 < min => findings.push(Finding::new(
                    "eval-threshold/below",
                    Severity::Error,
                    format!("{shown} is below the threshold {min} ({entry} in {}; model prefix {})", thresholds.source, prefix.unwrap_or("unknown")),
                    job.id(),
                    evidence,
                )),
                Some((min, entry)) => findings.push(Finding::new(
                    "eval-threshold/met",
                    Severity::Info,
                    format!("{shown} meets the threshold {min} ({entry})"),
                    job.id(),
                    evidence,
                )),
                None => findings.push(Finding::new(
                    "eval-threshold/no-threshold",
                    Severity::Warning,
                    format!("{shown}: no threshold for task {} in {}", score.task, thresholds.source),
                    job.id(),
                    evidence,
                )),
            }
        }
    }
    let n = jobs.len();
    CheckResult::judged(
        ID,
        settings,
        findings,
        format!("{scored} eval score(s) of {n} job(s) meet their thresholds"),
        format!("eval scores below threshold or failed batches in {n} eval job(s)"),
        "an eval job has no results to judge".to_string(),
    )
}
