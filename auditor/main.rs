//! The `auditor` command line: parse arguments, call the library, map
//! outcomes to exit codes (0 pass, 1 fail, 2 usage or unreadable input,
//! 3 incomplete).

use anyhow::{Context as _, Result, bail};
use auditor::audit::{self, AuditError};
use auditor::baseline::{Baseline, BaselineFile};
use auditor::bundle::Limits;
use auditor::bundle::limits::parse_size;
use auditor::evidence::waiver;
use auditor::facts::view;
use auditor::finding::Severity;
use auditor::image::{self, ImageRef, OpenOptions, Platform};
use auditor::image::{forensics, limits};
use auditor::policy::Policy;
use auditor::reference::References;
use auditor::reference::thresholds::Thresholds;
use auditor::report::{Format, Placement, Report};
use auditor::rules;
use auditor::scan;
use auditor::signatures::Engine;
use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "auditor", version, about = "Forensic auditor for LLM-serving benchmark submissions", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Audit run bundles (directories as `gh run download` writes them, or .zip / .tar.gz of one).
    ///
    /// Exit codes: 0 every check passed or is not applicable; 1 a check failed;
    /// 2 usage error or no input could be read; 3 nothing failed but part of
    /// the input was not examined, or nothing in it could be judged.
    Audit {
        #[command(flatten)]
        inputs: AuditInputs,
        /// A previous JSON report (`--format json`) or a file `auditor baseline` wrote:
        /// findings it knows stay in the report, marked, but do not count against the verdict.
        /// Without it, every finding counts.
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        /// Judge only the jobs of a git checkout that changed since GIT_REF (their recipe,
        /// script, sourced files or master-config entry); the others are listed as skipped.
        /// Without it, every job is judged.
        #[arg(long, value_name = "GIT_REF")]
        changed_since: Option<String>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Write a baseline: the fingerprints of the current error and warning
    /// findings (with rule and place), as JSON, for `audit --baseline`.
    ///
    /// Exit codes: 0 written (whatever the findings); 2 usage error or no
    /// input could be read.
    Baseline {
        #[command(flatten)]
        inputs: AuditInputs,
        /// Write the baseline to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Show what the parsers extract from a file or a bundle.
    Evidence {
        /// A log, launch script, recipe or results file, or a bundle (directory or archive).
        #[arg(value_name = "FILE|BUNDLE")]
        path: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "json")]
        format: EvidenceFormat,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Scan files and trees (scripts, recipes, logs; directories, .zip,
    /// .tar.gz, .gz) with the signature rules (patch commands, import
    /// shadowing, start-up hooks, architecture overrides) and the policy's
    /// forbidden environment variables, each file's environment judged on
    /// its own; simulated-acceptance knobs are listed as information.
    ///
    /// Exit codes as for `audit`: 0 no error finding; 1 an error finding (an
    /// error rule's match, a forbidden variable in effect); 2 usage error or
    /// no input could be read; 3 nothing failed but part of the input was
    /// not examined.
    Scan {
        /// Files, directories or archives.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        signatures: SignatureArgs,
        /// Policy file (TOML) whose forbidden variables are looked for; default: the embedded `inferencex` policy.
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        /// Also hash every file (SHA-256) into the report, as `audit` does; this costs more than the scan.
        #[arg(long)]
        hash: bool,
        #[command(flatten)]
        output: OutputArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Container images: inspect one (and verify its blobs), diff a pinned
    /// image against its upstream, verify one against its RECORDs, or list
    /// a container's filesystem changes.
    Image {
        #[command(subcommand)]
        command: ImageCommand,
    },
    /// List the checks and rules, explain one, or test the rule packs' own examples.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
}

/// What `audit` and `baseline` read, and the reference data they judge against.
#[derive(Args)]
struct AuditInputs {
    /// Bundle directories or archives, or a repository checkout.
    #[arg(required = true, value_name = "BUNDLE")]
    bundles: Vec<PathBuf>,
    /// Policy file (TOML); default: the embedded `inferencex` policy.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Directory of golden AL tables (*.yaml), added to the embedded InferenceX tables
    /// (a table of the same name replaces the embedded one). Repeatable; by default the embedded tables alone.
    #[arg(long, value_name = "DIR")]
    golden: Vec<PathBuf>,
    /// Eval thresholds file (InferenceX thresholds.yaml format); default: the embedded one.
    #[arg(long, value_name = "FILE")]
    thresholds: Option<PathBuf>,
    /// The served checkpoint (config.json, model.safetensors.index.json, *.safetensors):
    /// the draft's shipped precision is read from the safetensors headers only. Without it, the precision is
    /// taken from what the run's logs and recipe say.
    #[arg(long, value_name = "DIR")]
    checkpoint: Option<PathBuf>,
    /// Directory of engine-patch waivers (<PR>.md), in addition to any docs/waiver/ in the input (by default
    /// those alone).
    #[arg(long, value_name = "DIR")]
    waivers: Option<PathBuf>,
    /// Judge suppression expiry as of this date (YYYY-MM-DD) instead of today (UTC).
    #[arg(long, value_name = "DATE", value_parser = parse_today)]
    today: Option<jiff::civil::Date>,
    /// Also audit retired configs of a checkout (files under a `deprecated/` directory, and
    /// recipes only they run); by default they are listed as skipped.
    #[arg(long)]
    include_deprecated: bool,
    /// Read scripts line by line with pattern classes instead of evaluating them with the bash
    /// interpreter (the default): about ten times as fast on a whole repository (BENCHMARKS.md),
    /// but blind to what only evaluation shows (functions with arguments, arrays, `eval`, wrappers).
    #[arg(long)]
    line_reader: bool,
    /// The default since the interpreter replaced the line reader; kept so that workflows
    /// written for it still run.
    #[arg(long, hide = true, conflicts_with = "line_reader")]
    interpret_scripts: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

impl AuditInputs {
    /// The policy and reference inputs these options name.
    fn load(&self) -> Result<(Policy, References)> {
        let policy = load_policy(self.policy.as_ref())?;
        let mut inputs = References::default();
        if let Some(path) = &self.thresholds {
            inputs.thresholds = Thresholds::load(path).context("--thresholds")?;
        }
        if let Some(dir) = &self.waivers {
            inputs.waivers = waiver::read_dir(dir).context("--waivers")?;
        }
        if let Some(date) = &self.today {
            inputs.today = *date;
        }
        if let Some(dir) = &self.checkpoint {
            inputs.checkpoint = Some(auditor::reference::checkpoint::read(dir).context("--checkpoint")?);
        }
        for dir in &self.golden {
            inputs.golden.add_dir(dir).context("--golden")?;
        }
        Ok((policy, inputs))
    }

    /// Audit the inputs (only what changed since `changed_since`, when given).
    fn audit(&self, changed_since: Option<&str>) -> Result<Report> {
        let (policy, inputs) = self.load()?;
        let options =
            audit::Options { changed_since: changed_since.map(str::to_string), include_deprecated: self.include_deprecated, line_reader: self.line_reader };
        match audit::audit_with(&self.bundles, &policy, &self.limits.limits(), &inputs, &options) {
            Ok(report) => Ok(report),
            Err(AuditError::Bundle(e)) => bail!("{e}"),
            Err(e) => Err(e.into()),
        }
    }
}

#[derive(Subcommand)]
enum RulesCommand {
    /// List every check and its rule ids, signature rules included.
    List {
        /// Policy file (TOML) whose checks are listed; default: the embedded `inferencex` policy.
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        #[command(flatten)]
        signatures: SignatureArgs,
    },
    /// Explain a check or rule id: what it enforces and how to fix a failure.
    Explain {
        /// A check id (`forbidden-env`) or rule id (`engine-patch/record-mismatch`), as `rules list` prints them.
        #[arg(value_name = "RULE-ID")]
        id: String,
        /// Policy file (TOML) whose settings are explained; default: the embedded `inferencex` policy.
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        #[command(flatten)]
        signatures: SignatureArgs,
    },
    /// Check every signature rule against its own examples (exit 1 if one fails).
    Test {
        #[command(flatten)]
        signatures: SignatureArgs,
    },
}

#[derive(Args)]
struct SignatureArgs {
    /// Directory of rule packs (*.toml) to use instead of the embedded ones.
    #[arg(long, value_name = "DIR")]
    signatures: Option<PathBuf>,
}

impl SignatureArgs {
    fn engine(&self) -> Result<Engine> {
        Ok(match &self.signatures {
            Some(dir) => Engine::load(dir).context("--signatures")?,
            None => Engine::embedded()?,
        })
    }
}

#[derive(Subcommand)]
enum ImageCommand {
    /// Resolve an image and show its manifest digest, platform, config and
    /// layers; with --verify-layers, stream every layer to check its digest
    /// and size.
    ///
    /// REF: docker://REGISTRY/REPO:TAG[@sha256:..] (prefix optional),
    /// docker-daemon:NAME:TAG, oci:DIR[:TAG], oci-archive:FILE[:TAG],
    /// docker-archive:FILE[:NAME:TAG].
    ///
    /// Exit codes: 0 verified; 1 a blob does not match its digest or size;
    /// 2 bad reference, unreachable source, authentication failure, image or
    /// platform not found; 3 a layer could not be read.
    Inspect {
        /// The image (see REF above).
        #[arg(value_name = "REF", value_parser = parse_image_ref)]
        reference: ImageRef,
        /// Platform to pick from a multi-platform index [default: linux/amd64].
        #[arg(long, value_name = "OS/ARCH[/VARIANT]")]
        platform: Option<String>,
        /// Read every layer to its end, verifying digest and size.
        #[arg(long)]
        verify_layers: bool,
        /// Registry (HOST[:PORT]) to reach over plain HTTP, repeatable; by default only loopback is.
        #[arg(long = "insecure-registry", value_name = "HOST")]
        insecure_registries: Vec<String>,
        /// Most layers fetched at once.
        #[arg(long, value_name = "N", default_value_t = 4)]
        jobs: usize,
        #[command(flatten)]
        fetch: FetchArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Compare a pinned image with its upstream, file by file: what it
    /// added, modified, deleted or re-permissioned, classified (edits inside
    /// Python distributions, patch files, start-up hooks, reinstalled or
    /// forked wheels, native libraries, executables on PATH, entry points,
    /// bytecode-only changes) and judged by the policy; plus its config.
    ///
    /// PINNED, REF: docker://REGISTRY/REPO:TAG[@sha256:..] (prefix optional),
    /// docker-daemon:NAME:TAG, oci:DIR[:TAG], oci-archive:FILE[:TAG],
    /// docker-archive:FILE[:NAME:TAG].
    ///
    /// Exit codes: 0 no engine patch; 1 an error finding (a patched engine,
    /// a forbidden variable in the config, a tampered blob); 2 bad
    /// reference, unreachable source, image or platform not found, unusable
    /// cache; 3 nothing failed but a layer could not be read.
    Diff {
        /// The image the submission pinned (see PINNED above).
        #[arg(value_name = "PINNED", value_parser = parse_image_ref)]
        pinned: ImageRef,
        /// The upstream image the pinned one must equal.
        #[arg(long, value_name = "REF", value_parser = parse_image_ref)]
        upstream: ImageRef,
        #[command(flatten)]
        forensic: ForensicArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Verify one image alone: every installed Python distribution's files
    /// against its RECORD hashes, files in package directories no RECORD
    /// lists, start-up hooks, direct_url.json origins, and the config.
    ///
    /// REF: docker://REGISTRY/REPO:TAG[@sha256:..] (prefix optional),
    /// docker-daemon:NAME:TAG, oci:DIR[:TAG], oci-archive:FILE[:TAG],
    /// docker-archive:FILE[:NAME:TAG].
    ///
    /// Exit codes as for `image diff`.
    Verify {
        /// The image (see REF above).
        #[arg(value_name = "REF", value_parser = parse_image_ref)]
        reference: ImageRef,
        #[command(flatten)]
        forensic: ForensicArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// List a container's filesystem changes against its image (Docker
    /// Engine API; DOCKER_HOST is honoured).
    Changes {
        /// Container name or id, as the Docker Engine knows it.
        #[arg(value_name = "CONTAINER")]
        container: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: EvidenceFormat,
    },
}

#[derive(Args)]
struct ForensicArgs {
    /// Platform to pick from a multi-platform index [default: linux/amd64; the index's other platforms are then
    /// named as not examined].
    #[arg(long, value_name = "OS/ARCH[/VARIANT]")]
    platform: Option<String>,
    /// Registry (HOST[:PORT]) to reach over plain HTTP, repeatable; by default only loopback is.
    #[arg(long = "insecure-registry", value_name = "HOST")]
    insecure_registries: Vec<String>,
    /// Layers read at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Where per-layer file indexes are cached (default: $XDG_CACHE_HOME/auditor or ~/.cache/auditor).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Largest size of the layer cache; least recently used layers are evicted beyond it.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "8G")]
    cache_max_size: u64,
    /// Most uncompressed bytes read from one layer; a larger layer is not examined.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64G")]
    max_layer_size: u64,
    /// Most uncompressed bytes per compressed byte of a layer (any layer may reach 256 MiB; 0: no limit). A layer
    /// that expands more is a decompression bomb: a hostile entry, not examined further.
    #[arg(long, value_name = "N", default_value_t = limits::DEFAULT_MAX_RATIO)]
    max_layer_ratio: u64,
    /// Most entries in one layer, and paths in one image's merged index; beyond, the rest is not examined.
    #[arg(long, value_name = "N", default_value_t = limits::DEFAULT_MAX_ENTRIES)]
    max_layer_entries: u64,
    /// Most directory levels of a path in a layer; a deeper entry is a hostile entry, not applied.
    #[arg(long, value_name = "N", default_value_t = limits::DEFAULT_MAX_DEPTH)]
    max_path_depth: usize,
    /// Once a limit stops a layer's walk, for at most this many seconds its remaining tar headers are still read
    /// (data skipped, nothing held) to list hostile entries after the limit; 0: stop at the limit.
    #[arg(long, value_name = "SECONDS", default_value_t = limits::DEFAULT_SCAN_SECONDS)]
    max_scan_seconds: u64,
    /// Read again the layers the cache holds: by default a cached layer's blob was verified
    /// against its digest when it was first read, not in this run.
    #[arg(long)]
    verify_cached: bool,
    #[command(flatten)]
    fetch: FetchArgs,
    /// Policy file (TOML); default: the embedded `inferencex` policy.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Judge suppression expiry as of this date (YYYY-MM-DD) instead of today (UTC).
    #[arg(long, value_name = "DATE", value_parser = parse_today)]
    today: Option<jiff::civil::Date>,
}

/// How images are fetched from a registry: the same for every image command.
#[derive(Args)]
struct FetchArgs {
    /// Host (HOST, HOST:PORT, or .DOMAIN with its subdomains) a registry may redirect to, repeatable;
    /// by default only itself and the blob stores of Docker Hub, GHCR and Quay.
    #[arg(long = "allow-redirect", value_name = "HOST")]
    allowed_redirects: Vec<String>,
    /// Longest silence (or trickle under 1 KiB) while reading from a registry before the request is retried (resumed with Range).
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    read_timeout: u64,
    /// Largest manifest, index or config accepted from a registry (e.g. 4M).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4M")]
    max_manifest_size: u64,
}

impl FetchArgs {
    /// `options` with these fetch settings.
    fn apply(&self, options: OpenOptions) -> OpenOptions {
        OpenOptions {
            read_timeout: std::time::Duration::from_secs(self.read_timeout.max(1)),
            allowed_redirects: self.allowed_redirects.clone(),
            max_document: self.max_manifest_size,
            ..options
        }
    }
}

/// `--today`: a calendar date, checked where it enters (a usage error, exit 2).
fn parse_today(text: &str) -> Result<jiff::civil::Date, String> {
    auditor::policy::suppressions::parse_date(text).map_err(|e| e.to_string())
}

/// An image reference, checked where it enters (a usage error, exit 2).
fn parse_image_ref(text: &str) -> Result<ImageRef, String> {
    text.parse::<ImageRef>().map_err(|e| e.to_string())
}

impl ForensicArgs {
    fn options(&self) -> Result<forensics::Options> {
        let platform = self.platform.as_deref().map(Platform::parse).transpose().map_err(anyhow::Error::msg)?;
        let jobs = self.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from)).max(1);
        let open = self.fetch.apply(OpenOptions {
            platform,
            insecure_registries: self.insecure_registries.clone(),
            max_concurrent_fetches: jobs,
            progress: std::io::stderr().is_terminal(),
            ..OpenOptions::default()
        });
        let Some(cache_dir) = self.cache_dir.clone().or_else(forensics::default_cache_dir) else {
            bail!("no cache directory: set HOME or XDG_CACHE_HOME, or pass --cache-dir DIR");
        };
        let today = self.today.unwrap_or_else(auditor::policy::suppressions::today);
        let limits = limits::LayerLimits {
            max_size: self.max_layer_size,
            max_ratio: self.max_layer_ratio,
            max_entries: self.max_layer_entries,
            max_depth: self.max_path_depth,
            scan_seconds: self.max_scan_seconds,
        };
        Ok(forensics::Options { open, cache_dir, cache_max_bytes: self.cache_max_size, jobs, limits, today, verify_cached: self.verify_cached })
    }
}

#[derive(Args)]
struct OutputArgs {
    /// Report format.
    #[arg(long, default_value = "text", value_parser = format_parser())]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// SARIF and GitHub annotations name files relative to DIR (what code scanning resolves against its
    /// checkout) [default: the audited directory, or the one holding the audited file or archive].
    #[arg(long, value_name = "DIR", value_parser = existing_dir)]
    source_root: Option<PathBuf>,
    /// Put info findings (what was judged) in SARIF and GitHub annotations too; by default they hold errors
    /// and warnings only.
    #[arg(long)]
    include_info: bool,
    /// The least severe finding listed in the text report, SARIF and annotations (below it, findings are counted,
    /// not listed); JSON and Markdown keep every finding.
    #[arg(long, value_name = "LEVEL", default_value = "info", value_parser = severity_parser())]
    min_severity: Severity,
    /// Text report: the answer alone (the verdict, and each check that failed or could not conclude with its
    /// counts and top places), no details.
    #[arg(long, short)]
    quiet: bool,
    /// Also write the report in FORMAT to FILE (repeatable), e.g. `--also json=report.json --also
    /// sarif=report.sarif`: every format from one run. By default, only --format is written.
    // One run, not one per format: an audit with `--changed-since` audits the base too, and a bundle
    // of many gigabytes is read again by every run; and the files cannot disagree.
    #[arg(long, value_name = "FORMAT=FILE", value_parser = parse_also)]
    also: Vec<(Format, PathBuf)>,
}

/// A directory that exists (a root that does not would name every file
/// outside it, silently).
fn existing_dir(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    match path.is_dir() {
        true => Ok(path),
        false => Err("no such directory".into()),
    }
}

/// `--also FORMAT=FILE`.
fn parse_also(text: &str) -> Result<(Format, PathBuf), String> {
    let names = || Format::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ");
    let (name, file) = text.split_once('=').ok_or_else(|| format!("expected FORMAT=FILE (FORMAT one of {})", names()))?;
    let format = name.parse::<Format>().map_err(|e| format!("{e} (one of {})", names()))?;
    if file.is_empty() {
        return Err("no FILE after '='".into());
    }
    Ok((format, PathBuf::from(file)))
}

impl OutputArgs {
    fn placement(&self) -> Placement {
        Placement { source_root: self.source_root.clone(), include_info: self.include_info, min_severity: self.min_severity, quiet: self.quiet }
    }
}

#[derive(Args)]
struct LimitArgs {
    /// Most files read from one bundle; beyond, the rest is reported as not examined.
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    max_members: u64,
    /// Largest single file read (e.g. 4G); larger ones are reported as not examined.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4G")]
    max_member_size: u64,
    /// Most bytes read from one bundle in all (e.g. 64G).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64G")]
    max_total_size: u64,
    /// Longest line examined (e.g. 4M); the rest of a longer line is reported as not examined.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4M")]
    max_line_length: u64,
    /// Most bytes a compressed stream (.tar.gz, .gz, zip member) may expand to per compressed byte.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_ratio: u64,
    /// Deepest directory or nested-archive level followed.
    #[arg(long, value_name = "N", default_value_t = 32)]
    max_depth: u32,
    /// Once the member limit stops an archive, for at most this many seconds its remaining member names are
    /// still read (content skipped) for names that point outside it (0: not at all).
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    max_scan_seconds: u64,
}

impl LimitArgs {
    /// The limits; with no flag, the library's defaults (a test holds the two together).
    fn limits(&self) -> Limits {
        Limits {
            max_members: self.max_members,
            max_member_size: self.max_member_size,
            max_total_size: self.max_total_size,
            max_line_length: usize::try_from(self.max_line_length).unwrap_or(usize::MAX),
            max_depth: self.max_depth,
            max_ratio: self.max_ratio,
            scan_seconds: self.max_scan_seconds,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum EvidenceFormat {
    Json,
    Text,
}

/// `--format`: the report's own format names, mapped here so the library
/// does not depend on the argument parser.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    clap::builder::PossibleValuesParser::new(Format::ALL.iter().map(|f| f.name())).try_map(|name| name.parse::<Format>())
}

/// `--min-severity`: the finding severities by their own names.
fn severity_parser() -> impl clap::builder::TypedValueParser<Value = Severity> {
    let all = [Severity::Error, Severity::Warning, Severity::Info];
    clap::builder::PossibleValuesParser::new(all.map(Severity::as_str)).map(move |name| all.into_iter().find(|s| s.as_str() == name).unwrap_or(Severity::Info))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("auditor: error: {}", describe(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes, each said once: an error whose message
/// already includes its cause (`PATH: No such file or directory`) does not
/// get it repeated.
fn describe(error: &anyhow::Error) -> String {
    let mut out = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !out.contains(&cause) {
            out.push_str(": ");
            out.push_str(&cause);
        }
    }
    out
}

fn load_policy(path: Option<&PathBuf>) -> Result<Policy> {
    let policy = match path {
        Some(path) => Policy::load(path).context("--policy")?,
        None => Policy::embedded(),
    };
    Ok(policy)
}

/// The report outputs a command takes, if it takes them.
fn output_args(command: &Command) -> Option<&OutputArgs> {
    match command {
        Command::Audit { output, .. } | Command::Scan { output, .. } => Some(output),
        Command::Image { command: ImageCommand::Inspect { output, .. } | ImageCommand::Diff { output, .. } | ImageCommand::Verify { output, .. } } => {
            Some(output)
        }
        _ => None,
    }
}

impl OutputArgs {
    /// Where the reports go, checked before any work: a file whose
    /// directory does not exist, or two outputs to one file (the second
    /// would silently replace the first), is a usage error up front, not
    /// after an audit of gigabytes.
    fn check(&self) -> Result<()> {
        let files = self.output.iter().map(|p| ("--output".to_string(), p)).chain(self.also.iter().map(|(f, p)| (format!("--also {}", f.name()), p)));
        let mut seen: Vec<&PathBuf> = Vec::new();
        for (flag, path) in files {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !dir.is_dir() {
                bail!("{flag}: cannot write {}: no directory {}", path.display(), dir.display());
            }
            if seen.contains(&path) {
                bail!("{flag}: {} is named by another output too", path.display());
            }
            seen.push(path);
        }
        Ok(())
    }
}

fn run(cli: Cli) -> Result<u8> {
    if let Some(output) = output_args(&cli.command) {
        output.check()?;
    }
    match cli.command {
        Command::Audit { inputs, baseline, changed_since, output } => {
            // A bad baseline is a usage error before any work is done.
            let baseline = baseline.as_deref().map(Baseline::load).transpose().context("--baseline")?;
            let mut report = inputs.audit(changed_since.as_deref())?;
            if let Some(baseline) = &baseline {
                auditor::baseline::apply(&mut report, baseline);
            }
            emit_report(&report, &output)?;
            Ok(report.verdict.exit_code() as u8)
        }
        Command::Baseline { inputs, output } => {
            let report = inputs.audit(None)?;
            emit(&BaselineFile::of(&report).to_json(), output.as_ref())?;
            Ok(0)
        }
        Command::Evidence { path, format, limits } => {
            let engine = auditor::signatures::Engine::embedded()?;
            let read = audit::read(&path, &limits.limits(), &engine, &audit::ReadOptions::default()).map_err(|e| anyhow::anyhow!("{e}"))?;
            let whole = (path.is_file() && read.bundle.files.len() == 1).then(|| read.whole_file());
            let view = match &whole {
                Some((files, facts)) => view::EvidenceView::Files(view::files(files, facts, auditor::evidence::knobs::Catalog::embedded())),
                None => read.jobs_view(),
            };
            let text = match format {
                EvidenceFormat::Json => format!("{}\n", serde_json::to_string_pretty(&view.to_json())?),
                EvidenceFormat::Text => view.text(),
            };
            emit(&text, None)?;
            Ok(u8::from(read.bundle.is_incomplete()) * 3)
        }
        Command::Scan { paths, signatures, policy, hash, output, limits } => {
            let report = scan::scan(&paths, &signatures.engine()?, &load_policy(policy.as_ref())?, &limits.limits(), hash)?;
            emit_report(&report, &output)?;
            Ok(report.verdict.exit_code() as u8)
        }
        Command::Image { command } => image_command(command),
        Command::Rules { command } => {
            let text = match command {
                RulesCommand::List { policy, signatures } => rules::list(&load_policy(policy.as_ref())?, &signatures.engine()?),
                RulesCommand::Explain { id, policy, signatures } => rules::explain(&load_policy(policy.as_ref())?, &signatures.engine()?, &id)?,
                RulesCommand::Test { signatures } => {
                    let (text, passed) = rules::test(&signatures.engine()?);
                    emit(&text, None)?;
                    return Ok(u8::from(!passed));
                }
            };
            emit(&text, None)?;
            Ok(0)
        }
    }
}

/// Render a report as `--format` asks, to `--output` or standard output.
fn emit_report(report: &Report, output: &OutputArgs) -> Result<()> {
    let color = output.format == Format::Text && output.output.is_none() && stdout_color();
    emit(&report.render_placed(output.format, color, &output.placement()), output.output.as_ref())?;
    emit_also(report, output)
}

/// The `--also` files, never coloured. The job summary is appended once,
/// however many of the outputs are `github`.
fn emit_also(report: &Report, output: &OutputArgs) -> Result<()> {
    for (format, path) in &output.also {
        write_file(path, &report.render_placed(*format, false, &output.placement()), &format!("--also {}", format.name()))?;
    }
    if output.format == Format::Github || output.also.iter().any(|(f, _)| *f == Format::Github) {
        step_summary(report);
    }
    Ok(())
}

/// In a GitHub Actions step (`GITHUB_STEP_SUMMARY` set), append the
/// Markdown report to the job summary. A summary that cannot be written is
/// a warning: it must not change the verdict.
fn step_summary(report: &Report) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else { return };
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut file| file.write_all(format!("{}\n", report.render(Format::Markdown, false)).as_bytes()));
    if let Err(e) = written {
        eprintln!("auditor: warning: cannot append the report to GITHUB_STEP_SUMMARY ({}): {e}", PathBuf::from(path).display());
    }
}

fn image_command(command: ImageCommand) -> Result<u8> {
    match command {
        ImageCommand::Inspect { reference, platform, verify_layers, insecure_registries, jobs, fetch, output } => {
            let platform = platform.as_deref().map(Platform::parse).transpose().map_err(anyhow::Error::msg)?;
            let options = fetch.apply(OpenOptions {
                platform,
                insecure_registries,
                max_concurrent_fetches: jobs.max(1),
                progress: std::io::stderr().is_terminal(),
                ..OpenOptions::default()
            });
            let inspection = image::inspect(&reference, &options, verify_layers)?;
            let color = output.format == Format::Text && output.output.is_none() && stdout_color();
            let mut text = String::new();
            if let (Format::Text, Some(image)) = (output.format, &inspection.image) {
                text.push_str(&image::render_text(image));
            }
            text.push_str(&inspection.report.render_placed(output.format, color, &output.placement()));
            emit(&text, output.output.as_ref())?;
            emit_also(&inspection.report, &output)?;
            Ok(inspection.report.verdict.exit_code() as u8)
        }
        ImageCommand::Diff { pinned, upstream, forensic, output } => {
            let policy = load_policy(forensic.policy.as_ref())?;
            let report = forensics::diff(&pinned, &upstream, &forensic.options()?, &policy)?;
            emit_report(&report, &output)?;
            Ok(report.verdict.exit_code() as u8)
        }
        ImageCommand::Verify { reference, forensic, output } => {
            let policy = load_policy(forensic.policy.as_ref())?;
            let report = forensics::verify(&reference, &forensic.options()?, &policy)?;
            emit_report(&report, &output)?;
            Ok(report.verdict.exit_code() as u8)
        }
        ImageCommand::Changes { container, format } => {
            let changes = image::container_changes(&container)?;
            let text = match format {
                EvidenceFormat::Json => format!("{}\n", serde_json::to_string_pretty(&changes)?),
                EvidenceFormat::Text => image::changes_text(&changes),
            };
            emit(&text, None)?;
            Ok(0)
        }
    }
}

/// Whether standard output takes colour, as anstream decides it: NO_COLOR
/// (no-color.org) and CLICOLOR=0 turn it off, CLICOLOR_FORCE on; else a
/// terminal that supports it.
fn stdout_color() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// Write a report file; an error names the flag that asked for it.
fn write_file(path: &Path, text: &str, flag: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("{flag}: cannot write {}", path.display()))
}

fn emit(text: &str, path: Option<&PathBuf>) -> Result<()> {
    match path {
        Some(path) => write_file(path, text, "--output"),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                other => other.context("cannot write to standard output"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `--help` is the reference (the README and docs/GUIDE.md point to it): every argument
    /// of every command says what it is, and an optional value says what
    /// happens without it (clap's `[default: …]`, or the text's own).
    #[test]
    fn every_argument_is_described_with_its_default() {
        fn walk(cmd: &clap::Command, path: &str, bad: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
                let optional_value = arg.get_action().takes_values() && !arg.is_required_set() && arg.get_default_values().is_empty();
                if help.trim().is_empty() {
                    bad.push(format!("{path} {id}: no description"));
                } else if optional_value && !["default", "instead of", "without it", "none"].iter().any(|w| help.to_lowercase().contains(w)) {
                    bad.push(format!("{path} {id}: no default said: {help}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), bad);
            }
        }
        let mut bad = Vec::new();
        walk(&Cli::command(), "auditor", &mut bad);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    /// The defaults `--help` shows are the library's own.
    #[test]
    fn the_defaults_help_shows_are_the_ones_used() {
        let Command::Audit { inputs, .. } = Cli::parse_from(["auditor", "audit", "x"]).command else { panic!("not audit") };
        assert_eq!(inputs.limits.limits(), Limits::default());
        let Command::Image { command: ImageCommand::Diff { forensic, .. } } =
            Cli::parse_from(["auditor", "image", "diff", "oci:a", "--upstream", "oci:b"]).command
        else {
            panic!("not image diff")
        };
        assert_eq!(forensic.cache_max_size, forensics::DEFAULT_CACHE_MAX_BYTES);
        assert_eq!(forensic.max_layer_size, auditor::image::limits::LayerLimits::default().max_size);
    }
}
