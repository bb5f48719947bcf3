//! `upstream-image`: the image of a job comes from its framework's upstream
//! organisation (`lmsysorg/` for SGLang, `vllm/` for vLLM, NVIDIA's registry
//! for TensorRT-LLM, ...; `#` written for `/` means the same; digest pins
//! are fine). A framework is judged by the engine it names: `dynamo-sglang`,
//! `sglang-disagg` and `llmd-vllm` run SGLang or vLLM. A vendor fork fails
//! on an established SKU unless the policy lists an exception with a
//! reason — for the frameworks the benchmark's rule binds (InferenceX Check
//! 6(a): vLLM and SGLang entries). For the others, and for a framework the
//! policy does not know, an image from elsewhere is a warning naming its
//! registry: seen by a reviewer, not a violation of a rule that is not there.

use super::{CheckResult, Context};
use crate::evidence::meta::Started;
pub use crate::evidence::meta::normalise_image as normalise;
use crate::finding::{Finding, Severity};
use crate::jobs::JobKind;
use crate::policy::Section;
use crate::policy::sections::UpstreamImage;
use crate::provenance::Provenance;

const ID: &str = "upstream-image";

pub const RULES: &[(&str, &str)] = &[
    ("upstream-image/not-upstream", "the image is not from the framework's upstream organisation on an established SKU"),
    ("upstream-image/exception", "a non-upstream image allowed by a policy exception"),
    ("upstream-image/upstream", "the image comes from the framework's upstream organisation"),
    ("upstream-image/new-hardware", "a non-upstream image on hardware that is not an established SKU: needs a documented exception"),
    ("upstream-image/unknown-framework", "a framework whose upstream organisation the policy does not name (a warning naming the registry)"),
    (
        "upstream-image/runner-image",
        "the runner the job is scheduled on starts another image than the entry pins (an IMAGE rewrite, a swapped squash file, another import)",
    ),
    (
        "upstream-image/not-bound",
        "an image from outside the upstream organisation of a framework the benchmark's rule does not bind (a warning naming the registry)",
    ),
];

/// Whether `framework` runs the engine a policy entry names: the name
/// itself or one of its dash-separated parts (`dynamo-trt` runs `trt`).
fn runs(framework: &str, name: &str) -> bool {
    framework.eq_ignore_ascii_case(name) || framework.split('-').any(|part| part.eq_ignore_ascii_case(name))
}

/// Whether a normalised image is under an upstream location: `org` (an
/// organisation or registry path, `nvcr.io/nvidia`), or `org/repo*` (any
/// repository whose name starts so, `rocm/atom*`).
fn under(normalised: &str, org: &str) -> bool {
    let org = normalise(org.trim_end_matches('/'));
    match org.strip_suffix('*') {
        Some(prefix) => normalised.starts_with(prefix),
        None => normalised.starts_with(&format!("{org}/")),
    }
}

/// The registry (and organisation) part of a normalised image: `ghcr.io/semianalysisai`, `rocm`.
fn registry(normalised: &str) -> &str {
    let path = &normalised[..normalised.find([':', '@']).unwrap_or(normalised.len())];
    path.rsplit_once('/').map_or(path, |(registry, _)| registry)
}

/// The SKU of a job: its `hw`, else the runner label before the first `-`/`_`.
fn sku_of(hw: Option<&str>, runner: Option<&str>) -> Option<String> {
    let raw = hw.or(runner)?;
    let raw = raw.strip_prefix("cluster:").unwrap_or(raw);
    raw.split(['-', '_']).next().map(str::to_ascii_lowercase)
}

pub fn run(ctx: &Context, settings: &Section<UpstreamImage>) -> CheckResult {
    let mut findings = Vec::new();
    let mut judged = 0;
    for job in ctx.jobs.iter().filter(|j| j.job.kind != JobKind::RunLevel) {
        let meta = &job.job.meta;
        let (Some(image), Some(framework)) = (meta.image.as_deref(), meta.framework.as_deref()) else { continue };
        judged += 1;
        findings.extend(started_elsewhere(job, image));
        let normalised = normalise(image);
        // The file that recorded the image (AgentX aggregate, fixed-seq agg, meta_env, a master-config entry).
        let recorded = job.files.iter().find_map(|f| f.metadata.as_ref().filter(|m| m.meta.image.as_deref() == Some(image)).map(|m| (f, m)));
        let evidence: Vec<Provenance> = recorded
            .map(|(f, m)| {
                m.image_at.clone().unwrap_or_else(|| Provenance::new(f.path.clone(), None, format!("\"image\": \"{image}\"")).in_artifact(f.artifact.clone()))
            })
            .into_iter()
            .collect();
        let Some(rule) = settings.upstream_orgs.iter().find(|r| r.frameworks.iter().any(|f| runs(framework, f))) else {
            let known: Vec<&str> = settings.upstream_orgs.iter().flat_map(|r| r.frameworks.iter().map(String::as_str)).collect();
            findings.push(Finding::new(
                "upstream-image/unknown-framework",
                Severity::Warning,
                format!(
                    "framework {framework:?} (image {image}, registry {}) names no engine the policy knows ({}): the upstream-image rule does not bind it; a reviewer judges the image",
                    registry(&normalised),
                    known.join(", ")
                ),
                job.id(),
                evidence,
            ));
            continue;
        };
        if rule.orgs.iter().any(|org| under(&normalised, org)) {
            findings.push(Finding::new(
                "upstream-image/upstream",
                Severity::Info,
                format!("{image} is from {}'s upstream organisation", framework),
                job.id(),
                evidence,
            ));
            continue;
        }
        if !rule.binding {
            let expected = rule.orgs.iter().map(|o| format!("{o}/")).collect::<Vec<_>>().join(" or ");
            findings.push(Finding::new(
                "upstream-image/not-bound",
                Severity::Warning,
                format!(
                    "{image} (registry {}) is not from {expected}, {framework}'s upstream; the benchmark's upstream-image rule binds vLLM and SGLang entries only, so a reviewer judges it",
                    registry(&normalised)
                ),
                job.id(),
                evidence,
            ));
            continue;
        }
        let sku = sku_of(meta.hw.as_deref(), meta.runner.as_deref());
        if let Some(exception) = settings
            .image_exceptions
            .iter()
            .find(|e| normalised.starts_with(&normalise(&e.image)) && e.sku.as_deref().is_none_or(|s| Some(s.to_ascii_lowercase()) == sku))
        {
            findings.push(Finding::new(
                "upstream-image/exception",
                Severity::Info,
                format!("{image} is not upstream for {framework}; allowed by the policy: {}", exception.reason),
                job.id(),
                evidence,
            ));
            continue;
        }
        let established = sku.as_ref().is_some_and(|s| settings.established_skus.iter().any(|e| e.eq_ignore_ascii_case(s)));
        let expected = rule.orgs.iter().map(|o| format!("{o}/")).collect::<Vec<_>>().join(" or ");
        if established || sku.is_none() {
            findings.push(Finding::new(
                "upstream-image/not-upstream",
                Severity::Error,
                format!(
                    "{image} is not from {expected} (framework {framework}, SKU {}): established SKUs must run the upstream image",
                    sku.unwrap_or_else(|| "unknown".into())
                ),
                job.id(),
                evidence,
            ));
        } else {
            findings.push(Finding::new(
                "upstream-image/new-hardware",
                Severity::Warning,
                format!(
                    "{image} is not from {expected}, on {} which is not an established SKU: the sign-off must document the exception",
                    sku.unwrap_or_default()
                ),
                job.id(),
                evidence,
            ));
        }
    }
    if judged == 0 {
        return CheckResult::not_applicable(ID, settings, "no job records its image and framework");
    }
    CheckResult::from_findings(
        ID,
        settings,
        findings,
        format!("{judged} job(s) run their framework's upstream image"),
        "a job runs an image that is not upstream".to_string(),
    )
}

/// The runner of an entry that starts another image than the one it pins:
/// the job runs that image, whichever the entry names.
/// One finding per runner and image: the places it is written and mapped.
fn started_elsewhere(job: &crate::facts::AuditedJob, image: &str) -> Vec<Finding> {
    let started = job.files.iter().filter_map(|f| f.metadata.as_ref()).flat_map(|m| &m.started);
    let mut by_cause: Vec<((&str, &str), &str, Vec<Provenance>)> = Vec::new();
    for s in started {
        let Started::Other { image: other, how } = &s.started else { continue };
        let key = (s.runner.as_str(), other.as_str());
        match by_cause.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, at)) => at.extend(s.at.iter().filter(|p| !at.contains(p)).cloned().collect::<Vec<_>>()),
            None => by_cause.push((key, how, s.at.clone())),
        }
    }
    by_cause
        .into_iter()
        .map(|((runner, other), how, at)| {
            Finding::new(
                "upstream-image/runner-image",
                Severity::Error,
                format!("{runner} starts {other}, not {image} which the entry pins: {how}; the job runs an image the upstream-image rule did not judge"),
                job.id(),
                at,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_normalisation() {
        assert_eq!(normalise("docker.io/LMSysOrg/sglang:v0.5.16-CU130"), "lmsysorg/sglang:v0.5.16-CU130");
        assert_eq!(normalise("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14"), "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14");
        assert_eq!(normalise("vllm/vllm-openai@sha256:abc"), "vllm/vllm-openai@sha256:abc");
        assert_eq!(sku_of(None, Some("cluster:gb300-nv_0")).as_deref(), Some("gb300"));
        assert_eq!(sku_of(Some("h200"), Some("x")).as_deref(), Some("h200"));
    }

    #[test]
    fn frameworks_and_upstream_locations() {
        assert!(runs("dynamo-trt", "trt") && runs("sglang-disagg", "sglang") && runs("llmd-vllm", "vllm") && runs("atom", "atom"));
        assert!(!runs("atom-disagg", "sglang") && !runs("trtx", "trt"));
        assert!(under(&normalise("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14"), "nvcr.io/nvidia"));
        assert!(under(&normalise("rocm/atom-dev:nightly"), "rocm/atom*") && !under(&normalise("rocm/sgl-dev:x"), "rocm/atom*"));
        assert!(!under(&normalise("lmsysorgx/sglang:v1"), "lmsysorg"));
        assert_eq!(registry(&normalise("ghcr.io#semianalysisai/trtllm-deepseek-v4:1")), "ghcr.io/semianalysisai");
        assert_eq!(registry(&normalise("rocm/sgl-dev@sha256:ab")), "rocm");
    }
}
