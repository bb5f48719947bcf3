//! What `auditor rules` says about every rule a report can cite: the
//! policy's checks (their title, the rules their findings use, and the
//! policy's "to fix" text) and the signature packs' rules, so a reviewer
//! who meets a rule id in a report can read what it means and how to fix it.

use crate::checks::REGISTRY;
use crate::image::forensics::INTEGRITY_RULES;
use crate::policy::Policy;
use crate::signatures::{Engine, describe, selftest};
use std::fmt::Write;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RulesError {
    #[error("unknown rule {0:?}; `auditor rules list` shows them all")]
    Unknown(String),
    #[error("check {check} is not configured by policy {policy:?}")]
    NotConfigured { check: String, policy: String },
}

/// Every check of this build and the rules its findings use: the bundle
/// checks of the registry, then the image checks.
fn checks() -> impl Iterator<Item = (&'static str, &'static [(&'static str, &'static str)])> {
    REGISTRY.iter().map(|c| (c.id, c.rules)).chain([("image-integrity", INTEGRITY_RULES)])
}

/// Every check of this build with its state under `policy` and its rules,
/// then the signature checks of `engine`, one line each.
pub fn list(policy: &Policy, engine: &Engine) -> String {
    let mut out = String::new();
    for (id, rules) in checks() {
        let state = match policy.checks.about(id).filter(|c| c.enabled) {
            Some(c) => c.title,
            None => "(disabled by the policy)",
        };
        let _ = writeln!(out, "{id}  {state}");
        for (rule, text) in rules {
            let _ = writeln!(out, "  {rule}  {text}");
        }
    }
    out.push_str(&describe::list(engine));
    out
}

/// One rule or check in full: a signature rule with its examples; a check
/// with the policy's "to fix" text, then the signature rules that feed it.
pub fn explain(policy: &Policy, engine: &Engine, id: &str) -> Result<String, RulesError> {
    if let Some(rule) = engine.rule(id) {
        return Ok(describe::explain_rule(rule));
    }
    match (explain_check(policy, id), describe::explain_check(engine, id)) {
        (Ok(check), Some(signatures)) => Ok(format!("{check}\n{signatures}")),
        (Ok(check), None) => Ok(check),
        (Err(_), Some(signatures)) => Ok(signatures),
        (Err(e), _) => Err(e),
    }
}

fn explain_check(policy: &Policy, id: &str) -> Result<String, RulesError> {
    let unknown = || RulesError::Unknown(id.to_string());
    let check_id = id.split('/').next().unwrap_or(id);
    let (_, rules) = checks().find(|(c, _)| *c == check_id).ok_or_else(unknown)?;
    let rule = rules.iter().find(|(r, _)| *r == id);
    if id.contains('/') && rule.is_none() {
        return Err(unknown());
    }
    let about = policy.checks.about(check_id).ok_or_else(|| RulesError::NotConfigured { check: check_id.to_string(), policy: policy.name.clone() })?;
    let mut out = format!("{check_id}: {}\n", about.title);
    if let Some((rule, text)) = rule {
        let _ = writeln!(out, "rule {rule}: {text}");
    }
    let _ = writeln!(out, "{}", about.explain.trim_end());
    let forbidden = if check_id == "forbidden-env" { policy.checks.forbidden_env().map(|s| s.forbid.as_slice()).unwrap_or_default() } else { &[] };
    if !forbidden.is_empty() {
        out.push_str("\nForbidden by this policy:\n");
        for var in forbidden {
            let when = format!("{:?}", var.when).to_lowercase();
            let _ = writeln!(out, "  {} (when {when}): {}", var.name, var.reason);
        }
    }
    Ok(out)
}

/// `rules test`: every example of every signature rule through the real
/// engine. Returns the text to print and whether every example behaved.
pub fn test(engine: &Engine) -> (String, bool) {
    let (failures, count) = selftest::run(engine);
    let mut text = String::new();
    for failure in &failures {
        let _ = writeln!(text, "FAIL {failure}");
    }
    let rules = engine.rules().len();
    let _ = writeln!(text, "{} passed, {} failed ({rules} rules, {})", count - failures.len(), failures.len(), engine.source());
    (text, failures.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_and_rule_id_a_report_can_cite_is_explained() {
        let (policy, engine) = (Policy::embedded(), Engine::embedded().unwrap());
        for (id, rules) in checks() {
            let text = explain(&policy, &engine, id).unwrap();
            assert!(text.starts_with(&format!("{id}: ")) && text.contains("To fix"), "{text}");
            for (rule, _) in rules {
                assert!(explain(&policy, &engine, rule).unwrap().contains(&format!("rule {rule}:")));
            }
        }
        assert_eq!(checks().count(), crate::finding::CHECK_IDS.len(), "every stable check id is listed");
        assert!(explain(&policy, &engine, "forbidden-env").unwrap().contains("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE (when enabled)"));
        assert_eq!(explain(&policy, &engine, "forbidden-env/nope"), Err(RulesError::Unknown("forbidden-env/nope".to_string())));
        let listed = list(&policy, &engine);
        assert!(REGISTRY.iter().all(|c| listed.contains(c.id)) && listed.contains("engine-patch/git-apply"), "{listed}");
    }

    #[test]
    fn the_embedded_packs_pass_their_own_examples() {
        let (text, ok) = test(&Engine::embedded().unwrap());
        assert!(ok && text.contains(" 0 failed"), "{text}");
    }
}
