//! `engine-patch`: the pinned image runs as shipped. The signature rules
//! (`signatures/packs/engine-patch.toml`) find patch commands, writes into
//! installed engine files, forked or rebuilt engine wheels, import
//! shadowing and start-up hooks in every script, recipe and log of the
//! input; each is accepted only with a waiver (`docs/waiver/<PR>.md` in the
//! input, or `--waivers DIR`) that names the patching script and has all
//! four parts. A waiver never covers draft-precision changes.
//!
//! Scripts are judged on their parsed commands
//! ([`crate::evidence::shell::actions`]): a write, in-place edit, Python
//! write or applied patch whose target is an engine (`engine_packages`
//! under site-packages, `engine_trees`) is an error; one on the benchmark
//! harness (`harness_packages`: orchestrator, eval client, load generator)
//! a warning reviewed apart. Installs follow Check 10's text: a serving
//! engine (`serving_engines`) built from a git ref, a fork, a pull-request
//! head or a checkout is a rebuilt engine, an error; another engine
//! package built so a warning naming the ref; a released package from an
//! index, or one from the image's own files, a warning naming it; an
//! install after the server is up is the benchmark client's (harness). For scripts the signature rules
//! those parsed commands cover ([`PARSED_IN_SCRIPTS`]) are not reported
//! again; they still run over logs, YAML, Python and command files.

use super::{CheckResult, Context};
use crate::evidence::FileKind;
use crate::evidence::env::EnvAssignment;
use crate::evidence::gate::Gate;
use crate::evidence::shell::actions::{ActionKind, ScriptAction};
use crate::evidence::waiver::Waiver;
use crate::finding::{Finding, Severity};
use crate::policy::Section;
use crate::policy::pattern::{self, normalise_name};
use crate::policy::sections::EnginePatch;

const ID: &str = "engine-patch";

/// Signature rules whose shapes the parsed script commands cover: in
/// scripts they are judged from the commands, not from line patterns.
pub const PARSED_IN_SCRIPTS: [&str; 7] = [
    "engine-patch/git-apply",
    "engine-patch/patch-command",
    "engine-patch/edit-installed",
    "engine-patch/locate-and-write",
    "engine-patch/python-heredoc-write",
    "engine-patch/pip-install",
    "engine-patch/startup-hook",
];

pub const RULES: &[(&str, &str)] = &[
    ("engine-patch/waived", "a patch covered by a complete waiver that names its script"),
    ("engine-patch/edit", "script: an engine file edited in place (sed -i, perl -pi), target resolved from the script"),
    ("engine-patch/overwrite", "script: an engine file written (cp, mv, install, tee, >, >>)"),
    ("engine-patch/python-write", "script: a Python program (-c or heredoc) opens an engine file for writing"),
    ("engine-patch/apply", "script: a patch applied (git apply, patch) in an engine tree, or in a tree the script does not name"),
    (
        "engine-patch/rebuilt-engine",
        "script: a serving engine (serving_engines) built from a git ref, a fork, a pull-request head or a local checkout (Check 10)",
    ),
    ("engine-patch/install", "script: a package the policy does not know installed from a source tree, URL or wheel"),
    ("engine-patch/stock-package", "script: an engine package installed as released (an index) or from the image's own files (warning naming it)"),
    ("engine-patch/client-install", "script: an engine package installed after the server is up, for the benchmark client (warning)"),
    (
        "engine-patch/switch-ref",
        "script: an engine source tree switched to another ref (git checkout, switch, pull, merge, cherry-pick, rebase, reset --hard) where the image installed it",
    ),
    (
        "engine-patch/pythonpath-hook",
        "script: PYTHONPATH names a directory of the input holding a start-up hook (sitecustomize.py, usercustomize.py) or a module with an engine's name",
    ),
    ("engine-patch/bind-mount", "script: a host file or directory bind-mounted over an engine's installed tree (docker -v/--mount, srun --container-mounts)"),
    ("engine-patch/script-hook", "script: a start-up hook (sitecustomize.py, usercustomize.py, .pth) written"),
    ("engine-patch/unmerged-ref", "script: an engine package other than a serving engine built from a ref (warning naming the ref)"),
    ("engine-patch/found-anywhere", "script: files found by name anywhere on the machine (find / … -exec, find / … | xargs) edited or written (warning)"),
    ("engine-patch/harness", "script: the benchmark harness (orchestrator, eval client, load generator) changed; reviewed apart from engine patches (warning)"),
    ("engine-patch/<signature rule>", "a patch, shadowing or hook found by a signature rule (see `auditor rules list`)"),
    ("engine-patch/distribution-file", "image diff: a file of an installed Python distribution added, modified, deleted or re-permissioned"),
    ("engine-patch/engine-file", "image diff: a file of an engine source tree (engine_paths) changed"),
    ("engine-patch/image-file", "image diff: any other file changed (warning; info when only added or only metadata)"),
    ("engine-patch/patch-file", "image: a .patch/.diff/.rej/.orig file left in the image"),
    (
        "engine-patch/hook",
        "image: sitecustomize.py, usercustomize.py or a .pth file (an import line runs code at every start), or a change to a module one of them loads",
    ),
    (
        "engine-patch/import-shadowing",
        "image: a module with an engine's top-level name importable from a sys.path directory the engine is not installed in (stdlib, WorkingDir, /, PYTHONPATH, a .pth line)",
    ),
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

pub fn run(ctx: &Context, settings: &Section<EnginePatch>) -> CheckResult {
    let waivers: Vec<&Waiver> = ctx.jobs.iter().flat_map(|j| j.files.iter().filter_map(|f| f.waiver.as_ref())).chain(ctx.references.waivers.iter()).collect();
    let mut findings: Vec<Finding> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for job in ctx.jobs {
        for file in &job.files {
            seen.insert((job.bundle.as_str(), file.path.as_str()));
            let parsed = file.kind == FileKind::Script;
            let judged = file.actions.iter().filter(|a| !written_as_evaluated(a, &file.actions)).filter_map(|a| action_finding(settings, a));
            // A file several jobs see (a recipe's roles, a script's two paths) is reported once.
            let signatures = file
                .signatures
                .iter()
                .filter(|f| {
                    f.rule.starts_with("engine-patch/")
                        && !(parsed && (PARSED_IN_SCRIPTS.contains(&f.rule.as_str()) || read_as_python_write(f, &file.actions)))
                        && !(f.rule == "engine-patch/pythonpath" && hooked_at(settings, f, &file.env))
                })
                .cloned();
            let on_path = file.env.iter().filter(|_| parsed).filter_map(|a| pythonpath_finding(settings, a));
            for found in judged.chain(signatures).chain(on_path) {
                let found = &found;
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

/// Start-up hooks CPython imports from any `sys.path` directory (the `site` module).
const HOOKS: [&str; 2] = ["sitecustomize.py", "usercustomize.py"];

/// A `PYTHONPATH` a script sets whose directories hold, in the input, a
/// start-up hook or a module with an engine's name
/// ([`EnvAssignment::on_path`]): ahead of site-packages, it runs in (or
/// replaces part of) every Python process, the engine's included.
fn pythonpath_finding(settings: &Section<EnginePatch>, assignment: &EnvAssignment) -> Option<Finding> {
    if assignment.name != "PYTHONPATH" || assignment.client {
        return None;
    }
    let module = |path: &str| -> String {
        let path = path.strip_suffix("/__init__.py").or_else(|| path.strip_suffix(".py")).unwrap_or(path);
        path.rsplit('/').next().unwrap_or(path).to_string()
    };
    let hooks: Vec<&String> = assignment.on_path.iter().filter(|p| HOOKS.iter().any(|h| p.rsplit('/').next() == Some(h))).collect();
    let engines: Vec<&String> = assignment.on_path.iter().filter(|p| matches!(owner_of_name(settings, &module(p)), Owner::Engine(_))).collect();
    let (found, what) = match (hooks.is_empty(), engines.is_empty()) {
        (false, _) => (hooks, "a start-up hook that runs in every Python process"),
        (true, false) => (engines, "a module with an engine's name, imported instead of the installed one"),
        (true, true) => return None,
    };
    let found: Vec<&str> = found.into_iter().map(String::as_str).collect();
    let value = assignment.value.as_deref().unwrap_or("");
    let message = format!(
        "PYTHONPATH={value} puts the input's {} ahead of site-packages: {what}, the engine's process included; the pinned image must run as shipped",
        found.join(", ")
    );
    Some(Finding::new("engine-patch/pythonpath-hook", Severity::Error, message, None, vec![assignment.provenance.clone()]))
}

/// A `PYTHONPATH` signature warning at the line where the evaluated
/// assignment is a [`pythonpath_finding`] error: one cause, reported once.
fn hooked_at(settings: &Section<EnginePatch>, signature: &Finding, env: &[EnvAssignment]) -> bool {
    let Some(at) = signature.evidence.first() else { return false };
    env.iter().any(|a| a.provenance.file == at.file && a.provenance.line == at.line && pythonpath_finding(settings, a).is_some())
}

/// A signature match inside the Python code a parsed write was read from
/// (a heredoc line, a `python -c` statement): the same write, reported once,
/// as the parsed action. A match the parser did not turn into a write (a
/// target it could not resolve, a program written to a file and run later)
/// stays.
fn read_as_python_write(signature: &Finding, actions: &[ScriptAction]) -> bool {
    let Some(at) = signature.evidence.first() else { return false };
    // Evaluated, the write is an action at the very line the signature matched.
    let written = |a: &&ScriptAction| matches!(a.kind, ActionKind::PythonWrite | ActionKind::Overwrite) && a.code_span.is_none();
    if actions.iter().filter(written).any(|a| a.provenance.file == at.file && a.provenance.line.is_some() && a.provenance.line == at.line) {
        return true;
    }
    let Some((start, end)) = at.span else { return false };
    actions.iter().filter(|a| a.kind == ActionKind::PythonWrite).filter_map(|a| a.code_span).any(|(s, e)| s <= start && end <= e)
}

/// A Python write the pattern reader saw (`python -c`, a heredoc) whose
/// target the same file's evaluated Python code also writes: one cause,
/// reported once, at the statement that writes (the evaluated one).
fn written_as_evaluated(action: &ScriptAction, actions: &[ScriptAction]) -> bool {
    action.kind == ActionKind::PythonWrite
        && action.target.is_some()
        && actions.iter().any(|b| {
            matches!(b.kind, ActionKind::Overwrite | ActionKind::InPlaceEdit) && b.target == action.target && b.provenance.file == action.provenance.file
        })
}

/// Whose a target is.
enum Owner {
    Engine(String),
    Harness(String),
    Unknown,
}

/// The owner of a name (a package, a repository, a site-packages entry).
fn owner_of_name(settings: &Section<EnginePatch>, name: &str) -> Owner {
    let base = name.trim_end_matches(".py").split(".dist-info").next().unwrap_or(name);
    if pattern::lists_package(&settings.harness_packages, base) {
        Owner::Harness(base.to_string())
    } else if pattern::lists_package(&settings.engine_packages, base) {
        Owner::Engine(base.to_string())
    } else {
        Owner::Unknown
    }
}

/// Whose is the target of an action: the clone it lies in, the
/// installed package it is under, an engine tree, the package named.
fn owner(settings: &Section<EnginePatch>, action: &ScriptAction) -> Owner {
    if let Some(clone) = &action.clone
        && let known @ (Owner::Engine(_) | Owner::Harness(_)) = owner_of_name(settings, clone.repo())
    {
        return known;
    }
    if let Some(target) = &action.target {
        if let Some(tree) = settings.engine_trees.first_match(target) {
            return Owner::Engine(tree.trim_end_matches("/**").to_string());
        }
        // Found anywhere (`find / -path '*sglang/srt/x.py'`): a file inside the package's tree.
        if let Some((_, rest)) = target.split_once("**/").filter(|(_, rest)| rest.contains('/'))
            && let known @ Owner::Engine(_) = owner_of_name(settings, rest.split('/').next().unwrap_or(""))
        {
            return known;
        }
        for marker in ["site-packages/", "dist-packages/"] {
            if let Some((_, rest)) = target.split_once(marker) {
                let top = rest.split('/').next().unwrap_or("");
                if let known @ (Owner::Engine(_) | Owner::Harness(_)) = owner_of_name(settings, top) {
                    return known;
                }
            }
        }
    }
    if let Some(package) = &action.package
        && let known @ (Owner::Engine(_) | Owner::Harness(_)) = owner_of_name(settings, package)
    {
        return known;
    }
    if action.kind == ActionKind::Install {
        // A local tree installed: its directory names the package (`.../utils/aiperf`).
        if let Some(last) = action.target.as_deref().and_then(|t| t.trim_end_matches('/').rsplit('/').next())
            && let known @ (Owner::Engine(_) | Owner::Harness(_)) = owner_of_name(settings, last)
        {
            return known;
        }
    }
    let hook_file = action.target.as_deref().is_some_and(|t| t.ends_with("customize.py"));
    if !hook_file {
        return Owner::Unknown;
    }
    // A hook named for a harness tool (`lm_eval_sitecustomize.py`), or written by a function named for one.
    let mut context: Vec<&str> = action.sources.iter().map(String::as_str).collect();
    context.extend(action.function.as_ref().map(|(name, _)| name.as_str()));
    for text in context {
        let text = normalise_name(text);
        if let Some(h) = settings.harness_packages.iter().map(|h| normalise_name(h)).find(|h| !h.contains('*') && text.contains(h.as_str())) {
            return Owner::Harness(h);
        }
    }
    Owner::Unknown
}

/// The finding a parsed script action makes, if any.
pub(crate) fn action_finding(settings: &Section<EnginePatch>, action: &ScriptAction) -> Option<Finding> {
    let target = action.target.as_deref().unwrap_or("");
    let file_name = target.rsplit('/').next().unwrap_or("");
    let hook = action.kind == ActionKind::Overwrite
        && (matches!(file_name, "sitecustomize.py" | "usercustomize.py")
            || (file_name.ends_with(".pth") && (target.contains("site-packages/") || target.contains("dist-packages/"))));
    let owner = owner(settings, action);
    let what = match (&action.package, action.target.as_deref()) {
        (Some(p), Some(t)) if action.kind == ActionKind::Install => format!("{p} ({t})"),
        (Some(p), _) => p.clone(),
        (None, Some(t)) => t.to_string(),
        (None, None) => "an unnamed target".to_string(),
    };
    let mut context = String::new();
    if let Some((name, line)) = &action.function {
        context.push_str(&format!(" in function {name} (defined at line {line})"));
    }
    if action.after_launch && action.kind != ActionKind::Install {
        // Not excused: an engine imports modules and compiles kernels lazily, after it starts.
        context.push_str(" after the script's last engine launch (the running server may still import it lazily; the client shares it)");
    }
    match action.gate {
        Gate::EvalOnly => context.push_str(" in the EVAL_ONLY=true branch"),
        Gate::NotEval => context.push_str(" in the throughput branch (EVAL_ONLY not true)"),
        Gate::Never => context.push_str(" in a branch that never runs"),
        Gate::Always => {}
    }
    // Recipes and configs copied into a harness checkout configure it; its code changing is what is reviewed.
    let code = hook || matches!(action.kind, ActionKind::ApplyPatch | ActionKind::Install) || [".py", ".sh", ".so"].iter().any(|x| target.ends_with(x));
    let (rule, severity, message) = match (&owner, action.kind) {
        (Owner::Harness(_), _) if !code => return None,
        (Owner::Harness(h), _) => (
            "engine-patch/harness",
            Severity::Warning,
            format!("{} on {what}{context}: the benchmark harness ({h}) is changed; reviewed apart from engine patches", action.tool),
        ),
        (Owner::Engine(_), ActionKind::Install) if action.after_launch => (
            "engine-patch/client-install",
            Severity::Warning,
            format!("{} installs {what}{context}: after the server is up, for the benchmark client; it belongs in the client's environment", action.tool),
        ),
        (Owner::Engine(e), ActionKind::Install) => install_finding(settings, action, e, &what, &context)?,
        (Owner::Unknown, ActionKind::Install) => {
            let from_source = action.target.is_some() || action.rev.is_some();
            if !from_source {
                return None;
            }
            match image_files(action) {
                Some(dir) => (
                    "engine-patch/stock-package",
                    Severity::Warning,
                    format!(
                        "{} installs {what}{context} from the image's own files ({dir}): not the pinned image's environment as shipped, named for review",
                        action.tool
                    ),
                ),
                None => (
                    "engine-patch/install",
                    Severity::Error,
                    format!(
                        "{} installs {what}{context} from a source tree, URL or wheel the policy does not know; name it as harness or remove it",
                        action.tool
                    ),
                ),
            }
        }
        (_, ActionKind::Overwrite) if hook => (
            "engine-patch/script-hook",
            Severity::Error,
            format!("{} writes start-up hook {target}{context}: it runs in every Python process that can import it, the engine's included", action.tool),
        ),
        (Owner::Engine(e), ActionKind::BindMount) => (
            "engine-patch/bind-mount",
            Severity::Error,
            format!(
                "{} lays {} over {target} ({e}){context}: the engine's installed files are replaced while it runs; the pinned image must run as shipped",
                action.tool,
                action.sources.first().map_or("a host path", String::as_str)
            ),
        ),
        (Owner::Engine(e), ActionKind::SwitchRef) => (
            "engine-patch/switch-ref",
            Severity::Error,
            format!("{} in {what} ({e}){context}: the engine's source tree is switched to another ref; the pinned image must run as shipped", action.tool),
        ),
        (Owner::Unknown, ActionKind::SwitchRef) => return None,
        (Owner::Engine(e), kind) => {
            let (rule, verb) = match kind {
                ActionKind::InPlaceEdit => ("engine-patch/edit", "edits in place"),
                ActionKind::Overwrite => ("engine-patch/overwrite", "overwrites"),
                ActionKind::PythonWrite => ("engine-patch/python-write", "opens for writing"),
                _ => ("engine-patch/apply", "applies a patch in"),
            };
            (rule, Severity::Error, format!("{} {verb} {what} ({e}){context}: the pinned image must run as shipped", action.tool))
        }
        (Owner::Unknown, ActionKind::ApplyPatch) => (
            "engine-patch/apply",
            Severity::Error,
            format!("{} applies a patch in {what}{context}, a tree the script does not show to be outside the engine", action.tool),
        ),
        // `find / -name X -exec sed -i …`, `find / -name X | xargs sed -i`:
        // every file of that name on the machine, the engine's among them.
        (Owner::Unknown, ActionKind::InPlaceEdit | ActionKind::Overwrite | ActionKind::PythonWrite) if target.starts_with("/**/") => (
            "engine-patch/found-anywhere",
            Severity::Warning,
            format!(
                "{} changes every file matching {target} on the machine{context}: whose files these are is not known, and the engine's may be among them",
                action.tool
            ),
        ),
        (Owner::Unknown, _) => return None,
    };
    Some(Finding::new(rule, severity, message, None, vec![action.provenance.clone()]))
}

/// An install of an engine package (Check 10): a serving engine built from
/// a ref, a clone or a local tree is a rebuilt engine; another engine
/// package built from a ref is named with its ref; one installed as
/// released is a stock package.
fn install_finding(
    settings: &Section<EnginePatch>,
    action: &ScriptAction,
    engine: &str,
    what: &str,
    context: &str,
) -> Option<(&'static str, Severity, String)> {
    let rev = action.clone.as_ref().and_then(|c| c.rev.clone()).or(action.rev.clone());
    let note = action.clone.as_ref().and_then(|c| c.rev_note.clone()).map(|n| format!(" ({n})")).unwrap_or_default();
    let serving = pattern::lists_package(&settings.serving_engines, engine);
    let built = rev.is_some() || action.clone.is_some() || (action.target.is_some() && image_files(action).is_none());
    let tool = &action.tool;
    // An index other than the default (`--extra-index-url`, `-i`, `-f`): installs carry it as their source.
    let index = action.sources.first();
    if let (true, Some(index), false) = (serving, index, built) {
        return Some((
            "engine-patch/rebuilt-engine",
            Severity::Error,
            format!("{tool} installs {engine} from the package index {index}{context}: an engine build other than the pinned image's (Check 10)"),
        ));
    }
    Some(match (serving, built, rev) {
        (true, true, rev) => {
            let from = match (&rev, &action.clone) {
                (Some(rev), Some(clone)) => format!("{} at {rev}{note}", clone.url),
                (Some(rev), None) => format!("ref {rev}{note}"),
                (None, Some(clone)) => format!("a checkout of {}", clone.url),
                (None, None) => action.target.clone().unwrap_or_else(|| "a local tree".to_string()),
            };
            (
                "engine-patch/rebuilt-engine",
                Severity::Error,
                format!("{tool} builds {engine} from {from}{context}: a forked or rebuilt engine replaces the pinned image's (Check 10)"),
            )
        }
        (false, true, Some(rev)) => (
            "engine-patch/unmerged-ref",
            Severity::Warning,
            format!("{tool} builds {engine} into the serving environment from ref {rev}{note}{context}: not a released package; say why and when it goes"),
        ),
        _ => {
            let from = match (image_files(action), index) {
                (Some(dir), _) => format!("the image's own files ({dir})"),
                (None, Some(index)) => format!("the package index {index}"),
                (None, None) => "the package index".to_string(),
            };
            (
                "engine-patch/stock-package",
                Severity::Warning,
                format!("{tool} installs {what} from {from}{context} on top of the pinned image: a stock package, named for review"),
            )
        }
    })
}

/// The directory of an install from the image's own files: an absolute
/// path under a system prefix (`/opt/rocm/share/amd_smi`) that no clone of
/// the script made.
fn image_files(action: &ScriptAction) -> Option<&str> {
    let target = action.target.as_deref().filter(|_| action.clone.is_none() && action.rev.is_none())?;
    ["/opt/", "/usr/"].iter().any(|p| target.starts_with(p)).then_some(target)
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
