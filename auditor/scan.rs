//! The scan pipeline (`auditor scan PATH...`): run the signature packs and
//! the forbidden-environment rules over any files and trees — recipes,
//! scripts, logs, archives — without job grouping. Inputs are walked like
//! bundles (directories, zip, tar.gz, nested archives, `.gz` files read
//! transparently), every file is accounted for, each file is read once by
//! the evidence extractor and the signature engine together, and findings
//! are grouped into one check result per check id, so the report and its
//! exit codes are the audit's. With no jobs, each file's environment is
//! judged on its own, and simulated-acceptance knobs are information.

use crate::audit::account;
use crate::bundle::{self, Bundle, Disposition, FileStatus, Limits, MemberVisitor};
use crate::checks::{self, AuditedJob, CheckResult, ForbiddenEnvPerFile, Status};
use crate::evidence::knobs::Catalog;
use crate::evidence::{Extractor, FileEvidence, classify, file_ref};
use crate::finding::{Finding, Severity};
use crate::policy::Policy;
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

/// The bundle visitor that extracts evidence and runs the engine over every
/// member, judging each file's environment as it goes.
struct Scanner<'e, 'p> {
    engine: &'e Engine,
    extractor: Extractor<'e>,
    max_line: usize,
    catalog: &'static Catalog,
    /// `forbidden-env`, when the policy enables it.
    env: Option<ForbiddenEnvPerFile<'p>>,
    /// Files with a simulated-acceptance knob.
    knob_files: usize,
    findings: Vec<Finding>,
    /// Matches past the per-rule cap, by rule id.
    omitted: BTreeMap<String, u64>,
}

impl Scanner<'_, '_> {
    /// The simulated-acceptance knobs of one file, judged as the one file of a job.
    fn knobs(&mut self, evidence: FileEvidence) -> Vec<Finding> {
        if evidence.env.is_empty() && evidence.records.is_empty() && evidence.commands.is_empty() {
            return Vec::new();
        }
        let job = crate::jobs::unassigned_job(&evidence.path, false);
        let mut job = AuditedJob::new("", job, vec![evidence], Vec::new());
        job.derive(self.catalog);
        let found = checks::simulation_knobs_in_file(&job);
        self.knob_files += usize::from(!found.is_empty());
        found
    }
}

impl MemberVisitor for Scanner<'_, '_> {
    fn visit(&mut self, path: &str, reader: &mut dyn Read) -> io::Result<Disposition> {
        let kind = match classify(path) {
            Ok(kind) => kind,
            Err(reason) => return Ok(Disposition::Skipped(reason.to_string())),
        };
        let file = file_ref(path);
        let mut stream = self.engine.stream(file.clone(), kind, self.max_line);
        let (evidence, cut) = self.extractor.extract_teed(&file, kind, reader, Some(&mut stream));
        let scan = stream.finish();
        if scan.binary {
            return Ok(Disposition::Skipped("binary file (a NUL byte in its first 8 KiB)".to_string()));
        }
        for (rule, n) in scan.omitted {
            *self.omitted.entry(rule).or_default() += n;
        }
        self.findings.extend(scan.findings);
        if let Some(env) = &mut self.env {
            self.findings.extend(env.file(&evidence));
        }
        let knobs = self.knobs(evidence);
        self.findings.extend(knobs);
        Ok(match cut.or(scan.incomplete) {
            Some(reason) => Disposition::Partial(reason),
            None => Disposition::Read,
        })
    }
}

/// Scan `paths` with `engine` and the `forbidden-env` settings of `policy`,
/// hashing file contents (SHA-256, for the report's `sha256` fields) only
/// when `hash` is set: hashing costs more than the scan itself. An input
/// that cannot be read is reported as not examined; only when none can be
/// read is that an error.
pub fn scan(paths: &[PathBuf], engine: &Engine, policy: &Policy, limits: &Limits, hash: bool) -> Result<Report, ScanError> {
    let catalog = Catalog::embedded();
    let mut scanner = Scanner {
        engine,
        extractor: Extractor::new(limits.max_line_length),
        max_line: limits.max_line_length,
        catalog,
        env: policy.checks.forbidden_env().map(|settings| ForbiddenEnvPerFile::new(catalog, settings)),
        knob_files: 0,
        findings: Vec::new(),
        omitted: BTreeMap::new(),
    };
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
    let mut by_check: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for finding in scanner.findings {
        let check = finding.rule.split('/').next().unwrap_or_default().to_string();
        by_check.entry(check).or_default().push(finding);
    }
    let mut take = |id: &str| by_check.remove(id).unwrap_or_default();
    let mut checks: Vec<CheckResult> = Vec::new();
    if let Some(env) = scanner.env {
        checks.push(env.result(take("forbidden-env")));
    }
    if let Some(settings) = policy.checks.sim_acc_eval() {
        checks.push(checks::simulation_knobs_result(settings, take("sim-acc-eval"), scanner.knob_files));
    }
    // A pack that feeds `forbidden-env` or `sim-acc-eval` adds its matches to that check's result.
    let judged: BTreeSet<String> = checks.iter().map(|c| c.id.clone()).collect();
    for c in engine.checks().iter().filter(|c| !judged.contains(&c.check)) {
        let omitted = scanner.omitted.iter().filter(|(rule, _)| engine.rule(rule).is_some_and(|r| r.check == c.check));
        checks.push(check_result(&c.check, &c.title, take(&c.check), omitted.map(|(_, n)| n).sum(), read_any));
    }
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
    CheckResult { id: id.to_string(), title: title.to_string(), status, summary, findings, golden: Vec::new() }
}
