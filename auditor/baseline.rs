//! Baselines: adopting the gate on a repository with a past. A baseline is
//! the set of finding fingerprints already known (a previous `--format
//! json` report, or the file `auditor baseline` writes); with one, only
//! findings outside it count against the verdict. Known findings stay in
//! the report, marked, so the debt stays visible while new violations fail.
//!
//! Fingerprints hash the rule and the normalised evidence (not line
//! numbers, not the job), so a baseline survives unrelated edits; the other
//! side of that is that a new job repeating a known violation at the same
//! place, with the same text, is baselined too.

use crate::checks::Status;
use crate::finding::{Finding, Severity};
use crate::report::{BaselineSummary, Report, TOOL, VERSION};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Version of the file `auditor baseline` writes.
pub const BASELINE_VERSION: u32 = 1;

/// Largest baseline file read (a JSON report of a large tree is a few MiB).
const MAX_BASELINE: u64 = 512 << 20;

#[derive(Debug, Error)]
pub enum BaselineError {
    // `error`, not `source`: the message carries it once, however it is printed.
    #[error("baseline {path}: cannot read: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("baseline {path}: larger than {MAX_BASELINE} bytes")]
    TooLarge { path: PathBuf },
    #[error("baseline {path}: not JSON: {error}")]
    Json { path: PathBuf, error: serde_json::Error },
    #[error("baseline {path}: {what}")]
    Shape { path: PathBuf, what: String },
}

/// The fingerprints of a baseline, and where they came from.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    pub path: String,
    pub fingerprints: BTreeSet<String>,
}

impl Baseline {
    /// Read a baseline file or a JSON report.
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let err = |error| BaselineError::Read { path: path.to_path_buf(), error };
        let size = std::fs::metadata(path).map_err(err)?.len();
        if size > MAX_BASELINE {
            return Err(BaselineError::TooLarge { path: path.to_path_buf() });
        }
        let bytes = std::fs::read(path).map_err(err)?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|error| BaselineError::Json { path: path.to_path_buf(), error })?;
        let fingerprints = fingerprints(&value).map_err(|what| BaselineError::Shape { path: path.to_path_buf(), what })?;
        Ok(Baseline { path: path.display().to_string(), fingerprints })
    }
}

/// The fingerprints of error and warning findings in a baseline file
/// (`findings[].fingerprint`) or a JSON report (`checks[].findings[]`).
fn fingerprints(value: &Value) -> Result<BTreeSet<String>, String> {
    let fingerprint = |f: &Value, at: String| -> Result<String, String> {
        match f.get("fingerprint").and_then(Value::as_str) {
            Some(fp) if !fp.is_empty() && fp.len() <= 128 && fp.bytes().all(|b| b.is_ascii_hexdigit()) => Ok(fp.to_ascii_lowercase()),
            Some(fp) => Err(format!("{at}: fingerprint {fp:?} is not a hex digest")),
            None => Err(format!("{at}: no \"fingerprint\" string")),
        }
    };
    let mut out = BTreeSet::new();
    if let Some(version) = value.get("baseline_version") {
        if version.as_u64() != Some(u64::from(BASELINE_VERSION)) {
            return Err(format!("baseline_version {version} is not supported (this auditor reads {BASELINE_VERSION})"));
        }
        let findings = value.get("findings").and_then(Value::as_array).ok_or("no \"findings\" list")?;
        for (i, f) in findings.iter().enumerate() {
            out.insert(fingerprint(f, format!("findings[{i}]"))?);
        }
        return Ok(out);
    }
    let checks = match (value.get("schema_version"), value.get("checks").and_then(Value::as_array)) {
        (Some(_), Some(checks)) => checks,
        _ => return Err("neither a JSON report (`auditor audit --format json`) nor a baseline (`auditor baseline`)".to_string()),
    };
    for (c, check) in checks.iter().enumerate() {
        let findings = check.get("findings").and_then(Value::as_array).ok_or(format!("checks[{c}]: no \"findings\" list"))?;
        for (i, f) in findings.iter().enumerate() {
            if matches!(f.get("severity").and_then(Value::as_str), Some("error" | "warning")) {
                out.insert(fingerprint(f, format!("checks[{c}].findings[{i}]"))?);
            }
        }
    }
    Ok(out)
}

/// How a finding was known before this audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// In the `--baseline` file.
    Baseline,
    /// Present at the `--changed-since` base commit.
    PreExisting,
}

/// Mark the error and warning findings of `report` whose fingerprint is in
/// `fingerprints` as known (`how`), and re-judge the checks whose failures
/// are all known. Returns how many findings were known, how many were not,
/// and which fingerprints matched.
pub fn mark_known(report: &mut Report, fingerprints: &BTreeSet<String>, how: Known) -> (usize, usize, BTreeSet<String>) {
    let mut seen = BTreeSet::new();
    let (mut known, mut new) = (0, 0);
    let label = match how {
        Known::Baseline => "in the baseline",
        Known::PreExisting => "pre-existing at the base",
    };
    for check in &mut report.checks {
        let mut here = 0;
        for f in check.findings.iter_mut().filter(|f| f.severity != Severity::Info) {
            if fingerprints.contains(&f.fingerprint) {
                match how {
                    Known::Baseline => f.baselined = true,
                    Known::PreExisting => f.pre_existing = true,
                }
                seen.insert(f.fingerprint.clone());
                here += 1;
            } else if !f.is_known() {
                new += 1;
            }
        }
        known += here;
        if here == 0 || !matches!(check.status, Status::Fail | Status::Error) {
            continue;
        }
        let failed = check.findings.iter().any(Finding::is_violation);
        let open = check.findings.iter().any(|f| f.is_undetermined() && !f.is_known() && f.suppressed.is_none());
        let status = if failed {
            Status::Fail
        } else if open {
            Status::Error
        } else {
            Status::Pass
        };
        if status != check.status {
            check.summary = format!("{here} finding(s) {label}; none new (was: {})", check.summary);
            check.status = status;
        } else {
            check.summary = format!("{} ({here} more {label})", check.summary);
        }
    }
    report.verdict = report.judge();
    (known, new, seen)
}

/// Apply `--baseline`: its findings are known, not counted.
pub fn apply(report: &mut Report, baseline: &Baseline) {
    let (baselined, new, seen) = mark_known(report, &baseline.fingerprints, Known::Baseline);
    let stale = baseline.fingerprints.len() - seen.len();
    report.baseline = Some(BaselineSummary { path: baseline.path.clone(), known: baseline.fingerprints.len(), baselined, new, stale });
}

#[derive(Debug, Serialize)]
pub struct BaselineFile {
    pub baseline_version: u32,
    pub tool: String,
    pub policy: String,
    pub findings: Vec<BaselineEntry>,
}

#[derive(Debug, Serialize)]
pub struct BaselineEntry {
    pub fingerprint: String,
    pub rule: String,
    pub severity: Severity,
    /// `file:line` of the first evidence (empty when there is none).
    #[serde(rename = "where")]
    pub place: String,
    /// How many findings of the report share this fingerprint (one per job).
    pub findings: usize,
}

impl BaselineFile {
    /// The error and warning findings of `report` (suppressed ones included:
    /// a suppression can expire).
    pub fn of(report: &Report) -> Self {
        let mut by_fingerprint: BTreeMap<&str, BaselineEntry> = BTreeMap::new();
        for (_, f) in report.findings().filter(|(_, f)| f.severity != Severity::Info) {
            by_fingerprint
                .entry(&f.fingerprint)
                .or_insert_with(|| BaselineEntry {
                    fingerprint: f.fingerprint.clone(),
                    rule: f.rule.clone(),
                    severity: f.severity,
                    place: f.primary().map(crate::provenance::Provenance::place).unwrap_or_default(),
                    findings: 0,
                })
                .findings += 1;
        }
        let mut findings: Vec<BaselineEntry> = by_fingerprint.into_values().collect();
        findings.sort_by(|a, b| (&a.rule, &a.place, &a.fingerprint).cmp(&(&b.rule, &b.place, &b.fingerprint)));
        BaselineFile { baseline_version: BASELINE_VERSION, tool: format!("{TOOL} {VERSION}"), policy: report.policy.clone(), findings }
    }

    pub fn to_json(&self) -> String {
        let mut out = serde_json::to_string_pretty(self).unwrap_or_default();
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_reports_and_baseline_files_and_rejects_other_json() {
        let report = json!({ "schema_version": 1, "checks": [ { "findings": [
            { "severity": "error", "fingerprint": "ab01" },
            { "severity": "info", "fingerprint": "cd02" },
            { "severity": "warning", "fingerprint": "EF03" } ] } ] });
        assert_eq!(fingerprints(&report).unwrap(), ["ab01", "ef03"].map(String::from).into());
        let file = json!({ "baseline_version": 1, "findings": [ { "fingerprint": "ab01", "rule": "x/y" } ] });
        assert_eq!(fingerprints(&file).unwrap().len(), 1);
        assert!(fingerprints(&json!({ "baseline_version": 9, "findings": [] })).unwrap_err().contains("not supported"));
        assert!(fingerprints(&json!([1, 2])).unwrap_err().contains("neither"));
        assert!(fingerprints(&json!({ "baseline_version": 1, "findings": [ { "fingerprint": "<script>" } ] })).unwrap_err().contains("findings[0]"));
    }
}
