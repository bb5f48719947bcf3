//! What names and metadata files say about a job (topology, model, image,
//! scenario): the vocabulary the JSON harness files, master configs and
//! recipes all fill in.

use crate::evidence::provenance::Provenance;
use serde::Serialize;

/// The benchmark scenario of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    AgenticCoding,
    FixedSeqLen,
}

impl Scenario {
    /// The name the master configs and the JSON report use.
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::AgenticCoding => "agentic-coding",
            Scenario::FixedSeqLen => "fixed-seq-len",
        }
    }

    pub fn parse(text: &str) -> Option<Scenario> {
        match text {
            "agentic-coding" => Some(Scenario::AgenticCoding),
            "fixed-seq-len" => Some(Scenario::FixedSeqLen),
            _ => None,
        }
    }
}

/// What names and metadata files say about a job. Every field is optional:
/// only what the input shows is filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exp_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Tensor parallelism (of the decode role for multi-node jobs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp: Option<u32>,
    /// Expert parallelism (of the decode role for multi-node jobs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ep: Option<u32>,
    /// Concurrency levels (one for single-node jobs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conc: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_decoding: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipe_fingerprint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multinode: Option<bool>,
}

impl JobMeta {
    /// Fill the fields that are still empty from `other`.
    pub fn fill_from(&mut self, other: &JobMeta) {
        macro_rules! fill {
            ($($field:ident),*) => { $( if self.$field.is_none() { self.$field = other.$field.clone(); } )* };
        }
        fill!(exp_name, model_prefix, model, precision, framework, hw, image, tp, ep, spec_decoding, runner, recipe_fingerprint, multinode);
        if self.conc.is_empty() {
            self.conc = other.conc.clone();
        }
    }
}

/// `registry/org/repo:tag@digest` normalised: `#` as `/`, Docker Hub's
/// registry and `library/` dropped, lower-cased registry and path.
pub fn normalise_image(image: &str) -> String {
    let image = image.trim().replace('#', "/");
    let image =
        ["docker.io/", "index.docker.io/", "registry-1.docker.io/", "docker://"].iter().fold(image, |i, p| i.strip_prefix(p).map(str::to_string).unwrap_or(i));
    let image = image.strip_prefix("library/").map(str::to_string).unwrap_or(image);
    let (path, rest) = image.split_at(image.find([':', '@']).unwrap_or(image.len()));
    format!("{}{rest}", path.to_ascii_lowercase())
}

/// Metadata read from one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    pub meta: JobMeta,
    pub scenario: Option<Scenario>,
    /// Where the image is written, when the document's lines are known
    /// (a master config's `image:` line).
    pub image_at: Option<Provenance>,
    /// The runner scripts a master-config entry's jobs are scheduled on and
    /// the files of the input they run (what they source, the
    /// synthetic-acceptance injector and its package), and the images the
    /// runners start for them.
    pub runners: Vec<String>,
    pub started: Vec<StartedImage>,
}

/// The image a runner's container starts for a job, as the evaluation of
/// the runner with the job's inputs gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartedImage {
    /// The runner script (`runners/launch_<name>.sh`).
    pub runner: String,
    pub started: Started,
    /// Where the value the container starts was written, then the container start.
    pub at: Vec<Provenance>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// The image the entry pins (or the squash file imported from it).
    Pinned,
    /// Another image: what the runner starts instead, and how it got there.
    Other { image: String, how: String },
    /// What the container starts is decided by the run: why.
    Undetermined(String),
}
