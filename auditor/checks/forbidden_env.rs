//! `forbidden-env`: no engine environment variable that the policy forbids
//! takes effect in any job, from any source the bundle shows (env dumps,
//! exports, command prefixes, scripts), resolved by the engine's own rules.

use super::{AuditedJob, CheckResult, Context};
use crate::evidence::FileEvidence;
use crate::evidence::env::{EnvAssignment, EnvOrigin, Scope};
use crate::evidence::knobs::{Catalog, Meaning};
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use crate::policy::sections::ForbiddenEnv;
use crate::policy::{ForbidWhen, ForbiddenVar, Section};
use crate::provenance::{Provenance, clip, redact};
use std::collections::BTreeSet;

const ID: &str = "forbidden-env";

pub const RULES: &[(&str, &str)] = &[
    ("forbidden-env/enabled", "a forbidden variable takes effect (the engine reads its value as enabled)"),
    ("forbidden-env/set", "a variable forbidden in any form is set"),
    ("forbidden-env/invalid-value", "a forbidden variable has a value the engine rejects: it warns and keeps the default"),
    ("forbidden-env/overridden", "a forbidden variable was enabled, then overridden before it took effect"),
    ("forbidden-env/unexported", "a forbidden variable is set as a shell variable that is never exported"),
    ("forbidden-env/client-only", "a forbidden variable is set only for the benchmark client, not the engine"),
    ("forbidden-env/duplicate", "one dumped environment lists a forbidden variable twice with different values"),
    (
        "forbidden-env/undetermined",
        "whether a forbidden variable takes effect is not shown: it is set from an expansion whose value the input does not show, or a job of a run renders no environment",
    ),
];

pub fn run(ctx: &Context, settings: &Section<ForbiddenEnv>) -> CheckResult {
    let sources: usize = ctx.jobs.iter().map(env_sources).sum();
    let unseen: Vec<Finding> = ctx.jobs.iter().filter_map(|job| unseen(ctx.catalog, settings, job)).collect();
    if sources == 0 && unseen.is_empty() {
        return CheckResult::not_applicable(ID, settings, "no environment evidence (env dumps, exports, command prefixes) in the input");
    }
    let mut tally = Tally { unseen: unseen.len(), ..Tally::default() };
    tally.findings.extend(unseen);
    for job in ctx.jobs {
        let env: Vec<EnvAssignment> = job.files.iter().flat_map(|f| f.env.iter().cloned()).collect();
        tally.judge(ctx.catalog, settings, Some(job.job.id.as_str()), &env);
    }
    let seen = ctx.job_count() - tally.unseen;
    tally.result(settings, sources, &format!("{seen} job(s)"))
}

/// A job of a run whose engine reads a forbidden variable but whose files
/// render no environment that would list it: that the variable is absent
/// from the rest of the bundle is not evidence that the engine ran without
/// it, so the check is undetermined for the job. Static sources are read as
/// the script sets the environment, and are never rendered.
fn unseen(catalog: &Catalog, settings: &Section<ForbiddenEnv>, job: &AuditedJob) -> Option<Finding> {
    if job.job.from_sources || job.job.kind == JobKind::RunLevel {
        return None;
    }
    let engine = job.facts.engine?;
    let hidden: Vec<&str> =
        settings.forbid.iter().map(|v| v.name.as_str()).filter(|name| catalog.reader(name) == Some(engine.as_str()) && !rendered(catalog, job, name)).collect();
    if hidden.is_empty() {
        return None;
    }
    let file = job.files.iter().find(|f| !f.records.is_empty()).or(job.files.first())?;
    let at = Provenance::new(file.path.clone(), Some(1), "").in_artifact(file.artifact.clone());
    let message = format!(
        "the job's {} server renders no environment covering {} (no complete env dump, `env` listing or resolved launcher config in its files): whether the engine read them is not shown, and their absence elsewhere in the bundle is not evidence",
        engine.as_str(),
        hidden.join(", "),
    );
    Some(Finding::new("forbidden-env/undetermined", job.open_severity(), message, job.id(), vec![at]))
}

/// Whether a file of the job renders the process environment as far as
/// `name` (or its legacy spelling) goes: a complete dump covering its
/// prefix, an `env` listing, or a resolved launcher config (srt-slurm's
/// `config.yaml`, whose env sections the orchestrator exports into each
/// worker's shell).
fn rendered(catalog: &Catalog, job: &AuditedJob, name: &str) -> bool {
    job.files.iter().any(|f| {
        let listed = f.env.iter().any(|a| catalog.spells(name, &a.name) && a.origin.is_dumped());
        let configured = f.env.iter().any(|a| a.origin == EnvOrigin::Config);
        let covered = f.env_dumps.iter().any(|d| d.complete && d.covers_prefix.as_deref().is_none_or(|p| name.starts_with(p)));
        listed || configured || covered
    })
}

/// What the check concluded over its units (jobs, or files for `auditor scan`).
#[derive(Default)]
struct Tally {
    findings: Vec<Finding>,
    /// Units whose rendered environment the input does not show.
    unseen: usize,
    failing: usize,
    in_effect: BTreeSet<String>,
}

impl Tally {
    /// Judge every forbidden variable in one unit's environment.
    fn judge(&mut self, catalog: &Catalog, settings: &Section<ForbiddenEnv>, unit: Option<&str>, env: &[EnvAssignment]) {
        let mut failed = false;
        for var in &settings.forbid {
            if judge(catalog, unit, env, var, &mut self.findings) {
                self.in_effect.insert(var.name.clone());
                failed = true;
            }
        }
        self.failing += usize::from(failed);
    }

    /// The result over `units` (`"3 job(s)"`), `sources` environment sources examined.
    fn result(self, settings: &Section<ForbiddenEnv>, sources: usize, units: &str) -> CheckResult {
        let names: Vec<&str> = settings.forbid.iter().map(|v| v.name.as_str()).collect();
        let pass = format!("none of {} takes effect in {units} ({sources} environment source(s) examined)", names.join(", "));
        let fail = format!("{} in effect in {} of {units}", self.in_effect.into_iter().collect::<Vec<_>>().join(", "), self.failing);
        let open = match self.unseen {
            0 => {
                let places = self.findings.iter().filter(|f| f.is_undetermined()).count();
                format!("a forbidden variable is set from a value the input does not show ({places} place(s)): whether it takes effect is undetermined")
            }
            unseen => format!("{unseen} job(s) show no rendered environment, so whether a forbidden variable takes effect there is not shown; {pass}"),
        };
        CheckResult::judged(ID, settings, self.findings, pass, fail, open)
    }
}

/// The check over files judged one at a time (`auditor scan`): with no
/// jobs, each file's environment is resolved on its own, as one job's would
/// be, so a later file cannot hide what an earlier one enables.
pub struct PerFile<'p> {
    catalog: &'p Catalog,
    settings: &'p Section<ForbiddenEnv>,
    tally: Tally,
    sources: usize,
    files: usize,
}

impl<'p> PerFile<'p> {
    pub fn new(catalog: &'p Catalog, settings: &'p Section<ForbiddenEnv>) -> Self {
        PerFile { catalog, settings, tally: Tally::default(), sources: 0, files: 0 }
    }

    /// Judge one file; returns its findings (their evidence names the file
    /// as the extractor saw it, for the caller to place).
    pub fn file(&mut self, file: &FileEvidence) -> Vec<Finding> {
        let sources = file_sources(file);
        if sources == 0 {
            return Vec::new();
        }
        self.sources += sources;
        self.files += 1;
        self.tally.judge(self.catalog, self.settings, None, &file.env);
        std::mem::take(&mut self.tally.findings)
    }

    /// The check's result, over `findings` (those [`Self::file`] returned, placed).
    pub fn result(self, findings: Vec<Finding>) -> CheckResult {
        if self.sources == 0 {
            return CheckResult::not_applicable(ID, self.settings, "no environment evidence (env dumps, exports, command prefixes) in the files scanned");
        }
        let tally = Tally { findings, ..self.tally };
        tally.result(self.settings, self.sources, &format!("{} file(s) with environment evidence", self.files))
    }
}

/// Distinct places that record a job's environment: dump blocks and
/// assignment scopes.
fn env_sources(job: &AuditedJob) -> usize {
    job.files.iter().map(file_sources).sum()
}

/// Distinct places in one file that record an environment.
fn file_sources(file: &FileEvidence) -> usize {
    let mut scopes: Vec<&Scope> = file.env.iter().map(|a| &a.scope).collect();
    scopes.extend(file.env_dumps.iter().map(|d| &d.scope));
    scopes.sort_unstable();
    scopes.dedup();
    scopes.len()
}

/// The check over an image config's `Env` (`auditor image diff` and
/// `image verify`): the same rules as for a job, the image reference as
/// the evidence file and each entry's position as its line.
pub fn image_env(catalog: &Catalog, settings: &Section<ForbiddenEnv>, reference: &str, env: &[String]) -> CheckResult {
    let assignments: Vec<EnvAssignment> = env
        .iter()
        .enumerate()
        .filter_map(|(i, entry)| {
            let (name, value) = entry.split_once('=')?;
            let provenance = Provenance::new(reference.to_string(), Some(i as u64 + 1), clip(&redact(&format!("Env {entry}"))));
            Some(EnvAssignment::new(name, Some(value.to_string()), EnvOrigin::ImageConfig, Scope::ImageConfig, provenance))
        })
        .collect();
    let mut findings = Vec::new();
    let in_effect: Vec<&str> = settings.forbid.iter().filter(|var| judge(catalog, None, &assignments, var, &mut findings)).map(|v| v.name.as_str()).collect();
    let names: Vec<&str> = settings.forbid.iter().map(|v| v.name.as_str()).collect();
    let pass = format!("none of {} is set in the image config's Env ({} variable(s))", names.join(", "), assignments.len());
    CheckResult::from_findings(ID, settings, findings, pass, format!("{} in effect in the image config's Env", in_effect.join(", ")))
}

/// Judge one forbidden variable in one job (or image); true when it takes effect.
fn judge(catalog: &Catalog, job_id: Option<&str>, env: &[EnvAssignment], var: &ForbiddenVar, findings: &mut Vec<Finding>) -> bool {
    let mut violations = Vec::new();
    let mut first_message = None;
    for resolved in catalog.resolve(env, &var.name) {
        let a = resolved.assignment;
        let value = a.value.as_deref().unwrap_or_default();
        let legacy =
            if resolved.via_legacy { format!(" through the legacy spelling {}, which SGLang copies over {}", a.name, var.name) } else { String::new() };
        // A value the input does not show (a download, a runner's variable)
        // keeps the check off PASS: never a silent pass.
        if a.expands {
            findings.push(Finding::new(
                "forbidden-env/undetermined",
                Severity::Warning,
                format!("{}={value} is set from an expansion whose value the input does not show, so whether it takes effect is undetermined{legacy}", a.name),
                job_id,
                vec![a.provenance.clone()],
            ));
            continue;
        }
        if a.client {
            findings.push(Finding::new(
                "forbidden-env/client-only",
                Severity::Warning,
                match a.scope {
                    // A child shell's own (`| bash`, `bash -c`, `( … )`) that launches no engine after it.
                    Scope::Command(line) if a.origin != EnvOrigin::CommandPrefix => {
                        format!(
                            "{}={value} is set in the child shell started at line {line}, which launches no engine after it; it does not reach the engine",
                            a.name
                        )
                    }
                    _ => format!("{}={value} is set in `{}`, for the benchmark client; it does not reach the engine", a.name, a.scope),
                },
                job_id,
                vec![a.provenance.clone()],
            ));
            continue;
        }
        let meaning = catalog.meaning(&a.name, value);
        let violated = match (var.when, &meaning) {
            (ForbidWhen::Set, _) => true,
            (ForbidWhen::Enabled, Meaning::Bool(b)) => *b,
            (ForbidWhen::Enabled, Meaning::Invalid { reason, default }) => {
                findings.push(Finding::new(
                    "forbidden-env/invalid-value",
                    Severity::Warning,
                    format!(
                        "{}={value}: {reason}; SGLang ignores the value with a warning and keeps the default ({}){legacy}",
                        a.name,
                        default.as_deref().unwrap_or("unknown")
                    ),
                    job_id,
                    vec![a.provenance.clone()],
                ));
                false
            }
            (ForbidWhen::Enabled, _) => false,
        };
        if violated {
            first_message.get_or_insert_with(|| {
                let how = match var.when {
                    ForbidWhen::Set => "is set".to_string(),
                    ForbidWhen::Enabled => format!("takes effect: SGLang reads {value:?} as true"),
                };
                let written = a.written.as_ref().map(|w| format!(" (written {w:?} in YAML, which a YAML 1.1 loader reads as {value})")).unwrap_or_default();
                format!("{}={value}{written} {how}{legacy}. Source: {}. Forbidden: {}", a.name, origin_phrase(a, env), var.reason)
            });
            violations.push(a.provenance.clone());
        } else {
            // Two values in one dump are `duplicate`, not an override.
            for earlier in resolved.overridden.iter().filter(|e| enables(catalog, e, var) && !(e.origin.is_dumped() && a.origin.is_dumped())) {
                findings.push(Finding::new(
                    "forbidden-env/overridden",
                    Severity::Info,
                    format!("{}={} is overridden by {}={value} before it takes effect", earlier.name, earlier.value.as_deref().unwrap_or_default(), a.name),
                    job_id,
                    vec![earlier.provenance.clone(), a.provenance.clone()],
                ));
            }
        }
    }
    unexported(catalog, job_id, env, var, findings);
    duplicated(catalog, job_id, env, var, findings);
    let Some(message) = first_message else { return false };
    let rule = match var.when {
        ForbidWhen::Set => "forbidden-env/set",
        ForbidWhen::Enabled => "forbidden-env/enabled",
    };
    findings.push(Finding::new(rule, Severity::Error, message, job_id, violations));
    true
}

/// Shell variables that would enable the variable but are never exported in
/// their file: they do not reach the server unless something else exports them.
fn unexported(catalog: &Catalog, job_id: Option<&str>, env: &[EnvAssignment], var: &ForbiddenVar, findings: &mut Vec<Finding>) {
    let spelled = |a: &EnvAssignment| catalog.spells(&var.name, &a.name);
    for a in env.iter().filter(|a| a.origin == EnvOrigin::ShellVariable && spelled(a) && enables(catalog, a, var)) {
        let exported = env.iter().any(|o| spelled(o) && o.origin.reaches_environment() && o.provenance.file == a.provenance.file);
        if !exported {
            findings.push(Finding::new(
                "forbidden-env/unexported",
                Severity::Warning,
                format!(
                    "{}={} is a shell variable that this script never exports: it reaches the server only if exported elsewhere",
                    a.name,
                    a.value.as_deref().unwrap_or_default()
                ),
                job_id,
                vec![a.provenance.clone()],
            ));
        }
    }
}

/// One dumped environment that lists the variable twice with different
/// values: a process environment can hold both (execve takes any list), and
/// which one a reader gets depends on the reader (Python's `os.environ`
/// keeps the last, C's `getenv` the first), so the dump does not say.
fn duplicated(catalog: &Catalog, job_id: Option<&str>, env: &[EnvAssignment], var: &ForbiddenVar, findings: &mut Vec<Finding>) {
    let mut dumps: std::collections::BTreeMap<(&str, &Scope), Vec<&EnvAssignment>> = std::collections::BTreeMap::new();
    for a in env.iter().filter(|a| a.origin.is_dumped() && catalog.spells(&var.name, &a.name)) {
        dumps.entry((a.provenance.file.as_str(), &a.scope)).or_default().push(a);
    }
    for listed in dumps.into_values() {
        let values: BTreeSet<&str> = listed.iter().map(|a| a.value.as_deref().unwrap_or_default()).collect();
        if listed.len() < 2 || values.len() < 2 {
            continue;
        }
        let shown: Vec<String> = listed.iter().map(|a| format!("{}={}", a.name, a.value.as_deref().unwrap_or_default())).collect();
        findings.push(Finding::new(
            "forbidden-env/duplicate",
            Severity::Warning,
            format!(
                "one dumped environment lists {} {} times ({}): which value the engine read depends on the reader (Python's os.environ keeps the last, getenv the first)",
                var.name,
                listed.len(),
                shown.join(", ")
            ),
            job_id,
            listed.iter().map(|a| a.provenance.clone()).collect(),
        ));
    }
}

fn enables(catalog: &Catalog, a: &EnvAssignment, var: &ForbiddenVar) -> bool {
    let value = a.value.as_deref().unwrap_or_default();
    var.when == ForbidWhen::Set || catalog.meaning(&a.name, value) == Meaning::Bool(true)
}

/// Where the value came from, in a reviewer's words.
fn origin_phrase(a: &EnvAssignment, env: &[EnvAssignment]) -> String {
    match a.origin {
        EnvOrigin::DumpBlock => {
            let set_explicitly = env.iter().any(|o| o.name == a.name && o.origin != EnvOrigin::DumpBlock && o.value.is_some());
            if set_explicitly {
                "the server environment dumped at launch".to_string()
            } else {
                "the server environment dumped at launch (inherited: no command or export in the bundle sets it)".to_string()
            }
        }
        EnvOrigin::Listing => "an environment listing (env output)".to_string(),
        EnvOrigin::Export => "an export statement".to_string(),
        EnvOrigin::ShellVariable => "a shell variable".to_string(),
        EnvOrigin::CommandPrefix => "a prefix of the launch command".to_string(),
        EnvOrigin::Container => "the container's environment (docker run -e/--env)".to_string(),
        EnvOrigin::Config => format!("the environment section `{}` of a recipe or config", a.scope),
        EnvOrigin::Python | EnvOrigin::PythonSetdefault => "a Python os.environ write".to_string(),
        EnvOrigin::Unset => "an unset statement".to_string(),
        EnvOrigin::ImageConfig => "the image config's Env (baked into the image: every container starts with it)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Status;
    use crate::policy::Policy;

    #[test]
    fn an_image_env_entry_is_placed_at_its_position_counted_from_one() {
        let policy = Policy::embedded();
        let settings = policy.checks.forbidden_env().unwrap();
        let env = ["PATH=/usr/bin".to_string(), "NOT AN ASSIGNMENT".to_string(), "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1".to_string()];
        let result = image_env(Catalog::embedded(), settings, "lmsysorg/sglang:v0.5.16", &env);
        assert_eq!(result.status, Status::Fail);
        let places: Vec<_> =
            result.findings.iter().map(|f| (f.rule.as_str(), f.evidence[0].file.as_str(), f.evidence[0].line, f.evidence[0].text.as_str())).collect();
        assert_eq!(places, [("forbidden-env/enabled", "lmsysorg/sglang:v0.5.16", Some(3), "Env SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1")]);
    }
}
