//! Findings: what a check concluded, with the evidence that proves it and a
//! fingerprint that stays stable across line-number churn.

use crate::policy::suppressions::Suppression;
use crate::provenance::Provenance;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Every stable check id (docs/GUIDE.md, "Checks"): findings, policies and rule packs may
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One conclusion of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `<check-id>/<rule>`, e.g. `forbidden-env/enabled`.
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// The job it concerns, when it concerns one (the first, when it concerns several).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// Every job it concerns, when one cause (the same rule at the same
    /// file and line) concerns several: one finding, not one per job.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<String>,
    pub evidence: Vec<Provenance>,
    /// Hash of the rule id and the normalised evidence (paths and matched
    /// text, not line numbers): stable across unrelated edits.
    pub fingerprint: String,
    /// The policy suppression that accepts this finding, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<Suppression>,
    /// In the `--baseline` the audit was given: known before, not counted
    /// against the verdict.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
    /// `--changed-since`: present at the base commit too, so not written by
    /// the change; listed, never counted against the verdict.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pre_existing: bool,
    /// Image findings: what the change is (`added`, `modified`, `hook`,
    /// `record-mismatch`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Image findings: the absolute path inside the image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Image findings: a unified diff of a changed text file (bounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Image config findings: the setting and its value in each image, for
    /// a two-column view. Not serialised: the message and evidence say it.
    #[serde(skip)]
    pub config_change: Option<ConfigChange>,
}

/// A setting of an image config as each image has it (secrets redacted);
/// `None` where that image does not set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigChange {
    /// `Env PYTHONPATH`, `Entrypoint`, `Labels`.
    pub setting: String,
    pub upstream: Option<String>,
    pub pinned: Option<String>,
}

impl Finding {
    /// A finding with its evidence, each place listed once (in first-seen
    /// order): the fingerprint is of what is shown.
    pub fn new(rule: &str, severity: Severity, message: String, job: Option<&str>, evidence: Vec<Provenance>) -> Self {
        let mut once: Vec<Provenance> = Vec::with_capacity(evidence.len());
        for e in evidence {
            if !once.contains(&e) {
                once.push(e);
            }
        }
        let evidence = once;
        let fingerprint = fingerprint(rule, &evidence);
        Finding {
            rule: rule.to_string(),
            severity,
            message,
            job: job.map(str::to_string),
            jobs: Vec::new(),
            evidence,
            fingerprint,
            suppressed: None,
            baselined: false,
            pre_existing: false,
            kind: None,
            path: None,
            diff: None,
            config_change: None,
        }
    }

    /// An image finding: its kind and the path inside the image it concerns.
    pub fn in_image(mut self, kind: &str, path: Option<&str>) -> Self {
        self.kind = Some(kind.to_string());
        self.path = path.map(str::to_string);
        self
    }

    /// Whether this finding says the check could not decide (rule
    /// `<check>/undetermined`): the check's status is then `error`.
    pub fn is_undetermined(&self) -> bool {
        self.rule.ends_with("/undetermined")
    }

    /// Known before the audit: in the `--baseline`, or pre-existing at the
    /// `--changed-since` base. Known findings are listed, never counted.
    pub fn is_known(&self) -> bool {
        self.baselined || self.pre_existing
    }

    /// An error that counts against the verdict: not suppressed nor
    /// known before, and a violation rather than an undetermined result.
    pub fn is_violation(&self) -> bool {
        self.severity == Severity::Error && !self.is_undetermined() && self.suppressed.is_none() && !self.is_known()
    }

    /// Every job it concerns: the grouped list, else the one job.
    pub fn concerned_jobs(&self) -> impl Iterator<Item = &str> {
        let single = self.jobs.is_empty().then_some(self.job.as_deref()).flatten();
        self.jobs.iter().map(String::as_str).chain(single)
    }

    /// The jobs it concerns, for people: `job X`, or `N jobs: X, Y, …`
    /// (the first three named).
    pub fn jobs_label(&self) -> Option<String> {
        match self.jobs.len() {
            0 | 1 => self.job.as_ref().map(|j| format!("job {j}")),
            n => {
                let named: Vec<&str> = self.jobs.iter().take(3).map(String::as_str).collect();
                Some(format!("{n} jobs: {}{}", named.join(", "), if n > 3 { ", …" } else { "" }))
            }
        }
    }

    /// The first evidence location, for reports that show one.
    pub fn primary(&self) -> Option<&Provenance> {
        self.evidence.first()
    }
}

/// One finding per cause: findings of one rule and severity whose first
/// evidence is the same file and line (the same recipe line seen by every
/// variant and role that inherits it) become one, listing the jobs and
/// keeping every distinct piece of evidence. Order is kept (first seen).
pub fn group_by_place(findings: Vec<Finding>) -> Vec<Finding> {
    type Place = (String, Severity, String, Option<String>, Option<u64>);
    let place = |f: &Finding| -> Option<Place> {
        let e = f.primary()?;
        Some((f.rule.clone(), f.severity, e.file.clone(), e.artifact.clone(), e.line))
    };
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    let mut index: std::collections::HashMap<Place, usize> = std::collections::HashMap::new();
    for finding in findings {
        let Some(key) = place(&finding) else {
            out.push(finding);
            continue;
        };
        match index.get(&key) {
            Some(&i) => {
                let kept = &mut out[i];
                if let Some(job) = finding.job {
                    if kept.jobs.is_empty() {
                        kept.jobs.extend(kept.job.clone());
                    }
                    if !kept.jobs.contains(&job) {
                        kept.jobs.push(job);
                    }
                }
                for e in finding.evidence {
                    if !kept.evidence.contains(&e) {
                        kept.evidence.push(e);
                    }
                }
            }
            None => {
                index.insert(key, out.len());
                out.push(finding);
            }
        }
    }
    // A single job needs no list.
    for f in &mut out {
        if f.jobs.len() == 1 {
            f.jobs.clear();
        }
    }
    out
}

fn fingerprint(rule: &str, evidence: &[Provenance]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(rule.as_bytes());
    for e in evidence {
        hasher.update(b"\0");
        hasher.update(e.file.as_bytes());
        // only evidence that has a layer hashes one: older fingerprints stay
        if let Some(layer) = &e.layer {
            hasher.update(b"\0layer\0");
            hasher.update(layer.as_bytes());
        }
        hasher.update(b"\0");
        hasher.update(e.text.split_whitespace().collect::<Vec<_>>().join(" ").as_bytes());
    }
    hasher.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64, text: &str) -> Provenance {
        Provenance { file: "a/server.log".into(), artifact: None, line: Some(line), span: Some((0, 1)), layer: None, text: text.into() }
    }

    #[test]
    fn each_piece_of_evidence_is_listed_once() {
        let twice = Finding::new("r/x", Severity::Error, "m".into(), None, vec![at(3, "A=1"), at(4, "B=2"), at(3, "A=1")]);
        assert_eq!(twice.evidence, vec![at(3, "A=1"), at(4, "B=2")]);
        let once = Finding::new("r/x", Severity::Error, "m".into(), None, vec![at(3, "A=1"), at(4, "B=2")]);
        assert_eq!(twice.fingerprint, once.fingerprint, "the fingerprint is of what is shown");
    }

    #[test]
    fn fingerprint_ignores_lines_and_spacing_but_not_text_or_rule() {
        let a = Finding::new("r/x", Severity::Error, "m".into(), None, vec![at(3, "A=1  B")]);
        let b = Finding::new("r/x", Severity::Warning, "other".into(), None, vec![at(90, "A=1 B")]);
        let c = Finding::new("r/x", Severity::Error, "m".into(), None, vec![at(3, "A=2 B")]);
        let d = Finding::new("r/y", Severity::Error, "m".into(), None, vec![at(3, "A=1 B")]);
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_ne!(a.fingerprint, c.fingerprint);
        assert_ne!(a.fingerprint, d.fingerprint);
        assert_eq!(a.fingerprint.len(), 32);
    }

    #[test]
    fn one_cause_at_one_place_is_one_finding_listing_its_jobs() {
        let f = |job: &str, line: u64, rule: &str| Finding::new(rule, Severity::Error, format!("m {job}"), Some(job), vec![at(line, "X=1")]);
        let grouped =
            group_by_place(vec![f("a#decode", 3, "r/x"), f("b#decode", 3, "r/x"), f("a#decode", 4, "r/x"), f("c", 3, "r/y"), f("b#decode", 3, "r/x")]);
        assert_eq!(grouped.len(), 3);
        assert_eq!((grouped[0].job.as_deref(), grouped[0].jobs.clone()), (Some("a#decode"), vec!["a#decode".to_string(), "b#decode".to_string()]));
        assert_eq!(grouped[0].evidence.len(), 1, "the same evidence is kept once");
        assert!(grouped[1].jobs.is_empty() && grouped[2].jobs.is_empty());
    }
}
