//! The report model and its renderings: text for people, JSON for tools,
//! Markdown for merge-gate comments, SARIF for code scanning, JUnit for CI
//! test tabs, GitHub workflow annotations, and one HTML page for a browser.

mod github;
mod html;
mod json;
mod junit;
mod markdown;
mod places;
mod sarif;

pub use places::Placement;
mod text;

use crate::bundle::{FileRecord, FileStatus};
use crate::checks::{CheckResult, Status};
use crate::finding::Finding;
use crate::jobs::{Job, JobKind};
use crate::provenance::Provenance;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

pub const TOOL: &str = "auditor";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Output formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "lowercase", parse_err_fn = unknown_format, parse_err_ty = String)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Sarif,
    Junit,
    Github,
    Html,
}

impl Format {
    /// Every format, in the order help text lists them.
    pub const ALL: &[Format] = <Format as strum::VariantArray>::VARIANTS;

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

fn unknown_format(name: &str) -> String {
    format!("unknown report format {name:?}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// Nothing failed, but part of the input was not examined.
    Incomplete,
}

impl Verdict {
    /// The process exit code for this verdict (usage errors are 2).
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::Incomplete => 3,
        }
    }

    pub fn as_upper(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Incomplete => "INCOMPLETE",
        }
    }
}

/// Which kind of source an image came from (the image module opens
/// each; the report names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    Registry,
    DockerDaemon,
    OciLayout,
    OciArchive,
    DockerArchive,
}

/// How an image's layers were obtained in this run (the layer cache's
/// work, shown by the text report).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LayerCounts {
    #[serde(rename = "ref")]
    pub reference: String,
    /// `pinned`, `upstream` or `image`.
    pub role: String,
    pub layers: usize,
    /// Layer blobs streamed from this image.
    pub read: usize,
    /// Layer indexes taken from the cache.
    pub cached: usize,
    /// Layers streamed once from the other image (same blob digest).
    pub shared: usize,
}

/// One input of a report: a bundle (`path`, `sha256`) or an image
/// (DESIGN's `ref`, `digest`, `platform`, `layers`, `diff_ids`).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Input {
    Bundle {
        path: String,
        /// Absent when contents were not hashed (`auditor scan` without `--hash`).
        #[serde(skip_serializing_if = "Option::is_none")]
        sha256: Option<String>,
    },
    Image(ImageInput),
}

/// An image as a report input.
#[derive(Debug, Clone, Serialize)]
pub struct ImageInput {
    #[serde(rename = "ref")]
    pub reference: String,
    /// `null` when the image could not be resolved (so for the rest).
    pub transport: Option<Transport>,
    /// The manifest digest; `null` where the source has no manifest (an
    /// engine's image, a legacy `docker save` tarball).
    pub digest: Option<String>,
    /// The config digest (the image ID).
    pub config: Option<String>,
    pub platform: Option<String>,
    /// Blob digests, in order.
    pub layers: Vec<String>,
    /// Uncompressed layer digests, in order.
    pub diff_ids: Vec<String>,
    /// The build step (`created_by`) that made each layer, in order; empty
    /// where the history does not say. Not serialised (`image inspect` shows the history).
    #[serde(skip)]
    pub steps: Vec<String>,
}

impl Input {
    /// The path or reference, for people.
    pub fn label(&self) -> &str {
        match self {
            Input::Bundle { path, .. } => path,
            Input::Image(image) => &image.reference,
        }
    }

    /// What identifies its content: a bundle's sha256, an image's manifest
    /// (or else config) digest.
    pub fn identity(&self) -> String {
        match self {
            Input::Bundle { sha256: Some(sha256), .. } => format!("sha256 {}", sha256.get(..16).unwrap_or(sha256)),
            Input::Bundle { sha256: None, .. } => "not hashed".to_string(),
            Input::Image(image) => {
                let id = image.digest.as_deref().or(image.config.as_deref()).unwrap_or("unresolved");
                format!("{} {id}", image.platform.as_deref().unwrap_or("-"))
            }
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct JobEntry {
    pub bundle: String,
    #[serde(flatten)]
    pub job: Job,
    /// Files of the job that were read.
    pub files: usize,
    /// Why the checks did not judge this job (`--changed-since`: nothing it
    /// runs changed); absent for a judged job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileEntry {
    pub bundle: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    #[serde(flatten)]
    pub record: FileRecord,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

/// Everything an audit concluded. Serialised as the JSON report; field
/// order and the order of every list are fixed, so equal inputs give
/// byte-identical JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    pub verdict: Verdict,
    pub policy: String,
    pub inputs: Vec<Input>,
    pub checks: Vec<CheckResult>,
    pub jobs: Vec<JobEntry>,
    pub files: Vec<FileEntry>,
    /// What could not be examined, and why.
    pub not_examined: Vec<String>,
    /// What the input names but does not hold (a recipe kept in another
    /// repository, a launch script the name grammar finds no file for), or
    /// that the auditor cannot map to the input's files: the jobs that run
    /// it are undetermined; not part of the input, so not `not_examined`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_in_input: Vec<String>,
    /// `image diff` / `image verify`: per image, how many layers were read,
    /// taken from the layer cache, or shared with the other image. Depends
    /// on the cache's state, unlike the rest of the report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_cache: Option<Vec<LayerCounts>>,
    /// `--baseline`: what the baseline held and how many findings it knew.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
    /// `--changed-since`: the git ref, and how many jobs were judged and skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_since: Option<ChangeSummary>,
}

/// A report's files by what became of them. A file read in part (a line
/// cut at `--max-line-length`) was examined, and can be cited as evidence:
/// it is not counted with the files never examined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileCounts {
    pub read: usize,
    pub partial: usize,
    pub skipped: usize,
    pub not_examined: usize,
}

impl std::fmt::Display for FileCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} read", self.read)?;
        if self.partial > 0 {
            write!(f, ", {} read in part", self.partial)?;
        }
        write!(f, ", {} skipped, {} not examined", self.skipped, self.not_examined)
    }
}

/// The effect of `--baseline` on a report.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineSummary {
    pub path: String,
    /// Fingerprints in the baseline.
    pub known: usize,
    /// Error and warning findings of this report the baseline knows.
    pub baselined: usize,
    /// Error and warning findings it does not know: these count.
    pub new: usize,
    /// Baseline fingerprints no finding has any more (fixed since).
    pub stale: usize,
}

/// The effect of `--changed-since` on a report.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeSummary {
    #[serde(rename = "ref")]
    pub reference: String,
    /// Files changed (or untracked) since the ref, in the audited inputs.
    pub changed_files: usize,
    /// Jobs judged.
    pub judged: usize,
    /// Jobs listed with `skipped` in `jobs`.
    pub skipped: usize,
    /// Error and warning findings present at the base commit too (marked
    /// `pre_existing`): not written by the change, not counted.
    pub pre_existing: usize,
    /// Error findings at the base commit that the change removed, in the jobs it judged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<Fixed>,
    /// Pre-existing errors that the change makes reach jobs the base did
    /// not have (a new config that sources a script with an unwaived
    /// patch): for the reviewer; the change did not write them, they do not count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reaching_new_jobs: Vec<Reach>,
}

/// A pre-existing error and the new jobs it reaches.
#[derive(Debug, Clone, Serialize)]
pub struct Reach {
    pub rule: String,
    /// Where it is: `file:line`.
    #[serde(rename = "where")]
    pub place: String,
    pub fingerprint: String,
    /// The jobs the change added that run its file.
    pub jobs: Vec<String>,
}

/// A finding of the base commit that a change removed.
#[derive(Debug, Clone, Serialize)]
pub struct Fixed {
    pub rule: String,
    /// Where it was, at the base: `file:line`.
    #[serde(rename = "where")]
    pub place: String,
    pub fingerprint: String,
}

impl Report {
    pub fn new(
        policy: String,
        inputs: Vec<Input>,
        mut checks: Vec<CheckResult>,
        mut jobs: Vec<JobEntry>,
        mut files: Vec<FileEntry>,
        not_examined: Vec<String>,
    ) -> Self {
        for check in &mut checks {
            check.findings.sort_by(|a, b| {
                let key = |f: &Finding| (f.job.clone(), f.severity, f.rule.clone(), f.primary().map(|p| (p.file.clone(), p.line)));
                key(a).cmp(&key(b))
            });
        }
        jobs.sort_by(|a, b| (&a.bundle, &a.job.id).cmp(&(&b.bundle, &b.job.id)));
        files.sort_by(|a, b| (&a.bundle, &a.record.path).cmp(&(&b.bundle, &b.record.path)));
        let mut report = Report {
            schema_version: 1,
            tool: Tool { name: TOOL, version: VERSION },
            verdict: Verdict::Pass,
            policy,
            inputs,
            checks,
            jobs,
            files,
            not_examined,
            not_in_input: Vec::new(),
            layer_cache: None,
            baseline: None,
            changed_since: None,
        };
        report.verdict = report.judge();
        report
    }

    /// The verdict the checks' statuses and the coverage give: fail when a
    /// check failed, else incomplete when one could not conclude or part of
    /// the input was not examined, else pass.
    pub fn judge(&self) -> Verdict {
        if self.checks.iter().any(|c| c.status == Status::Fail) {
            Verdict::Fail
        } else if self.checks.iter().any(|c| c.status == Status::Error) || !self.not_examined.is_empty() {
            Verdict::Incomplete
        } else {
            Verdict::Pass
        }
    }

    /// Render in `format`; `color` only affects text.
    pub fn render(&self, format: Format, color: bool) -> String {
        self.render_placed(format, color, &Placement::default())
    }

    /// Render in `format`, the formats for tools (SARIF, GitHub
    /// annotations) placing paths and filtering info as `placement` says.
    pub fn render_placed(&self, format: Format, color: bool, placement: &Placement) -> String {
        match format {
            Format::Text => text::render(self, color, placement),
            Format::Json => json::render(self),
            Format::Markdown => markdown::render(self),
            Format::Sarif => sarif::render(self, placement),
            Format::Junit => junit::render(self),
            Format::Github => github::render(self, placement),
            Format::Html => html::render(self),
        }
    }

    /// How many real jobs there are (run-level files are not a job).
    pub fn job_count(&self) -> usize {
        self.jobs.iter().filter(|j| j.job.kind != JobKind::RunLevel).count()
    }

    /// Jobs `--changed-since` left unjudged, with the reason.
    pub fn skipped_jobs(&self) -> impl Iterator<Item = (&JobEntry, &str)> {
        self.jobs.iter().filter_map(|j| j.skipped.as_deref().map(|why| (j, why)))
    }

    /// How many files were read whole, read in part, skipped and not examined.
    pub fn file_counts(&self) -> FileCounts {
        let count = |f: fn(&FileStatus) -> bool| self.files.iter().filter(|e| f(&e.record.status)).count();
        FileCounts {
            read: count(|s| matches!(s, FileStatus::Read)),
            partial: count(|s| matches!(s, FileStatus::Partial(_))),
            skipped: count(|s| matches!(s, FileStatus::Skipped(_))),
            not_examined: count(|s| matches!(s, FileStatus::NotExamined(_))),
        }
    }

    /// The path a reviewer opens for a piece of evidence: for a file of the
    /// bundle, the bundle path joined with the file's path inside it (a
    /// virtual path for archives); reference data (golden tables, policies)
    /// keeps its own path.
    pub fn location(&self, finding: &Finding, evidence: &Provenance) -> String {
        // `auditor scan` records the path as the user would open it already.
        let within = |input: &Input| {
            let root = input.label().trim_end_matches('/');
            evidence.file == input.label() || evidence.file.strip_prefix(root).is_some_and(|rest| rest.starts_with('/'))
        };
        if finding.job.is_none() && self.jobs.is_empty() && self.inputs.iter().any(within) {
            return evidence.file.clone();
        }
        let bundle = finding
            .job
            .as_ref()
            .and_then(|id| self.jobs.iter().find(|j| &j.job.id == id))
            .map(|j| j.bundle.as_str())
            .or_else(|| self.inputs.first().map(Input::label))
            .unwrap_or("");
        let in_bundle = self.files.iter().any(|f| f.bundle == bundle && f.record.path == evidence.file);
        if !in_bundle || bundle.is_empty() || bundle == evidence.file || bundle.ends_with(&format!("/{}", evidence.file)) {
            evidence.file.clone()
        } else {
            format!("{}/{}", bundle.trim_end_matches('/'), self.inside_archives(bundle, &evidence.file))
        }
    }

    /// A file of `bundle` named inside the archives that hold it, whatever
    /// `..` a member's name holds (`x.zip/../../etc/p` is `x.zip/etc/p`).
    fn inside_archives(&self, bundle: &str, file: &str) -> String {
        let archive = self
            .files
            .iter()
            .filter(|f| f.bundle == bundle)
            .map(|f| f.record.path.as_str())
            .filter(|p| file.len() > p.len() && file.starts_with(p) && file.as_bytes()[p.len()] == b'/')
            .max_by_key(|p| p.len());
        match archive {
            Some(a) => format!("{}/{}", self.inside_archives(bundle, a), crate::provenance::clamped(&file[a.len() + 1..])),
            None => crate::provenance::clamped(file),
        }
    }

    /// Where a piece of evidence is, for people: [`Report::location`] and the line.
    pub fn place(&self, finding: &Finding, evidence: &Provenance) -> String {
        format!("{}{}", self.location(finding, evidence), evidence.line.map(|l| format!(":{l}")).unwrap_or_default())
    }

    /// Every finding with its check, in report order.
    pub fn findings(&self) -> impl Iterator<Item = (&CheckResult, &Finding)> {
        self.checks.iter().flat_map(|c| c.findings.iter().map(move |f| (c, f)))
    }
}

/// Findings that share a key (a place, a place and rule), with every job they concern.
pub(crate) struct Group<'r> {
    /// In the order given.
    pub findings: Vec<&'r Finding>,
    pub jobs: BTreeSet<&'r str>,
}

/// `findings` grouped by `key`, in key order: the renderers that show one
/// row or one section per place.
pub(crate) fn grouped<'r, K: Ord>(findings: impl IntoIterator<Item = &'r Finding>, key: impl Fn(&'r Finding) -> K) -> BTreeMap<K, Group<'r>> {
    let mut groups: BTreeMap<K, Group<'r>> = BTreeMap::new();
    for f in findings {
        let group = groups.entry(key(f)).or_insert_with(|| Group { findings: Vec::new(), jobs: BTreeSet::new() });
        group.findings.push(f);
        group.jobs.extend(f.concerned_jobs());
    }
    groups
}
