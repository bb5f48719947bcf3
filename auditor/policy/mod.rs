//! Policies: which checks run, what they forbid, and the text a reviewer
//! reads about each. The `inferencex` policy is embedded; `--policy FILE`
//! replaces it, or extends it with `extends = "inferencex"`.

pub mod golden;
pub mod models;
pub mod pattern;
pub mod suppressions;
pub mod thresholds;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

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
    pub checks: BTreeMap<String, CheckPolicy>,
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
    pub paths: Vec<String>,
    pub reason: String,
}

impl Outside {
    /// Whether `path` (relative to the checkout) is one of these paths.
    pub fn covers(&self, path: &str) -> bool {
        self.paths.iter().any(|p| pattern::matches(p, path))
    }
}

/// Settings of one check. Fields that a check does not use are rejected
/// when they are set, so typos do not pass silently.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckPolicy {
    pub title: String,
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// What a reviewer should know and do (shown by `rules explain`).
    #[serde(default)]
    pub explain: String,
    /// `forbidden-env`: the variables it forbids.
    #[serde(default)]
    pub forbid: Vec<ForbiddenVar>,
    /// `golden-al`: the thinking mode assumed when a run shows none.
    #[serde(default)]
    pub default_thinking: Option<String>,
    /// `golden-al`: largest accepted difference from the golden AL.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// `golden-al`: what `eagle`/`nextn` mean per model prefix (default: the model's own MTP head, `mtp`).
    #[serde(default)]
    pub eagle_means: BTreeMap<String, String>,
    /// `golden-al`: exceptions to the `<prefix>_<method>` table name.
    #[serde(default)]
    pub curves: Vec<CurveRule>,
    /// `golden-al`: model prefixes without a table, and the named source of their AL.
    #[serde(default)]
    pub al_sources: BTreeMap<String, String>,
    /// `golden-al`: model-name fragments (case-insensitive) -> model prefix, for
    /// jobs whose names and metadata do not give the prefix.
    #[serde(default)]
    pub model_prefixes: BTreeMap<String, String>,
    /// `sim-acc-throughput`: simulation allowed on fixed-seq (non-agentic) configs.
    #[serde(default)]
    pub allow_fixed_seq_simulation: bool,
    /// `draft-precision`: model prefix -> the standalone draft checkpoints agreed for it.
    #[serde(default)]
    pub agreed_drafts: BTreeMap<String, Vec<String>>,
    /// `draft-precision`: engine variables that cast draft weights at load time.
    #[serde(default)]
    pub precision_env: Vec<String>,
    /// `upstream-image`: each framework's upstream organisations.
    #[serde(default)]
    pub upstream_orgs: Vec<UpstreamOrgs>,
    /// `upstream-image`: hardware on which only upstream images are accepted.
    #[serde(default)]
    pub established_skus: Vec<String>,
    /// `upstream-image`: non-upstream images allowed, with the reason.
    #[serde(default)]
    pub image_exceptions: Vec<ImageException>,
    /// `engine-patch` (images): the serving engines' own distributions
    /// (PEP 503 names, `*` wildcards); changes to them are errors.
    #[serde(default)]
    pub engine_packages: Vec<String>,
    /// `engine-patch` (images): engine source trees outside site-packages
    /// (path patterns, `DIR/**`).
    #[serde(default)]
    pub engine_paths: Vec<String>,
    /// `engine-patch` (scripts): engine source trees a script may name
    /// (path patterns, `DIR/**`); a script's write or patch there is an
    /// engine patch. Narrower than `engine_paths`: scripts write their own
    /// results under `/workspace`.
    #[serde(default)]
    pub engine_trees: Vec<String>,
    /// `engine-patch` (scripts): the benchmark harness — orchestrator,
    /// evaluation client, load generator — as package or repository names
    /// (PEP 503 normalised, `*` wildcards). Changes to it are reviewed
    /// apart from engine patches (warnings).
    #[serde(default)]
    pub harness_packages: Vec<String>,
    /// `engine-patch` (images): environment variables that inject code,
    /// libraries or packages (`PYTHONPATH`, `LD_PRELOAD`, `PIP_INDEX_URL`).
    #[serde(default)]
    pub injection_env: Vec<String>,
    /// `engine-patch` (images): files every build rewrites (path patterns):
    /// their changes are info only.
    #[serde(default)]
    pub volatile_paths: Vec<String>,
}

/// The upstream organisations of some frameworks (`sglang` matches
/// `dynamo-sglang` and `sglang-disagg` too).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamOrgs {
    pub frameworks: Vec<String>,
    pub orgs: Vec<String>,
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

fn enabled() -> bool {
    true
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

    /// The settings of an enabled check.
    pub fn check(&self, id: &str) -> Option<&CheckPolicy> {
        self.checks.get(id).filter(|c| c.enabled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_policy_forbids_the_nvfp4_nextn_flag() {
        let p = Policy::embedded();
        let check = p.check("forbidden-env").unwrap();
        assert!(check.forbid.iter().any(|f| f.name == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE" && f.when == ForbidWhen::Enabled));
    }

    #[test]
    fn extends_replaces_named_checks_and_rejects_typos() {
        let p = Policy::parse("name = \"mine\"\nextends = \"inferencex\"\n[checks.forbidden-env]\ntitle = \"t\"\nenabled = false\n", "mine.toml").unwrap();
        assert_eq!(p.name, "mine");
        assert!(p.check("forbidden-env").is_none());
        let err = Policy::parse("name = \"x\"\n[checks.a]\ntitle = \"t\"\nforbidd = []\n", "x.toml").unwrap_err();
        assert!(err.to_string().contains("x.toml"));
        assert!(Policy::parse("name = \"x\"\nextends = \"nope\"\n", "x.toml").is_err());
    }
}
