//! What `auditor rules` says about every rule a report can cite: the
//! policy's checks (their title, the rules their findings use, and the
//! policy's "to fix" text) and the signature packs' rules, so a reviewer
//! who meets a rule id in a report can read what it means and how to fix it.

use crate::checks::REGISTRY;
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

/// Every check of this build with its state under `policy` and its rules,
/// then the signature checks of `engine`, one line each.
pub fn list(policy: &Policy, engine: &Engine) -> String {
    let mut out = String::new();
    for info in REGISTRY {
        let state = match policy.check(info.id) {
            Some(c) => c.title.clone(),
            None => "(disabled by the policy)".to_string(),
        };
        let _ = writeln!(out, "{}  {state}", info.id);
        for (rule, text) in info.rules {
            let _ = writeln!(out, "  {rule}  {text}");
        }
    }
    out.push_str(&describe::list(engine));
    out
}

/// One rule or check in full: a signature rule with its examples, a
/// signature check with its rules, or a policy check with its "to fix" text.
pub fn explain(policy: &Policy, engine: &Engine, id: &str) -> Result<String, RulesError> {
    if let Some(rule) = engine.rule(id) {
        return Ok(describe::explain_rule(rule));
    }
    if let Some(check) = describe::explain_check(engine, id) {
        return Ok(check);
    }
    explain_check(policy, id)
}

fn explain_check(policy: &Policy, id: &str) -> Result<String, RulesError> {
    let unknown = || RulesError::Unknown(id.to_string());
    let check_id = id.split('/').next().unwrap_or(id);
    let info = REGISTRY.iter().find(|c| c.id == check_id).ok_or_else(unknown)?;
    let rule = info.rules.iter().find(|(r, _)| *r == id);
    if id.contains('/') && rule.is_none() {
        return Err(unknown());
    }
    let settings = policy.checks.get(check_id).ok_or_else(|| RulesError::NotConfigured { check: check_id.to_string(), policy: policy.name.clone() })?;
    let mut out = format!("{check_id}: {}\n", settings.title);
    if let Some((rule, text)) = rule {
        let _ = writeln!(out, "rule {rule}: {text}");
    }
    let _ = writeln!(out, "{}", settings.explain.trim_end());
    if !settings.forbid.is_empty() {
        out.push_str("\nForbidden by this policy:\n");
        for var in &settings.forbid {
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
        for info in REGISTRY {
            let text = explain(&policy, &engine, info.id).unwrap();
            assert!(text.starts_with(&format!("{}: ", info.id)), "{text}");
            for (rule, _) in info.rules {
                assert!(explain(&policy, &engine, rule).unwrap().contains(&format!("rule {rule}:")));
            }
        }
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
