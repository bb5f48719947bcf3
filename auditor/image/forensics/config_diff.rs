//! The image config as `engine-patch` evidence: what the pinned image runs
//! with that upstream does not (Env, Entrypoint, Cmd, WorkingDir, User,
//! Labels), and injection variables (`PYTHONPATH`, `LD_PRELOAD`,
//! `PIP_INDEX_URL`, ...) that load other code than the shipped engine.
//! Without an upstream (`image verify`) only the injection variables are
//! reported. Forbidden engine variables are the `forbidden-env` check's.

use super::classify::Rules;
use super::severity::{self, Origin};
use crate::finding::{Finding, Severity};
use crate::image::ImageConfig;
use crate::provenance::{Provenance, clip, is_secret_name, redact};
use std::collections::{BTreeMap, BTreeSet};

/// Engine variable prefixes: a changed value is a warning, other variables info.
const ENGINE_PREFIXES: &[&str] =
    &["SGLANG_", "SGL_", "VLLM_", "TLLM_", "TRTLLM_", "TRT_LLM_", "ATOM_", "AITER_", "FLASHINFER_", "NCCL_", "TORCH_", "PYTORCH_", "CUDA_", "HIP_", "ROCM_"];

/// `NAME -> value`, the last assignment winning, as a container sees it.
fn env_map(config: &ImageConfig) -> BTreeMap<&str, &str> {
    config.env.iter().filter_map(|e| e.split_once('=')).collect()
}

fn finding(reference: &str, rule: &str, severity: Severity, message: String, text: String) -> Finding {
    let evidence = Provenance::new(reference.to_string(), None, clip(&redact(&text)));
    Finding::new(rule, severity, redact(&message), None, vec![evidence]).in_image("config", None)
}

/// Config findings for `pinned` (against `upstream` when there is one).
pub(super) fn findings(rules: &Rules, reference: &str, pinned: &ImageConfig, upstream: Option<&ImageConfig>) -> Vec<Finding> {
    let mut out = Vec::new();
    let new = env_map(pinned);
    let Some(upstream) = upstream else {
        for (name, value) in new.iter().filter(|(n, _)| rules.injection(n)) {
            out.push(finding(
                reference,
                "engine-patch/injection-env",
                severity::injection_env(Origin::Unattributed),
                format!("the image config sets {name}={value}: it loads code or packages from outside the shipped engine"),
                format!("Env {name}={value}"),
            ));
        }
        return out;
    };
    let old = env_map(upstream);
    let names: BTreeSet<&str> = new.keys().chain(old.keys()).copied().collect();
    for name in names {
        let (was, now) = (old.get(name), new.get(name));
        if was == now {
            continue;
        }
        let (was, now) = if is_secret_name(name) { (was.map(|_| &"<redacted>"), now.map(|_| &"<redacted>")) } else { (was, now) };
        let change = match (was, now) {
            (None, Some(v)) => format!("{name}={v} added"),
            (Some(w), Some(v)) => format!("{name} changed from {w:?} to {v:?}"),
            (Some(w), None) => format!("{name}={w} removed"),
            (None, None) => continue,
        };
        let text = format!("Env {name}={}", now.or(was).copied().unwrap_or_default());
        if rules.injection(name) && now.is_some() {
            out.push(finding(
                reference,
                "engine-patch/injection-env",
                severity::injection_env(Origin::Changed),
                format!("the pinned image's config: {change} — it loads code or packages from outside the shipped engine"),
                text,
            ));
        } else {
            let severity = if ENGINE_PREFIXES.iter().any(|p| name.starts_with(p)) { Severity::Warning } else { Severity::Info };
            out.push(finding(reference, "engine-patch/config", severity, format!("the pinned image's config: {change}"), text));
        }
    }
    let fields: [(&str, String, String, Severity); 4] = [
        ("Entrypoint", format!("{:?}", upstream.entrypoint), format!("{:?}", pinned.entrypoint), Severity::Warning),
        ("Cmd", format!("{:?}", upstream.cmd), format!("{:?}", pinned.cmd), Severity::Warning),
        ("WorkingDir", upstream.working_dir.clone(), pinned.working_dir.clone(), Severity::Info),
        ("User", upstream.user.clone(), pinned.user.clone(), Severity::Info),
    ];
    for (field, was, now, severity) in fields {
        if was != now {
            out.push(finding(
                reference,
                "engine-patch/config",
                severity,
                format!("the pinned image's config: {field} changed from {was} to {now}"),
                format!("{field} {now}"),
            ));
        }
    }
    if pinned.labels != upstream.labels {
        let changed: Vec<&str> = pinned
            .labels
            .keys()
            .chain(upstream.labels.keys())
            .filter(|k| pinned.labels.get(*k) != upstream.labels.get(*k))
            .map(String::as_str)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        out.push(finding(
            reference,
            "engine-patch/config",
            Severity::Info,
            format!("the pinned image's config: labels changed: {}", changed.join(", ")),
            format!("Labels {}", changed.join(", ")),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_and_run_config_changes() {
        let policy = crate::policy::Policy::embedded();
        let rules = Rules::new(policy.checks.engine_patch().unwrap());
        let up = ImageConfig { env: vec!["PATH=/bin".into(), "A=1".into(), "API_KEY=k1".into()], cmd: vec!["/bin/sh".into()], ..ImageConfig::default() };
        let pin = ImageConfig {
            env: vec!["PATH=/bin".into(), "A=2".into(), "PYTHONPATH=/opt/x".into(), "SGLANG_X=1".into(), "HF_TOKEN=secret".into(), "API_KEY=k2".into()],
            cmd: vec!["python3".into()],
            ..ImageConfig::default()
        };
        let f = findings(&rules, "img", &pin, Some(&up));
        let rules_and_levels: Vec<(&str, Severity)> = f.iter().map(|f| (f.rule.as_str(), f.severity)).collect();
        assert_eq!(
            rules_and_levels,
            [
                ("engine-patch/config", Severity::Info),
                ("engine-patch/config", Severity::Info),
                ("engine-patch/config", Severity::Info),
                ("engine-patch/injection-env", Severity::Error),
                ("engine-patch/config", Severity::Warning),
                ("engine-patch/config", Severity::Warning),
            ]
        );
        assert!(
            f.iter().all(|f| !f.message.contains("secret") && !f.message.contains("k1") && !f.message.contains("k2") && f.kind.as_deref() == Some("config"))
        );
        let alone = findings(&rules, "img", &pin, None);
        assert_eq!(alone.len(), 1);
        assert_eq!(alone[0].severity, Severity::Warning);
    }
}
