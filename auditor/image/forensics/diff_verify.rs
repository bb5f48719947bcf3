//! `auditor image diff PINNED --upstream REF` and `auditor image verify
//! REF`: open the images, index their layers (cache first, each blob read
//! once, in parallel), compare or verify, and report with the stable check
//! ids — `engine-patch` for what was changed in the image (files, wheels,
//! hooks, config, RECORD), `forbidden-env` for the config's Env,
//! `image-integrity` for blobs that do not match their digests and layer
//! entries that escape the root.

use super::cache::Cache;
use super::classify::Finder;
use super::content::ContentHash;
use super::dist::{self, Distribution, TextSource};
use super::index_build::{Indexed, LayerCounts, Trouble, index_images};
use super::node::Node;
use super::side::{Rules, Side};
use super::tree_diff;
use super::{config_diff, integrity, record};
use crate::checks::{CheckResult, Status, forbidden_env_in_image, suppress};
use crate::evidence::knobs::Catalog;
use crate::finding::{Finding, Severity};
use crate::image::limits::LayerLimits;
use crate::image::{Image, ImageError, ImageRef, OpenOptions, open};
use crate::policy::sections::EnginePatch;
use crate::policy::{Policy, Section};
use crate::provenance::Provenance;
use crate::report::{ImageInput, Input, Report};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use super::cache::{DEFAULT_MAX_BYTES as DEFAULT_CACHE_MAX_BYTES, default_dir as default_cache_dir};

/// Most findings listed per rule; the rest are counted in the summary.
const MAX_PER_RULE: usize = 200;

/// How forensics runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub open: OpenOptions,
    pub cache_dir: PathBuf,
    pub cache_max_bytes: u64,
    /// Layers walked at once.
    pub jobs: usize,
    /// What one layer may cost.
    pub limits: LayerLimits,
    /// Suppression expiry is judged at this date (`YYYY-MM-DD`).
    pub today: jiff::civil::Date,
    /// Read again the layers the cache holds (verified when they were
    /// cached, by an earlier run): their blobs are streamed, checked against
    /// their digests and indexed anew.
    pub verify_cached: bool,
}

/// Captured texts, read back from the layer cache.
struct CacheTexts<'a> {
    cache: &'a Cache,
    image: &'a Image,
}

impl TextSource for CacheTexts<'_> {
    fn text(&self, node: &Node) -> Option<Vec<u8>> {
        let at = node.text?;
        let layer = self.image.layers.get(usize::from(at.layer))?;
        self.cache.text(&layer.digest, at).ok()
    }
}

/// Open an image; a tampered manifest or config is a report, not an error.
fn open_or_report(reference: &ImageRef, options: &Options, policy: &Policy) -> Result<Result<Image, Report>, ImageError> {
    match open(reference, &options.open) {
        Ok(image) => Ok(Ok(image)),
        Err(ImageError::Tamper { reference: r, tamper }) => {
            let check = integrity::result(vec![integrity::finding(&r, &tamper)], 0, 0, 0);
            Ok(Err(Report::new(policy.name.clone(), vec![Input::Image(ImageInput::unresolved(&r))], vec![check], Vec::new(), Vec::new(), Vec::new())))
        }
        Err(e) => Err(e),
    }
}

fn open_cache(options: &Options, reference: &str, hash: ContentHash) -> Result<Cache, ImageError> {
    Cache::open(&options.cache_dir, options.cache_max_bytes, hash).map_err(|e| ImageError::Io {
        reference: reference.to_string(),
        context: "layer cache".into(),
        source: e,
    })
}

/// `image diff`: the pinned image against its upstream.
pub fn diff(pinned: &ImageRef, upstream: &ImageRef, options: &Options, policy: &Policy) -> Result<Report, ImageError> {
    let pinned = match open_or_report(pinned, options, policy)? {
        Ok(image) => image,
        Err(report) => return Ok(report),
    };
    let upstream = match open_or_report(upstream, options, policy)? {
        Ok(image) => image,
        Err(report) => return Ok(report),
    };
    let inputs = vec![Input::Image(ImageInput::of(&pinned)), Input::Image(ImageInput::of(&upstream))];
    let mut checks = Vec::new();
    let mut not_examined = other_platforms(&pinned, Some(&upstream), options);
    let mut counts = vec![counts_of(&pinned, "pinned"), counts_of(&upstream, "upstream")];
    let same_manifest = pinned.manifest_digest.is_some() && pinned.manifest_digest == upstream.manifest_digest;
    let same_content = pinned.config_digest == upstream.config_digest && pinned.layers.iter().map(|l| &l.digest).eq(upstream.layers.iter().map(|l| &l.digest));
    if let Some(settings) = policy.checks.engine_patch() {
        if same_manifest || same_content {
            let why = if same_manifest { "the same manifest digest" } else { "the same config and layer blobs" };
            checks.push(CheckResult::from_findings(
                "engine-patch",
                settings,
                Vec::new(),
                format!("the pinned image is the upstream image ({why}): no layer read"),
                String::new(),
            ));
            checks.push(integrity::result(Vec::new(), documents(&pinned) + documents(&upstream), 0, 0));
        } else {
            let config = config_diff::findings(settings, &pinned.reference, &pinned.config, Some(&upstream.config));
            // compared with each other, not with a RECORD: the faster hash
            let cache = open_cache(options, &pinned.reference, ContentHash::Blake3)?;
            let (indexed, trouble) =
                index_images(&[(&pinned, "pinned"), (&upstream, "upstream")], &cache, options.jobs, &options.limits, options.verify_cached);
            counts = indexed.iter().map(|i| i.counts.clone()).collect();
            let [p, u] = <[Indexed; 2]>::try_from(indexed)
                .map_err(|_| ImageError::Transport { reference: pinned.reference.clone(), detail: "indexing lost an image".into() })?;
            checks.push(compare(settings, (&pinned, &p), (&upstream, &u), &cache, config));
            checks.push(integrity_check(&[(&pinned, &p), (&upstream, &u)], &trouble));
            cache.evict();
            not_examined.extend(trouble.not_examined);
        }
    }
    finish(policy, options, &pinned, inputs, checks, counts, not_examined)
}

/// `image verify`: one image against its own RECORDs.
pub fn verify(reference: &ImageRef, options: &Options, policy: &Policy) -> Result<Report, ImageError> {
    let image = match open_or_report(reference, options, policy)? {
        Ok(image) => image,
        Err(report) => return Ok(report),
    };
    let inputs = vec![Input::Image(ImageInput::of(&image))];
    let mut checks = Vec::new();
    let mut not_examined = other_platforms(&image, None, options);
    let mut counts = vec![counts_of(&image, "image")];
    if let Some(settings) = policy.checks.engine_patch() {
        let rules = Rules::new(settings);
        // RECORD rows say sha256=
        let cache = open_cache(options, &image.reference, ContentHash::Sha256)?;
        let (indexed, trouble) = index_images(&[(&image, "image")], &cache, options.jobs, &options.limits, options.verify_cached);
        counts = indexed.iter().map(|i| i.counts.clone()).collect();
        let Some(indexed) = indexed.into_iter().next() else {
            return Err(ImageError::Transport { reference: image.reference.clone(), detail: "indexing lost the image".into() });
        };
        let config = config_diff::findings(settings, &image.reference, &image.config, None);
        let check = if indexed.missing.is_empty() {
            let texts = CacheTexts { cache: &cache, image: &image };
            let dists = dist::find(&indexed.fs, &texts);
            let verified = record::verify(&Side::new(&image, &indexed.fs, &dists, &texts), &rules);
            let b = &verified.bytecode;
            let checked = format!(
                "{} distribution(s), {} file(s) checked against their RECORD; {} without a RECORD; {} compiled file(s) listed in no RECORD; \
                 {} compiled file(s) of engine packages without a RECORD hash read by their headers: {} stale (CPython compiles the source instead), \
                 {} loaded with their source (bodies not compared: that takes compiling)",
                verified.distributions, verified.files_checked, verified.unrecorded_distributions, verified.unlisted_bytecode, b.read, b.stale, b.not_compared
            );
            engine_check(settings, config.into_iter().chain(verified.findings).collect(), &checked)
        } else {
            with_missing(engine_check(settings, config, "the config checked"), indexed.missing.len(), "the files were not checked")
        };
        checks.push(check);
        checks.push(integrity_check(&[(&image, &indexed)], &trouble));
        cache.evict();
        not_examined.extend(trouble.not_examined);
    }
    finish(policy, options, &image, inputs, checks, counts, not_examined)
}

/// The platforms of the pinned image's index that were not examined: with
/// no `--platform`, one is picked, and a host of another architecture
/// (GB200 and GH200 pull arm64) runs another image. A platform whose
/// manifest is the upstream's own, digest for digest, is the upstream's.
fn other_platforms(image: &Image, upstream: Option<&Image>, options: &Options) -> Vec<String> {
    if options.open.platform.is_some() {
        return Vec::new();
    }
    let picked = image.manifest_digest.as_deref();
    let mut out = Vec::new();
    for (platform, digest) in image.index_platforms.iter().filter(|(_, d)| Some(d.as_str()) != picked) {
        let why = match upstream.map(|u| u.index_platforms.iter().find(|(p, _)| p == platform)) {
            Some(Some((_, theirs))) if theirs == digest => continue,
            Some(Some((_, theirs))) => format!("its manifest {digest} is not the upstream's {platform} ({theirs})"),
            Some(None) => format!("manifest {digest}; the upstream has no {platform}"),
            None => format!("manifest {digest}"),
        };
        out.push(format!(
            "{}: platform {platform} of its index was not examined ({why}; only {} was): run again with --platform {platform}",
            image.reference, image.platform
        ));
    }
    out
}

/// The forbidden-env check on the image's config, suppressions, the report.
fn finish(
    policy: &Policy,
    options: &Options,
    image: &Image,
    inputs: Vec<Input>,
    mut checks: Vec<CheckResult>,
    counts: Vec<LayerCounts>,
    not_examined: Vec<String>,
) -> Result<Report, ImageError> {
    if let Some(settings) = policy.checks.forbidden_env() {
        checks.insert(0, forbidden_env_in_image(Catalog::embedded(), settings, &image.reference, &image.config.env));
    }
    suppress(&mut checks, policy, options.today);
    let mut report = Report::new(policy.name.clone(), inputs, checks, Vec::new(), Vec::new(), not_examined);
    report.layer_cache = Some(counts);
    Ok(report)
}

fn counts_of(image: &Image, role: &str) -> LayerCounts {
    LayerCounts { reference: image.reference.clone(), role: role.into(), layers: image.layers.len(), ..LayerCounts::default() }
}

/// Manifest and config: the blobs verified at open.
fn documents(image: &Image) -> usize {
    usize::from(image.manifest.is_some()) + 1
}

/// The engine-patch check of a diff: the config findings, then (when
/// every layer was read) distributions and file changes.
fn compare(
    settings: &Section<EnginePatch>,
    pinned: (&Image, &Indexed),
    upstream: (&Image, &Indexed),
    cache: &Cache,
    mut findings: Vec<Finding>,
) -> CheckResult {
    let missing = pinned.1.missing.len() + upstream.1.missing.len();
    if missing > 0 {
        return with_missing(engine_check(settings, findings, "the config compared"), missing, "the files were not compared");
    }
    let (pt, ut) = (CacheTexts { cache, image: pinned.0 }, CacheTexts { cache, image: upstream.0 });
    let (pd, ud): (Vec<Distribution>, Vec<Distribution>) = (dist::find(&pinned.1.fs, &pt), dist::find(&upstream.1.fs, &ut));
    let mut finder = Finder::new(Rules::new(settings), Side::new(upstream.0, &upstream.1.fs, &ud, &ut), Side::new(pinned.0, &pinned.1.fs, &pd, &pt));
    let changes = tree_diff::diff(&upstream.1.fs, &pinned.1.fs);
    findings.extend(finder.distributions());
    findings.extend(changes.iter().filter_map(|c| finder.classify(c)));
    let compared = format!("{} path(s) compared, {} changed", pinned.1.fs.entries.len().max(upstream.1.fs.entries.len()), changes.len());
    engine_check(settings, findings, &compared)
}

/// A check that could not see every layer: `error` unless it already
/// failed; the summary says what was not looked at either way.
fn with_missing(mut check: CheckResult, missing: usize, consequence: &str) -> CheckResult {
    if check.status != Status::Fail {
        check.status = Status::Error;
    }
    check.summary = format!("{missing} layer(s) not read in full (see not examined): {consequence}; {}", check.summary);
    check
}

/// The engine-patch check from its findings, at most [`MAX_PER_RULE`] per rule listed.
fn engine_check(settings: &Section<EnginePatch>, findings: Vec<Finding>, what: &str) -> CheckResult {
    let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept = Vec::new();
    let mut dropped = 0;
    for f in findings {
        let n = per_rule.entry(f.rule.clone()).or_default();
        *n += 1;
        if *n <= MAX_PER_RULE {
            kept.push(f);
        } else {
            dropped += 1;
        }
    }
    let count = |s: Severity| kept.iter().filter(|f| f.severity == s).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let more = if dropped > 0 { format!(" ({dropped} more finding(s) beyond {MAX_PER_RULE} per rule not listed)") } else { String::new() };
    let pass = if warnings > 0 { format!("no engine patch; {warnings} warning(s): {what}{more}") } else { format!("no engine patch: {what}{more}") };
    let also = if warnings > 0 { format!(" and {warnings} warning(s)") } else { String::new() };
    CheckResult::from_findings("engine-patch", settings, kept, pass, format!("{errors} engine patch error(s){also}: {what}{more}"))
}

/// Blob tampering found while reading layers, and hostile layer entries
/// (at most [`MAX_PER_RULE`] listed; the summary counts the rest).
fn integrity_check(images: &[(&Image, &Indexed)], trouble: &Trouble) -> CheckResult {
    let mut findings = trouble.findings.clone();
    let mut hostile = 0u64;
    for (image, indexed) in images {
        hostile += indexed.fs.hostile.len() as u64 + indexed.fs.unlisted;
        for h in &indexed.fs.hostile {
            if findings.len() - trouble.findings.len() >= MAX_PER_RULE {
                break;
            }
            let layer = image.layers.get(usize::from(h.layer)).map(|l| l.digest.clone());
            let evidence = Provenance::new(h.path.clone(), None, h.reason.clone()).in_layer(layer);
            let message = format!("{}: layer {} entry {}: {} (a crafted layer)", image.reference, h.layer, h.path, h.reason);
            findings.push(Finding::new(integrity::HOSTILE_RULE, Severity::Error, message, None, vec![evidence]).in_image("hostile-entry", Some(&h.path)));
        }
    }
    let read: usize = images.iter().map(|(i, x)| documents(i) + i.layers.len() - x.missing.len()).sum();
    let unread: usize = images.iter().map(|(_, x)| x.missing.len()).sum();
    let listed = (findings.len() - trouble.findings.len()) as u64;
    integrity::result(findings, read, unread, hostile - listed)
}
