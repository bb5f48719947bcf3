//! The scan pipeline (`auditor scan PATH...`): run the signature packs over
//! any files and trees — recipes, scripts, logs, archives — without job
//! grouping. Inputs are walked like bundles (directories, zip, tar.gz,
//! nested tarballs, `.gz` files read transparently), every file is accounted
//! for, and findings are grouped into one check result per check id the
//! packs feed, so the report and its exit codes are the audit's.

use crate::audit::account;
use crate::bundle::{self, Bundle, Disposition, FileStatus, Limits, MemberVisitor, layout};
use crate::checks::{CheckResult, Status};
use crate::evidence::classify;
use crate::evidence::provenance::FileRef;
use crate::finding::{Finding, Severity};
use crate::report::Report;
use crate::signatures::Engine;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ScanError {
    #[error("no input could be read: {0}")]
    NothingRead(String),
}

/// The bundle visitor that runs the engine over every member.
struct Scanner<'e> {
    engine: &'e Engine,
    max_line: usize,
    findings: Vec<Finding>,
    /// Matches past the per-rule cap, by rule id.
    omitted: BTreeMap<String, u64>,
}

impl MemberVisitor for Scanner<'_> {
    fn visit(&mut self, path: &str, reader: &mut dyn Read) -> io::Result<Disposition> {
        let kind = match classify(path) {
            Ok(kind) => kind,
            Err(reason) => return Ok(Disposition::Skipped(reason.to_string())),
        };
        let file = FileRef { path: path.to_string(), artifact: layout::artifact_of(path).map(str::to_string) };
        let scan = self.engine.scan_reader(file, kind, self.max_line, reader);
        if scan.binary {
            return Ok(Disposition::Skipped("binary file (a NUL byte in its first 8 KiB)".to_string()));
        }
        for (rule, n) in scan.omitted {
            *self.omitted.entry(rule).or_default() += n;
        }
        self.findings.extend(scan.findings);
        Ok(match scan.incomplete {
            Some(reason) => Disposition::Partial(reason),
            None => Disposition::Read,
        })
    }
}

/// Scan `paths` with `engine`, hashing file contents (SHA-256, for the
/// report's `sha256` fields) only when `hash` is set: hashing costs more than
/// the scan itself. An input that cannot be read is reported as not
/// examined; only when none can be read is that an error.
pub fn scan(paths: &[PathBuf], engine: &Engine, limits: &Limits, hash: bool) -> Result<Report, ScanError> {
    let mut scanner = Scanner { engine, max_line: limits.max_line_length, findings: Vec::new(), omitted: BTreeMap::new() };
    let mut bundles: Vec<Bundle> = Vec::new();
    let mut unreadable = Vec::new();
    for path in paths {
        let before = scanner.findings.len();
        match bundle::read_bundle_with(path, limits, hash, &mut scanner) {
            Ok(bundle) => {
                for evidence in scanner.findings[before..].iter_mut().flat_map(|f| f.evidence.iter_mut()) {
                    evidence.file = display_path(path, &evidence.file);
                }
                bundles.push(bundle);
            }
            Err(e) => unreadable.push(e.to_string()),
        }
    }
    if bundles.is_empty() {
        return Err(ScanError::NothingRead(unreadable.join("; ")));
    }
    let read_any = bundles.iter().flat_map(|b| &b.files).any(|f| matches!(f.status, FileStatus::Read | FileStatus::Partial(_)));
    let mut by_check: BTreeMap<&str, Vec<Finding>> = BTreeMap::new();
    for finding in scanner.findings {
        let check = engine.rule(&finding.rule).map_or("", |r| r.check.as_str());
        by_check.entry(check).or_default().push(finding);
    }
    let checks = engine
        .checks()
        .iter()
        .map(|c| {
            let omitted = scanner.omitted.iter().filter(|(rule, _)| engine.rule(rule).is_some_and(|r| r.check == c.check));
            let findings = by_check.remove(c.check.as_str()).unwrap_or_default();
            check_result(&c.check, &c.title, findings, omitted.map(|(_, n)| n).sum(), read_any)
        })
        .collect();
    let (inputs, files, mut not_examined) = account(&bundles, |_, _| None);
    not_examined.extend(unreadable);
    Ok(Report::new(engine.source().to_string(), inputs, checks, Vec::new(), files, not_examined))
}

/// The path a reviewer opens: the input joined with the member path (the
/// input itself for a single file). Fingerprints were taken over the member
/// path, so they do not depend on how the input was spelled.
fn display_path(input: &Path, member: &str) -> String {
    let input_text = input.display().to_string();
    let is_whole_file = !input.is_dir() && input.file_name().is_some_and(|n| n.to_string_lossy() == member);
    if is_whole_file { input_text } else { format!("{}/{member}", input_text.trim_end_matches('/')) }
}

/// One check's result: the findings of the rules that feed it, and how
/// many further matches were counted but not listed.
fn check_result(id: &str, title: &str, findings: Vec<Finding>, more: u64, read_any: bool) -> CheckResult {
    let files: BTreeSet<&str> = findings.iter().filter_map(|f| f.primary()).map(|p| p.file.as_str()).collect();
    let rules: BTreeSet<&str> = findings.iter().map(|f| f.rule.as_str()).collect();
    let status = if findings.iter().any(|f| f.severity == Severity::Error) {
        Status::Fail
    } else if !read_any {
        Status::Na
    } else {
        Status::Pass
    };
    let summary = match (status, findings.len()) {
        (Status::Na, _) => "no file could be examined".to_string(),
        (_, 0) => "no match".to_string(),
        (_, n) => {
            let omitted = if more > 0 { format!(" (and {more} more not listed)") } else { String::new() };
            format!("{n} match(es){omitted} of {} rule(s) in {} file(s)", rules.len(), files.len())
        }
    };
    CheckResult { id: id.to_string(), title: title.to_string(), status, summary, findings }
}
