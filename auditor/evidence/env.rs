//! Environment assignments and where they were written. Every assignment
//! keeps the value as written and its scope (the process view it belongs
//! to); how the engine interprets the value is [`super::knobs`]. Env dump
//! blocks and `env` listings in logs are read by [`super::log::env_listing`];
//! shell statements by [`super::shell::scan`], Python `os.environ` writes by
//! [`super::python::environ`], recipes by [`super::yaml::env`].

use super::gate::Gate;
use super::provenance::Provenance;
use serde::{Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;

/// How an assignment was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvOrigin {
    /// A line of an env dump block printed at launch (`=== ... env vars at launch ===`).
    DumpBlock,
    /// A `NAME=value` line of an environment listing (`env` output).
    Listing,
    /// `export NAME=value`, `declare -x NAME=value`, or `export NAME` of a shell variable.
    Export,
    /// `NAME=value` as a shell statement: a shell variable, not exported.
    ShellVariable,
    /// `NAME=value cmd`, `env NAME=value cmd`, `srun --export=NAME=value`.
    CommandPrefix,
    /// `docker run -e NAME=value` / `--env`: the container's environment.
    Container,
    /// An environment section of a recipe or config file (YAML, JSON `Env`).
    Config,
    /// `os.environ[...] = ...`, `os.environ.update`, `os.putenv` in Python.
    Python,
    /// `os.environ.setdefault(...)`: takes effect only if the variable is unset.
    PythonSetdefault,
    /// `unset NAME`, `env -u NAME`, `del os.environ[...]`.
    Unset,
    /// The `Env` of an image's config: every container of the image starts with it.
    ImageConfig,
}

impl EnvOrigin {
    /// Whether the assignment puts the value into a process environment
    /// (a shell variable does not, unless exported).
    pub fn reaches_environment(self) -> bool {
        self != EnvOrigin::ShellVariable
    }

    /// A line of a rendered environment (a dump block or an `env` listing):
    /// what the process had, not a statement that set it.
    pub fn is_dumped(self) -> bool {
        matches!(self, EnvOrigin::DumpBlock | EnvOrigin::Listing)
    }
}

/// The process view an assignment belongs to: within one scope of one file
/// the last assignment takes effect. Reports write it as they always have
/// (`command@12`, `recipe:decode`, `additional-settings:<path>`), and scopes
/// order as those texts do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A script's or Python module's own top-level statements.
    File,
    /// `NAME=value` lines of an environment listing (`env`, `printenv`).
    Listing,
    /// An env dump block printed at launch, from its header's line.
    Dump(u64),
    /// One command's own environment (`NAME=v cmd`, `env`, `srun --export`), at its line.
    Command(u64),
    /// A container's environment (`docker run -e`), at its line.
    Container(u64),
    /// The writes of a Python heredoc, from the line that opens it.
    Python(u64),
    /// A docker compose `environment:` block, from its first line.
    Compose(u64),
    /// An image config's `Env`: every container of the image starts with it.
    ImageConfig,
    /// A recipe-wide `environment` section.
    Recipe,
    /// One worker role's environment in a recipe (`decode`, `prefill`,
    /// `aggregated`), of its base or of a `zip_override_<name>` variant
    /// (`zip_override_k`, or one selection of it, `zip_override_k[2]`).
    RecipeRole { variant: Option<String>, role: String },
    /// Another environment section of a YAML document, by its dotted path.
    Yaml(String),
    /// An environment array of a JSON document, by its path.
    Json(String),
    /// A master config's `additional-settings`, by its dotted path.
    Settings(String),
}

impl Scope {
    /// The (variant, role) of a recipe role's scope.
    pub fn recipe_role(&self) -> Option<(Option<&str>, &str)> {
        match self {
            Scope::RecipeRole { variant, role } => Some((variant.as_deref(), role)),
            _ => None,
        }
    }

    /// The dotted path of a master config's `additional-settings` scope.
    pub fn settings_path(&self) -> Option<&str> {
        match self {
            Scope::Settings(path) => Some(path),
            _ => None,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::File => f.write_str("file"),
            Scope::Listing => f.write_str("listing"),
            Scope::Dump(line) => write!(f, "dump@{line}"),
            Scope::Command(line) => write!(f, "command@{line}"),
            Scope::Container(line) => write!(f, "container@{line}"),
            Scope::Python(line) => write!(f, "python@{line}"),
            Scope::Compose(line) => write!(f, "compose@{line}"),
            Scope::ImageConfig => f.write_str("image config"),
            Scope::Recipe => f.write_str("recipe"),
            Scope::RecipeRole { variant: None, role } => write!(f, "recipe:{role}"),
            Scope::RecipeRole { variant: Some(variant), role } => write!(f, "recipe:{variant}:{role}"),
            Scope::Yaml(path) => write!(f, "yaml:{path}"),
            Scope::Json(path) => write!(f, "json:{path}"),
            Scope::Settings(path) => write!(f, "additional-settings:{path}"),
        }
    }
}

/// In the order of the texts reports show, as scopes were ordered when
/// they were those texts: which scope a resolution lists first stays put.
impl Ord for Scope {
    fn cmp(&self, other: &Self) -> Ordering {
        if self == other { Ordering::Equal } else { self.to_string().cmp(&other.to_string()) }
    }
}

impl PartialOrd for Scope {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One assignment to an environment variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvAssignment {
    pub name: String,
    /// The value as the process sees it; `None` for an unset.
    pub value: Option<String>,
    pub origin: EnvOrigin,
    /// The value contains an expansion (`$X`) whose result the input does not show.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expands: bool,
    /// For the benchmark client (`benchmark.env`, `frontend.env`), not the engine.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub client: bool,
    /// The value as written, when the consumer reads it differently (a YAML
    /// plain `yes` that becomes `True`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
    /// Assignments in one scope belong to one process view (a dump block, a
    /// command, a script, a recipe role); in a scope the last one takes effect.
    pub scope: Scope,
    /// The runs it takes part in, from the `EVAL_ONLY` tests around it.
    #[serde(skip_serializing_if = "Gate::is_always")]
    pub gate: Gate,
    pub provenance: Provenance,
    /// For `PYTHONPATH`: the input's Python modules and start-up hooks its
    /// directories put ahead of site-packages (tree paths), as the
    /// evaluation of a script finds them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_path: Vec<String>,
}

impl EnvAssignment {
    pub fn new(name: &str, value: Option<String>, origin: EnvOrigin, scope: Scope, provenance: Provenance) -> Self {
        EnvAssignment {
            name: name.to_string(),
            value,
            origin,
            expands: false,
            client: false,
            written: None,
            scope,
            gate: Gate::Always,
            provenance,
            on_path: Vec::new(),
        }
    }
}

/// An env dump block: what a launch script printed of the server's environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDump {
    /// The header line, e.g. `=== SGLANG_* env vars at launch ===`.
    pub header: String,
    /// The variable-name prefix the dump lists (`SGLANG_`), when the header says;
    /// a variable with this prefix absent from a complete dump was not set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covers_prefix: Option<String>,
    /// The closing rule line was found.
    pub complete: bool,
    pub scope: Scope,
    pub provenance: Provenance,
}
