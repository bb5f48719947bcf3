//! The audit pipeline: bundles -> evidence -> jobs -> checks -> report.

use crate::bundle::{self, layout, Bundle, BundleError, FileStatus, Limits};
use crate::checks::{self, AuditedJob, Context, Inputs};
use crate::evidence::facts::{self, Facts};
use crate::evidence::knobs::Catalog;
use crate::evidence::{Extractor, FileEvidence};
use crate::policy::Policy;
use crate::signatures::Engine;
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
pub fn read(path: &PathBuf, limits: &Limits, signatures: &Engine) -> Result<ReadBundle, AuditError> {
    let mut extractor = Extractor::with_signatures(limits.max_line_length, signatures);
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
        jobs.into_iter().map(|job| (job.id.clone(), AuditedJob { bundle: label.clone(), job, files: Vec::new(), facts: Facts::default(), unexamined: Vec::new() })).collect();
    for evidence in extractor.files {
        let job_id = evidence.artifact.as_ref().and_then(|a| assignment.get(a)).cloned().unwrap_or_else(|| {
            if recognised { "run".to_string() } else { "bundle".to_string() }
        });
        by_job
            .entry(job_id.clone())
            .or_insert_with(|| AuditedJob {
                bundle: label.clone(),
                job: layout::unassigned_job(&job_id, recognised),
                files: Vec::new(),
                facts: Facts::default(),
                unexamined: Vec::new(),
            })
            .files
            .push(evidence);
    }
    for file in bundle.files.iter().filter(|f| f.status.is_incomplete()) {
        let job_id = layout::artifact_of(&file.path).and_then(|a| assignment.get(a)).cloned().unwrap_or_else(|| {
            if recognised { "run".to_string() } else { "bundle".to_string() }
        });
        if let Some(job) = by_job.get_mut(&job_id) {
            job.unexamined.push(file.path.clone());
        }
    }
    let mut jobs: Vec<AuditedJob> = by_job.into_values().collect();
    for job in &mut jobs {
        let hints = hints(&job.files);
        layout::apply_hints(&mut job.job, &hints);
        job.facts = facts::derive(&job.files, Catalog::embedded());
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

/// Audit bundles under a policy, against reference `inputs` (golden tables, ...).
pub fn audit(paths: &[PathBuf], policy: &Policy, limits: &Limits, inputs: &Inputs) -> Result<Report, AuditError> {
    checks::validate(policy).map_err(AuditError::Policy)?;
    let signatures = Engine::embedded().map_err(|e| AuditError::Policy(e.to_string()))?;
    let mut bundles = Vec::new();
    let mut jobs = Vec::new();
    for path in paths {
        let read = read(path, limits, &signatures)?;
        bundles.push(read.bundle);
        jobs.extend(read.jobs);
    }
    let ctx = Context { jobs: &jobs, catalog: Catalog::embedded(), inputs };
    let results = checks::run_all(&ctx, policy, &inputs.today);
    Ok(report(&bundles, &jobs, results, policy))
}

fn report(bundles: &[Bundle], jobs: &[AuditedJob], checks: Vec<checks::CheckResult>, policy: &Policy) -> Report {
    let file_job: BTreeMap<(&str, &str), &str> = jobs
        .iter()
        .flat_map(|j| j.files.iter().map(move |f| ((j.bundle.as_str(), f.path.as_str()), j.job.id.as_str())))
        .collect();
    let (inputs, files, not_examined) =
        account(bundles, |bundle, path| file_job.get(&(bundle, path)).map(|j| j.to_string()));
    let jobs = jobs
        .iter()
        .map(|j| JobEntry { bundle: j.bundle.clone(), job: j.job.clone(), files: j.files.len() })
        .collect();
    Report::new(policy.name.clone(), inputs, checks, jobs, files, not_examined)
}

/// The report's account of what was read: the inputs, every file with its
/// status (and job, from `job_of(bundle, path)`), and what was not examined,
/// prefixed with the bundle when there are several.
pub(crate) fn account(
    bundles: &[Bundle],
    job_of: impl Fn(&str, &str) -> Option<String>,
) -> (Vec<Input>, Vec<FileEntry>, Vec<String>) {
    let multi = bundles.len() > 1;
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
            files.push(FileEntry { bundle: b.path.clone(), artifact, job: job_of(&b.path, &f.path), record: f.clone() });
        }
    }
    let inputs = bundles.iter().map(|b| Input { path: b.path.clone(), sha256: b.sha256.clone() }).collect();
    (inputs, files, not_examined)
}
