//! The engine startup records found in logs and configs (server arguments,
//! engine configs, TRT-LLM LLM-API blocks): the data every reader of them
//! shares, apart from the scanners that find them (`log::startup`,
//! `log::fragment`, `yaml::shown`, `yaml::env`).

use super::engine::Engine;
use super::provenance::Provenance;
use super::python::repr::Py;
use serde::Serialize;

/// Which engine record a line starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum RecordKind {
    /// SGLang `server_args=ServerArgs(...)` or `server_args={...}`.
    SglangServerArgs,
    /// vLLM `non-default args: {...}`.
    VllmNonDefaultArgs,
    /// vLLM (old) `args: Namespace(...)`.
    VllmNamespace,
    /// vLLM `Initializing a V0/V1 LLM engine ... with config: ...`.
    VllmEngineConfig,
    /// A TensorRT-LLM `speculative_config:` block of an LLM-API YAML config.
    TrtllmSpeculativeConfig,
    /// A TensorRT-LLM `kv_cache_config:` block of an LLM-API YAML config.
    TrtllmKvCacheConfig,
}

impl RecordKind {
    /// The engine that writes it: every kind names one, so a new kind
    /// cannot be taken for another engine's by a fallback.
    pub fn engine(self) -> Engine {
        match self {
            RecordKind::SglangServerArgs => Engine::Sglang,
            RecordKind::VllmNonDefaultArgs | RecordKind::VllmNamespace | RecordKind::VllmEngineConfig => Engine::Vllm,
            RecordKind::TrtllmSpeculativeConfig | RecordKind::TrtllmKvCacheConfig => Engine::Trtllm,
        }
    }

    /// The kind's name, as `server_args_sources` spell it (`sglang-server-args`).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The record a block of a TensorRT-LLM LLM-API YAML config
    /// (`--extra_llm_api_options` / `--config`) makes, by its key.
    pub fn of_config_block(key: &str) -> Option<RecordKind> {
        match key {
            "speculative_config" => Some(RecordKind::TrtllmSpeculativeConfig),
            "kv_cache_config" => Some(RecordKind::TrtllmKvCacheConfig),
            _ => None,
        }
    }
}

/// One engine startup record.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineRecord {
    pub kind: RecordKind,
    /// Fields in the engine's own names, in logged order.
    pub fields: Vec<(String, Py)>,
    /// How the record ended if it did not close: cut short, or unparseable
    /// from some byte on (the fields before that point are kept).
    pub stop: Option<String>,
    /// The line where the record starts.
    pub provenance: Provenance,
    /// The last line that contributed to it.
    pub end_line: u64,
    /// Read from a fragment without the record's head: only the runs of
    /// the engine's own field names it shows (see `fragment`).
    pub fragment: bool,
    /// The fields whose value depends on which arm of an `if`/`case` of a
    /// script runs (a config a script writes from a heredoc with `$VAR`),
    /// each with the note that says which block.
    pub depends: Vec<(String, String)>,
}

impl EngineRecord {
    pub fn complete(&self) -> bool {
        self.stop.is_none()
    }

    pub fn get(&self, key: &str) -> Option<&Py> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}
