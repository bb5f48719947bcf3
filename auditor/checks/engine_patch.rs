//! `engine-patch`: the pinned image runs as shipped. The signature rules
//! (`signatures/packs/engine-patch.toml`) find patch commands, writes into
//! installed engine files, forked or rebuilt engine wheels, import
//! shadowing and start-up hooks in every script, recipe and log of the
//! input; each is accepted only with a waiver (`docs/waiver/<PR>.md` in the
//! input, or `--waivers DIR`) that names the patching script and has all
//! four parts. A waiver never covers draft-precision changes.

use super::{CheckResult, Context};
use crate::evidence::waiver::Waiver;
use crate::finding::{Finding, Severity};
use crate::policy::CheckPolicy;

const ID: &str = "engine-patch";

pub const RULES: &[(&str, &str)] = &[
    ("engine-patch/waived", "a patch covered by a complete waiver that names its script"),
    ("engine-patch/<signature rule>", "a patch, shadowing or hook found by a signature rule (see `auditor rules list`)"),
];

pub fn run(ctx: &Context, settings: &CheckPolicy) -> CheckResult {
    let waivers: Vec<&Waiver> = ctx
        .jobs
        .iter()
        .flat_map(|j| j.files.iter().filter_map(|f| f.waiver.as_ref()))
        .chain(ctx.inputs.waivers.iter())
        .collect();
    let mut findings: Vec<Finding> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for job in ctx.jobs {
        for file in &job.files {
            seen.insert((job.bundle.as_str(), file.path.as_str()));
            // A file several jobs see (a recipe's roles, a script's two paths) is reported once.
            for found in file.signatures.iter().filter(|f| f.rule.starts_with("engine-patch/")) {
                if findings.iter().any(|f: &Finding| f.fingerprint == found.fingerprint) {
                    continue;
                }
                let mut finding = judge(found, &file.path, &waivers);
                finding.job = job.id().map(str::to_string);
                findings.push(finding);
            }
        }
    }
    let files = seen.len();
    if files == 0 {
        return CheckResult::not_applicable(ID, settings, "no files to examine");
    }
    let open = findings.iter().filter(|f| f.severity == Severity::Error).count();
    CheckResult::from_findings(
        ID,
        settings,
        findings,
        format!("no unwaived engine patch in {files} file(s)"),
        format!("{open} engine patch(es) without a complete waiver"),
    )
}

/// A signature finding, as accepted by a waiver or as a failure that says
/// what the waivers lack.
fn judge(found: &Finding, script: &str, waivers: &[&Waiver]) -> Finding {
    let naming: Vec<&&Waiver> = waivers.iter().filter(|w| w.names(script)).collect();
    let mut finding = found.clone();
    if let Some(complete) = naming.iter().find(|w| w.missing().is_empty()) {
        finding.rule = "engine-patch/waived".to_string();
        finding.severity = Severity::Info;
        finding.message = format!("{} — covered by the waiver of PR #{} ({})", found.message, complete.pr, complete.path);
        return finding;
    }
    if finding.severity != Severity::Error {
        return finding;
    }
    let script_name = script.rsplit('/').next().unwrap_or(script);
    let lacks = match naming.first() {
        Some(w) => format!("the waiver of PR #{} ({}) names {script_name} but lacks: {}", w.pr, w.path, w.missing().join(", ")),
        None if waivers.is_empty() => "no waiver (docs/waiver/<PR>.md or --waivers DIR) covers it".to_string(),
        None => format!("none of the {} waiver(s) names {script_name}", waivers.len()),
    };
    finding.message = format!("{} in {script_name}; {lacks}", found.message);
    finding
}
