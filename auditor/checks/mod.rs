//! Checks: one module per stable check id. A check reads typed facts of the
//! audited jobs and emits findings; it never reads raw files.

mod arch_override;
mod draft_precision;
pub(crate) mod engine_patch;
mod eval_threshold;
mod forbidden_env;
mod golden_al;
#[cfg(test)]
mod invariance;
mod sim_acc_eval;
mod sim_acc_throughput;
mod upstream_image;

pub use forbidden_env::{PerFile as ForbiddenEnvPerFile, image_env as forbidden_env_in_image};
pub use golden_al::{GoldenPlot, GoldenPoint};
pub use sim_acc_eval::{scan_knobs as simulation_knobs_in_file, scan_result as simulation_knobs_result};

use crate::evidence::knobs::Catalog;
pub use crate::facts::AuditedJob;
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use crate::policy::{Checks, Policy, Section};
use crate::reference::References;
use serde::Serialize;

/// What checks see.
pub struct Context<'a> {
    pub jobs: &'a [AuditedJob],
    pub catalog: &'a Catalog,
    pub references: &'a References,
    /// The whole policy, so a check can leave to another check what that one owns.
    pub policy: &'a Policy,
}

impl Context<'_> {
    /// Whether `forbidden-env` is enabled and forbids variable `name`: its
    /// failure is then the one report of that variable.
    pub fn forbids(&self, name: &str) -> bool {
        self.policy.checks.forbidden_env().is_some_and(|p| p.forbid.iter().any(|f| f.name == name))
    }

    /// How many real jobs there are (the run-level pseudo-job is not one).
    pub fn job_count(&self) -> usize {
        self.jobs.iter().filter(|j| j.job.kind != JobKind::RunLevel).count()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
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
        self.into()
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
    /// `golden-al`: the golden tables compared against, with each judged
    /// job on them, for the HTML chart. Not serialised: the findings carry it in words.
    #[serde(skip)]
    pub golden: Vec<GoldenPlot>,
}

impl CheckResult {
    /// Fail when any finding is an error, otherwise pass.
    pub(crate) fn from_findings<T>(id: &str, settings: &Section<T>, findings: Vec<Finding>, pass: String, fail: String) -> Self {
        Self::judged(id, settings, findings, pass, fail, String::new())
    }

    /// Fail when any error finding is a violation; otherwise `error` when a
    /// finding says the check could not decide (rule `<id>/undetermined`);
    /// otherwise pass.
    pub(crate) fn judged<T>(id: &str, settings: &Section<T>, findings: Vec<Finding>, pass: String, fail: String, undetermined: String) -> Self {
        let failed = findings.iter().any(Finding::is_violation);
        let open = findings.iter().any(Finding::is_undetermined);
        let (status, summary) = match (failed, open) {
            (true, _) => (Status::Fail, fail),
            (false, true) => (Status::Error, undetermined),
            (false, false) => (Status::Pass, pass),
        };
        CheckResult { id: id.to_string(), title: settings.title.clone(), status, summary, findings, golden: Vec::new() }
    }

    fn not_applicable<T>(id: &str, settings: &Section<T>, why: &str) -> Self {
        CheckResult {
            id: id.to_string(),
            title: settings.title.clone(),
            status: Status::Na,
            summary: why.to_string(),
            findings: Vec::new(),
            golden: Vec::new(),
        }
    }
}

/// A check's entry in the registry.
pub struct CheckInfo {
    pub id: &'static str,
    /// The rule ids its findings use, with one line each.
    pub rules: &'static [(&'static str, &'static str)],
    /// Runs the check with its section, when the policy enables it.
    run: fn(&Context, &Checks) -> Option<CheckResult>,
}

pub use crate::finding::CHECK_IDS;

/// Every check this build implements, in report order.
pub const REGISTRY: &[CheckInfo] = &[
    CheckInfo { id: "forbidden-env", rules: forbidden_env::RULES, run: |ctx, checks| checks.forbidden_env().map(|s| forbidden_env::run(ctx, s)) },
    CheckInfo {
        id: "sim-acc-throughput",
        rules: sim_acc_throughput::RULES,
        run: |ctx, checks| checks.sim_acc_throughput().map(|s| sim_acc_throughput::run(ctx, s)),
    },
    CheckInfo { id: "sim-acc-eval", rules: sim_acc_eval::RULES, run: |ctx, checks| checks.sim_acc_eval().map(|s| sim_acc_eval::run(ctx, s)) },
    CheckInfo { id: "golden-al", rules: golden_al::RULES, run: |ctx, checks| checks.golden_al().map(|s| golden_al::run(ctx, s)) },
    CheckInfo { id: "draft-precision", rules: draft_precision::RULES, run: |ctx, checks| checks.draft_precision().map(|s| draft_precision::run(ctx, s)) },
    CheckInfo { id: "arch-override", rules: arch_override::RULES, run: |ctx, checks| checks.arch_override().map(|s| arch_override::run(ctx, s)) },
    CheckInfo { id: "engine-patch", rules: engine_patch::RULES, run: |ctx, checks| checks.engine_patch().map(|s| engine_patch::run(ctx, s)) },
    CheckInfo { id: "upstream-image", rules: upstream_image::RULES, run: |ctx, checks| checks.upstream_image().map(|s| upstream_image::run(ctx, s)) },
    CheckInfo { id: "eval-threshold", rules: eval_threshold::RULES, run: |ctx, checks| checks.eval_threshold().map(|s| eval_threshold::run(ctx, s)) },
];

/// Run every check the policy enables, then apply the policy's suppressions
/// (as of `today`).
pub fn run_all(ctx: &Context, policy: &Policy, today: jiff::civil::Date) -> Vec<CheckResult> {
    let mut results: Vec<CheckResult> = REGISTRY.iter().filter_map(|info| (info.run)(ctx, &policy.checks)).collect();
    for result in &mut results {
        result.findings = crate::finding::group_by_place(std::mem::take(&mut result.findings));
    }
    suppress(&mut results, policy, today);
    results
}

/// Mark findings accepted by a live suppression, re-judge the checks whose
/// failures are all accepted, and report expired and unused suppressions.
pub fn suppress(results: &mut Vec<CheckResult>, policy: &Policy, today: jiff::civil::Date) {
    if policy.suppressions.is_empty() {
        return;
    }
    let mut used = vec![false; policy.suppressions.len()];
    for result in results.iter_mut() {
        for finding in &mut result.findings {
            let Some(i) = policy.suppressions.iter().position(|s| s.matches(&finding.rule, &finding.fingerprint)) else { continue };
            used[i] = true;
            let s = &policy.suppressions[i];
            if !s.expired(today) {
                finding.suppressed = Some(s.clone());
            }
        }
        let accepted = result.findings.iter().filter(|f| f.suppressed.is_some()).count();
        if accepted > 0 && result.status == Status::Fail && !result.findings.iter().any(Finding::is_violation) {
            result.status = if result.findings.iter().any(Finding::is_undetermined) { Status::Error } else { Status::Pass };
            result.summary = format!("{accepted} finding(s) accepted by policy suppressions");
        }
    }
    let mut findings = Vec::new();
    for (s, used) in policy.suppressions.iter().zip(used) {
        let what = format!("suppression of {} (owner {}, reason: {})", s.rule, s.owner, s.reason);
        let provenance = crate::provenance::Provenance::new(format!("policy {}", policy.name), None, format!("rule = {:?}, expires = {:?}", s.rule, s.expires));
        if s.expired(today) {
            findings.push(Finding::new(
                "suppressions/expired",
                Severity::Warning,
                format!("{what} expired on {}: its findings count again", s.expires),
                None,
                vec![provenance],
            ));
        } else if !used {
            findings.push(Finding::new(
                "suppressions/unmatched",
                Severity::Warning,
                format!("{what} matched no finding: remove it or fix its rule/fingerprint"),
                None,
                vec![provenance],
            ));
        }
    }
    let n = policy.suppressions.len();
    let summary = if findings.is_empty() {
        format!("{n} suppression(s) in use and current")
    } else {
        format!("{} of {n} suppression(s) expired or unmatched", findings.len())
    };
    results.push(CheckResult {
        id: "suppressions".to_string(),
        title: "Policy suppressions are current and used".to_string(),
        status: Status::Pass,
        summary,
        findings,
        golden: Vec::new(),
    });
}
