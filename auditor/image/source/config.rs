//! The image configuration: what the image runs with (Env, Entrypoint, Cmd,
//! WorkingDir, User, Labels), how it was built (history with `created_by`)
//! and the uncompressed layer digests (`rootfs.diff_ids`). OCI and Docker
//! configs share these fields; anything else in the document is ignored.

use super::ImageError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The parts of an image config the auditor reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImageConfig {
    pub os: String,
    pub architecture: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    pub env: Vec<String>,
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub working_dir: String,
    pub user: String,
    pub labels: BTreeMap<String, String>,
    pub history: Vec<History>,
    /// `rootfs.diff_ids`: the digest of each layer's uncompressed tar.
    pub diff_ids: Vec<String>,
}

impl ImageConfig {
    /// The build step (`created_by`, trimmed) that made layer `index`:
    /// steps that made no layer are passed over.
    pub fn layer_step(&self, index: usize) -> Option<&str> {
        self.history.iter().filter(|h| !h.empty_layer).nth(index).map(|h| h.created_by.trim())
    }
}

/// One build step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(default)]
    pub created_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The step made no layer (ENV, LABEL, CMD ...).
    #[serde(default)]
    pub empty_layer: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Raw {
    os: String,
    architecture: String,
    variant: Option<String>,
    config: Option<RawRun>,
    history: Vec<History>,
    rootfs: Option<RawRootfs>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct RawRun {
    env: Option<Vec<String>>,
    entrypoint: Option<Vec<String>>,
    cmd: Option<Vec<String>>,
    working_dir: Option<String>,
    user: Option<String>,
    labels: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawRootfs {
    diff_ids: Vec<String>,
}

impl ImageConfig {
    /// Parse a config document.
    pub(crate) fn parse(reference: &str, bytes: &[u8]) -> Result<ImageConfig, ImageError> {
        let raw: Raw = serde_json::from_slice(bytes).map_err(|e| ImageError::Malformed {
            reference: reference.to_string(),
            what: "image config".into(),
            detail: e.to_string(),
        })?;
        let run = raw.config.unwrap_or_default();
        Ok(ImageConfig {
            os: raw.os,
            architecture: raw.architecture,
            variant: raw.variant,
            env: run.env.unwrap_or_default(),
            entrypoint: run.entrypoint.unwrap_or_default(),
            cmd: run.cmd.unwrap_or_default(),
            working_dir: run.working_dir.unwrap_or_default(),
            user: run.user.unwrap_or_default(),
            labels: run.labels.unwrap_or_default(),
            history: raw.history,
            diff_ids: raw.rootfs.map(|r| r.diff_ids).unwrap_or_default(),
        })
    }

    /// `os/architecture[/variant]`.
    pub(crate) fn platform(&self) -> String {
        let mut p = format!("{}/{}", self.os, self.architecture);
        if let Some(v) = &self.variant {
            p.push('/');
            p.push_str(v);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_run_config_history_and_diff_ids() {
        let doc = br#"{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin","A=1"],"Cmd":["/bin/sh"],
            "Entrypoint":null,"WorkingDir":"/w","User":"1000","Labels":{"k":"v"}},
            "history":[{"created":"2024-01-01T00:00:00Z","created_by":"/bin/sh -c #(nop) ENV A=1","empty_layer":true},{"created_by":"RUN x"}],
            "rootfs":{"type":"layers","diff_ids":["sha256:1","sha256:2"]}}"#;
        let c = ImageConfig::parse("r", doc).unwrap();
        assert_eq!(c.env, ["PATH=/bin", "A=1"]);
        assert_eq!((c.cmd.as_slice(), c.entrypoint.len(), c.working_dir.as_str(), c.user.as_str()), (&["/bin/sh".to_string()][..], 0, "/w", "1000"));
        assert_eq!(c.labels.get("k").map(String::as_str), Some("v"));
        assert_eq!((c.history.len(), c.history[0].empty_layer, c.history[1].created_by.as_str()), (2, true, "RUN x"));
        assert_eq!(c.diff_ids, ["sha256:1", "sha256:2"]);
        assert_eq!(c.platform(), "linux/amd64");
    }

    #[test]
    fn tolerates_missing_parts_and_rejects_non_json() {
        assert_eq!(ImageConfig::parse("r", b"{}").unwrap(), ImageConfig::default());
        assert!(matches!(ImageConfig::parse("r", b"[1"), Err(ImageError::Malformed { .. })));
        assert!(ImageConfig::parse("r", br#"{"config":{"Env":"notalist"}}"#).is_err());
    }
}
