//! Policies: which checks run, what they forbid, and the text a reviewer
//! reads about each. The `inferencex` policy is embedded; `--policy FILE`
//! replaces it, or extends it with `extends = "inferencex"`.

pub mod pattern;
pub mod sections;
pub mod suppressions;

use pattern::PathPatterns;
use serde::Deserialize;
use std::path::Path;
use thiserror::Error;

pub use sections::{About, Checks, Section};

/// The default policy shipped with the binary.
pub const EMBEDDED: &str = include_str!("../../policies/inferencex.toml");

#[derive(Debug, Error)]
pub enum PolicyError {
    #[error("{path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: invalid policy: {message}")]
    Invalid { path: String, message: String },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Start from a named built-in policy and replace the checks this file lists.
    #[serde(default)]
    pub extends: Option<String>,
    #[serde(default)]
    pub checks: Checks,
    /// Accepted findings, each with a reason, an owner and an expiry.
    #[serde(default)]
    pub suppressions: Vec<suppressions::Suppression>,
    /// Paths of a checkout that are not part of any submission (experiments,
    /// tooling): listed as skipped with the reason, never judged.
    #[serde(default)]
    pub outside: Vec<Outside>,
}

/// Paths of a checkout outside what submissions run, with the reason.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Outside {
    /// Patterns: an exact path, `DIR/**`, or `*` within one component.
    pub paths: PathPatterns,
    pub reason: String,
}

impl Outside {
    /// Whether `path` (relative to the checkout) is one of these paths.
    pub fn covers(&self, path: &str) -> bool {
        self.paths.is_match(path)
    }
}

/// The upstream organisations of some frameworks (`sglang` matches
/// `dynamo-sglang` and `sglang-disagg` too).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamOrgs {
    pub frameworks: Vec<String>,
    pub orgs: Vec<String>,
    /// Whether the benchmark's rule binds these frameworks (InferenceX
    /// Check 6(a) binds vLLM and SGLang entries only): a non-upstream image
    /// of a framework it does not bind is a warning that names the
    /// registry, not an error.
    #[serde(default = "bound")]
    pub binding: bool,
}

fn bound() -> bool {
    true
}

/// An allowed non-upstream image (prefix match after normalisation).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageException {
    pub image: String,
    #[serde(default)]
    pub sku: Option<String>,
    pub reason: String,
}

/// A golden-table selection exception: for these model prefixes and this
/// method, use `table` (optionally only when the draft path contains a
/// fragment, or for one vLLM `draft_sample_method`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveRule {
    pub prefixes: Vec<String>,
    pub method: String,
    pub table: String,
    #[serde(default)]
    pub draft_contains: Option<String>,
    #[serde(default)]
    pub draft_sample_method: Option<String>,
}

/// When a forbidden variable fails a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ForbidWhen {
    /// The engine reads the effective value as true.
    Enabled,
    /// Any value at all.
    Set,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForbiddenVar {
    pub name: String,
    pub when: ForbidWhen,
    /// Why it is forbidden, quoted in findings.
    pub reason: String,
}

impl Policy {
    /// The embedded `inferencex` policy.
    pub fn embedded() -> Policy {
        Policy::parse(EMBEDDED, "policies/inferencex.toml").expect("embedded policy is valid")
    }

    pub fn parse(text: &str, path: &str) -> Result<Policy, PolicyError> {
        let policy: Policy = toml::from_str(text).map_err(|e| PolicyError::Invalid { path: path.to_string(), message: e.to_string() })?;
        for s in &policy.suppressions {
            s.validate().map_err(|e| PolicyError::Invalid { path: path.to_string(), message: e.to_string() })?;
        }
        match policy.extends.as_deref() {
            None => Ok(policy),
            Some("inferencex") => {
                let mut base = Policy::embedded();
                base.name = policy.name;
                if !policy.description.is_empty() {
                    base.description = policy.description;
                }
                base.checks.extend(policy.checks);
                base.suppressions.extend(policy.suppressions);
                base.outside.extend(policy.outside);
                Ok(base)
            }
            Some(other) => Err(PolicyError::Invalid { path: path.to_string(), message: format!("extends unknown policy {other:?} (known: \"inferencex\")") }),
        }
    }

    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let label = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read { path: label.clone(), source })?;
        Policy::parse(&text, &label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_policy_forbids_the_nvfp4_nextn_flag() {
        let p = Policy::embedded();
        let check = p.checks.forbidden_env().unwrap();
        assert!(check.forbid.iter().any(|f| f.name == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE" && f.when == ForbidWhen::Enabled));
    }

    #[test]
    fn extends_replaces_named_checks_and_rejects_typos() {
        let p = Policy::parse("name = \"mine\"\nextends = \"inferencex\"\n[checks.forbidden-env]\ntitle = \"t\"\nenabled = false\n", "mine.toml").unwrap();
        assert_eq!(p.name, "mine");
        assert!(p.checks.forbidden_env().is_none());
        assert!(p.checks.golden_al().is_some(), "sections the file does not name stay the base's");
        let err = Policy::parse("name = \"x\"\n[checks.a]\ntitle = \"t\"\n", "x.toml").unwrap_err();
        assert!(err.to_string().contains("x.toml") && err.to_string().contains("unknown field `a`"), "{err}");
        let err = Policy::parse("name = \"x\"\n[checks.forbidden-env]\ntitle = \"t\"\nforbidd = []\n", "x.toml").unwrap_err();
        assert!(err.to_string().contains("forbidd"), "{err}");
        let err = Policy::parse("name = \"x\"\n[checks.golden-al]\ntitle = \"t\"\nforbid = []\n", "x.toml").unwrap_err();
        assert!(err.to_string().contains("unknown field `forbid`"), "a key of another check is rejected: {err}");
        assert!(Policy::parse("name = \"x\"\n[checks.golden-al]\nexplain = \"e\"\n", "x.toml").is_err(), "a section needs its title");
        assert!(Policy::parse("name = \"x\"\nextends = \"nope\"\n", "x.toml").is_err());
    }
}
