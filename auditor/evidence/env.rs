//! Environment assignments and where they were written. Every assignment
//! keeps the value as written and its scope (the process view it belongs
//! to); how the engine interprets the value is [`super::knobs`]. Env dump
//! blocks and `env` listings in logs are read by [`super::log::env_listing`];
//! shell statements by [`super::shell::scan`], Python `os.environ` writes by
//! [`super::python::environ`], recipes by [`super::yaml::env`].

use super::gate::Gate;
use super::provenance::Provenance;
use serde::Serialize;

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
    pub scope: String,
    /// The runs it takes part in, from the `EVAL_ONLY` tests around it.
    #[serde(skip_serializing_if = "Gate::is_always")]
    pub gate: Gate,
    pub provenance: Provenance,
}

impl EnvAssignment {
    pub fn new(name: &str, value: Option<String>, origin: EnvOrigin, scope: &str, provenance: Provenance) -> Self {
        EnvAssignment {
            name: name.to_string(),
            value,
            origin,
            expands: false,
            client: false,
            written: None,
            scope: scope.to_string(),
            gate: Gate::Always,
            provenance,
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
    pub scope: String,
    pub provenance: Provenance,
}
