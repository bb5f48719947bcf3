//! Jobs: the files of an input grouped into the benchmark jobs that
//! produced them (by artifact for a `gh run download` layout, see
//! [`artifacts`]) or, for a checkout of benchmark sources, into the jobs they
//! will run as ([`repository`]). It runs after the evidence parsers (content
//! decides what names leave open) and before facts and checks.

pub mod artifacts;
pub mod repository;
pub mod runners;

use serde::Serialize;

pub use crate::evidence::meta::{JobMeta, Scenario};
pub use artifacts::{group, parse_result_filename};

/// Whether a job measured throughput or only ran evals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum JobKind {
    Throughput,
    EvalOnly,
    /// Neither the artifact names nor the content say.
    Unknown,
    /// Not a job: run-level files outside any job artifact of a `gh run
    /// download` layout, or files of a repository that no job runs.
    RunLevel,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A benchmark job and the artifacts that belong to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Job {
    /// The RESULT_FILENAME, or `bundle` for files outside any job artifact.
    pub id: String,
    pub kind: JobKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// A throughput job that also ran an eval pass on the same server.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub runs_eval: bool,
    /// How the kind was decided.
    pub kind_reason: String,
    /// The srt-slurm worker role of a recipe job (`prefill`, `decode`, `aggregated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Read from benchmark sources before any run (a repository checkout):
    /// no logs or results exist yet.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_sources: bool,
    pub meta: JobMeta,
    pub artifacts: Vec<String>,
}

impl Job {
    /// A prefill role does not generate tokens: the generation role decides
    /// the golden target, and what prefill sets is informational (domain
    /// brief §8.3, §14).
    pub fn informational(&self) -> bool {
        self.role.as_deref() == Some("prefill")
    }
}

/// What the content of a job's files says, gathered by the evidence parsers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentHints {
    pub meta: JobMeta,
    pub scenario: Option<Scenario>,
    /// `EVAL_ONLY=true` / `false` seen in the job's environment.
    pub eval_only: Option<bool>,
    /// An eval payload (`meta_env.json`) was found.
    pub eval_payload: bool,
}

/// The pseudo-job for files outside any job artifact: run-level files of a
/// `gh run download` layout, or, when no job artifact is recognised at all,
/// the one job of unknown kind that the bundle holds (decided by content).
pub fn unassigned_job(id: &str, layout_recognised: bool) -> Job {
    let (kind, reason) = match layout_recognised {
        true => (JobKind::RunLevel, "run-level files outside any job artifact"),
        false => (JobKind::Unknown, "not a gh run download layout: one job of unknown kind"),
    };
    Job {
        id: id.to_string(),
        kind,
        scenario: None,
        runs_eval: false,
        kind_reason: reason.to_string(),
        role: None,
        from_sources: false,
        meta: JobMeta::default(),
        artifacts: Vec::new(),
    }
}

/// Apply what the files' content says to a job: metadata fills gaps in the
/// name grammar, and content decides a kind the names left open or contradicts.
pub fn apply_hints(job: &mut Job, hints: &ContentHints) {
    job.meta.fill_from(&hints.meta);
    if job.scenario.is_none() {
        job.scenario = hints.scenario;
    }
    match (job.kind, hints.eval_only) {
        (JobKind::Unknown, Some(true)) => {
            job.kind = JobKind::EvalOnly;
            job.kind_reason = "EVAL_ONLY=true in the job's environment".to_string();
        }
        (JobKind::Unknown, Some(false)) => {
            job.kind = JobKind::Throughput;
            job.kind_reason = "EVAL_ONLY=false in the job's environment".to_string();
        }
        (JobKind::Unknown, None) if hints.eval_payload => {
            job.kind = JobKind::EvalOnly;
            job.kind_reason = "eval payload (meta_env.json) and no throughput artifacts".to_string();
        }
        (JobKind::Throughput, Some(true)) => {
            job.kind = JobKind::EvalOnly;
            job.kind_reason = "EVAL_ONLY=true in the job's environment, although its artifacts look like throughput".to_string();
        }
        _ => {}
    }
}

/// Something a job depends on that was not examined, and why: a check
/// that concludes from absence names these, and what a job runs outside
/// the input is listed once in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unexamined {
    /// A file of the job that was not read in full (its path).
    File(String),
    /// What the job runs, which the input does not hold.
    NotInInput(String),
    /// What the job runs, which the auditor does not map to the input's scripts.
    NotMapped(String),
    /// Anything else the job depends on, said in full.
    Other(String),
}

impl Unexamined {
    /// Whether it is something the job runs from outside the input.
    pub fn outside_the_input(&self) -> bool {
        matches!(self, Unexamined::NotInInput(_) | Unexamined::NotMapped(_))
    }

    /// The path of a file not read in full.
    pub fn file(&self) -> Option<&str> {
        match self {
            Unexamined::File(path) => Some(path),
            _ => None,
        }
    }

    /// The description in prose (a file's path is not), for rewording.
    pub fn prose_mut(&mut self) -> Option<&mut String> {
        match self {
            Unexamined::File(_) => None,
            Unexamined::NotInInput(t) | Unexamined::NotMapped(t) | Unexamined::Other(t) => Some(t),
        }
    }
}

impl std::fmt::Display for Unexamined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unexamined::File(t) | Unexamined::Other(t) => f.write_str(t),
            Unexamined::NotInInput(t) => write!(f, "{t}, which is not in the input"),
            Unexamined::NotMapped(t) => write!(f, "{t}, which the auditor does not map to the scripts it runs"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    pub(super) const RF: &str = "dsv41flash_tp4_conc16_kvnone_spec-mtp_fp4_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc16_h200-dgxc_2";

    fn names(list: &[String]) -> BTreeSet<String> {
        list.iter().cloned().collect()
    }

    #[test]
    fn content_decides_a_kind_the_names_leave_open() {
        let (mut jobs, _) = group(&names(&[format!("agentic_{RF}")]));
        assert_eq!(jobs[0].kind, JobKind::Unknown);
        apply_hints(&mut jobs[0], &ContentHints { eval_only: Some(true), ..Default::default() });
        assert_eq!(jobs[0].kind, JobKind::EvalOnly);
    }
}
