//! Findings: what a check concluded, with the evidence that proves it and a
//! fingerprint that stays stable across line-number churn.

use crate::evidence::provenance::Provenance;
use crate::policy::suppressions::Suppression;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One conclusion of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `<check-id>/<rule>`, e.g. `forbidden-env/enabled`.
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// The job it concerns, when it concerns one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
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
}

impl Finding {
    pub fn new(rule: &str, severity: Severity, message: String, job: Option<&str>, evidence: Vec<Provenance>) -> Self {
        let fingerprint = fingerprint(rule, &evidence);
        Finding { rule: rule.to_string(), severity, message, job: job.map(str::to_string), evidence, fingerprint, suppressed: None, baselined: false, kind: None, path: None, diff: None }
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

    /// An error that counts against the verdict: not suppressed nor
    /// baselined, and a violation rather than an undetermined result.
    pub fn is_violation(&self) -> bool {
        self.severity == Severity::Error && !self.is_undetermined() && self.suppressed.is_none() && !self.baselined
    }

    /// The first evidence location, for reports that show one.
    pub fn primary(&self) -> Option<&Provenance> {
        self.evidence.first()
    }
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
}
