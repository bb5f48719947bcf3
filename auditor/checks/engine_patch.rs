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
    ("engine-patch/distribution-file", "image diff: a file of an installed Python distribution added, modified, deleted or re-permissioned"),
    ("engine-patch/engine-file", "image diff: a file of an engine source tree (engine_paths) changed"),
    ("engine-patch/image-file", "image diff: any other file changed (warning; info when only added or only metadata)"),
    ("engine-patch/patch-file", "image: a .patch/.diff/.rej/.orig file left in the image"),
    ("engine-patch/hook", "image: sitecustomize.py, usercustomize.py or a .pth file (an import line runs code at every start)"),
    ("engine-patch/wheel-reinstall", "image diff: a distribution reinstalled (version, +local label, direct_url.json, INSTALLER, WHEEL build)"),
    ("engine-patch/new-distribution", "image diff: a distribution the upstream image does not have"),
    ("engine-patch/native-library", "image diff: a native library (.so) added or changed"),
    ("engine-patch/executable", "image diff: a new executable in a PATH directory"),
    ("engine-patch/entry-point", "image diff: an engine console script (entry point) changed"),
    ("engine-patch/bytecode", "image diff: a .pyc body changed while its .py source did not"),
    ("engine-patch/volatile", "image diff: a file every build rewrites (volatile_paths), info only"),
    ("engine-patch/record-mismatch", "image verify: a file does not match its distribution's RECORD (hash or size), or is missing"),
    ("engine-patch/unrecorded", "image verify: a file inside a distribution's package directory that no RECORD lists"),
    ("engine-patch/direct-url", "image verify: a distribution installed from a VCS, a local path or a URL (direct_url.json)"),
    ("engine-patch/config", "image diff: the config's Env, Entrypoint, Cmd, WorkingDir, User or Labels changed"),
    ("engine-patch/injection-env", "image: PYTHONPATH, LD_PRELOAD, PIP_INDEX_URL or another injection variable set in the config"),
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
