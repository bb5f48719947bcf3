//! The audit pipeline: bundles -> evidence -> jobs -> checks -> report.

use crate::baseline::Known;
use crate::bundle::{self, Bundle, BundleError, FileStatus, Limits, layout};
use crate::changes::{self, Changes, ChangesError};
use crate::checks::{self, AuditedJob, Context, Status};
use crate::evidence::knobs::Catalog;
use crate::evidence::{Extractor, FileEvidence};
use crate::facts::Facts;
use crate::facts::view::{self, EvidenceView};
use crate::finding::{Finding, Severity};
use crate::jobs::{self, Unexamined, repository};
use crate::policy::Policy;
use crate::reference::{References, TreeReference};
use crate::report::{ChangeSummary, FileEntry, Fixed, Input, JobEntry, Reach, Report};
use crate::signatures::Engine;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum AuditError {
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error(transparent)]
    Signatures(#[from] crate::signatures::PackError),
    #[error(transparent)]
    Changes(#[from] ChangesError),
}

/// How much of the input to judge.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Judge only the jobs of a git checkout that changed since this ref.
    pub changed_since: Option<String>,
    /// Audit retired configs too (see [`ReadOptions`]).
    pub include_deprecated: bool,
    /// Read scripts line by line instead of evaluating them (see [`ReadOptions`]).
    pub line_reader: bool,
}

/// What of a bundle is audited beyond its defaults.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Audit retired configs too (`configs/deprecated/`, any `deprecated/`
    /// directory of a repository checkout): by default they are listed as
    /// skipped, since no sweep runs them and their findings are history.
    pub include_deprecated: bool,
    /// Paths of a checkout that no submission runs (the policy's `outside`),
    /// with the reason they are skipped.
    pub outside: Vec<crate::policy::Outside>,
    /// Read scripts line by line with pattern classes instead of
    /// evaluating them with the bash interpreter
    /// ([`crate::evidence::shell::interp`], with the files they source):
    /// the former model, faster on a whole repository (BENCHMARKS.md) and
    /// blind to what only evaluation shows (functions with arguments,
    /// arrays, `eval`, wrappers).
    pub line_reader: bool,
}

impl ReadOptions {
    fn outside_reason(&self, path: &str) -> Option<&str> {
        self.outside.iter().find(|o| o.covers(path)).map(|o| o.reason.as_str())
    }
}

/// Whether a repository path lies in a retired tree (a `deprecated`
/// directory anywhere above the file).
pub fn is_retired(path: &str) -> bool {
    let mut dirs = path.split('/');
    dirs.next_back();
    dirs.any(|d| d == "deprecated")
}

/// A bundle read and split into jobs.
pub struct ReadBundle {
    pub bundle: Bundle,
    pub jobs: Vec<AuditedJob>,
    /// The evidence of every file as extracted, when the jobs see only parts
    /// of files (a repository's recipe roles and script paths); empty when
    /// each file belongs whole to one job.
    pub sources: Vec<FileEvidence>,
}

impl ReadBundle {
    /// What `auditor evidence` shows of one file: its evidence whole (a
    /// script or recipe is split into jobs that each see part of it), with
    /// the facts derived over the whole file.
    pub fn whole_file(&self) -> (&[FileEvidence], Facts) {
        let files = if self.sources.is_empty() { self.jobs.first().map(|j| j.files.as_slice()).unwrap_or_default() } else { self.sources.as_slice() };
        (files, crate::facts::derive(files, Catalog::embedded()))
    }

    /// What `auditor evidence` shows of a bundle: each job's evidence and
    /// the facts already derived for it, with what was not examined.
    pub fn jobs_view(&self) -> EvidenceView<'_> {
        let input = view::Input { path: &self.bundle.path, sha256: self.bundle.sha256.as_deref() };
        view::jobs(input, &self.jobs, &self.bundle.not_examined, Catalog::embedded())
    }
}

/// Read one bundle, extract evidence from every file and group the files
/// into jobs: by artifact for a `gh run download` layout (files outside any
/// job artifact form the pseudo-job `run`), by recipe role, launch script
/// and master-config entry for a repository checkout (other files form the
/// pseudo-job `repository`), else one job `bundle`.
pub fn read(path: &Path, limits: &Limits, signatures: &Engine, options: &ReadOptions) -> Result<ReadBundle, AuditError> {
    read_from(&|extractor| bundle::read_bundle(path, limits, extractor), limits, signatures, options, &Scope::Judged)
}

/// Which scripts a read evaluates (unless `--line-reader`): the
/// interpreter is the costly part of a read, so a gate that judges a few
/// jobs evaluates only what they hold.
pub(crate) enum Scope<'a> {
    /// Every script a judged job can hold (not the retired or outside ones).
    Judged,
    /// The scripts this picks (script paths, from the jobs and sources as
    /// read), asked again once those are evaluated until it asks for
    /// nothing new.
    Selected(&'a SelectScripts<'a>),
}

/// Picks the scripts to evaluate from the jobs and sources as read (see [`Scope::Selected`]).
pub(crate) type SelectScripts<'a> = dyn Fn(&[AuditedJob], &[FileEvidence]) -> Result<BTreeSet<String>, AuditError> + 'a;

/// [`read`], the files coming from `source` (a directory or archive, or a
/// commit's tree read from git objects).
fn read_from(
    source: &dyn Fn(&mut Extractor) -> Result<Bundle, bundle::BundleError>,
    limits: &Limits,
    signatures: &Engine,
    options: &ReadOptions,
    scope: &Scope,
) -> Result<ReadBundle, AuditError> {
    let mut extractor = Extractor::with_signatures(limits.max_line_length, signatures);
    if !options.line_reader {
        extractor = extractor.deferring_scripts();
    }
    let mut bundle = source(&mut extractor)?;
    let mut files = extractor.files;
    // Without scripts (a run's logs) there is nothing to evaluate: grouped
    // once, with no copies of what was read.
    if options.line_reader || files.iter().all(|f| f.script.is_none()) {
        let (jobs, sources) = assemble(&mut bundle, files, options, &jobs::runners::Reach::new());
        return Ok(ReadBundle { bundle, jobs, sources });
    }
    // Group, evaluate what the scope asks for, group again with what the
    // evaluations tell, until the scope asks for nothing new.
    let mut done: BTreeSet<String> = BTreeSet::new();
    // What the runners run does not change between passes.
    let reach = jobs::runners::reach_of(&files);
    loop {
        let mut grouped = bundle.clone();
        let (jobs, sources) = assemble(&mut grouped, files.clone(), options, &reach);
        let wanted = match scope {
            Scope::Judged => scripts_of(&jobs),
            Scope::Selected(select) => select(&jobs, &sources)?,
        };
        let wanted: BTreeSet<String> = wanted.into_iter().filter(|p| !done.contains(p)).collect();
        if wanted.is_empty() {
            return Ok(ReadBundle { bundle: grouped, jobs, sources });
        }
        for (path, why) in crate::evidence::link_scripts(&mut files, &|path| wanted.contains(path)) {
            if let Some(entry) = bundle.files.iter_mut().find(|f| f.path == path && f.status == FileStatus::Read) {
                entry.status = FileStatus::Partial(why);
            }
        }
        done.extend(wanted);
    }
}

/// The images the runners of these jobs' master-config entries start,
/// evaluated for the jobs judged only.
fn start_runners<'j>(jobs: impl Iterator<Item = &'j mut AuditedJob>, sources: &[FileEvidence]) {
    let mut metas: Vec<&mut crate::evidence::meta::Metadata> =
        jobs.flat_map(|j| j.files.iter_mut()).filter_map(|f| f.metadata.as_deref_mut()).filter(|m| !m.runners.is_empty()).collect();
    if !metas.is_empty() {
        jobs::runners::start(sources, &mut metas);
    }
}

/// The script files the jobs hold.
fn scripts_of<'j>(jobs: impl IntoIterator<Item = &'j AuditedJob>) -> BTreeSet<String> {
    jobs.into_iter().flat_map(|j| &j.files).filter(|f| f.kind == crate::evidence::FileKind::Script).map(|f| f.path.clone()).collect()
}

/// Group the files of a bundle into jobs (see [`read`]), listing in
/// `bundle` the files no job judges (retired, outside the submissions).
fn assemble(bundle: &mut Bundle, files: Vec<FileEvidence>, options: &ReadOptions, reach: &jobs::runners::Reach) -> (Vec<AuditedJob>, Vec<FileEvidence>) {
    let artifacts: BTreeSet<String> = bundle.files.iter().filter_map(|f| layout::artifact_of(&f.path).map(str::to_string)).collect();
    let (jobs, assignment) = jobs::group(&artifacts);
    let (outside, files): (Vec<FileEvidence>, Vec<FileEvidence>) = files.into_iter().partition(|f| options.outside_reason(&f.path).is_some());
    let (mut retired, mut active): (Vec<FileEvidence>, Vec<FileEvidence>) = files.into_iter().partition(|f| !options.include_deprecated && is_retired(&f.path));
    if !retired.is_empty() {
        let only_retired = repository::run_only_by_retired(&active, &retired);
        let (more, rest): (Vec<FileEvidence>, Vec<FileEvidence>) = active.into_iter().partition(|f| only_retired.contains(&f.path));
        retired.extend(more);
        active = rest;
    }
    let (jobs, sources) = match repository::group_with(&active, reach) {
        Some(repo) if jobs.is_empty() => {
            skip(bundle, &retired, |path| {
                let why = if is_retired(path) { "it is under a deprecated/ directory" } else { "only retired master configs run it" };
                format!("retired ({why}): no sweep runs it; --include-deprecated audits it")
            });
            skip(bundle, &outside, |path| format!("outside the submissions (policy): {}", options.outside_reason(path).unwrap_or_default()));
            (from_repository(bundle, repo, &active), active)
        }
        _ => {
            let mut files = active;
            files.extend(retired);
            files.extend(outside);
            (by_artifact(bundle, jobs, &assignment, files), Vec::new())
        }
    };
    let mut jobs: Vec<AuditedJob> = jobs.into_iter().flat_map(crate::facts::paths::split).collect();
    for job in &mut jobs {
        let hints = hints(&job.files);
        jobs::apply_hints(&mut job.job, &hints);
        job.derive(Catalog::embedded());
    }
    (jobs, sources)
}

/// Marks these files of a checkout (retired, or outside the submissions)
/// as skipped, each with the reason `why` gives for its path.
fn skip(bundle: &mut Bundle, files: &[FileEvidence], why: impl Fn(&str) -> String) {
    let paths: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for file in bundle.files.iter_mut().filter(|f| paths.contains(f.path.as_str()) && f.status == FileStatus::Read) {
        file.status = FileStatus::Skipped(why(&file.path));
    }
}

/// What master-config entries run that the checkout does not hold (a
/// recipe kept in NVIDIA/srt-slurm, a missing script) or that the auditor
/// cannot map (a multi-node pipeline): listed once each, with how many
/// jobs it leaves undecided.
fn outside_the_input(jobs: &[AuditedJob]) -> Vec<String> {
    let mut missing: BTreeMap<String, usize> = BTreeMap::new();
    for what in jobs.iter().flat_map(|j| j.unexamined.iter()).filter(|u| u.outside_the_input()) {
        *missing.entry(what.to_string()).or_default() += 1;
    }
    missing.into_iter().map(|(what, n)| format!("{what} ({n} job(s) run it)")).collect()
}

/// Jobs of a `gh run download` layout (or the one job of an unrecognised bundle).
fn by_artifact(bundle: &Bundle, jobs: Vec<jobs::Job>, assignment: &BTreeMap<String, String>, files: Vec<FileEvidence>) -> Vec<AuditedJob> {
    let label = bundle.path.clone();
    let recognised = !jobs.is_empty();
    let mut by_job: BTreeMap<String, AuditedJob> = jobs.into_iter().map(|job| (job.id.clone(), AuditedJob::new(&label, job, Vec::new(), Vec::new()))).collect();
    let job_of = |artifact: Option<&str>| {
        artifact.and_then(|a| assignment.get(a)).cloned().unwrap_or_else(|| if recognised { "run".to_string() } else { "bundle".to_string() })
    };
    for evidence in files {
        let job_id = job_of(evidence.artifact.as_deref());
        by_job
            .entry(job_id.clone())
            .or_insert_with(|| AuditedJob::new(&label, jobs::unassigned_job(&job_id, recognised), Vec::new(), Vec::new()))
            .files
            .push(evidence);
    }
    for file in bundle.files.iter().filter(|f| f.status.is_incomplete()) {
        if let Some(job) = by_job.get_mut(&job_of(layout::artifact_of(&file.path))) {
            job.unexamined.push(Unexamined::File(file.path.clone()));
        }
    }
    by_job.into_values().collect()
}

/// Jobs of a repository checkout; files that no job runs (helpers, docs,
/// other configs) form the pseudo-job `repository`.
fn from_repository(bundle: &Bundle, repo: Vec<repository::RepoJob>, files: &[FileEvidence]) -> Vec<AuditedJob> {
    let incomplete: BTreeSet<&str> = bundle.files.iter().filter(|f| f.status.is_incomplete()).map(|f| f.path.as_str()).collect();
    let used: BTreeSet<String> = repo.iter().flat_map(|j| j.files.iter().map(|f| f.path.clone())).collect();
    let mut jobs: Vec<AuditedJob> = repo
        .into_iter()
        .map(|r| {
            let mut unexamined: Vec<Unexamined> =
                r.files.iter().filter(|f| incomplete.contains(f.path.as_str())).map(|f| Unexamined::File(f.path.clone())).collect();
            unexamined.dedup();
            unexamined.extend(r.unexamined);
            AuditedJob::new(&bundle.path, r.job, r.files, unexamined)
        })
        .collect();
    let rest: Vec<FileEvidence> = files.iter().filter(|f| !used.contains(&f.path)).cloned().collect();
    if !rest.is_empty() {
        let unexamined = rest.iter().filter(|f| incomplete.contains(f.path.as_str())).map(|f| Unexamined::File(f.path.clone())).collect();
        jobs.push(AuditedJob::new(&bundle.path, repository::leftover_job(), rest, unexamined));
    }
    jobs.sort_by(|a, b| a.job.id.cmp(&b.job.id));
    jobs
}

/// What the content of a job's files says about the job.
fn hints(files: &[FileEvidence]) -> jobs::ContentHints {
    let mut hints = jobs::ContentHints::default();
    for file in files {
        if let Some(m) = &file.metadata {
            hints.meta.fill_from(&m.meta);
            hints.scenario = hints.scenario.or(m.scenario);
        }
        hints.eval_payload |= file.eval_payload;
        for a in file.env.iter().filter(|a| a.name == "EVAL_ONLY") {
            hints.eval_only = a.value.as_deref().map(|v| v.eq_ignore_ascii_case("true"));
        }
    }
    hints
}

/// Audit bundles under a policy, against `references` (golden tables, ...).
pub fn audit(paths: &[PathBuf], policy: &Policy, limits: &Limits, references: &References) -> Result<Report, AuditError> {
    audit_with(paths, policy, limits, references, &Options::default())
}

/// [`audit`], judging only what `options` selects.
pub fn audit_with(paths: &[PathBuf], policy: &Policy, limits: &Limits, references: &References, options: &Options) -> Result<Report, AuditError> {
    audit_prepared(paths, policy, limits, references, options, &|_| {})
}

/// [`audit_with`], with `prepare` applied to every job between reading and
/// judging: the verdict-invariance test rewrites the jobs' prose there.
pub(crate) fn audit_prepared(
    paths: &[PathBuf],
    policy: &Policy,
    limits: &Limits,
    references: &References,
    options: &Options,
    prepare: &dyn Fn(&mut AuditedJob),
) -> Result<Report, AuditError> {
    let signatures = Engine::embedded()?;
    // A bad ref or a path outside git is a usage error: found before any reading.
    let changes = match &options.changed_since {
        Some(reference) => paths.iter().map(|p| Changes::read(p, reference)).collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let read_options = ReadOptions { include_deprecated: options.include_deprecated, outside: policy.outside.clone(), line_reader: options.line_reader };
    // Each base commit is audited from git objects while the checkout is
    // judged: two independent audits, one on each core. The base evaluates
    // only the scripts of the jobs the change selects in the checkout.
    std::thread::scope(|scope| {
        let mut base_audits = Vec::new();
        let mut bundles = Vec::new();
        let mut jobs = Vec::new();
        let mut skipped = Vec::new();
        let mut reference_only = Vec::new();
        let mut changed_files = 0;
        let mut blank = Vec::new();
        let mut tree = Vec::new();
        for (n, path) in paths.iter().enumerate() {
            let read = match (changes.get(n), &options.changed_since) {
                // The scripts of the jobs the change selects, and the scripts
                // whose evaluation decides how the checkout's jobs are grouped.
                (Some(changes), Some(reference)) => {
                    let selected_scripts = |jobs: &[AuditedJob], sources: &[FileEvidence]| -> Result<BTreeSet<String>, AuditError> {
                        let changes = changes.with_lines(path, reference, sources)?;
                        let mut scripts = changes::select(path, jobs, sources, &changes).scripts(path, jobs, &changes);
                        scripts.extend(repository::grouped_by_evaluation(sources));
                        Ok(scripts)
                    };
                    let source = |extractor: &mut Extractor| bundle::read_bundle(path, limits, extractor);
                    read_from(&source, limits, &signatures, &read_options, &Scope::Selected(&selected_scripts))?
                }
                _ => read(path, limits, &signatures, &read_options)?,
            };
            let ReadBundle { mut bundle, jobs: read_jobs, sources } = read;
            tree.extend(tree_references(&mut bundle, &read_jobs, &sources));
            if !read_jobs.iter().any(judgeable) {
                blank.push(nothing_judged(&bundle, paths.len() > 1));
            }
            bundles.push(bundle);
            let (Some(changes), Some(reference)) = (changes.get(n), &options.changed_since) else {
                let mut read_jobs = read_jobs;
                start_runners(read_jobs.iter_mut(), &sources);
                jobs.extend(read_jobs);
                continue;
            };
            let changes = changes.with_lines(path, reference, &sources)?;
            changed_files += changes.files.len();
            let selection = changes::select(path, &read_jobs, &sources, &changes);
            let evaluated = selection.scripts(path, &read_jobs, &changes);
            if let Some((commit, prefix)) = changes.base() {
                // The base evaluates only what the checkout judges (its findings
                // elsewhere match none), the scripts the change deleted or
                // moved away, whose errors the change may have fixed, and the
                // files the judged scripts source.
                let mut wanted = evaluated.clone();
                wanted.extend(changes.files.iter().cloned());
                // The files they source, evaluated alone at the base: what a
                // library does at its top level there is pre-existing, not new.
                let mut graph = changes::SourceGraph::new(path);
                let sourced: Vec<String> = evaluated.iter().flat_map(|s| graph.closure(s)).collect();
                wanted.extend(sourced);
                let (signatures, read_options) = (&signatures, &read_options);
                let (commit, prefix) = (commit.to_string(), prefix.to_string());
                let judged: BTreeSet<String> = selection.selected.keys().filter_map(|i| read_jobs.get(*i)).map(|j| j.job.id.clone()).collect();
                base_audits
                    .push(scope.spawn(move || base_audit(path, &commit, &prefix, limits, signatures, read_options, references, policy, &wanted, &judged)));
            }
            let judged_here = jobs.len();
            for (i, mut job) in read_jobs.into_iter().enumerate() {
                if selection.selected.contains_key(&i) {
                    // The leftover scripts a change to another leftover file
                    // (a changelog) left unevaluated are unchanged: skipped as such.
                    if !options.line_reader && job.job.id == repository::LEFTOVER {
                        let (unchanged, kept): (Vec<FileEvidence>, Vec<FileEvidence>) =
                            job.files.into_iter().partition(|f| f.kind == crate::evidence::FileKind::Script && !evaluated.contains(&f.path));
                        job.files = kept;
                        if !unchanged.is_empty() {
                            let mut rest = AuditedJob { files: unchanged, unexamined: Vec::new(), ..job.clone() };
                            rest.job.id = format!("{} (unchanged scripts)", repository::LEFTOVER);
                            skipped.push((rest, format!("unchanged since {reference}: not evaluated; neither they nor a file they source changed")));
                        }
                    }
                    jobs.push(job);
                    continue;
                }
                // Waivers are reference data for the jobs judged: kept, even in an unchanged job.
                let waivers: Vec<FileEvidence> = job.files.iter().filter(|f| f.waiver.is_some()).cloned().collect();
                if !waivers.is_empty() {
                    reference_only.push(AuditedJob { files: waivers, unexamined: Vec::new(), ..job.clone() });
                }
                let why = match selection.unselected.get(&i) {
                    Some(untouched) => format!("unchanged since {reference}: none of its files or master-config lines changed, and {untouched}"),
                    None => format!("unchanged since {reference}: none of its files, sourced files or master-config lines changed"),
                };
                skipped.push((job, why));
            }
            start_runners(jobs[judged_here..].iter_mut(), &sources);
        }
        let judged = jobs.len();
        let mut seen = jobs;
        seen.extend(reference_only);
        seen.iter_mut().for_each(prepare);
        let references = &references.with_tree(&tree);
        let ctx = Context { jobs: &seen, catalog: Catalog::embedded(), references, policy };
        let mut results = checks::run_all(&ctx, policy, references.today);
        seen.truncate(judged);
        let unread = unread(&bundles, &seen, options.changed_since.is_some());
        qualify(&mut results, &unread);
        let mut report = report(&bundles, &seen, &skipped, results, policy);
        report.not_examined.extend(blank);
        report.verdict = report.judge();
        report.not_in_input = outside_the_input(&seen);
        if let Some(reference) = &options.changed_since {
            let mut base_findings: Vec<Finding> = Vec::new();
            let mut base_jobs: BTreeSet<String> = BTreeSet::new();
            for audit in base_audits {
                let (findings, jobs) = audit.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
                base_findings.extend(findings);
                base_jobs.extend(jobs);
            }
            let base: BTreeSet<String> = base_findings.iter().map(|f| f.fingerprint.clone()).collect();
            let (pre_existing, _, _) = crate::baseline::mark_known(&mut report, &base, Known::PreExisting);
            let fixed = fixed_by_change(&report, &base_findings);
            let reaching_new_jobs = reaching_new_jobs(paths, &base_findings, &fixed, &base_jobs, &seen);
            report.changed_since =
                Some(ChangeSummary { reference: reference.clone(), changed_files, judged, skipped: skipped.len(), pre_existing, fixed, reaching_new_jobs });
        }
        Ok(report)
    })
}

/// What the judged jobs depend on that was not examined whole: their files
/// that were cut or not read (every such file of the input when all jobs
/// are judged, since a file no job claims may still be the one that sets
/// something), and how many parts of the inputs that are no file (an
/// archive that ended early, a limit that stopped the walk; the report's
/// `not_examined` says what each is).
struct Unread {
    files: Vec<String>,
    parts: usize,
}

fn unread(bundles: &[Bundle], judged: &[AuditedJob], selected: bool) -> Unread {
    let incomplete: BTreeSet<(&str, &str)> =
        bundles.iter().flat_map(|b| b.files.iter().filter(|f| f.status.is_incomplete()).map(move |f| (b.path.as_str(), f.path.as_str()))).collect();
    let files: BTreeSet<&str> = if selected {
        judged.iter().flat_map(|j| j.unexamined.iter().filter_map(Unexamined::file).filter(|path| incomplete.contains(&(j.bundle.as_str(), *path)))).collect()
    } else {
        incomplete.iter().map(|(_, path)| *path).collect()
    };
    Unread { files: files.into_iter().map(str::to_string).collect(), parts: bundles.iter().map(|b| b.not_examined.len()).sum() }
}

/// A check cannot pass on what it did not read: with parts unread, a check
/// that passed becomes `error` (it could not conclude) and one that found
/// nothing to judge says so only of what was read. Failures stand.
fn qualify(results: &mut [checks::CheckResult], unread: &Unread) {
    let what = match unread.files.len() {
        0 if unread.parts == 0 => return,
        0 => "part of the input not examined (see not examined)".to_string(),
        n => {
            let shown: Vec<&str> = unread.files.iter().take(3).map(String::as_str).collect();
            let more = if n > 3 { ", …" } else { "" };
            format!("{n} file(s) not examined ({}{more}; see not examined)", shown.join(", "))
        }
    };
    for result in results.iter_mut().filter(|r| checks::REGISTRY.iter().any(|c| c.id == r.id)) {
        match result.status {
            Status::Pass => {
                result.status = Status::Error;
                result.summary = format!("not conclusive, {what}: on what was read, {}", result.summary);
            }
            Status::Na => result.summary = format!("{} (in what was read; {what})", result.summary),
            Status::Fail | Status::Error => {}
        }
    }
}

/// Whether a job gives the checks anything to judge: a job the layout or
/// the sources name (a `gh run download` artifact, a recipe role, a launch
/// script, a master-config entry), or in its files a launch command, an
/// environment, engine server arguments, a recipe, run metadata, eval
/// results, or what a script does. A file of prose or unrelated text gives
/// none of these: every check would be `na` and the audit would pass.
fn judgeable(job: &AuditedJob) -> bool {
    let named = job.job.from_sources || !job.job.artifacts.is_empty();
    named
        || job.files.iter().any(|f| {
            !(f.env.is_empty()
                && f.env_dumps.is_empty()
                && f.commands.is_empty()
                && f.records.is_empty()
                && f.recipe.is_none()
                && f.master.is_empty()
                && f.metadata.is_none()
                && !f.eval_payload
                && f.eval_scores.is_empty()
                && f.failed_eval_concs.is_empty()
                && f.actions.is_empty()
                && f.signatures.is_empty())
        })
}

/// The report line for an input in which nothing could be judged: a
/// wrong path in a CI job must not pass as a clean submission.
fn nothing_judged(bundle: &Bundle, several: bool) -> String {
    let read = bundle.files.iter().filter(|f| matches!(f.status, FileStatus::Read | FileStatus::Partial(_))).count();
    let prefix = if several { format!("{}: ", bundle.path) } else { String::new() };
    format!(
        "{prefix}nothing could be judged: none of the {read} file(s) read shows a job (gh run download artifact, recipe, launch script, master config), \
         a launch command, an environment, engine server arguments, run metadata or eval results; is this the submission's path?"
    )
}

/// The error and warning findings of the checkout at `path` as the base
/// commit had it: its tree read from git objects (nothing checked out or
/// run) through the same reader, grouped, derived and judged under the same
/// policy, against the references the base tree carries. What it finds is
/// pre-existing: a change did not write it.
#[allow(clippy::too_many_arguments)]
fn base_audit(
    path: &Path,
    commit: &str,
    prefix: &str,
    limits: &Limits,
    signatures: &Engine,
    read_options: &ReadOptions,
    references: &References,
    policy: &Policy,
    scripts: &BTreeSet<String>,
    judged: &BTreeSet<String>,
) -> Result<(Vec<Finding>, Vec<String>), AuditError> {
    let label = path.display().to_string();
    let wanted = |_: &[AuditedJob], _: &[FileEvidence]| Ok(scripts.clone());
    let source = |extractor: &mut Extractor| bundle::read_git_tree(path, commit, prefix, &label, limits, extractor);
    let read = read_from(&source, limits, signatures, read_options, &Scope::Selected(&wanted));
    let ReadBundle { mut bundle, mut jobs, sources } = match read {
        Ok(read) => read,
        // The folder did not exist at the base (or held nothing): everything is new.
        Err(AuditError::Bundle(BundleError::Unreadable { .. })) => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(e),
    };
    // The runners' images, for the jobs the checkout judges (their findings elsewhere match none).
    start_runners(jobs.iter_mut().filter(|j| judged.contains(&j.job.id)), &sources);
    let tree = tree_references(&mut bundle, &jobs, &sources);
    let references = references.with_tree(&tree);
    let ctx = Context { jobs: &jobs, catalog: Catalog::embedded(), references: &references, policy };
    let results = checks::run_all(&ctx, policy, references.today);
    let ids = jobs.iter().map(|j| j.job.id.clone()).collect();
    Ok((results.into_iter().flat_map(|r| r.findings).filter(|f| f.severity != Severity::Info).collect(), ids))
}

/// The pre-existing errors that jobs the base did not have now run (a new
/// config that sources a script with an unwaived patch): each base error
/// the change did not fix, with the new judged jobs that hold its file or
/// source it.
fn reaching_new_jobs(paths: &[PathBuf], base: &[Finding], fixed: &[Fixed], base_jobs: &BTreeSet<String>, judged: &[AuditedJob]) -> Vec<Reach> {
    let mut graphs: Vec<changes::SourceGraph> = paths.iter().map(|p| changes::SourceGraph::new(p)).collect();
    let new: Vec<(&AuditedJob, BTreeSet<String>)> = judged
        .iter()
        .filter(|j| !base_jobs.contains(&j.job.id))
        .map(|j| {
            let mut files: BTreeSet<String> = j.files.iter().map(|f| f.path.clone()).collect();
            let scripts = j.files.iter().filter(|f| f.kind == crate::evidence::FileKind::Script);
            let bundle = paths.iter().position(|p| p.display().to_string() == j.bundle);
            if let Some(graph) = bundle.and_then(|b| graphs.get_mut(b)) {
                let sourced: Vec<String> = scripts.flat_map(|f| graph.closure(&f.path)).collect();
                files.extend(sourced);
            }
            (j, files)
        })
        .collect();
    let mut out: Vec<Reach> = Vec::new();
    for f in base.iter().filter(|f| f.severity == Severity::Error && !fixed.iter().any(|x| x.fingerprint == f.fingerprint)) {
        let Some(at) = f.primary() else { continue };
        let jobs: Vec<String> = new.iter().filter(|(_, files)| files.contains(&at.file)).map(|(j, _)| j.job.id.clone()).collect();
        if !jobs.is_empty() && !out.iter().any(|r| r.fingerprint == f.fingerprint) {
            out.push(Reach { rule: f.rule.clone(), place: at.place(), fingerprint: f.fingerprint.clone(), jobs });
        }
    }
    out
}

/// The base's error findings that the change removed: not found any more
/// in the jobs the change had judged.
fn fixed_by_change(report: &Report, base: &[Finding]) -> Vec<Fixed> {
    let now: BTreeSet<&str> = report.findings().map(|(_, f)| f.fingerprint.as_str()).collect();
    let judged: BTreeSet<&str> = report.jobs.iter().filter(|j| j.skipped.is_none()).map(|j| j.job.id.as_str()).collect();
    let mut out: Vec<Fixed> = base
        .iter()
        .filter(|f| f.severity == Severity::Error && !now.contains(f.fingerprint.as_str()))
        .filter(|f| f.concerned_jobs().any(|j| judged.contains(j)))
        .map(|f| Fixed {
            rule: f.rule.clone(),
            place: f.primary().map(crate::provenance::Provenance::place).unwrap_or_default(),
            fingerprint: f.fingerprint.clone(),
        })
        .collect();
    out.sort_by(|a, b| (&a.rule, &a.place).cmp(&(&b.rule, &b.place)));
    out.dedup_by(|a, b| a.fingerprint == b.fingerprint);
    out
}

/// The references a checkout carries for itself (its golden-AL tables and
/// `MODELS.md`), as the reader found them among its files (`sources`, or
/// the jobs' files when each file belongs whole to one job); a table that
/// does not parse is listed as not examined in `bundle`.
fn tree_references(bundle: &mut Bundle, jobs: &[AuditedJob], sources: &[FileEvidence]) -> Vec<TreeReference> {
    let files: Vec<&FileEvidence> = if sources.is_empty() { jobs.iter().flat_map(|j| j.files.iter()).collect() } else { sources.iter().collect() };
    let found: Vec<TreeReference> =
        files.iter().filter_map(|f| f.tree_document.as_deref().map(|(document, text)| TreeReference::read(&f.path, document, text))).collect();
    for reference in &found {
        if let TreeReference::Golden(Err(e)) = reference {
            bundle.not_examined.push(format!("{e}: the embedded tables do not stand in for it"));
        }
    }
    found
}

fn report(bundles: &[Bundle], jobs: &[AuditedJob], skipped: &[(AuditedJob, String)], checks: Vec<checks::CheckResult>, policy: &Policy) -> Report {
    // A repository file can be seen by several jobs (a recipe's roles, the
    // entry that runs it): it is listed under the first.
    let all = || jobs.iter().chain(skipped.iter().map(|(j, _)| j));
    let mut file_job: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for (key, id) in all().flat_map(|j| j.files.iter().map(move |f| ((j.bundle.as_str(), f.path.as_str()), j.job.id.as_str()))) {
        file_job.entry(key).or_insert(id);
    }
    let (inputs, files, not_examined) = account(bundles, |bundle, path| file_job.get(&(bundle, path)).map(|j| j.to_string()));
    let entry =
        |j: &AuditedJob, skipped: Option<&String>| JobEntry { bundle: j.bundle.clone(), job: j.job.clone(), files: j.files.len(), skipped: skipped.cloned() };
    let jobs = jobs.iter().map(|j| entry(j, None)).chain(skipped.iter().map(|(j, why)| entry(j, Some(why)))).collect();
    Report::new(policy.name.clone(), inputs, checks, jobs, files, not_examined)
}

/// The report's account of what was read: the inputs, every file with its
/// status (and job, from `job_of(bundle, path)`), and what was not examined,
/// prefixed with the bundle when there are several.
pub(crate) fn account(bundles: &[Bundle], job_of: impl Fn(&str, &str) -> Option<String>) -> (Vec<Input>, Vec<FileEntry>, Vec<String>) {
    let multi = bundles.len() > 1;
    let mut not_examined = Vec::new();
    let mut files = Vec::new();
    for b in bundles {
        let prefix = |text: &str| if multi { format!("{}: {text}", b.path) } else { text.to_string() };
        not_examined.extend(b.not_examined.iter().map(|n| prefix(n)));
        for f in &b.files {
            if let FileStatus::Partial(reason) | FileStatus::NotExamined(reason) = &f.status {
                not_examined.push(prefix(&format!("{}: {reason}", f.path)));
            }
            let artifact = layout::artifact_of(&f.path).map(str::to_string);
            files.push(FileEntry { bundle: b.path.clone(), artifact, job: job_of(&b.path, &f.path), record: f.clone() });
        }
    }
    let inputs = bundles.iter().map(|b| Input::Bundle { path: b.path.clone(), sha256: b.sha256.clone() }).collect();
    (inputs, files, not_examined)
}
