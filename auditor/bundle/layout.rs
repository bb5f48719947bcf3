//! The layout `gh run download RUN_ID` writes: one folder per artifact, named
//! by the benchmark templates (`server_logs_<RF>`, `eval_server_logs_<RF>`,
//! `agentic_<RF>`, `bmk_agentic_<RF>`, `eval_<EXP_NAME>_<RF>`, ...). This
//! module names artifacts and tells which artifact a file lies in; grouping
//! them into jobs is [`crate::jobs`]'s.

use serde::Serialize;

/// What an artifact holds, from its name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactRole {
    ServerLogs,
    EvalServerLogs,
    MultinodeServerLogs,
    Agentic,
    BmkAgentic,
    Bmk,
    PowerAudit,
    GpuMetrics,
    EvalGpuMetrics,
    /// `eval_<EXP_NAME>_<RF>` (single-node) or `eval_<RF>` (multi-node).
    Eval,
    /// Run-level artifacts (`results_bmk`, `run-stats`, ...).
    Run,
}

/// Per-job artifact prefixes, longest first so that `eval_server_logs_`
/// wins over `eval_` and `bmk_agentic_` over `bmk_`.
const PREFIXES: [(&str, ArtifactRole); 10] = [
    ("multinode_server_logs_", ArtifactRole::MultinodeServerLogs),
    ("eval_server_logs_", ArtifactRole::EvalServerLogs),
    ("eval_gpu_metrics_", ArtifactRole::EvalGpuMetrics),
    ("bmk_agentic_", ArtifactRole::BmkAgentic),
    ("power_audit_", ArtifactRole::PowerAudit),
    ("server_logs_", ArtifactRole::ServerLogs),
    ("gpu_metrics_", ArtifactRole::GpuMetrics),
    ("agentic_", ArtifactRole::Agentic),
    ("bmk_", ArtifactRole::Bmk),
    ("eval_", ArtifactRole::Eval),
];

const RUN_LEVEL: [&str; 4] = ["results_bmk", "eval_results_all", "changelog-metadata", "run-stats"];

/// A recognised artifact folder name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactName {
    pub role: ArtifactRole,
    /// The name after the prefix: the RF, or `<EXP_NAME>_<RF>` for eval payloads.
    pub key: String,
}

/// Parse an artifact folder name.
pub fn parse_artifact(name: &str) -> Option<ArtifactName> {
    if RUN_LEVEL.contains(&name) || name.starts_with("speedbench-reference-al-") {
        return Some(ArtifactName { role: ArtifactRole::Run, key: name.to_string() });
    }
    PREFIXES.iter().find_map(|(prefix, role)| {
        let key = name.strip_prefix(prefix)?;
        (!key.is_empty()).then(|| ArtifactName { role: *role, key: key.to_string() })
    })
}

/// The artifact folder a bundle path lies in: the first directory component
/// that is a recognised artifact name (wrapper folders of archives are skipped).
pub fn artifact_of(path: &str) -> Option<&str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.into_iter().find(|part| parse_artifact(part).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_names() {
        let cases = [
            ("eval_server_logs_X", ArtifactRole::EvalServerLogs),
            ("eval_results_all", ArtifactRole::Run),
            ("bmk_agentic_X", ArtifactRole::BmkAgentic),
            ("bmk_X", ArtifactRole::Bmk),
            ("eval_E_X", ArtifactRole::Eval),
            ("multinode_server_logs_X", ArtifactRole::MultinodeServerLogs),
        ];
        for (name, role) in cases {
            assert_eq!(parse_artifact(name).map(|a| a.role), Some(role), "{name}");
        }
        assert_eq!(parse_artifact("logs"), None);
        assert_eq!(artifact_of("wrap/agentic_X/results/server.log"), Some("agentic_X"));
        assert_eq!(artifact_of("agentic_X"), None);
    }
}
