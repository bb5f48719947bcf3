//! The image config as `engine-patch` evidence: what the pinned image runs
//! with that upstream does not (Env, Entrypoint, Cmd, WorkingDir, User,
//! Labels), and injection variables (`PYTHONPATH`, `LD_PRELOAD`,
//! `PIP_INDEX_URL`, ...) that load other code than the shipped engine.
//! Without an upstream (`image verify`) only the injection variables are
//! reported. Forbidden engine variables are the `forbidden-env` check's.

use super::severity::{self, Origin};
use super::side::Rules;
use crate::bundle::kind::FileKind;
use crate::checks::engine_patch;
use crate::evidence::Extractor;
use crate::evidence::shell::words::quoted;
use crate::finding::{ConfigChange, Finding, Severity};
use crate::image::ImageConfig;
use crate::policy::sections::{EnginePatch, Section};
use crate::provenance::{Provenance, clip, is_secret_name, redact};
use std::collections::{BTreeMap, BTreeSet};

/// Engine variable prefixes: a changed value is a warning, other variables info.
const ENGINE_PREFIXES: &[&str] =
    &["SGLANG_", "SGL_", "VLLM_", "TLLM_", "TRTLLM_", "TRT_LLM_", "ATOM_", "AITER_", "FLASHINFER_", "NCCL_", "TORCH_", "PYTORCH_", "CUDA_", "HIP_", "ROCM_"];

/// `NAME -> value`, the last assignment winning, as a container sees it.
fn env_map(config: &ImageConfig) -> BTreeMap<&str, &str> {
    config.env.iter().filter_map(|e| e.split_once('=')).collect()
}

/// A config finding about `setting`, valued `upstream` and `pinned` (as shown: secrets already hidden).
fn finding(reference: &str, rule: &str, severity: Severity, message: String, text: String, change: (&str, Option<&str>, Option<&str>)) -> Finding {
    let evidence = Provenance::new(reference.to_string(), None, clip(&redact(&text)));
    let mut f = Finding::new(rule, severity, redact(&message), None, vec![evidence]).in_image("config", None);
    let (setting, upstream, pinned) = change;
    f.config_change = Some(ConfigChange { setting: setting.to_string(), upstream: upstream.map(redact), pinned: pinned.map(redact) });
    f
}

/// The labels named in `keys`, `key=value` per line, as `all` has them.
fn labels(all: &BTreeMap<String, String>, keys: &[&str]) -> String {
    keys.iter().filter_map(|k| all.get(*k).map(|v| format!("{k}={v}"))).collect::<Vec<_>>().join("\n")
}

/// `Entrypoint [..] Cmd [..]` as the evidence shows it.
fn start_of(config: &ImageConfig) -> String {
    format!("Entrypoint {:?} Cmd {:?}", config.entrypoint, config.cmd)
}

/// What the container runs at start, `Entrypoint` then `Cmd`, read as a
/// script line: what it does to the engine (an `sh -c 'sed -i ... && exec
/// "$@"'`) is judged by the same engine-patch rules as a recipe's script,
/// although no file of the image changes.
fn start_command(settings: &Section<EnginePatch>, reference: &str, config: &ImageConfig, upstream: Option<&ImageConfig>) -> Vec<Finding> {
    let words: Vec<&String> = config.entrypoint.iter().chain(&config.cmd).collect();
    if words.is_empty() {
        return Vec::new();
    }
    let line = words.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(" ");
    let (evidence, _) = Extractor::new(64 << 10).extract("Entrypoint", FileKind::Script, &mut line.as_bytes());
    let shown = start_of(config);
    let was = upstream.map(start_of);
    evidence
        .actions
        .iter()
        .filter_map(|action| engine_patch::action_finding(settings, action))
        .filter(|f| f.severity != Severity::Info)
        .map(|f| {
            let message = format!("the image's Entrypoint/Cmd, run at every start: {}", f.message);
            finding(reference, &f.rule, f.severity, message, shown.clone(), ("Entrypoint/Cmd", was.as_deref(), Some(&shown)))
        })
        .collect()
}

/// Config findings for `pinned` (against `upstream` when there is one).
pub(super) fn findings(settings: &Section<EnginePatch>, reference: &str, pinned: &ImageConfig, upstream: Option<&ImageConfig>) -> Vec<Finding> {
    let rules = Rules::new(settings);
    let mut out = start_command(settings, reference, pinned, upstream);
    let new = env_map(pinned);
    let Some(upstream) = upstream else {
        for (name, value) in new.iter().filter(|(n, _)| rules.injection(n)) {
            out.push(finding(
                reference,
                "engine-patch/injection-env",
                severity::injection_env(Origin::Unattributed),
                format!("the image config sets {name}={value}: it loads code or packages from outside the shipped engine"),
                format!("Env {name}={value}"),
                (&format!("Env {name}"), None, Some(value)),
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
        let setting = format!("Env {name}");
        let values = (setting.as_str(), was.copied(), now.copied());
        if rules.injection(name) && now.is_some() {
            out.push(finding(
                reference,
                "engine-patch/injection-env",
                severity::injection_env(Origin::Changed),
                format!("the pinned image's config: {change} — it loads code or packages from outside the shipped engine"),
                text,
                values,
            ));
        } else {
            let severity = if ENGINE_PREFIXES.iter().any(|p| name.starts_with(p)) { Severity::Warning } else { Severity::Info };
            out.push(finding(reference, "engine-patch/config", severity, format!("the pinned image's config: {change}"), text, values));
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
                (field, Some(&was), Some(&now)),
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
            ("Labels", Some(&labels(&upstream.labels, &changed)), Some(&labels(&pinned.labels, &changed))),
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
        let rules = policy.checks.engine_patch().unwrap();
        let up = ImageConfig { env: vec!["PATH=/bin".into(), "A=1".into(), "API_KEY=k1".into()], cmd: vec!["/bin/sh".into()], ..ImageConfig::default() };
        let pin = ImageConfig {
            env: vec!["PATH=/bin".into(), "A=2".into(), "PYTHONPATH=/opt/x".into(), "SGLANG_X=1".into(), "HF_TOKEN=secret".into(), "API_KEY=k2".into()],
            cmd: vec!["python3".into()],
            ..ImageConfig::default()
        };
        let f = findings(rules, "img", &pin, Some(&up));
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
        let alone = findings(rules, "img", &pin, None);
        assert_eq!(alone.len(), 1);
        assert_eq!(alone[0].severity, Severity::Warning);
    }

    /// An Entrypoint that edits the engine and then runs the command is an
    /// engine patch, in diff and verify alike; one that only runs it is not.
    #[test]
    fn an_entrypoint_that_edits_the_engine_is_an_engine_patch() {
        let policy = crate::policy::Policy::embedded();
        let settings = policy.checks.engine_patch().unwrap();
        let script = "sed -i 's/topk = 1/topk = 4/' /usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py && exec \"$@\"";
        let bent =
            ImageConfig { entrypoint: vec!["/bin/sh".into(), "-c".into(), script.into(), "sh".into()], cmd: vec!["python3".into()], ..ImageConfig::default() };
        let honest = ImageConfig { entrypoint: vec!["/bin/sh".into(), "-c".into(), "exec \"$@\"".into(), "sh".into()], ..bent.clone() };
        for upstream in [None, Some(&honest)] {
            let f = findings(settings, "img", &bent, upstream);
            let errors: Vec<&Finding> = f.iter().filter(|f| f.severity == Severity::Error).collect();
            assert!(errors.len() == 1 && errors[0].message.contains("server_args.py"), "{f:#?}");
        }
        assert!(findings(settings, "img", &honest, None).iter().all(|f| f.severity != Severity::Error));
    }
}
