//! Checks: one module per stable check id. A check reads typed facts of the
//! audited jobs and emits findings; it never reads raw files.

mod forbidden_env;

use crate::bundle::{Job, JobKind};
use crate::evidence::knobs::Catalog;
use crate::evidence::FileEvidence;
use crate::finding::{Finding, Severity};
use crate::policy::{CheckPolicy, Policy};
use serde::Serialize;

/// A job with the evidence of its files.
#[derive(Debug, Clone)]
pub struct AuditedJob {
    /// The bundle path the job came from.
    pub bundle: String,
    pub job: Job,
    pub files: Vec<FileEvidence>,
}

/// What checks see.
pub struct Context<'a> {
    pub jobs: &'a [AuditedJob],
    pub catalog: &'a Catalog,
}

impl Context<'_> {
    /// How many real jobs there are (the run-level pseudo-job is not one).
    pub fn job_count(&self) -> usize {
        self.jobs.iter().filter(|j| j.job.kind != JobKind::RunLevel).count()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    /// Not applicable: nothing in the input this check applies to.
    Na,
    /// The check could not reach a conclusion.
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Na => "na",
            Status::Error => "error",
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    pub id: String,
    pub title: String,
    pub status: Status,
    pub summary: String,
    pub findings: Vec<Finding>,
}

impl CheckResult {
    /// Fail when any finding is an error, otherwise pass.
    fn from_findings(id: &str, settings: &CheckPolicy, findings: Vec<Finding>, pass: String, fail: String) -> Self {
        let failed = findings.iter().any(|f| f.severity == Severity::Error);
        CheckResult {
            id: id.to_string(),
            title: settings.title.clone(),
            status: if failed { Status::Fail } else { Status::Pass },
            summary: if failed { fail } else { pass },
            findings,
        }
    }

    fn not_applicable(id: &str, settings: &CheckPolicy, why: &str) -> Self {
        CheckResult { id: id.to_string(), title: settings.title.clone(), status: Status::Na, summary: why.to_string(), findings: Vec::new() }
    }
}

/// A check's entry in the registry.
pub struct CheckInfo {
    pub id: &'static str,
    /// The rule ids its findings use, with one line each.
    pub rules: &'static [(&'static str, &'static str)],
    run: fn(&Context, &CheckPolicy) -> CheckResult,
}

/// Every stable check id (DESIGN.md): findings, policies and rule packs may
/// only use these; ids are never reused for something else.
pub const CHECK_IDS: &[&str] = &[
    "forbidden-env",
    "sim-acc-throughput",
    "sim-acc-eval",
    "golden-al",
    "draft-precision",
    "arch-override",
    "engine-patch",
    "upstream-image",
    "image-integrity",
    "eval-threshold",
];

/// Every check this build implements, in report order.
pub const REGISTRY: &[CheckInfo] = &[CheckInfo { id: "forbidden-env", rules: forbidden_env::RULES, run: forbidden_env::run }];

/// Reject a policy that configures a check this build does not implement.
pub fn validate(policy: &Policy) -> Result<(), String> {
    match policy.checks.keys().find(|id| !REGISTRY.iter().any(|c| c.id == id.as_str())) {
        Some(id) => Err(format!(
            "policy {:?} configures unknown check {id:?} (known: {})",
            policy.name,
            REGISTRY.iter().map(|c| c.id).collect::<Vec<_>>().join(", ")
        )),
        None => Ok(()),
    }
}

/// Run every check the policy enables.
pub fn run_all(ctx: &Context, policy: &Policy) -> Vec<CheckResult> {
    REGISTRY
        .iter()
        .filter_map(|info| policy.check(info.id).map(|settings| (info.run)(ctx, settings)))
        .collect()
}
