//! One typed section per check (`[checks.<id>]`): the title, switch and
//! "to fix" text every check has, and the settings only that check reads.
//! A key a check does not use is rejected with the section's name, so a
//! typo or a setting put under the wrong check cannot pass silently.

use super::pattern::PathPatterns;
use super::{CurveRule, ForbiddenVar, ImageException, UpstreamOrgs};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::ops::Deref;

/// A check's section: what every check has, and its own `settings`
/// (reached through `Deref`, so `section.forbid` reads a setting).
#[derive(Debug, Clone)]
pub struct Section<T> {
    pub title: String,
    pub enabled: bool,
    /// What a reviewer should know and do (shown by `rules explain`).
    pub explain: String,
    pub settings: T,
}

impl<T> Deref for Section<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.settings
    }
}

/// The common keys are taken out first; the rest must be the check's own
/// settings, which reject unknown keys (`deny_unknown_fields` does not
/// combine with `#[serde(flatten)]`, hence the two steps).
impl<'de, T: DeserializeOwned> Deserialize<'de> for Section<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut table = toml::Table::deserialize(deserializer)?;
        let mut text = |key: &str| -> Result<Option<String>, D::Error> {
            match table.remove(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(D::Error::custom(format!("`{key}` must be a string, not {}", other.type_str()))),
            }
        };
        let title = text("title")?.ok_or_else(|| D::Error::missing_field("title"))?;
        let explain = text("explain")?.unwrap_or_default();
        let enabled = match table.remove("enabled") {
            None => true,
            Some(toml::Value::Boolean(b)) => b,
            Some(other) => return Err(D::Error::custom(format!("`enabled` must be true or false, not {}", other.type_str()))),
        };
        let settings = T::deserialize(toml::Value::Table(table)).map_err(D::Error::custom)?;
        Ok(Section { title, enabled, explain, settings })
    }
}

/// A check that has no settings of its own.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForbiddenEnv {
    /// The variables it forbids.
    #[serde(default)]
    pub forbid: Vec<ForbiddenVar>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimAccThroughput {
    /// Simulation allowed on fixed-seq (non-agentic) configs.
    #[serde(default)]
    pub allow_fixed_seq_simulation: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoldenAl {
    /// The thinking mode assumed when a run shows none.
    #[serde(default)]
    pub default_thinking: Option<String>,
    /// Largest accepted difference from the golden AL.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// What `eagle`/`nextn` mean per model prefix (default: the model's own MTP head, `mtp`).
    #[serde(default)]
    pub eagle_means: BTreeMap<String, String>,
    /// Exceptions to the `<prefix>_<method>` table name.
    #[serde(default)]
    pub curves: Vec<CurveRule>,
    /// Model prefixes without a table, and the named source of their AL.
    #[serde(default)]
    pub al_sources: BTreeMap<String, String>,
    /// Model-name fragments (case-insensitive) -> model prefix, for jobs
    /// whose names and metadata do not give the prefix.
    #[serde(default)]
    pub model_prefixes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DraftPrecision {
    /// Model prefix -> the standalone draft checkpoints agreed for it.
    #[serde(default)]
    pub agreed_drafts: BTreeMap<String, Vec<String>>,
    /// Engine variables that cast draft weights at load time.
    #[serde(default)]
    pub precision_env: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamImage {
    /// Each framework's upstream organisations.
    #[serde(default)]
    pub upstream_orgs: Vec<UpstreamOrgs>,
    /// Hardware on which only upstream images are accepted.
    #[serde(default)]
    pub established_skus: Vec<String>,
    /// Non-upstream images allowed, with the reason.
    #[serde(default)]
    pub image_exceptions: Vec<ImageException>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnginePatch {
    /// Images: the serving engines' own distributions (PEP 503 names, `*`
    /// wildcards); changes to them are errors.
    #[serde(default)]
    pub engine_packages: Vec<String>,
    /// Images: engine source trees outside site-packages (path patterns, `DIR/**`).
    #[serde(default)]
    pub engine_paths: PathPatterns,
    /// Scripts: engine source trees a script may name (path patterns,
    /// `DIR/**`); a script's write or patch there is an engine patch.
    /// Narrower than `engine_paths`: scripts write their own results under
    /// `/workspace`.
    #[serde(default)]
    pub engine_trees: PathPatterns,
    /// Scripts: the benchmark harness — orchestrator, evaluation client,
    /// load generator — as package or repository names (PEP 503
    /// normalised, `*` wildcards). Changes to it are reviewed apart from
    /// engine patches (warnings).
    #[serde(default)]
    pub harness_packages: Vec<String>,
    /// Scripts: the serving engines proper (PEP 503 names, `*` wildcards),
    /// a subset of `engine_packages`: one built into the serving
    /// environment from a git ref, a fork, a pull-request head or a local
    /// checkout is a rebuilt engine (Check 10, an error). Another engine
    /// package built so is a warning naming its ref; any engine package
    /// installed as released (from an index) a warning naming it.
    #[serde(default)]
    pub serving_engines: Vec<String>,
    /// Images: environment variables that inject code, libraries or
    /// packages (`PYTHONPATH`, `LD_PRELOAD`, `PIP_INDEX_URL`).
    #[serde(default)]
    pub injection_env: Vec<String>,
    /// Images: files every build rewrites (path patterns): their changes are info only.
    #[serde(default)]
    pub volatile_paths: PathPatterns,
}

/// What every section has, whatever its settings: for listing and explaining checks by id.
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    pub title: &'a str,
    pub enabled: bool,
    pub explain: &'a str,
}

/// Declares the `[checks]` table: one optional section per check id, the
/// lookup of a section's common part by id, and `extends` merging.
macro_rules! checks {
    ($($field:ident: $id:literal => $settings:ty),* $(,)?) => {
        /// The `[checks]` table. A check without a section does not run.
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Checks {
            $(
                #[serde(rename = $id, default)]
                $field: Option<Section<$settings>>,
            )*
        }

        impl Checks {
            /// Every check id a policy may configure.
            pub const IDS: &'static [&'static str] = &[$($id),*];

            /// The common part of the section of check `id`, if the policy has one.
            pub fn about(&self, id: &str) -> Option<About<'_>> {
                match id {
                    $($id => self.$field.as_ref().map(|s| About { title: &s.title, enabled: s.enabled, explain: &s.explain }),)*
                    _ => None,
                }
            }

            /// Replace the sections `other` has (a policy that `extends` another).
            pub fn extend(&mut self, other: Checks) {
                $(
                    if other.$field.is_some() {
                        self.$field = other.$field;
                    }
                )*
            }

            $(
                /// The section of this check when it is enabled.
                pub fn $field(&self) -> Option<&Section<$settings>> {
                    self.$field.as_ref().filter(|s| s.enabled)
                }
            )*
        }
    };
}

checks! {
    forbidden_env: "forbidden-env" => ForbiddenEnv,
    sim_acc_throughput: "sim-acc-throughput" => SimAccThroughput,
    sim_acc_eval: "sim-acc-eval" => NoSettings,
    golden_al: "golden-al" => GoldenAl,
    draft_precision: "draft-precision" => DraftPrecision,
    arch_override: "arch-override" => NoSettings,
    engine_patch: "engine-patch" => EnginePatch,
    upstream_image: "upstream-image" => UpstreamImage,
    image_integrity: "image-integrity" => NoSettings,
    eval_threshold: "eval-threshold" => NoSettings,
}
