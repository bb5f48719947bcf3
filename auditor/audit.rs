//! The audit pipeline: bundles -> evidence -> jobs -> checks -> report.

use crate::bundle::{self, layout, Bundle, BundleError, FileStatus, Limits};
use crate::checks::{self, AuditedJob, Context};
use crate::evidence::knobs::Catalog;
use crate::evidence::{Extractor, FileEvidence};
use crate::policy::Policy;
use crate::report::{FileEntry, Input, JobEntry, Report};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum AuditError {
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error("{0}")]
    Policy(String),
}

/// A bundle read and split into jobs.
pub struct ReadBundle {
    pub bundle: Bundle,
    pub jobs: Vec<AuditedJob>,
}

/// Read one bundle, extract evidence from every file and group the files
/// into jobs (files outside any job artifact form the pseudo-job `run`,
/// or `bundle` when the layout is not recognised at all).
pub fn read(path: &PathBuf, limits: &Limits) -> Result<ReadBundle, AuditError> {
    let mut extractor = Extractor::new(limits.max_line_length);
    let bundle = bundle::read_bundle(path, limits, &mut extractor)?;
    let label = bundle.path.clone();
    let artifacts: BTreeSet<String> = bundle
        .files
        .iter()
        .filter_map(|f| layout::artifact_of(&f.path).map(str::to_string))
        .collect();
    let (jobs, assignment) = layout::group(&artifacts);
    let recognised = !jobs.is_empty();
    let mut by_job: BTreeMap<String, AuditedJob> =
        jobs.into_iter().map(|job| (job.id.clone(), AuditedJob { bundle: label.clone(), job, files: Vec::new() })).collect();
    for evidence in extractor.files {
        let job_id = evidence.artifact.as_ref().and_then(|a| assignment.get(a)).cloned().unwrap_or_else(|| {
            if recognised { "run".to_string() } else { "bundle".to_string() }
        });
        by_job
            .entry(job_id.clone())
            .or_insert_with(|| AuditedJob { bundle: label.clone(), job: layout::unassigned_job(&job_id, recognised), files: Vec::new() })
            .files
            .push(evidence);
    }
    let mut jobs: Vec<AuditedJob> = by_job.into_values().collect();
    for job in &mut jobs {
        let hints = hints(&job.files);
        layout::apply_hints(&mut job.job, &hints);
    }
    Ok(ReadBundle { bundle, jobs })
}

/// What the content of a job's files says about the job.
fn hints(files: &[FileEvidence]) -> layout::ContentHints {
    let mut hints = layout::ContentHints::default();
    for file in files {
        if let Some(m) = &file.metadata {
            hints.meta.fill_from(&m.meta);
            hints.scenario = hints.scenario.or(m.scenario);
        }
        hints.eval_payload |= file.eval_payload;
        for a in file.env.iter().filter(|a| a.name == "EVAL_ONLY") {
            hints.eval_only = a.value.as_deref().map(|v| v.eq_ignore_ascii_case("true"));
        }
    }
    hints
}

/// Audit bundles under a policy.
pub fn audit(paths: &[PathBuf], policy: &Policy, limits: &Limits) -> Result<Report, AuditError> {
    checks::validate(policy).map_err(AuditError::Policy)?;
    let mut bundles = Vec::new();
    let mut jobs = Vec::new();
    for path in paths {
        let read = read(path, limits)?;
        bundles.push(read.bundle);
        jobs.extend(read.jobs);
    }
    let ctx = Context { jobs: &jobs, catalog: Catalog::embedded() };
    let results = checks::run_all(&ctx, policy);
    Ok(report(&bundles, &jobs, results, policy))
}

fn report(bundles: &[Bundle], jobs: &[AuditedJob], checks: Vec<checks::CheckResult>, policy: &Policy) -> Report {
    let multi = bundles.len() > 1;
    let file_job: BTreeMap<(&str, &str), &str> = jobs
        .iter()
        .flat_map(|j| j.files.iter().map(move |f| ((j.bundle.as_str(), f.path.as_str()), j.job.id.as_str())))
        .collect();
    let mut not_examined = Vec::new();
    let mut files = Vec::new();
    for b in bundles {
        let prefix = |text: &str| if multi { format!("{}: {text}", b.path) } else { text.to_string() };
        not_examined.extend(b.not_examined.iter().map(|n| prefix(n)));
        for f in &b.files {
            if let FileStatus::Partial(reason) | FileStatus::NotExamined(reason) = &f.status {
                not_examined.push(prefix(&format!("{}: {reason}", f.path)));
            }
            let artifact = layout::artifact_of(&f.path).map(str::to_string);
            let job = file_job.get(&(b.path.as_str(), f.path.as_str())).map(|j| j.to_string());
            files.push(FileEntry { bundle: b.path.clone(), artifact, job, record: f.clone() });
        }
    }
    let jobs = jobs
        .iter()
        .map(|j| JobEntry { bundle: j.bundle.clone(), job: j.job.clone(), files: j.files.len() })
        .collect();
    let inputs = bundles.iter().map(|b| Input::Bundle { path: b.path.clone(), sha256: b.sha256.clone() }).collect();
    Report::new(policy.name.clone(), inputs, checks, jobs, files, not_examined)
}
