//! `sim-acc-eval`: eval jobs use real verification. Simulated acceptance
//! commits drafts whatever the target model says, so an eval run under it
//! scores near zero and proves nothing (InferenceX review checklist: no simulated acceptance on evals). Every eval-only
//! job is judged on its own; a throughput job that also ran evals on the
//! same server under simulation is flagged.

use super::{AuditedJob, CheckResult, Context};
use crate::facts::simulation::{InEffect, KnobKind};
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use crate::policy::Section;
use crate::policy::sections::NoSettings;

const ID: &str = "sim-acc-eval";

pub const RULES: &[(&str, &str)] = &[
    ("sim-acc-eval/simulated", "an eval-only job runs with simulated acceptance"),
    ("sim-acc-eval/in-job-eval", "a throughput job under simulated acceptance also ran evals on the same server"),
    ("sim-acc-eval/runner-setting", "an eval-only job carries the runner's SYNTHETIC_ACCEPTANCE inputs"),
    ("sim-acc-eval/inactive-knob", "a simulation knob is present but has no effect"),
    ("sim-acc-eval/undetermined", "an eval-only job's simulation knob comes from a value the input does not show"),
    ("sim-acc-eval/real-verification", "the job's launch env dump shows no simulation: real verification"),
    ("sim-acc-eval/knob", "`auditor scan`: a simulated-acceptance knob in a file (information: a scan has no jobs to tell throughput from eval)"),
];

pub fn run(ctx: &Context, settings: &Section<NoSettings>) -> CheckResult {
    let evals: Vec<_> = ctx.jobs.iter().filter(|j| (j.job.kind == JobKind::EvalOnly || j.job.runs_eval) && !j.job.informational()).collect();
    if evals.is_empty() {
        return CheckResult::not_applicable(ID, settings, "no eval jobs in the input");
    }
    let mut findings = Vec::new();
    let mut failing = 0;
    for job in &evals {
        let found = &job.simulation.knobs;
        let active: Vec<_> = job.simulation.active().collect();
        let eval_only = job.job.kind == JobKind::EvalOnly;
        if job.simulation.anywhere() == InEffect::Unknown && eval_only {
            let unknown: Vec<_> = found.iter().filter(|k| k.in_effect == InEffect::Unknown).collect();
            let shown: Vec<String> = unknown.iter().map(|k| format!("{} ({})", k.setting, k.why)).collect();
            findings.push(Finding::new(
                "sim-acc-eval/undetermined",
                job.open_severity(),
                format!("eval-only job: whether it runs with simulated acceptance is not known: {}", shown.join(", ")),
                job.id(),
                unknown.iter().filter_map(|k| k.provenance.clone()).collect(),
            ));
        }
        if job.simulation.anywhere() == InEffect::Yes {
            let settings_text: Vec<String> = active.iter().map(|k| k.setting.to_string()).collect();
            let (rule, severity, what) = if eval_only {
                failing += 1;
                ("sim-acc-eval/simulated", Severity::Error, "eval-only job runs with simulated acceptance")
            } else {
                ("sim-acc-eval/in-job-eval", Severity::Warning, "throughput job also ran evals on the same server under simulated acceptance")
            };
            findings.push(Finding::new(
                rule,
                severity,
                format!("{what}: {}; its eval scores do not measure the model (evals must use real verification)", settings_text.join(", ")),
                job.id(),
                active.iter().filter_map(|k| k.provenance.clone()).collect(),
            ));
        }
        for knob in found.iter().filter(|k| k.in_effect == InEffect::No && eval_only) {
            let (rule, severity) = match knob.kind {
                KnobKind::RunnerInput => ("sim-acc-eval/runner-setting", Severity::Warning),
                _ => ("sim-acc-eval/inactive-knob", Severity::Info),
            };
            findings.push(Finding::new(rule, severity, format!("{}: {}", knob.setting, knob.why), job.id(), knob.provenance.clone().into_iter().collect()));
        }
        if job.simulation.anywhere() == InEffect::No && eval_only {
            let dump = job
                .files
                .iter()
                .flat_map(|f| f.env_dumps.iter())
                .find(|d| d.complete && d.covers_prefix.as_deref().is_some_and(|p| "SGLANG_SIMULATE_ACC_LEN".starts_with(p)));
            if let Some(dump) = dump {
                findings.push(Finding::new(
                    "sim-acc-eval/real-verification",
                    Severity::Info,
                    format!("the launch env dump ({}) lists no SGLANG_SIMULATE_ACC_LEN: real verification", dump.header.trim()),
                    job.id(),
                    vec![dump.provenance.clone()],
                ));
            }
        }
    }
    let pass = format!("no simulated acceptance in {} eval job(s)", evals.len());
    let fail = format!("simulated acceptance in {failing} of {} eval job(s)", evals.iter().filter(|j| j.job.kind == JobKind::EvalOnly).count());
    CheckResult::from_findings(ID, settings, findings, pass, fail)
}

/// The simulated-acceptance knobs of one file that `auditor scan` read (as
/// the one file of `job`), as information: a scan has no jobs, so whether a
/// knob may be set (for an agentic throughput run, yes; for an eval, no) is
/// for `audit` to judge. Each says whether the engine simulates because of it.
pub fn scan_knobs(job: &AuditedJob) -> Vec<Finding> {
    job.simulation
        .knobs
        .iter()
        .map(|knob| {
            let state = knob.in_effect.as_str();
            Finding::new(
                "sim-acc-eval/knob",
                Severity::Info,
                format!("{} ({state}: {})", knob.setting, knob.why),
                None,
                knob.provenance.iter().cloned().collect(),
            )
        })
        .collect()
}

/// `auditor scan`'s result for the knobs [`scan_knobs`] found in `files`
/// files (their evidence placed): `pass`, the knobs named in the summary,
/// which every format shows.
pub fn scan_result(settings: &Section<NoSettings>, findings: Vec<Finding>, files: usize) -> CheckResult {
    if findings.is_empty() {
        return CheckResult::not_applicable(ID, settings, "no simulated-acceptance knob in the files scanned");
    }
    const SHOWN: usize = 5;
    let mut named: Vec<String> = findings
        .iter()
        .take(SHOWN)
        .map(|f| match f.primary() {
            Some(at) => format!("{} at {}", f.message, at.place()),
            None => f.message.clone(),
        })
        .collect();
    if findings.len() > SHOWN {
        named.push(format!("{} more", findings.len() - SHOWN));
    }
    let summary = format!(
        "information, not judged ({} knob(s) in {files} file(s); `auditor audit` judges them per job: required for agentic throughput, forbidden for evals): {}",
        findings.len(),
        named.join("; ")
    );
    CheckResult::from_findings(ID, settings, findings, summary.clone(), summary)
}
